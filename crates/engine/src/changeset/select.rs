//! Partial apply: the part of a change set a person (or an agent) keeps.
//!
//! A [`LeaveOut`] names the files to leave out (workspace-relative, as the action's file list
//! shows them) and, for an edit that knows its [`Replacements`] (an `ast_edit` preview), single
//! replacements to leave out by their id. [`ChangeSet::select`] narrows the change set to the
//! rest: the kept changes are the same entries, pinned to the same previewed hashes, and an
//! edit with replacements left out is rebuilt from the bytes the preview read plus the kept
//! replacements. The narrowed change set is applied by the ordinary [`ChangeSet::apply`], so a
//! partial apply has every guarantee of a full one; a left-out file is not part of it, so it is
//! neither verified nor touched (a left-out file edited since the preview does not stop the
//! rest). [`PartialApply`] says what was left out, for the result text and the history.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::{Change, ChangeSet};

/// What to leave out of an apply (one definition with the window's protocol).
pub use resolve_protocol::LeaveOut;

/// The single replacements of one edited file, in position order (ids `1..=len`).
///
/// Byte ranges are in the edit's `before` (the bytes the preview read, BOM included); the
/// replacement texts are kept back to back in one buffer (one allocation per file, not one
/// per match).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Replacements {
    spans: Vec<Span>,
    inserts: Vec<u8>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Span {
    line: u32,
    start: usize,
    end: usize,
    insert: std::ops::Range<usize>,
}

/// One replacement of a file, as [`Replacements::get`] gives it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Replacement<'a> {
    /// Stable within the file: 1-based, in position order.
    pub id: u32,
    /// 1-based line of the match start in the old content.
    pub line: u32,
    /// The replaced bytes' range in the old content.
    pub start: usize,
    pub end: usize,
    /// The bytes written instead.
    pub text: &'a [u8],
}

impl Replacements {
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds the next replacement (its id is the new length): `start..end` of the old content
    /// (after the previous one's end) becomes `text`; `line` is 1-based.
    pub fn push(&mut self, line: u32, start: usize, end: usize, text: &[u8]) {
        let at = self.inserts.len();
        self.inserts.extend_from_slice(text);
        self.spans.push(Span { line, start, end, insert: at..self.inserts.len() });
    }

    pub fn len(&self) -> usize {
        self.spans.len()
    }

    pub fn is_empty(&self) -> bool {
        self.spans.is_empty()
    }

    /// The replacement with this id (1-based).
    pub fn get(&self, id: u32) -> Option<Replacement<'_>> {
        let s = self.spans.get((id as usize).checked_sub(1)?)?;
        Some(Replacement { id, line: s.line, start: s.start, end: s.end, text: &self.inserts[s.insert.clone()] })
    }

    pub fn iter(&self) -> impl Iterator<Item = Replacement<'_>> + '_ {
        (1..=self.spans.len() as u32).filter_map(|id| self.get(id))
    }

    /// A compact binary form (for keeping pending actions across restarts): the count, then
    /// per replacement its line, start, end and text, little-endian.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(8 + self.spans.len() * 28 + self.inserts.len());
        out.extend_from_slice(&(self.spans.len() as u64).to_le_bytes());
        for r in self.iter() {
            out.extend_from_slice(&r.line.to_le_bytes());
            out.extend_from_slice(&(r.start as u64).to_le_bytes());
            out.extend_from_slice(&(r.end as u64).to_le_bytes());
            out.extend_from_slice(&(r.text.len() as u64).to_le_bytes());
            out.extend_from_slice(r.text);
        }
        out
    }

    /// Reads [`to_bytes`](Self::to_bytes); `None` for anything else (truncated, trailing bytes).
    pub fn from_bytes(data: &[u8]) -> Option<Self> {
        let mut at = 0usize;
        let mut take = |n: usize| -> Option<&[u8]> {
            let end = at.checked_add(n).filter(|&e| e <= data.len())?;
            let s = &data[at..end];
            at = end;
            Some(s)
        };
        let u64_at = |b: &[u8]| u64::from_le_bytes(b.try_into().unwrap_or([0; 8]));
        let count = usize::try_from(u64_at(take(8)?)).ok()?;
        let mut out = Replacements::new();
        for _ in 0..count {
            let line = u32::from_le_bytes(take(4)?.try_into().ok()?);
            let start = usize::try_from(u64_at(take(8)?)).ok()?;
            let end = usize::try_from(u64_at(take(8)?)).ok()?;
            let len = usize::try_from(u64_at(take(8)?)).ok()?;
            let text = take(len)?;
            out.push(line, start, end, text);
        }
        (at == data.len()).then_some(out)
    }

    /// `before` with the replacements `keep` says yes to; `None` when a range does not fit
    /// `before` (out of bounds or out of order).
    pub fn rebuild(&self, before: &[u8], keep: impl Fn(u32) -> bool) -> Option<Vec<u8>> {
        let mut out = Vec::with_capacity(before.len() + 64);
        let mut at = 0;
        for r in self.iter() {
            if r.start < at || r.end < r.start || r.end > before.len() {
                return None;
            }
            if keep(r.id) {
                out.extend_from_slice(&before[at..r.start]);
                out.extend_from_slice(r.text);
                at = r.end;
            }
        }
        out.extend_from_slice(&before[at..]);
        Some(out)
    }
}

