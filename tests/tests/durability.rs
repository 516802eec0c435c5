//! What an apply guarantees beyond its own process: races with editors and other programs
//! during the commit, a folder swapped for a symlink, file metadata (mode, hard links),
//! failed syncs (every real `fsync`), a rollback that could not put everything back, and
//! two processes resolving in one workspace. Races are made with the engine's test hook,
//! which runs at the pause between the plan and the commit; the lock test uses a real child
//! process. Tests that need root or another user are in `privileged.rs`.

use std::fs;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};

use resolve_engine::fault::{self, Hook};
use resolve_engine::{
    Actor, ApplyError, ChangeSet, ContentHash, CustomToolPendingAction, EntryKind, PendingActionStore, RecoveryOutcome,
    ResolvePolicy, Session, Workspace,
};
use resolve_scenarios::fixture::{leftovers, snapshot};
use serde_json::json;

const PROBE: &str = env!("CARGO_BIN_EXE_apply-probe");

fn workspace(files: &[(&str, &str)]) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    for (p, body) in files {
        let abs = root.join(p);
        fs::create_dir_all(abs.parent().unwrap()).unwrap();
        fs::write(abs, body).unwrap();
    }
    (dir, root)
}

/// Runs `f` once, at the pause between the plan and the commit of the next apply in `root`.
fn at_the_pause(root: &Path, f: impl FnOnce() + Send + 'static) {
    let mut f = Some(f);
    fault::set_hook(root, move |p| {
        if p.phase == "planned" {
            if let Some(f) = f.take() {
                f();
            }
        }
        Hook::Continue
    });
}

fn read(root: &Path, p: &str) -> String {
    fs::read_to_string(root.join(p)).unwrap()
}

#[tokio::test]
async fn a_save_during_the_apply_is_kept_and_the_action_becomes_stale() {
    let (_d, root) = workspace(&[("a.txt", "A\n"), ("b.txt", "B\n"), ("c.txt", "C\n")]);
    let s = Session::with_store(&root, ResolvePolicy::Agent, PendingActionStore::with_id_prefix("pa-")).unwrap();
    let mut cs = ChangeSet::new();
    for (p, old, new) in [("a.txt", "A\n", "A2\n"), ("b.txt", "B\n", "B2\n"), ("c.txt", "C\n", "C2\n")] {
        cs.edit(p, old.as_bytes().to_vec(), new.as_bytes().to_vec());
    }
    s.api()
        .push_pending_action(CustomToolPendingAction::from_change_set("Edit: 3 files", cs, s.workspace().clone(), "ok"))
        .unwrap();
    // An editor saves b.txt after the hashes were checked, before anything was moved.
    let b = root.join("b.txt");
    at_the_pause(&root, move || fs::write(b, "the person's edit\n").unwrap());
    let r = s.call(Actor::Person, "resolve", json!({"action": "apply", "reason": "go"})).await;
    fault::clear_hook(&root);
    assert_eq!(r.error_code.as_deref(), Some("stale"), "{}", r.text_content());
    assert!(r.text_content().contains("b.txt (changed during the apply)"), "{}", r.text_content());
    assert_eq!(read(&root, "b.txt"), "the person's edit\n", "the save is kept");
    assert_eq!((read(&root, "a.txt"), read(&root, "c.txt")), ("A\n".into(), "C\n".into()), "nothing else written");
    assert!(leftovers(&snapshot(&root)).is_empty());
    assert_eq!(s.store().peek().unwrap().status.as_str(), "stale", "the action stays, marked stale");
}

