//! An agent's `resolve` under the `human` policy: it proposes, waits for the person (at
//! most its bound), and is given the decision, or a decision kept for it, or "not decided
//! yet"; "Not now" answers it without one.

use std::time::Duration;

use serde_json::{json, Value};

use crate::pending::{Proposal, StoreChange, StoreEvent};
use crate::resolve::Resolve;
use crate::tool::{Progress, ToolContext, ToolError, ToolResult};
use crate::vocab::Actor;
use crate::waits::{Delivery, Relayed};

use super::Session;

/// How often a waiting agent's `resolve` reports progress (so clients with request
/// time-outs keep waiting).
const WAIT_HEARTBEAT: Duration = Duration::from_secs(10);

fn left_without_decision(id: &str, label: &str) -> ToolError {
    ToolError::Failed(format!(
        "{id} (\"{label}\") left the stack without a decision (the stack was cleared); nothing was applied."
    ))
}

/// The result of a `resolve` whose wait ended before the person decided: a normal result.
fn not_decided_yet(action_id: &str, label: &str, bound: Option<Duration>) -> ToolResult {
    let waited = bound.map(|d| format!(" in {} s", d.as_secs())).unwrap_or_default();
    ToolResult::text(format!(
        "The person has not decided yet{waited} on {action_id} (\"{label}\"); nothing was written. It stays pending \
         with your proposal beside it. Call `resolve` again to keep waiting for the decision."
    ))
    .with_details(json!({"waiting": true, "action_id": action_id, "label": label}))
}

/// What a `resolve` returns for decisions kept for its caller: each one's result, oldest
/// first; the details of the last, with every delivery listed.
fn delivered_result(kept: Vec<Delivery>) -> ToolResult {
    if kept.len() == 1 {
        return kept.into_iter().next().map(|d| d.result).unwrap_or_default();
    }
    let mut result = ToolResult::empty();
    let mut all = Vec::new();
    for d in kept {
        result.content.extend(d.result.content.clone());
        all.push(d.result.details.clone().unwrap_or(Value::Null));
        result.details = d.result.details;
    }
    if let Some(Value::Object(details)) = result.details.as_mut() {
        details.insert("delivered".into(), Value::Array(all));
    }
    result
}

impl Session {
    /// "Not now" on `action_id`: every agent waiting on it is answered that the person will
    /// review it later and nothing was applied; the action stays pending with its proposal
    /// (shown as not waiting). Returns how many waits were answered (0: nobody was waiting).
    pub fn snooze(&self, action_id: &str) -> usize {
        let Some(info) = self.store.info(action_id) else { return 0 };
        let result = ToolResult::text(format!(
            "The person will review {action_id} (\"{}\") later; nothing was applied or discarded. It stays pending \
             with your proposal; call `resolve` again later to learn the decision (it is kept for you).",
            info.label
        ))
        .with_details(json!({"snoozed": true, "action_id": action_id, "label": info.label}));
        self.waits.snooze(action_id, &result)
    }

    /// An agent's `resolve` under the `human` policy. A decision kept for this agent (made
    /// while it was not waiting) is returned first, without proposing anything. Otherwise it
    /// proposes the decision on the top action and waits for the person's — at most its
    /// bound ([`crate::waits`]): then it returns a normal result saying the person has not
    /// decided yet (the proposal stays, marked as not waiting). Returns the result the agent
    /// sees, the id of the call that decided and who made it (`None` when nothing was
    /// decided). Cancelling the call leaves the action pending with the proposal; a later
    /// decision is kept for the agent.
    pub(super) async fn relay_resolve(&self, ctx: &ToolContext, params: Resolve) -> Result<Relayed, ToolError> {
        self.relay_on(ctx, params, None).await
    }

