//! Unified diffs: `git diff` output (`diff --git` sections with `new file mode`, `deleted
//! file mode`, `rename from`/`rename to`) and plain `diff -u` output (`--- a` / `+++ b`,
//! `/dev/null` for a new or deleted file). Hunk lines are read by the counts of their `@@`
//! header (so a removed line `-- x` is not taken for a header); a hunk whose counts are short
//! ends at the next header. `\ No newline at end of file` is kept per side. `a/` and `b/`
//! prefixes are taken off.

use resolve_engine::ToolError;

use super::{FilePatch, Hunk, HunkLine};

fn invalid(line: usize, message: String) -> ToolError {
    ToolError::InvalidParams(format!("`patch` line {line}: {message}"))
}

#[derive(Default)]
struct Section {
    /// First line of the section (for messages).
    line: usize,
    old: Option<String>,
    new: Option<String>,
    new_file: bool,
    deleted_file: bool,
    rename_from: Option<String>,
    rename_to: Option<String>,
    hunks: Vec<Hunk>,
}

/// A path of a `---`/`+++`/`diff --git` line: unquoted, without its timestamp; `None` for
/// `/dev/null`.
fn path_of(raw: &str, prefix: &str) -> Option<String> {
    let raw = raw.split('\t').next().unwrap_or(raw).trim_end();
    let raw = raw.strip_prefix('"').and_then(|r| r.strip_suffix('"')).unwrap_or(raw);
    if raw == "/dev/null" {
        return None;
    }
    Some(raw.strip_prefix(prefix).unwrap_or(raw).to_string())
}

/// `diff --git a/x b/x`: the two paths when they can be told apart.
fn git_header_paths(rest: &str) -> Option<(String, String)> {
    let rest = rest.trim_end();
    if let (Some(a), Some(b_at)) = (rest.strip_prefix("a/"), rest.find(" b/")) {
        let old = &a[..b_at - 2];
        let new = &rest[b_at + 3..];
        return Some((old.to_string(), new.to_string()));
    }
    let mut parts = rest.split(' ');
    match (parts.next(), parts.next(), parts.next()) {
        (Some(a), Some(b), None) => Some((a.to_string(), b.to_string())),
        _ => None,
    }
}

/// `@@ -a[,b] +c[,d] @@`: (a, b, c, d).
fn hunk_header(line: &str) -> Option<(usize, usize, usize, usize)> {
    let rest = line.strip_prefix("@@ -")?;
    let end = rest.find(" @@")?;
    let (old, new) = rest[..end].split_once(" +")?;
    let range = |s: &str| -> Option<(usize, usize)> {
        match s.split_once(',') {
            Some((a, b)) => Some((a.parse().ok()?, b.parse().ok()?)),
            None => Some((s.parse().ok()?, 1)),
        }
    };
    let (a, b) = range(old)?;
    let (c, d) = range(new)?;
    Some((a, b, c, d))
}

