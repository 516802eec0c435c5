//! # resolve-agent
//!
//! Drivers that make tool calls on a [`resolve_engine::Session`]: the scripted driver
//! ([`script`], JSON Lines of tool calls, used by `rdesk run` and the app's "Run script…")
//! and the LLM agent loop ([`AgentLoop`]), which talks to an OpenAI-compatible Chat
//! Completions provider ([`llm`]) or replays a recorded conversation ([`replay`]).
//!
//! Why it is shaped this way: the loop never decides policy. Per request it offers what
//! the session says ([`Session::offered_tools`](resolve_engine::Session::offered_tools),
//! [`Session::tool_choice`](resolve_engine::Session::tool_choice), reminders), and every
//! tool call goes through `Session::call_with(Actor::Agent, ..)`, so under the `human`
//! policy the engine itself makes an agent's `resolve` wait for the person. One loop serves
//! the app's conversation panel and `rdesk agent`; a live provider and a replay file are
//! two [`ModelSource`]s of the same loop.
//!
//! ## Public API (stable; the app builds on it)
//!
//! ```text
//! llm::ProviderConfig { base_url, model, api_key_env, connect_timeout_secs, idle_timeout_secs, max_attempts }
//!     ::default()                       OpenAI, gpt-4o-mini, OPENAI_API_KEY, 10 s, 120 s, 4
//!     ::new(base_url, model)
//!     ::user_config_dir() -> Option<PathBuf>      $XDG_CONFIG_HOME or ~/.config
//!     ::load(config_dir) / .save(config_dir)      <config_dir>/resolve-desk/agent.json (atomic)
//!     .validate() .endpoint() .api_key_is_set()   the key itself is never stored or returned
//! llm::LlmClient::new(config)                     reads the key from config.api_key_env (unset: no header)
//!     .complete(&ChatRequest, &cancel, &mut on_client_event) -> Result<AssistantReply, LlmError>
//! llm::LlmError (+ .code(): unauthorized, model_not_found, connection_refused, connect_timeout,
//!     idle_timeout, connect, http_status, malformed_response, provider_error, stream_broken,
//!     truncated, cancelled, config, client)
//! Replay::load(path) / Replay::from_reader(name, reader)
//! ModelSource::Live(LlmClient) | ModelSource::Replay(Replay)
//! AgentLoop::new(model).with_max_steps(n).with_conversation(c).stop_when_waiting(bool)
//!     .run_turn(&session, prompt, cancel: CancellationToken, on_event: impl FnMut(AgentEvent) + Send)
//!         -> Result<TurnOutcome, AgentError>       (the conversation is kept across turns)
//!     .conversation() .reset() .model() .set_model(m)
//! AgentEvent (serde: {"kind": snake_case, ...}):
//!     text_delta, retrying, assistant_message, tool_call_started, waiting_for_person,
//!     tool_result, error {code, message}, turn_done {outcome, steps, pending} (always last)
//!     every event but text_delta/retrying/error carries `pending`: the stack after it, top first
//! TurnOutcome: answered | waiting_for_person | cancelled | max_steps | failed
//! AgentError (+ .code()): Llm(LlmError) | Replay(ReplayError) | MaxSteps | Cancelled
//! Conversation::new() (DEFAULT_SYSTEM_PROMPT) / with_system_prompt(s); .messages() .clear()
//!     .elide_resolved(on_stack) — a preview's result becomes elided_note(ids) once its actions
//!     left the stack (the loop does it before every request and at the end of a turn)
//! pending_stack(&session) -> Vec<PendingSummary>
//! ```
//!
//! Every tool call runs as `Actor::Agent` with `ToolContext::with_client(model name)` (`replay`
//! for a replay), so previews record `pushed_by` and proposals their `client`.
//!
//! Reminders (SPEC §7) are appended to the last tool result message before the next request
//! (a user message when the last message is not a tool result); see [`turn`].
//!
//! ## Replay format
//!
//! JSON Lines, one assistant turn per model request; blank and `#` lines skipped:
//! `{"content": "text", "tool_calls": [{"name": "resolve", "arguments": {"action": "apply", "reason": "ok"}}]}`.
//! `arguments` may be a string (the raw argument text, e.g. invalid JSON); `id` is optional.
//! A turn without `tool_calls` ends the loop's turn. See [`replay`].
//!
//! Modules, in reading order: [`turn`] (the loop), [`event`], [`replay`], [`llm`]
//! (`config`, `client`, `sse`, `wire`), [`script`], and with the `fake-llm` feature
//! `fake` (a local OpenAI-compatible server for tests and benchmarks).

pub mod event;
#[cfg(feature = "fake-llm")]
pub mod fake;
pub mod llm;
pub mod replay;
pub mod script;
pub mod turn;

pub use event::{AgentEvent, ToolCallInfo, TurnOutcome};
pub use llm::{LlmClient, LlmError, ProviderConfig};
pub use replay::{Replay, ReplayError};
pub use script::pending as pending_stack;
pub use script::{
    parse_line, run_script, run_script_in, run_step, run_step_in, PendingSummary, ScriptError, ScriptLine, StepReport,
};
pub use turn::{
    elided_note, AgentError, AgentLoop, Conversation, ModelSource, DEFAULT_MAX_STEPS, DEFAULT_SYSTEM_PROMPT,
};
