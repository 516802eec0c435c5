//! The MCP handler: a session's tools as MCP tools, calls through the session's one door.

use std::borrow::Cow;
use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use resolve_engine::{
    tool::ProgressSink, Actor, ResolvePolicy, Session, ToolContext, ToolResult, ToolSpec, WaitBound, PREVIEW_REMINDER,
    RESOLVE_TOOL_NAME,
};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CancelTaskParams, ContentBlock, GetTaskParams,
    GetTaskResult, Implementation, InitializeRequestParams, InitializeResult, JsonObject, ListResourcesResult,
    ListToolsResult, PaginatedRequestParams, ProgressToken, ProtocolVersion, ReadResourceRequestParams,
    ReadResourceResponse, ResourceUpdatedNotificationParam, ServerCapabilities, ServerConfig, SubscribeRequestParams,
    Tool, ToolAnnotations, UnsubscribeRequestParams, UpdateTaskParams,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ErrorData as McpError, ServerHandler, ServiceExt};
use serde_json::Value;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::broadcast::error::RecvError;
use tokio_util::sync::CancellationToken;

use crate::lines;
use crate::progress::ProgressRelay;
use crate::resources::{self, Subscriptions};
use crate::tasks::ResolveTasks;

/// Why a connection could not be served.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error("the MCP client did not complete the initialize handshake: {0}")]
    Initialize(String),
    #[error("the MCP connection task failed: {0}")]
    Join(String),
}

/// The `initialize` request's `_meta` key that sets how long this connection's `resolve` waits
/// for the person, in whole seconds (1 to [`MAX_RESOLVE_WAIT_SECS`]). `rdesk mcp
/// --resolve-wait SECONDS` adds it on its way to the window; without it a connection waits the
/// session's bound ([`resolve_engine::DEFAULT_RESOLVE_WAIT`] unless set).
pub const RESOLVE_WAIT_META: &str = "resolve-desk/resolveWaitSeconds";

/// The longest `resolve` wait a connection may ask for (a day).
pub const MAX_RESOLVE_WAIT_SECS: u64 = 86_400;

/// The MCP server of one connection. Cheap to clone; every clone serves the same session.
#[derive(Clone)]
pub struct DeskServer {
    session: Arc<Session>,
    /// The client's name from `initialize` (recorded on every action it pushes).
    client: Arc<Mutex<Option<String>>>,
    /// How long this connection's `resolve` waits for the person (from `initialize`'s
    /// [`RESOLVE_WAIT_META`]; the session's bound otherwise).
    wait: Arc<Mutex<WaitBound>>,
    /// The names of the tools this client knows of: its last `tools/list`, or what a tool
    /// result last announced. A tool loaded or unloaded since is announced in the text of
    /// the client's next tool result, for clients that never read the list again.
    known: Arc<Mutex<Option<BTreeSet<String>>>>,
    /// `resolve` calls served as MCP tasks (clients that declare the tasks extension).
    tasks: ResolveTasks,
    /// The pending actions' resources this client subscribed to.
    subscribed: Subscriptions,
}

