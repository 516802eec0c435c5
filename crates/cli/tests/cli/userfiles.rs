//! Many processes, one user (issue 41): `rdesk trust` processes started together change the
//! trust file under its lock, so none loses another's change; a trust and a revoke racing
//! end as they report; a lock holder killed with SIGKILL blocks no one; a reader never sees a
//! half-written file; a file that is not valid JSON is named and never overwritten. Real
//! processes (the `rdesk` binary, and this test binary run again as a lock holder), real
//! files, no sleeps: every wait is on a process or on a line it prints.

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use resolve_desk_core::TrustStore;

/// A user's config folder and folders with tools of their own.
struct Home {
    dir: tempfile::TempDir,
    folders: Vec<PathBuf>,
}

impl Home {
    fn new(folders: usize) -> Home {
        let dir = tempfile::tempdir().unwrap();
        let folders = (0..folders)
            .map(|i| {
                let root = dir.path().join(format!("ws{i}"));
                let tool = root.join(".resolve/tools/t");
                std::fs::create_dir_all(&tool).unwrap();
                let manifest = serde_json::json!({
                    "name": "t", "label": "T", "description": "d", "parameters": {"type": "object"}, "command": "true",
                });
                std::fs::write(tool.join("tool.json"), manifest.to_string()).unwrap();
                root.canonicalize().unwrap()
            })
            .collect();
        Home { dir, folders }
    }

    fn config(&self) -> PathBuf {
        self.dir.path().join("config")
    }

    fn store(&self) -> TrustStore {
        TrustStore::in_config_dir(&self.config())
    }

    fn trust_file(&self) -> PathBuf {
        self.store().path().to_path_buf()
    }

    fn spawn(&self, args: &[&str]) -> Child {
        Command::new(env!("CARGO_BIN_EXE_rdesk"))
            .args(args)
            .env("XDG_CONFIG_HOME", self.config())
            .env("XDG_STATE_HOME", self.dir.path().join("state"))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("rdesk starts")
    }

    fn trust(&self, folder: &Path) -> Child {
        self.spawn(&["trust", folder.to_str().unwrap(), "--yes"])
    }

    fn revoke(&self, folder: &Path) -> Child {
        self.spawn(&["trust", "--revoke", folder.to_str().unwrap()])
    }

    /// The trusted folders on disk.
    fn trusted(&self) -> BTreeSet<PathBuf> {
        self.store().list().unwrap().into_iter().map(|e| e.folder).collect()
    }
}

fn done(child: Child) -> Output {
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success() && out.stderr.is_empty(), "{out:?}");
    out
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn sixteen_rdesk_trust_at_once_all_persist_over_a_hundred_rounds() {
    let home = Home::new(16);
    let all: BTreeSet<PathBuf> = home.folders.iter().cloned().collect();
    for round in 0..100 {
        let _ = std::fs::remove_file(home.trust_file());
        let children: Vec<Child> = home.folders.iter().map(|f| home.trust(f)).collect();
        for child in children {
            assert!(stdout(&done(child)).contains("Trusted."));
        }
        assert_eq!(home.trusted(), all, "round {round}: every folder trusted, none lost");
    }
}

#[test]
fn a_trust_and_a_revoke_racing_end_in_the_order_they_report() {
    let home = Home::new(8);
    let (mut revoke_first, mut trust_first) = (0, 0);
    for round in 0..30 {
        let _ = std::fs::remove_file(home.trust_file());
        // Started together, in either order of spawning.
        let pairs: Vec<(Child, Child)> = home
            .folders
            .iter()
            .enumerate()
            .map(|(i, f)| {
                if (i + round) % 2 == 0 {
                    let r = home.revoke(f);
                    (home.trust(f), r)
                } else {
                    (home.trust(f), home.revoke(f))
                }
            })
            .collect();
        let mut want = BTreeSet::new();
        for (folder, (trust, revoke)) in home.folders.iter().zip(pairs) {
            assert!(stdout(&done(trust)).contains("Trusted."));
            let said = stdout(&done(revoke));
            if said.contains("was not trusted; nothing changed") {
                // The revoke took the lock first: the trust came after it and stands.
                revoke_first += 1;
                want.insert(folder.clone());
            } else {
                assert!(said.contains("No longer trusted"), "{said}");
                trust_first += 1;
            }
        }
        assert_eq!(home.trusted(), want, "round {round}: the file says what the commands said");
    }
    eprintln!("revoke first {revoke_first} times, trust first {trust_first} times");
}

