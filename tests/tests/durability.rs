//! What an apply guarantees beyond its own process: races with editors and other programs
//! during the commit, a folder swapped for a symlink, file metadata (mode, owner, hard
//! links, writability for the current user), a full disk, and two processes resolving in
//! one workspace. Races are made with the engine's test hook, which runs at the pause
//! between the plan and the commit; the lock test uses a real child process.

use std::fs;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use resolve_engine::fault::{self, Hook};
use resolve_engine::{
    Actor, ApplyError, ChangeSet, CustomToolPendingAction, PendingActionStore, ResolvePolicy, Session, Workspace,
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
fn the_owner_of_a_replaced_file_is_kept() {
    if !rustix::process::geteuid().is_root() {
        println!("skipped: changing a file's owner to another user needs root (the unprivileged case is tested in as_an_unprivileged_user_*)");
        return;
    }
    let (_d, root) = workspace(&[("theirs.txt", "old\n")]);
    std::os::unix::fs::chown(root.join("theirs.txt"), Some(65534), Some(65534)).unwrap();
    let ws = Workspace::open(&root).unwrap();
    let mut cs = ChangeSet::new();
    cs.edit("theirs.txt", b"old\n".to_vec(), b"new\n".to_vec());
    cs.apply(&ws).unwrap();
    let m = fs::metadata(root.join("theirs.txt")).unwrap();
    assert_eq!((m.uid(), m.gid()), (65534, 65534), "owner and group kept");
    assert_eq!(read(&root, "theirs.txt"), "new\n");
}

/// Runs the probe as `nobody` (uid 65534) on `root`, applying `plan`; returns its stdout.
fn probe_as_nobody(root: &Path, plan: serde_json::Value) -> Option<String> {
    if !rustix::process::geteuid().is_root() {
        return None;
    }
    // The probe is copied where nobody may run it (the build folder may be private).
    let bin_dir = tempfile::tempdir().unwrap();
    let bin = bin_dir.path().join("apply-probe");
    fs::copy(PROBE, &bin).unwrap();
    for d in [bin_dir.path(), root.parent().unwrap()] {
        fs::set_permissions(d, fs::Permissions::from_mode(0o755)).unwrap();
    }
    let plan_file = bin_dir.path().join("plan.json");
    fs::write(&plan_file, plan.to_string()).unwrap();
    fs::set_permissions(&plan_file, fs::Permissions::from_mode(0o644)).unwrap();
    use std::os::unix::process::CommandExt;
    let out = Command::new(&bin).arg("apply").arg(root).arg(&plan_file).uid(65534).gid(65534).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    Some(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

#[test]
fn as_an_unprivileged_user_a_file_it_cannot_write_or_own_is_refused_before_anything_is_written() {
    // One workspace, writable by everyone (so only the files themselves can refuse).
    let (_d, root) = workspace(&[("mine.txt", "m\n"), ("roots-0644.txt", "r\n"), ("roots-0666.txt", "w\n")]);
    fs::set_permissions(&root, fs::Permissions::from_mode(0o777)).unwrap();
    fs::set_permissions(root.join("roots-0644.txt"), fs::Permissions::from_mode(0o644)).unwrap();
    fs::set_permissions(root.join("roots-0666.txt"), fs::Permissions::from_mode(0o666)).unwrap();
    if rustix::process::geteuid().is_root() {
        std::os::unix::fs::chown(root.join("mine.txt"), Some(65534), Some(65534)).unwrap();
    }
    let edit = |p: &str, after: &str| json!({"op": "edit", "path": p, "after": after});
    // A root-owned 0644 file: its mode bits allow writing for someone, but not for nobody.
    let Some(out) = probe_as_nobody(&root, json!([edit("mine.txt", "M\n"), edit("roots-0644.txt", "R\n")])) else {
        println!("skipped: dropping privileges to nobody needs root");
        return;
    };
    assert!(out.starts_with("ERROR 1 file is read-only: roots-0644.txt."), "{out}");
    // A root-owned 0666 file: writable, but its new contents would belong to nobody.
    let out = probe_as_nobody(&root, json!([edit("mine.txt", "M\n"), edit("roots-0666.txt", "W\n")])).unwrap();
    assert!(out.contains("roots-0666.txt (it belongs to another user (uid 0)"), "{out}");
    assert!(out.contains("Nothing was written"), "{out}");
    assert_eq!((read(&root, "mine.txt"), read(&root, "roots-0644.txt")), ("m\n".into(), "r\n".into()));
    assert_eq!(read(&root, "roots-0666.txt"), "w\n");
    assert!(leftovers(&snapshot(&root)).is_empty());
    // Its own file applies, and stays its own.
    let out = probe_as_nobody(&root, json!([edit("mine.txt", "M\n")])).unwrap();
    assert_eq!(out, "APPLIED");
    assert_eq!(fs::metadata(root.join("mine.txt")).unwrap().uid(), 65534);
}

/// A tmpfs of `size` mounted for the test (root only), unmounted on drop.
struct Tmpfs(tempfile::TempDir);

impl Tmpfs {
    fn mount(size: &str) -> Option<Self> {
        if !rustix::process::geteuid().is_root() {
            return None;
        }
        let dir = tempfile::tempdir().unwrap();
        let ok = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir.path())
            .status()
            .is_ok_and(|s| s.success());
        ok.then_some(Self(dir))
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(self.0.path()).status();
    }
}

#[test]
fn a_full_disk_fails_the_apply_with_every_file_as_it_was() {
    let Some(fs_) = Tmpfs::mount("256k") else {
        println!("skipped: mounting a small tmpfs needs root and mount(8)");
        return;
    };
    let root = fs_.0.path().canonicalize().unwrap();
    fs::write(root.join("a.txt"), "small a\n").unwrap();
    fs::write(root.join("b.txt"), "small b\n").unwrap();
    let before = snapshot(&root);
    let ws = Workspace::open(&root).unwrap();
    let mut cs = ChangeSet::new();
    cs.edit("a.txt", b"small a\n".to_vec(), b"A\n".to_vec()).edit(
        "b.txt",
        b"small b\n".to_vec(),
        vec![b'x'; 1024 * 1024],
    );
    let err = cs.apply(&ws).unwrap_err();
    assert!(err.to_string().contains("No space left on device"), "{err}");
    assert!(err.to_string().contains("b.txt"), "{err}");
    assert_eq!(snapshot(&root), before, "every file as it was, no temporary left");
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
