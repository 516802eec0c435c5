//! The bounds of the pending-action stack (`PendingLimits`): a push past the count or the
//! bytes is refused with a message naming the bound and its setting, nothing on the stack
//! changes, the pushing tool gets the error; a restore is never refused by them.

use std::sync::{Arc, Mutex};

use resolve_engine::*;
use serde_json::json;

fn open(dir: &std::path::Path, prefix: &str) -> Session {
    Session::with_store(dir, ResolvePolicy::Agent, PendingActionStore::with_id_prefix(prefix)).unwrap()
}

fn closure(label: &str) -> CustomToolPendingAction {
    CustomToolPendingAction::new(label, |_| async { Ok(ToolResult::text("done")) })
}

/// An edit of `name` (created with `size` bytes) that writes `size` other bytes.
fn big_edit(s: &Session, name: &str, size: usize) -> CustomToolPendingAction {
    let before = vec![b'a'; size];
    std::fs::write(s.workspace().root().join(name), &before).unwrap();
    let mut cs = ChangeSet::new();
    cs.edit(name, before, vec![b'b'; size]);
    CustomToolPendingAction::from_change_set(format!("Edit {name}"), cs, s.workspace().clone(), "Wrote it.")
}

fn ids(s: &Session) -> Vec<String> {
    s.store().list().into_iter().map(|a| a.id).collect()
}

#[test]
fn a_push_past_the_count_is_refused_and_the_stack_is_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    let s = open(dir.path(), "pa-");
    s.store().set_limits(PendingLimits { max_actions: 2, ..PendingLimits::default() });
    let saved = Arc::new(Mutex::new(0));
    let sink = saved.clone();
    s.store().set_persistence(Box::new(move |p| {
        if matches!(p, Persist::Save(_)) {
            *sink.lock().unwrap() += 1;
        }
    }));
    s.api().push_pending_action(closure("one")).unwrap();
    s.api().push_pending_action(closure("two")).unwrap();
    let (before, revision) = (ids(&s), s.store().revision());
    let err = s.api().push_pending_action(closure("three")).unwrap_err();
    let text = err.to_string();
    assert!(text.contains("2 actions already wait"), "says how many: {text}");
    assert!(text.contains("RESOLVE_DESK_MAX_PENDING=2"), "names the limit and its setting: {text}");
    assert!(
        text.contains("Apply or discard some pending actions, or raise RESOLVE_DESK_MAX_PENDING."),
        "says what to do: {text}"
    );
    assert_eq!(ids(&s), before, "nothing added, nothing dropped");
    assert_eq!(s.store().revision(), revision, "a refused push publishes nothing");
    assert_eq!(*saved.lock().unwrap(), 2, "a refused push is not handed to the journal");
    // Room again once one is decided.
    s.store().pop();
    s.api().push_pending_action(closure("three")).expect("fits once an action left");
}

#[test]
fn a_push_past_the_bytes_is_refused_naming_the_sizes_and_the_setting() {
    let dir = tempfile::tempdir().unwrap();
    let s = open(dir.path(), "pa-");
    // Each edit holds 2 × 300 KiB; the bound is 1 MiB.
    s.store().set_limits(PendingLimits { max_actions: 100, max_bytes: 1024 * 1024 });
    s.api().push_pending_action(big_edit(&s, "a.txt", 300 * 1024)).unwrap();
    assert_eq!(s.store().held_bytes(), 600 * 1024, "the previewed bytes and the bytes to write");
    s.api().push_pending_action(closure("a closure holds no change set")).unwrap();
    let before = ids(&s);
    let err = s.api().push_pending_action(big_edit(&s, "b.txt", 300 * 1024)).unwrap_err().to_string();
    assert!(err.contains("its change set holds 600.0 KiB"), "{err}");
    assert!(err.contains("the 2 pending actions of this workspace hold 600.0 KiB"), "{err}");
    assert!(err.contains("the limit of 1.0 MiB (RESOLVE_DESK_MAX_PENDING_MIB=1)"), "{err}");
    assert!(err.contains("or raise RESOLVE_DESK_MAX_PENDING_MIB."), "{err}");
    assert_eq!(ids(&s), before, "the stack is unchanged");
    assert_eq!(s.store().held_bytes(), 600 * 1024);
}

#[tokio::test]
async fn a_tool_whose_push_is_refused_gets_the_error_as_its_result() {
    struct Pusher(CustomToolApi);
    #[async_trait::async_trait]
    impl Tool for Pusher {
        fn name(&self) -> &str {
            "pusher"
        }
        fn label(&self) -> &str {
            "Pusher"
        }
        fn description(&self) -> &str {
            "pushes a closure"
        }
        fn parameters(&self) -> serde_json::Value {
            json!({"type": "object"})
        }
        async fn execute(&self, ctx: ToolContext, _params: serde_json::Value) -> Result<ToolResult, ToolError> {
            let id = self.0.push_from(&ctx, closure("pushed"))?;
            Ok(ToolResult::text(format!("pushed {id}")))
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let s = open(dir.path(), "pa-");
    s.load(|api| vec![Arc::new(Pusher(api.clone())) as Arc<dyn Tool>]).unwrap();
    s.store().set_limits(PendingLimits { max_actions: 1, ..PendingLimits::default() });
    assert!(!s.call(Actor::Agent, "pusher", json!({})).await.is_error);
    let r = s.call(Actor::Agent, "pusher", json!({})).await;
    assert!(r.is_error, "the call fails");
    assert!(r.text_content().contains("RESOLVE_DESK_MAX_PENDING=1"), "{}", r.text_content());
    assert_eq!(s.store().len(), 1);
}

#[test]
fn actions_restored_past_the_limits_are_all_kept_and_only_new_pushes_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let old = open(dir.path(), "pa-old-");
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = seen.clone();
    old.store().set_persistence(Box::new(move |p| {
        if let Persist::Save(a) = p {
            sink.lock().unwrap().push(a);
        }
    }));
    for i in 0..3 {
        old.api().push_pending_action(big_edit(&old, &format!("f{i}.txt"), 1024)).unwrap();
    }
    drop(old);
    let stored = seen.lock().unwrap().clone();

    let s = open(dir.path(), "pa-new-");
    // A later start with tighter bounds than the stack it restores.
    s.store().set_limits(PendingLimits { max_actions: 1, max_bytes: 1024 });
    let report = s.restore(stored);
    assert_eq!(report.restored.len(), 3, "restore is never refused by the limits: {report:?}");
    assert!(report.refused.is_empty());
    assert_eq!(s.store().len(), 3, "nothing dropped");
    let before = ids(&s);
    let err = s.api().push_pending_action(closure("new")).unwrap_err().to_string();
    assert!(err.contains("3 actions already wait"), "{err}");
    assert_eq!(ids(&s), before);
}
