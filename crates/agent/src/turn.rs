//! The agent loop: one user prompt → model requests and tool calls until the model answers
//! without tool calls (or the turn is cancelled, fails, or reaches its step limit).
//!
//! Per request the loop asks the session what to offer — never deciding policy itself:
//! - `tools` = [`Session::offered_tools`] as function tools; `tool_choice` =
//!   `{"type":"function","function":{"name":"resolve"}}` while [`Session::tool_choice`] is
//!   `Forced`, omitted (the provider's default) otherwise.
//! - **Reminders** ([`Session::take_reminders`], one per push during an agent call) are
//!   taken just before the request and appended to the *last tool result message* the model
//!   reads (after a blank line, one per line). When the last message is not a tool result,
//!   they go in a user message of their own. They are not shown in events: they are
//!   instructions to the model, not results.
//! - Every tool call of an assistant message runs, in order, through
//!   `Session::call_with(Actor::Agent, ..)` with the model's name as the client and the
//!   turn's cancellation token; each gets its own `role: tool` message with its
//!   `tool_call_id`. Arguments that are not a JSON object get an error result (the tool is
//!   not called). An error result's text is prefixed `Error: ` for the model.
//! - Under the `human` policy an agent's `resolve` waits in the engine until a person
//!   decides; the loop emits [`AgentEvent::WaitingForPerson`] before it blocks, and the
//!   person's decision is the result the model reads. With
//!   [`AgentLoop::stop_when_waiting`] the loop ends the turn there instead
//!   ([`TurnOutcome::WaitingForPerson`]) and makes no `resolve` call at all.
//! - When the turn ends early (cancel, stop), calls not run get a result saying so, so the
//!   conversation stays well-formed for the next turn.

use resolve_engine::{
    Actor, CallRecord, CancellationToken, ResolvePolicy, Session, ToolContext, ToolResult, RESOLVE_TOOL_NAME,
};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::event::{AgentEvent, ToolCallInfo, TurnOutcome};
use crate::llm::wire::{ChatRequest, Message, WireToolCall};
use crate::llm::{AssistantReply, ClientEvent, LlmClient, LlmError};
use crate::replay::{Replay, ReplayError};
use crate::script::pending;

/// Model requests per turn unless set otherwise.
pub const DEFAULT_MAX_STEPS: usize = 32;

/// The default system prompt: how the desk works, in the model's terms.
pub const DEFAULT_SYSTEM_PROMPT: &str = "You are a coding agent working in a project folder through tools. \
Tools that change files (such as ast_edit and batch_rename_preview) never write directly: they compute a preview \
and put a pending action on a stack. While an action is pending you must call the resolve tool to apply or discard \
it, with a short reason; nothing is written until then. A person may review and decide instead of you: the resolve \
result then tells you what they decided and why. When the person requests changes, the result lists their \
comments after the decision, one per line as `path:line: \"quoted line\" — comment`: answer every comment with a \
new preview that addresses it. When the result says `Applied with the person's edits`, the diff after it is what \
they changed in your proposal before applying: the files now hold their text, so build on it. Keep your answers short.";

/// Where assistant messages come from: a live provider, or a recorded conversation.
#[derive(Debug, Clone)]
pub enum ModelSource {
    Live(LlmClient),
    Replay(Replay),
}

impl ModelSource {
    /// The name recorded as the client of the calls it makes (the model name, or `replay`).
    pub fn model_name(&self) -> String {
        match self {
            ModelSource::Live(c) => c.model().to_string(),
            ModelSource::Replay(_) => "replay".to_string(),
        }
    }

    async fn next(
        &mut self,
        request: &ChatRequest,
        cancel: &CancellationToken,
        on_event: &mut (dyn FnMut(ClientEvent) + Send),
    ) -> Result<AssistantReply, AgentError> {
        match self {
            ModelSource::Live(client) => client.complete(request, cancel, on_event).await.map_err(AgentError::from),
            ModelSource::Replay(replay) => {
                if cancel.is_cancelled() {
                    return Err(AgentError::Cancelled);
                }
                let reply = replay.next_turn()?;
                if let Some(text) = &reply.content {
                    on_event(ClientEvent::TextDelta(text.clone()));
                }
                Ok(reply)
            }
        }
    }
}

