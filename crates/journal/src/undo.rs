//! The undo data of applied change sets, keyed by decision (workspace + action id): the
//! record that reverts the decision's current effect (`UndoRecord`, compact binary), its size
//! and its state. One row per applied action; an undo or a redo replaces the row's record with
//! the one that reverts it, so storage never grows with undo/redo cycles.
//!
//! Storage is bounded by [`UndoRetention`] (entries and bytes over the whole journal): beyond
//! it the oldest rows lose their data and become [`UndoState::Expired`] (the history then says
//! the entry can no longer be undone).

use std::collections::HashMap;

use resolve_engine::UndoRecord;
use rusqlite::{params, OptionalExtension};

use crate::{Journal, JournalError};

/// How much undo data the journal keeps (a setting of the app).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UndoRetention {
    /// The newest this many applied actions can be undone.
    pub max_entries: usize,
    /// And their undo data takes at most this many bytes together.
    pub max_bytes: u64,
}

impl Default for UndoRetention {
    /// 200 entries, 256 MiB.
    fn default() -> Self {
        UndoRetention { max_entries: 200, max_bytes: 256 * 1024 * 1024 }
    }
}

/// Where a decision's undo stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UndoState {
    /// Applied: can be undone.
    CanUndo,
    /// Undone: can be redone.
    Undone,
    /// Redone: can be undone again.
    Redone,
    /// Its data was dropped by the retention: can no longer be undone.
    Expired,
}

impl UndoState {
    pub fn as_str(self) -> &'static str {
        match self {
            UndoState::CanUndo => "can_undo",
            UndoState::Undone => "undone",
            UndoState::Redone => "redone",
            UndoState::Expired => "expired",
        }
    }

    fn parse(s: &str) -> Option<UndoState> {
        match s {
            "can_undo" => Some(UndoState::CanUndo),
            "undone" => Some(UndoState::Undone),
            "redone" => Some(UndoState::Redone),
            "expired" => Some(UndoState::Expired),
            _ => None,
        }
    }
}

/// One decision's undo row (without its data).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UndoEntry {
    pub action_id: String,
    /// The applied action's label and producing tool (for the undo's own decision).
    pub label: String,
    pub source_tool_name: String,
    pub state: UndoState,
    /// Bytes of undo data kept (0 once expired).
    pub size: u64,
    /// Why the last undo or redo was refused (files changed since the apply), until one succeeds.
    pub note: Option<String>,
}

fn entry(r: &rusqlite::Row<'_>) -> rusqlite::Result<(UndoEntry, String)> {
    Ok((
        UndoEntry {
            action_id: r.get(0)?,
            label: r.get(1)?,
            source_tool_name: r.get(2)?,
            state: UndoState::CanUndo,
            size: r.get::<_, i64>(4)?.max(0) as u64,
            note: r.get(5)?,
        },
        r.get(3)?,
    ))
}

fn with_state((mut e, state): (UndoEntry, String)) -> Result<UndoEntry, JournalError> {
    e.state = UndoState::parse(&state).ok_or(JournalError::Unknown { column: "undo state", value: state })?;
    Ok(e)
}

const COLUMNS: &str = "action_id, label, source_tool_name, state, size, note";

impl Journal {
    /// Keeps the undo data of an action applied in `workspace` (state: can undo), then drops
    /// the oldest data beyond `retention`.
    #[allow(clippy::too_many_arguments)]
    pub fn keep_undo(
        &self,
        workspace: &str,
        action_id: &str,
        label: &str,
        source_tool_name: &str,
        at_ms: i64,
        record: &UndoRecord,
        retention: UndoRetention,
    ) -> Result<(), JournalError> {
        let data = record.encode();
        {
            let conn = self.lock();
            conn.execute(
                "INSERT INTO undo (workspace, action_id, label, source_tool_name, at_ms, state, data, size, note)
                 VALUES (?1, ?2, ?3, ?4, ?5, 'can_undo', ?6, ?7, NULL)
                 ON CONFLICT (workspace, action_id) DO UPDATE SET
                   state = 'can_undo', data = excluded.data, size = excluded.size, note = NULL",
                params![workspace, action_id, label, source_tool_name, at_ms, data, data.len() as i64],
            )?;
        }
        self.prune_undo(retention)
    }

