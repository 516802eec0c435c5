//! `resolve` as an MCP task (the `io.modelcontextprotocol/tasks` extension, SEP-2663, which
//! rmcp implements): for a client that declares the extension, an agent's `resolve` under the
//! `human` policy returns a task at once instead of holding the request open; `tasks/get` shows
//! it `working` with "waiting for the person's review of …" until the person decides, then
//! `completed` with the same result a live wait returns. The task waits without a bound (the
//! client polls; no request is held open), `tasks/cancel` ends the wait as a cancelled call
//! (the proposal stays, a later decision is kept for the agent), and so does the end of the
//! connection. Clients without the extension get the bounded wait.

use rmcp::model::{CallToolResult, CreateTaskResult, DetailedTask};
use rmcp::task_manager::{TaskExit, TaskManager, TaskOptions, DEFAULT_POLL_INTERVAL_MS};
use rmcp::ErrorData as McpError;
use tokio_util::sync::CancellationToken;

use std::future::Future;

/// The tasks of one connection.
#[derive(Clone)]
pub(crate) struct ResolveTasks {
    manager: TaskManager,
    /// Cancelled when the connection ends: every task's wait ends as a cancelled call.
    closed: CancellationToken,
}

impl ResolveTasks {
    pub(crate) fn new() -> Self {
        Self { manager: TaskManager::new(), closed: CancellationToken::new() }
    }

    /// Runs `call` (given the token that cancels it) as a task shown with `status`. Retained
    /// for the connection's life (no TTL: a person's review has no deadline).
    pub(crate) fn spawn<F, Fut>(&self, status: String, call: F) -> CreateTaskResult
    where
        F: FnOnce(CancellationToken) -> Fut,
        Fut: Future<Output = CallToolResult> + Send + 'static,
    {
        let cancel = self.closed.child_token();
        let run = call(cancel.clone());
        let options = TaskOptions::new()
            .with_ttl_ms(None)
            .with_poll_interval_ms(DEFAULT_POLL_INTERVAL_MS)
            .with_status_message(status);
        let task = self.manager.spawn(options, move |task| {
            Box::pin(async move {
                tokio::pin!(run);
                tokio::select! {
                    result = &mut run => Ok(result),
                    _ = task.cancelled() => {
                        // The call ends as a cancelled call (its proposal stays, marked as no
                        // longer waiting); a decision at that very moment is still its result.
                        cancel.cancel();
                        let result = run.await;
                        if result.is_error == Some(true) { Err(TaskExit::Cancelled) } else { Ok(result) }
                    }
                }
            })
        });
        CreateTaskResult::new(task)
    }

    pub(crate) fn get(&self, task_id: &str) -> Result<DetailedTask, McpError> {
        self.manager.get_task(task_id)
    }

    pub(crate) fn cancel(&self, task_id: &str) -> Result<(), McpError> {
        self.manager.cancel_task(task_id)
    }

    /// The connection ended: every wait ends (as a cancelled call), nothing is applied.
    pub(crate) fn close(&self) {
        self.closed.cancel();
    }
}
