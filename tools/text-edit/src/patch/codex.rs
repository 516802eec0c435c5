//! The `*** Begin Patch` format (Codex's `apply_patch`):
//!
//! ```text
//! *** Begin Patch
//! *** Add File: docs/new.md
//! +first line
//! *** Delete File: old.txt
//! *** Update File: src/a.ts
//! *** Move to: src/b.ts
//! @@ function greet() {
//! -  return "hi";
//! +  return "hello";
//! *** End of File
//! *** End Patch
//! ```
//!
//! An update's hunks each start with `@@` (optionally followed by a line to find first; the
//! first hunk may leave `@@` out); their lines start with ` ` (context), `-` or `+`; an empty
//! line is an empty context line; `*** End of File` says the hunk ends the file. A patch
//! wrapped in a shell here-document (`<<'EOF'` … `EOF`) is read inside it.

use resolve_engine::ToolError;

use super::{FilePatch, Hunk, HunkLine};

const BEGIN: &str = "*** Begin Patch";
const END: &str = "*** End Patch";
const ADD: &str = "*** Add File: ";
const DELETE: &str = "*** Delete File: ";
const UPDATE: &str = "*** Update File: ";
const MOVE_TO: &str = "*** Move to: ";
const END_OF_FILE: &str = "*** End of File";

fn invalid(line: usize, message: String) -> ToolError {
    ToolError::InvalidParams(format!("`patch` line {line}: {message}"))
}

/// Reads a `*** Begin Patch` patch.
pub fn parse(patch: &str) -> Result<Vec<FilePatch>, ToolError> {
    let mut lines: Vec<&str> = patch.lines().collect();
    // A here-document around it (`apply_patch <<'EOF'` … `EOF`).
    while lines.first().is_some_and(|l| l.trim().is_empty()) {
        lines.remove(0);
    }
    while lines.last().is_some_and(|l| l.trim().is_empty()) {
        lines.pop();
    }
    let mut offset = 1; // 1-based number of lines[0] in the patch
    if lines.first().is_some_and(|l| l.trim_start().starts_with("<<") || l.contains("<<'EOF'") || l.contains("<<EOF"))
        && lines.last().is_some_and(|l| l.trim() == "EOF")
    {
        lines.remove(0);
        lines.pop();
        offset = 2;
    }
    if lines.first().map(|l| l.trim()) != Some(BEGIN) {
        return Err(invalid(offset, format!("a patch starts with the line `{BEGIN}`.")));
    }
    if lines.last().map(|l| l.trim()) != Some(END) {
        return Err(invalid(offset + lines.len().saturating_sub(1), format!("a patch ends with the line `{END}`.")));
    }
    let body = &lines[1..lines.len() - 1];
    let mut files = Vec::new();
    let mut i = 0;
    while i < body.len() {
        let n = offset + 1 + i; // this line's number
        let line = body[i].trim_end();
        if let Some(path) = line.trim_start().strip_prefix(ADD) {
            let path = file_name(path, n)?;
            i += 1;
            let mut content = String::new();
            while i < body.len() && !body[i].starts_with("*** ") {
                match body[i].strip_prefix('+') {
                    Some(text) => {
                        content.push_str(text);
                        content.push('\n');
                    }
                    None => {
                        return Err(invalid(
                            offset + 1 + i,
                            format!(
                                "every line of an added file starts with `+` ({path}), got {}.",
                                crate::edit::quoted(body[i])
                            ),
                        ))
                    }
                }
                i += 1;
            }
            files.push(FilePatch::Add { path, content });
        } else if let Some(path) = line.trim_start().strip_prefix(DELETE) {
            files.push(FilePatch::Delete { path: file_name(path, n)? });
            i += 1;
        } else if let Some(path) = line.trim_start().strip_prefix(UPDATE) {
            let path = file_name(path, n)?;
            i += 1;
            let mut move_to = None;
            if let Some(to) = body.get(i).and_then(|l| l.trim().strip_prefix(MOVE_TO.trim_end())) {
                move_to = Some(file_name(to, offset + 1 + i)?);
                i += 1;
            }
            let mut hunks: Vec<Hunk> = Vec::new();
            while i < body.len() {
                let l = body[i];
                let t = l.trim_end();
                if t == END_OF_FILE {
                    match hunks.last_mut() {
                        Some(h) => h.at_end = true,
                        None => {
                            return Err(invalid(offset + 1 + i, format!("`{END_OF_FILE}` before any hunk of {path}.")))
                        }
                    }
                    i += 1;
                    continue;
                }
                if t.starts_with("*** ") {
                    break;
                }
                if t == "@@" || t.starts_with("@@ ") {
                    let anchor = t.strip_prefix("@@ ").map(str::to_string).filter(|a| !a.trim().is_empty());
                    hunks.push(Hunk { header: t.to_string(), anchor, ..Hunk::default() });
                    i += 1;
                    continue;
                }
                if hunks.is_empty() {
                    // The first hunk may leave out its `@@`.
                    hunks.push(Hunk { header: "@@".into(), ..Hunk::default() });
                }
                let hunk = hunks.last_mut().expect("a hunk was just pushed");
                let line = match l.chars().next() {
                    None => HunkLine::Context(String::new()),
                    Some(' ') => HunkLine::Context(l[1..].to_string()),
                    Some('-') => HunkLine::Remove(l[1..].to_string()),
                    Some('+') => HunkLine::Add(l[1..].to_string()),
                    Some(_) => {
                        return Err(invalid(
                            offset + 1 + i,
                            format!(
                                "a line of a hunk of {path} starts with ` ` (context), `-` (removed) or `+` (added), got {}.",
                                crate::edit::quoted(l)
                            ),
                        ))
                    }
                };
                hunk.lines.push(line);
                i += 1;
            }
            if let Some(empty) = hunks.iter().position(|h| h.lines.is_empty()) {
                return Err(invalid(
                    n,
                    format!("hunk {} of {path} ({}) has no lines.", empty + 1, hunks[empty].header),
                ));
            }
            if hunks.is_empty() && move_to.is_none() {
                return Err(invalid(n, format!("`{UPDATE}{path}` has no hunk (and no `{MOVE_TO}`).")));
            }
            files.push(FilePatch::Update { path, move_to, hunks });
        } else if line.trim().is_empty() {
            i += 1;
        } else {
            return Err(invalid(
                n,
                format!("expected `{ADD}`, `{DELETE}` or `{UPDATE}` and a path, got {}.", crate::edit::quoted(line)),
            ));
        }
    }
    Ok(files)
}