/// The hunks of a text edit: each run of changed lines of the line diff `before` → `after`
/// (the same diff the window shows, without context), as [`Replacements`] of `before`: ids
/// `1..`, in position order, each with its 1-based old line. Rebuilding `before` with every
/// hunk gives `after` exactly; with some of them, the file with only those changes. `None`
/// for a binary or very large side (no line diff), or when nothing differs.
pub fn hunks_of(before: &[u8], after: &[u8]) -> Option<Replacements> {
    use similar::{DiffTag, TextDiff};
    if crate::diff::is_binary(before) || crate::diff::is_binary(after) {
        return None;
    }
    if before.len() > crate::diff::MAX_DIFF_BYTES || after.len() > crate::diff::MAX_DIFF_BYTES || before == after {
        return None;
    }
    let (old, new) = (std::str::from_utf8(before).ok()?, std::str::from_utf8(after).ok()?);
    let diff = TextDiff::from_lines(old, new);
    // Byte offset of the start of each old line (and of the end).
    let mut starts = Vec::with_capacity(diff.old_slices().len() + 1);
    let mut at = 0usize;
    starts.push(0);
    for line in diff.old_slices() {
        at += line.len();
        starts.push(at);
    }
    let new_lines = diff.new_slices();
    let mut out = Replacements::new();
    let mut text = String::new();
    let mut group: Option<(usize, usize, usize, usize)> = None; // old start, old end, new start, new end
    let flush = |g: (usize, usize, usize, usize), out: &mut Replacements, text: &mut String| {
        text.clear();
        for line in &new_lines[g.2..g.3] {
            text.push_str(line);
        }
        out.push(g.0 as u32 + 1, starts[g.0], starts[g.1], text.as_bytes());
    };
    for op in diff.ops() {
        let (o, n) = (op.old_range(), op.new_range());
        match op.tag() {
            DiffTag::Equal => {
                if let Some(g) = group.take() {
                    flush(g, &mut out, &mut text);
                }
            }
            _ => {
                group = Some(match group {
                    Some((os, _, ns, _)) => (os, o.end, ns, n.end),
                    None => (o.start, o.end, n.start, n.end),
                });
            }
        }
    }
    if let Some(g) = group.take() {
        flush(g, &mut out, &mut text);
    }
    (!out.is_empty()).then_some(out)
}

/// Single replacements left out of one file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LeftOutReplacements {
    pub path: String,
    /// The ids left out, ascending.
    pub ids: Vec<u32>,
    /// The file's replacements in the preview.
    pub of: usize,
}

