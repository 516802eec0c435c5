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

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{mpsc, Mutex};
use std::time::Duration;

mod deliveries;
pub mod limits;
mod pending;
mod private;
mod queue;
pub use limits::JournalLimits;
pub use pending::Push;

use resolve_engine::{
    render_resolve_header, Actor, HistoryEntry, PartialApply, Recovery, ResolveAction, ResolveDetails,
};
use rusqlite::{params, Connection};

mod query;
pub use query::{export, ExportFormat, ExportRow, HistoryQuery, Outcome, Page};
pub mod undo;
pub use undo::{UndoEntry, UndoRetention, UndoState};

/// One recorded decision.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decision {
    pub workspace: String,
    pub at_ms: i64,
    /// Who decided (stored as `agent`, `person` or `script`).
    pub actor: Actor,
    /// What was decided (stored as `apply` or `discard`).
    pub action: ResolveAction,
    pub action_id: String,
    pub label: String,
    pub source_tool_name: String,
    pub reason: String,
    /// A failed apply (the action stayed on the stack).
    pub is_error: bool,
    pub text: String,
    /// The agent or MCP client that made the deciding call, when known (schema version 2).
    pub client: Option<String>,
    /// A partial apply: what was applied and left out (`None` for any other decision).
    pub partial: Option<PartialApply>,
}

impl Decision {
    /// The journal row of a session's history entry in `workspace`.
    pub fn of(workspace: &str, h: &HistoryEntry) -> Decision {
        Decision {
            workspace: workspace.to_string(),
            at_ms: h.at.timestamp_millis(),
            actor: h.actor,
            action: h.details.action,
            action_id: h.details.action_id.clone(),
            label: h.details.label.clone(),
            source_tool_name: h.details.source_tool_name.clone(),
            reason: h.details.reason.clone(),
            is_error: h.is_error,
            text: h.text.clone(),
            client: h.client.clone(),
            partial: h.details.partial.as_deref().cloned(),
        }
    }

    /// The row of an apply that a killed process interrupted and that opening `workspace`
    /// recovered: a failed apply with the reason [`Recovery::REASON`] (never an applied one),
    /// dated when the apply started, with the recovery's message as its text.
    pub fn interrupted(workspace: &str, recovery: &Recovery) -> Decision {
        let c = recovery.context.as_ref();
        let unknown = || "(unknown)".to_string();
        Decision {
            workspace: workspace.to_string(),
            at_ms: recovery.started_at.timestamp_millis(),
            actor: c.and_then(|c| c.actor).unwrap_or(Actor::Script),
            action: ResolveAction::Apply,
            action_id: c.map(|c| c.action_id.clone()).unwrap_or_default(),
            label: c.map(|c| c.label.clone()).unwrap_or_else(unknown),
            source_tool_name: c.map(|c| c.source_tool_name.clone()).unwrap_or_else(unknown),
            reason: Recovery::REASON.to_string(),
            is_error: true,
            text: recovery.message(),
            client: c.and_then(|c| c.client.clone()),
            partial: None,
        }
    }

    /// The decision as a history entry (without the proposal, which the journal does not keep).
    pub fn to_history(&self) -> HistoryEntry {
        let details = ResolveDetails {
            action: self.action,
            reason: self.reason.clone(),
            source_tool_name: self.source_tool_name.clone(),
            label: self.label.clone(),
            action_id: self.action_id.clone(),
            partial: self.partial.clone().map(Box::new),
        };
        HistoryEntry {
            header: render_resolve_header(&details, self.is_error, &self.text),
            details,
            text: self.text.clone(),
            is_error: self.is_error,
            actor: self.actor,
            at: chrono::DateTime::from_timestamp_millis(self.at_ms).unwrap_or_default(),
            client: self.client.clone(),
            proposal: None,
        }
    }
}

/// One row of a workspace's merged history.
#[derive(Debug, Clone)]
pub struct Recorded {
    pub entry: HistoryEntry,
    /// Decided in an earlier session of the workspace (only the journal knew it).
    pub earlier_session: bool,
}

/// The history of a workspace, newest first: the journal's rows, where this session's own
/// decisions (`current`, which keep who asked and what it proposed) replace their rows; an
/// action this session never decided is from an earlier session. A decision of this session
/// that has no row (its write failed) is still listed, in its place by time.
pub fn merge(current: &[HistoryEntry], rows: &[Decision]) -> Vec<Recorded> {
    merge_page(current, current, rows, true)
}

/// [`merge`] for one page of a search: `current` is every entry of this session (it says
/// which actions are this session's and stands in for their rows), `missing_from` the ones
/// that may be listed without a row (this session's entries matching the search), added
/// only when `include_missing` (the first page).
pub(crate) fn merge_page(
    current: &[HistoryEntry],
    missing_from: &[HistoryEntry],
    rows: &[Decision],
    include_missing: bool,
) -> Vec<Recorded> {
    let key = |id: &str, at_ms: i64, action: ResolveAction| (id.to_string(), at_ms, action);
    let here: HashMap<_, &HistoryEntry> =
        current.iter().map(|h| (key(&h.details.action_id, h.at.timestamp_millis(), h.details.action), h)).collect();
    let ids: HashSet<&str> = current.iter().map(|h| h.details.action_id.as_str()).collect();
    let in_rows: HashSet<_> = rows.iter().map(|d| key(&d.action_id, d.at_ms, d.action)).collect();
    let mut out: Vec<Recorded> = rows
        .iter()
        .map(|d| Recorded {
            entry: match here.get(&key(&d.action_id, d.at_ms, d.action)) {
                Some(h) => (*h).clone(),
                None => d.to_history(),
            },
            earlier_session: !ids.contains(d.action_id.as_str()),
        })
        .collect();
    if !include_missing {
        return out;
    }
    let missing: Vec<&HistoryEntry> = missing_from
        .iter()
        .filter(|h| !in_rows.contains(&key(&h.details.action_id, h.at.timestamp_millis(), h.details.action)))
        .collect();
    if !missing.is_empty() {
        out.extend(missing.into_iter().map(|h| Recorded { entry: h.clone(), earlier_session: false }));
        // Stable: rows of one millisecond keep the journal's order.
        out.sort_by_key(|r| std::cmp::Reverse(r.entry.at.timestamp_millis()));
    }
    out
}