/// Reads a unified diff.
pub fn parse(patch: &str) -> Result<Vec<FilePatch>, ToolError> {
    let lines: Vec<&str> = patch.lines().collect();
    let mut sections: Vec<Section> = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let n = i + 1;
        let line = lines[i];
        if let Some(rest) = line.strip_prefix("diff --git ") {
            let mut s = Section { line: n, ..Section::default() };
            if let Some((a, b)) = git_header_paths(rest) {
                s.old = Some(a);
                s.new = Some(b);
            }
            sections.push(s);
            i += 1;
            continue;
        }
        if line.starts_with("--- ") && lines.get(i + 1).is_some_and(|l| l.starts_with("+++ ")) {
            // A section without `diff --git`, or the file lines of the current one.
            let opens_new = sections.last().is_none_or(|s| !s.hunks.is_empty() || s.line == 0);
            if opens_new || sections.is_empty() {
                sections.push(Section { line: n, ..Section::default() });
            }
            let s = sections.last_mut().expect("a section was just made");
            let old = path_of(&line[4..], "a/");
            let new = path_of(&lines[i + 1][4..], "b/");
            if old.is_none() {
                s.new_file = true;
            }
            if new.is_none() {
                s.deleted_file = true;
            }
            s.old = old.or(s.old.take());
            s.new = new.or(s.new.take());
            i += 2;
            continue;
        }
        if line.starts_with("@@ ") {
            let (old_start, old_count, _new_start, new_count) = hunk_header(line).ok_or_else(|| {
                invalid(n, format!("a hunk header reads `@@ -10,4 +10,5 @@`, got {}.", crate::edit::quoted(line)))
            })?;
            let Some(s) = sections.last_mut() else {
                return Err(invalid(n, "a hunk before any `--- a/path` / `+++ b/path` lines.".into()));
            };
            let mut hunk = Hunk { header: line.to_string(), old_start: Some(old_start), ..Hunk::default() };
            let (mut old_left, mut new_left) = (old_count, new_count);
            i += 1;
            while i < lines.len() {
                let l = lines[i];
                if l.starts_with('\\') {
                    match hunk.lines.last() {
                        Some(HunkLine::Remove(_)) => hunk.old_no_newline = true,
                        Some(HunkLine::Add(_)) => hunk.new_no_newline = true,
                        Some(HunkLine::Context(_)) => {
                            hunk.old_no_newline = true;
                            hunk.new_no_newline = true;
                        }
                        None => {}
                    }
                    i += 1;
                    continue;
                }
                if old_left == 0 && new_left == 0 {
                    break;
                }
                // Counts too high (a hand-written patch): the next header ends the hunk.
                if l.starts_with("@@ ") || l.starts_with("diff --git ") {
                    break;
                }
                if l.starts_with("--- ") && lines.get(i + 1).is_some_and(|n| n.starts_with("+++ ")) && old_left <= 1 {
                    break;
                }
                let hl = match l.chars().next() {
                    None => HunkLine::Context(String::new()),
                    Some(' ') => HunkLine::Context(l[1..].to_string()),
                    Some('-') => HunkLine::Remove(l[1..].to_string()),
                    Some('+') => HunkLine::Add(l[1..].to_string()),
                    Some(_) => break,
                };
                match &hl {
                    HunkLine::Context(_) => {
                        old_left = old_left.saturating_sub(1);
                        new_left = new_left.saturating_sub(1);
                    }
                    HunkLine::Remove(_) => old_left = old_left.saturating_sub(1),
                    HunkLine::Add(_) => new_left = new_left.saturating_sub(1),
                }
                hunk.lines.push(hl);
                i += 1;
            }
            if hunk.lines.is_empty() {
                return Err(invalid(n, format!("the hunk {} has no lines.", crate::edit::quoted(line))));
            }
            s.hunks.push(hunk);
            continue;
        }
        if let Some(s) = sections.last_mut().filter(|s| s.hunks.is_empty()) {
            if line.starts_with("new file mode") {
                s.new_file = true;
            } else if line.starts_with("deleted file mode") {
                s.deleted_file = true;
            } else if let Some(p) = line.strip_prefix("rename from ") {
                s.rename_from = path_of(p, "");
            } else if let Some(p) = line.strip_prefix("rename to ") {
                s.rename_to = path_of(p, "");
            } else if line.starts_with("copy from ") || line.starts_with("copy to ") {
                return Err(invalid(
                    n,
                    "a copy (`copy from`/`copy to`) is not supported; add the new file instead.".into(),
                ));
            } else if line.starts_with("Binary files ") || line.starts_with("GIT binary patch") {
                return Err(invalid(
                    n,
                    "a binary change cannot be previewed as text; the patch must change text files only.".into(),
                ));
            }
        }
        i += 1;
    }
    sections.into_iter().map(to_file_patch).collect()
}

