//! Per-file summaries (what a list shows: kind of change, line counts, binary or too large)
//! and the totals of a change set.

use serde::Serialize;

use super::{Change, ContentHash};
use crate::diff;
use crate::hidden::{self, HiddenTally, Place};

/// What a change does to its file, and totals over a change set or an action (one
/// definition with the window's protocol).
pub use resolve_protocol::{ActionCounts, FileChange};

/// Per-file numbers for lists and labels.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FileSummary {
    pub path: String,
    pub old_path: Option<String>,
    pub change: FileChange,
    pub binary: bool,
    pub too_large: bool,
    pub added: u32,
    pub removed: u32,
    /// Bytes before and after (`None` for the side that does not exist, and for renames).
    pub old_size: Option<u64>,
    pub new_size: Option<u64>,
    /// Content hashes (BLAKE3, hex) of each side, only for files no diff is shown for
    /// (binary or too large), so a person can still tell what will be written.
    pub old_hash: Option<String>,
    pub new_hash: Option<String>,
    /// Hidden and look-alike characters in what this change writes that was not there: its
    /// added lines, and the name of a created or renamed file ([`crate::hidden`]).
    pub hidden: HiddenTally,
}

/// The summary of one change (line counts computed here, once per change set).
pub(super) fn summarise(change: &Change) -> FileSummary {
    let (old_size, new_size) = match change {
        Change::Edit { before, after, .. } => (Some(before.len() as u64), Some(after.len() as u64)),
        Change::Create { contents, .. } => (None, Some(contents.len() as u64)),
        Change::Delete { before, .. } => (Some(before.len() as u64), None),
        Change::Rename { .. } => (None, None),
    };
    let (path, old_path, kind, old, new): (&str, Option<&str>, FileChange, &[u8], &[u8]) = match change {
        Change::Edit { path, before, after, .. } => (path, None, FileChange::Modified, before, after),
        Change::Create { path, contents } => (path, None, FileChange::Added, b"", contents),
        Change::Delete { path, before, .. } => (path, None, FileChange::Deleted, before, b""),
        Change::Rename { from, to, .. } => (to, Some(from), FileChange::Renamed, b"", b""),
    };
    let binary = diff::is_binary(old) || diff::is_binary(new);
    let too_large = old.len() > diff::MAX_DIFF_BYTES || new.len() > diff::MAX_DIFF_BYTES;
    let (added, removed, mut hidden) = if binary || too_large || kind == FileChange::Renamed {
        (0, 0, HiddenTally::default())
    } else {
        diff::line_counts_and_hidden(&String::from_utf8_lossy(old), &String::from_utf8_lossy(new))
    };
    if matches!(kind, FileChange::Added | FileChange::Renamed) {
        hidden.add_findings(&hidden::scan_line(path, Place::Elsewhere));
    }
    let no_diff = binary || too_large;
    let hash =
        |size: Option<u64>, bytes: &[u8]| (no_diff && size.is_some()).then(|| ContentHash::of(bytes).to_string());
    FileSummary {
        path: path.to_string(),
        old_path: old_path.map(str::to_string),
        change: kind,
        binary,
        too_large,
        added,
        removed,
        old_hash: hash(old_size, old),
        new_hash: hash(new_size, new),
        old_size,
        new_size,
        hidden,
    }
}
