//! Whole workflows across crates, on real temp dirs. Add a scenario here when it crosses
//! crate boundaries (a tool's preview resolved through the session, two actions touching
//! the same files, failures injected midway); a crate's own behaviour goes in its crate.

use std::fs;
use std::path::Path;

use resolve_engine::{fault, Actor, ChangeSet, CustomToolPendingAction, PendingActionStore, ResolvePolicy, Session};
use serde_json::json;

fn session(dir: &Path) -> Session {
    Session::with_store(dir, ResolvePolicy::Agent, PendingActionStore::with_id_prefix("pa-")).unwrap()
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

#[tokio::test]
async fn write_failing_midway_rolls_back_every_file_and_keeps_the_action() {
    let dir = tempfile::tempdir().unwrap();
    for (name, body) in [("a.txt", "A\n"), ("b.txt", "B\n"), ("c.txt", "C\n")] {
        fs::write(dir.path().join(name), body).unwrap();
    }
    let s = session(dir.path());
    let before = snapshot(s.workspace().root());
    let mut cs = ChangeSet::new();
    cs.edit("a.txt", b"A\n".to_vec(), b"A2\n".to_vec()).edit("b.txt", b"B\n".to_vec(), b"B2\n".to_vec()).edit(
        "c.txt",
        b"C\n".to_vec(),
        b"C2\n".to_vec(),
    );
    s.api()
        .push_pending_action(CustomToolPendingAction::from_change_set(
            "Edit: 3 files",
            cs,
            s.workspace().clone(),
            "Wrote 3 files.",
        ))
        .unwrap();
    // a.txt is replaced first; the write of b.txt fails.
    fault::fail_once_at(s.workspace().root().join("b.txt"));
    let r = s.call(Actor::Person, "resolve", json!({"action": "apply", "reason": "go"})).await;
    assert!(r.is_error, "the apply must fail: {}", r.text_content());
    assert!(r.text_content().contains("Every file was restored"), "{}", r.text_content());
    assert_eq!(snapshot(s.workspace().root()), before, "every file as it was, no temporaries or backups left");
    let top = s.store().peek().expect("the action stays on the stack");
    assert_eq!(top.status.as_str(), "failed");
    // Once the cause is gone, the same action applies.
    let r = s.call(Actor::Person, "resolve", json!({"action": "apply", "reason": "again"})).await;
    assert!(!r.is_error, "{}", r.text_content());
    assert_eq!(fs::read_to_string(dir.path().join("c.txt")).unwrap(), "C2\n");
}

#[tokio::test]
async fn rename_failing_midway_puts_every_name_back() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    for n in ["one", "two", "three"] {
        fs::write(root.join(n), n).unwrap();
    }
    let ws = resolve_engine::Workspace::open(&root).unwrap();
    let before = snapshot(&root);
    let mut cs = ChangeSet::new();
    for n in ["one", "two", "three"] {
        let h = resolve_engine::ContentHash::of_entry(&root.join(n), resolve_engine::EntryKind::File).unwrap();
        cs.rename(n, format!("{n}.txt"), resolve_engine::EntryKind::File, h);
    }
    fault::fail_once_at(root.join("three.txt"));
    let err = cs.apply(&ws).unwrap_err();
    assert!(err.to_string().contains("three.txt"), "{err}");
    assert_eq!(snapshot(&root), before);
}

/// A session on `dir` with the two built-in tools that write, as the app and `rdesk` load them.
fn session_with_tools(dir: &Path) -> Session {
    let s = session(dir);
    s.load(resolve_tool_ast_edit::factory()).unwrap();
    s.load(resolve_tool_batch_rename::factory()).unwrap();
    s
}

async fn rewrite(s: &Session, out: &str) -> String {
    let r = s
        .call(
            Actor::Agent,
            "ast_edit",
            json!({"ops": [{"pat": "console.log($A)", "out": out}], "lang": "ts", "path": "src"}),
        )
        .await;
    assert!(!r.is_error, "{}", r.text_content());
    r.details.unwrap()["action_id"].as_str().unwrap().to_string()
}

async fn apply(s: &Session, reason: &str) -> resolve_engine::ToolResult {
    s.call(Actor::Person, "resolve", json!({"action": "apply", "reason": reason})).await
}

