//! Live staleness: pending actions re-checked against the disk when files change, before
//! anyone presses Apply.
//!
//! A watcher (crate `resolve-watch`) reports which workspace paths changed; [`recheck`]
//! looks only at the actions whose change set names one of them (plus the files an action
//! is already stale for), hashes only those files, and sets each action's status:
//! - a file that drifted from the preview (edited, deleted, a create's or rename's target
//!   that appeared, a rename source gone or changed) makes the action
//!   [`ActionStatus::Stale`], with the message an apply would have refused with;
//! - a stale action whose files are all back to what the preview saw is `Pending` again;
//! - a `Failed` action is left alone (its error is not about drift), and so is an action
//!   without a change set (nothing to compare).
//!
//! The check holds the workspace lock, so it never sees an apply half-way (its temporaries,
//! its moved-aside files): it runs before or after, never during. A status is only replaced
//! if it is still the one the check started from, so a resolve's verdict always wins.

use std::collections::HashSet;
use std::io;
use std::time::Duration;

use crate::changeset::drift::{stale_message, with_workspace_lock};
use crate::changeset::Affected;
use crate::pending::{ActionId, ActionStatus, PendingActionStore};
use crate::workspace::Workspace;

/// What a re-check changed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Recheck {
    /// Actions that became stale, or stale for other files.
    pub stale: Vec<ActionId>,
    /// Stale actions whose files are back to what the preview saw.
    pub pending_again: Vec<ActionId>,
}

impl Recheck {
    pub fn is_empty(&self) -> bool {
        self.stale.is_empty() && self.pending_again.is_empty()
    }
}

/// Re-checks the pending actions of `store` whose change sets touch `affected` (see the
/// module docs). Waits up to `wait` for an apply that holds the workspace lock; `Ok(None)`
/// when it still held it (nothing was checked: check again once it has finished).
pub fn recheck(
    store: &PendingActionStore,
    ws: &Workspace,
    affected: Affected<'_>,
    wait: Duration,
) -> io::Result<Option<Recheck>> {
    with_workspace_lock(ws.root(), wait, || recheck_locked(store, ws, affected))
}

