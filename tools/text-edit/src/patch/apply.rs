//! Applying a patch to the bytes a preview read: each hunk's old lines are found in the file
//! (a unified hunk at its stated line first, then the nearest place; a Codex hunk after its
//! `@@` line, in order), replaced by its new lines, and the file keeps its own line ends
//! (added lines get the file's) and its final newline or lack of one unless the patch says
//! otherwise. A hunk that is not found is refused, naming the file, the hunk and the line
//! that differs. Then [`change_set`] turns the patch into one change set.

use resolve_engine::{ChangeSet, ToolError, Workspace};

use super::{FilePatch, Format, Hunk, HunkLine};
use crate::edit::quoted;
use crate::files::{check_text, read_target};

/// One line of a file: its text without the line end, and the line end (`""` for a last
/// line without one).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Line<'a> {
    text: &'a str,
    eol: &'a str,
}

fn split_lines(text: &str) -> Vec<Line<'_>> {
    let mut out = Vec::new();
    let mut rest = text;
    while !rest.is_empty() {
        match rest.find('\n') {
            Some(i) => {
                let (line, eol) = if i > 0 && rest.as_bytes()[i - 1] == b'\r' {
                    (&rest[..i - 1], &rest[i - 1..=i])
                } else {
                    (&rest[..i], &rest[i..=i])
                };
                out.push(Line { text: line, eol });
                rest = &rest[i + 1..];
            }
            None => {
                out.push(Line { text: rest, eol: "" });
                rest = "";
            }
        }
    }
    out
}

