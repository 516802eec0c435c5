//! Characters a person cannot see, or that make a text read differently from what it is.
//!
//! Resolve Desk promises that what the person saw is exactly what gets written. An agent's
//! output and a cloned repository are hostile input: a right-to-left override can make a line
//! of code read in another order than it compiles (Trojan Source, CVE-2021-42574), a
//! zero-width character can hide inside an identifier, a Cyrillic `а` can stand in for a Latin
//! `a` in a file name. This module is the one rule that finds them; everything that shows text
//! (the window's diff, file names and labels; `rdesk`'s terminal output; batch rename's
//! refusals) asks it, and the UI only renders what it found.
//!
//! What it finds ([`HiddenKind`]):
//! - **bidi** — the bidirectional controls U+202A–U+202E, U+2066–U+2069, U+200E, U+200F,
//!   U+061C;
//! - **invisible** — zero-width and other invisible format characters: U+200B–U+200D,
//!   U+2060–U+2065, U+206A–U+206F, U+FEFF (except at the very start of a file), U+00AD,
//!   U+034F, U+115F, U+1160, U+17B4, U+17B5, U+180B–U+180F, U+3164, U+FFA0, U+FFF9–U+FFFB,
//!   U+1BCA0–U+1BCA3, U+1D173–U+1D17A, the tag characters U+E0000–U+E007F and the rest of
//!   plane 14's ignorables, and the variation selectors (U+FE00–U+FE0F, U+E0100–U+E01EF).
//!   Where such a character is how a script or an emoji is written, it is left alone: a zero
//!   width joiner or non-joiner between two non-ASCII characters (emoji sequences, Indic and
//!   Persian text), one variation selector after a non-ASCII character (emoji presentation) or
//!   in a keycap (`#`, `*`, a digit, then U+FE0F U+20E3), tag characters that spell a flag
//!   after U+1F3F4;
//! - **control** — C0 controls other than tab, line feed and carriage return, DEL, C1
//!   controls (U+0080–U+009F);
//! - **whitespace** — spaces that are not U+0020: U+00A0, U+1680, U+2000–U+200A, U+2028,
//!   U+2029, U+202F, U+205F, U+2800, U+3000;
//! - **confusable** — a non-ASCII letter or digit whose UTS #39 skeleton
//!   ([`unicode_security::skeleton`]) is ASCII, in a word that otherwise looks ASCII: a word
//!   that mixes ASCII letters or digits with such characters (`pаypal` with a Cyrillic `а`),
//!   or a word made only of them on a line whose other words are ASCII. A word with any other
//!   non-ASCII letter (`Москва`, `λόγος`) is natural text and is left alone, and so are the
//!   look-alike words around it.
//!
//! Positions are byte ranges of the text scanned, with the character's index among the text's
//! characters. [`scan_line`] reads one line (or one name); [`scan_text`] a whole file, line by
//! line, the way the diff numbers lines (split on `\n`, a final `\r` dropped). Cost: a line of
//! plain ASCII is one pass over its bytes; only lines with non-ASCII bytes or controls are
//! looked at character by character (figures in docs/PERFORMANCE.md).

use serde::Serialize;
use unicode_script::{Script, UnicodeScript};

/// What kind of trouble a character is (one definition with the window's protocol).
pub use resolve_protocol::HiddenKind;

/// One character found in a text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    /// Byte range of the character in the text scanned (`end - start` is its UTF-8 length).
    pub start: usize,
    pub end: usize,
    /// The character's index among the text's characters.
    pub char_index: usize,
    pub ch: char,
    pub kind: HiddenKind,
    /// For a confusable: the ASCII text it looks like (its skeleton).
    pub looks_like: Option<String>,
}

impl Finding {
    pub fn code_point(&self) -> u32 {
        self.ch as u32
    }

    /// What it is, for a tooltip or a message: `U+202E RIGHT-TO-LEFT OVERRIDE`,
    /// `U+0430 Cyrillic letter that looks like "a"`.
    pub fn name(&self) -> String {
        let code = code(self.ch);
        match &self.looks_like {
            Some(ascii) => {
                let script = match self.ch.script() {
                    Script::Common | Script::Inherited | Script::Unknown => String::new(),
                    s => format!("{} ", s.full_name()),
                };
                let what = if self.ch.is_alphabetic() { "letter" } else { "character" };
                format!("{code} {script}{what} that looks like \"{ascii}\"")
            }
            None => match char_name(self.ch) {
                Some(name) => format!("{code} {name}"),
                None => code,
            },
        }
    }

