//! Partial apply (`resolve` with `leave_out`) on real temp dirs: exactly the kept part is
//! written through the ordinary apply, left-out files are never touched, bad selections are
//! refused with the action still pending, the undo data covers exactly what was written.

use std::fs;
use std::path::Path;
use std::sync::Arc;

use resolve_engine::*;
use serde_json::{json, Value};

fn session() -> (tempfile::TempDir, Session) {
    let dir = tempfile::tempdir().unwrap();
    let s = Session::with_store(dir.path(), ResolvePolicy::Agent, PendingActionStore::with_id_prefix("p")).unwrap();
    (dir, s)
}

fn write(root: &Path, rel: &str, text: &str) {
    let p = root.join(rel);
    fs::create_dir_all(p.parent().unwrap()).unwrap();
    fs::write(p, text).unwrap();
}

fn read(root: &Path, rel: &str) -> String {
    fs::read_to_string(root.join(rel)).unwrap()
}

/// Replacements of `old` → `new` at each occurrence in `before` (ids in position order).
fn replacements(before: &str, old: &str, new: &str) -> Replacements {
    let mut r = Replacements::new();
    for (start, _) in before.match_indices(old) {
        let line = before[..start].matches('\n').count() as u32 + 1;
        r.push(line, start, start + old.len(), new.as_bytes());
    }
    r
}

/// Pushes an action editing `files` (`log(` → `info(` everywhere), with replacements when
/// `with_replacements`.
fn push_edits(s: &Session, files: &[(&str, &str)], with_replacements: bool) -> ActionId {
    let mut cs = ChangeSet::new();
    for (path, before) in files {
        let after = before.replace("log(", "info(");
        cs.edit(*path, before.as_bytes().to_vec(), after.into_bytes());
        if with_replacements {
            assert!(cs.set_replacements(path, replacements(before, "log(", "info(")));
        }
    }
    let label = format!("AST Edit: edits in {} files", files.len());
    let action = CustomToolPendingAction::from_change_set(label, cs, s.workspace().clone(), "Applied every edit.")
        .with_source_tool_name("ast_edit");
    s.api().push_pending_action(action).unwrap()
}

async fn apply(s: &Session, leave_out: Value) -> ToolResult {
    s.call(Actor::Agent, "resolve", json!({"action": "apply", "reason": "keep the rest", "leave_out": leave_out})).await
}

const A: &str = "log(1);\nlog(2);\n";
const B: &str = "log(3);\n";
const C: &str = "x();\nlog(4);\nlog(5);\nlog(6);\n";

fn three(root: &Path) -> [(&'static str, &'static str); 3] {
    let files = [("a.ts", A), ("b.ts", B), ("src/c.ts", C)];
    for (p, t) in files {
        write(root, p, t);
    }
    files
}

#[tokio::test]
async fn leaving_out_files_writes_exactly_the_rest_and_says_what_was_left_out() {
    let (d, s) = session();
    let files = three(d.path());
    let id = push_edits(&s, &files, false);
    let r = apply(&s, json!({"files": ["b.ts"]})).await;
    assert!(!r.is_error, "{}", r.text_content());
    assert_eq!(r.text_content(), "Applied: AST Edit: edits in 3 files.\nLeft out 1 of 3 files: b.ts");
    assert_eq!(read(d.path(), "a.ts"), "info(1);\ninfo(2);\n");
    assert_eq!(read(d.path(), "src/c.ts"), "x();\ninfo(4);\ninfo(5);\ninfo(6);\n");
    assert_eq!(read(d.path(), "b.ts"), B, "a left-out file is untouched");
    assert!(!s.store().has_pending(), "the rest is discarded in the same decision");
    let details = ResolveDetails::of_result(&r).unwrap();
    assert_eq!(details.action_id, id);
    let partial = details.partial.expect("a partial apply is recorded in the details");
    assert_eq!(partial.history_text(), "applied 2 of 3 files");
    assert_eq!(partial.left_out_files, vec!["b.ts"]);
}

#[tokio::test]
async fn a_left_out_file_that_changed_on_disk_does_not_block_the_rest() {
    let (d, s) = session();
    let files = three(d.path());
    push_edits(&s, &files, false);
    write(d.path(), "b.ts", "edited by the person meanwhile\n");
    let r = apply(&s, json!({"files": ["b.ts"]})).await;
    assert!(!r.is_error, "{}", r.text_content());
    assert_eq!(read(d.path(), "a.ts"), "info(1);\ninfo(2);\n");
    assert_eq!(read(d.path(), "b.ts"), "edited by the person meanwhile\n");
}

