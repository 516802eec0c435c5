//! The MCP server on a real socket pair, driven by raw JSON-RPC lines (what any client sends):
//! the tool annotations an agent's client decides on, and progress thinning.

use std::sync::Arc;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use resolve_engine::{Progress, ResolvePolicy, Session, Tool, ToolContext, ToolError, ToolResult};
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::net::unix::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::UnixStream;

/// A client on one end of a Unix socket pair; the server (`resolve_mcp::serve`) on the other.
struct Client {
    write: OwnedWriteHalf,
    lines: Lines<BufReader<OwnedReadHalf>>,
}

impl Client {
    async fn start(session: Arc<Session>) -> Client {
        let (ours, theirs) = UnixStream::pair().unwrap();
        let (r, w) = theirs.into_split();
        tokio::spawn(resolve_mcp::serve(session, r, w));
        let (read, write) = ours.into_split();
        let mut client = Client { write, lines: BufReader::new(read).lines() };
        let (answer, _) = client
            .request(
                0,
                "initialize",
                json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}),
            )
            .await;
        assert_eq!(answer["result"]["serverInfo"]["name"], "resolve-desk", "{answer}");
        client.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await;
        client
    }

    async fn send(&mut self, message: Value) {
        self.write.write_all(format!("{message}\n").as_bytes()).await.unwrap();
    }

    /// Sends a request and reads up to its answer: (the answer, every message before it).
    async fn request(&mut self, id: u64, method: &str, params: Value) -> (Value, Vec<Value>) {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})).await;
        let mut before = Vec::new();
        loop {
            let line = tokio::time::timeout(Duration::from_secs(30), self.lines.next_line())
                .await
                .unwrap_or_else(|_| panic!("no answer to `{method}` within 30 s"))
                .unwrap()
                .expect("the server keeps the connection open");
            let message: Value = serde_json::from_str(&line).unwrap();
            if message.get("id") == Some(&json!(id)) && message.get("method").is_none() {
                return (message, before);
            }
            before.push(message);
        }
    }

    async fn tools(&mut self, id: u64) -> Vec<Value> {
        let (answer, _) = self.request(id, "tools/list", json!({})).await;
        answer["result"]["tools"].as_array().unwrap().clone()
    }
}

fn tool<'a>(tools: &'a [Value], name: &str) -> &'a Value {
    tools.iter().find(|t| t["name"] == name).unwrap_or_else(|| panic!("`{name}` is listed: {tools:?}"))
}

fn assert_announced_as_able_to_change_anything(t: &Value) {
    let a = &t["annotations"];
    assert_eq!(a["readOnlyHint"], false, "{t}");
    assert_eq!(a["destructiveHint"], true, "{t}");
    assert_eq!(a["openWorldHint"], true, "{t}");
    assert!(!t["description"].as_str().unwrap().contains("Writes nothing"), "no claim to write nothing: {t}");
}