#[test]
fn the_windows_trust_and_rdesk_trust_at_once_lose_nothing() {
    // The window trusts a folder through `Desk::trust_tools`, i.e. `TrustStore::trust_now`:
    // this process does that while `rdesk trust` processes trust other folders.
    let home = Home::new(16);
    let (window, cli) = home.folders.split_at(8);
    for round in 0..20 {
        let _ = std::fs::remove_file(home.trust_file());
        let children: Vec<Child> = cli.iter().map(|f| home.trust(f)).collect();
        std::thread::scope(|s| {
            for f in window {
                let store = home.store();
                s.spawn(move || store.trust_now(f, None).unwrap());
            }
        });
        children.into_iter().for_each(|c| drop(done(c)));
        assert_eq!(home.trusted().len(), 16, "round {round}: {:?}", home.trusted());
    }
}

const HOLD_ENV: &str = "RDESK_TEST_HOLD_LOCK_OF";
const HELD: &str = "RDESK-TEST-LOCK-HELD";

/// Run again as a separate process by the test below: takes the lock of the file named in
/// `RDESK_TEST_HOLD_LOCK_OF` the way every writer does, says so, and keeps it until killed.
#[test]
#[ignore = "a helper: the SIGKILL test runs it in its own process"]
fn hold_a_user_file_lock_until_killed() {
    let Some(path) = std::env::var_os(HOLD_ENV) else { return };
    let _lock = resolve_userfile::lock(Path::new(&path), resolve_userfile::LOCK_WAIT).unwrap();
    println!("\n{HELD}");
    let mut line = String::new();
    // Blocks: the parent never writes or closes our stdin before it kills us.
    let _ = std::io::stdin().read_line(&mut line);
    panic!("stdin closed before the kill");
}

#[test]
fn a_lock_holder_killed_with_sigkill_blocks_no_one() {
    let home = Home::new(2);
    let mut holder = Command::new(std::env::current_exe().unwrap())
        .args(["--ignored", "--exact", "userfiles::hold_a_user_file_lock_until_killed", "--nocapture"])
        .env(HOLD_ENV, home.trust_file())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(holder.stdout.take().unwrap());
    let mut line = String::new();
    while line.trim() != HELD {
        line.clear();
        assert!(out.read_line(&mut line).unwrap() > 0, "the holder ended before taking the lock");
    }
    // Started while the lock is held: it waits for it.
    let waiting = home.trust(&home.folders[0]);
    holder.kill().unwrap(); // SIGKILL
    holder.wait().unwrap();
    assert!(stdout(&done(waiting)).contains("Trusted."), "the waiting trust went on once the holder died");
    drop(done(home.trust(&home.folders[1])));
    assert_eq!(home.trusted(), home.folders.iter().cloned().collect());
}

#[test]
fn rdesk_trust_list_during_writes_never_fails_and_shows_whole_lists() {
    let home = Home::new(16);
    let stop = Arc::new(AtomicBool::new(false));
    let reads = std::thread::scope(|s| {
        let reader = s.spawn(|| {
            let mut reads = 0;
            while !stop.load(Ordering::SeqCst) || reads == 0 {
                let out = home.spawn(&["trust", "--list"]).wait_with_output().unwrap();
                assert!(out.status.success() && out.stderr.is_empty(), "a read during writes failed: {out:?}");
                let text = stdout(&out);
                let listed = text.lines().filter(|l| l.contains("(since ")).count();
                assert!(listed > 0 || text.contains("No folder is trusted."), "{text}");
                assert!(listed <= 16, "{text}");
                reads += 1;
            }
            reads
        });
        for _ in 0..10 {
            let trusts: Vec<Child> = home.folders.iter().map(|f| home.trust(f)).collect();
            trusts.into_iter().for_each(|c| drop(done(c)));
            let revokes: Vec<Child> = home.folders.iter().map(|f| home.revoke(f)).collect();
            revokes.into_iter().for_each(|c| drop(done(c)));
        }
        stop.store(true, Ordering::SeqCst);
        reader.join().unwrap()
    });
    assert!(reads > 0);
    assert!(home.trusted().is_empty());
}

#[test]
fn a_trust_file_that_is_not_json_is_named_with_its_line_and_kept_until_reset() {
    let home = Home::new(1);
    let folder = home.folders[0].to_str().unwrap();
    let file = home.trust_file();
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    let bad = "{\n  \"version\": 1,\n  \"folders\": [\n";
    std::fs::write(&file, bad).unwrap();
    for args in [&["trust", folder, "--yes"][..], &["trust", "--revoke", folder], &["trust", "--list"]] {
        let out = home.spawn(args).wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(1), "{args:?}: {out:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(&file.display().to_string()) && err.contains("line 4"), "{args:?}: {err}");
    }
    assert_eq!(std::fs::read_to_string(&file).unwrap(), bad, "never replaced");
    let out = done(home.spawn(&["trust", "--reset"]));
    assert!(stdout(&out).contains("trusted-folders.json.bad-"), "{out:?}");
    assert!(!file.exists());
    drop(done(home.spawn(&["trust", folder, "--yes"])));
    assert_eq!(home.trusted().len(), 1);
}
