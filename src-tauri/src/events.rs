//! Events to the UI: `queue-changed {revision}` after every store change, and
//! `tool-progress` while a tool runs. Payloads are the wire types of `resolve-protocol`.

use std::sync::Arc;

use resolve_engine::Session;
use resolve_protocol::ipc::events::{QUEUE_CHANGED, TOOL_PROGRESS};
use resolve_protocol::{QueueChanged, ToolProgress};
use tauri::async_runtime::JoinHandle;
use tauri::Emitter as _;
use tokio::sync::broadcast::error::RecvError;

/// Sends one event to the UI (name, JSON payload).
pub type Emitter = Arc<dyn Fn(&str, serde_json::Value) + Send + Sync>;

pub fn emitter<R: tauri::Runtime>(app: tauri::AppHandle<R>) -> Emitter {
    Arc::new(move |name, payload| {
        if let Err(e) = app.emit(name, payload) {
            eprintln!("resolve-desk: could not emit {name}: {e}");
        }
    })
}

/// Forwards every change of the session's store as `queue-changed`.
pub fn forward_queue(session: Arc<Session>, emit: Emitter) -> JoinHandle<()> {
    let store = session.store().clone();
    let mut rx = store.subscribe();
    tauri::async_runtime::spawn(async move {
        loop {
            let revision = match rx.recv().await {
                Ok(event) => event.revision,
                // Missed some: the UI refetches anyway, so the latest revision is enough.
                Err(RecvError::Lagged(_)) => store.revision(),
                Err(RecvError::Closed) => break,
            };
            emit(QUEUE_CHANGED, serde_json::to_value(QueueChanged { revision }).unwrap_or_default());
        }
    })
}

/// A progress sink for a tool call that emits `tool-progress`.
pub fn progress_sink(emit: Emitter) -> resolve_engine::tool::ProgressSink {
    Arc::new(move |call_id, p| {
        let payload = ToolProgress { call_id: call_id.to_string(), done: p.done, total: p.total, message: p.message };
        emit(TOOL_PROGRESS, serde_json::to_value(payload).unwrap_or_default());
    })
}
