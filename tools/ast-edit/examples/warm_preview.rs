//! How much a warm preview saves: the preview of one rewrite over a corpus, cold (empty
//! cache, as a session's first call) and warm (the same call again after one file changed).
//!
//! ```text
//! cargo run --release -p resolve-tool-ast-edit --example warm_preview -- \
//!     --runs 5 --lang ts [--literal S] [--threads N] CORPUS PAT OUT
//! ```
//!
//! The corpus is copied to a temporary folder first (it is never touched). Before every warm
//! run one file is edited: a line is appended to the first changed file of the cold preview
//! (`--literal S` is that line, default a comment; a run number is added so every edit is new
//! content). Prints the median of the cold and the warm runs, their ratio and the cache
//! stats; then checks the last warm preview against a preview without cache (text, JSON,
//! change set) and exits 1 if they differ.

use std::path::Path;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use resolve_engine::{CancellationToken, Change, Workspace};
use resolve_tool_ast_edit::{preview, preview_cached, AstEditParams, PreviewCache, RewriteOp, ScanOptions};

struct Args {
    runs: usize,
    lang: String,
    literal: String,
    threads: Option<usize>,
    corpus: String,
    pat: String,
    out: String,
}

const USAGE: &str = "usage: warm_preview [--runs N] --lang LANG [--literal S] [--threads N] CORPUS PAT OUT";

fn parse_args() -> Result<Args, String> {
    let mut runs = 5;
    let mut lang = None;
    let mut literal = "// warm_preview edit".to_string();
    let mut threads = None;
    let mut rest = Vec::new();
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        let mut value = |name: &str| it.next().ok_or_else(|| format!("{name} needs a value\n{USAGE}"));
        let number = |name: &str, v: String| {
            v.parse::<usize>()
                .ok()
                .filter(|n| *n > 0)
                .ok_or_else(|| format!("{name} {v:?} is not a positive whole number\n{USAGE}"))
        };
        match a.as_str() {
            "--runs" => runs = number("--runs", value("--runs")?)?,
            "--lang" => lang = Some(value("--lang")?),
            "--literal" => literal = value("--literal")?,
            "--threads" => threads = Some(number("--threads", value("--threads")?)?),
            "-h" | "--help" => return Err(USAGE.to_string()),
            _ => rest.push(a),
        }
    }
    let [corpus, pat, out]: [String; 3] =
        rest.try_into().map_err(|r: Vec<String>| format!("expected CORPUS PAT OUT, got {r:?}\n{USAGE}"))?;
    let lang = lang.ok_or_else(|| format!("--lang is required\n{USAGE}"))?;
    Ok(Args { runs, lang, literal, threads, corpus, pat, out })
}

/// Copies the files and folders of `from` into `to` (symlinks are left out).
fn copy_tree(from: &Path, to: &Path) -> std::io::Result<u64> {
    std::fs::create_dir_all(to)?;
    let mut n = 0;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let kind = entry.file_type()?;
        let target = to.join(entry.file_name());
        if kind.is_dir() {
            n += copy_tree(&entry.path(), &target)?;
        } else if kind.is_file() {
            std::fs::copy(entry.path(), &target)?;
            n += 1;
        }
    }
    Ok(n)
}

fn median(mut v: Vec<Duration>) -> f64 {
    v.sort();
    v[v.len() / 2].as_secs_f64() * 1000.0
}

/// A changed file: path, bytes read, bytes to write.
type Edit = (String, Vec<u8>, Vec<u8>);

fn fingerprint(p: &resolve_tool_ast_edit::Preview) -> (String, String, Vec<Edit>) {
    let changes = p
        .change_set
        .changes()
        .iter()
        .filter_map(|c| match c {
            Change::Edit { path, before, after, .. } => Some((path.clone(), before.to_vec(), after.to_vec())),
            _ => None,
        })
        .collect();
    (p.text(usize::MAX), p.to_json().to_string(), changes)
}

