//! Database size after 1,000 applies with undo data under the default retention (not a test).
//!
//! `cargo bench -p resolve-journal --bench undo_db_size`
//!
//! A real workspace of 40 TypeScript files (~30 KB each) in a temp folder; each apply is a
//! change set editing one line in each of 3 files (what a small `ast_edit` does), applied to
//! the disk by the real `ChangeSet::apply`; its decision row and its undo data go into a real
//! SQLite journal with `UndoRetention::default()`. Every 100 applies, one in ten also deletes
//! and recreates a file, so some records carry whole files. Prints the file sizes at the end.

use std::fs;
use std::time::Instant;

use resolve_engine::{Actor, ChangeSet, ResolveAction, UndoRecord, Workspace};
use resolve_journal::{Decision, Journal, UndoRetention};

fn main() {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path().join("ws");
    fs::create_dir_all(root.join("src")).unwrap();
    let files = 40;
    for f in 0..files {
        let body: String = (0..1000).map(|i| format!("export const value{i} = compute({i}, \"f{f}\");\n")).collect();
        fs::write(root.join(format!("src/f{f}.ts")), body).unwrap();
    }
    let ws = Workspace::open(&root).unwrap();
    let db = dir.path().join("journal.sqlite3");
    let journal = Journal::open(&db).unwrap();
    let retention = UndoRetention::default();
    let workspace = ws.root().display().to_string();
    let started = Instant::now();
    let applies = 1000;
    for n in 0..applies {
        let mut cs = ChangeSet::new();
        for k in 0..3 {
            let path = format!("src/f{}.ts", (n * 3 + k) % files);
            let before = fs::read(ws.root().join(&path)).unwrap();
            let line = (n * 7 + k * 13) % 1000;
            let text = String::from_utf8(before.clone()).unwrap();
            let needle = format!("export const value{line} = ");
            let after = text.replacen(&needle, &format!("export const value{line} = /* {n} */ "), 1);
            cs.edit(path, before, after.into_bytes());
        }
        if n % 10 == 0 {
            let path = format!("src/gen{n}.ts");
            cs.create(path, format!("// generated {n}\n").repeat(200).into_bytes());
        }
        cs.apply(&ws).expect("apply");
        let record = UndoRecord::of(&cs);
        let id = format!("pa-bench-{n}");
        let at_ms = 1_700_000_000_000 + n as i64;
        journal
            .record(&Decision {
                workspace: workspace.clone(),
                at_ms,
                actor: Actor::Person,
                action: ResolveAction::Apply,
                action_id: id.clone(),
                label: "AST Edit: 3 replacements in 3 files".into(),
                source_tool_name: "ast_edit".into(),
                reason: "looks right".into(),
                is_error: false,
                text: "Applied 3 replacements in 3 files.".into(),
                client: None,
                partial: None,
                review: None,
            })
            .unwrap();
        journal
            .keep_undo(&workspace, &id, "AST Edit: 3 replacements in 3 files", "ast_edit", at_ms, &record, retention)
            .unwrap();
    }
    let elapsed = started.elapsed();
    let (kept, bytes) = journal.undo_storage().unwrap();
    drop(journal);
    let size = |p: &std::path::Path| fs::metadata(p).map(|m| m.len()).unwrap_or(0);
    let wal = db.with_extension("sqlite3-wal");
    println!("applies: {applies} (3 one-line edits each; 1 in 10 also creates a 4 KB file)");
    println!("retention: {} entries, {} MiB", retention.max_entries, retention.max_bytes / (1024 * 1024));
    println!("undo entries kept: {kept}, undo data: {bytes} bytes");
    println!("database file: {} bytes (+ WAL {} bytes) after close", size(&db), size(&wal));
    println!(
        "time: {:.1} s ({:.2} ms per apply + journal)",
        elapsed.as_secs_f64(),
        elapsed.as_secs_f64() * 1000.0 / applies as f64
    );
}
