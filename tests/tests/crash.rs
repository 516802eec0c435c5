//! Kill tests: a real child process (`apply-probe`) applies a 202-change set (edits, creates
//! in new folders, deletions, renames with swaps, a cycle and a symlink) and is stopped by
//! the engine's test hook at a chosen step, then `SIGKILL`ed there. A new process opening
//! the workspace (a session, as every program does) must leave every file byte for byte
//! as before the apply, or, only where the intent record says the commit completed, as
//! after it, with no temporary file, backup or record left.
//!
//! Power-cut tests: `SIGKILL` keeps everything the process wrote (the kernel still has it),
//! so it cannot tell whether the apply syncs what it must. Here the probe runs with the
//! power-loss shim (`powerloss/powerloss.c`, `LD_PRELOAD`), which undoes every write,
//! create, rename, unlink and mkdir not yet made durable by an `fsync`/`fdatasync` of the
//! file or of its folder, then exits: the disk as a machine that lost power would find it.
//! The cut comes after every single operation of a small apply, and at the pause points of
//! the big one; recovery must then leave every file wholly old or wholly new.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Child, Command, Stdio};

use resolve_scenarios::fixture::{big, expected, leftovers, small, snapshot, Snapshot};
use serde_json::Value;

const PROBE: &str = env!("CARGO_BIN_EXE_apply-probe");

/// Every phase's first and last step and some in between (202 changes: 150 staged files,
/// 22 renames parked, 202 commit steps, 202 clean-up steps), the folder syncs that end each
/// phase (`sync`), the marks (`mark`: before each is written), and real `fsync` calls: the
/// record's file (0) and folder (1), the first temporary file (2) and the last (151).
const KILL_POINTS: &[&str] = &[
    "planned:0",
    "fsync:0",
    "fsync:1",
    "staging:0",
    "fsync:2",
    "staging:77",
    "staging:149",
    "fsync:151",
    "sync:0",
    "mark:0",
    "parking:0",
    "parking:11",
    "parking:21",
    "sync:1",
    "mark:1",
    "commit:0",
    "commit:1",
    "commit:64",
    "commit:130",
    "commit:201",
    "sync:2",
    "mark:2",
    "cleanup:0",
    "cleanup:101",
    "cleanup:201",
];

/// Runs per kill point, each with its own contents and order of changes.
const RUNS: u64 = 2;

/// Starts the probe applying `plan_file` to `root`, paused at `point`; returns once it is
/// paused there (its stderr said so). The caller kills and reaps it.
#[allow(clippy::zombie_processes)] // returned to the caller, which waits for it
fn start_paused(root: &Path, plan_file: &Path, point: &str) -> Child {
    start_paused_with(root, plan_file, point, &[])
}

#[allow(clippy::zombie_processes)] // returned to the caller, which waits for it
fn start_paused_with(root: &Path, plan_file: &Path, point: &str, env: &[(&str, &Path)]) -> Child {
    let mut cmd = Command::new(PROBE);
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.arg("apply").arg(root).arg(plan_file);
    paused(cmd, point)
}

/// Starts `cmd` (an `apply-probe` command) paused at `point`; returns once it is paused there
/// (its stderr said so). The caller kills and reaps it.
#[allow(clippy::zombie_processes)] // returned to the caller, which waits for it
fn paused(mut cmd: Command, point: &str) -> Child {
    let mut child = cmd
        .env("RDESK_TEST_PAUSE_AT", point)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the probe starts");
    let mut stderr = BufReader::new(child.stderr.take().expect("stderr"));
    let mut seen = String::new();
    loop {
        let mut line = String::new();
        let n = stderr.read_line(&mut line).expect("read the probe's stderr");
        if n == 0 {
            let mut out = String::new();
            child.stdout.take().expect("stdout").read_to_string(&mut out).expect("stdout");
            let _ = child.wait();
            panic!("the probe ended before reaching {point}: stdout {out:?}, stderr {seen:?}");
        }
        if line.trim() == format!("RDESK_PAUSED {point}") {
            return child;
        }
        seen.push_str(&line);
    }
}