pub(crate) fn actor_name(a: Actor) -> &'static str {
    match a {
        Actor::Agent => "agent",
        Actor::Person => "person",
        Actor::Script => "script",
    }
}

fn parse_actor(s: &str) -> Option<Actor> {
    match s {
        "agent" => Some(Actor::Agent),
        "person" => Some(Actor::Person),
        "script" => Some(Actor::Script),
        _ => None,
    }
}

fn parse_action(s: &str) -> Option<ResolveAction> {
    match s {
        "apply" => Some(ResolveAction::Apply),
        "discard" => Some(ResolveAction::Discard),
        "undo" => Some(ResolveAction::Undo),
        "redo" => Some(ResolveAction::Redo),
        _ => None,
    }
}

/// The columns [`decision_row`] reads, in its order.
pub(crate) const DECISION_COLUMNS: &str =
    "workspace, at_ms, actor, action, action_id, label, source_tool_name, reason, is_error, text, client, partial";

/// A row of [`DECISION_COLUMNS`]: the actor and action as stored, and the rest.
pub(crate) fn decision_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<(String, String, Decision)> {
    Ok((
        r.get::<_, String>(2)?,
        r.get::<_, String>(3)?,
        Decision {
            workspace: r.get(0)?,
            at_ms: r.get(1)?,
            actor: Actor::Person,
            action: ResolveAction::Apply,
            action_id: r.get(4)?,
            label: r.get(5)?,
            source_tool_name: r.get(6)?,
            reason: r.get(7)?,
            is_error: r.get(8)?,
            text: r.get(9)?,
            client: r.get(10)?,
            // A row this build cannot read back as a partial apply shows as a full one.
            partial: r.get::<_, Option<String>>(11)?.and_then(|json| serde_json::from_str(&json).ok()),
        },
    ))
}

/// Checks the stored actor and action of a [`decision_row`].
pub(crate) fn decode((actor, action, mut d): (String, String, Decision)) -> Result<Decision, JournalError> {
    d.actor = parse_actor(&actor).ok_or(JournalError::Unknown { column: "actor", value: actor })?;
    d.action = parse_action(&action).ok_or(JournalError::Unknown { column: "action", value: action })?;
    Ok(d)
}

#[derive(Debug, thiserror::Error)]
pub enum JournalError {
    #[error("the decision journal has a row with {column} `{value}`, which this version does not know; update Resolve Desk or move the journal aside")]
    Unknown { column: &'static str, value: String },
    #[error("cannot open the decision journal {path}: {source}")]
    Open { path: String, source: rusqlite::Error },
    #[error(
        "the decision journal {path} has schema version {found}, newer than this Resolve Desk knows (version {known}); \
         it was written by a newer Resolve Desk. Update Resolve Desk, or move {path} aside to start a new journal \
         (the old one is left as it is)"
    )]
    TooNew { path: String, found: i64, known: i64 },
    #[error("cannot update the decision journal {path} to schema version {version}: {source}")]
    Migrate { path: String, version: i64, source: rusqlite::Error },
    #[error(
        "cannot open the decision journal {path}: {source} (while making it and its folder readable by you only; \
         it holds file contents)"
    )]
    Private { path: String, source: std::io::Error },
    #[error("cannot start the decision journal's writer thread: {0}")]
    Thread(std::io::Error),
    #[error("decision journal error: {0}")]
    Sql(#[from] rusqlite::Error),
    #[error("cannot export the history: {0}")]
    Export(String),
    #[error("cannot encode a row for the decision journal: {0}")]
    Encode(String),
}

/// How long a write (or the opening) waits for another connection that holds the database.
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// The page cache of the journal's connection, in KiB (SQLite's `cache_size`, given negative).
pub const JOURNAL_CACHE_KIB: i64 = 256;

