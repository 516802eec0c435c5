//! `oldText` → `newText` replacements, applied one after the other to the text as the
//! previous ones left it (the official filesystem server's `edit_file` rules): each `oldText`
//! must occur exactly once (every occurrence is replaced with `replaceAll`). A file with CRLF
//! line ends also matches an `oldText` written with LF, and its `newText` then gets CRLF too,
//! so the file keeps its line ends.

use resolve_engine::ToolError;

/// One replacement an `edit_file` call asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextEdit {
    pub old: String,
    pub new: String,
}

/// How long a quoted `oldText` may be in a message (characters).
const QUOTED_CHARS: usize = 160;

/// `text` shortened for a message, in backticks, on one line.
pub fn quoted(text: &str) -> String {
    let one_line = text.replace('\r', "\\r").replace('\n', "\\n");
    match one_line.char_indices().nth(QUOTED_CHARS) {
        Some((cut, _)) => format!("`{}…`", &one_line[..cut]),
        None => format!("`{one_line}`"),
    }
}

/// `text` after every edit, or the first edit that cannot be made, named (its index, the
/// file, the quoted text, the nearest line when one is close, how many times it occurs).
pub fn apply_edits(rel: &str, text: &str, edits: &[TextEdit], replace_all: bool) -> Result<String, ToolError> {
    let mut now = text.to_string();
    for (i, edit) in edits.iter().enumerate() {
        let at = if edits.len() > 1 { format!("`edits[{i}]`") } else { "The edit".to_string() };
        let after_earlier = if i > 0 { " (after the earlier edits)" } else { "" };
        if edit.old.is_empty() {
            return Err(ToolError::InvalidParams(format!(
                "{at} has an empty `oldText`; name the exact text to replace in {rel}, or use write_file to write the whole file."
            )));
        }
        if edit.old == edit.new {
            return Err(ToolError::InvalidParams(format!(
                "{at} changes nothing in {rel}: its `oldText` and `newText` are the same."
            )));
        }
        let (old, new) = match now.matches(edit.old.as_str()).count() {
            0 => match crlf_variant(&now, edit) {
                Some(pair) => pair,
                None => {
                    return Err(ToolError::InvalidParams(format!(
                        "{at}: `oldText` {} was not found in {rel}{after_earlier}.{} Copy the text exactly as the file has it \
                         (spaces, tabs and line ends count), or read the file again.",
                        quoted(&edit.old),
                        nearest_line(&now, &edit.old).map(|n| format!(" {n}")).unwrap_or_default()
                    )))
                }
            },
            _ => (edit.old.clone(), edit.new.clone()),
        };
        let count = now.matches(old.as_str()).count();
        if count > 1 && !replace_all {
            return Err(ToolError::InvalidParams(format!(
                "{at}: `oldText` {} occurs {count} times in {rel}{after_earlier}; include more of the surrounding text so it \
                 occurs once, or set `replaceAll` to replace all {count}.",
                quoted(&edit.old)
            )));
        }
        now = if replace_all { now.replace(old.as_str(), &new) } else { now.replacen(old.as_str(), &new, 1) };
    }
    Ok(now)
}

/// In a file with CRLF line ends, an `oldText` written with LF: the CRLF forms of both
/// texts, when that one occurs.
fn crlf_variant(text: &str, edit: &TextEdit) -> Option<(String, String)> {
    if !text.contains("\r\n") || !edit.old.contains('\n') || edit.old.contains("\r\n") {
        return None;
    }
    let to_crlf = |s: &str| s.replace("\r\n", "\n").replace('\n', "\r\n");
    let old = to_crlf(&edit.old);
    text.contains(old.as_str()).then(|| (old, to_crlf(&edit.new)))
}

/// "The closest line is line 12: `…`" for the first non-blank line of `old`, when a line of
/// `text` is close to it (the same but for spaces, or mostly the same characters).
pub fn nearest_line(text: &str, old: &str) -> Option<String> {
    let wanted = old.lines().map(str::trim).find(|l| !l.is_empty())?;
    let squeeze = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    let wanted_squeezed = squeeze(wanted);
    let mut best: Option<(f32, usize, &str)> = None;
    for (i, line) in text.lines().enumerate() {
        let trimmed = line.trim();
        if trimmed.is_empty() {
            continue;
        }
        if squeeze(trimmed) == wanted_squeezed {
            return Some(format!(
                "Line {} is the same but for spaces or indentation: {}.",
                i + 1,
                quoted(line.trim_end_matches('\r'))
            ));
        }
        let (a, b) = (trimmed.len(), wanted.len());
        if a * 2 < b || b * 2 < a {
            continue;
        }
        let ratio = similar::TextDiff::from_chars(trimmed, wanted).ratio();
        if ratio >= 0.6 && best.is_none_or(|(r, _, _)| ratio > r) {
            best = Some((ratio, i + 1, line));
        }
    }
    best.map(|(_, n, line)| format!("The closest line is line {n}: {}.", quoted(line.trim_end_matches('\r'))))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn e(old: &str, new: &str) -> TextEdit {
        TextEdit { old: old.into(), new: new.into() }
    }

    #[test]
    fn edits_apply_in_order_and_crlf_files_keep_their_line_ends() {
        let text = "let a = 1;\nlet b = 2;\n";
        let out =
            apply_edits("a.js", text, &[e("a = 1", "a = 10"), e("a = 10;\nlet b", "a = 10;\nconst b")], false).unwrap();
        assert_eq!(out, "let a = 10;\nconst b = 2;\n");
        let crlf = "one\r\ntwo\r\nthree\r\n";
        assert_eq!(apply_edits("c.txt", crlf, &[e("one\ntwo", "uno\ndos")], false).unwrap(), "uno\r\ndos\r\nthree\r\n");
        assert_eq!(apply_edits("u.txt", "naïve café\n", &[e("café", "Café ☕")], false).unwrap(), "naïve Café ☕\n");
    }

    #[test]
    fn missing_and_repeated_text_are_named_with_what_to_do() {
        let text = "fn main() {\n    println!(\"hi\");\n}\nx x\n";
        let err = apply_edits("src/main.rs", text, &[e("println!(\"hello\");", "y")], false).unwrap_err().to_string();
        assert!(err.contains("`println!(\"hello\");` was not found in src/main.rs"), "{err}");
        assert!(err.contains("The closest line is line 2"), "{err}");
        let err = apply_edits("src/main.rs", text, &[e("fn  main() {", "y")], false).unwrap_err().to_string();
        assert!(err.contains("Line 1 is the same but for spaces"), "{err}");
        let err = apply_edits("src/main.rs", text, &[e("x", "y")], false).unwrap_err().to_string();
        assert!(err.contains("occurs 2 times in src/main.rs"), "{err}");
        assert_eq!(apply_edits("src/main.rs", text, &[e("x", "y")], true).unwrap().lines().last(), Some("y y"));
        let err = apply_edits("a", "ab", &[e("a", "A"), e("a", "b")], false).unwrap_err().to_string();
        assert!(err.starts_with("`edits[1]`") && err.contains("after the earlier edits"), "{err}");
        assert!(apply_edits("a", "ab", &[e("", "x")], false).unwrap_err().to_string().contains("empty `oldText`"));
        assert!(apply_edits("a", "ab", &[e("a", "a")], false).unwrap_err().to_string().contains("changes nothing"));
    }
}
