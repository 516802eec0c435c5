//! A session: one open workspace with its tool registry, its pending-action stack, its
//! transcript, and the rules for what a model is offered.
//!
//! Every tool call — the agent's, a script's, or a person's Apply/Discard — goes through
//! [`Session::call`]: parameters are validated, the call is recorded in the transcript, and
//! actions pushed during it remember the call that produced them.

mod await_decision;
mod calls;
pub mod lean;
mod policy;
mod relay;
mod restore;
mod review;
mod transcript;
mod undo;

pub use await_decision::AWAIT_DECISION_TOOL_NAME;
pub use calls::{CallRecord, ResolveOutcome};
pub use restore::RestoreReport;
pub use transcript::{HistoryEntry, TranscriptEntry};
pub use undo::{Undo, UndoOutcome};

use std::path::Path;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use chrono::Utc;
use tokio_util::sync::CancellationToken;

use crate::custom::CustomToolApi;
use crate::decide::{Decider, ResolveTool};
use crate::pending::PendingActionStore;
use crate::registry::{RegistryError, ToolRegistry, ToolSpec};
pub use crate::resolve::Resolve;
use crate::resolve::RESOLVE_TOOL_NAME;
use crate::tool::{Tool, ToolError};
use crate::waits::Waits;
use crate::workspace::{Workspace, WorkspaceError};
use policy::SetPolicyTool;

/// The hidden built-in tool that changes who decides (`{"policy": "human"|"agent"}`).
pub const SET_POLICY_TOOL_NAME: &str = "set_policy";

/// Queued for the model after each push during an agent turn (SPEC §7).
pub const PREVIEW_REMINDER: &str = "This is a preview. Call the resolve tool to apply or discard these changes.";

pub use crate::vocab::{Actor, ResolvePolicy, ToolCall, ToolChoice};

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
        registry
            .register(Arc::new(await_decision::AwaitDecisionTool))
            .expect("a registry with resolve and set_policy accepts await_decision");
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
        if name == RESOLVE_TOOL_NAME || name == SET_POLICY_TOOL_NAME || name == AWAIT_DECISION_TOOL_NAME {
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

/// Staleness of this session's stack (see [`crate::staleness`]).
impl Session {
    /// [`recheck`](crate::staleness::recheck) of this session's stack (see the module docs).
    pub fn recheck(
        &self,
        affected: crate::changeset::Affected<'_>,
        wait: Duration,
    ) -> std::io::Result<Option<crate::staleness::Recheck>> {
        crate::staleness::recheck(self.store(), self.workspace(), affected, wait)
    }

    /// What changed at `path` since action `action_id` previewed it: the previewed content →
    /// the disk now (for a stale card's "what changed since the preview").
    pub fn since_preview(&self, action_id: &str, path: &str) -> Result<crate::changeset::SincePreview, ToolError> {
        let action = self.store().get(action_id).ok_or_else(|| {
            ToolError::InvalidParams(format!(
                "Pending action {action_id} is not on the stack any more; refresh the queue."
            ))
        })?;
        let change_set = action.change_set.as_ref().ok_or_else(|| {
            ToolError::InvalidParams(format!(
                "Pending action {action_id} has no change set, so there is no preview to compare {path} with."
            ))
        })?;
        change_set.since_preview(self.workspace(), path).ok_or_else(|| {
            ToolError::InvalidParams(format!(
                "Pending action {action_id} does not preview {path}; choose one of the files it names."
            ))
        })
    }
}

/// A short random tag for this session's ids.
fn session_tag() -> String {
    let nanos = Utc::now().timestamp_subsec_nanos();
    format!("{:x}{:x}", std::process::id() & 0xffff, nanos & 0xffff)
}
