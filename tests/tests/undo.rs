//! Undo and redo of applied actions with the real tools, through the session, on real temp
//! folders: every byte comes back, a file changed since the apply refuses the undo (nothing
//! written), a redo writes the applied bytes again, and each undo is a decision of its own.

use std::fs;
use std::path::Path;
use std::sync::Arc;

use resolve_engine::{
    Actor, PendingActionStore, ResolveAction, ResolvePolicy, Session, TranscriptEntry, Undo, UndoOutcome, UndoRecord,
};
use serde_json::json;

fn session_with_tools(dir: &Path) -> Session {
    let s = Session::with_store(dir, ResolvePolicy::Agent, PendingActionStore::with_id_prefix("pa-")).unwrap();
    s.load(resolve_tool_ast_edit::factory()).unwrap();
    s.load(resolve_tool_batch_rename::factory()).unwrap();
    s
}

fn snapshot(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push((p.strip_prefix(dir).unwrap().display().to_string(), fs::read(&p).unwrap()));
            }
        }
    }
    out.sort();
    out
}

/// Applies the top action as a person; returns its id and the undo record the transcript got.
async fn apply_top(s: &Session) -> (String, String, Arc<UndoRecord>) {
    let top = s.store().peek().expect("an action to apply");
    let r = s.call(Actor::Person, "resolve", json!({"action": "apply", "reason": "looks right"})).await;
    assert!(!r.is_error, "{}", r.text_content());
    let entry: TranscriptEntry = s.transcript().pop().unwrap();
    (top.id, top.label, entry.undo.expect("an applied change set has an undo record"))
}

fn undo(direction: ResolveAction, id: &str, label: &str, record: &UndoRecord, reason: &str) -> Undo {
    Undo {
        direction,
        of_action_id: id.into(),
        label: label.into(),
        source_tool_name: "test".into(),
        record: record.clone(),
        reason: reason.into(),
    }
}

fn done(o: UndoOutcome) -> Arc<UndoRecord> {
    match o {
        UndoOutcome::Done { record, .. } => record,
        UndoOutcome::Refused { message, .. } => panic!("refused: {message}"),
    }
}

#[tokio::test]
async fn undo_of_an_ast_edit_restores_every_byte_and_redo_writes_it_again() {
    let dir = tempfile::tempdir().unwrap();
    fs::create_dir_all(dir.path().join("src/lib")).unwrap();
    fs::write(dir.path().join("src/a.ts"), "const a = 1;\nconsole.log(a);\r\n// tail without newline").unwrap();
    fs::write(dir.path().join("src/lib/b.ts"), "console.log(\"b\");\nconsole.log(2, 3);\n").unwrap();
    fs::write(dir.path().join("src/c.ts"), "untouched();\n").unwrap();
    let s = session_with_tools(dir.path());
    let before = snapshot(dir.path());
    let r = s
        .call(
            Actor::Agent,
            "ast_edit",
            json!({"ops": [{"pat": "console.log($$$A)", "out": "logger.info($$$A)"}], "lang": "ts", "path": "src"}),
        )
        .await;
    assert!(!r.is_error, "{}", r.text_content());
    let (id, label, record) = apply_top(&s).await;
    let applied = snapshot(dir.path());
    assert_ne!(applied, before);
    assert_eq!(
        fs::read_to_string(dir.path().join("src/lib/b.ts")).unwrap(),
        "logger.info(\"b\");\nlogger.info(2, 3);\n"
    );

    let redo = done(s.undo(Actor::Person, undo(ResolveAction::Undo, &id, &label, &record, "wrong logger")).await);
    assert_eq!(snapshot(dir.path()), before, "every byte is back, nothing left beside the files");

    // The undo is a decision of its own, with its reason, in the history.
    let h = &s.history()[0];
    assert_eq!(
        (h.details.action, h.details.reason.as_str(), h.actor),
        (ResolveAction::Undo, "wrong logger", Actor::Person)
    );
    assert!(h.header.starts_with("Undo: "), "{}", h.header);

    let undo_again =
        done(s.undo(Actor::Person, undo(ResolveAction::Redo, &id, &label, &redo, "it was right after all")).await);
    assert_eq!(snapshot(dir.path()), applied, "the redo writes the applied bytes again");
    assert_eq!(s.history()[0].details.action, ResolveAction::Redo);

    // And the redo can be undone again.
    done(s.undo(Actor::Person, undo(ResolveAction::Undo, &id, &label, &undo_again, "no")).await);
    assert_eq!(snapshot(dir.path()), before);
}

