//! Giving freed memory back to the system after a preview.
//!
//! A preview allocates on several threads (the tool's parse and diff workers, the runtime's), and
//! glibc keeps what each thread freed in that thread's arena for later: with the 5,000-replacement
//! action of `tests/e2e/bigfiles.js` open, about 3 MiB of the app's resident memory was such
//! free memory (docs/PERFORMANCE.md, "App start and footprint"). `malloc_trim(0)` returns the free
//! pages of every arena. It runs after each change of the queue (a preview ends with a push, a
//! decision with a pop) and when the page's `next_events` waited 25 s for nothing (the app is
//! idle: what the page read since, its diffs and texts, is freed by then), off the async
//! threads, never more than one at a time.

use std::sync::atomic::{AtomicBool, Ordering};

static TRIMMING: AtomicBool = AtomicBool::new(false);

/// Returns the allocator's free pages to the system, on a blocking thread; does nothing while
/// the previous one still runs, or off glibc.
pub fn release_free_memory() {
    if TRIMMING.swap(true, Ordering::AcqRel) {
        return;
    }
    tauri::async_runtime::spawn_blocking(|| {
        trim();
        TRIMMING.store(false, Ordering::Release);
    });
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
