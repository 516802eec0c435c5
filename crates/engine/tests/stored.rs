//! Pending actions as data (`StoredAction`) and `Session::restore`, on real temp folders:
//! a restored change set applies the same bytes with the same text, drift while closed makes
//! it stale, a closure comes back orphaned (discardable, never applied), ids stay unique, and
//! the persistence hook sees every push and every decision but not `clear`. (The journal's
//! round trip and a real restart are in `resolve-journal` and `tests/tests/persist.rs`.)

use std::sync::{Arc, Mutex};

use resolve_engine::*;
use serde_json::json;

fn open(dir: &std::path::Path, prefix: &str) -> Session {
    Session::with_store(dir, ResolvePolicy::Agent, PendingActionStore::with_id_prefix(prefix)).unwrap()
}

/// Pushes an edit of `a.txt` (`one` → `ONE`), a rename `b.txt` → `c.txt` with a discard text,
/// and a closure; returns the session and everything the hook saw.
fn session_with_three_actions(dir: &std::path::Path) -> (Session, Arc<Mutex<Vec<Persist>>>) {
    std::fs::write(dir.join("a.txt"), "one\n").unwrap();
    std::fs::write(dir.join("b.txt"), "bee\n").unwrap();
    let s = open(dir, "pa-old-");
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = seen.clone();
    s.store().set_persistence(Box::new(move |p| sink.lock().unwrap().push(p)));
    let mut cs = ChangeSet::new();
    cs.edit("a.txt", b"one\n".to_vec(), b"ONE\n".to_vec());
    s.api()
        .push_pending_action(
            CustomToolPendingAction::from_change_set("Edit: a.txt", cs, s.workspace().clone(), "Wrote 1 file.")
                .with_details(json!({"files": ["a.txt"]}))
                .with_source_tool_name("edit_tool"),
        )
        .unwrap();
    let mut cs = ChangeSet::new();
    let hash = ContentHash::of_entry(&dir.join("b.txt"), EntryKind::File).unwrap();
    cs.rename("b.txt", "c.txt", EntryKind::File, hash);
    s.api()
        .push_pending_action(
            CustomToolPendingAction::from_change_set(
                "Batch rename: 1 file",
                cs,
                s.workspace().clone(),
                "Renamed 1 file.",
            )
            .with_renames(vec![RenameRow { from: "b.txt".into(), to: "c.txt".into(), status: RenameStatus::Rename }])
            .with_discard_text("Discarded batch rename of 1 file."),
        )
        .unwrap();
    s.api()
        .push_pending_action(CustomToolPendingAction::new("Mine: send mail", |_| async {
            Ok(ToolResult::text("sent"))
        }))
        .unwrap();
    (s, seen)
}

fn saved(seen: &Mutex<Vec<Persist>>) -> Vec<StoredAction> {
    seen.lock()
        .unwrap()
        .iter()
        .filter_map(|p| match p {
            Persist::Save(a) => Some(a.clone()),
            Persist::Remove { .. }
            | Persist::Comments { .. }
            | Persist::Review { .. }
            | Persist::Round { .. }
            | Persist::RoundTaken { .. } => None,
        })
        .collect()
}

async fn resolve(s: &Session, action: &str, reason: &str) -> ToolResult {
    s.call(Actor::Person, "resolve", json!({"action": action, "reason": reason})).await
}

#[tokio::test]
async fn restored_actions_come_back_in_order_and_apply_the_same_bytes_with_the_same_text() {
    let dir = tempfile::tempdir().unwrap();
    let (old, seen) = session_with_three_actions(dir.path());
    let before: Vec<ActionInfo> = old.store().list();
    let stored = saved(&seen);
    assert_eq!(stored.len(), 3, "every push was handed to the hook");
    drop(old);

    let s = open(dir.path(), "pa-new-");
    let report = s.restore(stored);
    assert!(report.refused.is_empty(), "{report:?}");
    let after = s.store().list();
    let ids = |l: &[ActionInfo]| l.iter().map(|a| (a.id.clone(), a.label.clone())).collect::<Vec<_>>();
    assert_eq!(ids(&after), ids(&before), "same ids, same labels, same LIFO order");
    assert_eq!(after[2].source_tool_name, "edit_tool");
    assert_eq!(after[2].details, Some(json!({"files": ["a.txt"]})), "details survive");
    assert_eq!(after[2].created_at, before[2].created_at, "creation time survives");
    assert_eq!(after[1].kind, ActionKind::Rename, "the rename table survives");
    assert_eq!(after[1].counts, before[1].counts);
    assert_eq!(after[2].counts, before[2].counts, "the diff counts are the same");
    assert_eq!(after[0].status.as_str(), "orphaned", "a closure cannot be stored");
    assert!(report.summary().contains("orphaned: 1"), "{}", report.summary());

    // The orphan on top: apply refused, nothing run, status kept; discard works.
    let r = resolve(&s, "apply", "go").await;
    assert!(r.is_error, "an orphaned action is never applied");
    assert!(r.text_content().contains("orphaned"), "{}", r.text_content());
    assert_eq!(s.store().peek().unwrap().status.as_str(), "orphaned", "a refused apply keeps the status");
    assert!(s.history().is_empty(), "a refusal is not a decision");
    let r = resolve(&s, "discard", "cannot run any more").await;
    assert_eq!(r.text_content(), "Discarded: Mine: send mail. Reason: cannot run any more");

    // The rename keeps its discard text; apply it instead and check the disk.
    let r = resolve(&s, "apply", "rename it").await;
    assert_eq!(r.text_content(), "Renamed 1 file.", "the same result text as before the restart");
    assert!(!dir.path().join("b.txt").exists());
    assert_eq!(std::fs::read(dir.path().join("c.txt")).unwrap(), b"bee\n");

    let r = resolve(&s, "apply", "edit it").await;
    assert_eq!(r.text_content(), "Wrote 1 file.");
    assert_eq!(std::fs::read(dir.path().join("a.txt")).unwrap(), b"ONE\n", "the previewed bytes, exactly");
    assert!(s.store().is_empty());
}

