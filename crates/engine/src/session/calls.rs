//! Every call goes through here ([`Session::call`]): validated, decided when it is a
//! `resolve` (typed, [`Session::resolve`]), recorded in the transcript with the actions it
//! pushed, and told to the observers.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

use chrono::Utc;
use serde_json::Value;

use crate::decide::Caller;
use crate::pending::{ActionId, ActionStatus, Proposal};
use crate::resolve::{Resolve, ResolveDetails, RESOLVE_TOOL_NAME};
use crate::tool::{ErrorCode, ToolContext, ToolError, ToolResult};
use crate::vocab::{Actor, ResolvePolicy, ToolCall};

use super::{Session, TranscriptEntry, PREVIEW_REMINDER, SET_POLICY_TOOL_NAME};

/// A call as it ends, before it is recorded ([`Session::finish_call`]).
struct Finished {
    call_id: String,
    client: Option<String>,
    actor: Actor,
    call: ToolCall,
    result: ToolResult,
    pushed: Vec<ActionId>,
    relay_of: Option<String>,
    proposal: Option<Proposal>,
    undo: Option<Arc<crate::undo::UndoRecord>>,
    decided_by: Option<Actor>,
    decision: Option<ResolveDetails>,
}

impl Finished {
    /// What a relayed wait answers: a decision relayed (its call), a kept decision delivered,
    /// or "not decided yet" (no call): never a decision of its own.
    fn relayed(&mut self, relayed: Result<crate::waits::Relayed, ToolError>) -> ToolResult {
        match relayed {
            Ok(relayed) => {
                self.relay_of = Some(relayed.call_id.clone());
                if relayed.is_decision() {
                    self.decided_by = Some(relayed.actor.unwrap_or(Actor::Person));
                    self.decision = relayed.details;
                }
                relayed.result
            }
            Err(err) => ToolResult::from_error(&err),
        }
    }
}

impl Finished {
    fn new(ctx: &ToolContext, actor: Actor, call: ToolCall, result: ToolResult) -> Self {
        Self {
            call_id: ctx.call_id.clone(),
            client: ctx.client.clone(),
            actor,
            call,
            result,
            pushed: Vec::new(),
            relay_of: None,
            proposal: None,
            undo: None,
            decided_by: None,
            decision: None,
        }
    }
}

/// A call's result with what the session knows about it, typed: the actions it pushed and,
/// for a `resolve` that decided, who decided (the caller, or the person an agent waited for).
#[derive(Debug, Clone)]
pub struct CallRecord {
    pub result: ToolResult,
    /// Ids of the actions pushed during the call, in push order.
    pub pushed: Vec<ActionId>,
    /// Set for a `resolve` that decided an action (applied, discarded, or a failed apply).
    pub decided_by: Option<Actor>,
    /// That decision, typed (for an agent's relayed `resolve`, the decision it was given).
    pub decision: Option<ResolveDetails>,
}

/// What [`Session::resolve`] did.
#[derive(Debug, Clone, PartialEq)]
pub enum ResolveOutcome {
    /// Applied or discarded: the action left the stack.
    Decided { details: ResolveDetails, text: String, decided_by: Actor },
    /// The apply failed: the action stays on the stack with `status` (stale or failed).
    ApplyFailed { details: ResolveDetails, text: String, status: Option<ActionStatus> },
    /// Refused before anything ran (empty stack, another action on top, blank reason, a
    /// closed session); nothing changed.
    Refused { code: Option<ErrorCode>, message: String },
}

impl Session {
    /// Calls a tool as `actor` and records the call. Errors come back as error results.
    pub async fn call(&self, actor: Actor, tool: &str, params: Value) -> ToolResult {
        let ctx = ToolContext::new(self.new_call_id());
        self.call_with(actor, ctx, tool, params).await
    }

    /// A fresh call id (`call-<n>`).
    pub fn new_call_id(&self) -> String {
        format!("call-{}", self.next_call.fetch_add(1, Ordering::Relaxed))
    }

