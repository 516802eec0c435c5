//! A tool call's progress as MCP `notifications/progress`, thinned by the window's rule
//! (`src-tauri/src/events.rs`, `progress_sink`): at most one notification every
//! [`PROGRESS_EVERY`]. A scan of 20,000 files reports every 64 files, an external tool may
//! report every step; sent as they come, the notifications would queue in front of the call's
//! answer and cost the agent's client one message each.
//!
//! The reports go through a one-slot channel (`tokio::sync::watch`): a report replaces the one
//! not sent yet, so the latest value wins and nothing queues up, however fast a tool reports.
//! When the call ends, the report not sent yet (the final one) is sent before the call's
//! answer.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use resolve_engine::{tool::ProgressSink, Progress};
use rmcp::model::{ProgressNotificationParam, ProgressToken};
use tokio::sync::watch;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// The least time between two progress notifications of one call (the window's
/// `PROGRESS_EVERY`, 50 ms: at most 20 a second).
pub const PROGRESS_EVERY: Duration = Duration::from_millis(50);

/// The progress of one call, on its way to the client. [`finish`](Self::finish) it when the
/// call has returned.
pub(crate) struct ProgressRelay {
    sink: ProgressSink,
    finished: CancellationToken,
    task: Option<JoinHandle<()>>,
}

/// A report numbered in the order it arrived (0: none yet).
type Slot = (u64, Option<Progress>);

impl ProgressRelay {
    /// Starts relaying reports for `token` with `send` (false once the client is gone).
    pub(crate) fn start<S, F>(token: ProgressToken, mut send: S) -> Self
    where
        S: FnMut(ProgressNotificationParam) -> F + Send + 'static,
        F: Future<Output = bool> + Send,
    {
        let (tx, mut rx) = watch::channel::<Slot>((0, None));
        let sink: ProgressSink = Arc::new(move |_call_id: &str, p: Progress| {
            tx.send_modify(|(seq, slot)| {
                *seq += 1;
                *slot = Some(p);
            });
        });
        let finished = CancellationToken::new();
        let done = finished.clone();
        let task = tokio::spawn(async move {
            let mut sent = Sent::default();
            loop {
                let ended = tokio::select! {
                    biased;
                    _ = done.cancelled() => true,
                    changed = rx.changed() => changed.is_err(),
                };
                if ended || !sent.send_latest(&mut rx, &token, &mut send).await {
                    break;
                }
                tokio::select! {
                    _ = tokio::time::sleep(PROGRESS_EVERY) => {}
                    _ = done.cancelled() => {}
                }
            }
            // The final report always goes (unless the client is gone).
            sent.send_latest(&mut rx, &token, &mut send).await;
        });
        Self { sink, finished, task: Some(task) }
    }

    /// The sink the tool reports to.
    pub(crate) fn sink(&self) -> ProgressSink {
        self.sink.clone()
    }

    /// Sends the report not sent yet, if any, and stops. Reports after this are dropped.
    pub(crate) async fn finish(mut self) {
        self.finished.cancel();
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
    }
}

/// A call dropped before it finished (its request cancelled) still ends its relay: the report
/// not sent yet goes, then the task stops, even if the tool keeps a copy of the sink.
impl Drop for ProgressRelay {
    fn drop(&mut self) {
        self.finished.cancel();
    }
}

/// What was sent so far.
#[derive(Default)]
struct Sent {
    /// The number of the last report sent.
    seq: u64,
    /// The last progress value sent.
    value: Option<f64>,
}

impl Sent {
    /// Sends the latest report if it was not sent yet; false once the client is gone.
    async fn send_latest<S, F>(&mut self, rx: &mut watch::Receiver<Slot>, token: &ProgressToken, send: &mut S) -> bool
    where
        S: FnMut(ProgressNotificationParam) -> F,
        F: Future<Output = bool>,
    {
        let (seq, progress) = rx.borrow_and_update().clone();
        let Some(p) = progress.filter(|_| seq != self.seq) else {
            return true;
        };
        self.seq = seq;
        // MCP wants the value to increase with every notification: a report that does not
        // (parallel workers, a heartbeat) goes as one more than the last.
        let done = p.done as f64;
        let value = match self.value {
            Some(last) if done <= last => last + 1.0,
            _ => done,
        };
        self.value = Some(value);
        let mut param = ProgressNotificationParam::new(token.clone(), value);
        if let Some(total) = p.total {
            param = param.with_total((total as f64).max(value));
        }
        if let Some(message) = p.message {
            param = param.with_message(message);
        }
        send(param).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    fn relay() -> (ProgressRelay, Arc<Mutex<Vec<f64>>>) {
        let sent = Arc::new(Mutex::new(Vec::new()));
        let seen = sent.clone();
        let relay = ProgressRelay::start(ProgressToken(rmcp::model::NumberOrString::Number(1)), move |p| {
            seen.lock().unwrap().push(p.progress);
            async { true }
        });
        (relay, sent)
    }

    /// Time is paused: the runtime moves the clock on whenever every task waits, so a tool
    /// reporting once a millisecond for ten seconds runs at once and the same every time.
    #[tokio::test(start_paused = true)]
    async fn a_report_every_millisecond_becomes_the_latest_value_once_per_interval_and_the_last() {
        let (relay, sent) = relay();
        let sink = relay.sink();
        for done in 1..=10_000u64 {
            sink("c1", Progress { done, total: Some(10_000), message: None });
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        relay.finish().await;
        let sent = sent.lock().unwrap();
        let every = PROGRESS_EVERY.as_millis() as usize;
        assert_eq!(sent.first(), Some(&1.0), "the first report goes at once: {sent:?}");
        assert_eq!(sent.last(), Some(&10_000.0), "the final report always goes: {sent:?}");
        assert!(sent.windows(2).all(|w| w[0] < w[1]), "increasing: {sent:?}");
        assert!(
            (10_000 / every - 5..=10_000 / every + 2).contains(&sent.len()),
            "one notification per {PROGRESS_EVERY:?} of ten seconds, plus the last: {} sent",
            sent.len()
        );
        // Each one carries the latest report of its time: a report a millisecond, so each is
        // about one interval's worth of reports past the one before.
        let gaps: Vec<f64> = sent.windows(2).map(|w| w[1] - w[0]).collect();
        assert!(
            gaps[..gaps.len() - 1].iter().all(|g| *g >= (every - 2) as f64 && *g <= (every + 2) as f64),
            "{gaps:?}"
        );
    }

    #[tokio::test]
    async fn a_report_that_does_not_increase_goes_as_one_more_than_the_last() {
        let (relay, sent) = relay();
        let sink = relay.sink();
        sink("c1", Progress { done: 5, total: None, message: None });
        // Wait for the first notification before the next report, so both are sent.
        while sent.lock().unwrap().is_empty() {
            tokio::task::yield_now().await;
        }
        sink("c1", Progress { done: 3, total: None, message: Some("again".into()) });
        relay.finish().await;
        assert_eq!(*sent.lock().unwrap(), vec![5.0, 6.0]);
    }

    #[tokio::test]
    async fn a_call_without_reports_sends_nothing() {
        let (relay, sent) = relay();
        relay.finish().await;
        assert!(sent.lock().unwrap().is_empty());
    }
}