/// Opens the workspace in a new process; returns what it recovered.
fn reopen(root: &Path) -> Value {
    let out = Command::new(PROBE).arg("open").arg(root).output().expect("the probe runs");
    assert!(out.status.success(), "reopening failed: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).expect("the probe prints JSON")
}

/// The last phase the record on disk marks (`prepared` when only the intent is there).
fn recorded_phase(root: &Path) -> Option<String> {
    let text = std::fs::read_to_string(root.join(resolve_engine::changeset::RECORD_NAME)).ok()?;
    let mut phase = "prepared".to_string();
    for line in text.split_inclusive('\n').skip(1).filter(|l| l.ends_with('\n')) {
        let v: Value = serde_json::from_str(line).expect("a phase line");
        phase = v["phase"].as_str().expect("phase").to_string();
    }
    Some(phase)
}

fn kill_at(point: &str, seed: u64) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let plan = big(&root, seed);
    assert!(plan.len() >= 200, "at least 200 changes");
    let before = snapshot(&root);
    let after = expected(&before, &plan);
    let plan_dir = tempfile::tempdir().unwrap();
    let plan_file = plan_dir.path().join("plan.json");
    std::fs::write(&plan_file, serde_json::to_string(&plan).unwrap()).unwrap();

    let mut child = start_paused(&root, &plan_file, point);
    child.kill().expect("SIGKILL");
    let status = child.wait().expect("the probe is reaped");
    assert!(!status.success(), "{point}: the probe was killed, not finished");

    let phase = recorded_phase(&root);
    let committed = phase.as_deref() == Some("committed");
    if !point.starts_with("fsync:") {
        assert_eq!(committed, point.starts_with("cleanup:"), "{point}: the record says {phase:?}");
    }
    if point == "fsync:0" || point == "fsync:1" {
        assert_eq!(phase.as_deref(), Some("prepared"), "{point}: the record is written, not yet synced");
    }

    let recovery = reopen(&root);
    let now = snapshot(&root);
    assert!(leftovers(&now).is_empty(), "{point}: left behind: {:?} (recovery: {recovery})", leftovers(&now));
    if point == "planned:0" || phase.is_none() {
        assert!(recovery.is_null(), "{point}: nothing was started, nothing to recover: {recovery}");
        assert!(now == before, "{point}: every file as before");
        return;
    }
    assert_eq!(recovery["outcome"], if committed { "completed" } else { "rolled_back" }, "{point}: {recovery}");
    assert_eq!(recovery["files"], plan.len(), "{point}");
    assert_eq!(recovery["problems"], serde_json::json!([]), "{point}: {recovery}");
    assert_eq!(recovery["context"]["label"], "Kill test: many files", "{point}: the record names the action");
    if committed {
        assert!(now == after, "{point}: the record says committed, so every file is new: {}", diff(&after, &now));
    } else {
        assert!(now == before, "{point}: every file byte for byte as before: {}", diff(&before, &now));
    }
    // A second open finds nothing more to do.
    assert!(reopen(&root).is_null(), "{point}: recovery is done once");
}

/// An apply through the session's `resolve` — whole, part (`leave_out`) or with the person's
/// edits, all through one door — names its action in the intent record: a process killed
/// mid-commit is recovered by the next open, which says which action it was and who decided.
#[test]
fn an_apply_through_resolve_killed_midway_names_its_action_whole_part_or_edited() {
    for mode in ["whole", "part", "edited"] {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let plan = small(&root, 7);
        let before = snapshot(&root);
        let plan_dir = tempfile::tempdir().unwrap();
        let plan_file = plan_dir.path().join("plan.json");
        std::fs::write(&plan_file, serde_json::to_string(&plan).unwrap()).unwrap();
        let mut cmd = Command::new(PROBE);
        cmd.arg("resolve").arg(&root).arg(&plan_file).arg(mode);
        let mut child = paused(cmd, "commit:0");
        child.kill().expect("SIGKILL");
        child.wait().expect("the probe is reaped");

        let recovery = reopen(&root);
        assert_eq!(recovery["outcome"], "rolled_back", "{mode}: {recovery}");
        assert_eq!(recovery["context"]["label"], "Kill test: through resolve", "{mode}: {recovery}");
        assert_eq!(recovery["context"]["source_tool_name"], "apply-probe", "{mode}: {recovery}");
        assert_eq!(recovery["context"]["actor"], "script", "{mode}: {recovery}");
        assert!(recovery["context"]["action_id"].as_str().is_some_and(|id| !id.is_empty()), "{mode}: {recovery}");
        let now = snapshot(&root);
        assert!(now == before, "{mode}: every file byte for byte as before: {}", diff(&before, &now));
    }
}

