//! A session: one open workspace with its tool registry, its pending-action stack, its
//! transcript, and the rules for what a model is offered.
//!
//! Every tool call — the agent's, a script's, or a person's Apply/Discard — goes through
//! [`Session::call`]: parameters are validated, the call is recorded in the transcript, and
//! actions pushed during it remember the call that produced them.

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

use crate::custom::CustomToolApi;
use crate::decide::{Caller, Decider};
use crate::pending::{ActionId, ActionStatus, PendingActionStore, Proposal, StoreChange, StoreEvent};
use crate::registry::{RegistryError, ToolRegistry, ToolSpec};
pub use crate::resolve::Resolve;
use crate::resolve::{render_resolve_header, ResolveDetails, ResolveTool, RESOLVE_TOOL_NAME};
use crate::tool::{ErrorCode, Progress, Tool, ToolContext, ToolError, ToolResult};
use crate::waits::{Delivery, Relayed, Waits};
use crate::workspace::{Workspace, WorkspaceError};

/// The hidden built-in tool that changes who decides (`{"policy": "human"|"agent"}`).
pub const SET_POLICY_TOOL_NAME: &str = "set_policy";

/// How often a waiting agent's `resolve` reports progress (so clients with request
/// time-outs keep waiting).
const WAIT_HEARTBEAT: Duration = Duration::from_secs(10);

/// Queued for the model after each push during an agent turn (SPEC §7).
pub const PREVIEW_REMINDER: &str = "This is a preview. Call the resolve tool to apply or discard these changes.";

pub use crate::vocab::{Actor, ResolvePolicy, ToolCall, ToolChoice};

/// One call and its result.
#[derive(Debug, Clone, Serialize)]
pub struct TranscriptEntry {
    pub call_id: String,
    pub actor: Actor,
    pub call: ToolCall,
    pub result: ToolResult,
    pub at: DateTime<Utc>,
    /// The agent or MCP client that made the call (`ToolContext::client`), when it said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<String>,
    /// For an agent's `resolve` under the `human` policy: the id of the call that decided
    /// (a person's resolve, itself in the transcript). Such an entry relays that decision to
    /// the agent and is not a decision of its own (not in the history).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub relay_of: Option<String>,
    /// For a resolve that decided an action an agent had proposed a decision for: what the
    /// agent proposed, and who it was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proposal: Option<Proposal>,
    /// For a successful apply of a change set, an undo or a redo: what reverts it (the bytes
    /// it replaced, pinned to the hashes it left). The journal keeps it for the history's Undo.
    #[serde(skip)]
    pub undo: Option<Arc<crate::undo::UndoRecord>>,
    /// For a decision (`resolve` that got as far as an action, `undo`, `redo`): what was
    /// decided, typed. The result's details say the same to agents, as JSON.
    #[serde(skip)]
    pub decision: Option<ResolveDetails>,
    /// Bytes of the result's text and details the transcript dropped (0: whole). Observers
    /// see every entry whole; the transcript keeps at most
    /// [`TRANSCRIPT_TEXT_BYTES`](crate::lean::TRANSCRIPT_TEXT_BYTES) of text and
    /// [`TRANSCRIPT_DETAILS_BYTES`](crate::lean::TRANSCRIPT_DETAILS_BYTES) of details of a
    /// call that does not decide (`resolve`, `undo` and `redo` entries stay whole).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub elided: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// One resolve, for the history view (newest first in [`Session::history`]).
#[derive(Debug, Clone, Serialize)]
pub struct HistoryEntry {
    pub details: ResolveDetails,
    pub header: String,
    pub text: String,
    pub is_error: bool,
    pub actor: Actor,
    pub at: DateTime<Utc>,
    /// The agent or MCP client that made the deciding call (under the `agent` policy), when
    /// known (the journal keeps it too); `None` for a person's or a script's decision.
    pub client: Option<String>,
    /// What an agent had proposed for the action, when one was waiting on the person.
    pub proposal: Option<Proposal>,
}

impl HistoryEntry {
    /// The history entry of a transcript entry, when it is a resolve that got as far as an
    /// action (not one refused before anything ran).
    pub fn from_transcript(e: &TranscriptEntry) -> Option<HistoryEntry> {
        let tool = e.call.tool.as_str();
        let decides =
            tool == RESOLVE_TOOL_NAME || tool == crate::undo::UNDO_TOOL_NAME || tool == crate::undo::REDO_TOOL_NAME;
        if !decides || e.relay_of.is_some() {
            return None;
        }
        let details = e.decision.clone()?;
        let text = e.result.text_content();
        Some(HistoryEntry {
            header: render_resolve_header(&details, e.result.is_error, &text),
            details,
            text,
            is_error: e.result.is_error,
            actor: e.actor,
            at: e.at,
            client: e.client.clone(),
            proposal: e.proposal.clone(),
        })
    }
}

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

/// The tool call being executed, for the pushes it makes (a tool's `push` records the call
/// that produced the action, and the client that made it). Only that: a decision's actor,
/// client and undo record travel as parameters and return values.
#[derive(Clone)]
pub(crate) struct CallScope {
    pub call: ToolCall,
    pub client: Option<String>,
    pub pushed: Arc<Mutex<Vec<ActionId>>>,
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

tokio::task_local! {
    /// The tool call being executed, so pushes can record their origin.
    pub(crate) static CALL_SCOPE: CallScope;
}

/// One open workspace.
pub struct Session {
    workspace: Arc<Workspace>,
    store: Arc<PendingActionStore>,
    registry: RwLock<ToolRegistry>,
    transcript: Mutex<Vec<TranscriptEntry>>,
    reminders: Mutex<Vec<String>>,
    policy: Arc<RwLock<ResolvePolicy>>,
    next_call: AtomicU64,
    observers: RwLock<Vec<Observer>>,
    /// Agents waiting for the person, and decisions kept for those that were not.
    waits: Arc<Waits>,
    /// Decides the top action (every `resolve`, typed or JSON).
    decider: Arc<Decider>,
    closed: CancellationToken,
    recovery: Option<crate::changeset::Recovery>,
    /// Bumped whenever tools are loaded or unloaded (see [`Session::subscribe_tools`]).
    tools_changed: tokio::sync::watch::Sender<u64>,
}

/// Told about every transcript entry as it is recorded (e.g. to journal decisions).
pub type Observer = Box<dyn Fn(&TranscriptEntry) + Send + Sync>;

impl Session {
    /// What opening this session recovered: an apply interrupted in this workspace by a killed
    /// process, rolled back (or finished) before the session started. Programs show it to
    /// the person and journal it as a failed apply with the reason `interrupted` — except a
    /// refused record ([`Recovery::refused`](crate::Recovery::refused): one the desk could
    /// not have written, left untouched), which is shown and never journalled.
    pub fn recovery(&self) -> Option<&crate::changeset::Recovery> {
        self.recovery.as_ref()
    }