#[test]
fn a_file_that_appears_at_a_create_or_rename_target_during_the_apply_is_not_overwritten() {
    for kind in ["create", "rename"] {
        let (_d, root) = workspace(&[("a.txt", "A\n"), ("from.txt", "moving\n")]);
        let ws = Workspace::open(&root).unwrap();
        let mut cs = ChangeSet::new();
        cs.edit("a.txt", b"A\n".to_vec(), b"A2\n".to_vec());
        let target = if kind == "create" {
            cs.create("new.txt", b"ours\n".to_vec());
            "new.txt"
        } else {
            let h = resolve_engine::ContentHash::of(b"moving\n");
            cs.rename("from.txt", "to.txt", resolve_engine::EntryKind::File, h);
            "to.txt"
        };
        let appeared = root.join(target);
        at_the_pause(&root, move || fs::write(appeared, "theirs\n").unwrap());
        let err = cs.apply(&ws).unwrap_err();
        fault::clear_hook(&root);
        assert!(matches!(err, ApplyError::Stale { .. }), "{kind}: {err}");
        assert!(err.to_string().contains(&format!("{target} (appeared during the apply)")), "{kind}: {err}");
        assert_eq!(read(&root, target), "theirs\n", "{kind}: the new file is not overwritten");
        assert_eq!(read(&root, "a.txt"), "A\n", "{kind}: the edit was rolled back");
        if kind == "rename" {
            assert_eq!(read(&root, "from.txt"), "moving\n", "the source is back");
        }
        assert!(leftovers(&snapshot(&root)).is_empty(), "{kind}");
    }
}

#[test]
fn a_folder_swapped_for_a_symlink_during_the_apply_gets_nothing_written_outside() {
    let (_d, root) = workspace(&[("top.txt", "T\n"), ("sub/a.txt", "A\n")]);
    let outside = tempfile::tempdir().unwrap();
    fs::write(outside.path().join("a.txt"), "A\n").unwrap();
    let before_outside = snapshot(outside.path());
    let ws = Workspace::open(&root).unwrap();
    let mut cs = ChangeSet::new();
    cs.edit("top.txt", b"T\n".to_vec(), b"T2\n".to_vec())
        .edit("sub/a.txt", b"A\n".to_vec(), b"A2\n".to_vec())
        .create("sub/new.txt", b"new\n".to_vec());
    let (sub, target) = (root.join("sub"), outside.path().to_path_buf());
    at_the_pause(&root, move || {
        fs::rename(&sub, sub.with_file_name("sub.moved")).unwrap();
        std::os::unix::fs::symlink(&target, &sub).unwrap();
    });
    let err = cs.apply(&ws).unwrap_err();
    fault::clear_hook(&root);
    assert!(err.to_string().contains("sub"), "the error names the folder: {err}");
    assert!(err.to_string().contains("Every file was restored"), "{err}");
    assert_eq!(snapshot(outside.path()), before_outside, "nothing written outside the workspace");
    assert_eq!(read(&root, "top.txt"), "T\n");
    assert_eq!(read(&root, "sub.moved/a.txt"), "A\n");
    assert!(leftovers(&snapshot(&root)).is_empty());
}

#[test]
fn a_0600_file_keeps_its_mode_and_its_new_contents_are_never_readable_by_others() {
    let (_d, root) = workspace(&[("secret.env", "TOKEN=old\n")]);
    fs::set_permissions(root.join("secret.env"), fs::Permissions::from_mode(0o600)).unwrap();
    let ws = Workspace::open(&root).unwrap();
    let mut cs = ChangeSet::new();
    cs.edit("secret.env", b"TOKEN=old\n".to_vec(), b"TOKEN=new\n".to_vec());
    // Once staged, before the rename into place, the temporary file's mode is already 0600.
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let (seen2, root2) = (seen.clone(), root.clone());
    fault::set_hook(&root, move |p| {
        if p.phase == "commit" {
            for e in fs::read_dir(&root2).unwrap() {
                let e = e.unwrap();
                if e.file_name().to_string_lossy().ends_with(".tmp") {
                    seen2.lock().unwrap().push(e.metadata().unwrap().mode() & 0o777);
                }
            }
        }
        Hook::Continue
    });
    cs.apply(&ws).unwrap();
    fault::clear_hook(&root);
    assert_eq!(*seen.lock().unwrap(), vec![0o600], "the staged file had the target's mode from the start");
    assert_eq!(fs::metadata(root.join("secret.env")).unwrap().mode() & 0o777, 0o600);
    assert_eq!(read(&root, "secret.env"), "TOKEN=new\n");
}

