//! Pending actions survive a restart, and a restart never applies them: each step runs in
//! a real child process (`persist-probe`, which opens the workspace and the journal as the
//! app does), on a real temp folder and a real SQLite file.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

const SOURCE: &str = "export function f(x: number) {\n  console.log(x);\n  return x;\n}\n";

fn workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("src")).unwrap();
    std::fs::write(dir.path().join("src/a.ts"), SOURCE).unwrap();
    std::fs::create_dir_all(dir.path().join("photos")).unwrap();
    std::fs::write(dir.path().join("photos/img_1.PNG"), b"\x89PNG one").unwrap();
    std::fs::write(dir.path().join("photos/img_2.PNG"), b"\x89PNG two").unwrap();
    dir
}

/// Runs the probe; returns the queue it printed (top first) and its `RESULT` lines.
fn probe(ws: &Path, journal: &Path, steps: &[&str]) -> (Vec<Value>, Vec<String>) {
    let out = Command::new(env!("CARGO_BIN_EXE_persist-probe"))
        .arg(ws)
        .arg(journal)
        .args(steps)
        .output()
        .expect("the probe runs");
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(out.status.success(), "persist-probe {steps:?} failed: {stderr}");
    let queue: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!("the probe prints the queue as JSON ({e}): {}", String::from_utf8_lossy(&out.stdout))
    });
    let results = stderr.lines().filter_map(|l| l.strip_prefix("RESULT ")).map(str::to_string).collect();
    (queue.as_array().cloned().unwrap_or_default(), results)
}

fn field(queue: &[Value], key: &str) -> Vec<String> {
    queue.iter().map(|a| a[key].as_str().unwrap_or_default().to_string()).collect()
}

#[test]
fn pending_actions_come_back_after_a_restart_in_order_and_apply_the_previewed_bytes() {
    let ws = workspace();
    let data = tempfile::tempdir().unwrap();
    let journal = data.path().join("journal.sqlite3");

    let (pushed, _) = probe(ws.path(), &journal, &["edit", "rename", "closure"]);
    assert_eq!(
        field(&pushed, "label"),
        vec!["Mail: notify the team", "Batch rename: 2 files", "AST Edit: 1 replacement in 1 file"]
    );
    assert_eq!(std::fs::read_to_string(ws.path().join("src/a.ts")).unwrap(), SOURCE, "a preview writes nothing");

    // A new process: the same queue, nothing applied.
    let (restored, _) = probe(ws.path(), &journal, &[]);
    assert_eq!(field(&restored, "id"), field(&pushed, "id"), "same ids, same LIFO order");
    assert_eq!(field(&restored, "label"), field(&pushed, "label"));
    assert_eq!(field(&restored, "status"), vec!["orphaned", "pending", "pending"]);
    assert!(restored[0]["message"].as_str().unwrap().starts_with("Orphaned: can only be discarded"));
    assert_eq!(std::fs::read_to_string(ws.path().join("src/a.ts")).unwrap(), SOURCE, "opening applies nothing");
    assert!(ws.path().join("photos/img_1.PNG").exists(), "opening renames nothing");

    // Another process: the orphan cannot be applied, only discarded; then apply the rest.
    let (after, results) = probe(ws.path(), &journal, &["apply", "discard", "apply", "apply"]);
    assert!(results[0].starts_with("error Cannot apply \"Mail: notify the team\""), "{results:?}");
    assert!(results[1].starts_with("ok Discarded: Mail: notify the team."), "{results:?}");
    assert_eq!(results[2], "ok Renamed 2 files.", "the same result text as a fresh preview");
    assert_eq!(results[3], "ok Applied 1 replacement in 1 file.");
    assert!(after.is_empty(), "{after:?}");
    assert_eq!(
        std::fs::read_to_string(ws.path().join("src/a.ts")).unwrap(),
        SOURCE.replace("console.log(x)", "logger.debug(x)"),
        "exactly the previewed bytes"
    );
    assert_eq!(std::fs::read(ws.path().join("photos/photo-1.png")).unwrap(), b"\x89PNG one");
    assert_eq!(std::fs::read(ws.path().join("photos/photo-2.png")).unwrap(), b"\x89PNG two");

    // Decided actions are forgotten: a later start has an empty queue. The journal kept
    // every push and every decision.
    let (empty, _) = probe(ws.path(), &journal, &[]);
    assert!(empty.is_empty(), "{empty:?}");
    let j = resolve_journal::Journal::open(&journal).unwrap();
    let root = std::fs::canonicalize(ws.path()).unwrap().display().to_string();
    let pushes = j.pushes(&root, 10).unwrap();
    assert_eq!(pushes.len(), 3, "one row per push, none for a restore");
    let edit = pushes.iter().find(|p| p.source_tool_name == "ast_edit").unwrap();
    assert_eq!(edit.tool_call.as_ref().unwrap().tool, "ast_edit", "the tool call is recorded");
    assert_eq!(edit.files[0]["path"], "src/a.ts");
    assert_eq!(edit.files[0]["previewed_hash"].as_str().unwrap().len(), 64, "with the previewed hash");
    let decisions = j.decisions(&root, 10).unwrap();
    assert_eq!(decisions.len(), 3, "the discard and the two applies (the refusal is not a decision)");
}

#[test]
fn a_file_edited_while_the_desk_was_closed_makes_the_restored_action_stale() {
    let ws = workspace();
    let data = tempfile::tempdir().unwrap();
    let journal = data.path().join("journal.sqlite3");
    probe(ws.path(), &journal, &["edit"]);
    let edited = SOURCE.replace("return x", "return x + 1");
    std::fs::write(ws.path().join("src/a.ts"), &edited).unwrap();

    let (restored, results) = probe(ws.path(), &journal, &["apply"]);
    assert_eq!(field(&restored, "status"), vec!["stale"]);
    assert!(
        restored[0]["message"].as_str().unwrap().contains("src/a.ts (content changed)"),
        "the message names the file: {restored:?}"
    );
    assert!(results[0].starts_with("error Preview is stale"), "{results:?}");
    assert_eq!(std::fs::read_to_string(ws.path().join("src/a.ts")).unwrap(), edited, "the edit is kept");
}

#[test]
fn new_pushes_after_a_restart_never_reuse_a_restored_id() {
    let ws = workspace();
    let data = tempfile::tempdir().unwrap();
    let journal = data.path().join("journal.sqlite3");
    let (first, _) = probe(ws.path(), &journal, &["closure"]);
    let (both, _) = probe(ws.path(), &journal, &["closure"]);
    assert_eq!(both.len(), 2);
    assert_ne!(both[0]["id"], both[1]["id"]);
    assert_eq!(both[1]["id"], first[0]["id"], "the restored one keeps its id, below the new one");
    let (again, _) = probe(ws.path(), &journal, &[]);
    assert_eq!(field(&again, "id"), field(&both, "id"), "both are kept, in order");
}
