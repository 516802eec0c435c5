//! Structured diffs: files → hunks → typed lines with word-level change ranges, computed
//! with `similar`. The UI renders these; the agent gets the unified text.

use serde::Serialize;
use similar::{ChangeTag, TextDiff};

use crate::hidden::{self, Finding, HiddenTally, Place};

/// Files larger than this (either side) are summarised, not diffed.
pub const MAX_DIFF_BYTES: usize = 4 * 1024 * 1024;
/// Lines longer than this get no word-level emphasis (it would cost more than it shows).
const MAX_INLINE_LINE: usize = 2_000;

/// What a diff line is: context, added or removed (one definition with the window's protocol).
pub use resolve_protocol::DiffLineKind;

/// One line of a hunk. `text` has no line terminator. `emphasis` are byte ranges of `text`
/// that changed at word level (empty for context lines and for wholly new lines). `hidden`
/// are the characters of `text` a person cannot see or that look like others
/// ([`hidden::scan_line`]), computed for the lines a diff holds only.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DiffLine {
    pub kind: DiffLineKind,
    pub old_no: Option<u32>,
    pub new_no: Option<u32>,
    pub text: String,
    pub emphasis: Vec<(usize, usize)>,
    pub hidden: Vec<Finding>,
}

/// A run of changes with its context. Line numbers are 1-based like unified diffs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Hunk {
    pub old_start: u32,
    pub old_lines: u32,
    pub new_start: u32,
    pub new_lines: u32,
    pub lines: Vec<DiffLine>,
}

/// The diff of one file. For binary or very large files `summary` says so and `hunks` is
/// empty.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FileDiff {
    pub path: String,
    pub old_path: Option<String>,
    pub summary: Option<String>,
    pub hunks: Vec<Hunk>,
    pub added: u32,
    pub removed: u32,
}

/// The syntax highlighter's language id for a path, from its extension (case-insensitive);
/// `None` when the extension is not in the table or the name has none (`Makefile`,
/// `.gitignore`). The ids are the ones the UI's highlighter registers or may register.
pub fn language_for_path(path: &str) -> Option<&'static str> {
    let name = path.rsplit('/').next().unwrap_or(path);
    let (stem, ext) = name.rsplit_once('.')?;
    if stem.is_empty() {
        return None;
    }
    Some(match ext.to_ascii_lowercase().as_str() {
        "ts" | "tsx" | "mts" | "cts" => "typescript",
        "js" | "jsx" | "mjs" | "cjs" => "javascript",
        "rs" => "rust",
        "py" | "pyi" => "python",
        "json" | "jsonc" => "json",
        "css" => "css",
        "html" | "htm" | "xml" | "svg" | "svelte" | "vue" => "xml",
        "md" | "markdown" => "markdown",
        "go" => "go",
        "java" => "java",
        "c" | "h" => "c",
        "cpp" | "cc" | "hpp" => "cpp",
        "sh" | "bash" => "bash",
        "yml" | "yaml" => "yaml",
        "cs" => "csharp",
        "kt" | "kts" => "kotlin",
        "lua" => "lua",
        "php" => "php",
        "rb" => "ruby",
        "scala" | "sc" => "scala",
        "swift" => "swift",
        "ex" | "exs" => "elixir",
        "hs" => "haskell",
        _ => return None,
    })
}

/// True when the bytes look binary (a NUL in the first 8 KiB) or are not UTF-8.
pub fn is_binary(bytes: &[u8]) -> bool {
    bytes[..bytes.len().min(8192)].contains(&0) || std::str::from_utf8(bytes).is_err()
}

/// Added and removed line counts, without building hunks.
pub fn line_counts(old: &str, new: &str) -> (u32, u32) {
    let (added, removed, _) = line_counts_and_hidden(old, new);
    (added, removed)
}

/// Added and removed line counts, and the hidden or look-alike characters in the added lines
/// (what the change writes that was not there), without building hunks.
pub fn line_counts_and_hidden(old: &str, new: &str) -> (u32, u32, HiddenTally) {
    let diff = TextDiff::from_lines(old, new);
    let (mut added, mut removed) = (0u32, 0u32);
    let mut tally = HiddenTally::default();
    for op in diff.ops() {
        for change in diff.iter_changes(op) {
            match change.tag() {
                ChangeTag::Insert => {
                    added += 1;
                    let line = change.value().trim_end_matches('\n');
                    let line = line.strip_suffix('\r').unwrap_or(line);
                    let place = if change.new_index() == Some(0) { Place::FirstLine } else { Place::Elsewhere };
                    tally.add_findings(&hidden::scan_line(line, place));
                }
                ChangeTag::Delete => removed += 1,
                ChangeTag::Equal => {}
            }
        }
    }
    (added, removed, tally)
}

