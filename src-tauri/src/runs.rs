//! The window's tool runs in flight — "Run tool…", "Run the preview again" and "Run script…" —
//! so the person's Cancel can stop them: each run holds a [`RunGuard`] whose cancellation
//! token is in its tool context; [`UiRuns::cancel_all`] cancels every one (the tool stops at
//! its next check, nothing is pushed, the run fails with `cancelled`).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use resolve_engine::CancellationToken;

#[derive(Default)]
pub struct UiRuns {
    running: Arc<Mutex<Vec<(u64, CancellationToken)>>>,
    next: AtomicU64,
    /// The window's run ids whose Cancel arrived before the run itself had started here (the
    /// two commands race on the async runtime); such a run starts cancelled.
    cancelled_early: Mutex<std::collections::VecDeque<u64>>,
}

/// How many early cancels are remembered (a run id the window cancelled but never started).
const EARLY_CANCELS: usize = 64;

/// One run in flight; dropping it forgets the run.
pub struct RunGuard {
    id: u64,
    pub cancel: CancellationToken,
    running: Arc<Mutex<Vec<(u64, CancellationToken)>>>,
}

impl UiRuns {
    pub fn start(&self) -> RunGuard {
        self.start_run(None)
    }

    /// Starts the window's run `ui_id` (the id the window gave it): already cancelled when its
    /// Cancel came first.
    pub fn start_run(&self, ui_id: Option<u64>) -> RunGuard {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let cancel = CancellationToken::new();
        if let Some(ui) = ui_id {
            let mut early = self.cancelled_early.lock().unwrap_or_else(|p| p.into_inner());
            if let Some(at) = early.iter().position(|&e| e == ui) {
                early.remove(at);
                cancel.cancel();
            }
        }
        let id = ui_id.map_or(id, |ui| ui | (1 << 63));
        self.running.lock().unwrap_or_else(|p| p.into_inner()).push((id, cancel.clone()));
        RunGuard { id, cancel, running: self.running.clone() }
    }

    /// Cancels the window's runs `ui_ids`, now or, for one not started yet, when it starts.
    pub fn cancel_runs(&self, ui_ids: &[u64]) {
        let running = self.running.lock().unwrap_or_else(|p| p.into_inner());
        for &ui in ui_ids {
            match running.iter().find(|(id, _)| *id == ui | (1 << 63)) {
                Some((_, c)) => c.cancel(),
                None => {
                    let mut early = self.cancelled_early.lock().unwrap_or_else(|p| p.into_inner());
                    if early.len() == EARLY_CANCELS {
                        early.pop_front();
                    }
                    early.push_back(ui);
                }
            }
        }
    }

    /// Cancels every run in flight; returns how many there were.
    pub fn cancel_all(&self) -> usize {
        let running = self.running.lock().unwrap_or_else(|p| p.into_inner());
        running.iter().for_each(|(_, c)| c.cancel());
        running.len()
    }
}

impl Drop for RunGuard {
    fn drop(&mut self) {
        self.running.lock().unwrap_or_else(|p| p.into_inner()).retain(|(id, _)| *id != self.id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cancel_that_arrives_before_its_run_cancels_the_run_when_it_starts() {
        let runs = UiRuns::default();
        let other = runs.start_run(Some(1));
        runs.cancel_runs(&[2]);
        assert!(!other.cancel.is_cancelled(), "only the run asked for");
        let late = runs.start_run(Some(2));
        assert!(late.cancel.is_cancelled(), "its Cancel came first");
        runs.cancel_runs(&[1]);
        assert!(other.cancel.is_cancelled());
        let again = runs.start_run(Some(2));
        assert!(!again.cancel.is_cancelled(), "an early cancel is used once");
    }

    #[test]
    fn cancel_reaches_the_runs_in_flight_only() {
        let runs = UiRuns::default();
        let first = runs.start();
        let done = runs.start();
        drop(done);
        assert_eq!(runs.cancel_all(), 1, "a finished run is forgotten");
        assert!(first.cancel.is_cancelled());
        drop(first);
        let later = runs.start();
        assert_eq!(runs.cancel_all(), 1);
        assert!(later.cancel.is_cancelled());
        drop(later);
        assert_eq!(runs.cancel_all(), 0);
    }
}
