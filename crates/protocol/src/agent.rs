//! The agent session in the window: the conversation panel's events, its saved log, and the
//! provider settings.
//!
//! The shell runs one agent turn at a time per session (`start_agent_turn`) and forwards
//! every event of the turn as an `agent-event` ([`AgentUpdate`]). The same updates are kept
//! for the conversation, so a reloaded window can show it again (`get_conversation`).

use serde::{Deserialize, Serialize};
use serde_json::Value;
use ts_rs::TS;

use crate::vocab::{Actor, ResolveChoice};

/// Payload of the `agent-event` event, and one entry of [`ConversationView::updates`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct AgentUpdate {
    /// The turn this event belongs to (returned by `start_agent_turn`): from 1, growing
    /// within the session (a new conversation does not restart it, so a late event of a
    /// replaced conversation is recognisable).
    #[ts(type = "number")]
    pub turn: u64,
    pub event: AgentEvent,
}

/// What the agent loop reports while a turn runs. `step` counts model requests in the turn,
/// from 1. `turnDone` is always the last event of a turn.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(tag = "kind", rename_all = "camelCase", rename_all_fields = "camelCase")]
pub enum AgentEvent {
    /// The person's prompt that started the turn.
    Prompt { text: String },
    /// A piece of assistant text as it streams in.
    TextDelta { step: u32, text: String },
    /// The provider answered 429/5xx; the request is sent again after `delayMs`.
    Retrying {
        step: u32,
        attempt: u32,
        max_attempts: u32,
        #[ts(type = "number")]
        delay_ms: u64,
        status: u16,
    },
    /// A whole assistant message, once streamed.
    AssistantMessage { step: u32, content: Option<String>, tool_calls: Vec<AgentToolCall> },
    /// A tool call is about to run.
    ToolCallStarted {
        step: u32,
        call_id: String,
        tool: String,
        /// The parsed arguments, or the raw text when they are not valid JSON.
        #[ts(type = "unknown")]
        arguments: Value,
    },
    /// The model called `resolve` under the `human` policy: it waits until the person
    /// applies or discards the top action.
    WaitingForPerson {
        step: u32,
        call_id: String,
        /// What the model proposes (`null` when it wrote something else).
        proposed_action: Option<ResolveChoice>,
        proposed_reason: Option<String>,
        /// The action it waits on (the top of the stack).
        action_id: Option<String>,
    },
    /// A tool call's result.
    ToolResult {
        step: u32,
        call_id: String,
        tool: String,
        is_error: bool,
        /// What the conversation shows of the result: its first line, at most
        /// `TOOL_RESULT_VIEW_CHARS` characters. The model gets the whole result; the window
        /// keeps no more than this for the life of the conversation.
        text: String,
        /// Actions this call put on the stack (a preview); the UI links to their queue cards.
        pushed_action_ids: Vec<String>,
        /// For a `resolve` call that decided: what, why and who.
        resolved: Option<ResolvedInfo>,
    },
    /// The turn failed; `message` names the URL, model or variable involved and what to do.
    Error { code: AgentErrorCode, message: String },
    /// The turn ended.
    TurnDone { outcome: TurnOutcome, steps: u32 },
}

/// One tool call of an assistant message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct AgentToolCall {
    pub id: String,
    pub name: String,
    /// The argument text as the model wrote it.
    pub arguments: String,
}

/// What a `resolve` call decided.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ResolvedInfo {
    pub action: ResolveChoice,
    pub reason: String,
    pub label: String,
    /// The label's badge (see [`crate::ActionSummary::badge`]); `null` when it has none.
    pub badge: Option<String>,
    /// The label without its badge.
    pub summary: String,
    pub action_id: String,
    /// The person (human policy: the model proposed, the person decided) or the agent.
    pub decided_by: Actor,
}

/// How a turn ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub enum TurnOutcome {
    /// The model answered without tool calls.
    Answered,
    /// The turn stopped while the model waited for a review.
    WaitingForPerson,
    /// Stop was pressed, or a new conversation started.
    Cancelled,
    /// The model made too many requests in one turn.
    MaxSteps,
    /// An error ended the turn (an `error` event came before).
    Failed,
}

impl crate::snake::SnakeCase for TurnOutcome {
    const ALL: &'static [Self] = &[
        TurnOutcome::Answered,
        TurnOutcome::WaitingForPerson,
        TurnOutcome::Cancelled,
        TurnOutcome::MaxSteps,
        TurnOutcome::Failed,
    ];
    fn snake(self) -> &'static str {
        match self {
            TurnOutcome::Answered => "answered",
            TurnOutcome::WaitingForPerson => "waiting_for_person",
            TurnOutcome::Cancelled => "cancelled",
            TurnOutcome::MaxSteps => "max_steps",
            TurnOutcome::Failed => "failed",
        }
    }
}

/// Why a turn failed, for the UI to branch on (e.g. to offer the settings).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub enum AgentErrorCode {
    /// 401: the API key is missing or wrong.
    Unauthorized,
    /// 404: the provider does not know the model (or the base URL is wrong).
    ModelNotFound,
    ConnectionRefused,
    ConnectTimeout,
    IdleTimeout,
    /// Could not reach the provider for another reason (DNS, TLS…).
    Connect,
    /// Another HTTP error status (after retries).
    HttpStatus,
    /// The provider's answer could not be read.
    MalformedResponse,
    ProviderError,
    StreamBroken,
    Truncated,
    /// The settings are invalid.
    Config,
    MaxSteps,
    Other,
}

/// Returned by `get_conversation`: the open session's conversation so far.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ConversationView {
    /// The turn running now, if any.
    #[ts(type = "number | null")]
    pub running_turn: Option<u64>,
    /// Every update of this conversation in order (text deltas included).
    pub updates: Vec<AgentUpdate>,
}

/// Returned by `new_conversation`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct NewConversationOutcome {
    /// The result text of each pending action discarded first, top first.
    pub discarded: Vec<String>,
}

/// Where the agent's API key comes from (`AgentSettings::api_key_source`). The key itself
/// never crosses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub enum ApiKeySource {
    /// The environment variable the settings name.
    Environment,
    /// The system keyring (Secret Service).
    Keyring,
    /// No key: requests go without one (local servers accept that).
    None,
}

/// The provider settings as the settings panel shows them (`get_agent_settings`,
/// `save_agent_settings`). The API key itself never crosses: only whether it is set.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct AgentSettings {
    /// e.g. `https://api.openai.com/v1`; requests go to `{baseUrl}/chat/completions`.
    pub base_url: String,
    pub model: String,
    /// The name of the environment variable holding the API key.
    pub api_key_env: String,
    /// Whether that variable is set (non-empty) in the app's environment.
    pub api_key_is_set: bool,
    /// Where the key the agent sends comes from now: the variable wins when set, else a key
    /// stored in the system keyring for this base URL (typed into the settings dialog).
    pub api_key_source: ApiKeySource,
    /// Why the system keyring could not be used (none running, locked), with what to do;
    /// `null` when it could.
    pub keyring_problem: Option<String>,
    /// Seconds each `resolve` of the agent waits for your decision before the wait is renewed
    /// (no model request meanwhile).
    #[ts(type = "number")]
    pub resolve_wait_secs: u64,
    /// Where the settings are saved (`<config>/resolve-desk/agent.json`).
    pub config_path: String,
}
