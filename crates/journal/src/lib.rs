//! # resolve-journal
//!
//! The decision journal: every resolve (apply, discard, failed apply) of every session,
//! with who decided, what, why and when, kept in a SQLite database in the user's data
//! folder. It outlives the app, so the history of a workspace survives a restart or a
//! crash. It records decisions only; it never applies anything (pending actions are never
//! applied implicitly, and a journal cannot change that).
//!
//! Invariants: rows are append-only; `workspace` is the canonical workspace root; times
//! are unix milliseconds; readers get newest first.
//!
//! The database carries a schema version (`PRAGMA user_version`); [`Journal::open`] runs the
//! numbered [`MIGRATIONS`] it has not seen yet, in one transaction, keeping every row. A
//! database written by a newer Resolve Desk (a higher version) is refused, never changed.
//! Another process holding the database is waited for ([`BUSY_TIMEOUT`], set before anything
//! else touches the file). [`Writer`] writes decisions on a thread of its own, in order, so
//! an async runtime's workers never wait on SQLite; its queue is bounded by bytes
//! ([`limits`]: a caller waits for room, nothing is dropped). The database, its `-wal`/`-shm`
//! files and its folder are the user's only (`0600`/`0700`, made so before SQLite creates
//! them); push history (`pushes`) keeps the newest [`JournalLimits::push_history`] rows per
//! workspace.

mod deliveries;
mod error;
mod journal;
pub mod limits;
mod model;
mod pending;
mod private;
mod query;
mod queue;
mod schema;
pub mod undo;
mod writer;

pub use error::JournalError;
pub use journal::Journal;
pub use limits::JournalLimits;
pub use model::{merge, Decision, Recorded};
pub use pending::Push;
pub use query::{export, outcome_of, ExportFormat, ExportRow, Filter, HistoryQuery, Outcome, Page};
pub use schema::{BUSY_TIMEOUT, JOURNAL_CACHE_KIB, MIGRATIONS, SCHEMA_VERSION};
pub use undo::{UndoEntry, UndoRetention, UndoState};
pub use writer::{JournalJob, WriteReport, Writer, RUN_JOB_WEIGHT};

#[cfg(test)]
mod tests;
