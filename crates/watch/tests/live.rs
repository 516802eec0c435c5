//! The watcher with real file-system events on real temp folders: an edit, a delete, a file
//! appearing at a create's target, a revert to the previewed bytes, our own apply, and a
//! stop. Every wait is on a condition (store events) with a time-out, never a sleep.

use std::fs;
use std::sync::Arc;
use std::time::Duration;

use resolve_engine::{
    ActionId, ActionStatus, Actor, ChangeSet, CustomToolPendingAction, PendingActionStore, Resolve, ResolveAction,
    ResolveOutcome, ResolvePolicy, Session, StoreChange,
};
use resolve_watch::Watcher;

/// Generous: the machine running the tests may be busy. The figure is in the benchmark.
const WAIT: Duration = Duration::from_secs(20);

struct Fixture {
    _dir: tempfile::TempDir,
    session: Arc<Session>,
}

impl Fixture {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let session = Arc::new(
            Session::with_store(dir.path(), ResolvePolicy::Human, PendingActionStore::with_id_prefix("w-")).unwrap(),
        );
        Self { _dir: dir, session }
    }

    fn write(&self, p: &str, text: &str) {
        let abs = self.session.workspace().root().join(p);
        fs::create_dir_all(abs.parent().unwrap()).unwrap();
        fs::write(abs, text).unwrap();
    }

    fn read(&self, p: &str) -> String {
        fs::read_to_string(self.session.workspace().root().join(p)).unwrap()
    }

    fn push(&self, cs: ChangeSet) -> ActionId {
        let action = CustomToolPendingAction::from_change_set("Edit: live", cs, self.session.workspace().clone(), "ok");
        self.session.api().push_pending_action(action).unwrap()
    }

    fn status(&self, id: &str) -> ActionStatus {
        self.session.store().info(id).expect("the action is still on the stack").status
    }

    /// Waits (on store events, with a time-out) until `cond` holds.
    async fn until(&self, what: &str, cond: impl Fn(&Self) -> bool) {
        let mut events = self.session.store().subscribe();
        let waited = tokio::time::timeout(WAIT, async {
            while !cond(self) {
                let _ = events.recv().await;
            }
        })
        .await;
        assert!(waited.is_ok(), "timed out waiting until {what}; status now {:?}", self.session.store().list());
    }
}

fn is_stale_for(status: &ActionStatus, file: &str) -> bool {
    matches!(status, ActionStatus::Stale { files, .. } if files.iter().any(|f| f == file))
}

