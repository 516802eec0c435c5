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

/// The least time between two `tool-progress` events of one call.
pub const PROGRESS_EVERY: std::time::Duration = std::time::Duration::from_millis(50);

/// A progress sink for a tool call that emits `tool-progress`, at most one every
/// [`PROGRESS_EVERY`] (plus the last one, `done == total`). A scan of 20,000 files reports every
/// file; sent as they come, the events queue up on the window's main thread, in front of the
/// person's Cancel (measured: Cancel arrived after a 20,000-file scan had ended).
pub fn progress_sink(emit: Emitter) -> resolve_engine::tool::ProgressSink {
    let last = std::sync::Mutex::new(None::<std::time::Instant>);
    Arc::new(move |call_id, p| {
        if !due(&last, p.total.is_some_and(|t| p.done >= t)) {
            return;
        }
        let payload = ToolProgress { call_id: call_id.to_string(), done: p.done, total: p.total, message: p.message };
        emit(TOOL_PROGRESS, serde_json::to_value(payload).unwrap_or_default());
    })
}

/// Whether a progress report is sent now: the first, the last, and one per [`PROGRESS_EVERY`].
fn due(last: &std::sync::Mutex<Option<std::time::Instant>>, finished: bool) -> bool {
    let mut last = last.lock().unwrap_or_else(|p| p.into_inner());
    let now = std::time::Instant::now();
    if finished || last.is_none_or(|t| now.duration_since(t) >= PROGRESS_EVERY) {
        *last = Some(now);
        return true;
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    #[test]
    fn progress_is_thinned_but_the_first_and_the_last_report_always_go() {
        let sent = Arc::new(Mutex::new(Vec::new()));
        let seen = sent.clone();
        let emit: Emitter = Arc::new(move |_, v| seen.lock().unwrap().push(v["done"].as_u64().unwrap()));
        let sink = progress_sink(emit);
        for done in 0..=10_000u64 {
            sink("c1", resolve_engine::tool::Progress { done, total: Some(10_000), message: None });
        }
        let sent = sent.lock().unwrap();
        assert_eq!(sent.first(), Some(&0), "the first report goes at once");
        assert_eq!(sent.last(), Some(&10_000), "the last report always goes");
        assert!(sent.len() < 10_000, "not one event per file: {} sent", sent.len());
    }
}
