//! Resolving the top action (apply or discard) and the history of decisions.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::review::Review;
use crate::vocab::{ActionStatus, Actor, Proposal, ResolveChoice};

/// Returned by `resolve_action`.
///
/// A failed apply is *not* an `IpcError`: it is an outcome with `isError`
/// true, and the action stays on the stack with `status` stale or failed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ResolveOutcome {
    pub is_error: bool,
    /// The resolve tool's result text (e.g. `Applied 3 replacements in 2 files.`).
    pub text: String,
    pub details: Option<ResolveDetails>,
    /// The action's status after a failed apply; `null` when it left the stack.
    pub status: Option<ActionStatus>,
}

/// Details of every resolve result (SPEC §4).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ResolveDetails {
    pub action: ResolveChoice,
    pub reason: String,
    pub source_tool_name: String,
    pub label: String,
    pub action_id: String,
    /// The review sent with the decision; `null` when there was none.
    #[serde(default)]
    pub review: Option<Review>,
    /// Edit, then apply: each file the person edited, with the diff from the agent's
    /// proposal to what was written; absent when nothing was edited.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub edits: Option<Vec<EditedFile>>,
}

/// The person's own text for one file, sent with `resolve_action` (edit, then apply).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct PersonEdit {
    pub path: String,
    /// The file's whole new text, as it will be written.
    pub text: String,
}

/// What the person changed in one file before applying.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct EditedFile {
    pub path: String,
    /// Unified diff from the proposal (`--- proposal/<path>`) to what was written
    /// (`+++ written/<path>`).
    pub diff: String,
}

/// One row of `list_history`, newest first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct HistoryEntry {
    pub action: ResolveChoice,
    pub label: String,
    /// The label's badge (see [`crate::ActionSummary::badge`]); `null` when it has none.
    pub badge: Option<String>,
    /// The label without its badge.
    pub summary: String,
    pub source_tool_name: String,
    pub reason: String,
    /// The result text shown to the agent.
    pub text: String,
    /// True for a failed apply: rendered as an error, never as "Discard".
    pub is_error: bool,
    /// Unix milliseconds.
    #[ts(type = "number")]
    pub at_ms: u64,
    pub action_id: String,
    /// Decided in an earlier session of this workspace (read from the decision journal).
    pub earlier_session: bool,
    /// Who decided: the person (Apply/Discard, or the human policy), an agent (the agent
    /// policy) or a script.
    pub decided_by: Actor,
    /// The agent that made the deciding `resolve` call (agent policy), when known.
    pub client: Option<String>,
    /// When an agent asked first (human policy): what it proposed, and which agent.
    pub proposal: Option<Proposal>,
    /// For an applied change set: whether it can be undone or redone now; `null` when the
    /// entry has no undo (a discard, a failed apply, an undo itself, the demo).
    pub undo: Option<UndoInfo>,
    /// Who asked for the change: the agent or MCP client whose tool call pushed the action
    /// (the journal's record of the push), when one was named; `null` for a person's or a
    /// script's preview, or when the push was not recorded (the demo).
    #[serde(default)]
    pub asked_by: Option<String>,
    /// A partial apply, in the engine's words: `applied 38 of 40 files` (or `… replacements`);
    /// `null` for any other decision.
    #[serde(default)]
    pub partial_text: Option<String>,
    /// The review that went with the decision (its comments in file order; Request changes);
    /// `null` when there was none.
    #[serde(default)]
    pub review: Option<Review>,
}

/// Where an applied action's undo stands (`HistoryEntry::undo`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub enum UndoState {
    /// Applied (or redone): Undo is offered.
    CanUndo,
    /// Undone: Redo is offered.
    Undone,
    /// Its undo data was dropped by the retention setting: it can no longer be undone.
    Expired,
}

/// Undo / Redo of one history entry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct UndoInfo {
    pub state: UndoState,
    /// Why the last undo or redo was refused (files changed since the apply), until one succeeds.
    pub note: Option<String>,
}

/// What became of an action, for the history's outcome filter (the journal's search and
/// export use it too).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub enum HistoryOutcome {
    Applied,
    Discarded,
    /// A failed apply (the action stayed on the stack), or one a killed process interrupted.
    Failed,
    /// An applied change set undone from the history, or an undo redone.
    Reverted,
}

impl HistoryOutcome {
    pub fn as_str(self) -> &'static str {
        match self {
            HistoryOutcome::Applied => "applied",
            HistoryOutcome::Discarded => "discarded",
            HistoryOutcome::Failed => "failed",
            HistoryOutcome::Reverted => "reverted",
        }
    }
}

/// A history search (`search_history`, `export_history`). Empty text and `null`s match all.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct HistoryQuery {
    /// Found in the label, reason, result text, tool name or client name (ASCII case-insensitive).
    #[serde(default)]
    pub text: String,
    /// Only this tool's actions (`sourceToolName`).
    #[serde(default)]
    pub tool: Option<String>,
    #[serde(default)]
    pub outcome: Option<HistoryOutcome>,
    /// Decided at or after (unix milliseconds).
    #[serde(default)]
    #[ts(type = "number | null")]
    pub from_ms: Option<i64>,
    /// Decided before (unix milliseconds).
    #[serde(default)]
    #[ts(type = "number | null")]
    pub to_ms: Option<i64>,
}

/// One page of `search_history`, newest first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct HistoryPage {
    pub entries: Vec<HistoryEntry>,
    /// Where this page starts among all the matches.
    pub offset: u32,
    /// How many entries match in all.
    pub total: u32,
    /// Every tool with entries in this workspace (for the tool filter), by name.
    pub tools: Vec<String>,
}

/// What `export_history` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub enum ExportFormat {
    Json,
    Csv,
}

/// What `export_history` wrote.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ExportOutcome {
    pub path: String,
    /// How many entries it holds.
    pub count: u32,
}
