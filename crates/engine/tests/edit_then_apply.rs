//! Edit, then apply (`resolve` with `edits`, the person's) on real temp dirs: the person's
//! text is written in place of the proposal with every guarantee of the apply (pinned to the
//! previewed original: stale when it changed; undoable), the result says so and carries the
//! diff from the proposal to what was written; agents, discards, deletions, renames and files
//! both edited and left out are refused with the action still pending and nothing written.

use std::fs;
use std::path::Path;
use std::sync::Arc;

use resolve_engine::*;
use serde_json::json;

fn session(policy: ResolvePolicy) -> (tempfile::TempDir, Session) {
    let dir = tempfile::tempdir().unwrap();
    let s = Session::with_store(dir.path(), policy, PendingActionStore::with_id_prefix("e")).unwrap();
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

const A: &str = "log(1);\nlog(2);\n";
const B: &str = "bye\n";

/// An action editing a.ts (`log(` → `info(`), creating new.ts and deleting b.ts.
fn push(s: &Session, root: &Path) -> ActionId {
    write(root, "a.ts", A);
    write(root, "b.ts", B);
    let mut cs = ChangeSet::new();
    cs.edit("a.ts", A.as_bytes().to_vec(), A.replace("log(", "info(").into_bytes());
    cs.create("new.ts", b"export {};\n".to_vec());
    cs.delete("b.ts", B.as_bytes().to_vec());
    let action = CustomToolPendingAction::from_change_set("AST Edit: 3 files", cs, s.workspace().clone(), "Applied.")
        .with_source_tool_name("ast_edit");
    s.api().push_pending_action(action).unwrap()
}

fn resolve(id: &str, edits: Vec<PersonEdit>, leave_out: Option<LeaveOut>) -> Resolve {
    Resolve {
        choice: ResolveAction::Apply,
        reason: "fixed a detail".into(),
        expected_id: Some(id.to_string()),
        leave_out,
        review: None,
        edits,
    }
}

fn edit(path: &str, text: &str) -> PersonEdit {
    PersonEdit { path: path.into(), text: text.into() }
}

#[tokio::test]
async fn the_persons_text_is_written_and_the_agent_reads_what_changed_from_its_proposal() {
    let (d, s) = session(ResolvePolicy::Human);
    let id = push(&s, d.path());
    let mine = "info(1);\ninfo(2);\n// reviewed\n";
    let outcome = s
        .resolve(Actor::Person, resolve(&id, vec![edit("a.ts", mine), edit("new.ts", "export const x = 1;\n")], None))
        .await;
    let (details, text) = match outcome {
        ResolveOutcome::Decided { details, text, decided_by } => {
            assert_eq!(decided_by, Actor::Person);
            (details, text)
        }
        other => panic!("not decided: {other:?}"),
    };
    assert_eq!(read(d.path(), "a.ts"), mine, "the edited text, not the proposal");
    assert_eq!(read(d.path(), "new.ts"), "export const x = 1;\n");
    assert!(!d.path().join("b.ts").exists(), "the rest of the action is applied as proposed");
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("Applied with the person's edits: AST Edit: 3 files."));
    assert_eq!(lines.next(), Some("The person's edits, from your proposal to what was written:"));
    assert!(text.contains("--- proposal/a.ts\n+++ written/a.ts\n"), "{text}");
    assert!(text.contains("+// reviewed\n"), "{text}");
    assert!(text.contains("-export {};\n+export const x = 1;"), "{text}");
    let edits = details.edits.expect("the details carry the edits");
    assert_eq!(edits.iter().map(|e| e.path.as_str()).collect::<Vec<_>>(), ["a.ts", "new.ts"]);
    assert_eq!(edits[0].written_hash, ContentHash::of(mine.as_bytes()).to_string());
    // The undo data covers exactly what was written: undone, a.ts is the original again.
    let record: Arc<UndoRecord> = s.transcript().into_iter().rev().find_map(|e| e.undo).expect("an undo record");
    assert!(record.changes.iter().any(|c| matches!(c, UndoChange::Edited { path, .. } if path == "a.ts")));
}

