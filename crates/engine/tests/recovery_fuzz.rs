//! Recovery fed random intent records (proptest): names mixing valid ones, `..`, absolute
//! ones, desk-looking ones (right and wrong token or index), names through a symlinked
//! folder; random op kinds, phases, marks, hashes of what is really on disk (so a careless
//! recovery would find "its" files), written as a record this user owns, mode 0600 (so they
//! get past the file checks and reach the name checks and, when valid, the rollback).
//!
//! Properties: nothing outside the workspace ever changes (a sibling folder of sentinels,
//! named by every kind of hostile name, and reachable through `ws/link`); recovery never
//! panics; any record holding a `..` or absolute name is refused and touches nothing.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use proptest::prelude::*;
use resolve_engine::{ContentHash, RecoveryOutcome, Workspace};
use serde_json::json;

const CASES: u32 = 256;
const SENTINEL: &[u8] = b"sentinel\n";
const WS_FILE: &[u8] = b"workspace file\n";

fn snapshot(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    fn walk(root: &Path, dir: &Path, out: &mut Vec<(String, Vec<u8>)>) {
        let mut entries: Vec<_> = fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
        entries.sort();
        for p in entries {
            let rel = p.strip_prefix(root).unwrap().display().to_string();
            let meta = fs::symlink_metadata(&p).unwrap();
            if meta.is_dir() {
                out.push((rel.clone(), b"<dir>".to_vec()));
                walk(root, &p, out);
            } else if meta.file_type().is_symlink() {
                out.push((rel, fs::read_link(&p).unwrap().display().to_string().into_bytes()));
            } else {
                out.push((rel, fs::read(&p).unwrap()));
            }
        }
    }
    walk(dir, dir, &mut out);
    out
}

/// How a drawn name is made.
#[derive(Debug, Clone)]
enum Name {
    /// A workspace file, or a new one.
    Plain(u8),
    /// `../other/...`, `a/../../other/...`.
    DotDot(u8),
    /// `/…/other/…`.
    Absolute(u8),
    /// `.rdesk-<token>-<i>.<suffix>` beside a drawn target, token and index right or wrong.
    Generated { target: u8, right_token: bool, index_shift: u8, suffix: u8 },
    /// Under `link/` (a symlink to the sentinels' folder).
    ThroughLink(u8),
    /// Empty components, `.`, NUL.
    Odd(u8),
}

fn name() -> impl Strategy<Value = Name> {
    prop_oneof![
        3 => any::<u8>().prop_map(Name::Plain),
        2 => any::<u8>().prop_map(Name::DotDot),
        1 => any::<u8>().prop_map(Name::Absolute),
        4 => (any::<u8>(), any::<bool>(), 0u8..3, 0u8..3).prop_map(|(target, right_token, index_shift, suffix)| {
            Name::Generated { target, right_token, index_shift, suffix }
        }),
        1 => any::<u8>().prop_map(Name::ThroughLink),
        1 => any::<u8>().prop_map(Name::Odd),
    ]
}

const PLAIN: [&str; 4] = ["a.txt", "src/b.txt", "src/new.txt", "gen/sub/c.txt"];
const OUTSIDE: [&str; 3] = ["secret.txt", ".rdesk-7a-0.bak", ".rdesk-7a-1.tmp"];

/// The name, and whether it must make the whole record refused (`..` or absolute).
fn render(n: &Name, i: usize, other: &Path) -> (String, bool) {
    let pick = |k: u8, list: &[&str]| list[k as usize % list.len()].to_string();
    match n {
        Name::Plain(k) => (pick(*k, &PLAIN), false),
        Name::DotDot(k) => {
            let prefix = if k % 2 == 0 { "../other/" } else { "src/../../other/" };
            (format!("{prefix}{}", pick(*k / 2, &OUTSIDE)), true)
        }
        Name::Absolute(k) => (other.join(pick(*k, &OUTSIDE)).display().to_string(), true),
        Name::Generated { target, right_token, index_shift, suffix } => {
            let t = pick(*target, &PLAIN);
            let dir = t.rsplit_once('/').map(|(d, _)| format!("{d}/")).unwrap_or_default();
            let token = if *right_token { "7a" } else { "7b" };
            let suffix = ["tmp", "bak", "mv"][*suffix as usize];
            (format!("{dir}.rdesk-{token}-{}.{suffix}", i + *index_shift as usize), false)
        }
        Name::ThroughLink(k) => (format!("link/{}", pick(*k, &OUTSIDE)), false),
        Name::Odd(k) => (["src//b.txt", "./a.txt", "src/.", "a\u{0}b", ""][*k as usize % 5].to_string(), false),
    }
}

#[derive(Debug, Clone)]
struct Drawn {
    ops: Vec<(u8, Vec<Name>, bool)>,
    dirs: Vec<Name>,
    phase: u8,
    incomplete: bool,
}