fn locked<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl DeskServer {
    pub fn new(session: Arc<Session>) -> Self {
        Self {
            session,
            client: Arc::new(Mutex::new(None)),
            wait: Arc::new(Mutex::new(WaitBound::SessionDefault)),
            known: Arc::new(Mutex::new(None)),
            tasks: ResolveTasks::new(),
            subscribed: Subscriptions::default(),
        }
    }

    /// How long this connection's `resolve` waits for the person.
    pub fn resolve_wait(&self) -> Duration {
        match *locked(&self.wait) {
            WaitBound::For(d) => d,
            WaitBound::SessionDefault | WaitBound::Unbounded => self.session.waits().bound(),
        }
    }

    /// The tools offered to this client now (`resolve` always: see `Session::client_tools`).
    pub fn tools(&self) -> Vec<Tool> {
        let policy = self.session.policy();
        let wait = self.resolve_wait();
        self.session
            .client_tools()
            .iter()
            .map(|spec| {
                let mut tool = Self::mcp_tool(spec);
                if spec.name == RESOLVE_TOOL_NAME {
                    tool.description = Some(resolve_description(policy, wait).into());
                }
                tool
            })
            .collect()
    }

    /// Remembers `tools` as what the client knows of.
    fn know(&self, tools: &[Tool]) {
        *locked(&self.known) = Some(by_name(tools));
    }

    /// The tools loaded or unloaded since the client last heard of its tools, said in a few
    /// lines (and now known); `None` when nothing changed.
    fn tool_changes(&self) -> Option<String> {
        let now = self.tools();
        let mut known = locked(&self.known);
        let before = known.as_ref()?;
        let added: Vec<&Tool> = now.iter().filter(|t| !before.contains(t.name.as_ref())).collect();
        let removed: Vec<&String> =
            before.iter().filter(|name| !now.iter().any(|t| t.name.as_ref() == name.as_str())).collect();
        if added.is_empty() && removed.is_empty() {
            return None;
        }
        let mut text = String::from("The desk's tools changed since your tool list was read.");
        if !added.is_empty() {
            text.push_str(" New tools you can call by name:");
            for t in &added {
                let schema = Value::Object((*t.input_schema).clone()).to_string();
                let schema = if schema.len() <= ANNOUNCED_SCHEMA_BYTES { schema } else { "see tools/list".into() };
                text.push_str(&format!(
                    "\n- `{}`: {} Parameters (JSON Schema): {schema}",
                    t.name,
                    t.description.as_deref().unwrap_or("").trim_end()
                ));
            }
        }
        if !removed.is_empty() {
            let names: Vec<String> = removed.iter().map(|n| format!("`{n}`")).collect();
            text.push_str(&format!("\nNo longer available: {}.", names.join(", ")));
        }
        *known = Some(by_name(&now));
        Some(text)
    }

    /// The client's name from `initialize`, once it arrived.
    pub fn client_name(&self) -> Option<String> {
        self.client.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// The MCP description of a session tool.
    pub fn mcp_tool(spec: &ToolSpec) -> Tool {
        let mut schema: JsonObject = match &spec.parameters {
            Value::Object(o) => o.clone(),
            _ => JsonObject::new(),
        };
        schema.entry("type").or_insert_with(|| Value::String("object".into()));
        // Only a preview the desk itself guarantees to write nothing (`Tool::preview_only`: the
        // built-in `ast_edit` and `batch_rename_preview`) is announced read-only; clients may
        // run such a tool without asking. Every other tool — `resolve`, and any external tool,
        // a program that can do anything in its `execute` — is announced as one that may
        // change anything, reach outside the workspace, and destroy.
        let read_only = spec.preview_only && spec.name != RESOLVE_TOOL_NAME;
        let annotations = ToolAnnotations::with_title(spec.label.clone())
            .read_only(read_only)
            .destructive(!read_only)
            .open_world(!read_only);
        let description = if read_only {
            format!(
                "{} (Writes nothing: it shows a preview and queues a pending action for review; call `resolve` afterwards.)",
                spec.description.trim_end()
            )
        } else {
            spec.description.clone()
        };
        Tool::new(spec.name.clone(), description, Arc::new(schema))
            .with_title(spec.label.clone())
            .with_annotations(annotations)
    }

    /// The relay of the call's progress to the client, when the request asked for progress.
    fn progress_relay(context: &RequestContext<RoleServer>) -> Option<ProgressRelay> {
        let token: ProgressToken = context.meta.get_progress_token()?;
        let peer = context.peer.clone();
        Some(ProgressRelay::start(token, move |param| {
            let peer = peer.clone();
            async move { peer.notify_progress(param).await.is_ok() }
        }))
    }

    /// Runs one `tools/call` through the session as the agent.
    pub async fn call(
        &self,
        name: &str,
        args: Value,
        cancel: CancellationToken,
        progress: Option<ProgressSink>,
    ) -> CallToolResult {
        let wait = *locked(&self.wait);
        self.call_waiting(name, args, cancel, progress, wait).await
    }

    /// [`call`](Self::call) with `wait` as the bound on a `resolve` that waits for the person.
    async fn call_waiting(
        &self,
        name: &str,
        args: Value,
        cancel: CancellationToken,
        progress: Option<ProgressSink>,
        wait: WaitBound,
    ) -> CallToolResult {
        let session = &self.session;
        let mut ctx = ToolContext::new(session.new_call_id()).with_cancel(cancel).with_wait(wait);
        if let Some(client) = self.client_name() {
            ctx = ctx.with_client(client);
        }
        if let Some(sink) = progress {
            ctx = ctx.with_progress(sink);
        }
        // Per call (the engine's trace), not `take_reminders`: that queue is the session's,
        // shared with every other client and the app's own agent.
        let record = session.call_traced(Actor::Agent, ctx, name, args).await;
        let mut result = to_call_tool_result(&record.result, !record.pushed.is_empty());
        if let Some(changes) = self.tool_changes() {
            result.content.push(ContentBlock::text(changes));
        }
        result
    }
}

fn by_name(tools: &[Tool]) -> BTreeSet<String> {
    tools.iter().map(|t| t.name.to_string()).collect()
}

/// The longest input schema a tool result announces in full (longer: "see tools/list").
const ANNOUNCED_SCHEMA_BYTES: usize = 2048;

/// `resolve`'s description for MCP clients: listed whatever the stack holds, so it says what
/// the call does on an empty stack and how a wait for the person ends.
fn resolve_description(policy: ResolvePolicy, wait: Duration) -> String {
    let params = "`action`: \"apply\" or \"discard\"; `reason`: why, in a sentence (required); optional \
                  `expected_id`: the id of the action you reviewed; optional `leave_out` (apply only): \
                  `{\"files\": [paths], \"replacements\": {path: [ids]}, \"hunks\": {path: [ids]}}` applies the rest and \
                  discards what it names (hunk n: the n-th run of changed lines of a file's diff).";
    match policy {
        ResolvePolicy::Human => format!(
            "Waits for the person's decision on the top pending action (the most recent preview). In this desk the \
             person decides: your call proposes `action` with your `reason` beside the action in the Resolve Desk \
             window, waits up to {} s, and returns their decision (`Decided by the person: applied|discarded. Reason: \
             …`). If they have not decided by then, it says so and nothing was written: call `resolve` again to keep \
             waiting. A decision made while you were not waiting is returned by your next `resolve` (even when \
             nothing is pending any more) or at the start of your next call. With nothing pending and nothing kept \
             for you it answers `No pending action to resolve. Nothing to apply or discard.` {params}",
            wait.as_secs()
        ),
        ResolvePolicy::Agent => format!(
            "Applies or discards the top pending action (the most recent preview): \"apply\" makes the previewed \
             change persistent, \"discard\" drops it. With nothing pending it answers `No pending action to \
             resolve. Nothing to apply or discard.` {params}"
        ),
    }
}

/// A session result as an MCP tool result.
/// (A closed desk's error already says how to reopen it: `resolve-desk DIR`.)
fn to_call_tool_result(result: &ToolResult, pushed: bool) -> CallToolResult {
    let mut text = result.text_content();
    if pushed && !result.is_error {
        if !text.is_empty() {
            text.push_str("\n\n");
        }
        text.push_str(PREVIEW_REMINDER);
    }
    let content = vec![ContentBlock::text(text)];
    let mut out = if result.is_error { CallToolResult::error(content) } else { CallToolResult::success(content) };
    if let Some(details @ Value::Object(_)) = &result.details {
        out.structured_content = Some(details.clone());
    }
    out
}

const INSTRUCTIONS: &str = "Resolve Desk: each tool computes a preview and queues a pending action; call `resolve` \
to apply or discard the top one, with a reason. The tools annotated read-only (the built-in previews) write nothing; any \
other tool but `resolve` is a program added for this workspace or user, which may do more than preview. When the person \
decides (the default), `resolve` waits for their decision in the Resolve Desk window, for a bounded time: if it says \
they have not decided yet, call `resolve` again. A decision made while you were not waiting is given to your next \
`resolve`, or at the start of your next call of another tool.";

impl ServerHandler for DeskServer {
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_tool_list_changed()
            .enable_resources()
            .enable_resources_subscribe()
            .enable_resources_list_changed()
            .enable_tasks()
            .build();
        ServerConfig::new(capabilities)
            .with_server_info(Implementation::new("resolve-desk", env!("CARGO_PKG_VERSION")))
            .with_instructions(INSTRUCTIONS)
    }

    /// The handshake-era revisions (initialize, ping, list_changed notifications on the
    /// connection), up to 2025-11-25, which every coding agent speaks today.
    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        Cow::Borrowed(ProtocolVersion::known_up_to(&ProtocolVersion::V_2025_11_25))
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, McpError> {
        let name = request.client_info.name.trim().to_string();
        if !name.is_empty() {
            *self.client.lock().unwrap_or_else(|p| p.into_inner()) = Some(name);
        }
        // rmcp moves a request's `_meta` into its context.
        let meta = request.meta.as_ref().and_then(|m| m.0.get(RESOLVE_WAIT_META));
        if let Some(wait) = meta.or_else(|| context.meta.0.get(RESOLVE_WAIT_META)) {
            let secs = wait.as_u64().filter(|s| (1..=MAX_RESOLVE_WAIT_SECS).contains(s)).ok_or_else(|| {
                McpError::invalid_params(
                    format!(
                        "`_meta.{RESOLVE_WAIT_META}` must be a whole number of seconds from 1 to \
                         {MAX_RESOLVE_WAIT_SECS}, got {wait}"
                    ),
                    None,
                )
            })?;
            *locked(&self.wait) = WaitBound::For(Duration::from_secs(secs));
        }
        // What the client knows of until it lists the tools: what it would have listed now.
        self.know(&self.tools());
        context.peer.set_peer_info(request.clone());
        self.negotiate_initialize(&request)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        let tools = self.tools();
        self.know(&tools);
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let args = Value::Object(request.arguments.unwrap_or_default());
        // Under `human`, a client with the tasks extension gets its `resolve` as a task: no
        // request held open while the person reads, no bound on the wait.
        let waits_for_person = request.name == RESOLVE_TOOL_NAME && self.session.policy() == ResolvePolicy::Human;
        if waits_for_person && context.client_capabilities().is_some_and(|c| c.supports_tasks()) {
            if let Some(top) = self.session.store().peek() {
                let status = format!(
                    "waiting for the person's review of {} (\"{}\") in the Resolve Desk window",
                    top.id, top.label
                );
                let server = self.clone();
                let task = self.tasks.spawn(status, move |cancel| async move {
                    server.call_waiting(RESOLVE_TOOL_NAME, args, cancel, None, WaitBound::Unbounded).await
                });
                return Ok(CallToolResponse::Task(task));
            }
        }
        let progress = Self::progress_relay(&context);
        let result =
            self.call(&request.name, args, context.ct.clone(), progress.as_ref().map(ProgressRelay::sink)).await;
        // The last report goes before the answer.
        if let Some(progress) = progress {
            progress.finish().await;
        }
        Ok(result.into())
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        Ok(ListResourcesResult::with_all_items(resources::list(&self.session)))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        resources::read(&self.session, &request.uri).map(ReadResourceResponse::Complete)
    }

    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.subscribed.add(request.uri);
        Ok(())
    }

    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.subscribed.remove(&request.uri);
        Ok(())
    }

    async fn get_task(
        &self,
        request: GetTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, McpError> {
        Ok(GetTaskResult::new(self.tasks.get(&request.task_id)?))
    }

    /// A `resolve` task never asks the client for input: nothing to update.
    async fn update_task(
        &self,
        request: UpdateTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.tasks.get(&request.task_id).map(|_| ())
    }

    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.tasks.cancel(&request.task_id)
    }
}

