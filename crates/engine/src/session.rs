//! A session: one open workspace with its tool registry, its pending-action stack, its
//! transcript, and the rules for what a model is offered.
//!
//! Every tool call — the agent's, a script's, or a person's Apply/Discard — goes through
//! [`Session::call`]: parameters are validated, the call is recorded in the transcript, and
//! actions pushed during it remember the call that produced them.

use std::path::Path;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, RwLock};

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::custom::CustomToolApi;
use crate::pending::PendingActionStore;
use crate::registry::{RegistryError, ToolRegistry, ToolSpec};
use crate::resolve::{render_resolve_header, ResolveDetails, ResolveTool, RESOLVE_TOOL_NAME};
use crate::tool::{Tool, ToolContext, ToolError, ToolResult};
use crate::workspace::{Workspace, WorkspaceError};

/// Queued for the model after each push during an agent turn (SPEC §7).
pub const PREVIEW_REMINDER: &str = "This is a preview. Call the resolve tool to apply or discard these changes.";

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

/// Who decides pending actions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ResolvePolicy {
    /// The agent waits while the stack is non-empty; a person applies or discards.
    Human,
    /// The model's own `resolve` call decides.
    Agent,
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

/// One call and its result.
#[derive(Debug, Clone, Serialize)]
pub struct TranscriptEntry {
    pub call_id: String,
    pub actor: Actor,
    pub call: ToolCall,
    pub result: ToolResult,
    pub at: DateTime<Utc>,
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
}

impl HistoryEntry {
    /// The history entry of a transcript entry, when it is a resolve that got as far as an
    /// action (not one refused before anything ran).
    pub fn from_transcript(e: &TranscriptEntry) -> Option<HistoryEntry> {
        if e.call.tool != RESOLVE_TOOL_NAME {
            return None;
        }
        let details: ResolveDetails = serde_json::from_value(e.result.details.clone()?).ok()?;
        let text = e.result.text_content();
        Some(HistoryEntry {
            header: render_resolve_header(&details, e.result.is_error, &text),
            details,
            text,
            is_error: e.result.is_error,
            actor: e.actor,
            at: e.at,
        })
    }
}

#[derive(Clone)]
pub(crate) struct CallScope {
    pub call: ToolCall,
    pub pushed: Arc<AtomicUsize>,
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
    policy: ResolvePolicy,
    next_call: AtomicU64,
    observers: RwLock<Vec<Observer>>,
}

/// Told about every transcript entry as it is recorded (e.g. to journal decisions).
pub type Observer = Box<dyn Fn(&TranscriptEntry) + Send + Sync>;

impl Session {
    /// Opens a session on `root` with the `resolve` tool registered.
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
        let store = Arc::new(store);
        let mut registry = ToolRegistry::new();
        registry
            .register(Arc::new(ResolveTool::new(store.clone())))
            .expect("an empty registry accepts the resolve tool");
        Ok(Self {
            workspace,
            store,
            registry: RwLock::new(registry),
            transcript: Mutex::new(Vec::new()),
            reminders: Mutex::new(Vec::new()),
            policy,
            next_call: AtomicU64::new(1),
            observers: RwLock::new(Vec::new()),
        })
    }

    pub fn workspace(&self) -> &Arc<Workspace> {
        &self.workspace
    }

    pub fn store(&self) -> &Arc<PendingActionStore> {
        &self.store
    }

    pub fn policy(&self) -> ResolvePolicy {
        self.policy
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
        Ok(names)
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
    pub async fn call_with(&self, actor: Actor, ctx: ToolContext, tool: &str, params: Value) -> ToolResult {
        let call_id = ctx.call_id.clone();
        let call = ToolCall { tool: tool.to_string(), params: params.clone() };
        let found = {
            let registry = self.registry.read().unwrap_or_else(|p| p.into_inner());
            registry.validate(tool, &params).map(|_| registry.get(tool))
        };
        let pushed = Arc::new(AtomicUsize::new(0));
        let result = match found {
            Err(err) => ToolResult::from_error(&err),
            Ok(None) => ToolResult::from_error(&ToolError::UnknownTool {
                name: tool.to_string(),
                known: self.tools().into_iter().map(|t| t.name).collect::<Vec<_>>().join(", "),
            }),
            Ok(Some(t)) => {
                let scope = CallScope { call: call.clone(), pushed: pushed.clone() };
                match CALL_SCOPE.scope(scope, t.execute(ctx, params)).await {
                    Ok(r) => r,
                    Err(err) => ToolResult::from_error(&err),
                }
            }
        };
        if actor == Actor::Agent {
            let n = pushed.load(Ordering::SeqCst);
            let mut reminders = self.reminders.lock().unwrap_or_else(|p| p.into_inner());
            reminders.extend(std::iter::repeat_n(PREVIEW_REMINDER.to_string(), n));
        }
        let entry = TranscriptEntry { call_id, actor, call, result: result.clone(), at: Utc::now() };
        for observer in self.observers.read().unwrap_or_else(|p| p.into_inner()).iter() {
            observer(&entry);
        }
        self.transcript.lock().unwrap_or_else(|p| p.into_inner()).push(entry);
        result
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