#[tokio::test]
async fn a_kept_file_that_changed_refuses_the_whole_part_and_keeps_the_action() {
    let (d, s) = session();
    let files = three(d.path());
    let id = push_edits(&s, &files, false);
    write(d.path(), "a.ts", "changed\n");
    let r = apply(&s, json!({"files": ["b.ts"]})).await;
    assert!(r.is_error);
    assert!(
        r.text_content().starts_with("Preview is stale: 1 file changed on disk since the preview: a.ts"),
        "{}",
        r.text_content()
    );
    assert_eq!(read(d.path(), "src/c.ts"), C, "nothing is written");
    assert_eq!(s.store().info(&id).unwrap().status.as_str(), "stale");
}

#[tokio::test]
async fn leaving_out_single_replacements_rebuilds_the_file_from_the_kept_ones() {
    let (d, s) = session();
    let files = three(d.path());
    push_edits(&s, &files, true);
    let r = apply(&s, json!({"replacements": {"src/c.ts": [2]}, "files": ["a.ts"]})).await;
    assert!(!r.is_error, "{}", r.text_content());
    assert_eq!(
        r.text_content(),
        "Applied: AST Edit: edits in 3 files.\nLeft out 1 of 3 files: a.ts\nLeft out 1 of 3 replacements in src/c.ts"
    );
    assert_eq!(read(d.path(), "src/c.ts"), "x();\ninfo(4);\nlog(5);\ninfo(6);\n");
    assert_eq!(read(d.path(), "b.ts"), "info(3);\n");
    assert_eq!(read(d.path(), "a.ts"), A);
    let partial = ResolveDetails::of_result(&r).unwrap().partial.unwrap();
    assert_eq!(partial.replacements, Some((6, 3)));
    assert_eq!(partial.history_text(), "applied 3 of 6 replacements in 2 of 3 files");
}

#[tokio::test]
async fn leaving_out_every_replacement_of_a_file_leaves_the_file_out() {
    let (d, s) = session();
    let files = three(d.path());
    push_edits(&s, &files, true);
    let r = apply(&s, json!({"replacements": {"a.ts": [1, 2]}})).await;
    assert!(!r.is_error, "{}", r.text_content());
    assert_eq!(r.text_content(), "Applied: AST Edit: edits in 3 files.\nLeft out 1 of 3 files: a.ts");
    assert_eq!(read(d.path(), "a.ts"), A);
}

#[tokio::test]
async fn an_empty_leave_out_is_exactly_a_full_apply() {
    let (d, s) = session();
    let files = three(d.path());
    push_edits(&s, &files, true);
    let r = apply(&s, json!({"files": [], "replacements": {}})).await;
    assert_eq!(r.text_content(), "Applied every edit.");
    assert!(ResolveDetails::of_result(&r).unwrap().partial.is_none());
    assert_eq!(read(d.path(), "b.ts"), "info(3);\n");
}

#[tokio::test]
async fn bad_selections_are_refused_naming_the_value_and_the_action_stays_pending() {
    let (d, s) = session();
    let files = three(d.path());
    let id = push_edits(&s, &files, true);
    let cases = [
        (json!({"files": ["nope.ts"]}), "`leave_out.files` names \"nope.ts\", which is not a file of this action"),
        (
            json!({"replacements": {"src/c.ts": [4]}}),
            "`leave_out.replacements` names replacement 4 of \"src/c.ts\", which has replacements 1 to 3",
        ),
        (
            json!({"replacements": {"zz.ts": [1]}}),
            "`leave_out.replacements` names \"zz.ts\", which is not a file of this action",
        ),
        (
            json!({"replacements": {"a.ts": [0]}}),
            "`leave_out.replacements[\"a.ts\"]` must be a list of replacement ids (whole numbers from 1), got 0.",
        ),
        (
            json!({"files": ["a.ts", "b.ts", "src/c.ts"]}),
            "`leave_out` leaves out every change of this action, so nothing would be applied; discard it instead",
        ),
        (json!({"files": "a.ts"}), "`leave_out.files` must be a list of workspace-relative paths, got \"a.ts\"."),
        (json!({"file": ["a.ts"]}), "Unknown key `file` in `leave_out` of `resolve`"),
        (json!(["a.ts"]), "`leave_out` must be an object like"),
    ];
    for (leave_out, want) in cases {
        let r = apply(&s, leave_out.clone()).await;
        assert!(r.is_error, "{leave_out} must be refused");
        assert!(r.text_content().starts_with(want), "{leave_out}: {}", r.text_content());
        assert_eq!(s.store().top().unwrap().id, id, "the action stays pending");
        assert_eq!(s.store().info(&id).unwrap().status.as_str(), "pending", "its status is unchanged");
    }
    let r = s
        .call(Actor::Agent, "resolve", json!({"action": "discard", "reason": "no", "leave_out": {"files": ["a.ts"]}}))
        .await;
    assert!(r.is_error);
    assert!(r.text_content().starts_with("`leave_out` is only for \"apply\""), "{}", r.text_content());
    for (p, t) in files {
        assert_eq!(read(d.path(), p), t, "nothing was written by a refused selection");
    }
}

