//! The custom tool API: how tools (built-in or third-party) push pending actions.
//!
//! A tool is made by a factory that receives a [`CustomToolApi`] and returns one or more
//! tools; the tools keep the API and call [`CustomToolApi::push_pending_action`] from
//! `execute`. The session's loader wires the API to its own store, so actions never leak
//! into another session. In a runtime without a store the push fails with the exact
//! message of SPEC §6.

use std::future::Future;
use std::sync::Arc;

use futures::FutureExt;
use serde_json::Value;

use crate::changeset::ChangeSet;
use crate::pending::{ActionId, ApplyFn, PendingActionStore, RejectFn, RenameRow};
use crate::tool::{Tool, ToolContext, ToolError, ToolResult};
use crate::workspace::Workspace;

/// The source name given to an action that does not name its producer.
pub const DEFAULT_SOURCE_TOOL_NAME: &str = "custom_tool";

/// Makes tools from the API (called once, when the tool is loaded into a session).
pub type ToolFactory = Box<dyn FnOnce(&CustomToolApi) -> Vec<Arc<dyn Tool>> + Send>;

/// A pending action as a tool describes it.
pub struct CustomToolPendingAction {
    /// Short human summary (required, non-empty).
    pub label: String,
    pub apply: ApplyFn,
    pub reject: Option<RejectFn>,
    /// Structured preview data for the UI.
    pub details: Option<Value>,
    /// Defaults to `custom_tool`.
    pub source_tool_name: Option<String>,
    change_set: Option<Arc<ChangeSet>>,
    renames: Option<Arc<[RenameRow]>>,
    /// Set by `from_change_set` (and `with_discard_text`): what rebuilds the action after a
    /// restart.
    recipe: Option<crate::stored::Recipe>,
}

impl CustomToolPendingAction {
    /// An action whose `apply(reason)` runs `apply`.
    pub fn new<F, Fut>(label: impl Into<String>, apply: F) -> Self
    where
        F: Fn(String) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<ToolResult, ToolError>> + Send + 'static,
    {
        Self {
            label: label.into(),
            apply: Box::new(move |reason| apply(reason).boxed()),
            reject: None,
            details: None,
            source_tool_name: None,
            change_set: None,
            renames: None,
            recipe: None,
        }
    }

    /// An action that applies a change set (hash-checked, atomic, all-or-nothing) and
    /// answers `applied_text` on success. The UI can read its files and diffs lazily.
    pub fn from_change_set(
        label: impl Into<String>,
        change_set: ChangeSet,
        workspace: Arc<Workspace>,
        applied_text: impl Into<String>,
    ) -> Self {
        let change_set = Arc::new(change_set);
        let applied_text = applied_text.into();
        let recipe = crate::stored::Recipe { applied_text: applied_text.clone(), discard_text: None, written_by: None };
        let cs = change_set.clone();
        let mut action = Self::new(label, move |_reason| {
            let cs = cs.clone();
            let ws = workspace.clone();
            let text = applied_text.clone();
            // `resolve` writes a change set's action through its own door (naming the action
            // in the intent record); this `apply` serves a caller holding the bare action.
            async move {
                let report = tokio::task::spawn_blocking(move || cs.apply(&ws)).await.map_err(|e| {
                    ToolError::Failed(format!("apply stopped unexpectedly: {e}; nothing was written"))
                })??;
                let mut result = ToolResult::text(text);
                if !report.warnings.is_empty() {
                    result
                        .content
                        .push(crate::tool::Content::Text { text: format!("Warnings: {}", report.warnings.join("; ")) });
                }
                Ok(result)
            }
        });
        action.change_set = Some(change_set);
        action.recipe = Some(recipe);
        action
    }

    /// Sets `reject(reason)`; returning `Ok(None)` keeps the default discard message.
    pub fn with_reject<F, Fut>(mut self, reject: F) -> Self
    where
        F: Fn(String) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Option<ToolResult>, ToolError>> + Send + 'static,
    {
        self.reject = Some(Box::new(move |reason| reject(reason).boxed()));
        self
    }

    /// Sets a discard text that survives a restart: `reject(reason)` answers
    /// `<text> Reason: <reason>`. For an action made by
    /// [`from_change_set`](Self::from_change_set), prefer it to a `with_reject` closure, which
    /// cannot be stored (after a restart the default discard text would be used).
    pub fn with_discard_text(mut self, text: impl Into<String>) -> Self {
        let text = text.into();
        let shown = text.clone();
        self = self.with_reject(move |reason| {
            let text = format!("{shown} Reason: {reason}");
            async move { Ok(Some(ToolResult::text(text))) }
        });
        if let Some(recipe) = self.recipe.as_mut() {
            recipe.discard_text = Some(text);
        }
        self
    }