    /// Like [`call`](Self::call) with a given context (call id, cancellation, progress).
    ///
    /// Policy, enforced here for every caller: under [`ResolvePolicy::Human`] an
    /// [`Actor::Agent`]'s `resolve` does not decide; it proposes (shown beside the top action)
    /// and waits until a person or a script resolves that action, and returns their decision.
    /// An agent cannot call `set_policy`.
    pub async fn call_with(&self, actor: Actor, ctx: ToolContext, tool: &str, params: Value) -> ToolResult {
        self.call_traced(actor, ctx, tool, params).await.result
    }

    /// A person's, a script's or an agent's Apply/Discard of the top action, typed. It is a
    /// `resolve` call like any other (same door: transcript, observers, history, policy).
    pub async fn resolve(&self, actor: Actor, resolve: Resolve) -> ResolveOutcome {
        let call = ToolCall { tool: RESOLVE_TOOL_NAME.to_string(), params: resolve.to_params() };
        let record = self.resolve_traced(actor, ToolContext::new(self.new_call_id()), call, Ok(resolve)).await;
        let text = record.result.text_content();
        match (record.decision, record.decided_by) {
            (Some(details), Some(decided_by)) if !record.result.is_error => {
                ResolveOutcome::Decided { details, text, decided_by }
            }
            (Some(details), _) => {
                let status = self.store.info(&details.action_id).map(|a| a.status);
                ResolveOutcome::ApplyFailed { details, text, status }
            }
            (None, _) => ResolveOutcome::Refused {
                code: record.result.error_code.as_deref().and_then(ErrorCode::parse),
                message: text,
            },
        }
    }

    /// Like [`call_with`](Self::call_with), with the actions the call pushed and who decided.
    /// A `resolve` is read into a typed [`Resolve`] here and decided like
    /// [`resolve`](Self::resolve) (the tool's JSON is only the agents' form of it).
    pub async fn call_traced(&self, actor: Actor, ctx: ToolContext, tool: &str, params: Value) -> CallRecord {
        let call = ToolCall { tool: tool.to_string(), params: params.clone() };
        let found = {
            let registry = self.registry.read().unwrap_or_else(|p| p.into_inner());
            registry.validate(tool, &params).map(|_| registry.get(tool))
        };
        if tool == RESOLVE_TOOL_NAME && !self.is_closed() {
            let resolve = found.and_then(|_| Resolve::parse(&params));
            return self.resolve_traced(actor, ctx, call, resolve).await;
        }
        if tool == super::AWAIT_DECISION_TOOL_NAME && !self.is_closed() {
            let wait = found.and_then(|_| super::await_decision::AwaitDecision::parse(&params));
            return self.await_traced(actor, ctx, call, wait).await;
        }
        let pushed = Arc::new(Mutex::new(Vec::new()));
        let result = match found {
            _ if self.is_closed() => ToolResult::from_error(&self.closed_error()),
            Err(err) => ToolResult::from_error(&err),
            Ok(None) => ToolResult::from_error(&ToolError::UnknownTool {
                name: tool.to_string(),
                known: self.tools().into_iter().map(|t| t.name).collect::<Vec<_>>().join(", "),
            }),
            Ok(Some(_)) if tool == SET_POLICY_TOOL_NAME && actor == Actor::Agent => {
                ToolResult::from_error(&ToolError::InvalidParams(
                    "An agent cannot change who decides pending actions; the person sets the policy in the app.".into(),
                ))
            }
            Ok(Some(t)) => {
                let mut done = Finished::new(&ctx, actor, call.clone(), ToolResult::empty());
                done.result = match t.execute(ctx.with_origin(call, pushed.clone()), params).await {
                    Ok(r) => r,
                    Err(err) => ToolResult::from_error(&err),
                };
                done.pushed = std::mem::take(&mut *pushed.lock().unwrap_or_else(|p| p.into_inner()));
                return self.finish_call(done);
            }
        };
        self.finish_call(Finished::new(&ctx, actor, call, result))
    }

