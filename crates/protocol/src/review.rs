//! A review: the person's comments on lines of a pending action, kept with it until the
//! decision and sent with it (Apply, Apply part, Request changes).

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// Which side of a file's diff a comment is on (the engine's, the journal's, an agent's and
/// the window's word: `old` or `new` in every wire form).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub enum CommentSide {
    /// The text the preview read (a removed line).
    Old,
    /// The text the action proposes (an added or unchanged line).
    #[default]
    New,
}

impl CommentSide {
    pub fn as_str(self) -> &'static str {
        match self {
            CommentSide::Old => "old",
            CommentSide::New => "new",
        }
    }
}

/// One comment, anchored to what it was written against.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ReviewComment {
    /// Unique within the action (`c1`, …): what `edit_comment` / `delete_comment` name.
    pub id: String,
    /// Workspace-relative, as the action's file list shows it.
    pub path: String,
    pub side: CommentSide,
    /// 1-based, inclusive.
    pub start_line: u32,
    pub end_line: u32,
    /// The exact lines commented on, joined by `\n` (cut with `…` when long).
    pub quote: String,
    pub text: String,
    /// The `ast_edit` replacement it is on (`FileReplacement::id`), when it is on one.
    pub replacement_id: Option<u32>,
    /// The agent's result line for it: `path:line: "quoted line" — comment`.
    pub rendered: String,
}

/// A comment of an earlier round of the review, shown beside the lines it was on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct EarlierComment {
    /// The round it was written in.
    pub round: u32,
    /// As written: its path, side, lines and quote are those of that round.
    pub comment: ReviewComment,
    /// Where its lines are in this round's diff (same side), 1-based, inclusive; `null` when
    /// this round no longer has them.
    pub now_start_line: Option<u32>,
    pub now_end_line: Option<u32>,
    /// Whether this round changed those lines.
    pub changed: bool,
}

/// Where a new comment goes (`add_comment`); the backend quotes the lines.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct CommentDraft {
    pub path: String,
    pub side: CommentSide,
    pub start_line: u32,
    /// `null`: the same as `startLine`.
    #[serde(default)]
    pub end_line: Option<u32>,
    pub text: String,
    /// On one `ast_edit` replacement: its id (the lines are then the replacement's).
    #[serde(default)]
    pub replacement_id: Option<u32>,
}

/// The review that went with a decision (`ResolveDetails::review`, `HistoryEntry::review`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Review {
    /// "Request changes": discarded so that the agent proposes again.
    pub request_changes: bool,
    /// In file order.
    pub comments: Vec<ReviewComment>,
}