/// The schema, as numbered steps: step `n` takes the database from version `n - 1` to `n`.
/// Never edit a released step; add a new one. Step 1 is the layout of the journal before it
/// had a version, written so that it is a no-op on such a database (which is at version 0).
pub const MIGRATIONS: &[&str] = &[
    // 1: the decisions table.
    "CREATE TABLE IF NOT EXISTS decisions (
        id INTEGER PRIMARY KEY,
        workspace TEXT NOT NULL,
        at_ms INTEGER NOT NULL,
        actor TEXT NOT NULL,
        action TEXT NOT NULL,
        action_id TEXT NOT NULL,
        label TEXT NOT NULL,
        source_tool_name TEXT NOT NULL,
        reason TEXT NOT NULL,
        is_error INTEGER NOT NULL,
        text TEXT NOT NULL
    );
    CREATE INDEX IF NOT EXISTS decisions_by_workspace ON decisions (workspace, at_ms);",
    // 2: who asked (the agent or MCP client of the deciding call).
    "ALTER TABLE decisions ADD COLUMN client TEXT;",
    // 3: pending actions kept across restarts (in push order, with their change sets' bytes),
    // and every push (see `pending`).
    "CREATE TABLE pending_actions (
        seq INTEGER PRIMARY KEY,
        workspace TEXT NOT NULL,
        action_id TEXT NOT NULL,
        label TEXT NOT NULL,
        source_tool_name TEXT NOT NULL,
        details TEXT,
        created_at_ms INTEGER NOT NULL,
        origin TEXT,
        pushed_by TEXT,
        body TEXT NOT NULL,
        applied_text TEXT,
        discard_text TEXT,
        renames TEXT,
        UNIQUE (workspace, action_id)
    );
    CREATE TABLE pending_changes (
        action_seq INTEGER NOT NULL,
        idx INTEGER NOT NULL,
        kind TEXT NOT NULL,
        path TEXT NOT NULL,
        to_path TEXT,
        entry_kind TEXT,
        before BLOB,
        before_hash BLOB,
        after BLOB,
        PRIMARY KEY (action_seq, idx)
    );
    CREATE TABLE pushes (
        id INTEGER PRIMARY KEY,
        workspace TEXT NOT NULL,
        at_ms INTEGER NOT NULL,
        action_id TEXT NOT NULL,
        tool_call TEXT,
        label TEXT NOT NULL,
        source_tool_name TEXT NOT NULL,
        client TEXT,
        files TEXT NOT NULL
    );
    CREATE INDEX pushes_by_workspace ON pushes (workspace, at_ms);",
    // undo: what reverts each applied change set (see `undo`), one row per decision.
    "CREATE TABLE undo (
        id INTEGER PRIMARY KEY,
        workspace TEXT NOT NULL,
        action_id TEXT NOT NULL,
        label TEXT NOT NULL,
        source_tool_name TEXT NOT NULL,
        at_ms INTEGER NOT NULL,
        state TEXT NOT NULL,
        data BLOB,
        size INTEGER NOT NULL,
        note TEXT,
        UNIQUE (workspace, action_id)
    );
    CREATE INDEX undo_by_age ON undo (at_ms, id);",
    // partial apply: what an apply applied and left out (JSON of `PartialApply`), else NULL.
    // (and the single replacements of a pending `ast_edit` edit, so they survive a restart).
    "ALTER TABLE decisions ADD COLUMN partial TEXT;
    ALTER TABLE pending_changes ADD COLUMN replacements BLOB;",
    // deliveries: decisions kept for agents that were not waiting (see `deliveries`).
    "CREATE TABLE deliveries (
        id TEXT NOT NULL,
        workspace TEXT NOT NULL,
        client TEXT NOT NULL,
        action_id TEXT NOT NULL,
        label TEXT NOT NULL,
        result TEXT NOT NULL,
        call_id TEXT NOT NULL,
        decided_at_ms INTEGER NOT NULL,
        PRIMARY KEY (workspace, id)
    );",
];

/// The schema version this build writes.
pub const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;

/// Brings `conn` to [`SCHEMA_VERSION`] in one transaction; refuses a newer database.
fn migrate(conn: &mut Connection, path: &str) -> Result<(), JournalError> {
    let open_err = |source| JournalError::Open { path: path.to_string(), source };
    // IMMEDIATE: two programs opening an old journal at once migrate it once, one after the other.
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate).map_err(open_err)?;
    let found: i64 = tx.pragma_query_value(None, "user_version", |r| r.get(0)).map_err(open_err)?;
    if found > SCHEMA_VERSION {
        return Err(JournalError::TooNew { path: path.to_string(), found, known: SCHEMA_VERSION });
    }
    for (i, step) in MIGRATIONS.iter().enumerate().skip(found.max(0) as usize) {
        let version = i as i64 + 1;
        let mig_err = |source| JournalError::Migrate { path: path.to_string(), version, source };
        tx.execute_batch(step).map_err(mig_err)?;
        tx.pragma_update(None, "user_version", version).map_err(mig_err)?;
    }
    tx.commit().map_err(open_err)
}

/// A handle on the journal database (safe to share between threads).
pub struct Journal {
    conn: Mutex<Connection>,
    path: PathBuf,
    /// The most `pushes` rows kept per workspace ([`JournalLimits::push_history`]).
    push_history: std::sync::atomic::AtomicUsize,
}

impl Journal {
    /// Opens (creating if needed) the journal at `path`, migrating it to [`SCHEMA_VERSION`].
    /// The database, its `-wal`/`-shm` files and its folder are made private first (`0600` /
    /// `0700` on Unix, see `private`), before SQLite creates anything. Push history is kept
    /// as [`JournalLimits::from_env_or_default`] says.
    pub fn open(path: &Path) -> Result<Journal, JournalError> {
        let shown = path.display().to_string();
        let open_err = |source| JournalError::Open { path: shown.clone(), source };
        private::make_private(path).map_err(|source| JournalError::Private { path: shown.clone(), source })?;
        let mut conn = Connection::open(path).map_err(open_err)?;
        // First, before any statement touches the file: wait for another program's lock.
        conn.busy_timeout(BUSY_TIMEOUT).map_err(open_err)?;
        // WAL: a crash mid-write leaves the journal consistent; readers never block writers.
        conn.pragma_update(None, "journal_mode", "WAL").map_err(open_err)?;
        // A small page cache: the journal is written once per push and decision and read by
        // history pages, and the file's pages stay in the system's cache anyway. SQLite's
        // default (2,000 KiB) filled up with the pages of the last pushed action and stayed,
        // 1.8 MB of the app's heap with the 5,000-replacement action open (docs/PERFORMANCE.md).
        conn.pragma_update(None, "cache_size", -JOURNAL_CACHE_KIB).map_err(open_err)?;
        migrate(&mut conn, &shown)?;
        Ok(Journal {
            conn: Mutex::new(conn),
            path: path.to_path_buf(),
            push_history: JournalLimits::from_env_or_default().push_history.into(),
        })
    }

    /// Keeps at most `rows` rows of push history per workspace from the next recorded push on
    /// (at least 1).
    pub fn set_push_history(&self, rows: usize) {
        self.push_history.store(rows.max(1), std::sync::atomic::Ordering::Relaxed);
    }

