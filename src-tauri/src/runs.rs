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
}

/// One run in flight; dropping it forgets the run.
pub struct RunGuard {
    id: u64,
    pub cancel: CancellationToken,
    running: Arc<Mutex<Vec<(u64, CancellationToken)>>>,
}

impl UiRuns {
    pub fn start(&self) -> RunGuard {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let cancel = CancellationToken::new();
        self.running.lock().unwrap_or_else(|p| p.into_inner()).push((id, cancel.clone()));
        RunGuard { id, cancel, running: self.running.clone() }
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
