//! # resolve-watch
//!
//! Live staleness: a [`Watcher`] follows the open workspace (recursively, with `notify`:
//! inotify on Linux) and, after each quiet spell ([`DEBOUNCE`] without a new event),
//! re-checks the session's pending actions for the paths that changed
//! ([`resolve_engine::staleness`]): an action whose previewed files drifted turns stale in
//! the queue without anyone pressing Apply, and turns pending again when they are changed
//! back. Status changes are ordinary store events, so every window showing the queue sees
//! them.
//!
//! Why it is shaped this way:
//! - **Nothing runs while nothing changes.** inotify wakes the watcher only for events, and
//!   the re-check thread, which also debounces, blocks on its channel until one arrives (a
//!   time-out only while a burst is settling). Idle CPU is the kernel's, not ours.
//! - **Reads are not changes.** notify's inotify watch also reports every *open* of a file
//!   or folder (`Access` events): anyone reading the workspace (an indexer, `git status`, and
//!   the re-check itself, which opens the files it hashes and the root it locks) would
//!   otherwise start a re-check, which reads, which starts one… Access events are dropped
//!   before debouncing. This is why the debounce is ours: `notify-debouncer-mini` erases the
//!   event kinds, so reads cannot be told from writes after it.
//! - **Our own writes do not flash the queue.** Names of the change set's temporaries and
//!   intent record (`.rdesk-*`, `.rdesk-apply.log`) are never re-checked; the re-check takes
//!   the workspace lock, so it runs before or after an apply, never in the middle; and the
//!   debounce puts it well after the apply's last write, by which time the applied action
//!   has left the stack. An apply that holds the lock longer than the re-check waits
//!   ([`resolve_engine::changeset::LOCK_WAIT`]) keeps the paths for the next batch (the apply's
//!   removal of its intent record is one).
//! - **Stops with the workspace.** Dropping the [`Watcher`] (workspace switched, window
//!   closed) stops the inotify watch and joins the re-check thread.
//!
//! No Tauri and no UI here: the app starts one per open workspace; benchmarks and tests use
//! it directly.
//!
//! Modules:
//! - `watcher` — [`Watcher`]: the inotify watch, the debounce and the re-check thread.

mod watcher;

pub use watcher::{WatchError, Watcher, DEBOUNCE};