#[tokio::test]
async fn single_replacements_of_an_edit_without_them_are_refused() {
    let (d, s) = session();
    let files = three(d.path());
    push_edits(&s, &files, false);
    let r = apply(&s, json!({"replacements": {"a.ts": [1]}})).await;
    assert!(r.is_error);
    assert!(r.text_content().starts_with("Single replacements of \"a.ts\" cannot be left out"), "{}", r.text_content());
}

#[tokio::test]
async fn leave_out_on_an_action_without_a_file_list_is_refused() {
    let (_d, s) = session();
    let id = s
        .api()
        .push_pending_action(CustomToolPendingAction::new("Send the email", |_| async { Ok(ToolResult::empty()) }))
        .unwrap();
    let r = apply(&s, json!({"files": ["a.ts"]})).await;
    assert!(r.is_error);
    assert_eq!(
        r.text_content(),
        "`leave_out` needs an action with a file list (a change set), but \"Send the email\" is a custom tool's action without a file list: apply or discard it whole (call again without `leave_out`)."
    );
    assert_eq!(s.store().top().unwrap().id, id);
}

#[tokio::test]
async fn the_typed_resolve_carries_the_selection() {
    let (d, s) = session();
    let files = three(d.path());
    let id = push_edits(&s, &files, true);
    let leave_out = LeaveOut {
        files: vec!["a.ts".into()],
        replacements: [("src/c.ts".to_string(), vec![1, 3])].into(),
        ..Default::default()
    };
    let outcome = s
        .resolve(
            Actor::Person,
            Resolve {
                choice: ResolveAction::Apply,
                reason: "ok".into(),
                expected_id: Some(id),
                leave_out: Some(leave_out),
                review: None,
                edits: Vec::new(),
            },
        )
        .await;
    match outcome {
        ResolveOutcome::Decided { details, text, .. } => {
            assert_eq!(details.partial.unwrap().history_text(), "applied 2 of 6 replacements in 2 of 3 files");
            assert!(text.starts_with("Applied: AST Edit: edits in 3 files.\n"), "{text}");
        }
        other => panic!("not decided: {other:?}"),
    }
    assert_eq!(read(d.path(), "src/c.ts"), "x();\nlog(4);\ninfo(5);\nlog(6);\n");
}

#[tokio::test]
async fn the_undo_of_a_partial_apply_covers_exactly_what_was_written() {
    let (d, s) = session();
    let files = three(d.path());
    let id = push_edits(&s, &files, true);
    let r = apply(&s, json!({"files": ["b.ts"], "replacements": {"src/c.ts": [3]}})).await;
    assert!(!r.is_error, "{}", r.text_content());
    let record: Arc<UndoRecord> =
        s.transcript().into_iter().rev().find_map(|e| e.undo).expect("a successful apply carries its undo record");
    let undone_paths: Vec<String> = record
        .changes
        .iter()
        .map(|c| match c {
            UndoChange::Edited { path, .. } | UndoChange::Created { path, .. } | UndoChange::Deleted { path, .. } => {
                path.clone()
            }
            UndoChange::Renamed { to, .. } => to.clone(),
        })
        .collect();
    assert_eq!(undone_paths, vec!["a.ts", "src/c.ts"], "the left-out file is not in the undo data");
    // The person edits the left-out file afterwards: the undo does not care.
    write(d.path(), "b.ts", "mine now\n");
    let outcome = s
        .undo(
            Actor::Person,
            Undo {
                direction: ResolveAction::Undo,
                of_action_id: id,
                label: "AST Edit: edits in 3 files".into(),
                source_tool_name: "ast_edit".into(),
                record: (*record).clone(),
                reason: "changed my mind".into(),
            },
        )
        .await;
    assert!(matches!(outcome, UndoOutcome::Done { .. }), "{outcome:?}");
    assert_eq!(read(d.path(), "a.ts"), A);
    assert_eq!(read(d.path(), "src/c.ts"), C);
    assert_eq!(read(d.path(), "b.ts"), "mine now\n");
}