fn drawn() -> impl Strategy<Value = Drawn> {
    (
        prop::collection::vec((0u8..4, prop::collection::vec(name(), 3), any::<bool>()), 0..4),
        prop::collection::vec(name(), 0..2),
        0u8..4,
        any::<bool>(),
    )
        .prop_map(|(ops, dirs, phase, incomplete)| Drawn { ops, dirs, phase, incomplete })
}

fn record(d: &Drawn, other: &Path) -> (String, bool) {
    let hashes = [ContentHash::of(SENTINEL).to_string(), ContentHash::of(WS_FILE).to_string()];
    let mut must_refuse = false;
    let mut ops = Vec::new();
    for (i, (kind, names, h)) in d.ops.iter().enumerate() {
        let mut n = |k: usize| {
            let (s, bad) = render(&names[k], i, other);
            must_refuse |= bad;
            s
        };
        let hash = &hashes[usize::from(*h)];
        ops.push(match kind {
            0 => json!({"op": "edit", "path": n(0), "tmp": n(1), "backup": n(2), "before": hash, "after": hash}),
            1 => json!({"op": "create", "path": n(0), "tmp": n(1), "after": hash}),
            2 => json!({"op": "delete", "path": n(0), "backup": n(1), "before": hash}),
            _ => json!({"op": "move", "from": n(0), "to": n(1), "parked": n(2), "kind": "file", "before": hash}),
        });
    }
    let dirs: Vec<String> = d
        .dirs
        .iter()
        .map(|n| {
            let (s, bad) = render(n, 0, other);
            must_refuse |= bad;
            s.rsplit_once('/').map(|(dir, _)| dir.to_string()).unwrap_or(s)
        })
        .collect();
    let intent = json!({"version": 1, "pid": 1, "started_at": "2024-01-01T00:00:00Z", "context": null, "dirs": dirs, "ops": ops});
    let mut text = format!("{intent}\n");
    for p in ["staged", "parked", "committed"].iter().take(d.phase as usize) {
        text.push_str(&format!("{{\"phase\":\"{p}\"}}\n"));
    }
    if d.incomplete && d.phase < 3 {
        text.push_str("{\"rollback\":\"incomplete\"}\n");
    }
    (text, must_refuse)
}

fn check(d: &Drawn) -> Result<Option<resolve_engine::Recovery>, TestCaseError> {
    let base = tempfile::tempdir().unwrap();
    let root = base.path().canonicalize().unwrap();
    let (ws, other) = (root.join("ws"), root.join("other"));
    fs::create_dir_all(ws.join("src")).unwrap();
    fs::create_dir_all(&other).unwrap();
    for n in OUTSIDE {
        fs::write(other.join(n), SENTINEL).unwrap();
    }
    for p in PLAIN.iter().take(2) {
        fs::write(ws.join(p), WS_FILE).unwrap();
    }
    fs::write(ws.join("src/.rdesk-7a-0.bak"), SENTINEL).unwrap();
    std::os::unix::fs::symlink("../other", ws.join("link")).unwrap();
    let (text, must_refuse) = record(d, &other);
    let rec = ws.join(".rdesk-apply.log");
    fs::write(&rec, &text).unwrap();
    fs::set_permissions(&rec, fs::Permissions::from_mode(0o600)).unwrap();
    let outside = snapshot(&other);
    let inside = snapshot(&ws);
    let recovery = resolve_engine::recover(&Workspace::open(&ws).unwrap());
    prop_assert_eq!(snapshot(&other), outside, "nothing outside changes; record:\n{}", text);
    if must_refuse {
        let refused = recovery.as_ref().is_some_and(|r| matches!(r.outcome, RecoveryOutcome::Refused(_)));
        prop_assert!(refused, "a `..` or absolute name refuses the record: {:?}\n{}", recovery, text);
        prop_assert_eq!(snapshot(&ws), inside, "a refused record touches nothing; record:\n{}", text);
    }
    Ok(recovery)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: CASES, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn random_records_never_change_anything_outside_the_workspace_and_never_panic(d in drawn()) {
        check(&d)?;
    }
}

#[test]
fn a_record_through_a_symlinked_folder_is_refused_and_touches_nothing() {
    let d = Drawn {
        ops: vec![(2, vec![Name::ThroughLink(0), Name::ThroughLink(1), Name::Plain(0)], false)],
        dirs: vec![],
        phase: 2,
        incomplete: false,
    };
    let recovery = check(&d).unwrap().expect("a record was there");
    assert!(recovery.refused(), "a folder that is a symlink refuses the record: {}", recovery.message());
    assert!(recovery.message().contains("\"link\""), "it names the folder: {}", recovery.message());
}