/// The first few paths that differ, for a readable failure.
fn diff(want: &Snapshot, got: &Snapshot) -> String {
    let mut out = Vec::new();
    for (k, v) in want {
        if got.get(k) != Some(v) {
            out.push(format!("{k}: {}", if got.contains_key(k) { "differs" } else { "missing" }));
        }
    }
    for k in got.keys().filter(|k| !want.contains_key(*k)) {
        out.push(format!("{k}: unexpected"));
    }
    out.truncate(8);
    out.join(", ")
}

#[test]
fn a_process_killed_at_any_step_of_an_apply_leaves_whole_files_after_the_next_open() {
    for point in KILL_POINTS {
        for run in 0..RUNS {
            kill_at(point, 1000 + run * 17 + point.len() as u64);
        }
    }
}

#[test]
fn the_same_apply_left_alone_writes_every_file() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let plan = big(&root, 7);
    let after = expected(&snapshot(&root), &plan);
    let plan_dir = tempfile::tempdir().unwrap();
    let plan_file = plan_dir.path().join("plan.json");
    std::fs::write(&plan_file, serde_json::to_string(&plan).unwrap()).unwrap();
    let out = Command::new(PROBE).arg("apply").arg(&root).arg(&plan_file).output().unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "APPLIED", "{}", String::from_utf8_lossy(&out.stderr));
    let now = snapshot(&root);
    assert!(now == after, "{}", diff(&after, &now));
    assert!(reopen(&root).is_null());
}

#[test]
fn a_recovery_killed_midway_is_finished_by_the_next_open() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let plan = big(&root, 99);
    let before = snapshot(&root);
    let plan_dir = tempfile::tempdir().unwrap();
    let plan_file = plan_dir.path().join("plan.json");
    std::fs::write(&plan_file, serde_json::to_string(&plan).unwrap()).unwrap();
    let mut child = start_paused(&root, &plan_file, "commit:150");
    child.kill().unwrap();
    child.wait().unwrap();
    // The first recovery is itself killed halfway through its rollback.
    let mut recovering = Command::new(PROBE)
        .arg("open")
        .arg(&root)
        .env("RDESK_TEST_PAUSE_AT", "rollback:100")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(recovering.stderr.take().unwrap());
    let mut line = String::new();
    while line.trim() != "RDESK_PAUSED rollback:100" {
        line.clear();
        assert!(stderr.read_line(&mut line).unwrap() > 0, "the recovery ended before pausing");
    }
    recovering.kill().unwrap();
    recovering.wait().unwrap();
    assert_ne!(snapshot(&root), before, "the rollback was cut short");
    let recovery = reopen(&root);
    assert_eq!(recovery["outcome"], "rolled_back", "{recovery}");
    assert_eq!(recovery["problems"], serde_json::json!([]), "{recovery}");
    let now = snapshot(&root);
    assert!(now == before, "every file as before: {}", diff(&before, &now));
}

// ---- power cuts ----

const SHIM: &str = env!("POWERLOSS_SHIM");

/// The report the shim wrote: its `key value` lines.
fn shim_report(path: &Path) -> Vec<(String, String)> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(|l| {
            l.split_once(' ').map(|(k, v)| (k.to_string(), v.to_string())).unwrap_or((l.to_string(), String::new()))
        })
        .collect()
}

fn report_number(report: &[(String, String)], key: &str) -> Option<u64> {
    report.iter().find(|(k, _)| k == key).and_then(|(_, v)| v.parse().ok())
}

/// A workspace, its plan, and the folders the shim writes to (beside it, on the same file
/// system, outside the snapshots).
struct PowerCase {
    _dir: tempfile::TempDir,
    root: std::path::PathBuf,
    stash: std::path::PathBuf,
    report: std::path::PathBuf,
    plan_file: std::path::PathBuf,
    before: Snapshot,
    after: Snapshot,
}