/// Why a turn ended without an answer.
#[derive(Debug, thiserror::Error)]
pub enum AgentError {
    #[error(transparent)]
    Llm(LlmError),
    #[error(transparent)]
    Replay(#[from] ReplayError),
    #[error("the model made {max} requests in this turn without finishing, so the turn was stopped. Anything still pending stays on the stack; send another message to go on.")]
    MaxSteps { max: usize },
    #[error("the turn was cancelled")]
    Cancelled,
}

impl From<LlmError> for AgentError {
    fn from(e: LlmError) -> Self {
        match e {
            LlmError::Cancelled => AgentError::Cancelled,
            other => AgentError::Llm(other),
        }
    }
}

impl AgentError {
    /// A stable code (the provider error's code for provider errors).
    pub fn code(&self) -> &'static str {
        match self {
            AgentError::Llm(e) => e.code(),
            AgentError::Replay(ReplayError::Exhausted { .. }) => "replay_exhausted",
            AgentError::Replay(_) => "replay_malformed",
            AgentError::MaxSteps { .. } => "max_steps",
            AgentError::Cancelled => "cancelled",
        }
    }
}

/// The message history, kept across turns. Serialisable, so it can be saved and shown.
///
/// Lean: the result of a call that pushed pending actions (a preview, often hundreds of
/// kilobytes of diffs) is kept only while one of them is on the stack. Once they have all
/// left it (applied or discarded), the result's body is replaced by a short note
/// ([`elided_note`]) before the next request, so a long session does not carry every
/// preview it ever made. The `resolve` results, which say what happened, stay.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Conversation {
    messages: Vec<Message>,
    /// Tool results still whole that pushed actions: their call id and the actions' ids.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    previews: Vec<PreviewResult>,
}

/// A tool result message whose body is kept while one of its actions is pending.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct PreviewResult {
    tool_call_id: String,
    action_ids: Vec<String>,
}

/// What replaces the body of a tool result whose pending actions have left the stack.
pub fn elided_note(action_ids: &[String]) -> String {
    format!(
        "(Preview result elided: its pending action {} left the stack (applied or discarded; the resolve result says which). Run the tool again to see the current state.)",
        action_ids.join(", ")
    )
}

impl Default for Conversation {
    fn default() -> Self {
        Self::new()
    }
}

impl Conversation {
    /// A new conversation with [`DEFAULT_SYSTEM_PROMPT`].
    pub fn new() -> Self {
        Self::with_system_prompt(DEFAULT_SYSTEM_PROMPT)
    }

    pub fn with_system_prompt(prompt: impl Into<String>) -> Self {
        Conversation { messages: vec![Message::System { content: prompt.into() }], previews: Vec::new() }
    }

    /// Every message so far, the system prompt first.
    pub fn messages(&self) -> &[Message] {
        &self.messages
    }

    /// Forgets everything but the system prompt.
    pub fn clear(&mut self) {
        self.messages.retain(|m| matches!(m, Message::System { .. }));
        self.previews.clear();
    }

    /// Remembers that the result of `tool_call_id` pushed `action_ids` (nothing when empty).
    fn note_pushed(&mut self, tool_call_id: &str, action_ids: &[String]) {
        if !action_ids.is_empty() {
            self.previews
                .push(PreviewResult { tool_call_id: tool_call_id.to_string(), action_ids: action_ids.to_vec() });
        }
    }