    /// After an undo (`state` = undone) or a redo (redone) of `action_id`: keeps `record`, the
    /// data that reverts it, and clears the note.
    pub fn undo_done(
        &self,
        workspace: &str,
        action_id: &str,
        state: UndoState,
        record: &UndoRecord,
        retention: UndoRetention,
    ) -> Result<(), JournalError> {
        let data = record.encode();
        {
            let conn = self.lock();
            conn.execute(
                "UPDATE undo SET state = ?3, data = ?4, size = ?5, note = NULL WHERE workspace = ?1 AND action_id = ?2",
                params![workspace, action_id, state.as_str(), data, data.len() as i64],
            )?;
        }
        self.prune_undo(retention)
    }

    /// Sets (or clears) why the last undo or redo of `action_id` was refused.
    pub fn undo_note(&self, workspace: &str, action_id: &str, note: Option<&str>) -> Result<(), JournalError> {
        let conn = self.lock();
        conn.execute(
            "UPDATE undo SET note = ?3 WHERE workspace = ?1 AND action_id = ?2",
            params![workspace, action_id, note],
        )?;
        Ok(())
    }

    /// The undo row of `action_id` and its data (`None` once expired); `None` when the
    /// decision has no undo data (a discard, a failed apply, an action without a change set,
    /// or one journalled before undo existed).
    pub fn undo_entry(
        &self,
        workspace: &str,
        action_id: &str,
    ) -> Result<Option<(UndoEntry, Option<UndoRecord>)>, JournalError> {
        let conn = self.lock();
        let row = conn
            .query_row(
                &format!("SELECT {COLUMNS}, data FROM undo WHERE workspace = ?1 AND action_id = ?2"),
                params![workspace, action_id],
                |r| Ok((entry(r)?, r.get::<_, Option<Vec<u8>>>(6)?)),
            )
            .optional()?;
        let Some((e, data)) = row else { return Ok(None) };
        let e = with_state(e)?;
        let record = match data {
            Some(d) => {
                Some(UndoRecord::decode(&d).map_err(|why| JournalError::Unknown { column: "undo data", value: why })?)
            }
            None => None,
        };
        Ok(Some((e, record)))
    }

    /// Every undo row of `workspace` (without data), by action id.
    pub fn undo_entries(&self, workspace: &str) -> Result<HashMap<String, UndoEntry>, JournalError> {
        let conn = self.lock();
        let mut stmt = conn.prepare(&format!("SELECT {COLUMNS} FROM undo WHERE workspace = ?1"))?;
        let rows = stmt.query_map(params![workspace], entry)?;
        let mut out = HashMap::new();
        for row in rows {
            let e = with_state(row?)?;
            out.insert(e.action_id.clone(), e);
        }
        Ok(out)
    }

    /// Undo data kept over the whole journal: (entries with data, their bytes).
    pub fn undo_storage(&self) -> Result<(u64, u64), JournalError> {
        let conn = self.lock();
        Ok(conn.query_row("SELECT COUNT(*), COALESCE(SUM(size), 0) FROM undo WHERE data IS NOT NULL", [], |r| {
            Ok((r.get::<_, i64>(0)?.max(0) as u64, r.get::<_, i64>(1)?.max(0) as u64))
        })?)
    }