/// What a partial apply applied and left out (recorded with the decision; the rest is
/// discarded in the same decision).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PartialApply {
    pub files_total: usize,
    /// Files written (wholly or in part).
    pub files_applied: usize,
    /// Whole files left out, in change order.
    pub left_out_files: Vec<String>,
    /// Files written in part, in change order.
    pub left_out_replacements: Vec<LeftOutReplacements>,
    /// Replacements over the whole action and those written, when every edit knew its
    /// replacements.
    pub replacements: Option<(usize, usize)>,
    /// Files written in part by hunk, in change order (`ids` are the hunks left out).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub left_out_hunks: Vec<LeftOutHunks>,
}

/// Hunks left out of one file, and those applied.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LeftOutHunks {
    pub path: String,
    /// The hunks left out: id and 1-based old line, ascending.
    pub left_out: Vec<(u32, u32)>,
    /// The hunks applied: id and 1-based old line, ascending.
    pub applied: Vec<(u32, u32)>,
}

impl LeftOutHunks {
    /// `Left out 2 of 3 hunks in src/x.ts: hunk 2 (line 12), hunk 3 (line 40); applied hunk 1 (line 3)`.
    pub fn line(&self) -> String {
        let list = |hs: &[(u32, u32)]| {
            let mut parts: Vec<String> =
                hs.iter().take(LISTED).map(|(id, line)| format!("hunk {id} (line {line})")).collect();
            if hs.len() > LISTED {
                parts.push(format!("and {} more", grouped(hs.len() - LISTED)));
            }
            parts.join(", ")
        };
        format!(
            "Left out {} of {} in {}: {}; applied {}",
            grouped(self.left_out.len()),
            count(self.left_out.len() + self.applied.len(), "hunk", "hunks"),
            self.path,
            list(&self.left_out),
            list(&self.applied)
        )
    }
}

/// How many names a result line lists before `and N more`.
const LISTED: usize = 20;

impl PartialApply {
    /// The lines after `Applied: <label>.` in the result: `Left out 2 of 40 files: a.ts, b.ts`
    /// and one `Left out 3 of 5,000 replacements in src/x.ts` per file written in part.
    pub fn left_out_lines(&self) -> Vec<String> {
        let mut lines = Vec::new();
        if !self.left_out_files.is_empty() {
            let mut names: Vec<&str> = self.left_out_files.iter().take(LISTED).map(String::as_str).collect();
            let more = self.left_out_files.len().saturating_sub(LISTED);
            let more_text = format!("and {} more", grouped(more));
            if more > 0 {
                names.push(&more_text);
            }
            lines.push(format!(
                "Left out {} of {}: {}",
                grouped(self.left_out_files.len()),
                count(self.files_total, "file", "files"),
                names.join(", ")
            ));
        }
        for l in self.left_out_replacements.iter().take(LISTED) {
            lines.push(format!(
                "Left out {} of {} in {}",
                grouped(l.ids.len()),
                count(l.of, "replacement", "replacements"),
                l.path
            ));
        }
        let more = self.left_out_replacements.len().saturating_sub(LISTED);
        if more > 0 {
            lines.push(format!("Left out single replacements in {} more", count(more, "file", "files")));
        }
        for h in self.left_out_hunks.iter().take(LISTED) {
            lines.push(h.line());
        }
        let more = self.left_out_hunks.len().saturating_sub(LISTED);
        if more > 0 {
            lines.push(format!("Left out hunks in {} more", count(more, "file", "files")));
        }
        lines
    }