    /// [`relay_resolve`](Self::relay_resolve) on the top action (`target` `None`), or on the
    /// pending action `target` wherever it is on the stack (`await_decision`): then only a
    /// decision kept for this agent on that action is delivered.
    pub(super) async fn relay_on(
        &self,
        ctx: &ToolContext,
        params: Resolve,
        target: Option<&str>,
    ) -> Result<Relayed, ToolError> {
        params.check()?;
        if let Some(client) = &ctx.client {
            let kept = match target {
                None => self.waits.take(client),
                Some(id) => self.waits.take_action(client, id),
            };
            if !kept.is_empty() {
                let last = kept.last().map(|d| d.call_id.clone()).unwrap_or_default();
                let details = kept.last().and_then(Delivery::decision);
                return Ok(Relayed {
                    result: delivered_result(kept),
                    details,
                    call_id: last,
                    actor: Some(Actor::Person),
                });
            }
        }
        // Register before proposing, so no decision slips in between; watch the store for a
        // removal without a decision (pop, clear).
        let mut events = self.store.subscribe();
        let top = match target {
            None => {
                let top = self.store.peek().ok_or(ToolError::NoPendingAction)?;
                params.check_top(&top.id, &top.label)?;
                top
            }
            Some(id) => self.store.info(id).ok_or_else(|| {
                ToolError::InvalidParams(format!("{id} is not pending any more; push the change again."))
            })?,
        };
        let registration = self.waits.register(&top.id, ctx.client.clone());
        let proposal = Proposal {
            choice: params.choice,
            reason: params.reason.clone(),
            client: ctx.client.clone(),
            call_id: ctx.call_id.clone(),
            waiting: true,
        };
        self.store.set_proposal(&top.id, Some(proposal.clone()));
        let waiting = format!("Waiting for the person to review {} (\"{}\") in Resolve Desk.", top.id, top.label);
        let mut heartbeat = tokio::time::interval(WAIT_HEARTBEAT);
        let mut beats = 0u64;
        let bound = self.waits.effective(ctx.wait);
        let deadline = async {
            match bound {
                Some(d) => tokio::time::sleep(d).await,
                None => std::future::pending().await,
            }
        };
        tokio::pin!(deadline);
        let mut registration = registration;
        let outcome = loop {
            tokio::select! {
                biased;
                relayed = &mut registration.receiver => match relayed {
                    Ok(r) => break Ok(Some(r)),
                    Err(_) => break Err(self.closed_error()),
                },
                _ = ctx.cancel.cancelled() => break Err(ToolError::Cancelled(format!(
                    "the agent's resolve call {} was cancelled before the person decided; {} stays pending, and the \
                     decision will be given to your next call.",
                    ctx.call_id, top.id
                ))),
                _ = self.closed.cancelled() => break Err(self.closed_error()),
                _ = &mut deadline => break Ok(None),
                event = events.recv() => match event {
                    Err(tokio::sync::broadcast::error::RecvError::Closed) => break Err(self.closed_error()),
                    // Removed without a decision (a pop, a clear): nothing will be decided.
                    Ok(StoreEvent { change: StoreChange::Removed { id }, .. }) if id == top.id => {
                        break Err(left_without_decision(&top.id, &top.label));
                    }
                    Ok(StoreEvent { change: StoreChange::Cleared { .. }, .. }) if self.store.info(&top.id).is_none() => {
                        if let Ok(r) = registration.receiver.try_recv() {
                            break Ok(Some(r));
                        }
                        break Err(left_without_decision(&top.id, &top.label));
                    }
                    // A decision (its result fills the slot right after the removal), or
                    // anything else: keep waiting.
                    _ => {}
                },
                _ = heartbeat.tick() => {
                    ctx.report(Progress { done: beats, total: None, message: Some(waiting.clone()) });
                    beats += 1;
                }
            }
        };
        let relayed = match outcome {
            Ok(Some(r)) => r,
            other => {
                // The wait ended without a decision: a decision at this very moment is ours.
                if let Some(r) = registration.end() {
                    r
                } else {
                    self.mark_not_waiting(&top.id, &ctx.call_id);
                    return match other {
                        Ok(_) => Ok(Relayed::undecided(not_decided_yet(&top.id, &top.label, bound))),
                        Err(e) => Err(e),
                    };
                }
            }
        };
        if !relayed.is_decision() {
            // "Not now": answered without a decision.
            self.mark_not_waiting(&top.id, &ctx.call_id);
        }
        Ok(relayed)
    }

    /// The proposal of call `call_id` on `action_id` stays, shown as no longer waiting.
    fn mark_not_waiting(&self, action_id: &str, call_id: &str) {
        if let Some(mut p) = self.store.info(action_id).and_then(|a| a.proposal).filter(|p| p.call_id == call_id) {
            p.waiting = false;
            self.store.set_proposal(action_id, Some(p));
        }
    }
}