#[test]
fn a_hard_linked_file_is_refused_and_keeps_its_links() {
    let (_d, root) = workspace(&[("a.txt", "shared\n")]);
    fs::hard_link(root.join("a.txt"), root.join("other-name.txt")).unwrap();
    let ws = Workspace::open(&root).unwrap();
    let mut cs = ChangeSet::new();
    cs.edit("a.txt", b"shared\n".to_vec(), b"changed\n".to_vec());
    let err = cs.apply(&ws).unwrap_err();
    assert!(matches!(err, ApplyError::Refused { .. }), "{err}");
    assert!(err.to_string().contains("a.txt (it has 2 hard links"), "{err}");
    assert!(err.to_string().contains("Nothing was written"), "{err}");
    let (a, b) = (fs::metadata(root.join("a.txt")).unwrap(), fs::metadata(root.join("other-name.txt")).unwrap());
    assert_eq!((a.ino(), a.nlink()), (b.ino(), 2), "still one file with two names");
    assert_eq!(read(&root, "a.txt"), "shared\n");
}

#[test]
fn two_processes_never_interleave_their_commits() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let plan = resolve_scenarios::fixture::big(&root, 3);
    fs::write(root.join("other.txt"), "other\n").unwrap();
    let plan_dir = tempfile::tempdir().unwrap();
    let plan_file = plan_dir.path().join("plan.json");
    fs::write(&plan_file, serde_json::to_string(&plan).unwrap()).unwrap();
    // The first process stops in the middle of its commit, holding the workspace lock.
    let mut child = Command::new(PROBE)
        .arg("apply")
        .arg(&root)
        .arg(&plan_file)
        .env("RDESK_TEST_PAUSE_AT", "commit:40")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    while !line.starts_with("RDESK_PAUSED") {
        line.clear();
        assert!(stderr.read_line(&mut line).unwrap() > 0, "the probe ended before pausing");
    }
    // This process's apply waits, then refuses; nothing of it is written.
    let ws = Workspace::open(&root).unwrap();
    let mut cs = ChangeSet::new();
    cs.edit("other.txt", b"other\n".to_vec(), b"OTHER\n".to_vec());
    let err = cs.apply(&ws).unwrap_err();
    assert!(matches!(err, ApplyError::Busy { .. }), "{err}");
    assert!(err.to_string().starts_with("Another apply is running in this workspace"), "{err}");
    assert_eq!(read(&root, "other.txt"), "other\n");
    // The first one goes on and finishes; then this one applies.
    child.stdin.as_mut().unwrap().write_all(b"\n").unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "APPLIED");
    cs.apply(&ws).unwrap();
    assert_eq!(read(&root, "other.txt"), "OTHER\n");
    assert!(leftovers(&snapshot(&root)).is_empty());
}

#[test]
fn a_failed_sync_is_a_failed_apply_with_every_file_as_it_was() {
    for index in 0..3 {
        let (_d, root) = workspace(&[("a.txt", "A\n"), ("gone.txt", "G\n"), ("from.txt", "F\n")]);
        let before = snapshot(&root);
        let ws = Workspace::open(&root).unwrap();
        let mut cs = ChangeSet::new();
        cs.edit("a.txt", b"A\n".to_vec(), b"A2\n".to_vec())
            .delete("gone.txt", b"G\n".to_vec())
            .create("new/dir/n.txt", b"N\n".to_vec())
            .rename("from.txt", "to.txt", resolve_engine::EntryKind::File, resolve_engine::ContentHash::of(b"F\n"));
        // The folder sync that ends staging (0), parking (1) or the commit (2) fails.
        fault::set_hook(
            &root,
            move |p| if p.phase == "sync" && p.index == index { Hook::Fail } else { Hook::Continue },
        );
        let err = cs.apply(&ws).unwrap_err();
        fault::clear_hook(&root);
        assert!(err.to_string().starts_with("Could not sync the workspace: injected fault"), "{index}: {err}");
        assert!(err.to_string().contains("Every file was restored"), "{index}: {err}");
        assert_eq!(snapshot(&root), before, "sync {index}: every file as it was");
    }
}

/// The change set of the sync tests: an edit, a delete, a create in new folders, a rename.
fn sync_case() -> (tempfile::TempDir, PathBuf, ChangeSet) {
    let (d, root) = workspace(&[("a.txt", "A\n"), ("gone.txt", "G\n"), ("from.txt", "F\n")]);
    let mut cs = ChangeSet::new();
    cs.edit("a.txt", b"A\n".to_vec(), b"A2\n".to_vec())
        .delete("gone.txt", b"G\n".to_vec())
        .create("new/dir/n.txt", b"N\n".to_vec())
        .rename("from.txt", "to.txt", EntryKind::File, ContentHash::of(b"F\n"));
    (d, root, cs)
}