    /// What is shown in place of a hidden character: `⟨U+202E⟩`.
    pub fn marker(&self) -> String {
        format!("⟨{}⟩", code(self.ch))
    }
}

/// `U+202E`, `U+E0041`.
fn code(c: char) -> String {
    format!("U+{:04X}", c as u32)
}

/// The kind of `c` on its own, before context: `None` for ordinary characters (and for
/// look-alikes, which depend on the word around them). Tab, line feed and carriage return are
/// ordinary. Characters that context may excuse (joiners, variation selectors, tag
/// characters, a BOM) are reported here as [`HiddenKind::Invisible`].
pub fn kind_of(c: char) -> Option<HiddenKind> {
    let cp = c as u32;
    Some(match cp {
        0x09 | 0x0A | 0x0D => return None,
        0x00..=0x1F | 0x7F | 0x80..=0x9F => HiddenKind::Control,
        0x20..=0x7E => return None,
        0x202A..=0x202E | 0x2066..=0x2069 | 0x200E | 0x200F | 0x061C => HiddenKind::Bidi,
        0x200B..=0x200D
        | 0x2060..=0x2065
        | 0x206A..=0x206F
        | 0xFEFF
        | 0x00AD
        | 0x034F
        | 0x115F
        | 0x1160
        | 0x17B4
        | 0x17B5
        | 0x180B..=0x180F
        | 0x3164
        | 0xFFA0
        | 0xFFF9..=0xFFFB
        | 0xFE00..=0xFE0F
        | 0x1BCA0..=0x1BCA3
        | 0x1D173..=0x1D17A
        | 0xE0000..=0xE0FFF => HiddenKind::Invisible,
        0x00A0 | 0x1680 | 0x2000..=0x200A | 0x2028 | 0x2029 | 0x202F | 0x205F | 0x2800 | 0x3000 => {
            HiddenKind::Whitespace
        }
        _ => return None,
    })
}

/// True for the characters [`kind_of`] may report that a terminal or a window would act on
/// or hide: controls, bidi controls and invisible characters (not unusual spaces).
pub fn is_unsafe_for_display(c: char) -> bool {
    matches!(kind_of(c), Some(HiddenKind::Control | HiddenKind::Bidi | HiddenKind::Invisible))
}

/// Where the text scanned sits: only the first line of a file may start with a BOM.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    /// The first line of a file: a U+FEFF at its very start is the byte-order mark.
    FirstLine,
    /// Any other line, a name or a label.
    Elsewhere,
}

/// The characters of one line (or name) that a person cannot see or that look like others.
/// `line` has no line terminator; a carriage return in it is left alone.
pub fn scan_line(line: &str, place: Place) -> Vec<Finding> {
    if is_plain(line) {
        return Vec::new();
    }
    let chars: Vec<(usize, char)> = line.char_indices().collect();
    let mut out = Vec::new();
    let mut in_flag = false;
    for (i, &(start, c)) in chars.iter().enumerate() {
        let prev = i.checked_sub(1).map(|p| chars[p].1);
        let next = chars.get(i + 1).map(|&(_, n)| n);
        // Tag characters that spell a flag (U+1F3F4, tags, U+E007F) are how England's flag is
        // written: the tags and their cancel tag are part of the emoji.
        let flag_tag = match c as u32 {
            0xE0020..=0xE007E => prev == Some('\u{1F3F4}') || in_flag,
            0xE007F => in_flag,
            _ => false,
        };
        in_flag = flag_tag && c != '\u{E007F}';
        if flag_tag {
            continue;
        }
        let Some(kind) = kind_of(c) else { continue };
        if kind == HiddenKind::Invisible && excused(c, start, prev, next, place) {
            continue;
        }
        out.push(Finding { start, end: start + c.len_utf8(), char_index: i, ch: c, kind, looks_like: None });
    }
    confusables(&chars, &mut out);
    out.sort_by_key(|f| f.start);
    out
}

/// True when a line cannot hold anything [`scan_line`] reports: printable ASCII and tabs.
fn is_plain(line: &str) -> bool {
    line.bytes().all(|b| (0x20..0x7F).contains(&b) || b == b'\t' || b == b'\r')
}

