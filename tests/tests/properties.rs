//! Properties of `ChangeSet::apply` over random change sets (proptest): a few files with
//! random bytes, each kept, edited, deleted or renamed (renames drawn as a random
//! permutation, so chains, swaps and cycles all occur), and new files, some in new folders.
//!
//! - applying, then reading the folder back, gives exactly what the plan says;
//! - a failure injected at any step of the commit (the engine's test hook) leaves every
//!   byte, name and folder as before, with nothing left behind.
//!
//! Case counts are fixed (`CASES`); `docs/RELIABILITY.md` reports them.

use std::fs;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use proptest::prelude::*;
use resolve_engine::fault::{self, Hook};
use resolve_engine::{ChangeSet, Workspace};
use resolve_scenarios::fixture::{expected, leftovers, snapshot};
use serde_json::{json, Value};

const CASES: u32 = 256;

#[derive(Debug, Clone)]
enum Fate {
    Keep,
    Edit(Vec<u8>),
    Delete,
    Rename,
}

#[derive(Debug, Clone)]
struct Case {
    files: Vec<(Vec<u8>, Fate)>,
    /// Targets for the renamed files: a permutation over their names and fresh ones.
    rename_order: Vec<usize>,
    creates: Vec<(bool, Vec<u8>)>,
}

fn bytes() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(prop_oneof![Just(b'\n'), Just(b'a'), any::<u8>()], 0..80)
}

fn case() -> impl Strategy<Value = Case> {
    let fate = prop_oneof![
        Just(Fate::Keep),
        bytes().prop_map(Fate::Edit),
        Just(Fate::Delete),
        Just(Fate::Rename),
        Just(Fate::Rename),
    ];
    (
        prop::collection::vec((bytes(), fate), 1..7),
        Just((0..12usize).collect::<Vec<_>>()).prop_shuffle(),
        prop::collection::vec((any::<bool>(), bytes()), 0..3),
    )
        .prop_map(|(files, rename_order, creates)| Case { files, rename_order, creates })
}

/// Writes the case's files under `root` and returns its plan (JSON, as the fixture uses).
fn set_up(root: &Path, case: &Case) -> Vec<Value> {
    let mut plan = Vec::new();
    let mut renamed = Vec::new();
    for (i, (content, fate)) in case.files.iter().enumerate() {
        let path = format!("f{i}");
        fs::write(root.join(&path), content).unwrap();
        match fate {
            Fate::Keep => {}
            Fate::Edit(after) => plan.push(json!({"op": "edit", "path": path, "after": after_text(after)})),
            Fate::Delete => plan.push(json!({"op": "delete", "path": path})),
            Fate::Rename => renamed.push(path),
        }
    }
    // Each renamed file takes a name from (the renamed names, then fresh ones), in a random
    // order: a file may take another's name (chain, swap, cycle) or a new one.
    let names: Vec<String> = renamed.iter().cloned().chain((0..renamed.len()).map(|i| format!("fresh{i}"))).collect();
    let mut targets = case.rename_order.iter().filter(|&&i| i < names.len()).map(|&i| names[i].clone());
    for from in &renamed {
        let to = targets.next().unwrap();
        if &to != from {
            plan.push(json!({"op": "rename", "from": from, "to": to}));
        }
    }
    for (j, (in_new_folder, content)) in case.creates.iter().enumerate() {
        let path = if *in_new_folder { format!("new{j}/deep/c{j}") } else { format!("c{j}") };
        plan.push(json!({"op": "create", "path": path, "after": after_text(content)}));
    }
    plan
}

/// The plan format carries text; random bytes are kept as their lossy UTF-8 text.
fn after_text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn change_set(ws: &Workspace, plan: &[Value]) -> ChangeSet {
    resolve_scenarios::plan::change_set(ws, &serde_json::to_string(plan).unwrap()).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: CASES, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn applying_then_reading_back_gives_exactly_the_plan(case in case()) {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let plan = set_up(&root, &case);
        let before = snapshot(&root);
        let ws = Workspace::open(&root).unwrap();
        let report = change_set(&ws, &plan).apply(&ws).unwrap();
        prop_assert!(report.warnings.is_empty(), "{:?}", report.warnings);
        prop_assert_eq!(snapshot(&root), expected(&before, &plan));
    }

    #[test]
    fn a_failure_at_any_step_leaves_every_byte_as_before(case in case(), fail_at in 0usize..64) {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let plan = set_up(&root, &case);
        let before = snapshot(&root);
        let ws = Workspace::open(&root).unwrap();
        let cs = change_set(&ws, &plan);
        let seen = Arc::new(AtomicUsize::new(0));
        let counter = seen.clone();
        let (mut marking, mut committed) = (false, false);
        fault::set_hook(&root, move |p| {
            // Every step up to the commit's end (the `committed` mark's own sync); the
            // clean-up after it cannot undo a commit.
            if committed || p.phase == "cleanup" {
                return Hook::Continue;
            }
            if p.phase == "mark" && p.index == 2 {
                marking = true;
            } else if marking && p.phase == "fsync" {
                committed = true;
            }
            if counter.fetch_add(1, Ordering::SeqCst) == fail_at { Hook::Fail } else { Hook::Continue }
        });
        let result = cs.apply(&ws);
        fault::clear_hook(&root);
        let now = snapshot(&root);
        prop_assert!(leftovers(&now).is_empty(), "left behind: {:?}", leftovers(&now));
        match result {
            Err(e) => {
                prop_assert!(fail_at < seen.load(Ordering::SeqCst), "failed without the fault: {}", e);
                prop_assert!(e.to_string().contains("injected fault"), "{}", e);
                prop_assert!(e.to_string().contains("Every file was restored"), "{}", e);
                prop_assert_eq!(now, before);
            }
            Ok(_) => {
                // The fault came after the last step: the apply is whole.
                prop_assert!(fail_at >= seen.load(Ordering::SeqCst));
                prop_assert_eq!(now, expected(&before, &plan));
            }
        }
    }
}