#[tokio::test]
async fn undo_of_a_batch_rename_with_a_swap_puts_every_name_back() {
    let dir = tempfile::tempdir().unwrap();
    fs::create_dir_all(dir.path().join("photos")).unwrap();
    for (name, body) in [("x_1", "X"), ("1_x", "ONE"), ("a_b", "AB")] {
        fs::write(dir.path().join("photos").join(name), body).unwrap();
    }
    let s = session_with_tools(dir.path());
    let before = snapshot(dir.path());
    let r = s
        .call(
            Actor::Agent,
            "batch_rename_preview",
            json!({"files": "photos/*", "find": "^(\\w)_(\\w)$", "replace": "${2}_${1}"}),
        )
        .await;
    assert!(!r.is_error, "{}", r.text_content());
    let (id, label, record) = apply_top(&s).await;
    let photos = |p: &str| fs::read_to_string(dir.path().join("photos").join(p)).unwrap();
    assert_eq!((photos("1_x"), photos("x_1"), photos("b_a")), ("X".into(), "ONE".into(), "AB".into()), "swapped");
    assert_eq!(record.content_bytes(), 0, "a rename keeps no file contents");

    let redo = done(s.undo(Actor::Person, undo(ResolveAction::Undo, &id, &label, &record, "keep the names")).await);
    assert_eq!(snapshot(dir.path()), before, "every name and every byte back");
    done(s.undo(Actor::Person, undo(ResolveAction::Redo, &id, &label, &redo, "rename after all")).await);
    assert_eq!((photos("1_x"), photos("x_1"), photos("b_a")), ("X".into(), "ONE".into(), "AB".into()));
}

#[tokio::test]
async fn undo_is_refused_when_a_file_changed_since_the_apply_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    fs::create_dir_all(dir.path().join("src")).unwrap();
    fs::write(dir.path().join("src/a.ts"), "console.log(1);\n").unwrap();
    fs::write(dir.path().join("src/b.ts"), "console.log(2);\n").unwrap();
    let s = session_with_tools(dir.path());
    let r = s
        .call(
            Actor::Agent,
            "ast_edit",
            json!({"ops": [{"pat": "console.log($A)", "out": "log($A)"}], "lang": "ts", "path": "src"}),
        )
        .await;
    assert!(!r.is_error, "{}", r.text_content());
    let (id, label, record) = apply_top(&s).await;
    fs::write(dir.path().join("src/b.ts"), "log(2); // edited in an editor\n").unwrap();
    let edited = snapshot(dir.path());
    let decisions = s.history().len();

    match s.undo(Actor::Person, undo(ResolveAction::Undo, &id, &label, &record, "revert")).await {
        UndoOutcome::Refused { message, changed } => {
            assert_eq!(changed, vec!["src/b.ts".to_string()]);
            assert!(message.contains("1 file changed since the apply: src/b.ts (content changed)"), "{message}");
            assert!(message.contains("Nothing was written"), "{message}");
        }
        UndoOutcome::Done { .. } => panic!("an undo over an edited file must be refused"),
    }
    assert_eq!(snapshot(dir.path()), edited, "nothing written, src/a.ts not reverted alone");
    assert_eq!(s.history().len(), decisions, "a refused undo is not a decision");

    // A deleted file is named too; a blank reason is refused before anything is read.
    fs::remove_file(dir.path().join("src/a.ts")).unwrap();
    match s.undo(Actor::Person, undo(ResolveAction::Undo, &id, &label, &record, "revert")).await {
        UndoOutcome::Refused { changed, message } => {
            assert_eq!(changed, vec!["src/a.ts".to_string(), "src/b.ts".to_string()], "{message}");
            assert!(message.contains("src/a.ts (deleted)"), "{message}");
        }
        UndoOutcome::Done { .. } => panic!("refused"),
    }
    match s.undo(Actor::Person, undo(ResolveAction::Undo, &id, &label, &record, "  ")).await {
        UndoOutcome::Refused { message, .. } => assert!(message.starts_with("A reason is required"), "{message}"),
        UndoOutcome::Done { .. } => panic!("a blank reason is refused"),
    }
}

#[tokio::test]
async fn undo_of_creates_and_deletes_and_a_file_that_appeared_refuses() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("old.txt"), "old bytes\n").unwrap();
    let s = session_with_tools(dir.path());
    let before = snapshot(dir.path());
    let mut cs = resolve_engine::ChangeSet::new();
    cs.create("new/n.txt", b"new\n".to_vec()).delete("old.txt", b"old bytes\n".to_vec());
    s.api()
        .push_pending_action(resolve_engine::CustomToolPendingAction::from_change_set(
            "Files: create and delete",
            cs,
            s.workspace().clone(),
            "Done.",
        ))
        .unwrap();
    let (id, label, record) = apply_top(&s).await;
    assert!(!dir.path().join("old.txt").exists());
    // Someone recreates old.txt: the undo would overwrite it, so it is refused.
    fs::write(dir.path().join("old.txt"), "mine\n").unwrap();
    match s.undo(Actor::Person, undo(ResolveAction::Undo, &id, &label, &record, "revert")).await {
        UndoOutcome::Refused { message, .. } => {
            assert!(message.contains("old.txt (a file appeared there)"), "{message}")
        }
        UndoOutcome::Done { .. } => panic!("refused"),
    }
    assert_eq!(fs::read_to_string(dir.path().join("old.txt")).unwrap(), "mine\n");
    fs::remove_file(dir.path().join("old.txt")).unwrap();
    done(s.undo(Actor::Person, undo(ResolveAction::Undo, &id, &label, &record, "revert")).await);
    assert_eq!(snapshot(dir.path()), before);
}