impl FileDiff {
    /// Diffs two versions of a file with `context` lines around each change.
    pub fn compute(path: &str, old_path: Option<&str>, old: &[u8], new: &[u8], context: usize) -> FileDiff {
        let mut out = FileDiff {
            path: path.to_string(),
            old_path: old_path.map(str::to_string),
            summary: None,
            hunks: Vec::new(),
            added: 0,
            removed: 0,
        };
        if is_binary(old) || is_binary(new) {
            out.summary = Some(format!("Binary file: {} → {}", human_bytes(old.len()), human_bytes(new.len())));
            return out;
        }
        if old.len() > MAX_DIFF_BYTES || new.len() > MAX_DIFF_BYTES {
            out.summary =
                Some(format!("Large file ({} → {}): diff not shown", human_bytes(old.len()), human_bytes(new.len())));
            return out;
        }
        let (old, new) = (String::from_utf8_lossy(old), String::from_utf8_lossy(new));
        let diff = TextDiff::from_lines(old.as_ref(), new.as_ref());
        for group in diff.grouped_ops(context) {
            let (Some(first), Some(last)) = (group.first(), group.last()) else {
                continue;
            };
            let old_range = first.old_range().start..last.old_range().end;
            let new_range = first.new_range().start..last.new_range().end;
            let mut hunk = Hunk {
                old_start: old_range.start as u32 + 1,
                old_lines: old_range.len() as u32,
                new_start: new_range.start as u32 + 1,
                new_lines: new_range.len() as u32,
                lines: Vec::new(),
            };
            for op in &group {
                for change in diff.iter_inline_changes(op) {
                    let kind = match change.tag() {
                        ChangeTag::Equal => DiffLineKind::Context,
                        ChangeTag::Insert => {
                            out.added += 1;
                            DiffLineKind::Added
                        }
                        ChangeTag::Delete => {
                            out.removed += 1;
                            DiffLineKind::Removed
                        }
                    };
                    let mut text = String::new();
                    let mut emphasis = Vec::new();
                    let mut any_plain = false;
                    for (emph, part) in change.iter_strings_lossy() {
                        let start = text.len();
                        text.push_str(&part);
                        if emph {
                            emphasis.push((start, text.len()));
                        } else {
                            any_plain = true;
                        }
                    }
                    let trimmed = text.trim_end_matches(['\n', '\r']).len();
                    text.truncate(trimmed);
                    emphasis = emphasis
                        .into_iter()
                        .map(|(s, e)| (s.min(trimmed), e.min(trimmed)))
                        .filter(|(s, e)| s < e)
                        .collect();
                    // A line that changed entirely carries no emphasis: the colour says it all.
                    if !any_plain || text.len() > MAX_INLINE_LINE {
                        emphasis.clear();
                    }
                    let old_no = change.old_index().map(|i| i as u32 + 1);
                    let new_no = change.new_index().map(|i| i as u32 + 1);
                    let first = match kind {
                        DiffLineKind::Removed => old_no == Some(1),
                        DiffLineKind::Added | DiffLineKind::Context => new_no == Some(1),
                    };
                    let hidden = hidden::scan_line(&text, if first { Place::FirstLine } else { Place::Elsewhere });
                    hunk.lines.push(DiffLine { kind, old_no, new_no, text, emphasis, hidden });
                }
            }
            out.hunks.push(hunk);
        }
        out
    }
}

/// A unified diff (`--- a/path` / `+++ b/path`) of two texts, or a one-line summary for
/// binary and very large files.
pub fn unified(path: &str, old: &[u8], new: &[u8], context: usize) -> String {
    if is_binary(old) || is_binary(new) || old.len() > MAX_DIFF_BYTES || new.len() > MAX_DIFF_BYTES {
        let d = FileDiff::compute(path, None, old, new, context);
        return format!("--- a/{path}\n+++ b/{path}\n{}\n", d.summary.unwrap_or_default());
    }
    let (old, new) = (String::from_utf8_lossy(old), String::from_utf8_lossy(new));
    TextDiff::from_lines(old.as_ref(), new.as_ref())
        .unified_diff()
        .context_radius(context)
        .header(&format!("a/{path}"), &format!("b/{path}"))
        .to_string()
}

