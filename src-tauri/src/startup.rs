//! Start-up marks: where the time goes between `exec` and the first paint of the queue.
//!
//! The shell notes a few phases as they pass ([`mark`]); the page reports its own (script
//! start, backend ready, queue loaded, painted) through the `startup_painted` command once the
//! queue has been painted (two animation frames after it rendered). With
//! `RESOLVE_DESK_STARTUP_MARK=FILE` set, the whole profile is written to FILE as one JSON
//! object (`scripts/bench-startup.py` reads it); without it nothing is written. Times are
//! milliseconds since the process started (`/proc/self/stat`) and wall-clock epoch
//! milliseconds, so a launcher can compare them with its own clock.

use std::sync::Mutex;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use serde_json::{json, Value};

struct Marks {
    origin: Instant,
    /// Milliseconds between the process start and `origin` (`main`).
    before_main_ms: f64,
    phases: Vec<(String, f64)>,
    written: bool,
}

static MARKS: Mutex<Option<Marks>> = Mutex::new(None);

fn epoch_ms() -> f64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs_f64() * 1000.0).unwrap_or(0.0)
}

/// The process's age in milliseconds, from `/proc/self/stat` (clock ticks since boot) and
/// `/proc/uptime`; 0 when they cannot be read.
fn process_age_ms() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let uptime = std::fs::read_to_string("/proc/uptime").unwrap_or_default();
    // Field 22 (starttime) counts from after the command name, which may hold spaces.
    let after_name = stat.rsplit_once(')').map(|(_, rest)| rest).unwrap_or("");
    let start_ticks: Option<f64> = after_name.split_whitespace().nth(19).and_then(|s| s.parse().ok());
    let up_s: Option<f64> = uptime.split_whitespace().next().and_then(|s| s.parse().ok());
    match (start_ticks, up_s) {
        // CLK_TCK is 100 on every Linux the app runs on.
        (Some(t), Some(u)) => ((u - t / 100.0) * 1000.0).max(0.0),
        _ => 0.0,
    }
}

/// Starts the clock (first thing in `run`).
pub fn begin() {
    let mut m = MARKS.lock().unwrap_or_else(|p| p.into_inner());
    if m.is_none() {
        *m = Some(Marks {
            origin: Instant::now(),
            before_main_ms: process_age_ms(),
            phases: vec![("main".into(), 0.0)],
            written: false,
        });
    }
}

/// Notes that `phase` has passed.
pub fn mark(phase: &str) {
    let mut m = MARKS.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(m) = m.as_mut() {
        let at = m.origin.elapsed().as_secs_f64() * 1000.0;
        m.phases.push((phase.to_string(), at));
    }
}

/// The profile so far: shell phases (ms since `main`), the page's own marks (ms since its
/// navigation started, `performance.now()`), and the clocks to line them up.
pub fn profile(page: &[(String, f64)], page_origin_epoch_ms: f64) -> Value {
    let m = MARKS.lock().unwrap_or_else(|p| p.into_inner());
    let Some(m) = m.as_ref() else { return Value::Null };
    let now_since_main = m.origin.elapsed().as_secs_f64() * 1000.0;
    let main_epoch_ms = epoch_ms() - now_since_main;
    let shell: serde_json::Map<String, Value> = m.phases.iter().map(|(k, v)| (k.clone(), json!(round(*v)))).collect();
    // The page's marks on the shell's clock (ms since main).
    let page_marks: serde_json::Map<String, Value> =
        page.iter().map(|(k, v)| (k.clone(), json!(round(page_origin_epoch_ms + v - main_epoch_ms)))).collect();
    json!({
        "process_start_epoch_ms": round(main_epoch_ms - m.before_main_ms),
        "main_epoch_ms": round(main_epoch_ms),
        "before_main_ms": round(m.before_main_ms),
        "shell_ms_since_main": shell,
        "page_ms_since_main": page_marks,
        "painted_epoch_ms": round(epoch_ms()),
        "painted_ms_since_process_start": round(now_since_main + m.before_main_ms),
        // WebKit's renderer as the app left it (see `renderer`): "1" = no DMA-BUF renderer.
        "webkit_disable_dmabuf_renderer": std::env::var(crate::renderer::VAR).ok(),
    })
}

fn round(x: f64) -> f64 {
    (x * 10.0).round() / 10.0
}

/// Writes the profile to `RESOLVE_DESK_STARTUP_MARK` once (the first paint only).
pub fn painted(page: &[(String, f64)], page_origin_epoch_ms: f64) {
    let Some(path) = std::env::var_os("RESOLVE_DESK_STARTUP_MARK") else { return };
    {
        let mut m = MARKS.lock().unwrap_or_else(|p| p.into_inner());
        match m.as_mut() {
            Some(m) if !m.written => m.written = true,
            _ => return,
        }
    }
    let profile = profile(page, page_origin_epoch_ms);
    if let Err(e) = std::fs::write(&path, format!("{profile}\n")) {
        eprintln!("resolve-desk: cannot write the start-up marks to {}: {e}", std::path::Path::new(&path).display());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_profile_lines_up_page_marks_with_the_shell_clock() {
        begin();
        mark("state");
        let page_origin = epoch_ms() - 5.0;
        let p = profile(&[("painted".into(), 5.0)], page_origin);
        let shell = p["shell_ms_since_main"].as_object().expect("shell marks");
        assert!(shell.contains_key("main") && shell.contains_key("state"), "{p}");
        let painted = p["page_ms_since_main"]["painted"].as_f64().expect("page mark");
        let state = shell["state"].as_f64().expect("state");
        // The page mark was taken now, after `state`: it lines up after it on the shell's clock.
        assert!(painted + 1.0 >= state, "painted {painted} before state {state}: {p}");
        assert!(p["before_main_ms"].as_f64().expect("age") >= 0.0);
    }
}