fn to_file_patch(s: Section) -> Result<FilePatch, ToolError> {
    let where_ = s.line.max(1);
    if s.new_file {
        let path =
            s.new.or(s.rename_to).ok_or_else(|| invalid(where_, "a new file without a path (`+++ b/path`).".into()))?;
        let mut content = String::new();
        for h in &s.hunks {
            if h.lines.iter().any(|l| !matches!(l, HunkLine::Add(_))) {
                return Err(invalid(where_, format!("the new file {path} has lines that are not added (`+`).")));
            }
        }
        let added: Vec<&str> = s.hunks.iter().flat_map(|h| h.new_lines()).collect();
        for (k, l) in added.iter().enumerate() {
            content.push_str(l);
            let last = k + 1 == added.len();
            if !(last && s.hunks.last().is_some_and(|h| h.new_no_newline)) {
                content.push('\n');
            }
        }
        return Ok(FilePatch::Add { path, content });
    }
    if s.deleted_file {
        let path = s.old.ok_or_else(|| invalid(where_, "a deleted file without a path (`--- a/path`).".into()))?;
        return Ok(FilePatch::Delete { path });
    }
    let from = s.rename_from.clone().or(s.old.clone());
    let to = s.rename_to.clone().or(s.new.clone());
    match (from, to) {
        (Some(from), Some(to)) if from != to && s.rename_from.is_some() => {
            Ok(FilePatch::Update { path: from, move_to: Some(to), hunks: s.hunks })
        }
        (_, Some(to)) if !s.hunks.is_empty() => Ok(FilePatch::Update { path: to, move_to: None, hunks: s.hunks }),
        (Some(from), None) if !s.hunks.is_empty() => {
            Ok(FilePatch::Update { path: from, move_to: None, hunks: s.hunks })
        }
        (Some(p), _) | (_, Some(p)) => {
            Err(invalid(where_, format!("the section of {p} changes nothing (no hunk, no rename); leave it out.")))
        }
        (None, None) => Err(invalid(where_, "a section without file names (`--- a/path` / `+++ b/path`).".into())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_git_diff_with_new_deleted_and_renamed_files() {
        let patch = "\
diff --git a/src/a.ts b/src/a.ts
index 1111111..2222222 100644
--- a/src/a.ts
+++ b/src/a.ts
@@ -1,3 +1,3 @@
 one
--- two
+two!
 three
diff --git a/new.md b/new.md
new file mode 100644
--- /dev/null
+++ b/new.md
@@ -0,0 +1,2 @@
+hello
+world
\\ No newline at end of file
diff --git a/gone.txt b/gone.txt
deleted file mode 100644
--- a/gone.txt
+++ /dev/null
@@ -1 +0,0 @@
-bye
diff --git a/old name.txt b/new name.txt
similarity index 100%
rename from old name.txt
rename to new name.txt
";
        let files = parse(patch).unwrap();
        assert_eq!(files.len(), 4);
        let FilePatch::Update { path, hunks, .. } = &files[0] else { panic!("{files:?}") };
        assert_eq!(path, "src/a.ts");
        assert_eq!(hunks[0].old_lines(), vec!["one", "-- two", "three"], "`--- two` inside a hunk is a removed line");
        assert_eq!(files[1], FilePatch::Add { path: "new.md".into(), content: "hello\nworld".into() });
        assert_eq!(files[2], FilePatch::Delete { path: "gone.txt".into() });
        assert_eq!(
            files[3],
            FilePatch::Update { path: "old name.txt".into(), move_to: Some("new name.txt".into()), hunks: vec![] }
        );
    }

    #[test]
    fn plain_diff_u_and_bad_headers() {
        let patch = "--- notes.txt\t2026-01-01\n+++ notes.txt\t2026-01-02\n@@ -2 +2,2 @@\n-b\n+B\n+C\n";
        let files = parse(patch).unwrap();
        let FilePatch::Update { path, hunks, .. } = &files[0] else { panic!() };
        assert_eq!((path.as_str(), hunks[0].old_start), ("notes.txt", Some(2)));
        let err = parse("--- a/x\n+++ b/x\n@@ -1 +1 @ broken\n-a\n+b\n").unwrap_err().to_string();
        assert!(err.contains("line 3") && err.contains("hunk header"), "{err}");
        let err = parse("diff --git a/i.png b/i.png\nBinary files a/i.png and b/i.png differ\n--- a/x\n+++ b/x\n")
            .unwrap_err();
        assert!(err.to_string().contains("binary"), "{err}");
    }
}