    /// The history's words: `applied 38 of 40 files`, or, when single replacements were left
    /// out, `applied 4,997 of 5,000 replacements` (`… in 38 of 40 files` if whole files were too).
    pub fn history_text(&self) -> String {
        let files = format!("{} of {}", grouped(self.files_applied), count(self.files_total, "file", "files"));
        let base = match self.replacements {
            Some((total, applied)) if !self.left_out_replacements.is_empty() => {
                let reps = format!("{} of {}", grouped(applied), count(total, "replacement", "replacements"));
                if self.left_out_files.is_empty() {
                    format!("applied {reps}")
                } else {
                    format!("applied {reps} in {files}")
                }
            }
            _ => format!("applied {files}"),
        };
        match self.left_out_hunks.as_slice() {
            [] => base,
            [one] => format!(
                "{base}, leaving out {} of {} in {}",
                grouped(one.left_out.len()),
                count(one.left_out.len() + one.applied.len(), "hunk", "hunks"),
                one.path
            ),
            many => format!("{base}, leaving out hunks in {}", count(many.len(), "file", "files")),
        }
    }
}

/// `5,000`.
pub fn grouped(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// `1 file`, `5,000 files`.
fn count(n: usize, one: &str, many: &str) -> String {
    format!("{} {}", grouped(n), if n == 1 { one } else { many })
}

/// One replacement as a person reads it (the UI's replacement list).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplacementRow {
    pub id: u32,
    pub line: u32,
    /// The replaced text, shortened to a few hundred characters (ending with `…`).
    pub old: String,
    /// The text written instead, shortened the same way.
    pub new: String,
}

/// Characters of a replacement's old or new text shown in a row.
const SNIPPET_CHARS: usize = 200;

fn snippet(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    match text.char_indices().nth(SNIPPET_CHARS) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.into_owned(),
    }
}

fn rows_of(before: &[u8], reps: &Replacements) -> Vec<ReplacementRow> {
    reps.iter()
        .map(|r| ReplacementRow {
            id: r.id,
            line: r.line,
            old: snippet(before.get(r.start..r.end).unwrap_or_default()),
            new: snippet(r.text),
        })
        .collect()
}

/// A path as given, or without a leading `./`.
pub(crate) fn normalise(path: &str) -> &str {
    path.strip_prefix("./").unwrap_or(path)
}

impl ChangeSet {
    /// Attaches the single replacements of the edit of `path` (see [`Replacements`]). Kept
    /// only if rebuilding the edit's old content with every replacement gives exactly its new
    /// content; otherwise nothing is attached and `false` is returned (the file can then be
    /// left out whole, never in part).
    pub fn set_replacements(&mut self, path: &str, replacements: Replacements) -> bool {
        let Some(Change::Edit { before, after, .. }) = self.changes.iter().find(|c| c.path() == path) else {
            return false;
        };
        match replacements.rebuild(before, |_| true) {
            Some(rebuilt) if rebuilt[..] == after[..] && !replacements.is_empty() => {
                self.replacements.insert(path.to_string(), Arc::new(replacements));
                true
            }
            _ => false,
        }
    }

    /// The single replacements of `path`'s edit, when its tool gave them.
    pub fn replacements(&self, path: &str) -> Option<&Arc<Replacements>> {
        self.replacements.get(path)
    }

    /// The hunks of `path`'s edit ([`hunks_of`] its previewed and proposed bytes): `None` for
    /// a file that is not a text edit of an existing file (created, deleted, renamed, binary,
    /// very large).
    pub fn hunks(&self, path: &str) -> Option<Replacements> {
        match self.changes.iter().find(|c| c.path() == path)? {
            Change::Edit { before, after, .. } => hunks_of(before, after),
            _ => None,
        }
    }

    /// The rows of `path`'s hunks (removed and added lines shortened), or `None` (see
    /// [`hunks`](Self::hunks)).
    pub fn hunk_rows(&self, path: &str) -> Option<Vec<ReplacementRow>> {
        let before = match self.changes.iter().find(|c| c.path() == path) {
            Some(Change::Edit { before, .. }) => before,
            _ => return None,
        };
        let hunks = self.hunks(path)?;
        Some(rows_of(before, &hunks))
    }