/// Invisible characters that are how a script or an emoji is written.
fn excused(c: char, start: usize, prev: Option<char>, next: Option<char>, place: Place) -> bool {
    let visible_non_ascii = |x: Option<char>| x.is_some_and(|x| !x.is_ascii() && kind_of(x).is_none());
    match c as u32 {
        0xFEFF => start == 0 && place == Place::FirstLine,
        // Joiners inside emoji sequences and Indic/Persian words.
        0x200C | 0x200D => visible_non_ascii(prev) && visible_non_ascii(next),
        // One selector after a visible non-ASCII character (emoji or text presentation, CJK
        // variants); U+FE0F in a keycap (`1️⃣`).
        0xFE00..=0xFE0F | 0xE0100..=0xE01EF => {
            visible_non_ascii(prev)
                || (c == '\u{FE0F}'
                    && prev.is_some_and(|p| p.is_ascii_digit() || p == '#' || p == '*')
                    && next == Some('\u{20E3}'))
        }
        // Mongolian free variation selectors after a Mongolian letter.
        0x180B..=0x180D | 0x180F => prev.is_some_and(|p| p.script() == Script::Mongolian),
        _ => false,
    }
}

/// Words (runs of letters, digits and `_`) that look ASCII but are not: see the module docs.
fn confusables(chars: &[(usize, char)], out: &mut Vec<Finding>) {
    if chars.iter().all(|(_, c)| c.is_ascii()) {
        return;
    }
    struct Word {
        from: usize,
        to: usize,
        has_ascii: bool,
        lookalikes: Vec<(usize, String)>,
        foreign: bool,
    }
    let mut words: Vec<Word> = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let is_word = |c: char| c.is_alphanumeric() || c == '_';
        if !is_word(chars[i].1) {
            i += 1;
            continue;
        }
        let from = i;
        let mut word = Word { from, to: from, has_ascii: false, lookalikes: Vec::new(), foreign: false };
        while i < chars.len() && is_word(chars[i].1) {
            let c = chars[i].1;
            if c.is_ascii() {
                word.has_ascii |= c.is_ascii_alphanumeric();
            } else {
                match ascii_skeleton(c) {
                    Some(ascii) => word.lookalikes.push((i, ascii)),
                    None => word.foreign = true,
                }
            }
            i += 1;
        }
        word.to = i;
        words.push(word);
    }
    let natural_text = words.iter().any(|w| w.foreign);
    for w in words {
        if w.foreign || w.lookalikes.is_empty() || (!w.has_ascii && natural_text) {
            continue;
        }
        debug_assert!(w.from < w.to);
        for (i, ascii) in w.lookalikes {
            let (start, c) = chars[i];
            out.push(Finding {
                start,
                end: start + c.len_utf8(),
                char_index: i,
                ch: c,
                kind: HiddenKind::Confusable,
                looks_like: Some(ascii),
            });
        }
    }
}

/// The ASCII a non-ASCII character is confusable with (its UTS #39 skeleton), when that is
/// ASCII letters or digits.
fn ascii_skeleton(c: char) -> Option<String> {
    let mut buf = [0u8; 4];
    let skeleton: String = unicode_security::skeleton(c.encode_utf8(&mut buf)).collect();
    (!skeleton.is_empty() && skeleton.chars().all(|s| s.is_ascii_alphanumeric())).then_some(skeleton)
}

/// `text` with every control, bidi and invisible character (as [`scan_line`] finds them) and
/// every carriage return not followed by a line feed written as an escape: `\x1b` for an
/// ASCII control, `\u{202e}` for the others. Line feeds, tabs and CRLF stay; unusual spaces
/// and look-alikes stay (they cannot act on a terminal or reorder text). What `rdesk` prints
/// to a terminal and what error messages quote pass through it, so text from a file, a
/// manifest or a tool cannot move the cursor, clear the screen or reorder a line.
pub fn escape(text: &str) -> std::borrow::Cow<'_, str> {
    if text.bytes().all(|b| (0x20..0x7F).contains(&b) || b == b'\t' || b == b'\n') {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    let mut lines = text.split('\n').peekable();
    while let Some(line) = lines.next() {
        let last = lines.peek().is_none();
        let (body, crlf) = match line.strip_suffix('\r') {
            Some(body) if !last => (body, true),
            _ => (line, false),
        };
        let mut at = 0;
        for f in scan_line(body, Place::Elsewhere)
            .into_iter()
            .filter(|f| f.kind != HiddenKind::Whitespace && f.kind != HiddenKind::Confusable)
        {
            push_escaping_cr(&mut out, &body[at..f.start]);
            push_escape(&mut out, f.ch);
            at = f.end;
        }
        push_escaping_cr(&mut out, &body[at..]);
        if crlf {
            out.push('\r');
        }
        if !last {
            out.push('\n');
        }
    }
    std::borrow::Cow::Owned(out)
}

