//! Decisions kept for agents that were not waiting when the person decided
//! (`resolve_engine::waits`): one row per kept decision, removed once delivered, so an agent
//! that comes back after a restart of the app still learns what was decided and why.

use chrono::{TimeZone, Utc};
use resolve_engine::{Delivery, MailboxChange, MailboxPersistFn, ToolResult};
use rusqlite::params;

use crate::{Journal, JournalError, Writer};

impl Journal {
    /// Keeps `d` for its client in `workspace` (a second keep of the same id changes nothing).
    pub fn keep_delivery(&self, workspace: &str, d: &Delivery) -> Result<(), JournalError> {
        let result = serde_json::to_string(&d.result).map_err(|e| JournalError::Encode(e.to_string()))?;
        self.lock().execute(
            "INSERT OR IGNORE INTO deliveries (id, workspace, client, action_id, label, result, call_id, decided_at_ms)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            params![
                d.id,
                workspace,
                d.client,
                d.action_id,
                d.label,
                result,
                d.call_id,
                d.decided_at.timestamp_millis()
            ],
        )?;
        Ok(())
    }

    /// Forgets delivery `id` (it was delivered).
    pub fn forget_delivery(&self, workspace: &str, id: &str) -> Result<(), JournalError> {
        self.lock().execute("DELETE FROM deliveries WHERE workspace = ?1 AND id = ?2", params![workspace, id])?;
        Ok(())
    }

    /// The decisions kept in `workspace`, oldest first. A row that cannot be read back is
    /// skipped (and named on stderr), never fatal.
    pub fn deliveries(&self, workspace: &str) -> Result<Vec<Delivery>, JournalError> {
        let conn = self.lock();
        let mut stmt = conn.prepare(
            "SELECT id, client, action_id, label, result, call_id, decided_at_ms FROM deliveries
             WHERE workspace = ?1 ORDER BY decided_at_ms, id",
        )?;
        let rows = stmt.query_map(params![workspace], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, String>(2)?,
                r.get::<_, String>(3)?,
                r.get::<_, String>(4)?,
                r.get::<_, String>(5)?,
                r.get::<_, i64>(6)?,
            ))
        })?;
        let mut out = Vec::new();
        for row in rows {
            let (id, client, action_id, label, result, call_id, at) = row?;
            match serde_json::from_str::<ToolResult>(&result) {
                Ok(result) => out.push(Delivery {
                    id,
                    client,
                    action_id,
                    label,
                    result,
                    call_id,
                    decided_at: Utc.timestamp_millis_opt(at).single().unwrap_or_else(Utc::now),
                }),
                Err(e) => eprintln!("resolve-journal: skipped kept decision {id} (cannot read it back: {e})"),
            }
        }
        Ok(out)
    }
}

impl Writer {
    /// The mailbox's mirror for `workspace`: each kept decision and each delivery queued on
    /// the writer thread, in order.
    pub fn mailbox(self: &std::sync::Arc<Self>, workspace: &str) -> MailboxPersistFn {
        let writer = std::sync::Arc::downgrade(self);
        let workspace = workspace.to_string();
        Box::new(move |change| {
            let Some(writer) = writer.upgrade() else { return };
            let ws = workspace.clone();
            match change {
                MailboxChange::Kept(d) => {
                    let weight = d.result.text_content().len() as u64;
                    writer.run_sized(weight, Box::new(move |j| j.keep_delivery(&ws, &d)))
                }
                MailboxChange::Delivered(id) => writer.run(Box::new(move |j| j.forget_delivery(&ws, &id))),
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn delivery(id: &str, client: &str) -> Delivery {
        Delivery {
            id: id.into(),
            client: client.into(),
            action_id: "pa-1".into(),
            label: "AST Edit: 1 replacement in 1 file".into(),
            result: ToolResult::text("Applied. Decided by the person: applied. Reason: ok"),
            call_id: "call-3".into(),
            decided_at: Utc::now(),
        }
    }

    #[test]
    fn kept_decisions_survive_a_reopen_until_delivered() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("j.sqlite3");
        {
            let j = Journal::open(&path).unwrap();
            j.keep_delivery("/w", &delivery("dl-1", "claude-code")).unwrap();
            j.keep_delivery("/w", &delivery("dl-2", "codex")).unwrap();
            j.keep_delivery("/other", &delivery("dl-3", "claude-code")).unwrap();
        }
        let j = Journal::open(&path).unwrap();
        let kept = j.deliveries("/w").unwrap();
        assert_eq!(kept.iter().map(|d| d.id.as_str()).collect::<Vec<_>>(), ["dl-1", "dl-2"]);
        assert_eq!(kept[0], delivery("dl-1", "claude-code").with_time(kept[0].decided_at));
        j.forget_delivery("/w", "dl-1").unwrap();
        assert_eq!(j.deliveries("/w").unwrap().len(), 1);
        assert_eq!(j.deliveries("/other").unwrap().len(), 1, "per workspace");
    }

    trait WithTime {
        fn with_time(self, at: chrono::DateTime<Utc>) -> Self;
    }

    impl WithTime for Delivery {
        fn with_time(mut self, at: chrono::DateTime<Utc>) -> Self {
            self.decided_at = at;
            self
        }
    }
}
