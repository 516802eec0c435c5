//! The engine's small shared words: who made a call, who decides, a call as made, what
//! the next model request must do about tools, and how a pending action stands (its id,
//! status, kind, an agent's proposal on it, a rename row). Everything else in the engine may use them;
//! they use nothing of the engine.

use serde::{Deserialize, Serialize};

/// Who made a call, where a pending action stands, what kind of preview it is (a rename
/// table, a change set, or a custom tool's label and details) and what happens to an entry a
/// rename selected: the ground-floor words the window's protocol shares (one definition,
/// `resolve_protocol`).
pub use resolve_protocol::{ActionKind, ActionStatus, Actor, RenameStatus};
use serde_json::Value;

/// A tool call as made: name and parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    pub tool: String,
    pub params: Value,
}

/// Who decides pending actions. Enforced by [`Session::call`](crate::Session::call) for every caller: under
/// `Human`, an agent's `resolve` proposes and waits for a person (or a script) to decide.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ResolvePolicy {
    /// The agent waits while the stack is non-empty; a person applies or discards.
    Human,
    /// The model's own `resolve` call decides.
    Agent,
}

impl ResolvePolicy {
    pub fn as_str(self) -> &'static str {
        match self {
            ResolvePolicy::Human => "human",
            ResolvePolicy::Agent => "agent",
        }
    }
}

/// What the next model request must do about tools.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ToolChoice {
    Auto,
    /// Named tool choice: the model must call this tool.
    Forced {
        tool: String,
    },
}

/// What a decision did (a `resolve`, or an undo/redo from the history).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ResolveAction {
    Apply,
    Discard,
    /// An applied change set reverted from the history (`Session::undo`), never a `resolve`.
    Undo,
    /// An undo reverted (`Session::undo` with the undo's own record).
    Redo,
}

impl ResolveAction {
    pub fn as_str(self) -> &'static str {
        match self {
            ResolveAction::Apply => "apply",
            ResolveAction::Discard => "discard",
            ResolveAction::Undo => "undo",
            ResolveAction::Redo => "redo",
        }
    }
}

pub type ActionId = String;

/// What an agent asked for under the `human` policy: its `resolve` call does not decide, it
/// proposes, and waits for the person beside the action.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Proposal {
    pub choice: ResolveAction,
    /// The agent's reason, verbatim.
    pub reason: String,
    /// The agent or client that asked (an MCP client's name, a model's name).
    pub client: Option<String>,
    /// The `resolve` call that proposed (the latest, when the agent asked again).
    pub call_id: String,
    /// Whether that call is waiting for the person now (false once a bounded wait ended or
    /// the call was cancelled: the proposal stays, and the decision is kept for the agent).
    pub waiting: bool,
}

/// One row of a rename preview's old → new table (`to` equals `from` unless renamed).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RenameRow {
    pub from: String,
    pub to: String,
    /// `rename`, `unchanged` or `directory_skipped` here (the journal keeps rows so).
    #[serde(with = "resolve_protocol::snake")]
    pub status: RenameStatus,
}