fn push_escaping_cr(out: &mut String, text: &str) {
    for (i, part) in text.split('\r').enumerate() {
        if i > 0 {
            out.push_str("\\r");
        }
        out.push_str(part);
    }
}

fn push_escape(out: &mut String, c: char) {
    use std::fmt::Write;
    if c.is_ascii() {
        let _ = write!(out, "\\x{:02x}", c as u32);
    } else {
        let _ = write!(out, "\\u{{{:x}}}", c as u32);
    }
}

/// The findings of one line of a text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LineFindings {
    /// 1-based, as the diff numbers lines.
    pub line: u32,
    /// The line's text (without its terminator) is what the positions refer to.
    pub findings: Vec<Finding>,
}

/// Every line of `text` with something to show, in order; lines are split as the diff splits
/// them (on `\n`; a `\r` before it is not part of the line).
pub fn scan_text(text: &str) -> Vec<LineFindings> {
    let mut out = Vec::new();
    for (i, line) in text.split('\n').enumerate() {
        let line = line.strip_suffix('\r').unwrap_or(line);
        let place = if i == 0 { Place::FirstLine } else { Place::Elsewhere };
        let findings = scan_line(line, place);
        if !findings.is_empty() {
            out.push(LineFindings { line: i as u32 + 1, findings });
        }
    }
    out
}

/// How many characters of each sort something holds (a file's added lines and new name, an
/// action).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct HiddenTally {
    /// Bidi, invisible, control and whitespace characters.
    pub hidden: u32,
    /// Look-alike characters.
    pub confusable: u32,
}

impl HiddenTally {
    pub fn of(findings: &[Finding]) -> Self {
        let mut t = Self::default();
        t.add_findings(findings);
        t
    }

    pub fn add_findings(&mut self, findings: &[Finding]) {
        for f in findings {
            if f.kind.is_hidden() {
                self.hidden = self.hidden.saturating_add(1);
            } else {
                self.confusable = self.confusable.saturating_add(1);
            }
        }
    }

    pub fn add(&mut self, other: HiddenTally) {
        self.hidden = self.hidden.saturating_add(other.hidden);
        self.confusable = self.confusable.saturating_add(other.confusable);
    }

    pub fn is_empty(&self) -> bool {
        self.hidden == 0 && self.confusable == 0
    }

    pub fn total(&self) -> u32 {
        self.hidden.saturating_add(self.confusable)
    }
}

/// An action's warning, with the files it counts: what the queue card says.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct ActionFindings {
    pub tally: HiddenTally,
    /// Files whose added lines or new name hold any.
    pub files: u32,
}

impl ActionFindings {
    /// The card's warning: `This change contains hidden or bidirectional Unicode characters:
    /// 3 in 2 files. They are shown as ⟨U+…⟩.`, then the look-alikes if any; `None` when it has
    /// neither.
    pub fn warning(&self) -> Option<String> {
        let ActionFindings { tally, files } = *self;
        let in_files = crate::plural(files as usize, "file", "files");
        let hidden = (tally.hidden > 0).then(|| {
            format!(
                "This change contains hidden or bidirectional Unicode characters: {} in {in_files}. They are shown as ⟨U+…⟩.",
                tally.hidden
            )
        });
        let lookalikes = (tally.confusable > 0).then(|| {
            let n = crate::plural(tally.confusable as usize, "character", "characters");
            if tally.hidden > 0 {
                format!("It also contains {n} that look like ASCII letters or digits but are not; they are outlined.")
            } else {
                format!(
                    "This change contains {n} that look like ASCII letters or digits but are not, in {in_files}. They are outlined."
                )
            }
        });
        match (hidden, lookalikes) {
            (None, None) => None,
            (Some(h), None) => Some(h),
            (None, Some(l)) => Some(l),
            (Some(h), Some(l)) => Some(format!("{h} {l}")),
        }
    }
}

/// A file's note in the file list: `2 hidden or bidirectional characters, 1 look-alike
/// character`; `None` when there are none.
pub fn file_note(tally: HiddenTally) -> Option<String> {
    let mut parts = Vec::new();
    if tally.hidden > 0 {
        parts.push(crate::plural(
            tally.hidden as usize,
            "hidden or bidirectional character",
            "hidden or bidirectional characters",
        ));
    }
    if tally.confusable > 0 {
        parts.push(crate::plural(tally.confusable as usize, "look-alike character", "look-alike characters"));
    }
    (!parts.is_empty()).then(|| format!("{} in what this change writes", parts.join(", ")))
}