fn run() -> Result<bool, String> {
    let args = parse_args()?;
    let dir = tempfile::tempdir().map_err(|e| format!("cannot create a temporary folder: {e}"))?;
    let copied = copy_tree(Path::new(&args.corpus), dir.path())
        .map_err(|e| format!("cannot copy the corpus {:?}: {e}", args.corpus))?;
    let ws = Workspace::open(dir.path()).map_err(|e| e.to_string())?;
    let params = AstEditParams {
        ops: vec![RewriteOp { pat: args.pat.clone(), out: args.out.clone() }],
        lang: Some(args.lang.clone()),
        ..AstEditParams::default()
    };
    let opts = ScanOptions { threads: args.threads, ..ScanOptions::default() };
    let cancel = CancellationToken::new();
    let mib = |b: usize| b as f64 / (1024.0 * 1024.0);

    let load_at_start = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    let mut cold = Vec::new();
    let mut first = None;
    for _ in 0..args.runs {
        // A new cache each time: the first call of a session.
        let cache = PreviewCache::new(opts.preview_cache_bytes);
        let t = Instant::now();
        let p = preview_cached(&ws, &params, &opts, &cancel, None, &cache).map_err(|e| e.to_string())?;
        cold.push(t.elapsed());
        first = Some((p, cache));
    }
    let (first, cache) = first.ok_or("no run")?;
    let filled = cache.stats();
    let edited = match first.files.first() {
        Some(f) => f.path.clone(),
        None => return Err("the cold preview changes no file; choose a pattern that matches".into()),
    };
    println!(
        "corpus {} ({copied} files copied), {} scanned, {} replacements in {} files; lang {}, `{}` -> `{}`",
        args.corpus,
        first.files_scanned,
        first.replacements,
        first.files.len(),
        args.lang,
        args.pat,
        args.out
    );
    drop(first);

    let mut warm = Vec::new();
    let mut last = None;
    let abs = dir.path().join(&edited);
    for r in 0..args.runs {
        let mut text = std::fs::read(&abs).map_err(|e| format!("cannot read {edited}: {e}"))?;
        text.extend_from_slice(format!("{} {r}\n", args.literal).as_bytes());
        std::fs::write(&abs, text).map_err(|e| format!("cannot edit {edited}: {e}"))?;
        let before = cache.stats();
        let t = Instant::now();
        let p = preview_cached(&ws, &params, &opts, &cancel, None, &cache).map_err(|e| e.to_string())?;
        warm.push(t.elapsed());
        let after = cache.stats();
        if after.misses - before.misses != 1 {
            return Err(format!(
                "warm run {r}: {} misses, expected exactly the edited file",
                after.misses - before.misses
            ));
        }
        last = Some(p);
    }
    let stats = cache.stats();
    let (c, w) = (median(cold), median(warm));
    println!("edited each warm run: {edited} (appended `{} N`)", args.literal);
    println!("cold median {c:.1} ms, warm median {w:.1} ms, warm/cold {:.1}% ({} runs each)", 100.0 * w / c, args.runs);
    println!(
        "cache after the cold run: {} entries, {:.2} MiB; at the end: {} entries, {:.2} MiB of {:.0} MiB, {} hits, {} misses",
        filled.entries,
        mib(filled.bytes),
        stats.entries,
        mib(stats.bytes),
        mib(stats.capacity),
        stats.hits,
        stats.misses
    );
    let last = last.ok_or("no warm run")?;
    let check = preview(&ws, &params, &opts, &cancel, None).map_err(|e| e.to_string())?;
    let same = fingerprint(&last) == fingerprint(&check);
    println!(
        "last warm preview {} a preview without cache (text, JSON, change set)",
        if same { "is identical to" } else { "DIFFERS from" }
    );
    let load_at_end = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!("load average (/proc/loadavg) at the start: {}; at the end: {}", load_at_start.trim(), load_at_end.trim());
    Ok(same)
}

fn main() -> ExitCode {
    match run() {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("warm_preview: {e}");
            ExitCode::from(2)
        }
    }
}
