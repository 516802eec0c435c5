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

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::sync::Mutex;

use resolve_engine::{render_resolve_header, Actor, HistoryEntry, ResolveAction, ResolveDetails};
use rusqlite::{params, Connection};

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
        };
        HistoryEntry {
            header: render_resolve_header(&details, self.is_error, &self.text),
            details,
            text: self.text.clone(),
            is_error: self.is_error,
            actor: self.actor,
            at: chrono::DateTime::from_timestamp_millis(self.at_ms).unwrap_or_default(),
            client: None,
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
/// action this session never decided is from an earlier session.
pub fn merge(current: &[HistoryEntry], rows: &[Decision]) -> Vec<Recorded> {
    let key = |id: &str, at_ms: i64, action: ResolveAction| (id.to_string(), at_ms, action);
    let here: HashMap<_, &HistoryEntry> =
        current.iter().map(|h| (key(&h.details.action_id, h.at.timestamp_millis(), h.details.action), h)).collect();
    let ids: HashSet<&str> = current.iter().map(|h| h.details.action_id.as_str()).collect();
    rows.iter()
        .map(|d| Recorded {
            entry: match here.get(&key(&d.action_id, d.at_ms, d.action)) {
                Some(h) => (*h).clone(),
                None => d.to_history(),
            },
            earlier_session: !ids.contains(d.action_id.as_str()),
        })
        .collect()
}

fn actor_name(a: Actor) -> &'static str {
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
        _ => None,
    }
}

#[derive(Debug, thiserror::Error)]
pub enum JournalError {
    #[error("the decision journal has a row with {column} `{value}`, which this version does not know; update Resolve Desk or move the journal aside")]
    Unknown { column: &'static str, value: String },
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
                actor_name(d.actor),
                d.action.as_str(),
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
                },
            ))
        })?;
        let mut out = Vec::new();
        for row in rows {
            let (actor, action, mut d) = row?;
            d.actor = parse_actor(&actor).ok_or(JournalError::Unknown { column: "actor", value: actor })?;
            d.action = parse_action(&action).ok_or(JournalError::Unknown { column: "action", value: action })?;
            out.push(d);
        }
        Ok(out)
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