    /// Replaces the body of every tool result whose pushed actions are all off the stack
    /// (`on_stack` says which ids are still there) with [`elided_note`]. Returns how many
    /// results were elided.
    pub fn elide_resolved(&mut self, on_stack: impl Fn(&str) -> bool) -> usize {
        let (done, kept): (Vec<PreviewResult>, Vec<PreviewResult>) =
            std::mem::take(&mut self.previews).into_iter().partition(|p| !p.action_ids.iter().any(|id| on_stack(id)));
        self.previews = kept;
        for p in &done {
            for m in self.messages.iter_mut().rev() {
                if let Message::Tool { tool_call_id, content } = m {
                    if *tool_call_id == p.tool_call_id {
                        *content = elided_note(&p.action_ids);
                        break;
                    }
                }
            }
        }
        done.len()
    }

    fn push(&mut self, m: Message) {
        self.messages.push(m);
    }

    /// Appends reminders to the last tool result, or as a user message when there is none last.
    fn add_reminders(&mut self, reminders: &[String]) {
        if reminders.is_empty() {
            return;
        }
        let text = reminders.join("\n");
        match self.messages.last_mut() {
            Some(Message::Tool { content, .. }) => {
                content.push_str("\n\n");
                content.push_str(&text);
            }
            _ => self.messages.push(Message::User { content: text }),
        }
    }
}

/// A model source, a conversation and the loop's settings: one per conversation panel.
#[derive(Debug, Clone)]
pub struct AgentLoop {
    model: ModelSource,
    conversation: Conversation,
    max_steps: usize,
    stop_when_waiting: bool,
    /// How long each `resolve` waits for the person before the loop asks again by itself.
    resolve_wait: std::time::Duration,
}

impl AgentLoop {
    pub fn new(model: ModelSource) -> Self {
        AgentLoop {
            model,
            conversation: Conversation::new(),
            max_steps: DEFAULT_MAX_STEPS,
            stop_when_waiting: false,
            resolve_wait: resolve_engine::DEFAULT_RESOLVE_WAIT,
        }
    }

    /// How long each `resolve` waits for the person (under the `human` policy) before the
    /// wait is renewed: by the loop itself, without a model request (so no HTTP request is
    /// held open and no tokens are spent while the person reads). With
    /// [`stop_when_waiting`](Self::stop_when_waiting), how long the turn waits before it stops
    /// (0: at once).
    pub fn with_resolve_wait(mut self, wait: std::time::Duration) -> Self {
        self.resolve_wait = wait;
        self
    }

    /// Model requests per turn before it is stopped (at least 1).
    pub fn with_max_steps(mut self, max_steps: usize) -> Self {
        self.max_steps = max_steps.max(1);
        self
    }

    /// Starts from this conversation (e.g. another system prompt, or a saved one).
    pub fn with_conversation(mut self, conversation: Conversation) -> Self {
        self.conversation = conversation;
        self
    }

    /// When true, an agent's `resolve` under the `human` policy ends the turn
    /// ([`TurnOutcome::WaitingForPerson`]) instead of waiting: for `rdesk`, where no person
    /// is at the desk.
    pub fn stop_when_waiting(mut self, stop: bool) -> Self {
        self.stop_when_waiting = stop;
        self
    }

    pub fn conversation(&self) -> &Conversation {
        &self.conversation
    }

    /// Starts a new conversation (same model and settings).
    pub fn reset(&mut self) {
        self.conversation.clear();
    }

    pub fn model(&self) -> &ModelSource {
        &self.model
    }

    /// Replaces the model source (e.g. after the settings changed); the history is kept.
    pub fn set_model(&mut self, model: ModelSource) {
        self.model = model;
    }