    /// Opens a session on `root` with the `resolve` tool registered. First finishes any apply
    /// interrupted there (see [`recovery`](Self::recovery)).
    pub fn open(root: impl AsRef<Path>, policy: ResolvePolicy) -> Result<Self, WorkspaceError> {
        Self::with_store(root, policy, PendingActionStore::new())
    }

    /// Like [`open`](Self::open) with a given store (deterministic ids in tests and scripts).
    pub fn with_store(
        root: impl AsRef<Path>,
        policy: ResolvePolicy,
        store: PendingActionStore,
    ) -> Result<Self, WorkspaceError> {
        let workspace = Arc::new(Workspace::open(root)?);
        // An apply interrupted by a killed process is finished before anything else.
        let recovery = crate::changeset::recover(&workspace);
        let store = Arc::new(store);
        let waits = Waits::new(session_tag());
        let policy = Arc::new(RwLock::new(policy));
        let decider = Arc::new(Decider::new(store.clone(), workspace.clone(), waits.clone()));
        let mut registry = ToolRegistry::new();
        registry
            .register(Arc::new(ResolveTool::new(decider.clone())))
            .expect("an empty registry accepts the resolve tool");
        registry
            .register(Arc::new(SetPolicyTool { policy: policy.clone(), store: store.clone() }))
            .expect("a registry with only resolve accepts set_policy");
        Ok(Self {
            workspace,
            store,
            registry: RwLock::new(registry),
            transcript: Mutex::new(Vec::new()),
            reminders: Mutex::new(Vec::new()),
            policy,
            next_call: AtomicU64::new(1),
            observers: RwLock::new(Vec::new()),
            waits,
            decider,
            closed: CancellationToken::new(),
            recovery,
            tools_changed: tokio::sync::watch::Sender::new(0),
        })
    }

    pub fn workspace(&self) -> &Arc<Workspace> {
        &self.workspace
    }

    pub fn store(&self) -> &Arc<PendingActionStore> {
        &self.store
    }

    /// Who decides now (changed only through the `set_policy` tool, while nothing is pending).
    pub fn policy(&self) -> ResolvePolicy {
        *self.policy.read().unwrap_or_else(|p| p.into_inner())
    }

    /// Closes the session (its window closed, or another workspace was opened): every
    /// agent waiting on a person gets a `closed` error, nothing is applied, and every later
    /// call answers that error. Pending actions are left as they are (never applied).
    pub fn close(&self) {
        self.closed.cancel();
    }

    pub fn is_closed(&self) -> bool {
        self.closed.is_cancelled()
    }

