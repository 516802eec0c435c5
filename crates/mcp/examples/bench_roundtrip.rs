//! Benchmark (not a test): how long from an MCP `tools/call` of `ast_edit` written on the
//! wire to the pending action being on the stack (the store event the window listens to),
//! and to the call's answer arriving back at the client. The server is the real one
//! (`resolve_mcp::serve`, JSON-RPC lines over an in-memory pipe); the workspace is a temp
//! folder with one small TypeScript file.
//!
//!     cargo run --release -p resolve-mcp --example bench_roundtrip -- [RUNS]

use std::sync::Arc;
use std::time::{Duration, Instant};

use resolve_engine::{Actor, ResolvePolicy, Session, StoreChange};
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

#[tokio::main]
async fn main() {
    let runs: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(50);
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(dir.path().join("a.ts"), "console.log(1);\nconsole.log(2);\n").expect("write fixture");
    let session = Session::open(dir.path(), ResolvePolicy::Agent).expect("session");
    session.load(resolve_tool_ast_edit::factory()).expect("ast_edit loads");
    let session = Arc::new(session);

    let (client, server) = tokio::io::duplex(1 << 20);
    let (server_read, server_write) = tokio::io::split(server);
    tokio::spawn(resolve_mcp::serve(session.clone(), server_read, server_write));
    let (client_read, mut client_write) = tokio::io::split(client);
    let mut lines = BufReader::new(client_read).lines();

    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}}});
    client_write.write_all(format!("{init}\n").as_bytes()).await.expect("write");
    lines.next_line().await.expect("read").expect("initialize answer");
    client_write.write_all(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n").await.expect("write");

    let mut to_stack = Vec::with_capacity(runs);
    let mut to_answer = Vec::with_capacity(runs);
    for i in 1..=runs {
        let mut events = session.store().subscribe();
        let call = json!({"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {"name": "ast_edit",
            "arguments": {"ops": [{"pat": "console.log($A)", "out": "logger.debug($A)"}], "lang": "ts"}}});
        let line = format!("{call}\n");
        let start = Instant::now();
        client_write.write_all(line.as_bytes()).await.expect("write");
        loop {
            let ev = events.recv().await.expect("store event");
            if matches!(ev.change, StoreChange::Pushed { .. }) {
                to_stack.push(start.elapsed());
                break;
            }
        }
        loop {
            let answer = lines.next_line().await.expect("read").expect("an answer");
            let v: Value = serde_json::from_str(&answer).expect("JSON");
            if v["id"] == json!(i) {
                to_answer.push(start.elapsed());
                assert_eq!(v["result"]["isError"], json!(false), "{v}");
                break;
            }
        }
        let r = session.call(Actor::Person, "resolve", json!({"action": "discard", "reason": "bench"})).await;
        assert!(!r.is_error, "{}", r.text_content());
    }
    println!(
        "{runs} runs: MCP tools/call -> action on the stack: median {:.2} ms (min {:.2}, max {:.2}); -> answer at the client: median {:.2} ms",
        median(to_stack.clone()).as_secs_f64() * 1e3,
        to_stack.iter().min().expect("runs > 0").as_secs_f64() * 1e3,
        to_stack.iter().max().expect("runs > 0").as_secs_f64() * 1e3,
        median(to_answer).as_secs_f64() * 1e3,
    );
}
