//! # resolve-watch
//!
//! Live staleness: a [`Watcher`] follows the open workspace (recursively, with `notify`:
//! inotify on Linux) and, after each quiet spell ([`DEBOUNCE`], `notify-debouncer-mini`),
//! re-checks the session's pending actions for the paths that changed
//! ([`resolve_engine::staleness`]): an action whose previewed files drifted turns stale in
//! the queue without anyone pressing Apply, and turns pending again when they are changed
//! back. Status changes are ordinary store events, so every window showing the queue sees
//! them.
//!
//! Why it is shaped this way:
//! - **Nothing runs while nothing changes.** inotify wakes the watcher only for events; the
//!   mini debouncer blocks until one arrives (no timer ticks while idle), and the re-check
//!   thread blocks on its channel. Idle CPU is the kernel's, not ours.
//! - **Our own writes do not flash the queue.** Names of the change set's temporaries and
//!   intent record (`.rdesk-*`, `.rdesk-apply.log`) are never re-checked; the re-check takes
//!   the workspace lock, so it runs before or after an apply, never in the middle; and the
//!   debounce puts it well after the apply's last write, by which time the applied action
//!   has left the stack. An apply that holds the lock longer than the re-check waits
//!   ([`resolve_engine::LOCK_WAIT`]) keeps the paths for the next batch (the apply's
//!   removal of its intent record is one).
//! - **Stops with the workspace.** Dropping the [`Watcher`] (workspace switched, window
//!   closed) stops the inotify watch and the debouncer, and joins the re-check thread.
//!
//! No Tauri and no UI here: the app starts one per open workspace; benchmarks and tests use
//! it directly.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use notify::{RecommendedWatcher, RecursiveMode};
use notify_debouncer_mini::{new_debouncer, DebounceEventResult, Debouncer};
use resolve_engine::changeset::LOCK_WAIT;
use resolve_engine::{Affected, Session};

/// The quiet time after the last event of a burst before the re-check runs (an editor's save
/// is a few events within milliseconds; an apply's are within its lock).
pub const DEBOUNCE: Duration = Duration::from_millis(100);

/// How long paths a re-check could not look at (an apply held the lock) wait before the
/// next try, when no other event comes first.
const RETRY: Duration = Duration::from_millis(500);

/// The prefix of every name the change set writes beside its targets (temporaries, backups,
/// parked rename sources) and of its intent record.
const OWN_PREFIX: &str = ".rdesk-";

/// Why a watch could not start.
#[derive(Debug, thiserror::Error)]
pub enum WatchError {
    #[error(
        "Cannot watch {root} for changes: {message}. Stale previews will be found when you press Apply; on Linux, raise fs.inotify.max_user_watches if the workspace has many folders."
    )]
    Start { root: String, message: String },
}

enum Msg {
    Changed(HashSet<String>),
    /// Events were lost (or the watch failed): check everything.
    Everything,
    Stop,
}

/// A running watch of one session's workspace. Dropping it stops the watch.
pub struct Watcher {
    debouncer: Option<Debouncer<RecommendedWatcher>>,
    to_worker: mpsc::Sender<Msg>,
    worker: Option<JoinHandle<()>>,
}

impl Watcher {
    /// Starts watching `session`'s workspace; returns once the watch is in place (every
    /// folder registered), so a change made after this returns is seen.
    pub fn start(session: Arc<Session>) -> Result<Watcher, WatchError> {
        Self::start_with(session, DEBOUNCE)
    }

