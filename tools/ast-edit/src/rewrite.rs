//! One file: parse, match every op, resolve overlaps, and compute the edits.
//!
//! The rules (identical for preview and apply, because apply writes what this computed):
//! - a match that touches a region the parser could not read (the matched subtree has an
//!   error or missing node, or it sits inside an ERROR node) is skipped and reported;
//! - within one op, matches come in pre-order, so an enclosing match comes before the ones
//!   nested in it: the outermost wins and the nested ones are counted as skipped;
//! - across ops, an earlier op wins: a later op's match that overlaps an accepted edit is
//!   counted as skipped. Every op matches the original text (ops do not chain);
//! - a UTF-8 BOM is stripped before parsing and put back; in a CRLF file, line breaks that
//!   a replacement introduces are written as CRLF.

use ast_grep_core::matcher::PatternNode;
use ast_grep_core::replacer::TemplateFix;
use ast_grep_core::tree_sitter::LanguageExt;
use ast_grep_core::{Language, Pattern};
use ast_grep_language::SupportLang;
use memchr::memmem::Finder;

pub(crate) const BOM: &[u8] = b"\xEF\xBB\xBF";

/// One op compiled for one language.
pub(crate) struct CompiledOp {
    pub index: usize,
    pub pattern: Pattern,
    pub fix: TemplateFix,
    /// Literals every match contains (all must be in a file for it to match); empty when
    /// none can be derived safely.
    pub literals: Vec<Finder<'static>>,
}

/// The ops that compiled for one language.
pub(crate) struct LangOps {
    pub lang: SupportLang,
    pub ops: Vec<CompiledOp>,
}

impl LangOps {
    /// False only when the bytes cannot contain a match of any op (literal prefilter).
    pub fn may_match(&self, bytes: &[u8]) -> bool {
        self.ops.iter().any(|op| op.literals.iter().all(|f| f.find(bytes).is_some()))
    }
}

/// Compiles `pat` for `lang` (as context around `sel` when given).
pub(crate) fn compile(
    index: usize,
    pat: &str,
    out: &str,
    sel: Option<&str>,
    lang: SupportLang,
) -> Result<CompiledOp, String> {
    let pattern = match sel {
        Some(sel) => Pattern::contextual(pat, sel, lang),
        None => Pattern::try_new(pat, lang),
    }
    .map_err(|e| e.to_string())?;
    if pattern.has_error() || contains_error(&pattern.node) {
        return Err(format!("the pattern `{pat}` does not parse as {lang} (it contains a syntax error)"));
    }
    let fix = match TemplateFix::try_new(out, &lang) {
        Ok(f) => f,
        Err(e) => match e {},
    };
    let literals = required_literals(&pattern, lang).iter().map(|s| Finder::new(s.as_bytes()).into_owned()).collect();
    Ok(CompiledOp { index, pattern, fix, literals })
}

/// True when the pattern has an ERROR node anywhere (tree-sitter's error symbol is `u16::MAX`).
fn contains_error(n: &PatternNode) -> bool {
    match n {
        PatternNode::MetaVar { .. } => false,
        PatternNode::Terminal { kind_id, .. } => *kind_id == u16::MAX,
        PatternNode::Internal { kind_id, children } => *kind_id == u16::MAX || children.iter().any(contains_error),
    }
}

/// Terminal texts every match contains verbatim, longest first (at most four). Named
/// terminals are compared by text; unnamed ones only by kind, so only word-like keywords and
/// operators of two or more punctuation characters (`===`, `=>`, `::`) are used: a
/// one-character token may stand for something else (an unnamed `;` can be a zero-width
/// automatic semicolon, a layout `{` in Haskell), while a multi-character operator is always
/// lexed from its own text. Empty when nothing can be
/// trusted: an ERROR node in the pattern (it matches any kind), the language's expando or
/// metavariable character in a text, or PHP (case-insensitive keywords).
fn required_literals(pattern: &Pattern, lang: SupportLang) -> Vec<String> {
    fn walk<'a>(n: &'a PatternNode, found: &mut Vec<&'a str>, poisoned: &mut bool) {
        match n {
            PatternNode::MetaVar { .. } => {}
            PatternNode::Terminal { text, kind_id, is_named } => {
                if *kind_id == u16::MAX {
                    *poisoned = true;
                }
                let t = text.trim();
                let word = t.len() >= 2 && t.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
                let operator = t.len() >= 2 && t.bytes().all(|b| b.is_ascii_punctuation());
                if (*is_named && !t.is_empty()) || word || operator {
                    found.push(t);
                }
            }
            PatternNode::Internal { kind_id, children } => {
                if *kind_id == u16::MAX {
                    *poisoned = true;
                }
                for c in children {
                    walk(c, found, poisoned);
                }
            }
        }
    }
    if lang == SupportLang::Php {
        return Vec::new();
    }
    let mut found = Vec::new();
    let mut poisoned = false;
    walk(&pattern.node, &mut found, &mut poisoned);
    if poisoned || found.iter().any(|t| t.contains(lang.expando_char()) || t.contains(lang.meta_var_char())) {
        return Vec::new();
    }
    found.sort_by(|a, b| b.len().cmp(&a.len()).then(a.cmp(b)));
    found.dedup();
    // A shorter literal contained in a longer one adds nothing.
    let mut kept: Vec<&str> = Vec::new();
    for t in found {
        if !kept.iter().any(|k| k.contains(t)) {
            kept.push(t);
        }
    }
    kept.into_iter().take(4).map(str::to_string).collect()
}

