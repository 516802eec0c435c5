//! Per-file summaries (what a list shows: kind of change, line counts, binary or too large)
//! and the totals of a change set.

use serde::Serialize;

use super::Change;
use crate::diff;

/// What a change does to its file, as lists show it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ChangeKind {
    Modified,
    Added,
    Deleted,
    Renamed,
}

impl ChangeKind {
    /// `modified`, `added`, `deleted` or `renamed`.
    pub fn as_str(self) -> &'static str {
        match self {
            ChangeKind::Modified => "modified",
            ChangeKind::Added => "added",
            ChangeKind::Deleted => "deleted",
            ChangeKind::Renamed => "renamed",
        }
    }
}

/// Totals over a change set (or an action): files touched, lines added and removed, renames.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct ChangeCounts {
    pub files: u32,
    pub added: u32,
    pub removed: u32,
    pub renames: u32,
}

/// Per-file numbers for lists and labels.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FileSummary {
    pub path: String,
    pub old_path: Option<String>,
    pub change: ChangeKind,
    pub binary: bool,
    pub too_large: bool,
    pub added: u32,
    pub removed: u32,
}

/// The summary of one change (line counts computed here, once per change set).
pub(super) fn summarise(change: &Change) -> FileSummary {
    let (path, old_path, kind, old, new): (&str, Option<&str>, ChangeKind, &[u8], &[u8]) = match change {
        Change::Edit { path, before, after, .. } => (path, None, ChangeKind::Modified, before, after),
        Change::Create { path, contents } => (path, None, ChangeKind::Added, b"", contents),
        Change::Delete { path, before, .. } => (path, None, ChangeKind::Deleted, before, b""),
        Change::Rename { from, to, .. } => (to, Some(from), ChangeKind::Renamed, b"", b""),
    };
    let binary = diff::is_binary(old) || diff::is_binary(new);
    let too_large = old.len() > diff::MAX_DIFF_BYTES || new.len() > diff::MAX_DIFF_BYTES;
    let (added, removed) = if binary || too_large || kind == ChangeKind::Renamed {
        (0, 0)
    } else {
        diff::line_counts(&String::from_utf8_lossy(old), &String::from_utf8_lossy(new))
    };
    FileSummary {
        path: path.to_string(),
        old_path: old_path.map(str::to_string),
        change: kind,
        binary,
        too_large,
        added,
        removed,
    }
}