#[tokio::test]
async fn a_restored_discard_text_is_the_one_the_tool_set() {
    let dir = tempfile::tempdir().unwrap();
    let (old, seen) = session_with_three_actions(dir.path());
    drop(old);
    let s = open(dir.path(), "pa-new-");
    s.restore(saved(&seen));
    resolve(&s, "discard", "x").await;
    let r = resolve(&s, "discard", "not now").await;
    assert_eq!(r.text_content(), "Discarded batch rename of 1 file. Reason: not now");
    assert!(dir.path().join("b.txt").exists(), "a discard writes nothing");
}

#[tokio::test]
async fn a_file_changed_while_closed_makes_the_restored_action_stale_and_nothing_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let (old, seen) = session_with_three_actions(dir.path());
    drop(old);
    std::fs::write(dir.path().join("a.txt"), "edited in an editor\n").unwrap();
    std::fs::remove_file(dir.path().join("b.txt")).unwrap();
    let s = open(dir.path(), "pa-new-");
    let report = s.restore(saved(&seen));
    let list = s.store().list();
    match &list[2].status {
        ActionStatus::Stale { files, message } => {
            assert_eq!(files, &vec!["a.txt".to_string()]);
            assert!(
                message
                    .starts_with("Preview is stale: 1 file changed on disk since the preview: a.txt (content changed)"),
                "{message}"
            );
        }
        other => panic!("the edit must be stale, got {other:?}"),
    }
    assert!(matches!(&list[1].status, ActionStatus::Stale { files, .. } if files == &vec!["b.txt".to_string()]));
    assert!(report.summary().contains("stale: 2"), "{}", report.summary());
    resolve(&s, "discard", "orphan").await;
    resolve(&s, "discard", "gone").await;
    let r = resolve(&s, "apply", "try").await;
    assert_eq!(r.error_code.as_deref(), Some("stale"));
    assert_eq!(std::fs::read_to_string(dir.path().join("a.txt")).unwrap(), "edited in an editor\n", "the edit is kept");
}

#[tokio::test]
async fn restoring_never_applies_and_ids_stay_unique() {
    let dir = tempfile::tempdir().unwrap();
    let (old, seen) = session_with_three_actions(dir.path());
    drop(old);
    // The same prefix as the earlier session: new pushes must not reuse a restored id.
    let s = open(dir.path(), "pa-old-");
    let mut events = s.store().subscribe();
    s.restore(saved(&seen));
    assert_eq!(std::fs::read(dir.path().join("a.txt")).unwrap(), b"one\n", "nothing applied by a restore");
    assert!(dir.path().join("b.txt").exists(), "nothing renamed by a restore");
    let ev = events.try_recv().unwrap();
    assert!(matches!(ev.change, StoreChange::Restored { ref ids } if ids.len() == 3), "{ev:?}");
    let new = s
        .api()
        .push_pending_action(CustomToolPendingAction::new("Another", |_| async { Ok(ToolResult::empty()) }))
        .unwrap();
    let ids: Vec<String> = s.store().list().into_iter().map(|a| a.id).collect();
    assert_eq!(ids, vec![new.clone(), "pa-old-3".into(), "pa-old-2".into(), "pa-old-1".into()]);
    assert_eq!(new, "pa-old-4", "the next id after the restored ones");
    // Restoring the same actions again refuses every id already on the stack.
    let again = s.restore(saved(&seen));
    assert!(again.restored.is_empty());
    assert_eq!(again.refused.len(), 3, "{again:?}");
    assert_eq!(s.store().len(), 4, "nothing duplicated");
}