#[test]
fn a_failed_fsync_of_any_file_folder_or_the_record_fails_the_apply_whole_or_after_the_commit_is_a_warning() {
    // Every point of one apply, in order, with what each `fsync` point syncs.
    let (_d, root, cs) = sync_case();
    let seen: Arc<Mutex<Vec<(String, usize, String)>>> = Arc::default();
    let log = seen.clone();
    fault::set_hook(&root, move |p| {
        log.lock().unwrap().push((p.phase.to_string(), p.index, p.target.to_string()));
        Hook::Continue
    });
    cs.apply(&Workspace::open(&root).unwrap()).unwrap();
    fault::clear_hook(&root);
    let seen = seen.lock().unwrap().clone();
    let syncs: Vec<&(String, usize, String)> = seen.iter().filter(|(phase, ..)| phase == "fsync").collect();
    let targets: Vec<&str> = syncs.iter().map(|(_, _, t)| t.as_str()).collect();
    // The record (file, then the root), each temporary, the folders, the marks, the clean-up.
    assert_eq!(&targets[..2], [".rdesk-apply.log", ""], "the record is synced, then its folder: {targets:?}");
    for tmp_of in ["", "new/dir"] {
        assert!(
            targets.iter().any(|t| t.starts_with(tmp_of) && t.ends_with(".tmp")),
            "a temporary in {tmp_of:?} is synced: {targets:?}"
        );
    }
    assert!(targets.contains(&"new/dir") && targets.contains(&"new"), "new folders are synced: {targets:?}");
    assert_eq!(targets.iter().filter(|t| **t == ".rdesk-apply.log").count(), 4, "the record and its 3 marks");
    // The committed mark's own sync: the first `fsync` after the point `mark:2`.
    let mark = seen.iter().position(|(phase, index, _)| phase == "mark" && *index == 2).expect("the committed mark");
    let committed = seen[mark..].iter().find(|(phase, ..)| phase == "fsync").expect("its sync").1;
    assert_eq!(seen[mark..].iter().find(|(phase, ..)| phase == "fsync").unwrap().2, ".rdesk-apply.log");

    for (_, index, target) in syncs {
        let (_d, root, cs) = sync_case();
        let before = snapshot(&root);
        let ws = Workspace::open(&root).unwrap();
        let after = {
            let mut expect = before.clone();
            use resolve_scenarios::fixture::Entry;
            expect.insert("a.txt".into(), Entry::File(b"A2\n".to_vec()));
            expect.remove("gone.txt");
            expect.insert("new".into(), Entry::Dir);
            expect.insert("new/dir".into(), Entry::Dir);
            expect.insert("new/dir/n.txt".into(), Entry::File(b"N\n".to_vec()));
            let f = expect.remove("from.txt").unwrap();
            expect.insert("to.txt".into(), f);
            expect
        };
        let at = *index;
        fault::set_hook(&root, move |p| if p.phase == "fsync" && p.index == at { Hook::Fail } else { Hook::Continue });
        let result = cs.apply(&ws);
        fault::clear_hook(&root);
        let now = snapshot(&root);
        if *index <= committed {
            let err = result.expect_err(&format!("fsync {index} ({target:?}) fails the apply"));
            let text = err.to_string();
            assert!(text.contains("injected fault at fsync"), "fsync {index} ({target:?}): {text}");
            assert!(
                text.contains("Every file was restored") || text.contains("nothing was changed"),
                "fsync {index} ({target:?}): {text}"
            );
            assert_eq!(now, before, "fsync {index} ({target:?}): every file as it was, nothing left behind");
        } else {
            let report = result.unwrap_or_else(|e| panic!("fsync {index} ({target:?}) is after the commit: {e}"));
            assert!(
                report.warnings.iter().any(|w| w.contains("injected fault at fsync")),
                "fsync {index} ({target:?}): the failed sync is a warning: {:?}",
                report.warnings
            );
            assert_eq!(now, after, "fsync {index} ({target:?}): every file written");
        }
    }
}

