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
