//! The overhead of one external `execute` round trip against a built-in tool call, both
//! through `Session::call` (validation, transcript, the same path an agent's call takes).
//!
//! `cargo run -q -p resolve-external --example round_trip [-- N]`
//!
//! Measures, N times each (default 300) after a warm-up: an in-process tool that answers at
//! once; the built-in `batch_rename_preview` on a 3-file folder (it pushes an action, which is
//! discarded outside the timing); an external Node tool (the Node SDK) and an external
//! Python tool (the Python SDK) that answer at once, with their process already running; and
//! the first call of an external tool (process start included). Prints medians and p95.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use resolve_engine::{Actor, ResolvePolicy, Session, Tool, ToolContext, ToolError, ToolResult};
use resolve_external::{Config, ExternalTools};
use serde_json::{json, Value};

struct Echo;

#[async_trait]
impl Tool for Echo {
    fn name(&self) -> &str {
        "echo_builtin"
    }
    fn label(&self) -> &str {
        "Echo"
    }
    fn description(&self) -> &str {
        "answers at once"
    }
    fn parameters(&self) -> Value {
        json!({"type": "object"})
    }
    async fn execute(&self, _ctx: ToolContext, _params: Value) -> Result<ToolResult, ToolError> {
        Ok(ToolResult::text("ok"))
    }
}

fn stats(mut v: Vec<Duration>) -> String {
    v.sort();
    let med = v[v.len() / 2];
    let p95 = v[(v.len() * 95 / 100).min(v.len() - 1)];
    format!("median {:>8.1} µs   p95 {:>8.1} µs", med.as_secs_f64() * 1e6, p95.as_secs_f64() * 1e6)
}

async fn time<F, Fut>(n: usize, mut f: F) -> Vec<Duration>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    for _ in 0..20 {
        f().await;
    }
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        let t = Instant::now();
        f().await;
        out.push(t.elapsed());
    }
    out
}

fn install(dir: &Path, name: &str, command: &str, args: Vec<String>, file: (&str, &str)) {
    let d = dir.join(name);
    std::fs::create_dir_all(&d).unwrap();
    let m = json!({"name": name, "label": name, "description": "answers at once", "parameters": {"type": "object"}, "command": command, "args": args});
    std::fs::write(d.join("tool.json"), m.to_string()).unwrap();
    std::fs::write(d.join(file.0), file.1).unwrap();
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let n: usize = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(300);
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let logs = tempfile::tempdir().unwrap();
    for i in 0..3 {
        std::fs::write(ws.path().join(format!("IMG_{i}.jpg")), "x").unwrap();
    }
    let tools_dir = ws.path().join(".resolve/tools");
    install(
        &tools_dir,
        "echo_node",
        "node",
        vec![repo.join("tools/sdk/node/run.js").display().to_string(), "tool.mjs".into()],
        ("tool.mjs", "export default (pi) => ({ name: 'echo_node', label: 'Echo', description: 'd', parameters: pi.typebox.Type.Object({}), async execute() { return { content: [{ type: 'text', text: 'ok' }] }; } });\n"),
    );
    install(
        &tools_dir,
        "echo_python",
        "python3",
        vec![repo.join("tools/sdk/python/run.py").display().to_string(), "tool.py".into()],
        ("tool.py", "def factory(pi):\n    return {'name': 'echo_python', 'label': 'Echo', 'description': 'd', 'parameters': {}, 'execute': lambda call_id, params: 'ok'}\n"),
    );
    let session = Arc::new(Session::open(ws.path(), ResolvePolicy::Agent).unwrap());
    session.load(|_api| vec![Arc::new(Echo) as Arc<dyn Tool>]).unwrap();
    session.load(resolve_tool_batch_rename::factory()).unwrap();
    let tools = ExternalTools::load(
        &session,
        Config {
            dirs: vec![tools_dir],
            log_dir: logs.path().to_path_buf(),
            never_pass: resolve_external::DEFAULT_NEVER_PASS.iter().map(|n| n.to_string()).collect(),
            limits: resolve_external::ToolLimits::default(),
        },
    );
    assert!(tools.problems().is_empty(), "{:?}", tools.problems());

    let s = session.clone();
    let cold = {
        let t = Instant::now();
        let r = s.call(Actor::Agent, "echo_node", json!({})).await;
        assert_eq!(r.text_content(), "ok", "{}", r.text_content());
        t.elapsed()
    };
    let builtin = time(n, || async {
        let r = s.call(Actor::Agent, "echo_builtin", json!({})).await;
        assert!(!r.is_error);
    })
    .await;
    let mut rename = Vec::with_capacity(n);
    for i in 0..(n + 20) {
        let t = Instant::now();
        let r = s
            .call(Actor::Agent, "batch_rename_preview", json!({"files": "*.jpg", "find": "^IMG_", "replace": "photo-"}))
            .await;
        let d = t.elapsed();
        assert!(!r.is_error, "{}", r.text_content());
        s.call(Actor::Person, "resolve", json!({"action": "discard", "reason": "bench"})).await;
        if i >= 20 {
            rename.push(d);
        }
    }
    let node = time(n, || async {
        let r = s.call(Actor::Agent, "echo_node", json!({})).await;
        assert_eq!(r.text_content(), "ok");
    })
    .await;
    let python = time(n, || async {
        let r = s.call(Actor::Agent, "echo_python", json!({})).await;
        assert_eq!(r.text_content(), "ok");
    })
    .await;
    println!("round trips through Session::call, n = {n} each (warm processes unless noted)");
    println!("  in-process tool (answers at once)      {}", stats(builtin));
    println!("  built-in batch_rename_preview (3 files) {}", stats(rename));
    println!("  external Node tool (SDK)               {}", stats(node));
    println!("  external Python tool (SDK)             {}", stats(python));
    println!("  external Node tool, first call (process start) {:.1} ms", cold.as_secs_f64() * 1e3);
}