/// Serves one MCP connection on `reader`/`writer` until the client goes away.
pub async fn serve<R, W>(session: Arc<Session>, reader: R, writer: W) -> Result<(), ServeError>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    serve_until(session, reader, writer, CancellationToken::new()).await
}

/// Like [`serve`], ending also when `shutdown` is cancelled (answers in flight are still sent,
/// for up to two seconds).
pub async fn serve_until<R, W>(
    session: Arc<Session>,
    reader: R,
    writer: W,
    shutdown: CancellationToken,
) -> Result<(), ServeError>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (rx, tx, pump) = lines::checked(reader, writer, lines::max_line_bytes());
    let server = DeskServer::new(session.clone());
    let tasks = server.tasks.clone();
    let subscribed = server.subscribed.clone();
    let mut events = session.store().subscribe();
    let running = match server.serve_with_ct((rx, tx), shutdown.clone()).await {
        Ok(r) => r,
        Err(e) => {
            pump.abort();
            return Err(ServeError::Initialize(e.to_string()));
        }
    };
    // Tools loaded or unloaded at runtime (external tools) change the list (`resolve` is
    // listed whatever the stack holds, so pushes and decisions do not).
    let peer = running.peer().clone();
    let mut tools_changed = session.subscribe_tools();
    // Pending actions are resources: pushes and pops change their list, a subscribed one's
    // status, proposal or decision updates it.
    let watcher = tokio::spawn(async move {
        loop {
            let (list_changed, updated) = tokio::select! {
                changed = tools_changed.changed() => {
                    if changed.is_err() || peer.notify_tool_list_changed().await.is_err() {
                        break;
                    }
                    continue;
                }
                event = events.recv() => match event {
                    Ok(e) => resources::on_change(&e.change, &subscribed),
                    Err(RecvError::Lagged(_)) => resources::on_lag(&subscribed),
                    Err(RecvError::Closed) => break,
                },
            };
            for uri in updated {
                if peer.notify_resource_updated(ResourceUpdatedNotificationParam::new(uri)).await.is_err() {
                    return;
                }
            }
            if list_changed && peer.notify_resource_list_changed().await.is_err() {
                break;
            }
        }
    });
    let outcome = running.waiting().await;
    watcher.abort();
    // A task's wait ends with the connection (nothing applied; a later decision is kept).
    tasks.close();
    // Let the output pump flush what the service wrote last.
    let _ = pump.await;
    outcome.map(|_| ()).map_err(|e| ServeError::Join(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn spec(name: &str, preview_only: bool) -> ToolSpec {
        ToolSpec {
            name: name.into(),
            label: name.into(),
            description: "Does it.".into(),
            parameters: json!({"type": "object"}),
            hidden: false,
            preview_only,
        }
    }

    #[test]
    fn only_a_preview_only_tool_is_announced_read_only_and_as_writing_nothing() {
        let preview = DeskServer::mcp_tool(&spec("ast_edit", true));
        let a = preview.annotations.clone().unwrap();
        assert_eq!((a.read_only_hint, a.destructive_hint, a.open_world_hint), (Some(true), Some(false), Some(false)));
        assert!(preview.description.unwrap().starts_with("Does it. (Writes nothing:"));

        for other in [spec("external_tool", false), spec(RESOLVE_TOOL_NAME, true)] {
            let tool = DeskServer::mcp_tool(&other);
            let a = tool.annotations.clone().unwrap();
            assert_eq!(
                (a.read_only_hint, a.destructive_hint, a.open_world_hint),
                (Some(false), Some(true), Some(true)),
                "{} may change anything",
                other.name
            );
            assert_eq!(tool.description.as_deref(), Some("Does it."), "no claim to write nothing");
        }
    }
}
