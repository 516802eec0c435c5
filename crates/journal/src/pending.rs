//! Pending actions kept across restarts, and the record of every push.
//!
//! `pending_actions` holds the actions still waiting in each workspace (a row per action, in
//! push order: `seq`), `pending_changes` the bytes of their change sets (BLOBs, with the
//! previewed hashes), `pushes` one row per push ever made (append-only: time, workspace,
//! action, the tool call as JSON, label, source, who asked, the files with their previewed
//! hashes). A pending row is saved when its action is pushed and deleted when it is
//! decided or popped; closing a program deletes nothing. Reading a row back never drops
//! it: a row that cannot be decoded comes back orphaned (shown, discardable, never applied).

use chrono::{DateTime, Utc};
use resolve_engine::{Change, ContentHash, EntryKind, RenameRow, Session, StoredAction, StoredBody, ToolCall};
use rusqlite::{params, Connection, OptionalExtension};
use serde_json::{json, Value};

use crate::{Journal, JournalError};

/// One push, as recorded in `pushes`.
#[derive(Debug, Clone, PartialEq)]
pub struct Push {
    pub workspace: String,
    pub at_ms: i64,
    pub action_id: String,
    /// The tool call that pushed it, when it came from one.
    pub tool_call: Option<ToolCall>,
    pub label: String,
    pub source_tool_name: String,
    /// Who asked: the agent or MCP client of the pushing call, when it said.
    pub client: Option<String>,
    /// `[{path, from?, change, previewed_hash?}]`, hashes in hex (empty for a closure).
    pub files: Value,
}

impl Push {
    /// The push of `action` in `workspace`, dated when the action was made.
    pub fn of(workspace: &str, action: &StoredAction) -> Push {
        let files = action
            .previewed_files()
            .into_iter()
            .map(|f| {
                let mut v = json!({"path": f.path, "change": f.change.as_str()});
                if let Some(from) = f.from {
                    v["from"] = json!(from);
                }
                if let Some(h) = f.previewed_hash {
                    v["previewed_hash"] = json!(h.to_string());
                }
                v
            })
            .collect();
        Push {
            workspace: workspace.to_string(),
            at_ms: action.created_at.timestamp_millis(),
            action_id: action.id.clone(),
            tool_call: action.origin.clone(),
            label: action.label.clone(),
            source_tool_name: action.source_tool_name.clone(),
            client: action.pushed_by.clone(),
            files: Value::Array(files),
        }
    }
}

fn to_json<T: serde::Serialize>(v: &T) -> Option<String> {
    serde_json::to_string(v).ok()
}

/// A pending action's comments as stored: `NULL` when there are none.
fn comments_json(comments: &[resolve_engine::Comment]) -> Option<String> {
    if comments.is_empty() {
        None
    } else {
        to_json(&comments)
    }
}

/// A pending action's review state as stored: `NULL` when there is nothing to keep.
fn review_json(state: &resolve_engine::ReviewState) -> Option<String> {
    if state.is_empty() {
        None
    } else {
        to_json(state)
    }
}

fn entry_kind_name(k: EntryKind) -> &'static str {
    match k {
        EntryKind::File => "file",
        EntryKind::Symlink => "symlink",
    }
}