    /// The change is written by `agent` itself, not by the desk: an outside agent's own edit
    /// tool, held by a hook until the person decides. Apply then verifies every file against
    /// the bytes the preview read (a file changed since makes the action stale, as for any
    /// apply) and writes **nothing**; the decision says which bytes were approved
    /// ([`ResolveDetails::approved`](crate::ResolveDetails)), and the undo record covers them
    /// once the agent has written them. Only for an action made by
    /// [`from_change_set`](Self::from_change_set); kept across a restart.
    pub fn written_by_agent(mut self, agent: impl Into<String>) -> Self {
        if let Some(recipe) = self.recipe.as_mut() {
            recipe.written_by = Some(agent.into());
        }
        self
    }

    /// Shows the action as an old → new table (every row the preview selected, renamed or
    /// not) instead of a file list; the action's kind becomes `Rename` and its counts the
    /// rows with status `Rename`. Pair it with [`from_change_set`](Self::from_change_set)
    /// holding the renames themselves.
    pub fn with_renames(mut self, rows: Vec<RenameRow>) -> Self {
        self.renames = Some(rows.into());
        self
    }

    /// The parts the store keeps (for a restored action, rebuilt exactly as pushed).
    #[allow(clippy::type_complexity)]
    pub(crate) fn into_parts(
        self,
    ) -> (ApplyFn, Option<RejectFn>, Option<Arc<ChangeSet>>, Option<Arc<[RenameRow]>>, Option<crate::stored::Recipe>)
    {
        (self.apply, self.reject, self.change_set, self.renames, self.recipe)
    }

    pub fn with_details(mut self, details: Value) -> Self {
        self.details = Some(details);
        self
    }

    pub fn with_source_tool_name(mut self, name: impl Into<String>) -> Self {
        self.source_tool_name = Some(name.into());
        self
    }
}

/// What a tool factory receives. Cheap to clone; tools keep a copy.
#[derive(Clone, Default)]
pub struct CustomToolApi {
    store: Option<Arc<PendingActionStore>>,
    workspace: Option<Arc<Workspace>>,
}

impl CustomToolApi {
    /// The API of a session: pushes go to `store`.
    pub fn new(store: Arc<PendingActionStore>, workspace: Arc<Workspace>) -> Self {
        Self { store: Some(store), workspace: Some(workspace) }
    }

    /// An API in a runtime without a pending-action store (one-shot commands, tests).
    pub fn without_store(workspace: Option<Arc<Workspace>>) -> Self {
        Self { store: None, workspace }
    }

    /// Puts the action on top of the session's stack and returns its id, with no call of
    /// origin (a script's or a test's push, outside any tool call). A tool pushes with
    /// [`push_from`](Self::push_from).
    pub fn push_pending_action(&self, action: CustomToolPendingAction) -> Result<ActionId, ToolError> {
        self.push(None, action)
    }

    /// Puts the action a tool's call computed on top of the stack and returns its id: the
    /// action records the call (`ActionInfo::origin`, for re-running it) and the client that
    /// made it (`pushed_by`), and the session counts it among the call's pushes.
    pub fn push_from(&self, ctx: &ToolContext, action: CustomToolPendingAction) -> Result<ActionId, ToolError> {
        self.push(Some(ctx), action)
    }

    fn push(&self, ctx: Option<&ToolContext>, action: CustomToolPendingAction) -> Result<ActionId, ToolError> {
        // Only a context the session made for its call names an origin (and so a client).
        let origin = ctx.and_then(|c| c.origin.as_ref());
        let store = self.store.as_ref().ok_or(ToolError::StoreUnavailable)?;
        let source = action
            .source_tool_name
            .filter(|s| !s.trim().is_empty())
            .unwrap_or_else(|| DEFAULT_SOURCE_TOOL_NAME.to_string());
        let id = store.push_parts(
            action.label,
            source,
            action.details,
            action.apply,
            action.reject,
            action.change_set,
            action.renames,
            origin.map(|o| o.call.clone()),
            origin.and_then(|_| ctx?.client.clone()),
            action.recipe,
        )?;
        if let Some(origin) = origin {
            origin.pushed.lock().unwrap_or_else(|p| p.into_inner()).push(id.clone());
        }
        Ok(id)
    }

    /// The store pushes go to, if this runtime has one (an external tool's host marks the
    /// actions of a tool process that died as orphaned through it).
    pub fn store(&self) -> Option<Arc<PendingActionStore>> {
        self.store.clone()
    }

    /// The workspace this API works in.
    pub fn workspace(&self) -> Result<Arc<Workspace>, ToolError> {
        self.workspace
            .clone()
            .ok_or_else(|| ToolError::Failed("No workspace is open in this runtime; open a workspace first.".into()))
    }
}