#[tokio::test]
async fn a_restored_action_keeps_its_replacements_and_one_stored_without_them_refuses_them() {
    let (d, s) = session();
    let files = three(d.path());
    let saved = Arc::new(std::sync::Mutex::new(Vec::new()));
    let sink = saved.clone();
    s.store().set_persistence(Box::new(move |p| {
        if let Persist::Save(a) = p {
            sink.lock().unwrap().push(a)
        }
    }));
    push_edits(&s, &files, true);
    let stored: Vec<StoredAction> = saved.lock().unwrap().clone();
    assert_eq!(stored.len(), 1);
    drop(s);

    // Restored with its replacements: single ones can be left out after a restart.
    let s = Session::with_store(d.path(), ResolvePolicy::Agent, PendingActionStore::with_id_prefix("q")).unwrap();
    s.restore(stored.clone());
    let r = apply(&s, json!({"replacements": {"a.ts": [1]}})).await;
    assert!(!r.is_error, "{}", r.text_content());
    assert_eq!(read(d.path(), "a.ts"), "log(1);\ninfo(2);\n");
    assert_eq!(read(d.path(), "b.ts"), "info(3);\n");

    // Stored without them (an older journal row): files can be left out, single ones cannot.
    for (p, t) in files {
        write(d.path(), p, t);
    }
    let mut old = stored;
    if let StoredBody::ChangeSet { replacements, .. } = &mut old[0].body {
        replacements.clear();
    }
    let s = Session::with_store(d.path(), ResolvePolicy::Agent, PendingActionStore::with_id_prefix("r")).unwrap();
    s.restore(old);
    let r = apply(&s, json!({"replacements": {"a.ts": [1]}})).await;
    assert!(r.is_error);
    assert!(r.text_content().starts_with("Single replacements of \"a.ts\" cannot be left out"), "{}", r.text_content());
    let r = apply(&s, json!({"files": ["a.ts"]})).await;
    assert!(!r.is_error, "{}", r.text_content());
    assert_eq!(read(d.path(), "a.ts"), A);
    assert_eq!(read(d.path(), "b.ts"), "info(3);\n");
}

/// An agent's `leave_out` naming a path outside the workspace (`..`, absolute, or through a
/// symlink that leads out) is refused by name before anything runs: the action stays pending,
/// no workspace file changes, and the file outside is untouched.
#[tokio::test]
async fn leave_out_naming_paths_outside_the_workspace_is_refused_and_nothing_is_written() {
    let outer = tempfile::tempdir().unwrap();
    let root = outer.path().join("ws");
    fs::create_dir(&root).unwrap();
    fs::write(outer.path().join("outside.txt"), "sentinel\n").unwrap();
    std::os::unix::fs::symlink(outer.path(), root.join("up")).unwrap();
    let s = Session::with_store(&root, ResolvePolicy::Agent, PendingActionStore::with_id_prefix("p")).unwrap();
    let files = three(&root);
    let id = push_edits(&s, &files, true);
    let cases = [
        json!({"files": ["../outside.txt"]}),
        json!({"files": [outer.path().join("outside.txt").display().to_string()]}),
        json!({"files": ["up/outside.txt"]}),
        json!({"replacements": {"../outside.txt": [1]}}),
    ];
    for leave_out in cases {
        let named = leave_out.to_string();
        let r = apply(&s, leave_out).await;
        assert!(r.is_error, "{named}: refused, got {}", r.text_content());
        assert!(r.text_content().contains("outside.txt"), "{named}: the message names the value: {}", r.text_content());
        assert_eq!(s.store().peek().map(|a| a.id), Some(id.clone()), "{named}: the action stays pending");
        for (p, t) in files {
            assert_eq!(read(&root, p), t, "{named}: {p} untouched");
        }
        assert_eq!(fs::read_to_string(outer.path().join("outside.txt")).unwrap(), "sentinel\n", "{named}");
    }
}