    /// Runs one turn for `prompt`. Events go to `on_event` as they happen, the last one
    /// always [`AgentEvent::TurnDone`]; a failure is also reported as [`AgentEvent::Error`]
    /// before it. Returns how the turn ended, or why it failed.
    pub async fn run_turn(
        &mut self,
        session: &Session,
        prompt: &str,
        cancel: CancellationToken,
        mut on_event: impl FnMut(AgentEvent) + Send,
    ) -> Result<TurnOutcome, AgentError> {
        // Decisions made while this agent was not waiting (the turn was stopped, the app
        // restarted) reach the model first, with the prompt.
        let kept = session.waits().take(&self.model.model_name());
        let content = if kept.is_empty() {
            prompt.to_string()
        } else {
            format!("{}\n\n{prompt}", resolve_engine::waits::delivery_preface(&kept))
        };
        self.conversation.push(Message::User { content });
        let mut steps = 0;
        let result = self.steps(session, &cancel, &mut steps, &mut on_event).await;
        self.elide_resolved(session);
        let outcome = match &result {
            Ok(o) => *o,
            Err(AgentError::Cancelled) => TurnOutcome::Cancelled,
            Err(e @ AgentError::MaxSteps { .. }) => {
                on_event(AgentEvent::Error { code: e.code().into(), message: e.to_string() });
                TurnOutcome::MaxSteps
            }
            Err(e) => {
                on_event(AgentEvent::Error { code: e.code().into(), message: e.to_string() });
                TurnOutcome::Failed
            }
        };
        on_event(AgentEvent::TurnDone { outcome, steps, pending: pending(session) });
        result
    }

    /// Elides the results of previews whose actions have left `session`'s stack.
    fn elide_resolved(&mut self, session: &Session) {
        let store = session.store();
        self.conversation.elide_resolved(|id| store.info(id).is_some());
    }

    async fn steps(
        &mut self,
        session: &Session,
        cancel: &CancellationToken,
        steps: &mut usize,
        on_event: &mut (dyn FnMut(AgentEvent) + Send),
    ) -> Result<TurnOutcome, AgentError> {
        let client_name = self.model.model_name();
        for step in 1..=self.max_steps {
            *steps = step;
            if cancel.is_cancelled() {
                return Err(AgentError::Cancelled);
            }
            self.elide_resolved(session);
            self.conversation.add_reminders(&session.take_reminders());
            let request = ChatRequest::new(
                &client_name,
                self.conversation.messages.clone(),
                &session.offered_tools(),
                &session.tool_choice(),
            );
            let reply = {
                let mut forward = |e: ClientEvent| {
                    on_event(match e {
                        ClientEvent::TextDelta(text) => AgentEvent::TextDelta { step, text },
                        ClientEvent::Retrying { attempt, max_attempts, delay_ms, status } => {
                            AgentEvent::Retrying { step, attempt, max_attempts, delay_ms, status }
                        }
                    })
                };
                self.model.next(&request, cancel, &mut forward).await?
            };
            self.conversation
                .push(Message::Assistant { content: reply.content.clone(), tool_calls: reply.tool_calls.clone() });
            on_event(AgentEvent::AssistantMessage {
                step,
                content: reply.content.clone(),
                tool_calls: reply
                    .tool_calls
                    .iter()
                    .map(|c| ToolCallInfo {
                        id: c.id.clone(),
                        name: c.function.name.clone(),
                        arguments: c.function.arguments.clone(),
                    })
                    .collect(),
                pending: pending(session),
            });
            if reply.tool_calls.is_empty() {
                return Ok(TurnOutcome::Answered);
            }
            let mut calls = reply.tool_calls.iter();
            while let Some(call) = calls.next() {
                if cancel.is_cancelled() {
                    self.not_run(std::iter::once(call).chain(calls), "the turn was cancelled before this call ran");
                    return Err(AgentError::Cancelled);
                }
                let stop = self.run_call(session, &client_name, step, call, cancel, on_event).await;
                if stop {
                    self.not_run(calls, "the turn stopped to wait for a person's review before this call ran");
                    return Ok(TurnOutcome::WaitingForPerson);
                }
            }
        }
        Err(AgentError::MaxSteps { max: self.max_steps })
    }

