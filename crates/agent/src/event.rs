//! What the loop reports while a turn runs. Every event is serde-serialisable
//! (`{"kind": "...", ...}`, snake_case), so the app can forward it as is and `rdesk agent`
//! prints the loggable ones as JSON Lines.

use serde::Serialize;
use serde_json::Value;

use crate::script::PendingSummary;

/// One tool call of an assistant message, as the model made it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolCallInfo {
    /// The model's `tool_call_id`.
    pub id: String,
    pub name: String,
    /// The argument text as the model wrote it (may be invalid JSON).
    pub arguments: String,
}

/// How a turn ended (one definition with the window's; `snake_case` in events).
pub use resolve_protocol::TurnOutcome;

/// An event of a turn. `step` counts model requests in the turn, from 1.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum AgentEvent {
    /// A piece of assistant text as it streams in.
    TextDelta { step: usize, text: String },
    /// The provider answered 429/5xx; the request is sent again after `delay_ms`.
    Retrying { step: usize, attempt: u32, max_attempts: u32, delay_ms: u64, status: u16 },
    /// A whole assistant message (text and tool calls), once streamed.
    AssistantMessage {
        step: usize,
        content: Option<String>,
        tool_calls: Vec<ToolCallInfo>,
        pending: Vec<PendingSummary>,
    },
    /// A tool call is about to run. `arguments` is the parsed object, or the raw text when
    /// it is not valid JSON. `session_call_id` is the call's id in the session transcript.
    ToolCallStarted {
        step: usize,
        call_id: String,
        session_call_id: String,
        tool: String,
        arguments: Value,
        pending: Vec<PendingSummary>,
    },
    /// The model called `resolve` under the `human` policy: the call now waits until a person
    /// applies or discards the top action. Emitted before the call blocks.
    WaitingForPerson {
        step: usize,
        call_id: String,
        session_call_id: String,
        /// What the model proposes: `apply` or `discard` (as it wrote it).
        proposed_action: Option<String>,
        proposed_reason: Option<String>,
        pending: Vec<PendingSummary>,
    },
    /// A tool call's result, with the stack after it.
    ToolResult {
        step: usize,
        call_id: String,
        session_call_id: String,
        tool: String,
        is_error: bool,
        error_code: Option<String>,
        text: String,
        details: Option<Value>,
        pending: Vec<PendingSummary>,
        /// Ids of the actions this call pushed (typed, from the engine; not printed by
        /// `rdesk agent`, whose line format is fixed).
        #[serde(skip)]
        pushed_action_ids: Vec<String>,
        /// For a `resolve` that decided: what was decided, and who decided it (the person, when
        /// the agent waited under the `human` policy). Not printed.
        #[serde(skip)]
        /// Boxed: the details are large and most events have none.
        resolved: Option<Box<(resolve_engine::ResolveDetails, resolve_engine::Actor)>>,
    },
    /// The turn failed; `code` is stable (e.g. `unauthorized`, `model_not_found`,
    /// `connection_refused`, `idle_timeout`, `malformed_response`, `max_steps`).
    Error { code: String, message: String },
    /// Always the last event of a turn.
    TurnDone {
        #[serde(with = "resolve_protocol::snake")]
        outcome: TurnOutcome,
        steps: usize,
        pending: Vec<PendingSummary>,
    },
}
