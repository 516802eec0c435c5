//! Partial apply: what the person leaves out of an Apply, and the single replacements of an
//! `ast_edit` file they can untick.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::hidden::HiddenChar;

/// The optional `leaveOut` argument of `resolve_action`: what to leave out of the apply
/// (discarded in the same decision). Empty lists (or `null`) mean a full apply.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct LeaveOut {
    /// Whole files, by the path of the action's file list (`FileEntry::path`).
    #[serde(default)]
    pub files: Vec<String>,
    /// Single replacements, by file path and replacement id (`FileReplacement::id`).
    #[serde(default)]
    pub replacements: BTreeMap<String, Vec<u32>>,
    /// Hunks of any text edit, by file path and hunk id (`FileReplacement::id` of a file whose
    /// pieces are hunks): each hunk is one run of changed lines of the file's diff.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    #[ts(optional, as = "Option<BTreeMap<String, Vec<u32>>>")]
    pub hunks: BTreeMap<String, Vec<u32>>,
}

impl LeaveOut {
    /// Nothing is left out: the apply is a full one.
    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
            && self.replacements.values().all(|ids| ids.is_empty())
            && self.hunks.values().all(|ids| ids.is_empty())
    }
}

/// One replacement of an `ast_edit` file (`get_file_replacements`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct FileReplacement {
    /// Stable within the file, 1-based in position order: what `LeaveOut::replacements` names.
    pub id: u32,
    /// 1-based line of the match in the old content.
    pub line: u32,
    /// The replaced text (shortened when long, ending with `…`).
    pub old: String,
    /// The text written instead (shortened when long).
    pub new: String,
    /// Hidden or look-alike characters in `old` and `new` (absent when none).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[ts(as = "Option<Vec<HiddenChar>>", optional)]
    pub old_hidden: Vec<HiddenChar>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[ts(as = "Option<Vec<HiddenChar>>", optional)]
    pub new_hidden: Vec<HiddenChar>,
}

/// Returned by `get_file_replacements`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct FileReplacements {
    pub path: String,
    /// In position order; empty when `note` says why single replacements are not offered.
    pub replacements: Vec<FileReplacement>,
    /// Why this file's replacements cannot be ticked one by one (a binary or very large
    /// file): the file can still be left out whole.
    pub note: Option<String>,
    /// What the rows are: an `ast_edit` file's single replacements (left out by
    /// `LeaveOut::replacements`), or any other text edit's hunks (by `LeaveOut::hunks`).
    #[serde(default)]
    pub unit: PieceUnit,
}

/// What one ticked row of a file is.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub enum PieceUnit {
    /// One match of an `ast_edit` rewrite.
    #[default]
    Replacement,
    /// One run of changed lines of the file's diff.
    Hunk,
}
