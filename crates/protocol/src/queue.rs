//! The pending-action stack as the UI sees it: summaries only. Files, diffs
//! and renames are fetched lazily per action (see [`crate::diff`]).

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::hidden::HiddenChar;

use crate::review::ReviewComment;
use crate::vocab::{ActionStatus, Proposal};

/// Returned by `list_actions`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct QueueSnapshot {
    /// The store revision this snapshot was taken at.
    #[ts(type = "number")]
    pub revision: u64,
    /// Top first: `actions[0]` is the only one that can be resolved (LIFO).
    pub actions: Vec<ActionSummary>,
}

/// One pending action.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ActionSummary {
    /// Stable within the session; sent back as `expectedId` when resolving.
    pub id: String,
    /// Short summary, e.g. `AST Edit: 3 replacements in 2 files`.
    pub label: String,
    /// The label's source part before the first `": "` (`AST Edit`); `null` when the label
    /// has none. Split by the engine's rule (SPEC §4), so the UI never parses labels.
    pub badge: Option<String>,
    /// The label without its badge (`3 replacements in 2 files`), or the whole label.
    pub summary: String,
    /// The producing tool (`custom_tool` when a custom tool omits it).
    pub source_tool_name: String,
    /// Who pushed it: the agent's client name (an MCP client's name from `initialize`, or the
    /// model name); `null` when pushed by a person, a script, or an unnamed client.
    pub pushed_by: Option<String>,
    /// Unix milliseconds.
    #[ts(type = "number")]
    pub created_at_ms: u64,
    pub status: ActionStatus,
    /// True for `actions[0]` only.
    pub is_top: bool,
    pub kind: ActionKind,
    pub counts: ActionCounts,
    /// `counts.files` as words: `1 file`, `3 files`.
    pub files_text: String,
    /// `counts.renames` as words: `1 rename`, `0 renames`.
    pub renames_text: String,
    /// The tool call that produced it, when known (enables "Run the preview again").
    pub origin: Option<ToolCallInfo>,
    /// Under the `human` policy: what an agent proposes for this action while it waits for
    /// the person (only ever on the top action).
    pub proposal: Option<Proposal>,
    /// The structured data a tool pushed with the action (`details`), shown on a custom
    /// action's card as a tree or table; absent when it gave none.
    #[serde(default)]
    #[ts(optional, type = "unknown")]
    pub details: Option<serde_json::Value>,
    /// Hidden or look-alike characters in `badge` and `summary` (absent when none).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[ts(as = "Option<Vec<HiddenChar>>", optional)]
    pub badge_hidden: Vec<HiddenChar>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[ts(as = "Option<Vec<HiddenChar>>", optional)]
    pub summary_hidden: Vec<HiddenChar>,
    /// The card's warning when the change writes hidden, bidirectional or look-alike
    /// characters (`This change contains hidden or bidirectional Unicode characters: 3 in 2
    /// files. They are shown as ⟨U+…⟩.`); absent when it writes none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub hidden_warning: Option<String>,
    /// The person's comments on it so far, in file order (sent with the decision).
    #[serde(default)]
    pub comments: Vec<ReviewComment>,
    /// The next round of a review (its agent's previous preview was discarded with "Request
    /// changes"); absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub round: Option<RoundInfo>,
    /// The files the person marked viewed (each at the proposal they viewed; a next round
    /// keeps a mark only where the file is proposed exactly as before), in path order.
    #[serde(default)]
    pub viewed: Vec<String>,
}

/// Where a preview stands in a review.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct RoundInfo {
    /// 2 for the first preview answering a "Request changes", and so on.
    pub number: u32,
    /// The label of the review's first preview.
    pub first_label: String,
    /// The previous round's preview (discarded).
    pub previous_id: String,
    /// Files proposed exactly as in the previous round: nothing new to read there.
    pub unchanged: Vec<String>,
    /// The previous round's comments, placed on this round's lines, in file order.
    pub earlier: Vec<crate::review::EarlierComment>,
}

/// What kind of preview an action is, decided from what its tool gave the engine's API
/// (never from its free-form details); what the UI shows in the centre column.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub enum ActionKind {
    /// File edits: file list + diff viewer.
    ChangeSet,
    /// Renames: old → new table.
    Rename,
    /// A custom tool's raw apply/reject: label and details only.
    Custom,
}

/// Totals over a change set or an action (files touched, lines added and removed, renames),
/// as a queue card shows them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ActionCounts {
    pub files: u32,
    pub added: u32,
    pub removed: u32,
    pub renames: u32,
}

/// A tool invocation, as recorded for re-running.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ToolCallInfo {
    pub tool: String,
    #[ts(type = "unknown")]
    pub params: serde_json::Value,
}
