//! Kill tests: a real child process (`apply-probe`) applies a 202-change set (edits, creates
//! in new folders, deletions, renames with swaps, a cycle and a symlink) and is stopped by
//! the engine's test hook at a chosen step, then `SIGKILL`ed there. A new process opening
//! the workspace (a session, as every program does) must leave every file byte for byte
//! as before the apply, or, only where the intent record says the commit completed, as
//! after it, with no temporary file, backup or record left.

use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::process::{Child, Command, Stdio};

use resolve_scenarios::fixture::{big, expected, leftovers, snapshot};
use serde_json::Value;

const PROBE: &str = env!("CARGO_BIN_EXE_apply-probe");

/// Every phase's first and last step and some in between (202 changes: 150 staged files,
/// 22 renames parked, 202 commit steps, 202 clean-up steps).
const KILL_POINTS: &[&str] = &[
    "planned:0",
    "staging:0",
    "staging:77",
    "staging:149",
    "parking:0",
    "parking:11",
    "parking:21",
    "commit:0",
    "commit:1",
    "commit:64",
    "commit:130",
    "commit:201",
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
    let mut child = Command::new(PROBE)
        .arg("apply")
        .arg(root)
        .arg(plan_file)
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
    assert_eq!(committed, point.starts_with("cleanup:"), "{point}: the record says {phase:?}");

    let recovery = reopen(&root);
    let now = snapshot(&root);
    assert!(leftovers(&now).is_empty(), "{point}: left behind: {:?} (recovery: {recovery})", leftovers(&now));
    if point == "planned:0" {
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

/// The first few paths that differ, for a readable failure.
fn diff(want: &resolve_scenarios::fixture::Snapshot, got: &resolve_scenarios::fixture::Snapshot) -> String {
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
