//! Edit, then apply (issue 27): the person replaces the proposed new text of some files of a
//! pending action before applying it. [`ChangeSet::with_edits`] makes the change set that
//! writes the person's text instead of the proposal, pinned to the same previewed original
//! bytes (so every guarantee of the apply holds: stale if the originals changed, crash-safe,
//! undoable), and says, per file, what the person changed: the unified diff from the proposal
//! to what will be written ([`EditedFile`]).
//!
//! Only a file's new content can be edited: an edit (`Change::Edit`) or a created file
//! (`Change::Create`). Renames and deletions have no new text and are refused, naming the
//! file; so is a path the action does not change, or one given twice.

use std::collections::BTreeSet;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::{Change, ChangeSet, ContentHash};

/// The person's own text for one file of a pending action (one definition with the
/// window's protocol).
pub use resolve_protocol::PersonEdit;

/// The most of the diffs from the proposals to the person's text that a result carries (all
/// files together): an edit that rewrites a big file would otherwise put megabytes into the
/// agent's context, the journal and the MCP result. The files hold the whole text.
pub const EDITS_DIFF_BYTES: usize = 64 * 1024;

/// What the person changed in one file: the unified diff from the agent's proposal to what
/// is written, with the hashes of both.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EditedFile {
    pub path: String,
    /// `--- proposal/<path>` / `+++ written/<path>`, three lines of context; over
    /// [`EDITS_DIFF_BYTES`] for all files together, cut at a line with a note saying how much
    /// was left out.
    pub diff: String,
    /// sha256 of the proposed content and of the written content (hex).
    pub proposed_hash: String,
    pub written_hash: String,
}

impl ChangeSet {
    /// This change set with the person's text for the files of `edits`, and what each edit
    /// changed (a file whose text equals the proposal is not an edit and is left as is).
    /// `Err` names the file and what to do.
    pub fn with_edits(&self, edits: &[PersonEdit]) -> Result<(ChangeSet, Vec<EditedFile>), String> {
        let mut seen = BTreeSet::new();
        for e in edits {
            let path = super::select::normalise(&e.path);
            if !seen.insert(path.to_string()) {
                return Err(format!("\"{}\" is edited twice; send one text per file.", e.path));
            }
            match self.changes.iter().find(|c| c.path() == path) {
                None => {
                    return Err(format!(
                        "\"{}\" is not a file of this action, so it cannot be edited; edit a file from its file list.",
                        e.path
                    ))
                }
                Some(Change::Rename { .. }) => {
                    return Err(format!(
                        "\"{}\" is renamed by this action, and renames are not editable: apply or leave out the rename as proposed.",
                        e.path
                    ))
                }
                Some(Change::Delete { .. }) => {
                    return Err(format!(
                        "\"{}\" is deleted by this action, and deletions are not editable: apply or leave out the deletion as proposed.",
                        e.path
                    ))
                }
                Some(Change::Edit { .. } | Change::Create { .. }) => {}
            }
        }
        let text_of =
            |path: &str| edits.iter().find(|e| super::select::normalise(&e.path) == path).map(|e| e.text.as_bytes());
        let mut out = ChangeSet::new();
        let mut edited = Vec::new();
        for change in &self.changes {
            let path = change.path();
            let (proposed, new_change) = match (change, text_of(path)) {
                (Change::Edit { path, before, before_hash, after }, Some(text)) if text != &after[..] => (
                    after.clone(),
                    Change::Edit {
                        path: path.clone(),
                        before: before.clone(),
                        before_hash: *before_hash,
                        after: Arc::from(text),
                    },
                ),
                (Change::Create { path, contents }, Some(text)) if text != &contents[..] => {
                    (contents.clone(), Change::Create { path: path.clone(), contents: Arc::from(text) })
                }
                _ => {
                    out.push(change.clone());
                    if let Some(r) = self.replacements.get(path) {
                        out.replacements.insert(path.to_string(), r.clone());
                    }
                    continue;
                }
            };
            let written = text_of(path).unwrap_or_default();
            edited.push(EditedFile {
                path: path.to_string(),
                diff: proposal_to_written(path, &proposed, written),
                proposed_hash: ContentHash::of(&proposed).to_string(),
                written_hash: ContentHash::of(written).to_string(),
            });
            // An edited file's single replacements no longer describe what is written.
            out.push(new_change);
        }
        cap_diffs(&mut edited, EDITS_DIFF_BYTES);
        Ok((out, edited))
    }
}

/// Cuts the diffs of `edited`, in order, so that together they take at most `budget` bytes:
/// each cut at a line, with a note of its full size; a file after the budget keeps only the note.
fn cap_diffs(edited: &mut [EditedFile], budget: usize) {
    let mut left = budget;
    for e in edited {
        let full = e.diff.len();
        if full <= left {
            left -= full;
            continue;
        }
        let mut end = left;
        while !e.diff.is_char_boundary(end) {
            end -= 1;
        }
        let cut = e.diff[..end].rfind('\n').map_or(0, |i| i + 1);
        e.diff = format!(
            "{}(The diff of {} is {full} bytes; the first {cut} are shown. The file holds the person's whole text.)\n",
            &e.diff[..cut],
            e.path
        );
        left = left.saturating_sub(cut);
    }
}