#[tokio::test]
async fn an_edit_is_pinned_to_the_previewed_original_and_a_changed_file_is_stale() {
    let (d, s) = session(ResolvePolicy::Human);
    let id = push(&s, d.path());
    write(d.path(), "a.ts", "someone else's change\n");
    let outcome = s.resolve(Actor::Person, resolve(&id, vec![edit("a.ts", "mine\n")], None)).await;
    assert!(
        matches!(outcome, ResolveOutcome::ApplyFailed { status: Some(ActionStatus::Stale { .. }), .. }),
        "{outcome:?}"
    );
    assert_eq!(read(d.path(), "a.ts"), "someone else's change\n", "nothing written over it");
    assert!(!d.path().join("new.ts").exists(), "nothing of the action was written");
    assert_eq!(s.store().top().unwrap().id, id, "still pending");
}

#[tokio::test]
async fn wrong_edits_are_refused_by_name_and_nothing_is_written() {
    let (d, s) = session(ResolvePolicy::Human);
    let id = push(&s, d.path());
    let cases: Vec<(Vec<PersonEdit>, Option<LeaveOut>, &str)> = vec![
        (vec![edit("b.ts", "x")], None, "\"b.ts\" is deleted by this action, and deletions are not editable"),
        (vec![edit("nope.ts", "x")], None, "\"nope.ts\" is not a file of this action"),
        (vec![edit("../outside.txt", "x")], None, "\"../outside.txt\" is not a file of this action"),
        (vec![edit("/etc/hostname", "x")], None, "\"/etc/hostname\" is not a file of this action"),
        (
            vec![edit("a.ts", "x")],
            Some(LeaveOut { files: vec!["a.ts".into()], ..Default::default() }),
            "\"a.ts\" is both edited and left out",
        ),
    ];
    for (edits, leave_out, message) in cases {
        let outcome = s.resolve(Actor::Person, resolve(&id, edits, leave_out)).await;
        match outcome {
            ResolveOutcome::Refused { message: m, .. } => assert!(m.contains(message), "{m}"),
            other => panic!("not refused ({message}): {other:?}"),
        }
    }
    let r = s
        .call(
            Actor::Person,
            "resolve",
            json!({"action": "discard", "reason": "r", "edits": [{"path": "a.ts", "text": "x"}]}),
        )
        .await;
    assert!(r.is_error && r.text_content().contains("`edits` are only for \"apply\""), "{}", r.text_content());
    assert_eq!(read(d.path(), "a.ts"), A);
    assert!(!d.path().join("new.ts").exists());
    assert!(!d.path().parent().unwrap().join("outside.txt").exists(), "nothing written outside the workspace");
    assert_eq!(s.store().top().unwrap().id, id, "still pending");
}

#[tokio::test]
async fn an_agent_cannot_edit_at_apply_time() {
    let (d, s) = session(ResolvePolicy::Agent);
    let id = push(&s, d.path());
    let r = s
        .call(
            Actor::Agent,
            "resolve",
            json!({"action": "apply", "reason": "r", "edits": [{"path": "a.ts", "text": "unreviewed\n"}]}),
        )
        .await;
    assert!(r.is_error, "{}", r.text_content());
    assert!(r.text_content().contains("`edits` are the person's"), "{}", r.text_content());
    assert_eq!(read(d.path(), "a.ts"), A, "nothing written");
    assert_eq!(s.store().top().unwrap().id, id);
}

#[tokio::test]
async fn an_edit_with_a_partial_apply_writes_the_edit_and_leaves_the_rest_out() {
    let (d, s) = session(ResolvePolicy::Human);
    let id = push(&s, d.path());
    let leave_out = LeaveOut { files: vec!["b.ts".into()], ..Default::default() };
    let outcome = s.resolve(Actor::Person, resolve(&id, vec![edit("a.ts", "mine\n")], Some(leave_out))).await;
    let text = match outcome {
        ResolveOutcome::Decided { text, details, .. } => {
            assert!(details.partial.is_some() && details.edits.is_some());
            text
        }
        other => panic!("not decided: {other:?}"),
    };
    assert!(
        text.starts_with("Applied with the person's edits: AST Edit: 3 files.\nLeft out 1 of 3 files: b.ts\n"),
        "{text}"
    );
    assert_eq!(read(d.path(), "a.ts"), "mine\n");
    assert_eq!(read(d.path(), "b.ts"), B, "left out");
}