fn recheck_locked(store: &PendingActionStore, ws: &Workspace, affected: Affected<'_>) -> Recheck {
    let mut out = Recheck::default();
    for info in store.list() {
        if matches!(info.status, ActionStatus::Failed { .. }) {
            continue;
        }
        let Some(change_set) = store.get(&info.id).and_then(|a| a.change_set.clone()) else { continue };
        // The files it is stale for are looked at again too: that is how it becomes pending.
        let drift = match (&affected, &info.status) {
            // Restored without its apply: only a discard can change it.
            (_, ActionStatus::Orphaned { .. }) => continue,
            (Affected::All, _) | (_, ActionStatus::Pending) => change_set.drift(ws, affected),
            (Affected::Paths(paths), ActionStatus::Stale { files, .. }) => {
                let mut paths: HashSet<String> = (*paths).clone();
                for f in files {
                    paths.insert(f.trim_start_matches("./").to_string());
                    for abs in [ws.resolve(f), ws.resolve_entry(f)].into_iter().flatten() {
                        if let Ok(rel) = ws.relative(&abs) {
                            paths.insert(rel);
                        }
                    }
                }
                change_set.drift(ws, Affected::Paths(&paths))
            }
            (_, ActionStatus::Failed { .. }) => continue,
        };
        let next = if drift.is_empty() {
            ActionStatus::Pending
        } else {
            ActionStatus::Stale {
                files: drift.iter().map(|(p, _)| p.clone()).collect(),
                message: stale_message(&drift),
            }
        };
        if next == info.status || !store.replace_status(&info.id, &info.status, next.clone()) {
            continue;
        }
        match next {
            ActionStatus::Pending => out.pending_again.push(info.id),
            _ => out.stale.push(info.id),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::changeset::{ChangeSet, ContentHash, EntryKind};
    use crate::custom::CustomToolPendingAction;
    use crate::pending::StoreChange;
    use crate::{ResolvePolicy, Session};
    use std::fs;
    use std::sync::Arc;

    const NOW: Duration = Duration::ZERO;

    fn session() -> (tempfile::TempDir, Session) {
        let dir = tempfile::tempdir().unwrap();
        let s =
            Session::with_store(dir.path(), ResolvePolicy::Human, PendingActionStore::with_id_prefix("t-")).unwrap();
        (dir, s)
    }

    fn write(s: &Session, p: &str, text: &str) {
        let abs = s.workspace().root().join(p);
        fs::create_dir_all(abs.parent().unwrap()).unwrap();
        fs::write(abs, text).unwrap();
    }

    fn push(s: &Session, cs: ChangeSet) -> ActionId {
        s.api()
            .push_pending_action(CustomToolPendingAction::from_change_set("Edit: t", cs, s.workspace().clone(), "ok"))
            .unwrap()
    }

    fn paths(list: &[&str]) -> HashSet<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    fn status(s: &Session, id: &str) -> ActionStatus {
        s.store().info(id).unwrap().status
    }

    fn edit_action(s: &Session) -> ActionId {
        write(s, "a.ts", "one\n");
        write(s, "b.ts", "two\n");
        let mut cs = ChangeSet::new();
        cs.edit("a.ts", b"one\n".to_vec(), b"ONE\n".to_vec()).edit("b.ts", b"two\n".to_vec(), b"TWO\n".to_vec());
        push(s, cs)
    }

    #[test]
    fn an_edited_file_makes_the_action_stale_with_the_apply_message() {
        let (_d, s) = session();
        let id = edit_action(&s);
        write(&s, "a.ts", "one, edited\n");
        let r = s.recheck(Affected::Paths(&paths(&["a.ts"])), NOW).unwrap().unwrap();
        assert_eq!(r.stale, vec![id.clone()], "the action previewing a.ts is stale");
        match status(&s, &id) {
            ActionStatus::Stale { files, message } => {
                assert_eq!(files, vec!["a.ts"]);
                assert_eq!(
                    message,
                    "Preview is stale: 1 file changed on disk since the preview: a.ts (content changed). Nothing was written; discard this action or run the preview again.",
                    "the same words as an apply refused as stale"
                );
            }
            other => panic!("expected stale, got {other:?}"),
        }
    }

    #[test]
    fn a_file_changed_back_makes_the_action_pending_again() {
        let (_d, s) = session();
        let id = edit_action(&s);
        write(&s, "a.ts", "edited\n");
        s.recheck(Affected::Paths(&paths(&["a.ts"])), NOW).unwrap().unwrap();
        assert_eq!(status(&s, &id).as_str(), "stale");
        write(&s, "a.ts", "one\n");
        // Even a batch that does not name a.ts looks at it again: the action is stale for it.
        let r = s.recheck(Affected::Paths(&paths(&["unrelated.txt"])), NOW).unwrap().unwrap();
        assert_eq!(r.pending_again, vec![id.clone()]);
        assert_eq!(status(&s, &id), ActionStatus::Pending, "back to the previewed bytes: pending again");
    }

    #[test]
    fn stale_for_two_files_stays_stale_until_both_are_back() {
        let (_d, s) = session();
        let id = edit_action(&s);
        write(&s, "a.ts", "x\n");
        write(&s, "b.ts", "y\n");
        s.recheck(Affected::Paths(&paths(&["a.ts", "b.ts"])), NOW).unwrap().unwrap();
        write(&s, "a.ts", "one\n");
        s.recheck(Affected::Paths(&paths(&["a.ts"])), NOW).unwrap().unwrap();
        match status(&s, &id) {
            ActionStatus::Stale { files, message } => {
                assert_eq!(files, vec!["b.ts"], "a.ts is back; b.ts still differs");
                assert!(message.contains("b.ts (content changed)"), "{message}");
            }
            other => panic!("expected stale, got {other:?}"),
        }
    }

    #[test]
    fn a_deleted_file_and_a_created_target_make_it_stale() {
        let (_d, s) = session();
        write(&s, "gone.ts", "bye\n");
        let mut cs = ChangeSet::new();
        cs.delete("gone.ts", b"bye\n".to_vec()).create("src/new.ts", b"new\n".to_vec());
        let id = push(&s, cs);
        fs::remove_file(s.workspace().root().join("gone.ts")).unwrap();
        write(&s, "src/new.ts", "someone else's\n");
        s.recheck(Affected::Paths(&paths(&["gone.ts", "src"])), NOW).unwrap().unwrap();
        match status(&s, &id) {
            ActionStatus::Stale { files, message } => {
                assert_eq!(files, vec!["gone.ts", "src/new.ts"], "a folder event covers the files below it");
                assert!(message.contains("gone.ts (already deleted)") && message.contains("src/new.ts (now exists)"));
            }
            other => panic!("expected stale, got {other:?}"),
        }
    }

    #[test]
    fn a_rename_is_stale_when_its_source_changes_or_its_target_appears() {
        let (_d, s) = session();
        write(&s, "a.jpg", "A");
        write(&s, "b.jpg", "B");
        let mut cs = ChangeSet::new();
        cs.rename("a.jpg", "b.jpg", EntryKind::File, ContentHash::of(b"A"))
            .rename("b.jpg", "a.jpg", EntryKind::File, ContentHash::of(b"B"))
            .rename("c.jpg", "d.jpg", EntryKind::File, ContentHash::of(b"C"));
        write(&s, "c.jpg", "C");
        let id = push(&s, cs);
        let r = s.recheck(Affected::All, NOW).unwrap().unwrap();
        assert!(r.is_empty(), "a swap's targets are each other's sources: not stale");
        write(&s, "d.jpg", "D");
        s.recheck(Affected::Paths(&paths(&["d.jpg"])), NOW).unwrap().unwrap();
        assert!(matches!(status(&s, &id), ActionStatus::Stale { files, .. } if files == vec!["d.jpg"]));
        fs::remove_file(s.workspace().root().join("d.jpg")).unwrap();
        fs::remove_file(s.workspace().root().join("c.jpg")).unwrap();
        s.recheck(Affected::Paths(&paths(&["d.jpg", "c.jpg"])), NOW).unwrap().unwrap();
        match status(&s, &id) {
            ActionStatus::Stale { files, message } => {
                assert_eq!(files, vec!["c.jpg"], "the target is free again; the source is gone");
                assert!(message.contains("c.jpg (missing)"), "{message}");
            }
            other => panic!("expected stale, got {other:?}"),
        }
    }

    #[test]
    fn unrelated_paths_change_nothing_and_publish_nothing() {
        let (_d, s) = session();
        let id = edit_action(&s);
        let revision = s.store().revision();
        write(&s, "other.ts", "x\n");
        let r = s.recheck(Affected::Paths(&paths(&["other.ts", ".rdesk-apply.log"])), NOW).unwrap().unwrap();
        assert!(r.is_empty());
        assert_eq!(status(&s, &id), ActionStatus::Pending);
        assert_eq!(s.store().revision(), revision, "no queue-changed for a file no action previewed");
    }

    #[test]
    fn a_failed_action_is_left_alone() {
        let (_d, s) = session();
        let id = edit_action(&s);
        let failed = ActionStatus::Failed { error: "read-only".into() };
        s.store().set_status(&id, failed.clone());
        write(&s, "a.ts", "edited\n");
        let r = s.recheck(Affected::All, NOW).unwrap().unwrap();
        assert!(r.is_empty());
        assert_eq!(status(&s, &id), failed, "a failure is not drift: the re-check keeps it");
    }

    #[test]
    fn a_recheck_waits_for_an_apply_holding_the_workspace_lock() {
        let (_d, s) = session();
        edit_action(&s);
        let held = with_workspace_lock(s.workspace().root(), NOW, || {
            s.recheck(Affected::All, NOW).expect("the lock can be tried")
        })
        .unwrap()
        .expect("nobody else holds the lock");
        assert_eq!(held, None, "while an apply holds the lock, nothing is checked");
    }

    #[test]
    fn only_the_affected_action_changes_and_one_event_per_change_is_published() {
        let (_d, s) = session();
        let first = edit_action(&s);
        write(&s, "c.ts", "three\n");
        let mut cs = ChangeSet::new();
        cs.edit("c.ts", b"three\n".to_vec(), b"THREE\n".to_vec());
        let second = push(&s, cs);
        let mut events = s.store().subscribe();
        write(&s, "c.ts", "edited\n");
        s.recheck(Affected::Paths(&paths(&["c.ts"])), NOW).unwrap().unwrap();
        assert_eq!(status(&s, &first), ActionStatus::Pending);
        assert_eq!(status(&s, &second).as_str(), "stale");
        assert_eq!(events.try_recv().unwrap().change, StoreChange::StatusChanged { id: second });
        assert!(events.try_recv().is_err(), "one status change, one event");
    }

    #[test]
    fn since_preview_diffs_the_previewed_content_against_the_disk_now() {
        let (_d, s) = session();
        let id = edit_action(&s);
        write(&s, "a.ts", "one\nadded by an editor\n");
        let sp = s.since_preview(&id, "a.ts").unwrap();
        assert_eq!(sp.why.as_deref(), Some("content changed"));
        assert_eq!((sp.diff.added, sp.diff.removed), (1, 0));
        let added: Vec<_> = sp.diff.hunks.iter().flat_map(|h| &h.lines).filter(|l| l.text.contains("editor")).collect();
        assert_eq!(added.len(), 1, "the line the editor added is in the diff");
        fs::remove_file(s.workspace().root().join("b.ts")).unwrap();
        let gone = s.since_preview(&id, "b.ts").unwrap();
        assert_eq!(gone.why.as_deref(), Some("deleted"));
        assert_eq!((gone.diff.added, gone.diff.removed), (0, 1), "every previewed line is gone");
    }

    #[test]
    fn since_preview_refuses_unknown_actions_and_paths_with_what_to_do() {
        let (_d, s) = session();
        let id = edit_action(&s);
        let e = s.since_preview(&id, "nope.ts").unwrap_err();
        assert!(e.to_string().contains("does not preview nope.ts"), "{e}");
        let e = s.since_preview("t-99", "a.ts").unwrap_err();
        assert!(e.to_string().contains("t-99 is not on the stack"), "{e}");
    }

    #[test]
    fn since_preview_of_a_target_that_appeared_shows_its_content() {
        let (_d, s) = session();
        let mut cs = ChangeSet::new();
        cs.create("n.ts", Arc::<[u8]>::from(&b"planned\n"[..]));
        let id = push(&s, cs);
        write(&s, "n.ts", "theirs\n");
        let sp = s.since_preview(&id, "n.ts").unwrap();
        assert_eq!(sp.why.as_deref(), Some("now exists"));
        assert_eq!(sp.diff.added, 1);
    }
}
