//! Resident memory of a session over many previews of the 5,000-replacement demo rewrite
//! (`console.log($$$A)` → `logger.debug($$$A)`), as in tests/e2e/bigfiles.js.
//!
//! ```text
//! cargo run --release -p resolve-tool-ast-edit --example memory -- [N] [--shape many|big] [--keep]
//! ```
//!
//! Each round is one `ast_edit` preview through `Session::call` (transcript, observers, the
//! pending stack: the path an agent's call takes), then a discard of it (`resolve`), unless
//! `--keep`, which leaves every preview on the stack. Prints the process's resident memory
//! (`VmRSS` of /proc/self/status) after round 1 and after round N, their ratio, and the size
//! of the transcript as JSON. Shapes: `many` = 1,000 files of 5 calls (default), `big` = one
//! 20,000-line file with 5,000 calls. Linux only (reads /proc).

use std::path::Path;
use std::time::Instant;

use resolve_engine::{Actor, PendingActionStore, ResolvePolicy, Session};
use serde_json::json;

fn rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

fn mib(kib: u64) -> f64 {
    kib as f64 / 1024.0
}

/// 1,000 TypeScript files with 5 `console.log` calls each (`manyFiles` in bigfiles.js).
fn many_files(root: &Path) {
    for d in 0..20 {
        let dir = root.join(format!("pkg{d}"));
        std::fs::create_dir_all(&dir).unwrap();
        for f in 0..50 {
            let mut src =
                format!("import {{ logger }} from \"../logger\";\n\nexport function f{f}(x: number): number {{\n");
            for i in 0..5 {
                src += &format!("  console.log(\"step {i}\", x + {i});\n  x = x * {} - {f};\n", i + 2);
            }
            src += "  return x;\n}\n";
            std::fs::write(dir.join(format!("mod{f}.ts")), src).unwrap();
        }
    }
    std::fs::write(root.join("logger.ts"), "export const logger = { debug: (..._a: unknown[]) => {} };\n").unwrap();
}

/// One 20,000-line file with 5,000 `console.log` calls (`bigFile` in bigfiles.js).
fn big_file(root: &Path) {
    let mut lines: Vec<String> = vec![
        "// A long file.".into(),
        "import { logger } from './logger';".into(),
        String::new(),
        "/* A block comment".into(),
        "   over three lines: console.log(here) is prose */".into(),
    ];
    let mut n = 0;
    while lines.len() < 19990 {
        let i = lines.len();
        if i % 100 == 7 {
            lines.push("const banner = `a template".into());
            lines.push(format!("  literal over lines ${{{i}}}`;"));
        } else if n < 5000 && i.is_multiple_of(3) {
            lines.push(format!("  console.log(\"value\", x{i});"));
            n += 1;
        } else {
            lines.push(format!("  const v{i} = compute({i}) + other.field;"));
        }
    }
    while lines.len() < 20000 {
        lines.push(format!("  const tail{} = {};", lines.len(), lines.len()));
    }
    std::fs::write(root.join("big.ts"), lines.join("\n") + "\n").unwrap();
    std::fs::write(root.join("logger.ts"), "export const logger = { debug: (..._a: unknown[]) => {} };\n").unwrap();
}

#[tokio::main]
async fn main() {
    let mut rounds = 100usize;
    let mut shape = "many".to_string();
    let mut keep = false;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--keep" => keep = true,
            "--shape" => shape = args.next().unwrap_or_default(),
            n => match n.parse() {
                Ok(n) if n > 0 => rounds = n,
                _ => {
                    eprintln!("memory: unknown argument `{n}`; usage: memory [N] [--shape many|big] [--keep]");
                    std::process::exit(2);
                }
            },
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let path = match shape.as_str() {
        "many" => {
            many_files(dir.path());
            None
        }
        "big" => {
            big_file(dir.path());
            Some("big.ts")
        }
        other => {
            eprintln!("memory: unknown shape `{other}`; use many or big");
            std::process::exit(2);
        }
    };
    let session = Session::with_store(dir.path(), ResolvePolicy::Agent, PendingActionStore::with_id_prefix("pa-"))
        .expect("a temp dir opens");
    session.load(resolve_tool_ast_edit::factory()).expect("ast_edit loads");
    let mut params = json!({"ops": [{"pat": "console.log($$$A)", "out": "logger.debug($$$A)"}], "lang": "ts"});
    if let Some(p) = path {
        params["path"] = json!(p);
    }

    let rss_start = rss_kib();
    let mut rss_first = 0;
    let started = Instant::now();
    let mut label = String::new();
    for round in 1..=rounds {
        let r = session.call(Actor::Script, "ast_edit", params.clone()).await;
        assert!(!r.is_error, "{}", r.text_content());
        if round == 1 {
            label = session.store().peek().map(|a| a.label).unwrap_or_default();
        }
        drop(r);
        if !keep {
            let d =
                session.call(Actor::Script, "resolve", json!({"action": "discard", "reason": "memory bench"})).await;
            assert!(!d.is_error, "{}", d.text_content());
        }
        if round == 1 {
            rss_first = rss_kib();
        }
    }
    let rss_last = rss_kib();
    let secs = started.elapsed().as_secs_f64();
    println!(
        "shape {shape} ({label}), {rounds} previews{}, {:.2} s",
        if keep { " kept on the stack (--keep)" } else { ", each discarded" },
        secs
    );
    println!("RSS before: {:.1} MiB", mib(rss_start));
    println!("RSS after preview 1: {:.1} MiB", mib(rss_first));
    println!("RSS after preview {rounds}: {:.1} MiB", mib(rss_last));
    println!("ratio: {:.2}x", rss_last as f64 / rss_first.max(1) as f64);
    // Measured last (it copies the transcript).
    let transcript = session.transcript();
    let bytes: usize = transcript.iter().map(|e| serde_json::to_vec(e).map(|b| b.len()).unwrap_or(0)).sum();
    println!(
        "transcript: {} entries, {:.2} MB as JSON; pending actions: {}",
        transcript.len(),
        bytes as f64 / 1e6,
        session.store().len()
    );
}
