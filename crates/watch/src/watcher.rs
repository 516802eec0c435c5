//! The watcher: inotify events → debounced batches of changed paths → `Session::recheck`.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use notify::{Event, EventKind, RecommendedWatcher, RecursiveMode, Watcher as _};
use resolve_engine::changeset::LOCK_WAIT;
use resolve_engine::{Affected, Session};

/// The quiet time after the last event of a burst before the re-check runs (an editor's save
/// is a few events within milliseconds; an apply's are within its lock).
pub const DEBOUNCE: Duration = Duration::from_millis(100);

/// How long paths a re-check could not look at (an apply held the lock) wait before the
/// next try, when no other event comes first.
const RETRY: Duration = Duration::from_millis(500);

/// The longest a burst of events delays its re-check (a build writing without a pause must
/// not hold staleness back for ever).
const MAX_SETTLE: Duration = Duration::from_secs(1);

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
    inotify: Option<RecommendedWatcher>,
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
        let mut inotify = notify::recommended_watcher(move |event: notify::Result<Event>| {
            let msg = match event {
                // Opening a file or folder is not a change (see the crate docs).
                Ok(e) if matches!(e.kind, EventKind::Access(_)) => return,
                Ok(e) if e.need_rescan() => Msg::Everything,
                Ok(e) => Msg::Changed(relevant_paths(&watched_root, e.paths.into_iter())),
                Err(_) => Msg::Everything,
            };
            // The worker is gone only when the watcher is being dropped.
            let _ = events.send(msg);
        })
        .map_err(|e| start_error(&e))?;
        inotify.watch(&root, RecursiveMode::Recursive).map_err(|e| start_error(&e))?;
        let worker = std::thread::Builder::new()
            .name("resolve-watch".into())
            .spawn(move || run_worker(session, inbox, debounce))
            .map_err(|e| start_error(&e))?;
        Ok(Watcher { inotify: Some(inotify), to_worker, worker: Some(worker) })
    }

    /// Stops the watch and waits for a re-check in progress to end.
    pub fn stop(mut self) {
        self.shutdown();
    }

    fn shutdown(&mut self) {
        // Inotify first, so no event arrives after the stop.
        drop(self.inotify.take());
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

/// Debounces the events (a re-check once `debounce` passed without a new one) and
/// re-checks the changed paths; paths that could not be checked (an apply held the lock)
/// are kept for the next batch or a retry.
fn run_worker(session: Arc<Session>, inbox: mpsc::Receiver<Msg>, debounce: Duration) {
    let mut waiting: HashSet<String> = HashSet::new();
    let mut everything = false;
    let mut settling: Option<std::time::Instant> = None;
    loop {
        // Blocks without a time-out while nothing waits: no wake-ups when idle.
        let msg = if let Some(since) = settling {
            let left = MAX_SETTLE.saturating_sub(since.elapsed());
            if left.is_zero() {
                Err(RecvTimeoutError::Timeout)
            } else {
                inbox.recv_timeout(debounce.min(left))
            }
        } else if waiting.is_empty() && !everything {
            inbox.recv().map_err(|_| RecvTimeoutError::Disconnected)
        } else {
            inbox.recv_timeout(RETRY)
        };
        match msg {
            Ok(Msg::Stop) | Err(RecvTimeoutError::Disconnected) => return,
            Ok(Msg::Changed(paths)) => {
                if !paths.is_empty() {
                    settling.get_or_insert_with(std::time::Instant::now);
                }
                waiting.extend(paths);
                continue;
            }
            Ok(Msg::Everything) => {
                everything = true;
                settling.get_or_insert_with(std::time::Instant::now);
                continue;
            }
            // A quiet spell: the burst is over (or it is time to retry).
            Err(RecvTimeoutError::Timeout) => settling = None,
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
