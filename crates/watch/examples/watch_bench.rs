//! Benchmark of live staleness (not a test): on a copy of a corpus folder (the 3,300-file
//! TypeScript corpus of `../shared/bench/make-corpus.sh`),
//! 1. the time to set up the watch and the memory it adds;
//! 2. the CPU the watching process uses while nothing changes (`getrusage` over an idle
//!    spell, with its context switches: no polling means next to none);
//! 3. the time from a file save (the write returning) to the pending action that
//!    previewed the file turning stale, and from the revert to it turning pending again
//!    (median over many saves).
//!
//! ```text
//! cargo run --release -p resolve-watch --example watch_bench -- CORPUS_DIR [SAVES] [IDLE_SECONDS]
//! ```

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use resolve_engine::{ActionStatus, ChangeSet, CustomToolPendingAction, ResolvePolicy, Session, StoreChange};
use resolve_watch::Watcher;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(corpus) = args.first().map(PathBuf::from) else {
        eprintln!("usage: watch_bench CORPUS_DIR [SAVES] [IDLE_SECONDS]");
        std::process::exit(2);
    };
    let saves: usize = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(30);
    let idle_s: u64 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(30);

    let copy = tempfile::Builder::new().prefix("rd-watch-bench-").tempdir().expect("temp dir");
    let (files, dirs, bytes) = copy_tree(&corpus, copy.path());
    println!(
        "corpus: {} ({files} files, {dirs} folders, {:.1} MB), copied to {}",
        corpus.display(),
        bytes as f64 / 1e6,
        copy.path().display()
    );

    let session = Arc::new(Session::open(copy.path(), ResolvePolicy::Human).expect("open the copy"));
    // One pending action per file to save: an edit previewed from the file's bytes.
    let targets = ts_files(copy.path(), saves);
    let mut ids = Vec::new();
    for rel in &targets {
        let before = fs::read(copy.path().join(rel)).expect("read a target");
        let mut after = before.clone();
        after.extend_from_slice(b"\n// previewed change\n");
        let mut cs = ChangeSet::new();
        cs.edit(rel.clone(), before, after);
        let action = CustomToolPendingAction::from_change_set("Bench: edit", cs, session.workspace().clone(), "ok");
        ids.push(session.api().push_pending_action(action).expect("push"));
    }

    // 1. Setup.
    let rss_before = rss_kib();
    let t = Instant::now();
    let watcher = Watcher::start(session.clone()).expect("start the watch");
    let setup = t.elapsed();
    let rss_after = rss_kib();
    println!(
        "setup: {:.1} ms to watch {dirs} folders recursively; RSS {} KiB → {} KiB (+{} KiB)",
        setup.as_secs_f64() * 1e3,
        rss_before,
        rss_after,
        rss_after.saturating_sub(rss_before)
    );

    // 2. Idle.
    let (cpu0, csw0) = usage();
    let t = Instant::now();
    std::thread::sleep(Duration::from_secs(idle_s));
    let wall = t.elapsed();
    let (cpu1, csw1) = usage();
    let cpu = cpu1 - cpu0;
    println!(
        "idle: {:.3} ms CPU in {:.1} s ({:.5} % of one core), {} context switches (all threads of the process)",
        cpu.as_secs_f64() * 1e3,
        wall.as_secs_f64(),
        100.0 * cpu.as_secs_f64() / wall.as_secs_f64(),
        csw1 - csw0
    );

    for (name, ticks) in thread_ticks() {
        println!("  thread {name}: {ticks} ticks of CPU since it started");
    }

    // 3. Save → stale, revert → pending.
    let mut events = session.store().subscribe();
    let mut to_stale = Vec::new();
    let mut to_pending = Vec::new();
    for (rel, id) in targets.iter().zip(&ids) {
        let path = copy.path().join(rel);
        let original = fs::read(&path).expect("read");
        let mut edited = original.clone();
        edited.extend_from_slice(b"\n// saved in an editor\n");
        for (bytes, samples, want_stale) in [(&edited, &mut to_stale, true), (&original, &mut to_pending, false)] {
            while events.try_recv().is_ok() {}
            let t = Instant::now();
            fs::write(&path, bytes).expect("save");
            let saved = t.elapsed();
            loop {
                let event = events.blocking_recv().expect("store events");
                if event.change != (StoreChange::StatusChanged { id: id.clone() }) {
                    continue;
                }
                let status = session.store().info(id).expect("still pending").status;
                if matches!(status, ActionStatus::Stale { .. }) == want_stale {
                    break;
                }
            }
            samples.push(t.elapsed() - saved);
            // Let the burst settle (the debouncer's last batch of this save) before the next.
            std::thread::sleep(Duration::from_millis(400));
        }
    }
    watcher.stop();
    report("save → stale", &mut to_stale);
    report("revert → pending", &mut to_pending);
    println!("(debounce {} ms)", resolve_watch::DEBOUNCE.as_millis());
}