fn edit_of(f: &Fixture, path: &str, before: &str, after: &str) -> ActionId {
    f.write(path, before);
    let mut cs = ChangeSet::new();
    cs.edit(path, before.as_bytes().to_vec(), after.as_bytes().to_vec());
    f.push(cs)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_edit_on_disk_turns_the_action_stale_and_a_revert_makes_it_pending_again() {
    let f = Fixture::new();
    let id = edit_of(&f, "src/a.ts", "const a = 1;\n", "const a = 2;\n");
    let _watch = Watcher::start(f.session.clone()).unwrap();
    f.write("src/a.ts", "const a = 1; // edited in an editor\n");
    f.until("the edit makes the action stale", |f| is_stale_for(&f.status(&id), "src/a.ts")).await;
    match f.status(&id) {
        ActionStatus::Stale { message, .. } => assert!(
            message
                .starts_with("Preview is stale: 1 file changed on disk since the preview: src/a.ts (content changed)."),
            "the apply's words: {message}"
        ),
        other => panic!("expected stale, got {other:?}"),
    }
    f.write("src/a.ts", "const a = 1;\n");
    f.until("the revert makes it pending again", |f| f.status(&id) == ActionStatus::Pending).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deleted_file_turns_the_action_stale() {
    let f = Fixture::new();
    let id = edit_of(&f, "lib/b.ts", "b\n", "B\n");
    let _watch = Watcher::start(f.session.clone()).unwrap();
    fs::remove_file(f.session.workspace().root().join("lib/b.ts")).unwrap();
    f.until("the deletion makes the action stale", |f| is_stale_for(&f.status(&id), "lib/b.ts")).await;
    assert!(matches!(f.status(&id), ActionStatus::Stale { message, .. } if message.contains("lib/b.ts (deleted)")));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_appearing_at_a_create_target_turns_the_action_stale_and_its_removal_pending() {
    let f = Fixture::new();
    let mut cs = ChangeSet::new();
    cs.create("new/dir/c.ts", b"planned\n".to_vec());
    let id = f.push(cs);
    let _watch = Watcher::start(f.session.clone()).unwrap();
    // A folder created after the watch started is watched too (the file is inside it).
    f.write("new/dir/c.ts", "someone else's\n");
    f.until("the new file makes the action stale", |f| is_stale_for(&f.status(&id), "new/dir/c.ts")).await;
    fs::remove_dir_all(f.session.workspace().root().join("new")).unwrap();
    f.until("the target is free again", |f| f.status(&id) == ActionStatus::Pending).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_editor_save_by_rename_is_seen() {
    let f = Fixture::new();
    let id = edit_of(&f, "d.ts", "d\n", "D\n");
    let _watch = Watcher::start(f.session.clone()).unwrap();
    // What vim and many editors do: write a temporary, rename it over the file.
    f.write("d.ts.swp", "d edited\n");
    fs::rename(f.session.workspace().root().join("d.ts.swp"), f.session.workspace().root().join("d.ts")).unwrap();
    f.until("the saved file makes the action stale", |f| is_stale_for(&f.status(&id), "d.ts")).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn our_own_apply_never_marks_the_applied_action_stale_but_marks_the_one_below() {
    let f = Fixture::new();
    let below = edit_of(&f, "e.ts", "e\n", "E-below\n");
    let mut cs = ChangeSet::new();
    cs.edit("e.ts", b"e\n".to_vec(), b"E-top\n".to_vec());
    let top = f.push(cs);
    let mut events = f.session.store().subscribe();
    let _watch = Watcher::start(f.session.clone()).unwrap();
    let outcome = f
        .session
        .resolve(
            Actor::Person,
            Resolve {
                choice: ResolveAction::Apply,
                reason: "ok".into(),
                expected_id: Some(top.clone()),
                leave_out: None,
                review: None,
                edits: Vec::new(),
            },
        )
        .await;
    assert!(matches!(outcome, ResolveOutcome::Decided { .. }), "{outcome:?}");
    assert_eq!(f.read("e.ts"), "E-top\n");
    f.until("the action below, which previewed the same file, turns stale", |f| {
        is_stale_for(&f.status(&below), "e.ts")
    })
    .await;
    while let Ok(event) = events.try_recv() {
        assert_ne!(
            event.change,
            StoreChange::StatusChanged { id: top.clone() },
            "the applied action's status never flashes while its own apply writes"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stopped_watch_changes_nothing_any_more() {
    let f = Fixture::new();
    let first = edit_of(&f, "f.ts", "f\n", "F\n");
    let watch = Watcher::start(f.session.clone()).unwrap();
    f.write("f.ts", "f edited\n");
    f.until("the watch sees the edit", |f| is_stale_for(&f.status(&first), "f.ts")).await;
    watch.stop();
    // The re-check thread is joined and has let go of the session: nothing can re-check it.
    assert_eq!(Arc::strong_count(&f.session), 1, "the stopped watch let go of the session");
    f.write("f.ts", "f\n");
    assert!(is_stale_for(&f.status(&first), "f.ts"), "a stopped watch does not see the revert");
    // A new watch of the same session (a workspace opened again) works.
    let _again = Watcher::start(f.session.clone()).unwrap();
    f.write("f.ts", "f\n");
    f.until("a new watch sees the revert", |f| f.status(&first) == ActionStatus::Pending).await;
}