    fn closed_error(&self) -> ToolError {
        ToolError::Closed { root: self.workspace.root().display().to_string() }
    }

    /// The custom tool API wired to this session's store and workspace.
    pub fn api(&self) -> CustomToolApi {
        CustomToolApi::new(self.store.clone(), self.workspace.clone())
    }

    /// Loads the tools a factory makes. All or none: on a name conflict nothing is added.
    pub fn load<F>(&self, factory: F) -> Result<Vec<String>, RegistryError>
    where
        F: FnOnce(&CustomToolApi) -> Vec<Arc<dyn Tool>>,
    {
        let tools = factory(&self.api());
        let mut registry = self.registry.write().unwrap_or_else(|p| p.into_inner());
        let mut names = Vec::new();
        for tool in &tools {
            let name = tool.name().to_string();
            if registry.get(&name).is_some() || names.contains(&name) {
                return Err(RegistryError::Conflict(name));
            }
            names.push(name);
        }
        for tool in tools {
            registry.register(tool)?;
        }
        drop(registry);
        if !names.is_empty() {
            self.tools_changed.send_modify(|n| *n += 1);
        }
        Ok(names)
    }

    /// Removes a loaded tool at runtime (an external tool whose folder was removed or
    /// edited); false when no tool has that name. `resolve` and `set_policy` stay.
    pub fn unload(&self, name: &str) -> bool {
        if name == RESOLVE_TOOL_NAME || name == SET_POLICY_TOOL_NAME {
            return false;
        }
        let removed = self.registry.write().unwrap_or_else(|p| p.into_inner()).unregister(name);
        if removed {
            self.tools_changed.send_modify(|n| *n += 1);
        }
        removed
    }

    /// Told when the tool list changes (a load or an unload at runtime), so whatever offers
    /// tools to an agent (MCP `list_changed`, the app's tool runner) can refresh it.
    pub fn subscribe_tools(&self) -> tokio::sync::watch::Receiver<u64> {
        self.tools_changed.subscribe()
    }

    /// Every registered tool, hidden ones included (for a person's tool picker).
    pub fn tools(&self) -> Vec<ToolSpec> {
        self.registry.read().unwrap_or_else(|p| p.into_inner()).specs()
    }

    /// The tools offered to a model now: the visible ones, plus `resolve` while actions are
    /// pending. (Hidden tools other than `resolve` are never offered.)
    pub fn offered_tools(&self) -> Vec<ToolSpec> {
        let pending = self.store.has_pending();
        self.tools().into_iter().filter(|t| !t.hidden || (pending && t.name == RESOLVE_TOOL_NAME)).collect()
    }

    /// The tools an external client (MCP) is offered: the visible ones and `resolve`, always —
    /// whatever the stack holds, since many clients read the list once and never again; on an
    /// empty stack `resolve` answers SPEC §4's message (or a decision kept for the caller).
    /// (The in-app agent keeps [`offered_tools`](Self::offered_tools): the desk builds its
    /// requests itself.)
    pub fn client_tools(&self) -> Vec<ToolSpec> {
        self.tools().into_iter().filter(|t| !t.hidden || t.name == RESOLVE_TOOL_NAME).collect()
    }

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

    /// The agents' waits and the decisions kept for them (see [`crate::waits`]).
    pub fn waits(&self) -> &Arc<Waits> {
        &self.waits
    }

    /// `Forced { resolve }` while the stack is non-empty, `Auto` otherwise.
    pub fn tool_choice(&self) -> ToolChoice {
        if self.store.has_pending() {
            ToolChoice::Forced { tool: RESOLVE_TOOL_NAME.to_string() }
        } else {
            ToolChoice::Auto
        }
    }

