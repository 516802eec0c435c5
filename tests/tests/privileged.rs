//! Durability tests that need root, or a user to drop to: the owner of a replaced file, an
//! unprivileged user's apply (the probe runs as `nobody`, uid 65534), a full disk (a small
//! tmpfs, which needs root and mount(8)). Each needs something only known at run time, so
//! the harness is libtest-mimic's: a test whose condition is not met is reported as
//! ignored, with the reason as its kind, never passed.

use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::Command;

use libtest_mimic::{Arguments, Trial};
use resolve_engine::{ChangeSet, Workspace};
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

fn read(root: &Path, p: &str) -> String {
    fs::read_to_string(root.join(p)).unwrap()
}

fn the_owner_of_a_replaced_file_is_kept() {
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
fn probe_as_nobody(root: &Path, plan: serde_json::Value) -> String {
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
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

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
    let out = probe_as_nobody(&root, json!([edit("mine.txt", "M\n"), edit("roots-0644.txt", "R\n")]));
    assert!(out.starts_with("ERROR 1 file is read-only: roots-0644.txt."), "{out}");
    // A root-owned 0666 file: writable, but its new contents would belong to nobody.
    let out = probe_as_nobody(&root, json!([edit("mine.txt", "M\n"), edit("roots-0666.txt", "W\n")]));
    assert!(out.contains("roots-0666.txt (it belongs to another user (uid 0)"), "{out}");
    assert!(out.contains("Nothing was written"), "{out}");
    assert_eq!((read(&root, "mine.txt"), read(&root, "roots-0644.txt")), ("m\n".into(), "r\n".into()));
    assert_eq!(read(&root, "roots-0666.txt"), "w\n");
    assert!(leftovers(&snapshot(&root)).is_empty());
    // Its own file applies, and stays its own.
    let out = probe_as_nobody(&root, json!([edit("mine.txt", "M\n")]));
    assert_eq!(out, "APPLIED");
    assert_eq!(fs::metadata(root.join("mine.txt")).unwrap().uid(), 65534);
}

/// A tmpfs of `size` mounted for the test (root only), unmounted on drop.
struct Tmpfs(tempfile::TempDir);

impl Tmpfs {
    fn mount(size: &str) -> Option<Self> {
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

fn a_full_disk_fails_the_apply_with_every_file_as_it_was() {
    let fs_ = Tmpfs::mount("256k").expect("a tmpfs mounts (checked before the run)");
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

/// A trial that runs only when `needs` is `None`; otherwise reported ignored, `needs` its kind.
fn trial(name: &str, needs: Option<&str>, f: fn()) -> Trial {
    Trial::test(name, move || {
        f();
        Ok(())
    })
    .with_ignored_flag(needs.is_some())
    .with_kind(needs.unwrap_or_default())
}

fn main() {
    let args = Arguments::from_args();
    let root = rustix::process::geteuid().is_root();
    let needs_root = (!root).then_some("needs root");
    let tmpfs = if !root {
        Some("needs root")
    } else if Tmpfs::mount("64k").is_none() {
        Some("needs mount(8) to mount a tmpfs")
    } else {
        None
    };
    let trials = vec![
        trial("the_owner_of_a_replaced_file_is_kept", needs_root, the_owner_of_a_replaced_file_is_kept),
        trial(
            "as_an_unprivileged_user_a_file_it_cannot_write_or_own_is_refused_before_anything_is_written",
            needs_root,
            as_an_unprivileged_user_a_file_it_cannot_write_or_own_is_refused_before_anything_is_written,
        ),
        trial(
            "a_full_disk_fails_the_apply_with_every_file_as_it_was",
            tmpfs,
            a_full_disk_fails_the_apply_with_every_file_as_it_was,
        ),
    ];
    libtest_mimic::run(&args, trials).exit();
}