impl Journal {
    /// Keeps `action` as pending in `workspace`, on top of the ones kept before (one
    /// transaction: the row and every change's bytes, or nothing). Saving an id already kept
    /// there changes nothing.
    pub fn save_pending(&self, workspace: &str, action: &StoredAction) -> Result<(), JournalError> {
        let mut conn = self.lock();
        let tx = conn.transaction()?;
        let (body, applied_text, discard_text, renames, written_by) = match &action.body {
            StoredBody::ChangeSet { renames, applied_text, discard_text, written_by, .. } => (
                "change_set",
                Some(applied_text.as_str()),
                discard_text.as_deref(),
                renames.as_ref().and_then(to_json),
                written_by.as_deref(),
            ),
            StoredBody::Orphaned => ("orphaned", None, None, None, None),
        };
        let inserted = tx.execute(
            "INSERT INTO pending_actions (workspace, action_id, label, source_tool_name, details, created_at_ms,
                 origin, pushed_by, body, applied_text, discard_text, renames, comments, review, written_by)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)
             ON CONFLICT (workspace, action_id) DO NOTHING",
            params![
                workspace,
                action.id,
                action.label,
                action.source_tool_name,
                action.details.as_ref().and_then(to_json),
                action.created_at.timestamp_millis(),
                action.origin.as_ref().and_then(to_json),
                action.pushed_by,
                body,
                applied_text,
                discard_text,
                renames,
                comments_json(&action.comments),
                review_json(&action.review),
                written_by,
            ],
        )?;
        if inserted == 1 {
            let seq = tx.last_insert_rowid();
            if let StoredBody::ChangeSet { changes, .. } = &action.body {
                let mut stmt = tx.prepare(
                    "INSERT INTO pending_changes (action_seq, idx, kind, path, to_path, entry_kind, before, before_hash, after)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
                )?;
                for (idx, change) in changes.iter().enumerate() {
                    let (kind, path, to, entry, before, hash, after): (_, _, _, _, Option<&[u8]>, _, Option<&[u8]>) =
                        match change {
                            Change::Edit { path, before, before_hash, after } => (
                                "edit",
                                path,
                                None,
                                None,
                                Some(&**before),
                                Some(before_hash.to_bytes()),
                                Some(&**after),
                            ),
                            Change::Create { path, contents } => {
                                ("create", path, None, None, None, None, Some(&**contents))
                            }
                            Change::Delete { path, before, before_hash } => {
                                ("delete", path, None, None, Some(&**before), Some(before_hash.to_bytes()), None)
                            }
                            Change::Rename { from, to, kind, before_hash } => (
                                "rename",
                                from,
                                Some(to),
                                Some(entry_kind_name(*kind)),
                                None,
                                Some(before_hash.to_bytes()),
                                None,
                            ),
                        };
                    stmt.execute(params![
                        seq,
                        idx as i64,
                        kind,
                        path,
                        to,
                        entry,
                        before,
                        hash.map(|h| h.to_vec()),
                        after
                    ])?;
                }
                save_replacements(&tx, seq, action)?;
            }
        }
        tx.commit()?;
        Ok(())
    }

    /// Keeps `comments` (the whole list, in file order) as the comments of the pending action
    /// `action_id` of `workspace`. An action that is not kept (decided meanwhile) is not an
    /// error: there is nothing to comment on any more.
    pub fn save_comments(
        &self,
        workspace: &str,
        action_id: &str,
        comments: &[resolve_engine::Comment],
    ) -> Result<(), JournalError> {
        let conn = self.lock();
        conn.execute(
            "UPDATE pending_actions SET comments = ?3 WHERE workspace = ?1 AND action_id = ?2",
            params![workspace, action_id, comments_json(comments)],
        )?;
        Ok(())
    }

    /// Keeps `state` (its round and viewed marks) as the review state of the pending action
    /// `action_id` of `workspace`; an action that is not kept is not an error.
    pub fn save_review(
        &self,
        workspace: &str,
        action_id: &str,
        state: &resolve_engine::ReviewState,
    ) -> Result<(), JournalError> {
        let conn = self.lock();
        conn.execute(
            "UPDATE pending_actions SET review = ?3 WHERE workspace = ?1 AND action_id = ?2",
            params![workspace, action_id, review_json(state)],
        )?;
        Ok(())
    }

    /// Forgets the pending action `action_id` of `workspace` (decided or popped), unless it
    /// was just kept as a prior round ([`keep_round`](Self::keep_round)). Forgetting one that
    /// is not kept is not an error.
    pub fn remove_pending(&self, workspace: &str, action_id: &str) -> Result<(), JournalError> {
        self.delete_action(workspace, action_id, false)
    }

    /// Deletes the row of `action_id` in `workspace` with its changes (one transaction): the
    /// pending action, or (`prior_round`) the prior round kept under that id.
    fn delete_action(&self, workspace: &str, action_id: &str, prior_round: bool) -> Result<(), JournalError> {
        let mut conn = self.lock();
        let tx = conn.transaction()?;
        let seq: Option<i64> = tx
            .query_row(
                &format!(
                    "SELECT seq FROM pending_actions WHERE workspace = ?1 AND action_id = ?2 AND prior_round IS {}",
                    if prior_round { "NOT NULL" } else { "NULL" }
                ),
                params![workspace, action_id],
                |r| r.get(0),
            )
            .optional()?;
        if let Some(seq) = seq {
            tx.execute("DELETE FROM pending_changes WHERE action_seq = ?1", params![seq])?;
            tx.execute("DELETE FROM pending_actions WHERE seq = ?1", params![seq])?;
        }
        tx.commit()?;
        Ok(())
    }

    /// The pending actions kept for `workspace`, bottom first (push order): what
    /// [`Session::restore`] takes. A row that cannot be read back is returned orphaned.
    pub fn pending(&self, workspace: &str) -> Result<Vec<StoredAction>, JournalError> {
        Ok(self.read_actions(workspace, false)?.into_iter().map(|(a, _)| a).collect())
    }

    /// The prior rounds of reviews kept for `workspace` (previews discarded with Request
    /// changes whose agent has not answered), oldest first: what [`Session::restore_rounds`]
    /// takes. One whose round cannot be read back is left out (its review starts afresh).
    pub fn rounds(&self, workspace: &str) -> Result<Vec<(StoredAction, resolve_engine::StoredRound)>, JournalError> {
        Ok(self
            .read_actions(workspace, true)?
            .into_iter()
            .filter_map(|(a, round)| Some((a, serde_json::from_str(&round?).ok()?)))
            .collect())
    }

    /// Keeps the pending action `action_id` of `workspace`, being discarded with Request
    /// changes, as its review's prior round `round` (the `Remove` that follows leaves it).
    pub fn keep_round(
        &self,
        workspace: &str,
        action_id: &str,
        round: &resolve_engine::StoredRound,
    ) -> Result<(), JournalError> {
        let conn = self.lock();
        conn.execute(
            "UPDATE pending_actions SET prior_round = ?3 WHERE workspace = ?1 AND action_id = ?2",
            params![workspace, action_id, to_json(round)],
        )?;
        Ok(())
    }

    /// Forgets the prior round kept as `action_id` of `workspace` (its agent answered, or a
    /// newer one replaced it); one that is not kept is not an error.
    pub fn forget_round(&self, workspace: &str, action_id: &str) -> Result<(), JournalError> {
        self.delete_action(workspace, action_id, true)
    }

    /// The actions kept for `workspace` in push order: the pending ones, or (`rounds`) the
    /// prior rounds, each with its round's JSON.
    fn read_actions(&self, workspace: &str, rounds: bool) -> Result<Vec<(StoredAction, Option<String>)>, JournalError> {
        let conn = self.lock();
        let mut stmt = conn.prepare(&format!(
            "SELECT seq, action_id, label, source_tool_name, details, created_at_ms, origin, pushed_by, body,
                    applied_text, discard_text, renames, comments, review, prior_round, written_by
             FROM pending_actions WHERE workspace = ?1 AND prior_round IS {} ORDER BY seq",
            if rounds { "NOT NULL" } else { "NULL" }
        ))?;
        type Row = (
            i64,
            String,
            String,
            String,
            Option<String>,
            i64,
            Option<String>,
            Option<String>,
            String,
            Option<String>,
            Option<String>,
            Option<String>,
            Option<String>,
            Option<String>,
            Option<String>,
            Option<String>,
        );
        let rows: Vec<Row> = stmt
            .query_map(params![workspace], |r| {
                Ok((
                    r.get(0)?,
                    r.get(1)?,
                    r.get(2)?,
                    r.get(3)?,
                    r.get(4)?,
                    r.get(5)?,
                    r.get(6)?,
                    r.get(7)?,
                    r.get(8)?,
                    r.get(9)?,
                    r.get(10)?,
                    r.get(11)?,
                    r.get(12)?,
                    r.get(13)?,
                    r.get(14)?,
                    r.get(15)?,
                ))
            })?
            .collect::<Result<_, _>>()?;
        let mut out = Vec::with_capacity(rows.len());
        for (
            seq,
            id,
            label,
            source,
            details,
            created_ms,
            origin,
            pushed_by,
            body,
            applied,
            discard,
            renames,
            comments,
            review,
            prior_round,
            written_by,
        ) in rows
        {
            let body = match (body.as_str(), applied) {
                ("change_set", Some(applied_text)) => match read_changes(&conn, seq) {
                    Some(changes) => {
                        let renames: Option<Option<Vec<RenameRow>>> = match renames {
                            None => Some(None),
                            Some(text) => serde_json::from_str(&text).ok().map(Some),
                        };
                        match renames {
                            Some(renames) => StoredBody::ChangeSet {
                                replacements: read_replacements(&conn, seq, &changes),
                                changes,
                                renames,
                                applied_text,
                                discard_text: discard,
                                written_by,
                            },
                            None => StoredBody::Orphaned,
                        }
                    }
                    None => StoredBody::Orphaned,
                },
                _ => StoredBody::Orphaned,
            };
            out.push((
                StoredAction {
                    id,
                    label,
                    source_tool_name: source,
                    details: details.and_then(|d| serde_json::from_str(&d).ok()),
                    created_at: DateTime::<Utc>::from_timestamp_millis(created_ms).unwrap_or_default(),
                    origin: origin.and_then(|o| serde_json::from_str(&o).ok()),
                    pushed_by,
                    body,
                    // Comments this build cannot read back are dropped, never the action.
                    comments: comments.and_then(|c| serde_json::from_str(&c).ok()).unwrap_or_default(),
                    // Likewise a review state: the action comes back as a first round, unmarked.
                    review: review.and_then(|r| serde_json::from_str(&r).ok()).unwrap_or_default(),
                },
                prior_round,
            ));
        }
        Ok(out)
    }

    /// Appends a push to `pushes`, then prunes the workspace's oldest rows beyond
    /// [`Journal::push_history`] (one transaction).
    pub fn record_push(&self, push: &Push) -> Result<(), JournalError> {
        let keep = self.push_history();
        let mut conn = self.lock();
        let tx = conn.transaction()?;
        tx.execute(
            "INSERT INTO pushes (workspace, at_ms, action_id, tool_call, label, source_tool_name, client, files)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            params![
                push.workspace,
                push.at_ms,
                push.action_id,
                push.tool_call.as_ref().and_then(to_json),
                push.label,
                push.source_tool_name,
                push.client,
                push.files.to_string(),
            ],
        )?;
        // The newest row past the ones kept, if any: it and everything older go.
        let cutoff: Option<(i64, i64)> = tx
            .query_row(
                "SELECT at_ms, id FROM pushes WHERE workspace = ?1 ORDER BY at_ms DESC, id DESC LIMIT 1 OFFSET ?2",
                params![push.workspace, keep.min(i64::MAX as usize) as i64],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()?;
        if let Some((at_ms, id)) = cutoff {
            tx.execute(
                "DELETE FROM pushes WHERE workspace = ?1 AND (at_ms < ?2 OR (at_ms = ?2 AND id <= ?3))",
                params![push.workspace, at_ms, id],
            )?;
        }
        tx.commit()?;
        Ok(())
    }

    /// The latest `limit` pushes in `workspace`, newest first.
    pub fn pushes(&self, workspace: &str, limit: usize) -> Result<Vec<Push>, JournalError> {
        let conn = self.lock();
        let mut stmt = conn.prepare(
            "SELECT workspace, at_ms, action_id, tool_call, label, source_tool_name, client, files
             FROM pushes WHERE workspace = ?1 ORDER BY at_ms DESC, id DESC LIMIT ?2",
        )?;
        let rows = stmt.query_map(params![workspace, limit as i64], |r| {
            Ok(Push {
                workspace: r.get(0)?,
                at_ms: r.get(1)?,
                action_id: r.get(2)?,
                tool_call: r.get::<_, Option<String>>(3)?.and_then(|t| serde_json::from_str(&t).ok()),
                label: r.get(4)?,
                source_tool_name: r.get(5)?,
                client: r.get(6)?,
                files: serde_json::from_str(&r.get::<_, String>(7)?).unwrap_or(Value::Null),
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Puts the actions kept for the session's workspace back on its stack (see
    /// [`Session::restore`]): in order, re-checked against the disk, never applied; and the
    /// prior rounds of reviews waiting for their agent ([`Session::restore_rounds`]).
    pub fn restore_pending(&self, session: &Session) -> Result<resolve_engine::RestoreReport, JournalError> {
        let root = session.workspace().root().display().to_string();
        let report = session.restore(self.pending(&root)?);
        // The reviews whose agent had not answered a Request changes yet (an older round of the
        // same agent's, superseded, is forgotten).
        for id in session.restore_rounds(self.rounds(&root)?) {
            self.forget_round(&root, &id)?;
        }
        Ok(report)
    }
}

/// The stored changes of one action in order, or `None` if a row cannot be read back
/// (unknown kind, missing bytes, a hash of the wrong length).
/// Keeps the single replacements of an action's `ast_edit` edits (partial apply) beside
/// their changes (column `replacements` of `pending_changes`).
fn save_replacements(conn: &Connection, seq: i64, action: &StoredAction) -> Result<(), JournalError> {
    let StoredBody::ChangeSet { changes, replacements, .. } = &action.body else { return Ok(()) };
    for (path, reps) in replacements {
        if let Some(idx) = changes.iter().position(|c| c.path() == path) {
            conn.execute(
                "UPDATE pending_changes SET replacements = ?1 WHERE action_seq = ?2 AND idx = ?3",
                params![reps.to_bytes(), seq, idx as i64],
            )?;
        }
    }
    Ok(())
}

/// The replacements kept with `changes` (an unreadable one is dropped: that file can then
/// only be left out whole).
fn read_replacements(conn: &Connection, seq: i64, changes: &[Change]) -> Vec<(String, resolve_engine::Replacements)> {
    let read = || -> rusqlite::Result<Vec<(i64, Vec<u8>)>> {
        let mut stmt = conn.prepare(
            "SELECT idx, replacements FROM pending_changes WHERE action_seq = ?1 AND replacements IS NOT NULL ORDER BY idx",
        )?;
        let rows = stmt.query_map(params![seq], |r| Ok((r.get(0)?, r.get(1)?)))?.collect();
        rows
    };
    read()
        .unwrap_or_default()
        .into_iter()
        .filter_map(|(idx, bytes)| {
            let change = changes.get(usize::try_from(idx).ok()?)?;
            Some((change.path().to_string(), resolve_engine::Replacements::from_bytes(&bytes)?))
        })
        .collect()
}

fn read_changes(conn: &Connection, seq: i64) -> Option<Vec<Change>> {
    let mut stmt = conn
        .prepare(
            "SELECT kind, path, to_path, entry_kind, before, before_hash, after
             FROM pending_changes WHERE action_seq = ?1 ORDER BY idx",
        )
        .ok()?;
    type Row = (String, String, Option<String>, Option<String>, Option<Vec<u8>>, Option<Vec<u8>>, Option<Vec<u8>>);
    let rows: Vec<Row> = stmt
        .query_map(params![seq], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?, r.get(5)?, r.get(6)?)))
        .ok()?
        .collect::<Result<_, _>>()
        .ok()?;
    let hash = |h: Option<Vec<u8>>| -> Option<ContentHash> { Some(ContentHash::from_bytes(h?.try_into().ok()?)) };
    rows.into_iter()
        .map(|(kind, path, to, entry, before, before_hash, after)| match kind.as_str() {
            "edit" => Some(Change::Edit {
                path,
                before: before?.into(),
                before_hash: hash(before_hash)?,
                after: after?.into(),
            }),
            "create" => Some(Change::Create { path, contents: after?.into() }),
            "delete" => Some(Change::Delete { path, before: before?.into(), before_hash: hash(before_hash)? }),
            "rename" => Some(Change::Rename {
                from: path,
                to: to?,
                kind: match entry?.as_str() {
                    "file" => EntryKind::File,
                    "symlink" => EntryKind::Symlink,
                    _ => return None,
                },
                before_hash: hash(before_hash)?,
            }),
            _ => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use resolve_engine::{FileChange, Persist, RenameStatus};

    use super::*;

    fn edit_and_rename(id: &str) -> StoredAction {
        let mut changes = Vec::new();
        let before: Arc<[u8]> = b"one\r\n\xEF\xBB\xBF\x00binary".to_vec().into();
        changes.push(Change::Edit {
            path: "src/a.ts".into(),
            before_hash: ContentHash::of(&before),
            before,
            after: b"ONE\r\n".to_vec().into(),
        });
        changes.push(Change::Create { path: "new/b.txt".into(), contents: b"new".to_vec().into() });
        changes.push(Change::Delete {
            path: "old.txt".into(),
            before: b"old".to_vec().into(),
            before_hash: ContentHash::of(b"old"),
        });
        changes.push(Change::Rename {
            from: "img_1.PNG".into(),
            to: "photo-1.png".into(),
            kind: EntryKind::Symlink,
            before_hash: ContentHash::of(b"target"),
        });
        StoredAction {
            id: id.into(),
            label: "AST Edit: 1 replacement in 1 file".into(),
            source_tool_name: "ast_edit".into(),
            details: Some(json!({"files": [{"path": "src/a.ts"}]})),
            created_at: DateTime::<Utc>::from_timestamp_millis(1_764_694_320_123).unwrap(),
            origin: Some(ToolCall { tool: "ast_edit".into(), params: json!({"ops": [{"pat": "a", "out": "b"}]}) }),
            pushed_by: Some("claude-code".into()),
            body: StoredBody::ChangeSet {
                changes,
                renames: Some(vec![RenameRow {
                    from: "img_1.PNG".into(),
                    to: "photo-1.png".into(),
                    status: RenameStatus::Rename,
                }]),
                applied_text: "Applied 1 replacement in 1 file.".into(),
                discard_text: Some("Discarded batch rename of 1 file.".into()),
                written_by: Some("Claude Code".into()),
                replacements: vec![("src/a.ts".into(), {
                    let mut r = resolve_engine::Replacements::new();
                    r.push(1, 0, 3, b"ONE");
                    r
                })],
            },
            comments: Vec::new(),
            review: Default::default(),
        }
    }

    fn orphan(id: &str) -> StoredAction {
        StoredAction {
            id: id.into(),
            label: "Mail: notify".into(),
            source_tool_name: "custom_tool".into(),
            details: None,
            created_at: DateTime::<Utc>::from_timestamp_millis(5).unwrap(),
            origin: None,
            pushed_by: None,
            body: StoredBody::Orphaned,
            comments: Vec::new(),
            review: Default::default(),
        }
    }

    fn changes_of(a: &StoredAction) -> Vec<String> {
        match &a.body {
            StoredBody::ChangeSet { changes, .. } => changes.iter().map(|c| format!("{c:?}")).collect(),
            StoredBody::Orphaned => vec!["orphaned".into()],
        }
    }

    #[test]
    fn pending_actions_survive_reopening_the_file_in_push_order_with_every_byte_and_hash() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("journal.sqlite3");
        let (a, b, c) = (edit_and_rename("pa-x-1"), orphan("pa-x-2"), edit_and_rename("pa-x-3"));
        {
            let j = Journal::open(&path).unwrap();
            for action in [&a, &b, &c] {
                j.save_pending("/w", action).unwrap();
            }
            j.save_pending("/other", &orphan("pa-y-1")).unwrap();
            j.save_pending("/w", &orphan("pa-x-1")).unwrap();
        }
        let j = Journal::open(&path).unwrap();
        let back = j.pending("/w").unwrap();
        let ids: Vec<&str> = back.iter().map(|s| s.id.as_str()).collect();
        assert_eq!(
            ids,
            vec!["pa-x-1", "pa-x-2", "pa-x-3"],
            "push order, this workspace only, a saved id not saved twice"
        );
        assert_eq!(changes_of(&back[0]), changes_of(&a), "every change, byte for byte, with its hash");
        assert_eq!(back[0].created_at, a.created_at);
        assert_eq!(back[0].origin, a.origin);
        assert_eq!(back[0].details, a.details);
        assert_eq!(back[0].pushed_by.as_deref(), Some("claude-code"));
        match &back[0].body {
            StoredBody::ChangeSet { renames, applied_text, discard_text, replacements, written_by, .. } => {
                let StoredBody::ChangeSet { replacements: saved, .. } = &a.body else { unreachable!() };
                assert_eq!(
                    written_by.as_deref(),
                    Some("Claude Code"),
                    "an agent's gated edit stays the agent's to write"
                );
                assert_eq!(replacements, saved, "an ast_edit file's replacements survive (partial apply)");
                assert_eq!(renames.as_ref().unwrap()[0].to, "photo-1.png");
                assert_eq!(applied_text, "Applied 1 replacement in 1 file.");
                assert_eq!(discard_text.as_deref(), Some("Discarded batch rename of 1 file."));
            }
            StoredBody::Orphaned => panic!("a change set must come back as one"),
        }
        assert!(matches!(back[1].body, StoredBody::Orphaned));
        j.remove_pending("/w", "pa-x-2").unwrap();
        j.remove_pending("/w", "pa-x-2").unwrap();
        let ids: Vec<String> = j.pending("/w").unwrap().into_iter().map(|s| s.id).collect();
        assert_eq!(ids, vec!["pa-x-1", "pa-x-3"], "a removed action is gone, the order of the others kept");
        let left: i64 =
            j.conn.lock().unwrap().query_row("SELECT COUNT(*) FROM pending_changes", [], |r| r.get(0)).unwrap();
        assert_eq!(left, 8, "the removed action's changes (none: orphaned) and only those are gone");
        j.remove_pending("/w", "pa-x-1").unwrap();
        let left: i64 =
            j.conn.lock().unwrap().query_row("SELECT COUNT(*) FROM pending_changes", [], |r| r.get(0)).unwrap();
        assert_eq!(left, 4, "removing an action removes its bytes");
    }

    #[test]
    fn a_row_that_cannot_be_read_back_comes_back_orphaned_not_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let j = Journal::open(&dir.path().join("j.sqlite3")).unwrap();
        j.save_pending("/w", &edit_and_rename("pa-x-1")).unwrap();
        j.conn
            .lock()
            .unwrap()
            .execute("UPDATE pending_changes SET before_hash = x'00' WHERE kind = 'edit'", [])
            .unwrap();
        let back = j.pending("/w").unwrap();
        assert_eq!(back.len(), 1, "never dropped");
        assert_eq!(back[0].label, "AST Edit: 1 replacement in 1 file");
        assert!(matches!(back[0].body, StoredBody::Orphaned), "a damaged change set is never applied");
    }

    #[test]
    fn every_push_is_recorded_with_its_call_client_and_previewed_hashes() {
        let dir = tempfile::tempdir().unwrap();
        let j = Journal::open(&dir.path().join("j.sqlite3")).unwrap();
        let a = edit_and_rename("pa-x-1");
        j.record_push(&Push::of("/w", &a)).unwrap();
        j.record_push(&Push::of("/w", &orphan("pa-x-2"))).unwrap();
        let pushes = j.pushes("/w", 10).unwrap();
        assert_eq!(pushes.len(), 2);
        let p = pushes.iter().find(|p| p.action_id == "pa-x-1").unwrap();
        assert_eq!(p.tool_call, a.origin, "the tool call as made");
        assert_eq!(p.client.as_deref(), Some("claude-code"), "who asked");
        assert_eq!(p.at_ms, 1_764_694_320_123);
        let files = p.files.as_array().unwrap();
        assert_eq!(files.len(), 4);
        assert_eq!(files[0]["path"], "src/a.ts");
        assert_eq!(files[0]["change"], FileChange::Modified.as_str());
        assert_eq!(files[0]["previewed_hash"].as_str().unwrap().len(), 64, "a BLAKE3 hash in hex");
        assert!(files[1].get("previewed_hash").is_none(), "a creation read nothing");
        assert_eq!(files[3]["from"], "img_1.PNG");
        let o = pushes.iter().find(|p| p.action_id == "pa-x-2").unwrap();
        assert_eq!(o.files, json!([]), "a closure has no files");
        assert!(j.pushes("/other", 10).unwrap().is_empty());
    }

    #[test]
    fn the_writer_mirrors_pushes_and_removals_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let journal = Arc::new(Journal::open(&dir.path().join("j.sqlite3")).unwrap());
        let failures = Arc::new(std::sync::Mutex::new(Vec::new()));
        let f = failures.clone();
        let writer = Arc::new(
            crate::Writer::spawn(
                journal.clone(),
                Box::new(move |_, r| {
                    if let Err(e) = r {
                        f.lock().unwrap().push(e.to_string());
                    }
                }),
            )
            .unwrap(),
        );
        let hook = writer.persistence("/w");
        hook(Persist::Save(edit_and_rename("pa-x-1")));
        hook(Persist::Save(orphan("pa-x-2")));
        hook(Persist::Remove { id: "pa-x-1".into() });
        hook(Persist::Save(orphan("pa-x-3")));
        writer.flush();
        assert!(failures.lock().unwrap().is_empty(), "{:?}", failures.lock().unwrap());
        let ids: Vec<String> = journal.pending("/w").unwrap().into_iter().map(|s| s.id).collect();
        assert_eq!(ids, vec!["pa-x-2", "pa-x-3"]);
        assert_eq!(journal.pushes("/w", 10).unwrap().len(), 3, "every push is recorded, removed or not");
    }

    fn comment(id: &str, line: u32, text: &str) -> resolve_engine::Comment {
        resolve_engine::Comment {
            id: id.into(),
            path: "src/a.ts".into(),
            side: resolve_engine::CommentSide::New,
            start_line: line,
            end_line: line,
            quote: "ONE".into(),
            text: text.into(),
            replacement_id: Some(1),
        }
    }

    #[test]
    fn comments_are_kept_with_their_pending_action_and_read_back_whole() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("j.sqlite3");
        {
            let j = Journal::open(&path).unwrap();
            j.save_pending("/w", &edit_and_rename("pa-x-1")).unwrap();
            j.save_pending("/w", &orphan("pa-x-2")).unwrap();
            j.save_comments("/w", "pa-x-1", &[comment("c1", 1, "first"), comment("c2", 1, "second")]).unwrap();
            j.save_comments("/w", "pa-x-1", &[comment("c2", 1, "second, edited")]).unwrap();
            j.save_comments("/w", "pa-x-9", &[comment("c1", 1, "no such action")]).unwrap();
        }
        let j = Journal::open(&path).unwrap();
        let kept = j.pending("/w").unwrap();
        assert_eq!(kept[0].comments, vec![comment("c2", 1, "second, edited")], "the last list is kept, whole");
        assert!(kept[1].comments.is_empty());
        assert_eq!(kept.len(), 2, "comments on an action that is not kept add nothing");
        // Comments that cannot be read back are dropped, never the action.
        j.lock().execute("UPDATE pending_actions SET comments = 'not json' WHERE action_id = 'pa-x-1'", []).unwrap();
        let kept = j.pending("/w").unwrap();
        assert_eq!(kept.len(), 2);
        assert!(kept[0].comments.is_empty());
        assert!(matches!(kept[0].body, StoredBody::ChangeSet { .. }), "the action itself is intact");
    }

    #[test]
    fn the_writer_mirrors_comment_changes_after_the_push_they_follow() {
        let dir = tempfile::tempdir().unwrap();
        let journal = Arc::new(Journal::open(&dir.path().join("j.sqlite3")).unwrap());
        let writer = Arc::new(crate::Writer::spawn(journal.clone(), Box::new(|_, r| assert!(r.is_ok()))).unwrap());
        let hook = writer.persistence("/w");
        hook(Persist::Save(edit_and_rename("pa-x-1")));
        hook(Persist::Comments { id: "pa-x-1".into(), comments: vec![comment("c1", 1, "kept")] });
        writer.flush();
        assert_eq!(journal.pending("/w").unwrap()[0].comments, vec![comment("c1", 1, "kept")]);
        hook(Persist::Remove { id: "pa-x-1".into() });
        writer.flush();
        assert!(journal.pending("/w").unwrap().is_empty(), "decided: forgotten with its comments");
    }

    #[test]
    fn a_preview_discarded_with_request_changes_is_kept_as_a_prior_round_until_its_agent_answers() {
        let dir = tempfile::tempdir().unwrap();
        let journal = Arc::new(Journal::open(&dir.path().join("j.sqlite3")).unwrap());
        let writer = Arc::new(crate::Writer::spawn(journal.clone(), Box::new(|_, r| assert!(r.is_ok()))).unwrap());
        let hook = writer.persistence("/w");
        let round = resolve_engine::StoredRound {
            agent: "claude-code".into(),
            number: 1,
            first_label: "Edit: a".into(),
            comments: vec![(1, comment("c1", 1, "not like this"))],
            viewed: [("src/a.ts".to_string(), "h".to_string())].into(),
        };
        hook(Persist::Save(edit_and_rename("pa-x-1")));
        hook(Persist::Round { id: "pa-x-1".into(), round: round.clone() });
        hook(Persist::Remove { id: "pa-x-1".into() });
        writer.flush();
        assert!(journal.pending("/w").unwrap().is_empty(), "discarded: no longer pending");
        let rounds = journal.rounds("/w").unwrap();
        assert_eq!(rounds.len(), 1, "kept as the prior round");
        assert_eq!(rounds[0].1, round);
        let StoredBody::ChangeSet { changes, .. } = &rounds[0].0.body else { panic!("the previous proposal is kept") };
        let StoredBody::ChangeSet { changes: want, .. } = edit_and_rename("pa-x-1").body else { unreachable!() };
        let shape = |cs: &[Change]| cs.iter().map(|c| (c.path().to_string(), c.held_bytes())).collect::<Vec<_>>();
        assert_eq!(shape(changes), shape(&want), "every change kept");
        let Change::Edit { before, after, .. } = &changes[0] else { panic!("the edit first") };
        assert_eq!((&**before, &**after), (&b"one\r\n\xEF\xBB\xBF\x00binary"[..], &b"ONE\r\n"[..]), "with every byte");
        assert!(journal.rounds("/other").unwrap().is_empty(), "per workspace");

        hook(Persist::RoundTaken { id: "pa-x-1".into() });
        writer.flush();
        assert!(journal.rounds("/w").unwrap().is_empty(), "answered: forgotten");
        let left: i64 = journal.lock().query_row("SELECT count(*) FROM pending_changes", [], |r| r.get(0)).unwrap();
        assert_eq!(left, 0, "with its changes' bytes");
        // A round that cannot be read back is left out; its review starts afresh.
        hook(Persist::Save(edit_and_rename("pa-x-2")));
        hook(Persist::Round { id: "pa-x-2".into(), round });
        hook(Persist::Remove { id: "pa-x-2".into() });
        writer.flush();
        journal.lock().execute("UPDATE pending_actions SET prior_round = '{\"agent\": 7}'", []).unwrap();
        assert!(journal.rounds("/w").unwrap().is_empty());
        assert!(journal.pending("/w").unwrap().is_empty(), "and it never comes back as pending");
    }

    #[test]
    fn a_review_round_and_viewed_marks_are_kept_with_the_action_through_the_writer() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("j.sqlite3");
        let mut round_two = edit_and_rename("pa-x-2");
        round_two.review = resolve_engine::ReviewState {
            round: Some(resolve_engine::Round {
                number: 2,
                first_label: "AST Edit: first".into(),
                previous_id: "pa-x-1".into(),
                unchanged: vec!["src/b.ts".into()],
                earlier: vec![resolve_engine::EarlierComment {
                    round: 1,
                    comment: comment("c1", 1, "use const"),
                    now_lines: Some((2, 2)),
                    changed: true,
                }],
            }),
            round_base: [("src/a.ts".to_string(), "the previous proposal\n".to_string())].into(),
            viewed: Default::default(),
        };
        {
            let journal = Arc::new(Journal::open(&path).unwrap());
            let writer = Arc::new(crate::Writer::spawn(journal.clone(), Box::new(|_, r| assert!(r.is_ok()))).unwrap());
            let hook = writer.persistence("/w");
            hook(Persist::Save(round_two.clone()));
            let mut marked = round_two.review.clone();
            marked.viewed.insert("src/a.ts".into(), "hash-of-proposal".into());
            hook(Persist::Review { id: "pa-x-2".into(), state: marked });
            writer.flush();
        }
        // A new program opening the same file reads back the round whole, with the mark.
        let j = Journal::open(&path).unwrap();
        let kept = j.pending("/w").unwrap();
        let mut expected = round_two.review.clone();
        expected.viewed.insert("src/a.ts".into(), "hash-of-proposal".into());
        assert_eq!(kept[0].review, expected);
        // A state this build cannot read back is dropped, never the action.
        j.lock()
            .execute("UPDATE pending_actions SET review = '{\"round\": 7}' WHERE action_id = 'pa-x-2'", [])
            .unwrap();
        let kept = j.pending("/w").unwrap();
        assert_eq!(kept[0].review, resolve_engine::ReviewState::default());
        assert!(matches!(kept[0].body, StoredBody::ChangeSet { .. }), "the action itself is intact");
    }

    #[test]
    fn a_journal_at_the_previous_version_gains_the_pending_tables_and_keeps_its_decisions() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("j.sqlite3");
        {
            let mut conn = Connection::open(&path).unwrap();
            let tx = conn.transaction().unwrap();
            for step in &crate::MIGRATIONS[..crate::MIGRATIONS.len() - 1] {
                tx.execute_batch(step).unwrap();
            }
            tx.pragma_update(None, "user_version", crate::SCHEMA_VERSION - 1).unwrap();
            tx.execute(
                "INSERT INTO decisions (workspace, at_ms, actor, action, action_id, label, source_tool_name, reason, is_error, text)
                 VALUES ('/w', 1, 'person', 'apply', 'old-1', 'l', 's', 'r', 0, 't')",
                [],
            )
            .unwrap();
            tx.commit().unwrap();
        }
        let j = Journal::open(&path).unwrap();
        assert_eq!(j.schema_version().unwrap(), crate::SCHEMA_VERSION);
        assert_eq!(j.decisions("/w", 10).unwrap().len(), 1, "the decision is kept");
        j.save_pending("/w", &orphan("pa-x-1")).unwrap();
        assert_eq!(j.pending("/w").unwrap().len(), 1);
    }
}