    /// The most rows of push history kept per workspace.
    pub fn push_history(&self) -> usize {
        self.push_history.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Where the database is.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The database's schema version (`PRAGMA user_version`).
    pub fn schema_version(&self) -> Result<i64, JournalError> {
        let conn = self.lock();
        Ok(conn.pragma_query_value(None, "user_version", |r| r.get(0))?)
    }

    /// Appends one decision.
    pub fn record(&self, d: &Decision) -> Result<(), JournalError> {
        let conn = self.lock();
        conn.execute(
            "INSERT INTO decisions (workspace, at_ms, actor, action, action_id, label, source_tool_name, reason, is_error, text, client, partial)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
            params![
                d.workspace,
                d.at_ms,
                actor_name(d.actor),
                d.action.as_str(),
                d.action_id,
                d.label,
                d.source_tool_name,
                d.reason,
                d.is_error,
                d.text,
                d.client,
                d.partial.as_ref().and_then(|p| serde_json::to_string(p).ok())
            ],
        )?;
        Ok(())
    }

    /// The latest `limit` decisions in `workspace`, newest first.
    pub fn decisions(&self, workspace: &str, limit: usize) -> Result<Vec<Decision>, JournalError> {
        let conn = self.lock();
        let mut stmt = conn.prepare(&format!(
            "SELECT {DECISION_COLUMNS} FROM decisions WHERE workspace = ?1 ORDER BY at_ms DESC, id DESC LIMIT ?2"
        ))?;
        let rows = stmt.query_map(params![workspace, limit.min(i64::MAX as usize) as i64], decision_row)?;
        let mut out = Vec::new();
        for row in rows {
            out.push(decode(row?)?);
        }
        Ok(out)
    }

    pub(crate) fn lock(&self) -> std::sync::MutexGuard<'_, Connection> {
        self.conn.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The workspace's history, newest first (see [`merge`]): the latest `limit` journal rows,
    /// with this session's decisions (`current`) in place of their rows.
    pub fn history(
        &self,
        workspace: &str,
        current: &[HistoryEntry],
        limit: usize,
    ) -> Result<Vec<Recorded>, JournalError> {
        Ok(merge(current, &self.decisions(workspace, limit)?))
    }
}

/// What a [`Writer`] reports after each write: `Ok` or the error, with the journal's path.
pub type WriteReport = Box<dyn Fn(&Path, Result<(), &JournalError>) + Send + 'static>;

/// A write of another kind than a decision, run on the writer thread (e.g. undo data).
pub type JournalJob = Box<dyn FnOnce(&Journal) -> Result<(), JournalError> + Send + 'static>;

// One job at a time through the queue: boxing the decision would buy nothing.
#[allow(clippy::large_enum_variant)]
enum Job {
    Record(Decision),
    Flush(mpsc::Sender<()>),
    /// An action pushed in a workspace: kept as pending, and its push recorded.
    Pushed(String, Box<resolve_engine::StoredAction>),
    /// An action decided or popped in a workspace: no longer pending.
    Unpending(String, String),
    Run(JournalJob),
}

/// What every queued job counts besides its own bytes (the job, its strings' headers).
const JOB_OVERHEAD: u64 = 256;

/// The weight [`Writer::run`] gives a job whose size it cannot see.
pub const RUN_JOB_WEIGHT: u64 = 4096;

/// An estimate of the bytes a JSON value holds.
fn json_weight(v: &serde_json::Value) -> u64 {
    use serde_json::Value;
    16 + match v {
        Value::String(s) => s.len() as u64,
        Value::Array(items) => items.iter().map(json_weight).sum(),
        Value::Object(map) => map.iter().map(|(k, v)| k.len() as u64 + json_weight(v)).sum(),
        Value::Null | Value::Bool(_) | Value::Number(_) => 0,
    }
}

impl Job {
    /// The bytes this job keeps alive while it waits (an estimate; what the queue bounds).
    fn weight(&self) -> u64 {
        let text = |parts: &[&str]| parts.iter().map(|p| p.len() as u64).sum::<u64>();
        JOB_OVERHEAD
            + match self {
                Job::Flush(_) => return 0,
                Job::Record(d) => {
                    text(&[&d.workspace, &d.action_id, &d.label, &d.source_tool_name, &d.reason, &d.text])
                        + d.partial.as_ref().map_or(0, |p| {
                            p.left_out_files.iter().map(|f| f.len() as u64 + 16).sum::<u64>()
                                + 64 * p.left_out_replacements.len() as u64
                        })
                }
                Job::Pushed(workspace, a) => {
                    let changes = match &a.body {
                        resolve_engine::StoredBody::ChangeSet { changes, renames, .. } => {
                            changes.iter().map(|c| c.held_bytes() + c.path().len() as u64 + 64).sum::<u64>()
                                + renames.as_ref().map_or(0, |r| {
                                    r.iter().map(|r| (r.from.len() + r.to.len()) as u64 + 16).sum::<u64>()
                                })
                        }
                        resolve_engine::StoredBody::Orphaned => 0,
                    };
                    text(&[workspace, &a.id, &a.label, &a.source_tool_name])
                        + a.details.as_ref().map_or(0, json_weight)
                        + a.origin.as_ref().map_or(0, |o| json_weight(&o.params))
                        + changes
                }
                Job::Unpending(workspace, id) => text(&[workspace, id]),
                Job::Run(_) => RUN_JOB_WEIGHT,
            }
    }
}

/// Writes decisions to a [`Journal`] on a thread of its own, in the order they were sent, so
/// callers (a session observer running on an async worker) never wait on SQLite. Every
/// write's result goes to the report callback (the app turns failures into a banner).
/// Dropping the writer writes what is queued, then ends the thread.
///
/// The queue is bounded by the bytes its jobs hold ([`JournalLimits::queue_bytes`]): a caller
/// whose job does not fit waits until the writer has made room (back-pressure), so a slow
/// disk can never make the queue grow without bound, and nothing is dropped. The writer
/// thread never waits for a caller, so a caller holding a lock while it queues (the
/// pending-action store's persistence hook) cannot deadlock it.
pub struct Writer {
    queue: std::sync::Arc<queue::Queue<Job>>,
    thread: Mutex<Option<std::thread::JoinHandle<()>>>,
    journal: std::sync::Arc<Journal>,
}

/// Tells the queue when the writer thread ends, even by a panic (waiting callers go free).
struct WriterGone(std::sync::Arc<queue::Queue<Job>>);

impl Drop for WriterGone {
    fn drop(&mut self) {
        self.0.writer_gone();
    }
}

impl Writer {
    /// Starts the writer thread for `journal`, its queue bounded by
    /// [`JournalLimits::from_env_or_default`]; `report` is called on that thread after each
    /// write.
    pub fn spawn(journal: std::sync::Arc<Journal>, report: WriteReport) -> Result<Writer, JournalError> {
        Self::spawn_bounded(journal, report, JournalLimits::from_env_or_default().queue_bytes)
    }

