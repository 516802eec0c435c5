//! Workspaces for the durability tests: a change set of 200+ files (edits, creates in new
//! folders, deletions, renames with swaps and a cycle, a symlink), its expected result, and
//! snapshots of a folder (every file's bytes, every link's target, every folder).

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

use serde_json::{json, Value};

/// What is at a path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Entry {
    File(Vec<u8>),
    Link(String),
    Dir,
}

pub type Snapshot = BTreeMap<String, Entry>;

/// Every entry under `root` (not following links), by workspace-relative path.
pub fn snapshot(root: &Path) -> Snapshot {
    let mut out = Snapshot::new();
    walk(root, root, &mut out);
    out
}

fn walk(root: &Path, dir: &Path, out: &mut Snapshot) {
    let mut entries: Vec<_> = fs::read_dir(dir).expect("readable folder").map(|e| e.expect("entry").path()).collect();
    entries.sort();
    for p in entries {
        let rel = p.strip_prefix(root).expect("under root").to_string_lossy().replace('\\', "/");
        let meta = fs::symlink_metadata(&p).expect("stat");
        if meta.file_type().is_symlink() {
            out.insert(rel, Entry::Link(fs::read_link(&p).expect("link").to_string_lossy().into_owned()));
        } else if meta.is_dir() {
            out.insert(rel, Entry::Dir);
            walk(root, &p, out);
        } else {
            out.insert(rel, Entry::File(fs::read(&p).expect("file")));
        }
    }
}

/// Names the engine leaves only while an apply runs (temporaries, backups, the record).
pub fn leftovers(s: &Snapshot) -> Vec<&String> {
    s.keys().filter(|k| k.rsplit('/').next().is_some_and(|n| n.starts_with(".rdesk-"))).collect()
}

/// A small deterministic generator (no dependency, same sequence in every process).
pub struct Lcg(u64);

impl Lcg {
    pub fn new(seed: u64) -> Self {
        Self(seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407))
    }
    pub fn draw(&mut self) -> u64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        self.0 >> 33
    }
    pub fn below(&mut self, n: usize) -> usize {
        (self.draw() % n as u64) as usize
    }
}

fn text(rng: &mut Lcg, tag: &str, lines: usize) -> String {
    (0..lines).map(|i| format!("{tag} line {i} {}\n", rng.draw())).collect()
}

/// Writes the files of a large change set into `root` and returns the plan (JSON for
/// [`crate::plan::change_set`]): 120 edits, 30 creates in new folders, 30 deletions, 10
/// plain renames, 4 swaps, a 3-cycle and a renamed symlink (201 changes), in shuffled order.
pub fn big(root: &Path, seed: u64) -> Vec<Value> {
    let mut rng = Lcg::new(seed);
    let mut plan = Vec::new();
    let write = |rel: &str, s: &str| {
        let p = root.join(rel);
        fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
        fs::write(p, s).expect("write");
    };
    for i in 0..120 {
        let path = format!("src/m{}/e{i:03}.rs", i % 6);
        let lines = 5 + rng.below(60);
        write(&path, &text(&mut rng, "old", lines));
        plan.push(json!({"op": "edit", "path": path, "after": text(&mut rng, "new", lines + 1)}));
    }
    for i in 0..30 {
        let path = format!("gen/d{}/sub/n{i:03}.txt", i % 4);
        plan.push(json!({"op": "create", "path": path, "after": text(&mut rng, "created", 3)}));
    }
    for i in 0..30 {
        let path = format!("old/x{i:03}.txt");
        write(&path, &text(&mut rng, "doomed", 4));
        plan.push(json!({"op": "delete", "path": path}));
    }
    for i in 0..10 {
        let from = format!("docs/r{i:02}.md");
        write(&from, &text(&mut rng, "renamed", 2));
        plan.push(json!({"op": "rename", "from": from, "to": format!("docs/renamed-{i:02}.md")}));
    }
    for i in 0..4 {
        let (a, b) = (format!("swap/s{i}a.txt"), format!("swap/s{i}b.txt"));
        write(&a, &text(&mut rng, "A", 2));
        write(&b, &text(&mut rng, "B", 2));
        plan.push(json!({"op": "rename", "from": a, "to": b}));
        plan.push(json!({"op": "rename", "from": b, "to": a}));
    }
    for i in 0..3 {
        write(&format!("cycle/c{i}"), &text(&mut rng, "C", 1));
        plan.push(json!({"op": "rename", "from": format!("cycle/c{i}"), "to": format!("cycle/c{}", (i + 1) % 3)}));
    }
    std::os::unix::fs::symlink("../src/m0/e000.rs", root.join("docs/link")).expect("symlink");
    plan.push(json!({"op": "rename", "from": "docs/link", "to": "docs/link-renamed"}));
    // Shuffled, so every phase interleaves kinds of changes.
    for i in (1..plan.len()).rev() {
        let j = rng.below(i + 1);
        plan.swap(i, j);
    }
    plan
}