#[tokio::test]
async fn two_previews_of_one_file_the_second_goes_stale_once_the_first_is_applied() {
    let dir = tempfile::tempdir().unwrap();
    fs::create_dir_all(dir.path().join("src")).unwrap();
    fs::write(dir.path().join("src/a.ts"), "console.log(1);\n").unwrap();
    let s = session_with_tools(dir.path());
    let below = rewrite(&s, "logger.info($A)").await;
    let top = rewrite(&s, "logger.debug($A)").await;
    assert_eq!(s.store().peek().unwrap().id, top, "the later preview is on top");

    let applied = apply(&s, "debug level").await;
    assert!(!applied.is_error, "{}", applied.text_content());
    assert_eq!(fs::read_to_string(dir.path().join("src/a.ts")).unwrap(), "logger.debug(1);\n");

    let before = snapshot(dir.path());
    let stale = apply(&s, "info level too").await;
    assert!(stale.is_error);
    assert_eq!(stale.error_code.as_deref(), Some("stale"));
    assert!(stale.text_content().contains("src/a.ts (content changed)"), "{}", stale.text_content());
    assert_eq!(snapshot(dir.path()), before, "a stale preview writes nothing");
    let info = s.store().peek().unwrap();
    assert_eq!(info.id, below, "the stale action stays on the stack");
    assert!(
        matches!(&info.status, resolve_engine::ActionStatus::Stale { files, .. } if files == &vec!["src/a.ts".to_string()]),
        "{:?}",
        info.status
    );
    let history = s.history();
    assert_eq!((history.len(), history[0].is_error, history[1].is_error), (2, true, false));
}

#[tokio::test]
async fn a_rename_and_a_rewrite_of_one_file_whichever_is_applied_first_makes_the_other_stale() {
    let dir = tempfile::tempdir().unwrap();
    fs::create_dir_all(dir.path().join("src")).unwrap();
    fs::write(dir.path().join("src/a.ts"), "console.log(1);\n").unwrap();
    let s = session_with_tools(dir.path());
    // The rewrite first, the rename on top: applying the rename leaves the rewrite's file missing.
    rewrite(&s, "logger.info($A)").await;
    let r =
        s.call(Actor::Agent, "batch_rename_preview", json!({"files": "src/*.ts", "find": "^a", "replace": "b"})).await;
    assert!(!r.is_error, "{}", r.text_content());
    let info = s.store().peek().unwrap();
    assert_eq!((info.kind, info.counts.renames), (resolve_engine::ActionKind::Rename, 1));
    assert_eq!(apply(&s, "new name").await.text_content(), "Renamed 1 file.");
    let stale = apply(&s, "rewrite").await;
    assert_eq!(stale.error_code.as_deref(), Some("stale"), "{}", stale.text_content());
    assert!(stale.text_content().contains("src/a.ts (deleted)"), "{}", stale.text_content());
    assert_eq!(fs::read_to_string(dir.path().join("src/b.ts")).unwrap(), "console.log(1);\n", "renamed, not rewritten");

    // The other order: the rename first, the rewrite on top: the rewrite changes the content
    // the rename pinned.
    let dir = tempfile::tempdir().unwrap();
    fs::create_dir_all(dir.path().join("src")).unwrap();
    fs::write(dir.path().join("src/a.ts"), "console.log(1);\n").unwrap();
    let s = session_with_tools(dir.path());
    s.call(Actor::Agent, "batch_rename_preview", json!({"files": "src/*.ts", "find": "^a", "replace": "b"})).await;
    rewrite(&s, "logger.info($A)").await;
    assert!(!apply(&s, "rewrite").await.is_error);
    let stale = apply(&s, "new name").await;
    assert_eq!(stale.error_code.as_deref(), Some("stale"), "{}", stale.text_content());
    assert!(stale.text_content().contains("src/a.ts (content changed)"), "{}", stale.text_content());
    assert_eq!(fs::read_to_string(dir.path().join("src/a.ts")).unwrap(), "logger.info(1);\n", "rewritten, not renamed");
    assert!(!dir.path().join("src/b.ts").exists());
}