/// The scenario: a rollback that could not restore a file, the person writing a file
/// of the change set by hand meanwhile, then a later recovery.
#[test]
fn after_a_rollback_that_could_not_restore_a_later_recovery_never_removes_or_replaces_what_the_person_wrote() {
    let (_d, root) = workspace(&[("gone.txt", "old gone\n"), ("x.txt", "X\n")]);
    let ws = Workspace::open(&root).unwrap();
    let mut cs = ChangeSet::new();
    cs.create("new.txt", b"the new file\n".to_vec()) // op 0: moved in, then removed by the rollback
        .delete("gone.txt", b"old gone\n".to_vec()) // op 1: its restore fails
        .edit("x.txt", b"X\n".to_vec(), b"X2\n".to_vec()); // op 2: the commit fails here
    let gone = root.join("gone.txt");
    fault::set_hook(&root, move |p| match (p.phase, p.index) {
        ("commit", 2) => Hook::Fail,
        // The rollback runs newest first: index 1 is the delete. Someone saves gone.txt
        // just before it is put back, so putting it back fails.
        ("rollback", 1) => {
            fs::write(&gone, "saved during the rollback\n").unwrap();
            Hook::Continue
        }
        _ => Hook::Continue,
    });
    let err = cs.apply(&ws).unwrap_err();
    fault::clear_hook(&root);
    let text = err.to_string();
    assert!(text.contains("Restoring failed for:") && text.contains("gone.txt"), "{text}");
    let record = fs::read_to_string(root.join(".rdesk-apply.log")).expect("the record stays");
    assert!(record.ends_with("{\"rollback\":\"incomplete\"}\n"), "the record is marked: {record}");
    let kept = leftovers(&snapshot(&root)).into_iter().cloned().collect::<Vec<_>>();
    assert!(kept.iter().any(|n| n.ends_with("-2.tmp")), "x.txt's temporary is kept as evidence: {kept:?}");
    assert!(kept.iter().any(|n| n.ends_with("-1.bak")), "gone.txt's old contents are kept: {kept:?}");
    assert!(!root.join("new.txt").exists(), "the new file was removed by the rollback");

    // The person writes new.txt by hand (the same change, done themselves) and edits x.txt.
    fs::write(root.join("new.txt"), "the new file\n").unwrap();
    fs::write(root.join("x.txt"), "X2\n").unwrap();
    let s = Session::open(&root, ResolvePolicy::Human).unwrap();
    let r = s.recovery().expect("the record is recovered again").clone();
    assert_eq!(r.outcome, RecoveryOutcome::Incomplete, "{}", r.message());
    assert_eq!(read(&root, "new.txt"), "the new file\n", "the person's new.txt is not removed: {}", r.message());
    assert_eq!(read(&root, "x.txt"), "X2\n", "the person's x.txt is not replaced");
    assert_eq!(read(&root, "gone.txt"), "saved during the rollback\n", "the save is not replaced");
    assert!(r.message().contains("new.txt (left as it is"), "{}", r.message());
    assert!(r.message().contains("gone.txt (its contents are in"), "{}", r.message());
    drop(s);
    // An apply now says why it cannot run, and writes nothing.
    let mut other = ChangeSet::new();
    other.edit("x.txt", b"X2\n".to_vec(), b"X3\n".to_vec());
    let err = other.apply(&ws).unwrap_err();
    assert!(matches!(err, ApplyError::Unfinished { .. }), "{err}");
    assert!(err.to_string().contains(".rdesk-apply.log") && err.to_string().contains("Nothing was written"), "{err}");
    assert_eq!(read(&root, "x.txt"), "X2\n");

    // The person lets the old gone.txt come back: the next open finishes, keeping new.txt.
    fs::remove_file(root.join("gone.txt")).unwrap();
    let s = Session::open(&root, ResolvePolicy::Human).unwrap();
    let r = s.recovery().expect("recovered").clone();
    assert_eq!(r.outcome, RecoveryOutcome::RolledBack, "{}", r.message());
    assert_eq!(read(&root, "gone.txt"), "old gone\n");
    assert_eq!(read(&root, "new.txt"), "the new file\n", "still the person's");
    assert_eq!(read(&root, "x.txt"), "X2\n");
    assert!(leftovers(&snapshot(&root)).is_empty(), "record and temporaries gone: {:?}", leftovers(&snapshot(&root)));
}