    /// [`start`](Self::start) with another debounce time.
    pub fn start_with(session: Arc<Session>, debounce: Duration) -> Result<Watcher, WatchError> {
        let root = session.workspace().root().to_path_buf();
        let start_error =
            |e: &dyn std::fmt::Display| WatchError::Start { root: root.display().to_string(), message: e.to_string() };
        let (to_worker, inbox) = mpsc::channel::<Msg>();
        let events = to_worker.clone();
        let watched_root = root.clone();
        let mut debouncer = new_debouncer(debounce, move |batch: DebounceEventResult| {
            let msg = match batch {
                Ok(events) => Msg::Changed(relevant_paths(&watched_root, events.into_iter().map(|e| e.path))),
                Err(_) => Msg::Everything,
            };
            // The worker is gone only when the watcher is being dropped.
            let _ = events.send(msg);
        })
        .map_err(|e| start_error(&e))?;
        debouncer.watcher().watch(&root, RecursiveMode::Recursive).map_err(|e| start_error(&e))?;
        let worker = std::thread::Builder::new()
            .name("resolve-watch".into())
            .spawn(move || run_worker(session, inbox))
            .map_err(|e| start_error(&e))?;
        Ok(Watcher { debouncer: Some(debouncer), to_worker, worker: Some(worker) })
    }

    /// Stops the watch and waits for a re-check in progress to end.
    pub fn stop(mut self) {
        self.shutdown();
    }

    fn shutdown(&mut self) {
        // Inotify and the debouncer first, so no batch arrives after the stop.
        drop(self.debouncer.take());
        let _ = self.to_worker.send(Msg::Stop);
        if let Some(worker) = self.worker.take() {
            let _ = worker.join();
        }
    }
}

impl Drop for Watcher {
    fn drop(&mut self) {
        self.shutdown();
    }
}

/// The workspace-relative paths of a batch, without the change set's own files. An empty
/// string stands for the root itself (every action is concerned).
fn relevant_paths(root: &Path, paths: impl Iterator<Item = PathBuf>) -> HashSet<String> {
    let mut out = HashSet::new();
    for path in paths {
        let Ok(rel) = path.strip_prefix(root) else { continue };
        let parts: Vec<String> = rel.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect();
        if parts.last().is_some_and(|name| name.starts_with(OWN_PREFIX)) {
            continue;
        }
        out.insert(parts.join("/"));
    }
    out
}

/// Re-checks each batch of changed paths; paths that could not be checked (an apply held
/// the lock) are kept for the next batch or a retry.
fn run_worker(session: Arc<Session>, inbox: mpsc::Receiver<Msg>) {
    let mut waiting: HashSet<String> = HashSet::new();
    let mut everything = false;
    loop {
        // Blocks without a timeout while nothing waits: no wake-ups when idle.
        let msg = if waiting.is_empty() && !everything {
            inbox.recv().map_err(|_| RecvTimeoutError::Disconnected)
        } else {
            inbox.recv_timeout(RETRY)
        };
        match msg {
            Ok(Msg::Stop) | Err(RecvTimeoutError::Disconnected) => return,
            Ok(Msg::Changed(paths)) => waiting.extend(paths),
            Ok(Msg::Everything) => everything = true,
            Err(RecvTimeoutError::Timeout) => {}
        }
        if session.is_closed() {
            return;
        }
        if waiting.is_empty() && !everything {
            continue;
        }
        let affected = if everything { Affected::All } else { Affected::Paths(&waiting) };
        match session.recheck(affected, LOCK_WAIT) {
            Ok(Some(_)) => {
                waiting.clear();
                everything = false;
            }
            // An apply still holds the lock: try again after it.
            Ok(None) => {}
            Err(e) => {
                eprintln!(
                    "resolve-watch: cannot re-check pending actions in {}: {e}",
                    session.workspace().root().display()
                );
                waiting.clear();
                everything = false;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn own_temporaries_and_the_intent_record_are_not_relevant() {
        let root = Path::new("/ws");
        let got = relevant_paths(
            root,
            ["/ws/src/a.ts", "/ws/src/.rdesk-1a2b-0.tmp", "/ws/.rdesk-apply.log", "/ws", "/elsewhere/x"]
                .into_iter()
                .map(PathBuf::from),
        );
        let want: HashSet<String> = ["src/a.ts", ""].into_iter().map(String::from).collect();
        assert_eq!(got, want, "our own files and paths outside the root are dropped; the root is kept");
    }
}