    /// A `resolve`, typed: under the `human` policy an agent's proposes and waits for the
    /// person's decision ([`relay_resolve`](Self::relay_resolve)); anyone else's decides.
    async fn resolve_traced(
        &self,
        actor: Actor,
        ctx: ToolContext,
        call: ToolCall,
        resolve: Result<Resolve, ToolError>,
    ) -> CallRecord {
        let mut done = Finished::new(&ctx, actor, call, ToolResult::empty());
        done.result = match resolve {
            _ if self.is_closed() => ToolResult::from_error(&self.closed_error()),
            Err(err) => ToolResult::from_error(&err),
            Ok(resolve) if actor == Actor::Agent && self.policy() == ResolvePolicy::Human => {
                let relayed = self.relay_resolve(&ctx, resolve).await;
                done.relayed(relayed)
            }
            Ok(resolve) => {
                let top_proposal = self.store.peek().and_then(|a| a.proposal.map(|p| (a.id, p)));
                let caller = Caller { actor, client: ctx.client.clone(), call_id: ctx.call_id.clone() };
                match self.decider.decide(&caller, resolve).await {
                    Ok(decision) => {
                        done.proposal =
                            top_proposal.filter(|(id, _)| *id == decision.details.action_id).map(|(_, p)| p);
                        done.decided_by = Some(actor);
                        done.undo = decision.undo.filter(|_| !decision.result.is_error);
                        done.decision = Some(decision.details);
                        decision.result
                    }
                    Err(err) => ToolResult::from_error(&err),
                }
            }
        };
        self.finish_call(done)
    }

    /// An `await_decision`: the decision on one action. Already decided in this session: that
    /// decision. Pending, an agent under the `human` policy: it proposes "apply" on it and
    /// waits for the person, wherever the action is on the stack. Otherwise it is decided as
    /// the caller's `resolve` would (on top only).
    async fn await_traced(
        &self,
        actor: Actor,
        ctx: ToolContext,
        call: ToolCall,
        wait: Result<super::await_decision::AwaitDecision, ToolError>,
    ) -> CallRecord {
        let wait = match wait {
            Ok(w) => w,
            Err(err) => return self.finish_call(Finished::new(&ctx, actor, call, ToolResult::from_error(&err))),
        };
        let resolve = Resolve {
            choice: crate::resolve::ResolveAction::Apply,
            reason: wait.reason.clone(),
            expected_id: Some(wait.action_id.clone()),
            leave_out: None,
            edits: Vec::new(),
            review: None,
        };
        if self.store.info(&wait.action_id).is_none() {
            let mut done = Finished::new(&ctx, actor, call, ToolResult::empty());
            done.result = match self.decided_in_transcript(&wait.action_id) {
                Some((result, details, by, call_id)) => {
                    done.relay_of = Some(call_id);
                    crate::decide::relayed_result(&result, &details, by)
                }
                None => ToolResult::from_error(&ToolError::InvalidParams(format!(
                    "{} is not pending and was not decided in this session of the desk (it may have been decided                      before the desk restarted): push the change again.",
                    wait.action_id
                ))),
            };
            return self.finish_call(done);
        }
        if actor == Actor::Agent && self.policy() == ResolvePolicy::Human {
            let mut done = Finished::new(&ctx, actor, call, ToolResult::empty());
            let relayed = self.relay_on(&ctx, resolve, Some(&wait.action_id)).await;
            done.result = done.relayed(relayed);
            return self.finish_call(done);
        }
        // Decided here as a `resolve` of the caller's (the History, undo and the journal see a
        // resolve, as for any other decision).
        let _ = call;
        let call = ToolCall { tool: RESOLVE_TOOL_NAME.to_string(), params: resolve.to_params() };
        self.resolve_traced(actor, ctx, call, Ok(resolve)).await
    }

