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

use std::path::Path;
use std::sync::Mutex;

use rusqlite::{params, Connection};

/// One recorded decision.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decision {
    pub workspace: String,
    pub at_ms: i64,
    /// `agent`, `person` or `script`.
    pub actor: String,
    /// `apply` or `discard`.
    pub action: String,
    pub action_id: String,
    pub label: String,
    pub source_tool_name: String,
    pub reason: String,
    /// A failed apply (the action stayed on the stack).
    pub is_error: bool,
    pub text: String,
}

#[derive(Debug, thiserror::Error)]
pub enum JournalError {
    #[error("cannot open the decision journal {path}: {source}")]
    Open { path: String, source: rusqlite::Error },
    #[error("decision journal error: {0}")]
    Sql(#[from] rusqlite::Error),
}

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS decisions (
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
CREATE INDEX IF NOT EXISTS decisions_by_workspace ON decisions (workspace, at_ms);
";

/// A handle on the journal database (safe to share between threads).
pub struct Journal {
    conn: Mutex<Connection>,
}

impl Journal {
    /// Opens (creating if needed) the journal at `path`.
    pub fn open(path: &Path) -> Result<Journal, JournalError> {
        let open_err = |source| JournalError::Open { path: path.display().to_string(), source };
        if let Some(dir) = path.parent() {
            let _ = std::fs::create_dir_all(dir);
        }
        let conn = Connection::open(path).map_err(open_err)?;
        // WAL: a crash mid-write leaves the journal consistent; readers never block writers.
        conn.pragma_update(None, "journal_mode", "WAL").map_err(open_err)?;
        conn.busy_timeout(std::time::Duration::from_secs(5)).map_err(open_err)?;
        conn.execute_batch(SCHEMA).map_err(open_err)?;
        Ok(Journal { conn: Mutex::new(conn) })
    }

    /// Appends one decision.
    pub fn record(&self, d: &Decision) -> Result<(), JournalError> {
        let conn = self.conn.lock().unwrap_or_else(|p| p.into_inner());
        conn.execute(
            "INSERT INTO decisions (workspace, at_ms, actor, action, action_id, label, source_tool_name, reason, is_error, text)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
            params![
                d.workspace,
                d.at_ms,
                d.actor,
                d.action,
                d.action_id,
                d.label,
                d.source_tool_name,
                d.reason,
                d.is_error,
                d.text
            ],
        )?;
        Ok(())
    }

    /// The latest `limit` decisions in `workspace`, newest first.
    pub fn decisions(&self, workspace: &str, limit: usize) -> Result<Vec<Decision>, JournalError> {
        let conn = self.conn.lock().unwrap_or_else(|p| p.into_inner());
        let mut stmt = conn.prepare(
            "SELECT workspace, at_ms, actor, action, action_id, label, source_tool_name, reason, is_error, text
             FROM decisions WHERE workspace = ?1 ORDER BY at_ms DESC, id DESC LIMIT ?2",
        )?;
        let rows = stmt.query_map(params![workspace, limit as i64], |r| {
            Ok(Decision {
                workspace: r.get(0)?,
                at_ms: r.get(1)?,
                actor: r.get(2)?,
                action: r.get(3)?,
                action_id: r.get(4)?,
                label: r.get(5)?,
                source_tool_name: r.get(6)?,
                reason: r.get(7)?,
                is_error: r.get(8)?,
                text: r.get(9)?,
            })
        })?;
        Ok(rows.collect::<Result<Vec<_>, _>>()?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decision(ws: &str, at_ms: i64, id: &str) -> Decision {
        Decision {
            workspace: ws.into(),
            at_ms,
            actor: "person".into(),
            action: "apply".into(),
            action_id: id.into(),
            label: "AST Edit: 1 replacement in 1 file".into(),
            source_tool_name: "ast_edit".into(),
            reason: "looks right".into(),
            is_error: false,
            text: "Applied 1 replacement in 1 file.".into(),
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
    fn an_unopenable_path_is_a_clear_error() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("file"), "x").unwrap();
        let err = Journal::open(&dir.path().join("file/journal.sqlite3")).err().expect("a file is not a folder");
        assert!(err.to_string().contains("cannot open the decision journal"), "{err}");
    }
}