    /// Drops the data of the oldest entries beyond `retention` (newest kept first; once one
    /// does not fit, it and every older one expire).
    pub fn prune_undo(&self, retention: UndoRetention) -> Result<(), JournalError> {
        let mut conn = self.lock();
        let tx = conn.transaction()?;
        let expire: Vec<i64> = {
            let mut stmt =
                tx.prepare("SELECT id, size FROM undo WHERE data IS NOT NULL ORDER BY at_ms DESC, id DESC")?;
            let rows = stmt.query_map([], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?.max(0) as u64)))?;
            let (mut count, mut bytes, mut full) = (0usize, 0u64, false);
            let mut expire = Vec::new();
            for row in rows {
                let (id, size) = row?;
                if !full && count < retention.max_entries && bytes.saturating_add(size) <= retention.max_bytes {
                    count += 1;
                    bytes += size;
                } else {
                    full = true;
                    expire.push(id);
                }
            }
            expire
        };
        for id in expire {
            tx.execute("UPDATE undo SET data = NULL, size = 0, state = 'expired', note = NULL WHERE id = ?1", [id])?;
        }
        tx.commit()?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use resolve_engine::ChangeSet;

    fn record(bytes: usize) -> UndoRecord {
        let mut cs = ChangeSet::new();
        cs.delete("gone.bin", vec![7u8; bytes]);
        UndoRecord::of(&cs)
    }

    #[test]
    fn rows_round_trip_and_an_undo_replaces_the_data() {
        let dir = tempfile::tempdir().unwrap();
        let j = Journal::open(&dir.path().join("j.sqlite3")).unwrap();
        let r = UndoRetention::default();
        j.keep_undo("/w", "a1", "AST Edit: 1", "ast_edit", 1, &record(10), r).unwrap();
        let (e, data) = j.undo_entry("/w", "a1").unwrap().unwrap();
        assert_eq!((e.state, e.label.as_str(), data), (UndoState::CanUndo, "AST Edit: 1", Some(record(10))));
        j.undo_note("/w", "a1", Some("1 file changed since the apply: a.ts")).unwrap();
        assert_eq!(j.undo_entries("/w").unwrap()["a1"].note.as_deref(), Some("1 file changed since the apply: a.ts"));
        j.undo_done("/w", "a1", UndoState::Undone, &record(3), r).unwrap();
        let (e, data) = j.undo_entry("/w", "a1").unwrap().unwrap();
        assert_eq!((e.state, e.note, data), (UndoState::Undone, None, Some(record(3))));
        assert_eq!(j.undo_storage().unwrap().0, 1, "one row per decision, whatever the undo/redo cycles");
        assert!(j.undo_entry("/other", "a1").unwrap().is_none());
    }

    #[test]
    fn a_one_line_edit_of_a_large_file_stores_only_that_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("j.sqlite3");
        let before: String = (0..50_000).map(|i| format!("export const value{i} = {i};\n")).collect();
        assert!(before.len() > 1_000_000);
        let after = before.replace("export const value25000 = 25000;\n", "export const value25000 = 0;\n");
        let mut cs = ChangeSet::new();
        cs.edit("src/big.ts", before.into_bytes(), after.into_bytes());
        let j = Journal::open(&path).unwrap();
        j.keep_undo("/w", "a1", "l", "t", 1, &UndoRecord::of(&cs), UndoRetention::default()).unwrap();
        drop(j);
        let j = Journal::open(&path).unwrap();
        let (count, bytes) = j.undo_storage().unwrap();
        assert_eq!(count, 1);
        assert!(bytes < 300, "{bytes} bytes stored for a one-line edit of a 1.5 MB file");
        let (_, data) = j.undo_entry("/w", "a1").unwrap().unwrap();
        assert_eq!(data.unwrap(), UndoRecord::of(&cs), "read back from the file");
    }

    #[test]
    fn retention_by_count_expires_the_oldest() {
        let dir = tempfile::tempdir().unwrap();
        let j = Journal::open(&dir.path().join("j.sqlite3")).unwrap();
        let r = UndoRetention { max_entries: 3, max_bytes: u64::MAX };
        for i in 0..5 {
            j.keep_undo("/w", &format!("a{i}"), "l", "t", i, &record(10), r).unwrap();
        }
        let e = j.undo_entries("/w").unwrap();
        let states: Vec<UndoState> = (0..5).map(|i| e[&format!("a{i}")].state).collect();
        use UndoState::*;
        assert_eq!(states, vec![Expired, Expired, CanUndo, CanUndo, CanUndo]);
        assert_eq!(e["a0"].size, 0);
        assert_eq!(j.undo_entry("/w", "a0").unwrap().unwrap().1, None, "its data is gone");
        assert_eq!(j.undo_storage().unwrap().0, 3);
    }

    #[test]
    fn retention_by_bytes_expires_the_oldest() {
        let dir = tempfile::tempdir().unwrap();
        let j = Journal::open(&dir.path().join("j.sqlite3")).unwrap();
        let size = record(1000).encode().len() as u64;
        let r = UndoRetention { max_entries: 100, max_bytes: 2 * size + size / 2 };
        for i in 0..4 {
            j.keep_undo("/w", &format!("a{i}"), "l", "t", i, &record(1000), r).unwrap();
        }
        let e = j.undo_entries("/w").unwrap();
        assert_eq!(e["a1"].state, UndoState::Expired);
        assert_eq!((e["a2"].state, e["a3"].state), (UndoState::CanUndo, UndoState::CanUndo));
        let (count, bytes) = j.undo_storage().unwrap();
        assert_eq!((count, bytes), (2, 2 * size));
        assert!(bytes <= r.max_bytes);
    }
}