    /// [`spawn`](Self::spawn) with a queue that holds at most `queue_bytes` (a single larger
    /// job is taken alone).
    pub fn spawn_bounded(
        journal: std::sync::Arc<Journal>,
        report: WriteReport,
        queue_bytes: u64,
    ) -> Result<Writer, JournalError> {
        let queue = std::sync::Arc::new(queue::Queue::new(queue_bytes));
        let j = journal.clone();
        let q = queue.clone();
        let thread = std::thread::Builder::new().name("rd-journal".into()).spawn(move || {
            let _gone = WriterGone(q.clone());
            while let Some((job, weight)) = q.pop() {
                match job {
                    Job::Record(d) => report(j.path(), j.record(&d).as_ref().map(|_| ())),
                    Job::Run(f) => report(j.path(), f(&j).as_ref().map(|_| ())),
                    Job::Flush(done) => {
                        let _ = done.send(());
                    }
                    Job::Pushed(workspace, action) => {
                        let saved = j.save_pending(&workspace, &action);
                        let recorded = saved.and_then(|_| j.record_push(&Push::of(&workspace, &action)));
                        report(j.path(), recorded.as_ref().map(|_| ()))
                    }
                    Job::Unpending(workspace, id) => {
                        report(j.path(), j.remove_pending(&workspace, &id).as_ref().map(|_| ()))
                    }
                }
                // The job (and the bytes it held) is dropped by now.
                q.done(weight);
            }
        });
        let thread = thread.map_err(JournalError::Thread)?;
        Ok(Writer { queue, thread: Mutex::new(Some(thread)), journal })
    }

    /// The journal written to.
    pub fn journal(&self) -> &std::sync::Arc<Journal> {
        &self.journal
    }

    /// Queues `job`, waiting first for room in the queue if it is full.
    fn send(&self, job: Job) -> bool {
        let weight = job.weight();
        self.queue.push(job, weight).is_ok()
    }

    /// The bytes waiting to be written now (queued, and being written): at most the queue's
    /// bound, or one job alone when a single job is larger.
    pub fn queued_bytes(&self) -> u64 {
        self.queue.held()
    }

    /// The most bytes that ever waited at once.
    pub fn peak_queued_bytes(&self) -> u64 {
        self.queue.peak()
    }

    /// Queues `d`; it is written after everything queued before it. Never blocks on SQLite
    /// (only on a full queue, until the writer has made room).
    pub fn record(&self, d: Decision) {
        self.send(Job::Record(d));
    }

    /// The store's persistence hook for `workspace` (see
    /// `PendingActionStore::set_persistence`): each push is queued to be kept as pending and
    /// recorded in `pushes`, each decision or pop to be forgotten, in store order. Never
    /// blocks on SQLite; a push waits for room when the queue is full (see [`Writer`]).
    pub fn persistence(self: &std::sync::Arc<Self>, workspace: &str) -> resolve_engine::PersistFn {
        let writer = std::sync::Arc::downgrade(self);
        let workspace = workspace.to_string();
        Box::new(move |event| {
            let Some(writer) = writer.upgrade() else { return };
            let job = match event {
                resolve_engine::Persist::Save(action) => Job::Pushed(workspace.clone(), Box::new(action)),
                resolve_engine::Persist::Remove { id } => Job::Unpending(workspace.clone(), id),
            };
            writer.send(job);
        })
    }

    /// Queues `job` (e.g. keeping undo data); it runs after everything queued before it, and
    /// its result is reported like a decision's. It counts [`RUN_JOB_WEIGHT`] bytes in the
    /// queue; use [`run_sized`](Self::run_sized) when it holds more.
    pub fn run(&self, job: JournalJob) {
        self.run_sized(RUN_JOB_WEIGHT, job);
    }

    /// [`run`](Self::run) for a job holding about `bytes` bytes (what the queue counts).
    pub fn run_sized(&self, bytes: u64, job: JournalJob) {
        let weight = bytes.saturating_add(JOB_OVERHEAD);
        let _ = self.queue.push(Job::Run(job), weight);
    }