/// The names of the characters [`kind_of`] reports (controls by their ISO 6429 names).
fn char_name(c: char) -> Option<String> {
    const C0: [&str; 32] = [
        "NULL",
        "START OF HEADING",
        "START OF TEXT",
        "END OF TEXT",
        "END OF TRANSMISSION",
        "ENQUIRY",
        "ACKNOWLEDGE",
        "BELL",
        "BACKSPACE",
        "CHARACTER TABULATION",
        "LINE FEED",
        "LINE TABULATION",
        "FORM FEED",
        "CARRIAGE RETURN",
        "SHIFT OUT",
        "SHIFT IN",
        "DATA LINK ESCAPE",
        "DEVICE CONTROL ONE",
        "DEVICE CONTROL TWO",
        "DEVICE CONTROL THREE",
        "DEVICE CONTROL FOUR",
        "NEGATIVE ACKNOWLEDGE",
        "SYNCHRONOUS IDLE",
        "END OF TRANSMISSION BLOCK",
        "CANCEL",
        "END OF MEDIUM",
        "SUBSTITUTE",
        "ESCAPE",
        "INFORMATION SEPARATOR FOUR",
        "INFORMATION SEPARATOR THREE",
        "INFORMATION SEPARATOR TWO",
        "INFORMATION SEPARATOR ONE",
    ];
    let cp = c as u32;
    let fixed = match cp {
        0x00..=0x1F => C0[cp as usize],
        0x7F => "DELETE",
        0x85 => "NEXT LINE",
        0x9B => "CONTROL SEQUENCE INTRODUCER",
        0x80..=0x9F => "C1 CONTROL",
        0x00A0 => "NO-BREAK SPACE",
        0x00AD => "SOFT HYPHEN",
        0x034F => "COMBINING GRAPHEME JOINER",
        0x061C => "ARABIC LETTER MARK",
        0x115F => "HANGUL CHOSEONG FILLER",
        0x1160 => "HANGUL JUNGSEONG FILLER",
        0x1680 => "OGHAM SPACE MARK",
        0x17B4 => "KHMER VOWEL INHERENT AQ",
        0x17B5 => "KHMER VOWEL INHERENT AA",
        0x180B..=0x180D | 0x180F => "MONGOLIAN FREE VARIATION SELECTOR",
        0x180E => "MONGOLIAN VOWEL SEPARATOR",
        0x2000 => "EN QUAD",
        0x2001 => "EM QUAD",
        0x2002 => "EN SPACE",
        0x2003 => "EM SPACE",
        0x2004 => "THREE-PER-EM SPACE",
        0x2005 => "FOUR-PER-EM SPACE",
        0x2006 => "SIX-PER-EM SPACE",
        0x2007 => "FIGURE SPACE",
        0x2008 => "PUNCTUATION SPACE",
        0x2009 => "THIN SPACE",
        0x200A => "HAIR SPACE",
        0x200B => "ZERO WIDTH SPACE",
        0x200C => "ZERO WIDTH NON-JOINER",
        0x200D => "ZERO WIDTH JOINER",
        0x200E => "LEFT-TO-RIGHT MARK",
        0x200F => "RIGHT-TO-LEFT MARK",
        0x2028 => "LINE SEPARATOR",
        0x2029 => "PARAGRAPH SEPARATOR",
        0x202A => "LEFT-TO-RIGHT EMBEDDING",
        0x202B => "RIGHT-TO-LEFT EMBEDDING",
        0x202C => "POP DIRECTIONAL FORMATTING",
        0x202D => "LEFT-TO-RIGHT OVERRIDE",
        0x202E => "RIGHT-TO-LEFT OVERRIDE",
        0x202F => "NARROW NO-BREAK SPACE",
        0x205F => "MEDIUM MATHEMATICAL SPACE",
        0x2060 => "WORD JOINER",
        0x2061 => "FUNCTION APPLICATION",
        0x2062 => "INVISIBLE TIMES",
        0x2063 => "INVISIBLE SEPARATOR",
        0x2064 => "INVISIBLE PLUS",
        0x2066 => "LEFT-TO-RIGHT ISOLATE",
        0x2067 => "RIGHT-TO-LEFT ISOLATE",
        0x2068 => "FIRST STRONG ISOLATE",
        0x2069 => "POP DIRECTIONAL ISOLATE",
        0x206A..=0x206F => "DEPRECATED FORMAT CHARACTER",
        0x2800 => "BRAILLE PATTERN BLANK",
        0x3000 => "IDEOGRAPHIC SPACE",
        0x3164 => "HANGUL FILLER",
        0xFEFF => "ZERO WIDTH NO-BREAK SPACE (BYTE ORDER MARK)",
        0xFFA0 => "HALFWIDTH HANGUL FILLER",
        0xFFF9 => "INTERLINEAR ANNOTATION ANCHOR",
        0xFFFA => "INTERLINEAR ANNOTATION SEPARATOR",
        0xFFFB => "INTERLINEAR ANNOTATION TERMINATOR",
        0x1BCA0..=0x1BCA3 => "SHORTHAND FORMAT CONTROL",
        0x1D173..=0x1D17A => "MUSICAL SYMBOL FORMAT CONTROL",
        0xE0001 => "LANGUAGE TAG",
        0xE007F => "CANCEL TAG",
        0xFE00..=0xFE0F => return Some(format!("VARIATION SELECTOR-{}", cp - 0xFE00 + 1)),
        0xE0100..=0xE01EF => return Some(format!("VARIATION SELECTOR-{}", cp - 0xE0100 + 17)),
        // Tag characters mirror ASCII: naming the letter shows what the tags spell.
        0xE0020..=0xE007E => {
            let ascii = char::from_u32(cp - 0xE0000).unwrap_or('?');
            return Some(match ascii {
                ' ' => "TAG SPACE".to_string(),
                a => format!("TAG {a:?}"),
            });
        }
        _ => return None,
    };
    Some(fixed.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(line: &str) -> Vec<(usize, char, HiddenKind)> {
        scan_line(line, Place::Elsewhere).into_iter().map(|f| (f.start, f.ch, f.kind)).collect()
    }

    #[test]
    fn a_clean_text_has_no_findings() {
        let text = "fn main() {\n\tprintln!(\"héllo, wörld — ½ café 日本語 ✓ 🎉\");\r\n}\n";
        assert!(scan_text(text).is_empty(), "accents, CJK, emoji, tabs and CRLF are ordinary: {:?}", scan_text(text));
        assert!(
            scan_line("Москва и λόγος", Place::Elsewhere).is_empty(),
            "natural Cyrillic and Greek text is ordinary"
        );
    }

    #[test]
    fn trojan_source_bidi_controls_are_found_with_byte_and_char_positions() {
        // The classic "commenting out" attack: the RLO/LRI pair reorders what is displayed.
        let line = "    /* } \u{202E}\u{2066}if (isAdmin)\u{2069} \u{2066} begin admins only */";
        let found = scan_line(line, Place::Elsewhere);
        let cps: Vec<u32> = found.iter().map(Finding::code_point).collect();
        assert_eq!(cps, vec![0x202E, 0x2066, 0x2069, 0x2066], "every bidi control, in order");
        assert!(found.iter().all(|f| f.kind == HiddenKind::Bidi));
        let rlo = &found[0];
        assert_eq!((rlo.start, rlo.end), (9, 12), "byte range of the 3-byte RLO");
        assert_eq!(rlo.char_index, 9, "char index counts characters, not bytes");
        assert_eq!(&line[rlo.start..rlo.end], "\u{202E}");
        assert_eq!(rlo.name(), "U+202E RIGHT-TO-LEFT OVERRIDE");
        assert_eq!(rlo.marker(), "⟨U+202E⟩");
        let lri = &found[1];
        assert_eq!((lri.start, lri.char_index), (12, 10), "after a multi-byte character bytes and chars part ways");
    }

    #[test]
    fn positions_are_right_after_multi_byte_text() {
        let line = "é日🎉\u{200B}x";
        let found = scan_line(line, Place::Elsewhere);
        assert_eq!(found.len(), 1);
        let f = &found[0];
        assert_eq!((f.start, f.end, f.char_index), (2 + 3 + 4, 2 + 3 + 4 + 3, 3));
        assert_eq!(&line[f.start..f.end], "\u{200B}");
        assert_eq!((f.kind, f.name()), (HiddenKind::Invisible, "U+200B ZERO WIDTH SPACE".to_string()));
    }

    #[test]
    fn each_kind_is_found() {
        assert_eq!(kinds("a\u{200F}b"), vec![(1, '\u{200F}', HiddenKind::Bidi)]);
        assert_eq!(kinds("a\u{061C}b"), vec![(1, '\u{061C}', HiddenKind::Bidi)]);
        assert_eq!(kinds("is\u{00AD}Admin"), vec![(2, '\u{AD}', HiddenKind::Invisible)]);
        assert_eq!(kinds("x\u{2060}"), vec![(1, '\u{2060}', HiddenKind::Invisible)]);
        assert_eq!(kinds("\u{3164}"), vec![(0, '\u{3164}', HiddenKind::Invisible)], "the Hangul filler JS identifier");
        assert_eq!(kinds("echo \u{1b}[2J"), vec![(5, '\u{1b}', HiddenKind::Control)]);
        assert_eq!(
            kinds("a\u{0}b\u{7f}c\u{85}"),
            vec![
                (1, '\0', HiddenKind::Control),
                (3, '\u{7f}', HiddenKind::Control),
                (5, '\u{85}', HiddenKind::Control)
            ]
        );
        assert_eq!(kinds("if (a\u{00A0}&& b)"), vec![(5, '\u{A0}', HiddenKind::Whitespace)]);
        assert_eq!(
            kinds("x\u{3000}y\u{2028}"),
            vec![(1, '\u{3000}', HiddenKind::Whitespace), (5, '\u{2028}', HiddenKind::Whitespace)]
        );
        assert!(kinds("tab\tand\rcr").is_empty(), "tab and carriage return are left alone");
    }

    #[test]
    fn tag_characters_are_found_and_named_by_what_they_spell() {
        let line = "ok\u{E0041}\u{E0042}";
        let found = scan_line(line, Place::Elsewhere);
        assert_eq!(found.len(), 2);
        assert_eq!(found[0].name(), "U+E0041 TAG 'A'");
        assert_eq!(found[0].kind, HiddenKind::Invisible);
        // A flag written with tags (England) is an emoji, not hidden text.
        let england = "\u{1F3F4}\u{E0067}\u{E0062}\u{E0065}\u{E006E}\u{E0067}\u{E007F}";
        assert!(scan_line(england, Place::Elsewhere).is_empty(), "{:?}", scan_line(england, Place::Elsewhere));
    }

    #[test]
    fn joiners_and_selectors_are_left_alone_where_emoji_and_scripts_need_them() {
        assert!(kinds("👨\u{200D}👩\u{200D}👧").is_empty(), "a family emoji's joiners");
        assert!(kinds("❤\u{FE0F}").is_empty(), "emoji presentation selector");
        assert!(kinds("1\u{FE0F}\u{20E3}").is_empty(), "a keycap");
        assert!(kinds("می\u{200C}خواهم").is_empty(), "a Persian non-joiner");
        assert_eq!(kinds("is\u{200D}Admin"), vec![(2, '\u{200D}', HiddenKind::Invisible)], "a joiner inside ASCII");
        assert_eq!(kinds("a\u{FE0F}"), vec![(1, '\u{FE0F}', HiddenKind::Invisible)], "a selector on ASCII");
        assert_eq!(
            kinds("❤\u{FE0F}\u{FE01}").len(),
            1,
            "a second selector in a row (data smuggled in selectors) is found"
        );
        assert_eq!(scan_line("x\u{E0100}", Place::Elsewhere)[0].name(), "U+E0100 VARIATION SELECTOR-17");
    }

    #[test]
    fn a_bom_is_only_ordinary_at_the_start_of_a_file() {
        assert!(scan_line("\u{FEFF}fn main() {}", Place::FirstLine).is_empty());
        assert_eq!(kinds("\u{FEFF}name").len(), 1, "a BOM at the start of a name is hidden");
        let lines = scan_text("\u{FEFF}a\nb\u{FEFF}c\n");
        assert_eq!(lines.len(), 1);
        assert_eq!(lines[0].line, 2, "only the BOM inside line 2 is reported");
        assert_eq!(lines[0].findings[0].start, 1);
    }

    #[test]
    fn look_alike_letters_in_an_ascii_word_are_confusable() {
        let found = scan_line("if user == \"p\u{0430}ypal\" {", Place::Elsewhere);
        assert_eq!(found.len(), 1, "{found:?}");
        let f = &found[0];
        assert_eq!((f.kind, f.ch, f.looks_like.as_deref()), (HiddenKind::Confusable, '\u{430}', Some("a")));
        assert_eq!(f.name(), "U+0430 Cyrillic letter that looks like \"a\"");
        // A whole word of look-alikes on an otherwise ASCII line.
        let found = scan_line("let \u{0441}\u{043E}\u{0440} = 1;", Place::Elsewhere);
        assert_eq!(found.iter().map(|f| f.looks_like.clone().unwrap()).collect::<String>(), "cop");
        // Fullwidth digits in a number.
        assert_eq!(kinds("limit = 1\u{FF10}")[0].2, HiddenKind::Confusable);
        // Real Cyrillic words next to look-alike ones are natural text.
        assert!(scan_line("сор и мусор", Place::Elsewhere).is_empty());
    }

    #[test]
    fn file_texts_are_scanned_line_by_line_as_the_diff_numbers_them() {
        let text = "a\r\nb\u{202E}c\r\nd\n\u{200B}";
        let lines = scan_text(text);
        assert_eq!(lines.iter().map(|l| l.line).collect::<Vec<_>>(), vec![2, 4]);
        assert_eq!(lines[0].findings[0].start, 1);
    }

    #[test]
    fn warnings_count_characters_and_files() {
        let none = ActionFindings::default();
        assert_eq!(none.warning(), None);
        let w = ActionFindings { tally: HiddenTally { hidden: 3, confusable: 0 }, files: 2 }.warning().unwrap();
        assert_eq!(
            w,
            "This change contains hidden or bidirectional Unicode characters: 3 in 2 files. They are shown as ⟨U+…⟩."
        );
        let w = ActionFindings { tally: HiddenTally { hidden: 1, confusable: 2 }, files: 1 }.warning().unwrap();
        assert!(
            w.contains(": 1 in 1 file.") && w.contains("It also contains 2 characters that look like ASCII"),
            "{w}"
        );
        let w = ActionFindings { tally: HiddenTally { hidden: 0, confusable: 1 }, files: 1 }.warning().unwrap();
        assert!(w.starts_with("This change contains 1 character that look"), "{w}");
        assert_eq!(
            file_note(HiddenTally { hidden: 2, confusable: 1 }).as_deref(),
            Some("2 hidden or bidirectional characters, 1 look-alike character in what this change writes")
        );
        assert_eq!(file_note(HiddenTally::default()), None);
    }

    #[test]
    fn escape_writes_controls_bidi_and_invisible_characters_as_escapes() {
        assert!(matches!(escape("plain\ttext\nline two\n"), std::borrow::Cow::Borrowed(_)), "plain text is not copied");
        assert_eq!(escape("\u{1b}[2J\u{1b}]0;title\u{7}red"), "\\x1b[2J\\x1b]0;title\\x07red");
        assert_eq!(escape("user\u{202E} \u{2066}admin"), "user\\u{202e} \\u{2066}admin");
        assert_eq!(escape("a\u{200B}b\u{85}c"), "a\\u{200b}b\\u{85}c");
        assert_eq!(escape("ok\r\nnext\rover\r"), "ok\r\nnext\\rover\\r", "CRLF stays, a lone CR is escaped");
        assert_eq!(
            escape("caf\u{e9} \u{A0}\u{0430} 👨\u{200D}👩"),
            "caf\u{e9} \u{A0}\u{0430} 👨\u{200D}👩",
            "accents, odd spaces, look-alikes and emoji stay"
        );
    }

    /// Not a timing assertion: prints how long a 20,000-line file takes, for docs/PERFORMANCE.md
    /// (`cargo test -p resolve-engine --release hidden::tests::a_large_file -- --nocapture`).
    #[test]
    fn a_large_file_is_scanned_and_every_planted_character_found() {
        let mut text = String::new();
        for i in 0..20_000 {
            match i % 1000 {
                7 => text.push_str("    let access = \"user\u{202E} \u{2066}// admin\u{2069}\u{2066}\";\n"),
                500 => text.push_str("    // Комментарий на русском: это обычный текст, λόγος\n"),
                _ => text.push_str(&format!("    let value_{i} = compute(input, {i}); // a comment about it\n")),
            }
        }
        let started = std::time::Instant::now();
        let lines = scan_text(&text);
        let took = started.elapsed();
        assert_eq!(lines.len(), 20, "one planted line per 1,000");
        assert!(lines.iter().all(|l| l.findings.len() == 4 && l.line % 1000 == 8));
        eprintln!("hidden::scan_text: 20,000 lines, {} bytes in {took:?}", text.len());
    }
}