#[tokio::test]
async fn only_the_built_in_previews_are_read_only_an_external_tool_and_resolve_may_change_anything() {
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("a.ts"), "console.log(1);\n").unwrap();
    let tools_dir = ws.path().join(".resolve/tools");
    let greet = tools_dir.join("greet");
    std::fs::create_dir_all(&greet).unwrap();
    // Its manifest may say what it likes: the program runs whatever `execute` does.
    let manifest = json!({
        "name": "greet", "label": "Greet", "description": "Only previews a greeting; writes nothing.",
        "parameters": {"type": "object"}, "command": "python3", "args": ["tool.py"],
    });
    std::fs::write(greet.join("tool.json"), manifest.to_string()).unwrap();
    let logs = tempfile::tempdir().unwrap();

    let session = Session::open(ws.path(), ResolvePolicy::Agent).unwrap();
    session.load(resolve_tool_ast_edit::factory()).unwrap();
    session.load(resolve_tool_batch_rename::factory()).unwrap();
    let external = resolve_external::ExternalTools::load(
        &session,
        resolve_external::Config { dirs: vec![tools_dir], log_dir: logs.path().to_path_buf(), ..Default::default() },
    );
    assert_eq!(external.names(), vec!["greet"], "{:?}", external.problems());
    let mut client = Client::start(Arc::new(session)).await;

    let tools = client.tools(1).await;
    for name in ["ast_edit", "batch_rename_preview"] {
        let t = tool(&tools, name);
        assert_eq!(t["annotations"]["readOnlyHint"], true, "{t}");
        assert_eq!(t["annotations"]["destructiveHint"], false, "{t}");
        assert_eq!(t["annotations"]["openWorldHint"], false, "{t}");
        assert!(t["description"].as_str().unwrap().contains("(Writes nothing:"), "{t}");
    }
    assert_announced_as_able_to_change_anything(tool(&tools, "greet"));
    // `resolve` (listed whatever the stack holds) writes: destructive too.
    assert_announced_as_able_to_change_anything(tool(&tools, "resolve"));
}

/// A tool that reports every one of its 10,000 steps, a little work apart.
struct Steps;

const STEPS: u64 = 10_000;

#[async_trait]
impl Tool for Steps {
    fn name(&self) -> &str {
        "steps"
    }
    fn label(&self) -> &str {
        "Steps"
    }
    fn description(&self) -> &str {
        "reports 10,000 steps"
    }
    fn parameters(&self) -> Value {
        json!({"type": "object"})
    }
    async fn execute(&self, ctx: ToolContext, _params: Value) -> Result<ToolResult, ToolError> {
        tokio::task::spawn_blocking(move || {
            for done in 1..=STEPS {
                // The work of one step (a file scanned, say).
                std::thread::sleep(Duration::from_micros(50));
                ctx.report(Progress { done, total: Some(STEPS), message: Some(format!("step {done}")) });
            }
        })
        .await
        .map_err(|e| ToolError::Failed(e.to_string()))?;
        Ok(ToolResult::text("done"))
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_reporting_ten_thousand_steps_sends_a_few_increasing_notifications_ending_with_the_last() {
    let ws = tempfile::tempdir().unwrap();
    let session = Session::open(ws.path(), ResolvePolicy::Agent).unwrap();
    session.load(|_api: &resolve_engine::CustomToolApi| vec![Arc::new(Steps) as Arc<dyn Tool>]).unwrap();
    let mut client = Client::start(Arc::new(session)).await;

    let started = Instant::now();
    let (answer, before) = client
        .request(1, "tools/call", json!({"name": "steps", "arguments": {}, "_meta": {"progressToken": "p1"}}))
        .await;
    let took = started.elapsed();
    assert_eq!(answer["result"]["content"][0]["text"], "done", "{answer}");

    let progress: Vec<&Value> = before
        .iter()
        .filter(|m| m["method"] == "notifications/progress")
        .map(|m| &m["params"])
        .inspect(|p| assert_eq!(p["progressToken"], "p1"))
        .collect();
    let values: Vec<f64> = progress.iter().map(|p| p["progress"].as_f64().unwrap()).collect();
    let bound = (took.as_millis() / resolve_mcp::PROGRESS_EVERY.as_millis()) as usize + 2;
    assert!(
        !values.is_empty() && values.len() <= bound,
        "at most one notification per {:?} of the call's {took:?}, plus the last: {} sent",
        resolve_mcp::PROGRESS_EVERY,
        values.len()
    );
    assert!(values.windows(2).all(|w| w[0] < w[1]), "increasing: {values:?}");
    let last = progress.last().unwrap();
    assert_eq!(
        last["progress"].as_f64(),
        Some(STEPS as f64),
        "the last report always goes, before the answer: {values:?}"
    );
    assert_eq!(last["total"].as_f64(), Some(STEPS as f64));
    assert_eq!(last["message"], "step 10000");
}