/// The line end most of the file's lines have (`\n` when none has one).
fn usual_eol(lines: &[Line<'_>]) -> &'static str {
    let crlf = lines.iter().filter(|l| l.eol == "\r\n").count();
    let lf = lines.iter().filter(|l| l.eol == "\n").count();
    if crlf > lf {
        "\r\n"
    } else {
        "\n"
    }
}

/// How strictly a hunk line must match a file line (tried in this order).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Pass {
    Exact,
    TrimEnd,
    Trim,
    Punctuation,
}

fn normalise_punctuation(s: &str) -> String {
    s.trim()
        .chars()
        .map(|c| match c {
            '\u{2010}' | '\u{2011}' | '\u{2012}' | '\u{2013}' | '\u{2014}' | '\u{2015}' | '\u{2212}' => '-',
            '\u{2018}' | '\u{2019}' | '\u{201A}' | '\u{201B}' => '\'',
            '\u{201C}' | '\u{201D}' | '\u{201E}' | '\u{201F}' => '"',
            '\u{00A0}' | '\u{2002}' | '\u{2003}' | '\u{2004}' | '\u{2005}' | '\u{2006}' | '\u{2007}' | '\u{2008}'
            | '\u{2009}' | '\u{200A}' | '\u{202F}' | '\u{205F}' | '\u{3000}' => ' ',
            other => other,
        })
        .collect()
}

fn same(file: &str, patch: &str, pass: Pass) -> bool {
    let file = file.strip_suffix('\r').unwrap_or(file);
    let patch = patch.strip_suffix('\r').unwrap_or(patch);
    match pass {
        Pass::Exact => file == patch,
        Pass::TrimEnd => file.trim_end() == patch.trim_end(),
        Pass::Trim => file.trim() == patch.trim(),
        Pass::Punctuation => normalise_punctuation(file) == normalise_punctuation(patch),
    }
}

fn matches_at(lines: &[Line<'_>], at: usize, want: &[&str], pass: Pass) -> bool {
    at + want.len() <= lines.len() && want.iter().enumerate().all(|(k, w)| same(lines[at + k].text, w, pass))
}

/// Where `want` starts in `lines` at or after `from`: the positions in `order`, each tried
/// with every pass from the strictest.
fn find(lines: &[Line<'_>], want: &[&str], order: &[usize], passes: &[Pass]) -> Option<usize> {
    for &pass in passes {
        if let Some(&at) = order.iter().find(|&&at| matches_at(lines, at, want, pass)) {
            return Some(at);
        }
    }
    None
}

/// The text of `rel` after `hunks` (of a patch in `format`), or the first hunk that does not
/// match, named.
pub fn apply_hunks(rel: &str, text: &str, hunks: &[Hunk], format: Format) -> Result<String, ToolError> {
    let lines = split_lines(text);
    let eol = usual_eol(&lines);
    let ended_without_newline = lines.last().is_some_and(|l| l.eol.is_empty());
    let mut out = String::with_capacity(text.len() + 256);
    let mut cursor = 0usize;
    let mut touched_end = false;
    let mut final_newline: Option<bool> = None;
    for (k, hunk) in hunks.iter().enumerate() {
        let name = format!("hunk {} of {rel} ({})", k + 1, hunk.header);
        let mut from = cursor;
        if let Some(anchor) = &hunk.anchor {
            let order: Vec<usize> = (from..lines.len()).collect();
            let at =
                find(&lines, &[anchor.as_str()], &order, &[Pass::Exact, Pass::TrimEnd, Pass::Trim, Pass::Punctuation])
                    .ok_or_else(|| {
                        ToolError::InvalidParams(format!(
                        "{name} does not match the file: its `@@` line {} is not in {rel}{}. Read the file again and \
                         send a patch against what it holds now.",
                        quoted(anchor),
                        if from > 0 { format!(" after line {from}") } else { String::new() }
                    ))
                    })?;
            from = at + 1;
        }
        let mut old: Vec<&str> = hunk.old_lines();
        let at = if old.is_empty() {
            match (format, hunk.old_start) {
                (Format::Unified, Some(start)) => start.min(lines.len()).max(from),
                _ => lines.len(),
            }
        } else {
            let passes: &[Pass] = match format {
                Format::Unified => &[Pass::Exact, Pass::TrimEnd],
                Format::Codex => &[Pass::Exact, Pass::TrimEnd, Pass::Trim, Pass::Punctuation],
            };
            let mut order: Vec<usize> = Vec::new();
            let last = lines.len().saturating_sub(old.len());
            if hunk.at_end && last >= from {
                order.push(last);
            }
            match (format, hunk.old_start) {
                (Format::Unified, Some(start)) => {
                    // The stated line first, then outwards from it.
                    let expected = start.saturating_sub(1).clamp(from, last.max(from));
                    order.push(expected);
                    for d in 1..=lines.len() {
                        if expected + d <= last {
                            order.push(expected + d);
                        }
                        if expected >= from + d {
                            order.push(expected - d);
                        }
                    }
                }
                _ => order.extend(from..=last),
            }
            let mut found = find(&lines, &old, &order, passes);
            // A trailing empty context line the file does not have (a patch ends with a blank line).
            if found.is_none() && old.len() > 1 && old.last() == Some(&"") {
                old.pop();
                found = find(&lines, &old, &order, passes);
            }
            found.ok_or_else(|| mismatch(&name, rel, &lines, &old, hunk, from))?
        };
        out.extend(lines[cursor..at].iter().map(|l| format!("{}{}", l.text, l.eol)));
        // The hunk's lines: context kept as the file has it, removed dropped, added written.
        let mut file_at = at;
        let mut consumed = 0;
        for l in &hunk.lines {
            match l {
                HunkLine::Context(_) if consumed < old.len() => {
                    let f = lines[file_at];
                    out.push_str(f.text);
                    out.push_str(if f.eol.is_empty() { eol } else { f.eol });
                    file_at += 1;
                    consumed += 1;
                }
                HunkLine::Remove(_) if consumed < old.len() => {
                    file_at += 1;
                    consumed += 1;
                }
                HunkLine::Add(s) => {
                    out.push_str(s);
                    out.push_str(eol);
                }
                _ => {}
            }
        }
        cursor = file_at;
        if cursor >= lines.len() {
            touched_end = true;
            if hunk.new_no_newline {
                final_newline = Some(false);
            } else if hunk.old_no_newline {
                final_newline = Some(true);
            }
        }
    }
    out.extend(lines[cursor..].iter().map(|l| format!("{}{}", l.text, l.eol)));
    // The file's final newline (or its lack) stays unless the patch changed it.
    let wants_newline = final_newline.filter(|_| touched_end).unwrap_or(!ended_without_newline || lines.is_empty());
    if !wants_newline {
        if out.ends_with("\r\n") {
            out.truncate(out.len() - 2);
        } else if out.ends_with('\n') {
            out.pop();
        }
    } else if !out.is_empty() && !out.ends_with('\n') {
        out.push_str(eol);
    }
    Ok(out)
}

/// Why a hunk does not match: for a unified hunk, the first line that differs at its stated
/// place; otherwise its first old line and where it was looked for.
fn mismatch(name: &str, rel: &str, lines: &[Line<'_>], old: &[&str], hunk: &Hunk, from: usize) -> ToolError {
    let hint = match hunk.old_start {
        Some(start) if start >= 1 => {
            let base = start - 1;
            old.iter()
                .enumerate()
                .find(|(k, w)| lines.get(base + k).is_none_or(|l| !same(l.text, w, Pass::TrimEnd)))
                .map(|(k, w)| match lines.get(base + k) {
                    Some(l) => {
                        format!(" Line {} should be {} but the file has {}.", base + k + 1, quoted(w), quoted(l.text))
                    }
                    None => format!(
                        " Line {} should be {} but the file has only {} lines.",
                        base + k + 1,
                        quoted(w),
                        lines.len()
                    ),
                })
                .unwrap_or_default()
        }
        _ => format!(
            " Its lines starting with {} were not found{}.",
            quoted(old.first().copied().unwrap_or_default()),
            if from > 0 { format!(" after line {from}") } else { String::new() }
        ),
    };
    ToolError::InvalidParams(format!(
        "{name} does not match the file:{hint} Read {rel} again and send a patch against what it holds now."
    ))
}

/// One file's line in a patch's preview: its path and what happens to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Planned {
    pub path: String,
    /// `modified`, `added`, `deleted`, `renamed` (from `from`).
    pub change: &'static str,
    pub from: Option<String>,
}

/// The change set a patch proposes against the folder now: every file read within the
/// bounds of [`read_target`], every hunk found, nothing written.
pub fn change_set(
    ws: &Workspace,
    tool: &str,
    files: &[FilePatch],
    format: Format,
) -> Result<(ChangeSet, Vec<Planned>), ToolError> {
    let mut cs = ChangeSet::new();
    let mut planned = Vec::new();
    let invalid = ToolError::InvalidParams;
    for f in files {
        match f {
            FilePatch::Add { path, content } => {
                let now = read_target(ws, tool, path)?;
                if now.bytes.is_some() {
                    return Err(invalid(format!(
                        "The patch adds {} but it exists already; change it with an update (`*** Update File: {}` or a hunk), or delete it first.",
                        now.rel, now.rel
                    )));
                }
                check_text(&now.rel, content.as_bytes(), "would hold")?;
                cs.create(now.rel.clone(), content.as_bytes().to_vec());
                planned.push(Planned { path: now.rel, change: "added", from: None });
            }
            FilePatch::Delete { path } => {
                let now = read_target(ws, tool, path)?;
                let Some(bytes) = now.bytes else {
                    return Err(ToolError::NotFound(format!(
                        "{} (the patch deletes it, but it does not exist)",
                        now.rel
                    )));
                };
                cs.delete(now.rel.clone(), bytes);
                planned.push(Planned { path: now.rel, change: "deleted", from: None });
            }
            FilePatch::Update { path, move_to, hunks } => {
                let now = read_target(ws, tool, path)?;
                let Some(bytes) = now.bytes else {
                    return Err(ToolError::NotFound(format!(
                        "{} (the patch changes it, but it does not exist; add it as a new file instead)",
                        now.rel
                    )));
                };
                let text =
                    std::str::from_utf8(&bytes).map_err(|_| invalid(format!("{} is not UTF-8 text.", now.rel)))?;
                let after =
                    if hunks.is_empty() { text.to_string() } else { apply_hunks(&now.rel, text, hunks, format)? };
                check_text(&now.rel, after.as_bytes(), "would hold")?;
                match move_to {
                    Some(to) => {
                        let target = read_target(ws, tool, to)?;
                        if target.bytes.is_some() {
                            return Err(invalid(format!(
                                "The patch moves {} to {}, which exists already; choose another name, or delete it first.",
                                now.rel, target.rel
                            )));
                        }
                        if after.as_bytes() == &bytes[..] {
                            let hash = resolve_engine::ContentHash::of(&bytes);
                            cs.rename(now.rel.clone(), target.rel.clone(), resolve_engine::EntryKind::File, hash);
                        } else {
                            cs.delete(now.rel.clone(), bytes.clone());
                            cs.create(target.rel.clone(), after.into_bytes());
                        }
                        planned.push(Planned { path: target.rel, change: "renamed", from: Some(now.rel) });
                    }
                    None => {
                        if after.as_bytes() == &bytes[..] {
                            return Err(invalid(format!(
                                "The patch's hunks change nothing in {} (their removed and added lines are the same).",
                                now.rel
                            )));
                        }
                        cs.edit(now.rel.clone(), bytes.clone(), after.into_bytes());
                        planned.push(Planned { path: now.rel, change: "modified", from: None });
                    }
                }
            }
        }
    }
    Ok((cs, planned))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::patch::{codex, unified};

    fn update(patch: &str) -> Vec<Hunk> {
        match crate::patch::parse(patch).unwrap().remove(0) {
            FilePatch::Update { hunks, .. } => hunks,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn unified_hunks_apply_at_their_line_or_nearby_and_keep_crlf() {
        let text = "a\r\nb\r\nc\r\nd\r\n";
        let hunks = update("--- a/f\n+++ b/f\n@@ -2,2 +2,3 @@\n b\n-c\n+C\n+C2\n");
        assert_eq!(apply_hunks("f", text, &hunks, Format::Unified).unwrap(), "a\r\nb\r\nC\r\nC2\r\nd\r\n");
        // The same hunk, stated two lines off (a hand-written patch): found nearby.
        let hunks = update("--- a/f\n+++ b/f\n@@ -4,2 +4,2 @@\n b\n-c\n+C\n");
        assert_eq!(apply_hunks("f", text, &hunks, Format::Unified).unwrap(), "a\r\nb\r\nC\r\nd\r\n");
    }

    #[test]
    fn final_newlines_follow_the_file_or_the_patch() {
        let hunks = update("--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n x\n-y\n\\ No newline at end of file\n+z\n\\ No newline at end of file\n");
        assert_eq!(apply_hunks("f", "x\ny", &hunks, Format::Unified).unwrap(), "x\nz");
        let add_newline = update("--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n x\n-y\n\\ No newline at end of file\n+z\n");
        assert_eq!(apply_hunks("f", "x\ny", &add_newline, Format::Unified).unwrap(), "x\nz\n");
        let codex_hunks = update("*** Begin Patch\n*** Update File: f\n@@\n x\n-y\n+z\n*** End Patch");
        assert_eq!(
            apply_hunks("f", "x\ny", &codex_hunks, Format::Codex).unwrap(),
            "x\nz",
            "kept without a final newline"
        );
        assert_eq!(apply_hunks("f", "x\ny\n", &codex_hunks, Format::Codex).unwrap(), "x\nz\n");
    }

    #[test]
    fn codex_hunks_follow_their_anchor_and_forgive_spaces_and_punctuation() {
        let text = "fn a() {\n    x();\n}\nfn b() {\n    x();\n}\n";
        let hunks = update("*** Begin Patch\n*** Update File: f.rs\n@@ fn b() {\n-  x();\n+    y();\n*** End Patch");
        assert_eq!(
            apply_hunks("f.rs", text, &hunks, Format::Codex).unwrap(),
            "fn a() {\n    x();\n}\nfn b() {\n    y();\n}\n",
            "the second x(), after the anchor, matched ignoring indentation"
        );
        let hunks = update("*** Begin Patch\n*** Update File: q.txt\n@@\n-say \"hi\" — now\n+say hello\n*** End Patch");
        assert_eq!(
            apply_hunks("q.txt", "say \u{201C}hi\u{201D} \u{2014} now\n", &hunks, Format::Codex).unwrap(),
            "say hello\n"
        );
        let _ = codex::parse; // the parser is exercised by `update`
        let _ = unified::parse;
    }

    #[test]
    fn a_hunk_that_does_not_match_names_the_file_hunk_and_line() {
        let hunks = update("--- a/src/x.ts\n+++ b/src/x.ts\n@@ -1,2 +1,2 @@\n one\n-two\n+2\n");
        let err = apply_hunks("src/x.ts", "one\nTWO\n", &hunks, Format::Unified).unwrap_err().to_string();
        assert!(err.contains("hunk 1 of src/x.ts (@@ -1,2 +1,2 @@)"), "{err}");
        assert!(err.contains("Line 2 should be `two` but the file has `TWO`"), "{err}");
        let hunks = update("*** Begin Patch\n*** Update File: a\n@@ nowhere\n-x\n+y\n*** End Patch");
        let err = apply_hunks("a", "x\n", &hunks, Format::Codex).unwrap_err().to_string();
        assert!(err.contains("its `@@` line `nowhere` is not in a"), "{err}");
    }
}