impl PowerCase {
    fn new(seed: u64, make: fn(&Path, u64) -> Vec<serde_json::Value>) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        let root = base.join("ws");
        let stash = base.join("stash");
        std::fs::create_dir_all(&root).unwrap();
        std::fs::create_dir_all(&stash).unwrap();
        let plan = make(&root, seed);
        let before = snapshot(&root);
        let after = expected(&before, &plan);
        let plan_file = base.join("plan.json");
        std::fs::write(&plan_file, serde_json::to_string(&plan).unwrap()).unwrap();
        Self { _dir: dir, report: base.join("report.txt"), root, stash, plan_file, before, after }
    }

    fn shim_env(&self) -> Vec<(&'static str, &Path)> {
        vec![("LD_PRELOAD", Path::new(SHIM)), ("POWERLOSS_STASH", &self.stash), ("POWERLOSS_REPORT", &self.report)]
    }

    /// After a cut: recovery (a new process, no shim) leaves every file wholly old, or wholly
    /// new where the surviving record says `committed` (or, with no record left, where the
    /// apply had finished), nothing behind, and the shim undid without error.
    fn check_after_cut(&self, at: &str) {
        let report = shim_report(&self.report);
        assert!(report.iter().all(|(k, _)| k != "error"), "{at}: the shim could not undo everything: {report:?}");
        let phase = recorded_phase(&self.root);
        let recovery = reopen(&self.root);
        let now = snapshot(&self.root);
        assert!(
            leftovers(&now).is_empty(),
            "{at}: left behind {:?} (record was {phase:?}, recovery {recovery})",
            leftovers(&now)
        );
        match phase.as_deref() {
            Some("committed") => {
                assert!(
                    now == self.after,
                    "{at}: the record survived as committed, so every file is new: {}",
                    diff(&self.after, &now)
                )
            }
            Some(_) => assert!(
                now == self.before,
                "{at}: the record survived as {phase:?}, so every file is as before: {} (recovery {recovery})",
                diff(&self.before, &now)
            ),
            None => assert!(
                now == self.before || now == self.after,
                "{at}: no record survived: every file wholly old or wholly new; against old: {}; against new: {}",
                diff(&self.before, &now),
                diff(&self.after, &now)
            ),
        }
        if !recovery.is_null() {
            assert_eq!(recovery["problems"], serde_json::json!([]), "{at}: {recovery}");
        }
    }
}

#[test]
fn a_power_cut_after_any_operation_of_an_apply_leaves_whole_files_after_the_next_open() {
    // How many operations the apply makes, with the shim loaded and no cut.
    let dry = PowerCase::new(5, small);
    let out = Command::new(PROBE)
        .envs(dry.shim_env())
        .arg("apply")
        .arg(&dry.root)
        .arg(&dry.plan_file)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "APPLIED", "{}", String::from_utf8_lossy(&out.stderr));
    assert!(snapshot(&dry.root) == dry.after, "with the shim loaded and no cut, the apply writes every file");
    let ops = report_number(&shim_report(&dry.report), "ops").expect("the shim reports what it saw (is it loaded?)");
    // 11 changes: at least a create, a write and a sync per temporary, a rename per change.
    assert!(ops >= 40, "the shim saw only {ops} operations: it does not see the apply's system calls");
    let mut undone_somewhere = 0;
    for cut in 0..=ops {
        let case = PowerCase::new(5, small);
        let out = Command::new(PROBE)
            .envs(case.shim_env())
            .env("POWERLOSS_CUT_AFTER", cut.to_string())
            .arg("apply")
            .arg(&case.root)
            .arg(&case.plan_file)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let report = shim_report(&case.report);
        if cut < ops {
            assert_eq!(
                out.status.code(),
                Some(86),
                "cut {cut}: the power went off: {report:?} {}",
                String::from_utf8_lossy(&out.stderr)
            );
            undone_somewhere += report_number(&report, "undone").unwrap_or(0);
        }
        case.check_after_cut(&format!("cut after {cut} of {ops} operations"));
    }
    assert!(undone_somewhere > 0, "some cut found writes not yet durable to undo (else the test proves nothing)");
}

#[test]
fn a_power_cut_at_any_step_of_a_big_apply_leaves_whole_files_after_the_next_open() {
    for point in KILL_POINTS {
        let case = PowerCase::new(2000 + point.len() as u64, big);
        let mut child = start_paused_with(&case.root, &case.plan_file, point, &case.shim_env());
        child.stdin.as_mut().unwrap().write_all(b"POWERCUT\n").unwrap();
        let status = child.wait().unwrap();
        assert_eq!(status.code(), Some(86), "{point}: the power went off");
        case.check_after_cut(point);
    }
}