/// A small change set of every kind (for tests that run it once per system call): 3 edits,
/// 2 creates in new nested folders, 2 deletions, a swap, a rename and a renamed symlink
/// (11 changes), in shuffled order.
pub fn small(root: &Path, seed: u64) -> Vec<Value> {
    let mut rng = Lcg::new(seed);
    let mut plan = Vec::new();
    let write = |rel: &str, s: &str| {
        let p = root.join(rel);
        fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
        fs::write(p, s).expect("write");
    };
    for i in 0..3 {
        let path = format!("src/e{i}.rs");
        write(&path, &text(&mut rng, "old", 3));
        plan.push(json!({"op": "edit", "path": path, "after": text(&mut rng, "new", 4)}));
    }
    for i in 0..2 {
        plan.push(json!({"op": "create", "path": format!("gen/d{i}/n.txt"), "after": text(&mut rng, "created", 2)}));
    }
    for i in 0..2 {
        let path = format!("old/x{i}.txt");
        write(&path, &text(&mut rng, "doomed", 2));
        plan.push(json!({"op": "delete", "path": path}));
    }
    write("swap/a.txt", &text(&mut rng, "A", 1));
    write("swap/b.txt", &text(&mut rng, "B", 1));
    plan.push(json!({"op": "rename", "from": "swap/a.txt", "to": "swap/b.txt"}));
    plan.push(json!({"op": "rename", "from": "swap/b.txt", "to": "swap/a.txt"}));
    write("docs/r.md", &text(&mut rng, "renamed", 2));
    plan.push(json!({"op": "rename", "from": "docs/r.md", "to": "docs/renamed.md"}));
    std::os::unix::fs::symlink("../src/e0.rs", root.join("docs/link")).expect("symlink");
    plan.push(json!({"op": "rename", "from": "docs/link", "to": "docs/link-renamed"}));
    for i in (1..plan.len()).rev() {
        let j = rng.below(i + 1);
        plan.swap(i, j);
    }
    plan
}

/// What `root` holds after `plan` is applied to `before` (renames happen all at once).
pub fn expected(before: &Snapshot, plan: &[Value]) -> Snapshot {
    let mut after = before.clone();
    let s = |v: &Value, k: &str| v[k].as_str().expect("string").to_string();
    let mut moved = Vec::new();
    for item in plan {
        match s(item, "op").as_str() {
            "edit" | "create" => {
                let path = s(item, "path");
                let mut dir = Path::new(&path).parent();
                while let Some(d) = dir.filter(|d| !d.as_os_str().is_empty()) {
                    after.insert(d.to_string_lossy().into_owned(), Entry::Dir);
                    dir = d.parent();
                }
                after.insert(path, Entry::File(s(item, "after").into_bytes()));
            }
            "delete" => {
                after.remove(&s(item, "path"));
            }
            "rename" => {
                let entry = before[&s(item, "from")].clone();
                after.remove(&s(item, "from"));
                moved.push((s(item, "to"), entry));
            }
            other => panic!("unknown op {other}"),
        }
    }
    after.extend(moved);
    after
}
