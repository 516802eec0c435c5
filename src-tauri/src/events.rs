//! Events to the UI: `queue-changed {revision}` after every store change, `tool-progress`
//! while a tool runs, `agent-event`, `notices-changed` and `close-requested`. Payloads are
//! the wire types of `resolve-protocol`.
//!
//! They are not Tauri events: the page fetches them with one long-polling command,
//! `next_events` (see [`EventHub`]). A Tauri event is a script the UI process evaluates in
//! the page (`webkit_web_view_evaluate_javascript`), and so is every `listen`; the first one
//! makes WebKit start JavaScriptCore in the app's own process, about 6 MiB resident for the
//! life of the window (issue 15, docs/PERFORMANCE.md). A command's answer goes back over
//! Tauri's `ipc:` protocol instead, which evaluates nothing in the app's process.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use resolve_engine::Session;
use resolve_protocol::ipc::events::{FOLDERS_CHANGED, QUEUE_CHANGED, TOOL_PROGRESS};
use resolve_protocol::{EventBatch, FoldersChanged, QueueChanged, ShellEvent, ToolProgress};
use tauri::async_runtime::JoinHandle;
use tokio::sync::broadcast::error::RecvError;
use tokio::sync::watch;

/// Sends one event to the UI (name, JSON payload).
pub type Emitter = Arc<dyn Fn(&str, serde_json::Value) + Send + Sync>;

/// How many events the hub keeps for a page that has not fetched them yet. Progress is thinned
/// to 20 a second and the others come one per decision, turn step or banner change, so a page
/// that polls falls this far behind only when it is gone; one that does is told (`missed`).
pub const KEPT_EVENTS: usize = 10_000;

/// How long `next_events` waits for an event before it answers with none (the page asks again).
pub const POLL_WAIT: Duration = Duration::from_secs(25);

/// The events for the page, numbered from 1, the last [`KEPT_EVENTS`] of them kept.
pub struct EventHub {
    kept: Mutex<VecDeque<(u64, ShellEvent)>>,
    /// The number of the last event pushed.
    last: watch::Sender<u64>,
}

impl Default for EventHub {
    fn default() -> Self {
        EventHub { kept: Mutex::new(VecDeque::new()), last: watch::Sender::new(0) }
    }
}

impl EventHub {
    /// Queues one event and wakes the page's poll.
    pub fn push(&self, name: &str, payload: serde_json::Value) {
        let mut kept = self.kept.lock().unwrap_or_else(|p| p.into_inner());
        let seq = *self.last.borrow() + 1;
        kept.push_back((seq, ShellEvent { name: name.to_string(), payload }));
        while kept.len() > KEPT_EVENTS {
            kept.pop_front();
        }
        // Under the lock, so numbers reach the watch in order.
        self.last.send_replace(seq);
    }

    /// An [`Emitter`] that pushes here.
    pub fn emitter(self: &Arc<Self>) -> Emitter {
        let hub = self.clone();
        Arc::new(move |name, payload| hub.push(name, payload))
    }

    /// The events after number `after`, waiting up to `wait` for one when there are none yet.
    /// `after: None` answers at once with no events and the number to continue from (the page
    /// asks so when it starts, and sees what is pushed from then on, like a `listen`).
    pub async fn next(&self, after: Option<u64>, wait: Duration) -> EventBatch {
        let Some(after) = after else {
            return EventBatch { events: Vec::new(), last: *self.last.borrow(), missed: false };
        };
        let mut rx = self.last.subscribe();
        // A number this hub never gave (beyond the last event) counts as the last: the call
        // waits for the next event instead of for that number.
        let after = after.min(*rx.borrow());
        let _ = tokio::time::timeout(wait, rx.wait_for(|last| *last > after)).await;
        let kept = self.kept.lock().unwrap_or_else(|p| p.into_inner());
        let first_kept = kept.front().map_or(u64::MAX, |(seq, _)| *seq);
        let events: Vec<ShellEvent> = kept.iter().filter(|(seq, _)| *seq > after).map(|(_, e)| e.clone()).collect();
        let last = kept.back().map_or(after, |(seq, _)| *seq).max(after);
        EventBatch { missed: !events.is_empty() && first_kept > after + 1, events, last }
    }
}