    /// Runs one call and records its result. Returns true when the turn must stop to wait
    /// for a person (only with `stop_when_waiting`).
    async fn run_call(
        &mut self,
        session: &Session,
        client_name: &str,
        step: usize,
        call: &WireToolCall,
        cancel: &CancellationToken,
        on_event: &mut (dyn FnMut(AgentEvent) + Send),
    ) -> bool {
        let tool = call.function.name.as_str();
        let session_call_id = session.new_call_id();
        let parsed = parse_arguments(&call.function.arguments);
        on_event(AgentEvent::ToolCallStarted {
            step,
            call_id: call.id.clone(),
            session_call_id: session_call_id.clone(),
            tool: tool.to_string(),
            arguments: parsed.clone().unwrap_or_else(|_| Value::String(call.function.arguments.clone())),
            pending: pending(session),
        });
        let record = match parsed {
            Err(message) => CallRecord {
                result: ToolResult {
                    is_error: true,
                    error_code: Some("invalid_params".into()),
                    ..ToolResult::text(message.replace("{tool}", tool))
                },
                pushed: Vec::new(),
                decided_by: None,
                decision: None,
            },
            Ok(args) => {
                // A resolve the engine would refuse (bad parameters) does not wait: let it fail.
                let well_formed = matches!(args.get("action").and_then(Value::as_str), Some("apply" | "discard"))
                    && args.get("reason").and_then(Value::as_str).is_some_and(|r| !r.trim().is_empty());
                let waits = tool == RESOLVE_TOOL_NAME
                    && well_formed
                    && session.policy() == ResolvePolicy::Human
                    && session.store().has_pending();
                if waits {
                    on_event(AgentEvent::WaitingForPerson {
                        step,
                        call_id: call.id.clone(),
                        session_call_id: session_call_id.clone(),
                        proposed_action: args.get("action").and_then(Value::as_str).map(String::from),
                        proposed_reason: args.get("reason").and_then(Value::as_str).map(String::from),
                        pending: pending(session),
                    });
                    if self.stop_when_waiting && self.resolve_wait.is_zero() {
                        self.conversation.push(Message::Tool {
                            tool_call_id: call.id.clone(),
                            content: "Not decided yet: a person reviews pending actions at this desk and nobody was there; nothing was applied or discarded.".into(),
                        });
                        return true;
                    }
                }
                let wait = resolve_engine::WaitBound::For(self.resolve_wait);
                let mut call_id = session_call_id.clone();
                loop {
                    let ctx = ToolContext::new(call_id.clone())
                        .with_cancel(cancel.clone())
                        .with_client(client_name)
                        .with_wait(wait);
                    let record = session.call_traced(Actor::Agent, ctx, tool, args.clone()).await;
                    // A bounded wait that ended before the person decided: wait again, without
                    // asking the model (or stop the turn, for `rdesk`).
                    let still_waiting = waits
                        && !record.result.is_error
                        && record.result.details.as_ref().and_then(|d| d.get("waiting")) == Some(&Value::Bool(true));
                    if !still_waiting || cancel.is_cancelled() {
                        break record;
                    }
                    if self.stop_when_waiting {
                        self.conversation
                            .push(Message::Tool { tool_call_id: call.id.clone(), content: model_text(&record.result) });
                        return true;
                    }
                    call_id = session.new_call_id();
                }
            }
        };
        let resolved = match record.decided_by {
            Some(by) if !record.result.is_error => record.decision.clone().map(|d| Box::new((d, by))),
            _ => None,
        };
        let result = record.result;
        self.conversation.push(Message::Tool { tool_call_id: call.id.clone(), content: model_text(&result) });
        self.conversation.note_pushed(&call.id, &record.pushed);
        on_event(AgentEvent::ToolResult {
            step,
            call_id: call.id.clone(),
            session_call_id,
            tool: tool.to_string(),
            is_error: result.is_error,
            error_code: result.error_code.clone(),
            text: result.text_content(),
            details: result.details.clone(),
            pending: pending(session),
            pushed_action_ids: record.pushed,
            resolved,
        });
        false
    }

    fn not_run<'a>(&mut self, calls: impl Iterator<Item = &'a WireToolCall>, why: &str) {
        for call in calls {
            self.conversation
                .push(Message::Tool { tool_call_id: call.id.clone(), content: format!("Not run: {why}.") });
        }
    }
}

