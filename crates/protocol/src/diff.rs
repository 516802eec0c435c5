//! Files of a change-set action, one file's diff, and rename tables.
//!
//! Paths are workspace-relative with `/` separators. Line numbers are 1-based.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::hidden::{HiddenChar, LineHidden};

/// One row of `get_action_files`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct FileEntry {
    pub path: String,
    /// Set for renamed files.
    pub old_path: Option<String>,
    pub change: FileChange,
    /// The highlighter's language id for the path (e.g. `typescript`), from the engine's
    /// table; `null` when the extension is not known.
    pub language: Option<String>,
    pub binary: bool,
    pub too_large: bool,
    pub added: u32,
    pub removed: u32,
    /// Bytes before and after; `null` for the side that does not exist (and for renames).
    #[ts(type = "number | null")]
    pub old_size: Option<u64>,
    #[ts(type = "number | null")]
    pub new_size: Option<u64>,
    /// BLAKE3 content hashes (hex) of each side, set only for binary and too-large files
    /// (no diff is shown for them).
    pub old_hash: Option<String>,
    pub new_hash: Option<String>,
    /// Hidden or look-alike characters in `path` and `old_path` (absent when none).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[ts(as = "Option<Vec<HiddenChar>>", optional)]
    pub path_hidden: Vec<HiddenChar>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[ts(as = "Option<Vec<HiddenChar>>", optional)]
    pub old_path_hidden: Vec<HiddenChar>,
    /// How many hidden or look-alike characters this change writes into the file (its added
    /// lines, and its name when created or renamed); absent when none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub hidden_count: Option<u32>,
    /// The file's warning in words (`2 hidden or bidirectional characters in what this change
    /// writes`); absent when none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub hidden_note: Option<String>,
}

/// What a change does to its file, as lists show it (the engine's word too: one definition).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub enum FileChange {
    Modified,
    Added,
    Deleted,
    Renamed,
}

impl FileChange {
    /// `modified`, `added`, `deleted` or `renamed` (its wire form).
    pub fn as_str(self) -> &'static str {
        match self {
            FileChange::Modified => "modified",
            FileChange::Added => "added",
            FileChange::Deleted => "deleted",
            FileChange::Renamed => "renamed",
        }
    }
}

/// Returned by `get_file_diff`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct FileDiff {
    pub path: String,
    pub old_path: Option<String>,
    /// The highlighter's language id for the path (the same as [`FileEntry::language`]).
    pub language: Option<String>,
    /// Set instead of hunks for binary or too-large files.
    pub summary: Option<String>,
    pub hunks: Vec<Hunk>,
    pub added: u32,
    pub removed: u32,
    /// Hidden or look-alike characters in `path` and `old_path` (absent when none).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[ts(as = "Option<Vec<HiddenChar>>", optional)]
    pub path_hidden: Vec<HiddenChar>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[ts(as = "Option<Vec<HiddenChar>>", optional)]
    pub old_path_hidden: Vec<HiddenChar>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Hunk {
    pub old_start: u32,
    pub old_lines: u32,
    pub new_start: u32,
    pub new_lines: u32,
    pub lines: Vec<DiffLine>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct DiffLine {
    pub kind: DiffLineKind,
    /// Line number in the old file; `null` for added lines.
    pub old_no: Option<u32>,
    /// Line number in the new file; `null` for removed lines.
    pub new_no: Option<u32>,
    /// The line without its trailing newline.
    pub text: String,
    /// Half-open `[start, end)` ranges, in UTF-16 code units of `text`, that
    /// changed at word level. Empty for context lines.
    pub emphasis: Vec<(u32, u32)>,
    /// Characters of `text` a person cannot see or that look like others, to be shown
    /// visibly (absent when none).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[ts(as = "Option<Vec<HiddenChar>>", optional)]
    pub hidden: Vec<HiddenChar>,
}

/// What a diff line is (the engine's diff and the window's: one definition).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub enum DiffLineKind {
    Context,
    Added,
    Removed,
}

/// Returned by `get_file_texts`: the whole previewed text of both sides of one file, for
/// highlighting the file as a whole and unfolding unchanged lines. `null` for a side that does
/// not exist, and for both sides of binary or too-large files.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct FileTexts {
    pub path: String,
    pub old: Option<String>,
    pub new: Option<String>,
    /// The lines of `old` and `new` that hold hidden or look-alike characters, in order
    /// (absent when none): unfolded lines show them as the diff's lines do.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[ts(as = "Option<Vec<LineHidden>>", optional)]
    pub old_hidden: Vec<LineHidden>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[ts(as = "Option<Vec<LineHidden>>", optional)]
    pub new_hidden: Vec<LineHidden>,
}

/// One row of `get_action_renames`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct RenameRow {
    pub from: String,
    pub to: String,
    pub status: RenameStatus,
    /// Hidden or look-alike characters in `from` and `to` (absent when none).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[ts(as = "Option<Vec<HiddenChar>>", optional)]
    pub from_hidden: Vec<HiddenChar>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[ts(as = "Option<Vec<HiddenChar>>", optional)]
    pub to_hidden: Vec<HiddenChar>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub enum RenameStatus {
    /// Will be renamed.
    Rename,
    /// The pattern matched but the name would not change.
    Unchanged,
    /// Directories are not renamed.
    DirectorySkipped,
}

impl crate::snake::SnakeCase for RenameStatus {
    const ALL: &'static [Self] = &[RenameStatus::Rename, RenameStatus::Unchanged, RenameStatus::DirectorySkipped];
    fn snake(self) -> &'static str {
        match self {
            RenameStatus::Rename => "rename",
            RenameStatus::Unchanged => "unchanged",
            RenameStatus::DirectorySkipped => "directory_skipped",
        }
    }
}