/// Forwards every change of a folder's store: `queue-changed` while the window shows the
/// folder (`shown`), and `folders-changed` (its pending count or agent-waiting mark may
/// differ) always.
pub fn forward_queue(
    session: Arc<Session>,
    emit: Emitter,
    shown: Arc<std::sync::atomic::AtomicBool>,
    root: String,
    nudge: Arc<std::sync::OnceLock<crate::nudge::Nudger>>,
) -> JoinHandle<()> {
    let folder = crate::nudge::folder_name(std::path::Path::new(&root));
    let store = session.store().clone();
    let mut rx = store.subscribe();
    tauri::async_runtime::spawn(async move {
        loop {
            let (revision, change) = match rx.recv().await {
                Ok(event) => (event.revision, Some(event.change)),
                // Missed some: the UI refetches anyway, so the latest revision is enough.
                Err(RecvError::Lagged(_)) => (store.revision(), None),
                Err(RecvError::Closed) => break,
            };
            if let Some(nudger) = nudge.get() {
                match &change {
                    Some(change) => {
                        for signal in crate::nudge::signals(change, &session, &root, &folder) {
                            nudger(signal);
                        }
                    }
                    None => nudger(crate::nudge::Signal::Changed),
                }
            }
            if shown.load(std::sync::atomic::Ordering::SeqCst) {
                emit(QUEUE_CHANGED, serde_json::to_value(QueueChanged { revision }).unwrap_or_default());
            }
            emit(FOLDERS_CHANGED, serde_json::to_value(FoldersChanged { root: root.clone() }).unwrap_or_default());
            crate::memory::after_quiet_moment();
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

    fn names(batch: &EventBatch) -> Vec<u64> {
        batch.events.iter().map(|e| e.payload["n"].as_u64().unwrap()).collect()
    }

    #[tokio::test]
    async fn a_page_sees_what_is_pushed_after_it_started_in_order_and_once() {
        let hub = EventHub::default();
        hub.push(QUEUE_CHANGED, serde_json::json!({"n": 0}));
        let start = hub.next(None, POLL_WAIT).await;
        assert!(start.events.is_empty(), "the start answers at once, with nothing from before");
        assert_eq!(start.last, 1);
        for n in 1..=3 {
            hub.push(QUEUE_CHANGED, serde_json::json!({"n": n}));
        }
        let batch = hub.next(Some(start.last), POLL_WAIT).await;
        assert_eq!(names(&batch), vec![1, 2, 3]);
        assert!(!batch.missed);
        assert_eq!(batch.last, 4);
        hub.push(TOOL_PROGRESS, serde_json::json!({"n": 4}));
        let batch = hub.next(Some(batch.last), POLL_WAIT).await;
        assert_eq!(names(&batch), vec![4], "what was fetched is not fetched again");
        assert_eq!(batch.events[0].name, TOOL_PROGRESS);
    }

    #[tokio::test]
    async fn a_poll_waits_for_the_next_event_and_answers_with_none_when_none_comes() {
        let hub = Arc::new(EventHub::default());
        let waiting = tokio::spawn({
            let hub = hub.clone();
            async move { hub.next(Some(0), POLL_WAIT).await }
        });
        // The poll is parked on the watch before the push (no lost wake-up either way).
        while hub.last.receiver_count() == 0 {
            tokio::task::yield_now().await;
        }
        hub.push(QUEUE_CHANGED, serde_json::json!({"n": 7}));
        let batch = waiting.await.unwrap();
        assert_eq!(names(&batch), vec![7]);

        let quiet = hub.next(Some(batch.last), Duration::from_millis(1)).await;
        assert!(quiet.events.is_empty(), "nothing new: an empty answer after the wait");
        assert_eq!(quiet.last, batch.last, "and the page keeps its place");
    }

    #[tokio::test]
    async fn a_page_that_fell_behind_the_kept_events_is_told_it_missed_some() {
        let hub = EventHub::default();
        for n in 0..(KEPT_EVENTS as u64 + 5) {
            hub.push(QUEUE_CHANGED, serde_json::json!({"n": n}));
        }
        let batch = hub.next(Some(0), POLL_WAIT).await;
        assert!(batch.missed, "the first 5 events are gone");
        assert_eq!(batch.events.len(), KEPT_EVENTS);
        assert_eq!(names(&batch).first(), Some(&5));
        let next = hub.next(Some(batch.last), Duration::from_millis(1)).await;
        assert!(!next.missed && next.events.is_empty());
    }
}
