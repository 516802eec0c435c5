use super::*;
use crate::model::*;
use std::path::{Path, PathBuf};
use std::sync::{mpsc, Mutex};
use std::time::Duration;

use resolve_engine::{Actor, PartialApply, Recovery, ResolveAction, Review};
use rusqlite::Connection;

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
        review: None,
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
        left_out_hunks: Vec::new(),
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
fn a_review_is_recorded_with_its_decision_and_read_back() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("j.sqlite3");
    let mut d = decision("/w", 8, "a3");
    d.action = ResolveAction::Discard;
    d.review = Some(Review {
        request_changes: true,
        comments: vec![resolve_engine::Comment {
            id: "c1".into(),
            path: "a.ts".into(),
            side: resolve_engine::CommentSide::Old,
            start_line: 2,
            end_line: 3,
            quote: "two\nthree".into(),
            text: "keep these".into(),
            replacement_id: None,
        }],
    });
    Journal::open(&path).unwrap().record(&d).unwrap();
    let j = Journal::open(&path).unwrap();
    assert_eq!(j.decisions("/w", 10).unwrap(), vec![d.clone()], "the review survives reopening");
    let merged = j.history("/w", &[], 10).unwrap();
    assert!(merged[0].entry.details.requests_changes());
    assert_eq!(Decision::of("/w", &d.to_history()).review, d.review, "and a session's entry keeps it too");
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
    let newer = SCHEMA_VERSION + 1;
    Connection::open(&path).unwrap().pragma_update(None, "user_version", newer).unwrap();
    let err = Journal::open(&path).err().expect("a newer schema is refused");
    let text = err.to_string();
    assert!(matches!(err, JournalError::TooNew { found, known: SCHEMA_VERSION, .. } if found == newer), "{err:?}");
    assert!(text.contains(&path.display().to_string()), "names the file: {text}");
    let known = format!("(version {SCHEMA_VERSION})");
    assert!(text.contains(&format!("schema version {newer}")) && text.contains(&known), "names both versions: {text}");
    assert!(text.contains("Update Resolve Desk, or move"), "says what to do: {text}");
    let version: i64 = Connection::open(&path).unwrap().pragma_query_value(None, "user_version", |r| r.get(0)).unwrap();
    assert_eq!(version, newer, "the newer journal is left as it is");
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
    let mode: String = Connection::open(&path).unwrap().pragma_query_value(None, "journal_mode", |r| r.get(0)).unwrap();
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
    let unknown = Recovery { context: None, started_at: started_at - chrono::Duration::seconds(1), ..recovery.clone() };
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