    /// The last decision this session made on `action_id`: its result, details, who decided
    /// and the deciding call.
    fn decided_in_transcript(
        &self,
        action_id: &str,
    ) -> Option<(ToolResult, crate::resolve::ResolveDetails, Actor, String)> {
        let transcript = self.transcript.lock().unwrap_or_else(|p| p.into_inner());
        transcript.iter().rev().find_map(|e| {
            let d = e.decision.as_ref().filter(|d| d.action_id == action_id && e.relay_of.is_none())?;
            Some((e.result.clone(), d.clone(), e.actor, e.call_id.clone()))
        })
    }

    /// Records a finished call: decisions kept for an agent come first in what it sees, a
    /// preview reminder per push, the transcript entry (observers told).
    fn finish_call(&self, done: Finished) -> CallRecord {
        let Finished {
            call_id,
            client,
            actor,
            call,
            mut result,
            pushed,
            relay_of,
            proposal,
            undo,
            decided_by,
            decision,
        } = done;
        // Decisions kept for this agent (made while it was not waiting) come first in whatever
        // it calls next (a `resolve` under the `human` policy returned them already).
        if actor == Actor::Agent && relay_of.is_none() {
            if let Some(c) = &client {
                let kept = self.waits.take(c);
                if !kept.is_empty() {
                    result
                        .content
                        .insert(0, crate::tool::Content::Text { text: crate::waits::delivery_preface(&kept) });
                }
            }
        }
        if actor == Actor::Agent {
            let n = pushed.len();
            let mut reminders = self.reminders.lock().unwrap_or_else(|p| p.into_inner());
            reminders.extend(std::iter::repeat_n(PREVIEW_REMINDER.to_string(), n));
        }
        let entry = TranscriptEntry {
            call_id,
            actor,
            call,
            result: result.clone(),
            at: Utc::now(),
            client,
            relay_of,
            proposal,
            undo,
            decision: decision.clone().filter(|_| decided_by.is_some()),
            elided: 0,
        };
        self.record_entry(entry);
        CallRecord { result, pushed, decided_by, decision }
    }

    /// Tells the observers about `entry` (whole), then appends it to the transcript, trimmed
    /// to the transcript's budget (see [`lean`](crate::lean)).
    pub(crate) fn record_entry(&self, mut entry: TranscriptEntry) {
        for observer in self.observers.read().unwrap_or_else(|p| p.into_inner()).iter() {
            observer(&entry);
        }
        crate::lean::trim_entry(&mut entry);
        self.transcript.lock().unwrap_or_else(|p| p.into_inner()).push(entry);
    }

    /// Re-runs the tool call that produced a pending action (for "run the preview again").
    /// When that action is on top and stale or failed, it is discarded first (recorded in the
    /// history), so the fresh preview replaces it instead of stacking on it.
    pub async fn rerun(&self, actor: Actor, action_id: &str) -> ToolResult {
        self.rerun_with(actor, ToolContext::new(self.new_call_id()), action_id).await
    }

    /// Like [`rerun`](Self::rerun) with a given context (call id, cancellation, progress).
    pub async fn rerun_with(&self, actor: Actor, ctx: ToolContext, action_id: &str) -> ToolResult {
        let Some(info) = self.store.info(action_id) else {
            return ToolResult::from_error(&ToolError::InvalidParams(format!(
                "Pending action {action_id} is not on the stack any more, so it cannot be run again."
            )));
        };
        let Some(call) = info.origin.clone() else {
            return ToolResult::from_error(&ToolError::InvalidParams(format!(
                "Pending action {action_id} was not produced by a tool call, so its preview cannot be run again."
            )));
        };
        let is_top = self.store.peek().map(|t| t.id == action_id).unwrap_or(false);
        if is_top && info.status != crate::pending::ActionStatus::Pending {
            let discarded = self
                .call(
                    actor,
                    RESOLVE_TOOL_NAME,
                    serde_json::json!({
                        "action": "discard",
                        "reason": "Replaced by a fresh preview (the previous one could not be applied).",
                        "expected_id": action_id,
                    }),
                )
                .await;
            if discarded.is_error {
                return discarded;
            }
        }
        self.call_with(actor, ctx, &call.tool, call.params).await
    }
}