/// The arguments as a JSON object; `Err` with a message for the model (`{tool}` is replaced
/// by the tool name). An empty text means `{}`.
fn parse_arguments(text: &str) -> Result<Value, String> {
    if text.trim().is_empty() {
        return Ok(Value::Object(Default::default()));
    }
    match serde_json::from_str::<Value>(text) {
        Ok(v @ Value::Object(_)) => Ok(v),
        Ok(_) => Err(format!(
            "The arguments of this {{tool}} call must be a JSON object, got: {}. Nothing was run; call the tool again with an object of its parameters.",
            quote(text)
        )),
        Err(e) => Err(format!(
            "The arguments of this {{tool}} call are not valid JSON ({e}): {}. Nothing was run; call the tool again with a JSON object of its parameters.",
            quote(text)
        )),
    }
}

fn quote(text: &str) -> String {
    if text.chars().count() > 200 {
        text.chars().take(200).collect::<String>() + "…"
    } else {
        text.to_string()
    }
}

/// What the model reads as a tool result: the text, `Error: `-prefixed for errors.
fn model_text(result: &ToolResult) -> String {
    let text = result.text_content();
    let text = if text.trim().is_empty() { "(the tool returned no text)".to_string() } else { text };
    if result.is_error {
        format!("Error: {text}")
    } else {
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_must_be_a_json_object() {
        assert_eq!(parse_arguments("").unwrap(), serde_json::json!({}));
        assert!(parse_arguments("{\"a\":1}").is_ok());
        assert!(parse_arguments("[1]").unwrap_err().contains("must be a JSON object, got: [1]"));
        assert!(parse_arguments("{\"a\":").unwrap_err().contains("not valid JSON"));
    }

    #[test]
    fn reminders_go_on_the_last_tool_result_or_in_a_user_message() {
        let mut c = Conversation::with_system_prompt("s");
        c.add_reminders(&["r".into()]);
        assert_eq!(c.messages().last(), Some(&Message::User { content: "r".into() }));
        c.push(Message::Tool { tool_call_id: "x".into(), content: "done".into() });
        c.add_reminders(&["r1".into(), "r2".into()]);
        assert_eq!(
            c.messages().last(),
            Some(&Message::Tool { tool_call_id: "x".into(), content: "done\n\nr1\nr2".into() })
        );
        c.clear();
        assert_eq!(c.messages().len(), 1, "clear keeps the system prompt");
    }

    #[test]
    fn results_of_previews_whose_actions_left_the_stack_are_elided() {
        let mut c = Conversation::with_system_prompt("s");
        let body = "AST Edit preview: ...\n".repeat(10_000);
        c.push(Message::Tool { tool_call_id: "c1".into(), content: body.clone() });
        c.note_pushed("c1", &["pa-1".into()]);
        c.push(Message::Tool { tool_call_id: "c2".into(), content: body.clone() });
        c.note_pushed("c2", &["pa-2".into(), "pa-3".into()]);
        c.push(Message::Tool { tool_call_id: "c3".into(), content: "Discarded".into() });
        c.note_pushed("c3", &[]);

        assert_eq!(c.elide_resolved(|_| true), 0, "everything still pending: nothing elided");
        assert_eq!(c.elide_resolved(|id| id == "pa-3"), 1, "pa-1 left the stack; pa-2 did too, but pa-3 is pending");
        let contents: Vec<&str> = c
            .messages()
            .iter()
            .filter_map(|m| match m {
                Message::Tool { content, .. } => Some(content.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(contents[0], elided_note(&["pa-1".into()]));
        assert_eq!(contents[1], body, "kept while one of its actions is pending");
        assert_eq!(contents[2], "Discarded", "results that pushed nothing are never touched");
        assert_eq!(c.elide_resolved(|_| false), 1);
        assert!(
            matches!(&c.messages()[2], Message::Tool { content, .. } if content.contains("pa-2, pa-3 left the stack"))
        );
        assert_eq!(c.elide_resolved(|_| false), 0, "once");
    }
}
