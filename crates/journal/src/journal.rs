//! [`Journal`]: the handle on one database file (open, tighten, migrate, read, write).

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use rusqlite::{params, Connection};

use crate::model::{actor_name, decision_row, decode, DECISION_COLUMNS};
use resolve_engine::HistoryEntry;

use crate::schema::migrate;
use crate::{merge, private, Decision, JournalError, JournalLimits, Recorded, BUSY_TIMEOUT, JOURNAL_CACHE_KIB};

/// A handle on the journal database (safe to share between threads).
pub struct Journal {
    pub(crate) conn: Mutex<Connection>,
    path: PathBuf,
    /// The most `pushes` rows kept per workspace ([`JournalLimits::push_history`]).
    push_history: std::sync::atomic::AtomicUsize,
}

impl Journal {
    /// Opens (creating if needed) the journal at `path`, migrating it to [`SCHEMA_VERSION`](crate::SCHEMA_VERSION).
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
            "INSERT INTO decisions (workspace, at_ms, actor, action, action_id, label, source_tool_name, reason, is_error, text, client, partial, review)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
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
                d.partial.as_ref().and_then(|p| serde_json::to_string(p).ok()),
                d.review.as_ref().and_then(|r| serde_json::to_string(r).ok())
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