    /// The rows of `path`'s replacements (old and new text shortened), or `None` when its
    /// edit does not know them.
    pub fn replacement_rows(&self, path: &str) -> Option<Vec<ReplacementRow>> {
        let before = match self.changes.iter().find(|c| c.path() == path) {
            Some(Change::Edit { before, .. }) => before,
            _ => return None,
        };
        let reps = self.replacements.get(path)?;
        Some(rows_of(before, reps))
    }

    /// The part of this change set `leave_out` keeps, and what it leaves out. Refuses (with a
    /// message naming the value and what to do) a path that is not one of its files, a
    /// replacement id the file does not have, single replacements of a file that does not
    /// know them, and a selection that leaves out everything.
    pub fn select(&self, leave_out: &LeaveOut) -> Result<(ChangeSet, PartialApply), String> {
        let paths: BTreeSet<&str> = self.changes.iter().map(Change::path).collect();
        let mut files: BTreeSet<&str> = BTreeSet::new();
        for f in &leave_out.files {
            let p = normalise(f);
            if !paths.contains(p) {
                return Err(format!(
                    "`leave_out.files` names \"{f}\", which is not a file of this action; use a workspace-relative path from its file list (e.g. \"{}\").",
                    self.changes.first().map(Change::path).unwrap_or("src/a.ts")
                ));
            }
            files.insert(p);
        }
        let mut reps: BTreeMap<&str, BTreeSet<u32>> = BTreeMap::new();
        for (f, ids) in &leave_out.replacements {
            if ids.is_empty() {
                continue;
            }
            let p = normalise(f);
            if !paths.contains(p) {
                return Err(format!(
                    "`leave_out.replacements` names \"{f}\", which is not a file of this action; use a workspace-relative path from its file list."
                ));
            }
            let Some(known) = self.replacements.get(p) else {
                return Err(format!(
                    "Single replacements of \"{f}\" cannot be left out: this action does not know them (only an ast_edit preview keeps them). Leave out the whole file (`leave_out.files`), or run the preview again."
                ));
            };
            for &id in ids {
                if id == 0 || id as usize > known.len() {
                    return Err(format!(
                        "`leave_out.replacements` names replacement {id} of \"{f}\", which has replacements 1 to {}; use ids from its replacement list.",
                        known.len()
                    ));
                }
            }
            reps.entry(p).or_default().extend(ids.iter().copied());
        }
        let mut hunks: BTreeMap<&str, (Replacements, BTreeSet<u32>)> = BTreeMap::new();
        for (f, ids) in &leave_out.hunks {
            if ids.is_empty() {
                continue;
            }
            let p = normalise(f);
            if !paths.contains(p) {
                return Err(format!(
                    "`leave_out.hunks` names \"{f}\", which is not a file of this action; use a workspace-relative path from its file list."
                ));
            }
            if reps.contains_key(p) {
                return Err(format!(
                    "\"{f}\" is named in both `leave_out.replacements` and `leave_out.hunks`; leave out its single replacements or its hunks, not both."
                ));
            }
            let Some(known) = self.hunks(p) else {
                return Err(format!(
                    "Hunks of \"{f}\" cannot be left out: it is not a text edit of an existing file (a new, deleted, renamed, binary or very large file). Leave out the whole file (`leave_out.files`)."
                ));
            };
            for &id in ids {
                if id == 0 || id as usize > known.len() {
                    return Err(format!(
                        "`leave_out.hunks` names hunk {id} of \"{f}\", which has hunks 1 to {}; use ids from its hunk list.",
                        known.len()
                    ));
                }
            }
            hunks.entry(p).or_insert_with(|| (known, BTreeSet::new())).1.extend(ids.iter().copied());
        }

        let mut kept = ChangeSet::new();
        let mut partial = PartialApply {
            files_total: self.changes.len(),
            files_applied: 0,
            left_out_files: Vec::new(),
            left_out_replacements: Vec::new(),
            replacements: None,
            left_out_hunks: Vec::new(),
        };
        let every_edit_knows = self.changes.iter().all(|c| self.replacements.contains_key(c.path()));
        let (mut total, mut applied) = (0usize, 0usize);
        for change in &self.changes {
            let path = change.path();
            let known = self.replacements.get(path);
            let n = known.map_or(0, |r| r.len());
            total += n;
            if files.contains(path) {
                partial.left_out_files.push(path.to_string());
                continue;
            }
            if let (Change::Edit { path, before, before_hash, .. }, Some((known, ids))) = (change, hunks.get(path)) {
                if ids.len() == known.len() {
                    partial.left_out_files.push(path.clone());
                    continue;
                }
                let after = known.rebuild(before, |id| !ids.contains(&id)).ok_or_else(|| {
                    format!("The hunks of \"{path}\" do not fit its previewed content; leave out the whole file.")
                })?;
                kept.push(Change::Edit {
                    path: path.clone(),
                    before: before.clone(),
                    before_hash: *before_hash,
                    after: after.into(),
                });
                let (left, taken): (Vec<_>, Vec<_>) =
                    known.iter().map(|h| (h.id, h.line)).partition(|(id, _)| ids.contains(id));
                partial.left_out_hunks.push(LeftOutHunks { path: path.clone(), left_out: left, applied: taken });
                // An ast_edit file taken by hunk: its replacements are not counted one by one.
                applied += n;
                partial.files_applied += 1;
                continue;
            }
            match (change, reps.get(path), known) {
                (Change::Edit { path, before, before_hash, .. }, Some(ids), Some(known)) => {
                    if ids.len() == known.len() {
                        // Every replacement left out: the file is left out.
                        partial.left_out_files.push(path.clone());
                        continue;
                    }
                    let after = known
                        .rebuild(before, |id| !ids.contains(&id))
                        .ok_or_else(|| format!("The replacements of \"{path}\" do not fit its previewed content; leave out the whole file, or run the preview again."))?;
                    kept.push(Change::Edit {
                        path: path.clone(),
                        before: before.clone(),
                        before_hash: *before_hash,
                        after: after.into(),
                    });
                    partial.left_out_replacements.push(LeftOutReplacements {
                        path: path.clone(),
                        ids: ids.iter().copied().collect(),
                        of: known.len(),
                    });
                    applied += n - ids.len();
                }
                _ => {
                    kept.push(change.clone());
                    applied += n;
                }
            }
            partial.files_applied += 1;
        }
        if kept.is_empty() {
            return Err(
                "`leave_out` leaves out every change of this action, so nothing would be applied; discard it instead, or leave out less."
                    .into(),
            );
        }
        if every_edit_knows {
            partial.replacements = Some((total, applied));
        }
        Ok((kept, partial))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reps(before: &str, edits: &[(&str, &str)]) -> Replacements {
        let mut r = Replacements::new();
        let mut from = 0;
        for (old, new) in edits {
            let start = from + before[from..].find(old).unwrap();
            let line = before[..start].matches('\n').count() as u32 + 1;
            r.push(line, start, start + old.len(), new.as_bytes());
            from = start + old.len();
        }
        r
    }

    #[test]
    fn rows_show_old_and_new_text_shortened() {
        let before = format!("a(1)\n{}\n", "z".repeat(300));
        let mut cs = ChangeSet::new();
        let long = "y".repeat(300);
        let after = format!("x(1)\n{long}\n");
        cs.edit("f", before.as_bytes().to_vec(), after.into_bytes());
        let r = reps(&before, &[("a(1)", "x(1)"), (&"z".repeat(300), &long)]);
        assert!(cs.set_replacements("f", r));
        let rows = cs.replacement_rows("f").unwrap();
        assert_eq!((rows[0].id, rows[0].line, rows[0].old.as_str(), rows[0].new.as_str()), (1, 1, "a(1)", "x(1)"));
        assert_eq!(rows[1].line, 2);
        assert_eq!(rows[1].new.chars().count(), 201, "shortened, with an ellipsis");
        assert!(rows[1].new.ends_with('…'));
        assert!(cs.replacement_rows("other").is_none());
    }

    #[test]
    fn the_binary_form_reads_back_and_refuses_garbage() {
        let r = reps("a(1) a(22)\n", &[("a(1)", "x(1)"), ("a(22)", "")]);
        let bytes = r.to_bytes();
        assert_eq!(Replacements::from_bytes(&bytes), Some(r));
        assert_eq!(Replacements::from_bytes(&bytes[..bytes.len() - 1]), None);
        assert_eq!(Replacements::from_bytes(&[bytes.as_slice(), b"x"].concat()), None);
        assert_eq!(Replacements::from_bytes(b""), None);
    }

    #[test]
    fn numbers_are_grouped_by_thousands() {
        assert_eq!(grouped(0), "0");
        assert_eq!(grouped(999), "999");
        assert_eq!(grouped(5000), "5,000");
        assert_eq!(grouped(1234567), "1,234,567");
    }

    #[test]
    fn replacements_rebuild_the_new_content_and_any_subset() {
        let before = "a(1)\nb(2)\na(3)\n";
        let r = reps(before, &[("a(1)", "x(1)"), ("a(3)", "x(3)")]);
        assert_eq!(r.rebuild(before.as_bytes(), |_| true).unwrap(), b"x(1)\nb(2)\nx(3)\n");
        assert_eq!(r.rebuild(before.as_bytes(), |id| id == 2).unwrap(), b"a(1)\nb(2)\nx(3)\n");
        assert_eq!(r.get(2).unwrap().line, 3);
        assert!(r.get(0).is_none() && r.get(3).is_none());
    }

    #[test]
    fn replacements_that_do_not_rebuild_the_new_content_are_not_attached() {
        let mut cs = ChangeSet::new();
        cs.edit("a", b"a(1)".to_vec(), b"x(1)".to_vec());
        assert!(!cs.set_replacements("a", reps("a(1)", &[("a(1)", "y(1)")])));
        assert!(cs.replacements("a").is_none());
        assert!(cs.set_replacements("a", reps("a(1)", &[("a(1)", "x(1)")])));
    }

    #[test]
    fn texts_say_what_was_left_out() {
        let p = PartialApply {
            files_total: 40,
            files_applied: 38,
            left_out_files: vec!["a.ts".into(), "b.ts".into()],
            left_out_replacements: vec![],
            replacements: None,
            left_out_hunks: vec![],
        };
        assert_eq!(p.left_out_lines(), vec!["Left out 2 of 40 files: a.ts, b.ts"]);
        assert_eq!(p.history_text(), "applied 38 of 40 files");
        let p = PartialApply {
            files_total: 1,
            files_applied: 1,
            left_out_files: vec![],
            left_out_replacements: vec![LeftOutReplacements { path: "src/x.ts".into(), ids: vec![1, 2, 3], of: 5000 }],
            replacements: Some((5000, 4997)),
            left_out_hunks: vec![],
        };
        assert_eq!(p.left_out_lines(), vec!["Left out 3 of 5,000 replacements in src/x.ts"]);
        assert_eq!(p.history_text(), "applied 4,997 of 5,000 replacements");
    }

    #[test]
    fn hunks_are_the_runs_of_changed_lines_and_rebuild_any_subset() {
        let before = "a\nb\nc\nd\ne\nf\ng\n";
        let after = "a\nB\nc\nd\ne\nF\nF2\ng\nh\n";
        let h = hunks_of(before.as_bytes(), after.as_bytes()).unwrap();
        assert_eq!(h.len(), 3, "b→B, f→F F2, h added at the end");
        let lines: Vec<u32> = h.iter().map(|r| r.line).collect();
        assert_eq!(lines, vec![2, 6, 8]);
        assert_eq!(h.rebuild(before.as_bytes(), |_| true).unwrap(), after.as_bytes());
        assert_eq!(h.rebuild(before.as_bytes(), |id| id == 2).unwrap(), b"a\nb\nc\nd\ne\nF\nF2\ng\n");
        assert_eq!(h.rebuild(before.as_bytes(), |id| id != 2).unwrap(), b"a\nB\nc\nd\ne\nf\ng\nh\n");
        assert!(hunks_of(b"same", b"same").is_none());
        assert!(hunks_of(b"\x89PNG\0", b"\x89PNG\0\x01").is_none(), "binary: no hunks");
    }

    #[test]
    fn hunks_keep_crlf_no_final_newline_and_unicode_exactly() {
        let before = "é1\r\nzwei\r\ndrei";
        let after = "é1\r\nZWEI ✓\r\ndrei!";
        let h = hunks_of(before.as_bytes(), after.as_bytes()).unwrap();
        assert_eq!(h.len(), 1, "adjacent changed lines are one hunk");
        assert_eq!(h.rebuild(before.as_bytes(), |_| true).unwrap(), after.as_bytes());
        let two: String = (0..10).map(|i| format!("line {i}\r\n")).collect::<String>() + "tail";
        let changed = two.replace("line 0\r\n", "LINE 0\r\n").replace("tail", "TAIL");
        let h = hunks_of(two.as_bytes(), changed.as_bytes()).unwrap();
        assert_eq!(h.len(), 2);
        let only_second = two.replace("tail", "TAIL");
        assert_eq!(h.rebuild(two.as_bytes(), |id| id == 2).unwrap(), only_second.as_bytes());
    }

    #[test]
    fn leaving_out_hunks_applies_the_others_and_says_which() {
        let before = "one\ntwo\nthree\nfour\nfive\n";
        let after = "ONE\ntwo\nthree\nFOUR\nfive\nsix\n";
        let mut cs = ChangeSet::new();
        cs.edit("a.md", before.as_bytes().to_vec(), after.as_bytes().to_vec()).create("new.md", b"x".to_vec());
        assert_eq!(cs.hunk_rows("a.md").unwrap().len(), 3);
        assert!(cs.hunks("new.md").is_none(), "a new file is taken whole");
        let leave = LeaveOut { hunks: [("a.md".to_string(), vec![2])].into(), ..Default::default() };
        let (kept, partial) = cs.select(&leave).unwrap();
        let Change::Edit { after, before_hash, .. } = &kept.changes()[0] else { panic!() };
        assert_eq!(&after[..], b"ONE\ntwo\nthree\nfour\nfive\nsix\n");
        assert_eq!(
            *before_hash,
            super::super::ContentHash::of(before.as_bytes()),
            "pinned to the same previewed bytes"
        );
        assert_eq!(kept.len(), 2);
        assert_eq!(
            partial.left_out_lines(),
            vec!["Left out 1 of 3 hunks in a.md: hunk 2 (line 4); applied hunk 1 (line 1), hunk 3 (line 6)"]
        );
        assert_eq!(partial.history_text(), "applied 2 of 2 files, leaving out 1 of 3 hunks in a.md");
        let every = LeaveOut { hunks: [("a.md".to_string(), vec![1, 2, 3])].into(), ..Default::default() };
        let (_, partial) = cs.select(&every).unwrap();
        assert_eq!(partial.left_out_files, vec!["a.md"], "every hunk left out: the file is left out");
        let bad = LeaveOut { hunks: [("a.md".to_string(), vec![4])].into(), ..Default::default() };
        assert!(cs.select(&bad).unwrap_err().contains("hunk 4 of \"a.md\", which has hunks 1 to 3"));
        let new = LeaveOut { hunks: [("new.md".to_string(), vec![1])].into(), ..Default::default() };
        assert!(cs.select(&new).unwrap_err().contains("Leave out the whole file"));
    }
}