pub(crate) fn human_bytes(n: usize) -> String {
    if n < 1024 {
        format!("{n} B")
    } else if n < 1024 * 1024 {
        format!("{:.1} KiB", n as f64 / 1024.0)
    } else {
        format!("{:.1} MiB", n as f64 / (1024.0 * 1024.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn languages_follow_extensions() {
        assert_eq!(language_for_path("src/a.TS"), Some("typescript"));
        assert_eq!(language_for_path("ui/App.svelte"), Some("xml"));
        assert_eq!(language_for_path("stubs/x.pyi"), Some("python"));
        assert_eq!(language_for_path("src/main.rs"), Some("rust"));
        assert_eq!(language_for_path("app/Main.kt"), Some("kotlin"));
        assert_eq!(language_for_path("lib/x.exs"), Some("elixir"));
        assert_eq!(language_for_path("Makefile"), None);
        assert_eq!(language_for_path("dir.d/.gitignore"), None);
        assert_eq!(language_for_path("notes.txt"), None);
    }

    #[test]
    fn hunks_have_numbers_counts_and_word_emphasis() {
        let old = "a\nlet x = foo(1);\nc\n";
        let new = "a\nlet x = bar(1);\nc\n";
        let d = FileDiff::compute("f.ts", None, old.as_bytes(), new.as_bytes(), 3);
        assert_eq!((d.added, d.removed), (1, 1));
        assert_eq!(d.hunks.len(), 1);
        let h = &d.hunks[0];
        assert_eq!((h.old_start, h.old_lines, h.new_start, h.new_lines), (1, 3, 1, 3));
        let removed = h.lines.iter().find(|l| l.kind == DiffLineKind::Removed).unwrap();
        assert_eq!(removed.text, "let x = foo(1);");
        assert_eq!(removed.old_no, Some(2));
        let spans: Vec<&str> = removed.emphasis.iter().map(|&(s, e)| &removed.text[s..e]).collect();
        assert!(spans.contains(&"foo"), "the changed word is emphasised: {spans:?}");
        assert!(h.lines.iter().all(|l| !l.text.ends_with('\n')));
    }

    #[test]
    fn context_controls_hunk_size() {
        let old: String = (0..40).map(|i| format!("line {i}\n")).collect();
        let new = old.replace("line 5\n", "LINE 5\n").replace("line 30\n", "LINE 30\n");
        assert_eq!(FileDiff::compute("f", None, old.as_bytes(), new.as_bytes(), 3).hunks.len(), 2);
        let full = FileDiff::compute("f", None, old.as_bytes(), new.as_bytes(), 1000);
        assert_eq!(full.hunks.len(), 1, "a big context gives one hunk (the expanded file)");
        assert_eq!(full.hunks[0].lines.len(), 42);
    }

    #[test]
    fn binary_files_are_summarised() {
        let d = FileDiff::compute("img.png", None, b"\x89PNG\0\0", b"\x89PNG\0\x01", 3);
        assert!(d.summary.unwrap().starts_with("Binary file"));
        assert!(d.hunks.is_empty());
    }

    #[test]
    fn crlf_lines_are_shown_without_terminators() {
        let d = FileDiff::compute("f", None, b"a\r\nb\r\n", b"a\r\nc\r\n", 3);
        assert!(d.hunks[0].lines.iter().all(|l| !l.text.contains('\r')));
    }

    #[test]
    fn diff_lines_carry_the_hidden_characters_of_their_text() {
        let old = "\u{FEFF}let role = \"user\";\nok\n";
        let new = "\u{FEFF}let role = \"user\u{202E} \u{2066}// admin\u{2069}\u{2066}\";\nok\n";
        let d = FileDiff::compute("a.js", None, old.as_bytes(), new.as_bytes(), 3);
        let lines = &d.hunks[0].lines;
        let removed = lines.iter().find(|l| l.kind == DiffLineKind::Removed).unwrap();
        assert!(removed.hidden.is_empty(), "the BOM at the start of line 1 is the file's: {:?}", removed.hidden);
        let added = lines.iter().find(|l| l.kind == DiffLineKind::Added).unwrap();
        let found: Vec<(&str, u32)> =
            added.hidden.iter().map(|f| (&added.text[f.start..f.end], f.code_point())).collect();
        assert_eq!(found, vec![("\u{202E}", 0x202E), ("\u{2066}", 0x2066), ("\u{2069}", 0x2069), ("\u{2066}", 0x2066)]);
        let (added_n, removed_n, tally) = line_counts_and_hidden(old, new);
        assert_eq!((added_n, removed_n, tally.hidden, tally.confusable), (1, 1, 4, 0), "only the added line counts");
    }

    #[test]
    fn unified_text_has_headers() {
        let u = unified("f.rs", b"a\n", b"b\n", 3);
        assert!(u.starts_with("--- a/f.rs\n+++ b/f.rs\n"), "{u}");
        assert!(u.contains("-a\n+b\n"));
    }
}
