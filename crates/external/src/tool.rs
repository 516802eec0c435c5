//! An external tool as the engine sees it: a [`Tool`] whose `execute` asks the tool's process,
//! whose pushes become pending actions of the session, and whose process is started on first
//! use, stopped when idle and restarted after it died.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, Weak};

use async_trait::async_trait;
use resolve_engine::{
    ActionStatus, CancellationToken, Content, CustomToolApi, CustomToolPendingAction, Progress, Tool, ToolContext,
    ToolError, ToolResult,
};
use serde_json::{json, Value};

use crate::log::ToolLog;
use crate::manifest::Manifest;
use crate::process::{CallError, Incoming, Launch, Process, Reply, INVALID_PARAMS, METHOD_NOT_FOUND, PUSH_FAILED};

/// The status message of an action whose tool process died (starts like every orphaned
/// action's message).
pub fn orphaned_message(tool: &str, reason: &str) -> String {
    format!(
        "Orphaned: can only be discarded. The process of tool `{tool}` that made it stopped ({reason}), so its \
         apply cannot run; nothing was applied. Discard it, or run its preview again."
    )
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Runs one tool's process for every call (one call at a time).
pub(crate) struct Runner {
    pub manifest: Arc<Manifest>,
    pub log: Arc<ToolLog>,
    launch: Launch,
    /// The log said which variables named in `env` are never passed (said once).
    withheld_noted: AtomicBool,
    api: CustomToolApi,
    process: tokio::sync::Mutex<Option<Arc<Process>>>,
    generation: AtomicU64,
    /// Actions pushed through the protocol (their apply runs in the process that pushed
    /// them): id and process generation.
    live: Arc<Mutex<Vec<(String, u64)>>>,
    /// Bumped by every call, so an idle timer knows whether it is still idle.
    uses: AtomicU64,
    me: Weak<Runner>,
}

impl Runner {
    /// The runner of `manifest`, its stderr in the log at `log`, started as `launch` says.
    pub fn new(manifest: Manifest, log: &std::path::Path, api: CustomToolApi, launch: Launch) -> Arc<Self> {
        Arc::new_cyclic(|me| Runner {
            manifest: Arc::new(manifest),
            log: ToolLog::shared(log, launch.limits.log_bytes),
            launch,
            withheld_noted: AtomicBool::new(false),
            api,
            process: tokio::sync::Mutex::new(None),
            generation: AtomicU64::new(0),
            live: Arc::new(Mutex::new(Vec::new())),
            uses: AtomicU64::new(0),
            me: me.clone(),
        })
    }

    fn name(&self) -> &str {
        &self.manifest.name
    }

    /// An error naming the tool.
    fn error(&self, what: impl std::fmt::Display) -> ToolError {
        ToolError::Failed(format!("External tool `{}` {what}", self.name()))
    }

    /// The running process, started (or restarted) if needed.
    fn ensure(&self, slot: &mut Option<Arc<Process>>) -> Result<Arc<Process>, ToolError> {
        if let Some(p) = slot.as_ref().filter(|p| p.is_alive()) {
            return Ok(p.clone());
        }
        if let Some(gate) = &self.launch.gate {
            gate.check(&self.manifest).map_err(ToolError::Untrusted)?;
        }
        let generation = self.generation.fetch_add(1, Ordering::Relaxed) + 1;
        let live = self.live.clone();
        let store = self.api.store();
        let tool = self.name().to_string();
        let log = self.log.path().to_path_buf();
        let on_death = Box::new(move |reason: String| {
            let reason = with_stderr_tail(&reason, &log);
            let mut live = lock(&live);
            live.retain(|(id, g)| {
                if *g != generation {
                    return true;
                }
                if let Some(store) = &store {
                    if store.get(id).is_some() {
                        store.set_status(id, ActionStatus::Orphaned { message: orphaned_message(&tool, &reason) });
                    }
                }
                false
            });
        });
        let root = self.api.workspace().map(|w| w.root().to_path_buf()).unwrap_or_default();
        let withheld = self.launch.withheld(&self.manifest);
        if !withheld.is_empty() && !self.withheld_noted.swap(true, Ordering::Relaxed) {
            let names: Vec<String> = withheld.iter().map(|n| format!("`{n}`")).collect();
            self.log.note(&format!(
                "not passing {} to `{}` (named in `env` of {}): never passed to tools; the tool runs without it",
                names.join(", "),
                self.name(),
                self.manifest.file.display()
            ));
        }
        let process = Process::start(&self.manifest, generation, self.log.clone(), &root, &self.launch, on_death)
            .map(Arc::new)
            .map_err(|e| self.error(format!("could not start: {e}")))?;
        *slot = Some(process.clone());
        Ok(process)
    }

    /// A failed call, named: why the process stopped, and where its log is.
    fn call_error(&self, process: &Process, method: &str, err: CallError) -> ToolError {
        match err {
            CallError::Died(reason) => self.error(format!(
                "stopped before answering `{method}`: {}. Its log: {}.",
                with_stderr_tail(&reason, self.log.path()),
                self.log.path().display()
            )),
            CallError::TimedOut(t) => {
                let key = match method {
                    "apply" => "apply",
                    "reject" => "reject",
                    _ => "execute",
                };
                let reason = format!(
                    "did not answer `{method}` within {} s (`timeouts.{key}` in {})",
                    secs(t),
                    self.manifest.file.display()
                );
                process.kill(reason.clone());
                self.error(format!("{reason}; it was stopped. Its log: {}.", self.log.path().display()))
            }
            CallError::Cancelled => ToolError::Cancelled(format!("`{method}` of external tool `{}`", self.name())),
        }
    }

    fn used(&self) {
        let n = self.uses.fetch_add(1, Ordering::Relaxed) + 1;
        let idle = self.manifest.timeouts.idle;
        let me = self.me.clone();
        if tokio::runtime::Handle::try_current().is_err() {
            return;
        }
        tokio::spawn(async move {
            // While an action of its own waits, look again every `idle` (it may be discarded
            // without the process hearing of it).
            loop {
                tokio::time::sleep(idle).await;
                let Some(runner) = me.upgrade() else { return };
                if runner.uses.load(Ordering::Relaxed) != n || runner.stop_if_idle().await {
                    return;
                }
            }
        });
    }

    /// Stops the process unless an action it pushed still waits for a decision (its apply
    /// needs the process). True when nothing runs afterwards.
    pub async fn stop_if_idle(&self) -> bool {
        let mut slot = self.process.lock().await;
        let Some(process) = slot.as_ref() else { return true };
        let generation = process.generation;
        let store = self.api.store();
        let busy = lock(&self.live)
            .iter()
            .any(|(id, g)| *g == generation && store.as_ref().is_some_and(|s| s.get(id).is_some()));
        if busy {
            return false;
        }
        process.kill("stopped when idle");
        *slot = None;
        true
    }

    /// Whether an action this runner's process pushed still waits for a decision.
    pub fn has_live_actions(&self) -> bool {
        let store = self.api.store();
        lock(&self.live).iter().any(|(id, _)| store.as_ref().is_some_and(|s| s.get(id).is_some()))
    }

    /// Whether a process runs now (for tests and the app).
    pub async fn is_running(&self) -> bool {
        self.process.lock().await.as_ref().is_some_and(|p| p.is_alive())
    }

    pub async fn execute(&self, ctx: ToolContext, params: Value) -> Result<ToolResult, ToolError> {
        let mut slot = self.process.lock().await;
        let process = self.ensure(&mut slot)?;
        let generation = process.generation;
        let call = json!({"toolCallId": ctx.call_id, "params": params});
        let reply = process
            .call("execute", call, self.manifest.timeouts.execute, &ctx.cancel, |msg| {
                self.handle(msg, &ctx, generation)
            })
            .await;
        drop(slot);
        self.used();
        match reply {
            Ok(Reply::Result(v)) => Ok(result_of(&v)),
            Ok(Reply::Error { message }) => Err(self.error(format!("failed: {message}"))),
            Err(e) => Err(self.call_error(&process, "execute", e)),
        }
    }

    /// `apply` or `reject` of an action pushed by process `generation`.
    async fn decide(
        &self,
        method: &str,
        generation: u64,
        id: &str,
        reason: String,
    ) -> Result<Option<ToolResult>, ToolError> {
        let slot = self.process.lock().await;
        let process = match slot.as_ref() {
            Some(p) if p.generation == generation && p.is_alive() => p.clone(),
            other => {
                let why = other
                    .filter(|p| p.generation == generation)
                    .and_then(|p| p.death())
                    .unwrap_or_else(|| "it is no longer running".into());
                return if method == "reject" {
                    Ok(None)
                } else {
                    Err(self.error(format!(
                        "cannot apply {id}: the process that made it stopped ({why}); nothing was applied. Discard it and run the preview again."
                    )))
                };
            }
        };
        let timeout = if method == "apply" { self.manifest.timeouts.apply } else { self.manifest.timeouts.reject };
        let never = CancellationToken::new();
        let reply = process
            .call(method, json!({"actionId": id, "reason": reason}), timeout, &never, |msg| {
                if msg.method == "pushPendingAction" {
                    Err((PUSH_FAILED, "pushPendingAction is only possible while `execute` runs.".into()))
                } else {
                    Err((METHOD_NOT_FOUND, format!("unknown method `{}`", msg.method)))
                }
            })
            .await;
        drop(slot);
        self.used();
        match reply {
            Ok(Reply::Result(v)) if v.is_null() => Ok(None),
            Ok(Reply::Result(v)) => Ok(Some(result_of(&v))),
            Ok(Reply::Error { message }) => Err(self.error(format!("`{method}` failed: {message}"))),
            Err(e) => Err(self.call_error(&process, method, e)),
        }
    }

    /// A request or notification of the tool during `execute`.
    fn handle(&self, msg: &Incoming, ctx: &ToolContext, generation: u64) -> Result<Value, (i64, String)> {
        match msg.method.as_str() {
            "pushPendingAction" => self.push(&msg.params, ctx, generation).map(|id| json!({"actionId": id})),
            "progress" => {
                let p = &msg.params;
                ctx.report(Progress {
                    done: p.get("done").and_then(Value::as_u64).unwrap_or(0),
                    total: p.get("total").and_then(Value::as_u64),
                    message: p.get("message").and_then(Value::as_str).map(str::to_string),
                });
                Ok(Value::Null)
            }
            other => Err((
                METHOD_NOT_FOUND,
                format!("unknown method `{other}`; the host knows pushPendingAction and progress"),
            )),
        }
    }

    fn push(&self, params: &Value, ctx: &ToolContext, generation: u64) -> Result<String, (i64, String)> {
        let bad = |m: String| (INVALID_PARAMS, m);
        let label = params
            .get("label")
            .and_then(Value::as_str)
            .filter(|s| !s.trim().is_empty())
            .ok_or_else(|| bad("pushPendingAction: `label` must be a non-empty string".into()))?
            .to_string();
        let source = params.get("sourceToolName").and_then(Value::as_str).map(str::to_string);
        let details = params.get("details").cloned().filter(|d| !d.is_null());
        let store_unavailable = || (PUSH_FAILED, ToolError::StoreUnavailable.to_string());
        if self.api.store().is_none() {
            return Err(store_unavailable());
        }
        let mut action = if let Some(cs) = params.get("changeSet") {
            let ws = self.api.workspace().map_err(|e| bad(e.to_string()))?;
            crate::changes::action(&label, cs, ws).map_err(bad)?
        } else {
            let me = self.me.clone();
            let id_cell: Arc<OnceLock<String>> = Arc::new(OnceLock::new());
            let cell = id_cell.clone();
            let mut action = CustomToolPendingAction::new(label.clone(), move |reason| {
                let me = me.clone();
                let id = cell.get().cloned().unwrap_or_default();
                async move {
                    let runner =
                        me.upgrade().ok_or_else(|| ToolError::Failed("the external tool was unloaded".into()))?;
                    runner.decide("apply", generation, &id, reason).await.map(|r| r.unwrap_or_default())
                }
            });
            if params.get("hasReject").and_then(Value::as_bool).unwrap_or(false) {
                let me = self.me.clone();
                let cell = id_cell.clone();
                action = action.with_reject(move |reason| {
                    let me = me.clone();
                    let id = cell.get().cloned().unwrap_or_default();
                    async move {
                        let Some(runner) = me.upgrade() else { return Ok(None) };
                        runner.decide("reject", generation, &id, reason).await
                    }
                });
            }
            let id = self
                .api
                .push_from(ctx, with_meta(action, source, details))
                .map_err(|e| (PUSH_FAILED, e.to_string()))?;
            let _ = id_cell.set(id.clone());
            lock(&self.live).push((id.clone(), generation));
            return Ok(id);
        };
        action = with_meta(action, source, details);
        self.api.push_from(ctx, action).map_err(|e| (PUSH_FAILED, e.to_string()))
    }
}

fn with_meta(
    mut action: CustomToolPendingAction,
    source: Option<String>,
    details: Option<Value>,
) -> CustomToolPendingAction {
    if let Some(s) = source {
        action = action.with_source_tool_name(s);
    }
    if let Some(d) = details {
        action = action.with_details(d);
    }
    action
}

fn secs(d: std::time::Duration) -> String {
    let s = d.as_secs_f64();
    if s.fract() == 0.0 {
        format!("{s:.0}")
    } else {
        format!("{s}")
    }
}

/// Adds the last line the tool wrote to stderr (the usual place of a crash's message).
fn with_stderr_tail(reason: &str, log: &std::path::Path) -> String {
    if reason.contains("last stderr line") {
        return reason.to_string();
    }
    let tail = crate::log::read_log_tail(log, 4096).unwrap_or_default();
    match tail.lines().rev().map(str::trim).find(|l| !l.is_empty() && !l.starts_with("--- resolve-desk:")) {
        Some(line) => {
            let line: String = line.chars().take(200).collect();
            format!("{reason}; its last stderr line: `{line}`")
        }
        None => reason.to_string(),
    }
}

/// A tool's answer (`{content: [{type: "text", text}], details?, isError?}`) as a result.
pub(crate) fn result_of(v: &Value) -> ToolResult {
    let content = match v.get("content") {
        Some(Value::Array(items)) => items
            .iter()
            .filter_map(|i| match i {
                Value::String(s) => Some(s.clone()),
                other => other.get("text").and_then(Value::as_str).map(str::to_string),
            })
            .map(|text| Content::Text { text })
            .collect(),
        Some(Value::String(s)) => vec![Content::Text { text: s.clone() }],
        _ => Vec::new(),
    };
    ToolResult {
        content,
        details: v.get("details").cloned().filter(|d| !d.is_null()),
        is_error: v.get("isError").and_then(Value::as_bool).unwrap_or(false),
        error_code: None,
    }
}

/// The engine's view of an external tool.
pub struct ExternalTool {
    pub(crate) runner: Arc<Runner>,
}

impl ExternalTool {
    pub fn manifest(&self) -> &Manifest {
        &self.runner.manifest
    }
}

#[async_trait]
impl Tool for ExternalTool {
    fn name(&self) -> &str {
        &self.runner.manifest.name
    }
    fn label(&self) -> &str {
        &self.runner.manifest.label
    }
    fn description(&self) -> &str {
        &self.runner.manifest.description
    }
    fn parameters(&self) -> Value {
        self.runner.manifest.parameters.clone()
    }
    async fn execute(&self, ctx: ToolContext, params: Value) -> Result<ToolResult, ToolError> {
        self.runner.execute(ctx, params).await
    }
}