fn file_name(path: &str, line: usize) -> Result<String, ToolError> {
    let p = path.trim();
    if p.is_empty() {
        return Err(invalid(line, "a file line needs a path after it.".into()));
    }
    Ok(p.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_add_delete_update_move_and_end_of_file() {
        let patch = "*** Begin Patch\n*** Add File: docs/new.md\n+# New\n+\n*** Delete File: old.txt\n*** Update File: src/a.ts\n*** Move to: src/b.ts\n@@ function greet() {\n-  return \"hi\";\n+  return \"hello\";\n\n*** End of File\n*** End Patch\n";
        let files = parse(patch).unwrap();
        assert_eq!(files[0], FilePatch::Add { path: "docs/new.md".into(), content: "# New\n\n".into() });
        assert_eq!(files[1], FilePatch::Delete { path: "old.txt".into() });
        let FilePatch::Update { path, move_to, hunks } = &files[2] else { panic!() };
        assert_eq!((path.as_str(), move_to.as_deref()), ("src/a.ts", Some("src/b.ts")));
        assert_eq!(hunks[0].anchor.as_deref(), Some("function greet() {"));
        assert_eq!(hunks[0].old_lines(), vec!["  return \"hi\";", ""]);
        assert_eq!(hunks[0].new_lines(), vec!["  return \"hello\";", ""]);
        assert!(hunks[0].at_end);
    }

    #[test]
    fn a_here_document_is_unwrapped_and_bad_lines_are_named() {
        let patch = "apply_patch <<'EOF'\n*** Begin Patch\n*** Update File: a.txt\n-x\n+y\n*** End Patch\nEOF\n";
        assert_eq!(parse(patch).unwrap().len(), 1);
        let err = parse("*** Begin Patch\n*** Update File: a.txt\n@@\n?x\n*** End Patch").unwrap_err().to_string();
        assert!(err.contains("line 4") && err.contains("`?x`"), "{err}");
        let err = parse("*** Begin Patch\n*** Update File: a.txt\n-x\n").unwrap_err().to_string();
        assert!(err.contains("ends with the line `*** End Patch`"), "{err}");
        let err = parse("*** Begin Patch\n*** Frobnicate: a\n*** End Patch").unwrap_err().to_string();
        assert!(err.contains("line 2") && err.contains("expected `*** Add File: `"), "{err}");
    }
}
