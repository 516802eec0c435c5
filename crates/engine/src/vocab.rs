//! The engine's small shared words: who made a call, who decides, a call as made, and what
//! the next model request must do about tools. Everything else in the engine may use them;
//! they use nothing of the engine.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A tool call as made: name and parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    pub tool: String,
    pub params: Value,
}

/// Who made a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Actor {
    Agent,
    Person,
    Script,
}

/// Who decides pending actions. Enforced by [`Session::call`] for every caller: under
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