#[tokio::test]
async fn the_persistence_hook_sees_pushes_and_decisions_but_not_clear() {
    let dir = tempfile::tempdir().unwrap();
    let (s, seen) = session_with_three_actions(dir.path());
    resolve(&s, "discard", "no").await;
    s.store().pop();
    let remaining = s.store().clear();
    assert_eq!(remaining, 1);
    let kinds: Vec<String> = seen
        .lock()
        .unwrap()
        .iter()
        .map(|p| match p {
            Persist::Save(a) => format!("save {}", a.id),
            Persist::Remove { id } => format!("remove {id}"),
            Persist::Comments { id, .. } => format!("comments {id}"),
            Persist::Review { id, .. } => format!("review {id}"),
            Persist::Round { id, .. } => format!("round {id}"),
            Persist::RoundTaken { id } => format!("round taken {id}"),
        })
        .collect();
    assert_eq!(
        kinds,
        vec!["save pa-old-1", "save pa-old-2", "save pa-old-3", "remove pa-old-3", "remove pa-old-2"],
        "clear (and closing) forget nothing: the last action stays stored"
    );
    let orphan = saved(&seen).pop().unwrap();
    assert!(matches!(orphan.body, StoredBody::Orphaned), "a closure is stored as label/source/details only");
    let edit = &saved(&seen)[0];
    let files = edit.previewed_files();
    assert_eq!(files.len(), 1);
    assert_eq!(files[0].previewed_hash, Some(ContentHash::of(b"one\n")), "the push keeps the previewed hash");
}

#[tokio::test]
async fn a_stored_edit_whose_bytes_do_not_match_its_hash_comes_back_orphaned() {
    let dir = tempfile::tempdir().unwrap();
    let (old, seen) = session_with_three_actions(dir.path());
    drop(old);
    let mut stored = saved(&seen);
    if let StoredBody::ChangeSet { changes, .. } = &mut stored[0].body {
        if let Change::Edit { before, .. } = &mut changes[0] {
            *before = b"tampered\n".to_vec().into();
        }
    }
    let s = open(dir.path(), "pa-new-");
    s.restore(stored);
    let bottom = s.store().list().pop().unwrap();
    assert_eq!(bottom.status.as_str(), "orphaned", "damaged bytes are never applied, but the action is kept");
    assert_eq!(bottom.label, "Edit: a.txt");
}

/// Pushes an edit of `a.txt` from its call (so the action records its client).
struct EditTool(CustomToolApi);

#[async_trait::async_trait]
impl Tool for EditTool {
    fn name(&self) -> &str {
        "edit"
    }
    fn label(&self) -> &str {
        "Edit"
    }
    fn description(&self) -> &str {
        "edits a.txt"
    }
    fn parameters(&self) -> serde_json::Value {
        json!({"type": "object"})
    }
    async fn execute(&self, ctx: ToolContext, _params: serde_json::Value) -> Result<ToolResult, ToolError> {
        let ws = self.0.workspace()?;
        let mut cs = ChangeSet::new();
        cs.edit("a.txt", b"one\n".to_vec(), b"ONE\n".to_vec());
        let id = self.0.push_from(&ctx, CustomToolPendingAction::from_change_set("Edit: a.txt", cs, ws, "Wrote."))?;
        Ok(ToolResult::text(id))
    }
}

#[tokio::test]
async fn the_hook_keeps_a_prior_round_until_its_agent_answers_or_a_newer_one_replaces_it() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "one\n").unwrap();
    let s = open(dir.path(), "pa-");
    s.load(|api| vec![Arc::new(EditTool(api.clone())) as Arc<dyn Tool>]).unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = seen.clone();
    s.store().set_persistence(Box::new(move |p| sink.lock().unwrap().push(p)));
    let edit = || s.call_with(Actor::Agent, ToolContext::new("c").with_client("claude-code"), "edit", json!({}));
    let request_changes = |id: &str| {
        s.resolve(
            Actor::Person,
            Resolve {
                choice: ResolveAction::Discard,
                reason: "not yet".into(),
                expected_id: Some(id.to_string()),
                leave_out: None,
                review: Some(ReviewRequest { request_changes: true, comments: Vec::new() }),
                edits: Vec::new(),
            },
        )
    };
    edit().await;
    edit().await;
    assert!(matches!(request_changes("pa-2").await, ResolveOutcome::Decided { .. }));
    assert!(matches!(request_changes("pa-1").await, ResolveOutcome::Decided { .. }));
    edit().await;
    let kinds: Vec<String> = seen
        .lock()
        .unwrap()
        .iter()
        .filter_map(|p| match p {
            Persist::Save(a) => Some(format!("save {}", a.id)),
            Persist::Remove { id } => Some(format!("remove {id}")),
            Persist::Round { id, round } => Some(format!("round {id} of {} (round {})", round.agent, round.number)),
            Persist::RoundTaken { id } => Some(format!("round taken {id}")),
            Persist::Comments { .. } | Persist::Review { .. } => None,
        })
        .collect();
    assert_eq!(
        kinds,
        vec![
            "save pa-1",
            "save pa-2",
            "round pa-2 of claude-code (round 1)",
            "remove pa-2",
            "round pa-1 of claude-code (round 1)",
            "round taken pa-2",
            "remove pa-1",
            "save pa-3",
            "round taken pa-1",
        ],
        "kept until answered; a newer Request changes of the same agent replaces the older"
    );
    assert_eq!(s.store().peek().unwrap().round.map(|r| (r.number, r.previous_id)), Some((2, "pa-1".to_string())));
}