/// Why a file was not scanned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum FileSkip {
    Binary,
    NotUtf8,
    TooLarge(u64),
    Unreadable(String),
}

/// One replacement, in bytes of the text without BOM.
#[derive(Debug, Clone)]
pub(crate) struct Edit {
    pub start: usize,
    pub end: usize,
    /// The replacement's bytes in [`FileScan::inserts`].
    pub insert: std::ops::Range<usize>,
    /// 1-based line and 0-based byte column of the match start.
    pub line: usize,
    pub column: usize,
    pub op: usize,
}

/// What one file's scan found.
#[derive(Debug, Default)]
pub(crate) struct FileScan {
    /// The bytes read (BOM included).
    pub before: Vec<u8>,
    pub bom: bool,
    /// Accepted edits, sorted by position, not overlapping.
    pub edits: Vec<Edit>,
    /// The replacement texts of `edits`, back to back (one allocation per file, not one per
    /// match: thousands of small live allocations scattered between freed parse trees would
    /// pin a page each and multiply the peak memory).
    pub inserts: Vec<u8>,
    pub nested_skipped: usize,
    pub overlap_skipped: usize,
    /// 1-based lines of matches skipped because they touch a parse error.
    pub parse_skipped: Vec<usize>,
}

impl FileScan {
    /// A copy of everything but the bytes read (`before` is empty).
    pub fn without_bytes(&self) -> FileScan {
        FileScan {
            before: Vec::new(),
            bom: self.bom,
            edits: self.edits.clone(),
            inserts: self.inserts.clone(),
            nested_skipped: self.nested_skipped,
            overlap_skipped: self.overlap_skipped,
            parse_skipped: self.parse_skipped.clone(),
        }
    }

    /// The new bytes with the first `n` edits applied.
    pub fn render(&self, n: usize) -> Vec<u8> {
        let body = if self.bom { &self.before[BOM.len()..] } else { &self.before[..] };
        let mut out = Vec::with_capacity(self.before.len() + 64);
        if self.bom {
            out.extend_from_slice(BOM);
        }
        let mut at = 0;
        for e in &self.edits[..n.min(self.edits.len())] {
            out.extend_from_slice(&body[at..e.start]);
            out.extend_from_slice(&self.inserts[e.insert.clone()]);
            at = e.end;
        }
        out.extend_from_slice(&body[at..]);
        out
    }
}

/// Turns bare `\n` into `\r\n`.
fn to_crlf(text: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len() + 8);
    for (i, &b) in text.iter().enumerate() {
        if b == b'\n' && (i == 0 || text[i - 1] != b'\r') {
            out.push(b'\r');
        }
        out.push(b);
    }
    out
}

/// Checks the bytes; None when the file should be scanned.
pub(crate) fn check_bytes(bytes: &[u8]) -> Option<FileSkip> {
    if bytes[..bytes.len().min(8192)].contains(&0) {
        return Some(FileSkip::Binary);
    }
    if std::str::from_utf8(bytes).is_err() {
        return Some(FileSkip::NotUtf8);
    }
    None
}

