//! The words the other modules share: who acted, what was chosen, where a pending action
//! stands, and an agent's proposal on it. They import nothing else of this crate, so no two
//! modules import each other.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// Who made a call or a decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub enum Actor {
    Person,
    Agent,
    Script,
}

/// The person's decision; the `action` argument of `resolve_action`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub enum ResolveChoice {
    Apply,
    Discard,
    /// "Request changes": a discard whose result carries the review (the comments kept with
    /// the action), so that the agent answers it with a new preview.
    RequestChanges,
    /// An applied action reverted from the history (`undo_decision`); only in the history.
    Undo,
    /// An undo reverted (`redo_decision`); only in the history.
    Redo,
}

/// Status of a pending action (SPEC §2).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum ActionStatus {
    Pending,
    /// The files it previewed changed on disk since the preview.
    Stale {
        /// Workspace-relative paths that changed.
        files: Vec<String>,
        message: String,
    },
    /// The last apply raised an error; the action was kept.
    Failed {
        error: String,
    },
    /// Restored after a restart without its apply (a custom tool's code cannot be stored):
    /// Apply is refused, Discard works. `message` says so (starts `Orphaned: can only be
    /// discarded`).
    Orphaned {
        message: String,
    },
}

impl ActionStatus {
    pub fn as_str(&self) -> &'static str {
        match self {
            ActionStatus::Pending => "pending",
            ActionStatus::Stale { .. } => "stale",
            ActionStatus::Failed { .. } => "failed",
            ActionStatus::Orphaned { .. } => "orphaned",
        }
    }
}

/// An agent's `resolve` call under the `human` policy: it proposes, the person decides.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Proposal {
    pub choice: ResolveChoice,
    pub reason: String,
    /// The agent that proposed (an MCP client's name, or the model name); `null` when unknown.
    pub client: Option<String>,
    /// The proposing call's id in the session transcript.
    pub call_id: String,
    /// Whether the agent waits for the decision now; false once its wait ended (a client's
    /// time-out, a bounded wait, a cancel): the decision is then kept for it and given to its
    /// next call.
    pub waiting: bool,
}