    /// Waits until everything queued so far has been written (or has failed). Blocking: call
    /// it from a blocking context (e.g. `spawn_blocking`), not on an async worker.
    pub fn flush(&self) {
        let (done, wait) = mpsc::channel();
        if self.send(Job::Flush(done)) {
            let _ = wait.recv();
        }
    }
}

impl Drop for Writer {
    fn drop(&mut self) {
        // Closing the queue ends the thread once what is queued is written.
        self.queue.close();
        if let Some(t) = self.thread.lock().unwrap_or_else(|p| p.into_inner()).take() {
            let _ = t.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_journal_keeps_a_small_page_cache() {
        let dir = tempfile::tempdir().unwrap();
        let journal = Journal::open(&dir.path().join("journal.sqlite")).unwrap();
        let cache: i64 = journal.lock().pragma_query_value(None, "cache_size", |r| r.get(0)).unwrap();
        assert_eq!(cache, -JOURNAL_CACHE_KIB);
    }

    fn decision(ws: &str, at_ms: i64, id: &str) -> Decision {
        Decision {
            workspace: ws.into(),
            at_ms,
            actor: Actor::Person,
            action: ResolveAction::Apply,
            action_id: id.into(),
            label: "AST Edit: 1 replacement in 1 file".into(),
            source_tool_name: "ast_edit".into(),
            reason: "looks right".into(),
            is_error: false,
            text: "Applied 1 replacement in 1 file.".into(),
            client: None,
            partial: None,
        }
    }

    #[test]
    fn decisions_survive_reopening_and_come_newest_first_per_workspace() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("data/journal.sqlite3");
        {
            let j = Journal::open(&path).unwrap();
            j.record(&decision("/w", 1, "a1")).unwrap();
            j.record(&decision("/w", 2, "a2")).unwrap();
            j.record(&decision("/other", 3, "b1")).unwrap();
        }
        let j = Journal::open(&path).expect("reopens the same file");
        let ids: Vec<String> = j.decisions("/w", 10).unwrap().into_iter().map(|d| d.action_id).collect();
        assert_eq!(ids, vec!["a2", "a1"], "newest first, other workspaces excluded");
        assert_eq!(j.decisions("/w", 1).unwrap().len(), 1, "limit is honoured");
        assert_eq!(j.decisions("/w", 10).unwrap()[0], decision("/w", 2, "a2"), "every field round-trips");
    }

    #[test]
    fn history_merges_this_session_over_the_journal_and_marks_earlier_sessions() {
        let dir = tempfile::tempdir().unwrap();
        let j = Journal::open(&dir.path().join("j.sqlite3")).unwrap();
        let earlier = decision("/w", 1_000, "old-1");
        j.record(&earlier).unwrap();
        let mut now = decision("/w", 2_000, "new-1").to_history();
        now.actor = Actor::Agent;
        now.proposal = Some(resolve_engine::Proposal {
            choice: ResolveAction::Apply,
            reason: "asked".into(),
            client: Some("gpt".into()),
            call_id: "call-1".into(),
            waiting: true,
        });
        j.record(&Decision::of("/w", &now)).unwrap();
        let merged = j.history("/w", std::slice::from_ref(&now), 10).unwrap();
        assert_eq!(merged.len(), 2);
        assert!(!merged[0].earlier_session);
        assert_eq!(merged[0].entry.proposal, now.proposal, "this session's entry keeps who asked");
        assert_eq!(merged[0].entry.actor, Actor::Agent, "the actor round-trips typed");
        assert!(merged[1].earlier_session);
        assert_eq!(merged[1].entry.details.action_id, "old-1");
        assert_eq!(merged[1].entry.header, "Accept: 1 replacement in 1 file [AST Edit]");
    }

    #[test]
    fn an_unknown_actor_in_the_journal_is_a_clear_error() {
        let dir = tempfile::tempdir().unwrap();
        let j = Journal::open(&dir.path().join("j.sqlite3")).unwrap();
        j.conn
            .lock()
            .unwrap()
            .execute(
                "INSERT INTO decisions (workspace, at_ms, actor, action, action_id, label, source_tool_name, reason, is_error, text)
                 VALUES ('/w', 1, 'robot', 'apply', 'a', 'l', 's', 'r', 0, 't')",
                [],
            )
            .unwrap();
        let err = j.decisions("/w", 10).unwrap_err();
        assert!(err.to_string().contains("actor `robot`"), "{err}");
    }

    #[test]
    fn an_unopenable_path_is_a_clear_error() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("file"), "x").unwrap();
        let err = Journal::open(&dir.path().join("file/journal.sqlite3")).err().expect("a file is not a folder");
        assert!(err.to_string().contains("cannot open the decision journal"), "{err}");
    }