/// Scans text that passed [`check_bytes`]. Returns None when nothing matched at all.
pub(crate) fn scan_text(bytes: Vec<u8>, ops: &LangOps) -> Option<FileScan> {
    if !ops.may_match(&bytes) {
        return None;
    }
    let bom = bytes.starts_with(BOM);
    let body = if bom { &bytes[BOM.len()..] } else { &bytes[..] };
    let text = std::str::from_utf8(body).ok()?;
    let crlf = memchr::memmem::find(body, b"\r\n").is_some();
    let root = ops.lang.ast_grep(text);
    let has_errors = root.root().get_inner_node().has_error();

    let mut scan = FileScan { bom, ..FileScan::default() };
    let mut accepted: Vec<Edit> = Vec::new();
    let mut inserts: Vec<u8> = Vec::new();
    let mut parse_skipped: Vec<usize> = Vec::new();
    let mut any_match = false;
    for op in &ops.ops {
        let mut op_end = 0usize;
        let mut op_edits: Vec<Edit> = Vec::new();
        for nm in root.root().find_all(&op.pattern) {
            any_match = true;
            let node = nm.get_node();
            let pos = node.start_pos();
            let line = pos.line() + 1;
            if has_errors && (node.get_inner_node().has_error() || node.ancestors().any(|a| a.is_error())) {
                parse_skipped.push(line);
                continue;
            }
            let edit = nm.make_edit(&op.pattern, &op.fix);
            let (start, end) = (edit.position, edit.position + edit.deleted_length);
            if start < op_end {
                scan.nested_skipped += 1;
                continue;
            }
            if accepted.iter().any(|a| start < a.end && a.start < end) {
                scan.overlap_skipped += 1;
                continue;
            }
            op_end = end;
            let from = inserts.len();
            if crlf {
                inserts.extend_from_slice(&to_crlf(&edit.inserted_text));
            } else {
                inserts.extend_from_slice(&edit.inserted_text);
            }
            let insert = from..inserts.len();
            op_edits.push(Edit { start, end, insert, line, column: pos.byte_point().1, op: op.index });
        }
        accepted.extend(op_edits);
    }
    if !any_match {
        return None;
    }
    drop(root);
    // Fresh, exact-size copies made after the tree is freed (see `inserts`).
    accepted.sort_by_key(|e| (e.start, e.end));
    scan.edits = accepted.to_vec();
    scan.inserts = inserts.to_vec();
    parse_skipped.sort_unstable();
    scan.parse_skipped = parse_skipped.to_vec();
    scan.before = bytes;
    Some(scan)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ops(lang: SupportLang, list: &[(&str, &str)], sel: Option<&str>) -> LangOps {
        LangOps { lang, ops: list.iter().enumerate().map(|(i, (p, o))| compile(i, p, o, sel, lang).unwrap()).collect() }
    }

    fn rewrite(src: &str, o: &LangOps) -> (String, FileScan) {
        let scan = scan_text(src.as_bytes().to_vec(), o).expect("matches");
        (String::from_utf8(scan.render(usize::MAX)).unwrap(), scan)
    }

    #[test]
    fn literal_is_the_longest_terminal_and_skips_metavariables() {
        let o = ops(SupportLang::TypeScript, &[("new Error($$$A)", "")], None);
        assert!(o.may_match(b"throw new Error('x')"));
        assert!(!o.may_match(b"throw new Failure('x')"), "a file without the literal `Error` cannot match");
        assert!(!o.may_match(b"throw Error('x')"), "every word of the pattern must be present");
        let o = ops(SupportLang::Rust, &[("$A.unwrap()", "")], None);
        assert!(!o.may_match(b"fn main() { x.expect(\"y\") }"));
    }

    #[test]
    fn one_character_punctuation_is_never_required() {
        // `;` may be a zero-width automatic semicolon in TypeScript.
        let o = ops(SupportLang::TypeScript, &[("$A;", "")], None);
        assert!(o.may_match(b"x"));
    }

    #[test]
    fn a_multi_character_operator_is_required_beside_the_words() {
        let o = ops(SupportLang::TypeScript, &[("$A === undefined", "$A == null")], None);
        assert!(o.may_match(b"if (x === undefined) {}"));
        assert!(o.may_match(b"if (x===undefined) {}"), "spacing does not matter, the operator's text does");
        assert!(!o.may_match(b"let x: number | undefined;"), "a file without `===` cannot match");
        // And the file it lets through is rewritten as before.
        let (out, scan) = rewrite("if (a.b === undefined) { f(x===undefined); }\n", &o);
        assert_eq!(out, "if (a.b == null) { f(x == null); }\n");
        assert_eq!(scan.edits.len(), 2);
        let o = ops(SupportLang::Rust, &[("tracing::info!($$$A)", "")], None);
        assert!(!o.may_match(b"fn main() { info!(\"x\") }"), "`tracing` and `::` are both required");
    }

    #[test]
    fn nested_matches_keep_the_outermost() {
        let o = ops(SupportLang::TypeScript, &[("foo($A)", "bar($A)")], None);
        let (out, scan) = rewrite("foo(foo(x));\n", &o);
        assert_eq!(out, "bar(foo(x));\n");
        assert_eq!(scan.edits.len(), 1);
        assert_eq!(scan.nested_skipped, 1);
    }

    #[test]
    fn earlier_op_wins_on_overlap() {
        let o = ops(SupportLang::TypeScript, &[("foo($A)", "one($A)"), ("$F(x)", "two(x)")], None);
        let (out, scan) = rewrite("foo(x); baz(x);\n", &o);
        assert_eq!(out, "one(x); two(x);\n");
        assert_eq!(scan.overlap_skipped, 1);
    }

    #[test]
    fn crlf_and_bom_survive_a_multiline_replacement() {
        let o = ops(SupportLang::TypeScript, &[("foo($A)", "bar(\n  $A\n)")], None);
        let (out, _) = rewrite("\u{feff}let a = 1;\r\nfoo(x);\r\n", &o);
        assert_eq!(out, "\u{feff}let a = 1;\r\nbar(\r\n  x\r\n);\r\n");
    }
}