    /// Reminders queued for the model since the last call (one per push during an agent
    /// turn); taking them empties the queue.
    pub fn take_reminders(&self) -> Vec<String> {
        std::mem::take(&mut *self.reminders.lock().unwrap_or_else(|p| p.into_inner()))
    }

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
            let resolve =
                found.map_err(|e| ToolError::InvalidParams(e.to_string())).and_then(|_| Resolve::parse(&params));
            return self.resolve_traced(actor, ctx, call, resolve).await;
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
                let scope = CallScope { call: call.clone(), client: ctx.client.clone(), pushed: pushed.clone() };
                let mut done = Finished::new(&ctx, actor, call, ToolResult::empty());
                done.result = match CALL_SCOPE.scope(scope, t.execute(ctx, params)).await {
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
                match self.relay_resolve(&ctx, resolve).await {
                    Ok(relayed) => {
                        // A decision relayed (its call), a kept decision delivered, or "not
                        // decided yet" (no call): never a decision of its own.
                        done.relay_of = Some(relayed.call_id.clone());
                        if relayed.is_decision() {
                            done.decided_by = Some(relayed.actor.unwrap_or(Actor::Person));
                            done.decision = relayed.details;
                        }
                        relayed.result
                    }
                    Err(err) => ToolResult::from_error(&err),
                }
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

    /// An agent's `resolve` under the `human` policy. A decision kept for this agent (made
    /// while it was not waiting) is returned first, without proposing anything. Otherwise it
    /// proposes the decision on the top action and waits for the person's — at most its
    /// bound ([`crate::waits`]): then it returns a normal result saying the person has not
    /// decided yet (the proposal stays, marked as not waiting). Returns the result the agent
    /// sees, the id of the call that decided and who made it (`None` when nothing was
    /// decided). Cancelling the call leaves the action pending with the proposal; a later
    /// decision is kept for the agent.
    async fn relay_resolve(&self, ctx: &ToolContext, params: Resolve) -> Result<Relayed, ToolError> {
        params.check()?;
        if let Some(client) = &ctx.client {
            let kept = self.waits.take(client);
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
        let top = self.store.peek().ok_or(ToolError::NoPendingAction)?;
        params.check_top(&top.id, &top.label)?;
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

    /// Calls `observer` with every transcript entry from now on, as it is recorded.
    pub fn observe(&self, observer: impl Fn(&TranscriptEntry) + Send + Sync + 'static) {
        self.observers.write().unwrap_or_else(|p| p.into_inner()).push(Box::new(observer));
    }

    /// Every call so far, oldest first.
    pub fn transcript(&self) -> Vec<TranscriptEntry> {
        self.transcript.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// How many calls the transcript holds.
    pub fn transcript_len(&self) -> usize {
        self.transcript.lock().unwrap_or_else(|p| p.into_inner()).len()
    }

    /// Resolves so far (applies, discards and failed applies), newest first.
    pub fn history(&self) -> Vec<HistoryEntry> {
        let transcript = self.transcript.lock().unwrap_or_else(|p| p.into_inner());
        transcript.iter().rev().filter_map(HistoryEntry::from_transcript).collect()
    }

    /// Waits until no action is pending (what an agent does under the `human` policy).
    pub async fn wait_until_resolved(&self) {
        let mut events = self.store.subscribe();
        while self.store.has_pending() {
            if events.recv().await.is_err() {
                events = self.store.subscribe();
            }
        }
    }
}

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

/// A short random tag for this session's ids.
fn session_tag() -> String {
    let nanos = Utc::now().timestamp_subsec_nanos();
    format!("{:x}{:x}", std::process::id() & 0xffff, nanos & 0xffff)
}

/// The hidden `set_policy` tool: changes who decides, only while nothing is pending (so an
/// action is never decided under a rule other than the one it was reviewed under).
struct SetPolicyTool {
    policy: Arc<RwLock<ResolvePolicy>>,
    store: Arc<PendingActionStore>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SetPolicyParams {
    policy: ResolvePolicy,
}

#[async_trait]
impl Tool for SetPolicyTool {
    fn name(&self) -> &str {
        SET_POLICY_TOOL_NAME
    }
    fn label(&self) -> &str {
        "Set policy"
    }
    fn description(&self) -> &str {
        "Choose who decides pending actions: \"human\" (an agent's resolve waits for the person) or \"agent\" \
         (the agent's resolve decides). Only while nothing is pending; never offered to a model."
    }
    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {"policy": {"type": "string", "enum": ["human", "agent"]}},
            "required": ["policy"],
            "additionalProperties": false
        })
    }
    fn hidden(&self) -> bool {
        true
    }
    async fn execute(&self, _ctx: ToolContext, params: Value) -> Result<ToolResult, ToolError> {
        let params: SetPolicyParams = serde_json::from_value(params)
            .map_err(|e| ToolError::InvalidParams(format!("Invalid parameters for `set_policy`: {e}.")))?;
        let pending = self.store.len();
        if pending > 0 {
            return Err(ToolError::InvalidParams(format!(
                "The policy can change only while nothing is pending; {pending} action{} {} waiting. Apply or discard {} first.",
                if pending == 1 { "" } else { "s" },
                if pending == 1 { "is" } else { "are" },
                if pending == 1 { "it" } else { "them" },
            )));
        }
        let mut policy = self.policy.write().unwrap_or_else(|p| p.into_inner());
        let before = *policy;
        *policy = params.policy;
        let text = match params.policy {
            ResolvePolicy::Human => "Policy: human. An agent's resolve now waits for the person's decision.",
            ResolvePolicy::Agent => "Policy: agent. An agent's resolve now decides at once.",
        };
        Ok(ToolResult::text(text).with_details(json!({"policy": params.policy, "previous": before})))
    }
}