    /// The journal's layout before it had a schema version (version 0), with one row.
    fn write_unversioned_journal(path: &Path) {
        let c = Connection::open(path).unwrap();
        c.execute_batch(
            "CREATE TABLE decisions (
                id INTEGER PRIMARY KEY, workspace TEXT NOT NULL, at_ms INTEGER NOT NULL, actor TEXT NOT NULL,
                action TEXT NOT NULL, action_id TEXT NOT NULL, label TEXT NOT NULL, source_tool_name TEXT NOT NULL,
                reason TEXT NOT NULL, is_error INTEGER NOT NULL, text TEXT NOT NULL);
             CREATE INDEX decisions_by_workspace ON decisions (workspace, at_ms);
             INSERT INTO decisions (workspace, at_ms, actor, action, action_id, label, source_tool_name, reason, is_error, text)
             VALUES ('/w', 1, 'person', 'apply', 'old-1', 'AST Edit: 1 replacement in 1 file', 'ast_edit', 'looks right', 0,
                     'Applied 1 replacement in 1 file.');",
        )
        .unwrap();
    }

    #[test]
    fn a_new_journal_is_at_the_latest_schema_version_and_keeps_the_client() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("j.sqlite3");
        let mut d = decision("/w", 5, "a1");
        d.actor = Actor::Agent;
        d.client = Some("claude-code".into());
        Journal::open(&path).unwrap().record(&d).unwrap();
        let j = Journal::open(&path).unwrap();
        assert_eq!(j.schema_version().unwrap(), SCHEMA_VERSION);
        const { assert!(SCHEMA_VERSION >= 2, "the client column came with version 2") };
        const { assert!(SCHEMA_VERSION >= 2) };
        let rows = j.decisions("/w", 10).unwrap();
        assert_eq!(rows, vec![d], "the client survives reopening");
        let merged = j.history("/w", &[], 10).unwrap();
        assert_eq!(merged[0].entry.client.as_deref(), Some("claude-code"), "an earlier session's row shows who asked");
    }

    #[test]
    fn a_partial_apply_is_recorded_and_read_back_with_what_was_left_out() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("j.sqlite3");
        let mut d = decision("/w", 7, "a2");
        d.partial = Some(PartialApply {
            files_total: 40,
            files_applied: 38,
            left_out_files: vec!["a.ts".into(), "b.ts".into()],
            left_out_replacements: Vec::new(),
            replacements: None,
        });
        let full = decision("/w", 6, "a1");
        {
            let j = Journal::open(&path).unwrap();
            j.record(&full).unwrap();
            j.record(&d).unwrap();
        }
        let j = Journal::open(&path).unwrap();
        assert_eq!(j.decisions("/w", 10).unwrap(), vec![d.clone(), full], "the partial apply survives reopening");
        let merged = j.history("/w", &[], 10).unwrap();
        let partial = merged[0].entry.details.partial.as_ref().expect("the history entry carries it");
        assert_eq!(partial.history_text(), "applied 38 of 40 files");
        assert!(merged[1].entry.details.partial.is_none(), "a full apply has none");
        // The decision of a session's entry keeps it too.
        assert_eq!(Decision::of("/w", &d.to_history()).partial, d.partial);
    }

    #[test]
    fn an_unversioned_journal_is_migrated_with_its_rows_kept() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("j.sqlite3");
        write_unversioned_journal(&path);
        let j = Journal::open(&path).expect("an old journal is migrated, not refused");
        assert_eq!(j.schema_version().unwrap(), SCHEMA_VERSION);
        let rows = j.decisions("/w", 10).unwrap();
        assert_eq!(rows, vec![decision("/w", 1, "old-1")], "the old row is kept, with no client");
        j.record(&decision("/w", 2, "new-1")).unwrap();
        drop(j);
        let j = Journal::open(&path).expect("a migrated journal reopens without migrating again");
        assert_eq!(j.decisions("/w", 10).unwrap().len(), 2);
    }

    #[test]
    fn a_journal_from_a_newer_version_is_refused_with_what_to_do() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("j.sqlite3");
        drop(Journal::open(&path).unwrap());
        Connection::open(&path).unwrap().pragma_update(None, "user_version", 7).unwrap();
        let err = Journal::open(&path).err().expect("a newer schema is refused");
        let text = err.to_string();
        assert!(matches!(err, JournalError::TooNew { found: 7, known: SCHEMA_VERSION, .. }), "{err:?}");
        assert!(text.contains(&path.display().to_string()), "names the file: {text}");
        let known = format!("(version {SCHEMA_VERSION})");
        assert!(text.contains("schema version 7") && text.contains(&known), "names both versions: {text}");
        assert!(
            text.contains("schema version 7") && text.contains(&format!("(version {SCHEMA_VERSION})")),
            "names both versions: {text}"
        );
        assert!(text.contains("Update Resolve Desk, or move"), "says what to do: {text}");
        let version: i64 =
            Connection::open(&path).unwrap().pragma_query_value(None, "user_version", |r| r.get(0)).unwrap();
        assert_eq!(version, 7, "the newer journal is left as it is");
    }

    #[test]
    fn opening_waits_for_another_program_that_holds_the_database() {
        // Another program holds the (WAL) journal exclusively. Before busy_timeout came first,
        // the WAL pragma failed at once with "database is locked".
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("j.sqlite3");
        Journal::open(&path).unwrap().record(&decision("/w", 1, "old-1")).unwrap();
        let holder = Connection::open(&path).unwrap();
        holder
            .execute_batch(
                "PRAGMA locking_mode = EXCLUSIVE; BEGIN EXCLUSIVE;
                 INSERT INTO decisions (workspace, at_ms, actor, action, action_id, label, source_tool_name, reason, is_error, text)
                 VALUES ('/w', 3, 'person', 'discard', 'held-1', 'l', 's', 'r', 0, 't'); COMMIT;",
            )
            .unwrap();
        let (started_tx, started) = mpsc::channel();
        let (done_tx, done) = mpsc::channel();
        let p = path.clone();
        let opener = std::thread::spawn(move || {
            started_tx.send(()).unwrap();
            let result = Journal::open(&p).and_then(|j| {
                j.record(&decision("/w", 4, "after-1"))?;
                Ok(j)
            });
            done_tx.send(()).unwrap();
            result
        });
        started.recv().unwrap();
        // While the lock is held, the open must not have returned (the error came at once).
        assert_eq!(
            done.recv_timeout(Duration::from_millis(300)),
            Err(mpsc::RecvTimeoutError::Timeout),
            "the open returned while another program held the database: {:?}",
            done.try_recv()
        );
        drop(holder);
        let j = opener.join().unwrap().expect("the open and the write wait for the lock and then succeed");
        let ids: Vec<String> = j.decisions("/w", 10).unwrap().into_iter().map(|d| d.action_id).collect();
        assert_eq!(ids, vec!["after-1", "held-1", "old-1"]);
    }

    #[test]
    fn an_old_journal_held_by_another_program_is_still_switched_to_wal() {
        // A rollback-journal file locked by another program: the switch to WAL needs an
        // exclusive lock. When busy_timeout came after it, the pragma gave up at once and
        // silently left the journal out of WAL mode.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("j.sqlite3");
        write_unversioned_journal(&path);
        let holder = Connection::open(&path).unwrap();
        holder.execute_batch("BEGIN EXCLUSIVE; INSERT INTO decisions (workspace, at_ms, actor, action, action_id, label, source_tool_name, reason, is_error, text) VALUES ('/w', 3, 'person', 'discard', 'held-1', 'l', 's', 'r', 0, 't');").unwrap();
        let (started_tx, started) = mpsc::channel();
        let (done_tx, done) = mpsc::channel();
        let p = path.clone();
        let opener = std::thread::spawn(move || {
            started_tx.send(()).unwrap();
            let result = Journal::open(&p);
            done_tx.send(()).unwrap();
            result
        });
        started.recv().unwrap();
        assert_eq!(
            done.recv_timeout(Duration::from_millis(300)),
            Err(mpsc::RecvTimeoutError::Timeout),
            "the open returned while another program held the database"
        );
        holder.execute_batch("COMMIT").unwrap();
        drop(holder);
        let j = opener.join().unwrap().expect("the open waits for the lock and then succeeds");
        let mode: String =
            Connection::open(&path).unwrap().pragma_query_value(None, "journal_mode", |r| r.get(0)).unwrap();
        assert_eq!(mode, "wal", "the journal is in WAL mode once the other program let go");
        let ids: Vec<String> = j.decisions("/w", 10).unwrap().into_iter().map(|d| d.action_id).collect();
        assert_eq!(ids, vec!["held-1", "old-1"]);
    }

    #[test]
    fn a_write_waits_for_a_write_lock_held_by_another_connection() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("j.sqlite3");
        let j = std::sync::Arc::new(Journal::open(&path).unwrap());
        let holder = Connection::open(&path).unwrap();
        holder.execute_batch("BEGIN IMMEDIATE; INSERT INTO decisions (workspace, at_ms, actor, action, action_id, label, source_tool_name, reason, is_error, text) VALUES ('/w', 1, 'person', 'discard', 'held-1', 'l', 's', 'r', 0, 't');").unwrap();
        let (done_tx, done) = mpsc::channel();
        let jj = j.clone();
        let writer = std::thread::spawn(move || {
            let r = jj.record(&decision("/w", 2, "waited-1"));
            done_tx.send(()).unwrap();
            r
        });
        assert_eq!(
            done.recv_timeout(Duration::from_millis(300)),
            Err(mpsc::RecvTimeoutError::Timeout),
            "the write returned while another connection held the write lock"
        );
        holder.execute_batch("COMMIT").unwrap();
        writer.join().unwrap().expect("the write succeeds once the lock is released");
        let ids: Vec<String> = j.decisions("/w", 10).unwrap().into_iter().map(|d| d.action_id).collect();
        assert_eq!(ids, vec!["waited-1", "held-1"]);
    }

    #[test]
    fn the_writer_writes_in_order_off_the_caller_thread_and_reports_each_result() {
        let dir = tempfile::tempdir().unwrap();
        let j = std::sync::Arc::new(Journal::open(&dir.path().join("j.sqlite3")).unwrap());
        let (tx, reports) = mpsc::channel::<(std::thread::ThreadId, bool)>();
        let tx = Mutex::new(tx);
        let w = Writer::spawn(
            j.clone(),
            Box::new(move |_, r| {
                let _ = tx.lock().unwrap().send((std::thread::current().id(), r.is_ok()));
            }),
        )
        .unwrap();
        for i in 0..50 {
            w.record(decision("/w", 1_000, &format!("a{i:02}")));
        }
        w.flush();
        let got: Vec<_> = reports.try_iter().collect();
        assert_eq!(got.len(), 50, "every write is reported before flush returns");
        assert!(got.iter().all(|(t, ok)| *ok && *t != std::thread::current().id()), "written on the writer's thread");
        let ids: Vec<String> = j.decisions("/w", 100).unwrap().into_iter().map(|d| d.action_id).collect();
        let expected: Vec<String> = (0..50).rev().map(|i| format!("a{i:02}")).collect();
        assert_eq!(ids, expected, "one millisecond, so the row order is the send order");
    }

    #[test]
    fn a_failed_write_is_reported_with_the_path() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("j.sqlite3");
        let j = std::sync::Arc::new(Journal::open(&path).unwrap());
        // Another program breaks the table under the app (a stand-in for a full or damaged disk).
        Connection::open(&path).unwrap().execute_batch("DROP TABLE decisions").unwrap();
        let (tx, reports) = mpsc::channel::<(PathBuf, String)>();
        let tx = Mutex::new(tx);
        let w = Writer::spawn(
            j,
            Box::new(move |p, r| {
                let _ = tx.lock().unwrap().send((p.to_path_buf(), r.err().map(|e| e.to_string()).unwrap_or_default()));
            }),
        )
        .unwrap();
        w.record(decision("/w", 1, "a1"));
        drop(w);
        let (p, err) = reports.recv().unwrap();
        assert_eq!(p, path);
        assert!(err.contains("no such table"), "{err}");
    }

    #[test]
    fn this_sessions_decision_without_a_row_still_shows_in_the_history() {
        let rows = vec![decision("/w", 1_000, "old-1"), decision("/w", 3_000, "new-2")];
        let rows: Vec<Decision> = rows.into_iter().rev().collect();
        let unwritten = decision("/w", 2_000, "new-1").to_history();
        let written = decision("/w", 3_000, "new-2").to_history();
        let merged = merge(&[unwritten, written], &rows);
        let ids: Vec<&str> = merged.iter().map(|r| r.entry.details.action_id.as_str()).collect();
        assert_eq!(ids, vec!["new-2", "new-1", "old-1"]);
        assert!(!merged[1].earlier_session);
    }

    #[test]
    fn an_interrupted_apply_is_journalled_as_failed_with_the_reason_interrupted() {
        let dir = tempfile::tempdir().unwrap();
        let j = Journal::open(&dir.path().join("j.sqlite3")).unwrap();
        let started_at = chrono::DateTime::from_timestamp_millis(1_700_000_000_000).unwrap();
        let recovery = Recovery {
            context: Some(resolve_engine::ApplyContext {
                action_id: "pa-1".into(),
                label: "AST Edit: 2 replacements in 1 file".into(),
                source_tool_name: "ast_edit".into(),
                actor: Some(Actor::Agent),
                client: Some("claude-code".into()),
            }),
            outcome: resolve_engine::RecoveryOutcome::RolledBack,
            started_at,
            files: 2,
            problems: vec![],
        };
        j.record(&Decision::interrupted("/w", &recovery)).unwrap();
        let unknown =
            Recovery { context: None, started_at: started_at - chrono::Duration::seconds(1), ..recovery.clone() };
        j.record(&Decision::interrupted("/w", &unknown)).unwrap();
        let h = j.history("/w", &[], 10).unwrap();
        let e = &h[0].entry;
        assert!(e.is_error, "never shown as applied");
        assert_eq!(e.details.reason, "interrupted");
        assert_eq!(e.details.action, ResolveAction::Apply);
        assert_eq!(e.text, recovery.message());
        assert_eq!((e.actor, e.client.as_deref()), (Actor::Agent, Some("claude-code")));
        assert_eq!(e.at, started_at);
        assert!(e.header.starts_with("Error: Applying \"AST Edit"), "{}", e.header);
        let e = &h[1].entry;
        assert_eq!((e.actor, e.details.label.as_str(), e.is_error), (Actor::Script, "(unknown)", true));
    }
}