fn report(what: &str, samples: &mut [Duration]) {
    samples.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let n = samples.len();
    println!(
        "{what}: median {:.1} ms, p90 {:.1} ms, min {:.1} ms, max {:.1} ms over {n} saves",
        ms(samples[n / 2]),
        ms(samples[(n * 9 / 10).min(n - 1)]),
        ms(samples[0]),
        ms(samples[n - 1])
    );
}

/// Copies `from` into `to`; returns (files, folders, bytes).
fn copy_tree(from: &Path, to: &Path) -> (usize, usize, u64) {
    let (mut files, mut dirs, mut bytes) = (0, 0, 0);
    for entry in fs::read_dir(from).expect("read the corpus") {
        let entry = entry.expect("entry");
        let src = entry.path();
        let dst = to.join(entry.file_name());
        let kind = entry.file_type().expect("type");
        if kind.is_dir() {
            fs::create_dir_all(&dst).expect("mkdir");
            let (f, d, b) = copy_tree(&src, &dst);
            files += f;
            dirs += d + 1;
            bytes += b;
        } else if kind.is_file() {
            bytes += fs::copy(&src, &dst).expect("copy");
            files += 1;
        }
    }
    (files, dirs, bytes)
}

/// `n` workspace-relative `.ts` files, spread over the tree.
fn ts_files(root: &Path, n: usize) -> Vec<String> {
    let mut all = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in fs::read_dir(&dir).expect("read").flatten() {
            let p = entry.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|e| e == "ts") {
                all.push(p.strip_prefix(root).expect("inside").to_string_lossy().replace('\\', "/"));
            }
        }
    }
    all.sort();
    let step = (all.len() / n.max(1)).max(1);
    all.into_iter().step_by(step).take(n).collect()
}

fn rss_kib() -> u64 {
    fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines().find(|l| l.starts_with("VmRSS:")).and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}

/// CPU time (user + system) and context switches (voluntary + not) of the whole process.
fn usage() -> (Duration, i64) {
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `u` is a valid, writable rusage for the call to fill.
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) };
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    (tv(u.ru_utime) + tv(u.ru_stime), u.ru_nvcsw + u.ru_nivcsw)
}

/// (name, user + system clock ticks) of every thread of this process.
fn thread_ticks() -> Vec<(String, u64)> {
    let mut out = Vec::new();
    for entry in fs::read_dir("/proc/self/task").into_iter().flatten().flatten() {
        let name = fs::read_to_string(entry.path().join("comm")).unwrap_or_default().trim().to_string();
        let stat = fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
        let after = stat.rsplit_once(')').map(|(_, r)| r).unwrap_or("");
        let f: Vec<&str> = after.split_whitespace().collect();
        let ticks = f.get(11).and_then(|u| u.parse::<u64>().ok()).unwrap_or(0)
            + f.get(12).and_then(|s| s.parse::<u64>().ok()).unwrap_or(0);
        out.push((name, ticks));
    }
    out
}