/// The unified diff from the proposal to the person's text of `path`.
fn proposal_to_written(path: &str, proposed: &[u8], written: &[u8]) -> String {
    let (old, new) = (String::from_utf8_lossy(proposed), String::from_utf8_lossy(written));
    // A rewrite of a whole big file must not hold the apply up: past the deadline the diff is
    // coarser (bigger hunks), never wrong.
    similar::TextDiff::configure()
        .timeout(std::time::Duration::from_secs(1))
        .diff_lines(old.as_ref(), new.as_ref())
        .unified_diff()
        .context_radius(3)
        .header(&format!("proposal/{path}"), &format!("written/{path}"))
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn action() -> ChangeSet {
        let mut cs = ChangeSet::new();
        cs.edit("src/a.ts", b"one\ntwo\nthree\n".to_vec(), b"one\n2\nthree\n".to_vec());
        cs.create("src/new.ts", b"export {};\n".to_vec());
        cs.delete("old.txt", b"bye\n".to_vec());
        cs
    }

    fn edit(path: &str, text: &str) -> PersonEdit {
        PersonEdit { path: path.into(), text: text.into() }
    }

    #[test]
    fn an_edit_writes_the_persons_text_pinned_to_the_same_original() {
        let cs = action();
        let (out, edited) = cs.with_edits(&[edit("src/a.ts", "one\nTWO\nthree\n")]).unwrap();
        assert_eq!(out.len(), 3, "every change is still there");
        match &out.changes()[0] {
            Change::Edit { after, before_hash, .. } => {
                assert_eq!(&after[..], b"one\nTWO\nthree\n");
                assert_eq!(*before_hash, ContentHash::of(b"one\ntwo\nthree\n"), "pinned to the previewed bytes");
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(edited.len(), 1);
        assert_eq!(edited[0].path, "src/a.ts");
        assert!(edited[0].diff.contains("--- proposal/src/a.ts\n+++ written/src/a.ts\n"), "{}", edited[0].diff);
        assert!(edited[0].diff.contains("-2\n+TWO\n"), "{}", edited[0].diff);
        assert_eq!(edited[0].written_hash, ContentHash::of(b"one\nTWO\nthree\n").to_string());
        assert_eq!(edited[0].proposed_hash, ContentHash::of(b"one\n2\nthree\n").to_string());
    }

    #[test]
    fn a_created_file_can_be_edited_and_an_unchanged_text_is_no_edit() {
        let cs = action();
        let (out, edited) =
            cs.with_edits(&[edit("src/new.ts", "export const x = 1;\n"), edit("src/a.ts", "one\n2\nthree\n")]).unwrap();
        assert_eq!(edited.iter().map(|e| e.path.as_str()).collect::<Vec<_>>(), ["src/new.ts"]);
        assert!(
            matches!(&out.changes()[1], Change::Create { contents, .. } if &contents[..] == b"export const x = 1;\n")
        );
    }

    #[test]
    fn a_big_edit_carries_a_bounded_diff_cut_at_a_line_and_says_so() {
        let before: String = (0..2_000).map(|i| format!("line {i} of the file the agent rewrote\n")).collect();
        let mut cs = ChangeSet::new();
        cs.edit("big.ts", before.as_bytes().to_vec(), before.replace("line", "LINE").into_bytes());
        cs.edit("small.ts", b"a\n".to_vec(), b"b\n".to_vec());
        let mine: String = (0..2_000).map(|i| format!("row {i} of the text the person wrote instead\n")).collect();
        let (out, edited) = cs.with_edits(&[edit("big.ts", &mine), edit("small.ts", "c\n")]).unwrap();
        assert!(matches!(&out.changes()[0], Change::Edit { after, .. } if after.len() == mine.len()), "written whole");
        let total: usize = edited.iter().map(|e| e.diff.len()).sum();
        assert!(total <= EDITS_DIFF_BYTES + 400, "bounded: {total}");
        let big = &edited[0].diff;
        assert!(big.starts_with("--- proposal/big.ts\n+++ written/big.ts\n"), "{}", &big[..80]);
        let (body, note) = big.rsplit_once("(The diff of big.ts is ").unwrap();
        assert!(body.ends_with('\n'), "cut at a line");
        assert!(
            note.contains("bytes; the first") && note.contains("The file holds the person's whole text."),
            "{note}"
        );
        assert!(
            edited[1].diff.starts_with("(The diff of small.ts is "),
            "past the budget: the note only: {}",
            edited[1].diff
        );
        assert_eq!(edited[1].written_hash, ContentHash::of(b"c\n").to_string(), "the hashes stay whole");
    }

    #[test]
    fn deletions_renames_unknown_and_twice_edited_files_are_refused_by_name() {
        let cs = action();
        let e = cs.with_edits(&[edit("old.txt", "x")]).unwrap_err();
        assert!(e.contains("\"old.txt\"") && e.contains("deletions are not editable"), "{e}");
        let e = cs.with_edits(&[edit("nope.ts", "x")]).unwrap_err();
        assert!(e.contains("\"nope.ts\" is not a file of this action"), "{e}");
        let e = cs.with_edits(&[edit("src/a.ts", "x"), edit("./src/a.ts", "y")]).unwrap_err();
        assert!(e.contains("edited twice"), "{e}");
        let mut renamed = ChangeSet::new();
        renamed.rename("a", "b", crate::changeset::EntryKind::File, ContentHash::of(b""));
        let e = renamed.with_edits(&[edit("b", "x")]).unwrap_err();
        assert!(e.contains("renames are not editable"), "{e}");
    }
}
