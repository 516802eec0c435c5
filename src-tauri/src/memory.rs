//! Giving freed memory back to the system after a preview.
//!
//! A preview allocates on several threads (the tool's parse and diff workers, the runtime's), and
//! glibc keeps what each thread freed in that thread's arena for later: with the 5,000-replacement
//! action of `tests/e2e/bigfiles.js` open, about 3 MiB of the app's resident memory was such
//! free memory (docs/PERFORMANCE.md, "App start and footprint"). `malloc_trim(0)` returns the free
//! pages of every arena. It runs once the app has been quiet for [`QUIET`] after a command or a
//! change of the queue (a preview ends with a push, a decision with a pop; the page then reads
//! the queue, files and diffs, and frees what it sent by the time the app is quiet), off the
//! async threads, never two at once.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

/// How long nothing must happen before the free memory goes back.
pub const QUIET: Duration = Duration::from_secs(1);

static TRIMS: AtomicU64 = AtomicU64::new(0);
static ACTIVITY: AtomicU64 = AtomicU64::new(0);
static WAITING: AtomicBool = AtomicBool::new(false);

/// Notes that the app did something (a command, a queue change); the free memory goes back once
/// nothing else happened for [`QUIET`]. One timer at a time, however often it is called, and it
/// stays up until its trim is done, so trims never overlap.
pub fn after_quiet_moment() {
    ACTIVITY.fetch_add(1, Ordering::AcqRel);
    if WAITING.swap(true, Ordering::AcqRel) {
        return;
    }
    tauri::async_runtime::spawn(async {
        let mut seen = ACTIVITY.load(Ordering::Acquire);
        loop {
            tokio::time::sleep(QUIET).await;
            let now = ACTIVITY.load(Ordering::Acquire);
            if now == seen {
                break;
            }
            seen = now;
        }
        // Off the async threads: a trim walks every arena.
        let _ = tauri::async_runtime::spawn_blocking(trim).await;
        TRIMS.fetch_add(1, Ordering::AcqRel);
        WAITING.store(false, Ordering::Release);
        // Activity noted between the last look and `WAITING` going down found the timer still
        // running and did not start one: start one for it.
        if ACTIVITY.load(Ordering::Acquire) != seen {
            after_quiet_moment();
        }
    });
}

/// How many times free memory went back since the app started.
pub fn trims() -> u64 {
    TRIMS.load(Ordering::Acquire)
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn trim() {
    // SAFETY: malloc_trim takes every arena's lock itself; it has no precondition.
    unsafe {
        libc::malloc_trim(0);
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn trim() {}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    /// Polls `done` until it holds or 30 s passed; returns whether it held.
    fn wait_until(done: impl Fn() -> bool) -> bool {
        let deadline = Instant::now() + Duration::from_secs(30);
        while Instant::now() < deadline {
            if done() {
                return true;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        done()
    }

    #[test]
    fn memory_goes_back_once_the_app_is_quiet_and_the_next_activity_starts_a_new_timer() {
        let before = trims();
        for _ in 0..3 {
            after_quiet_moment();
        }
        assert!(wait_until(|| trims() > before), "no trim after the activity stopped");
        assert!(wait_until(|| !WAITING.load(Ordering::Acquire)), "the timer never went down");

        let after_first = trims();
        after_quiet_moment();
        assert!(wait_until(|| trims() > after_first), "activity after a trim did not start a new timer");
    }
}
