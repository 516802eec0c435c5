//! Time from the fake model's tool call (the SSE chunk that completes the `ast_edit` call's
//! arguments) to the pending action being on the store (the store's `Pushed` event), over
//! real HTTP on 127.0.0.1. Not a test: it prints figures.
//!
//!     cargo bench [--profile dev] -p resolve-agent --features fake-llm --bench tool_call_to_store [-- RUNS]

use std::time::{Duration, Instant};

use resolve_agent::fake::{FakeLlm, FakeReply};
use resolve_agent::{AgentLoop, LlmClient, ModelSource, ProviderConfig};
use resolve_engine::{CancellationToken, PendingActionStore, ResolvePolicy, Session, StoreChange};
use serde_json::json;

async fn one_run() -> Duration {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(dir.path().join("a.ts"), "console.log(1);\nconsole.log(2);\n").expect("write a.ts");
    let session = Session::with_store(dir.path(), ResolvePolicy::Agent, PendingActionStore::with_id_prefix("pa-"))
        .expect("session");
    session.load(resolve_tool_ast_edit::factory()).expect("ast_edit loads");
    let args = json!({"ops": [{"pat": "console.log($A)", "out": "logger.debug($A)"}], "lang": "ts"});
    let fake = FakeLlm::start(vec![FakeReply::tool_calls(None, &[("c1", "ast_edit", args)]), FakeReply::text("ok")])
        .await
        .expect("fake server");
    let client = LlmClient::with_key(ProviderConfig::new(fake.base_url(), "fake"), None).expect("client");
    let mut agent = AgentLoop::new(ModelSource::Live(client));
    let mut events = session.store().subscribe();
    let pushed = tokio::spawn(async move {
        loop {
            match events.recv().await {
                Ok(e) if matches!(e.change, StoreChange::Pushed { .. }) => return Instant::now(),
                Ok(_) => {}
                Err(e) => panic!("store events: {e}"),
            }
        }
    });
    agent.run_turn(&session, "go", CancellationToken::new(), |_| {}).await.expect("turn");
    let pushed_at = pushed.await.expect("push seen");
    let marks = fake.marks();
    pushed_at.duration_since(marks[0])
}

fn main() {
    let runs: usize = std::env::args().skip(1).find_map(|a| a.parse().ok()).unwrap_or(50);
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("runtime");
    rt.block_on(one_run()); // warm-up (connection set-up, first parse)
    let mut times: Vec<Duration> = (0..runs).map(|_| rt.block_on(one_run())).collect();
    times.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    let profile = if cfg!(debug_assertions) { " --profile dev" } else { "" };
    println!("command: cargo bench{profile} -p resolve-agent --features fake-llm --bench tool_call_to_store -- {runs}");
    println!(
        "tool call completed (SSE chunk) -> pending action on the store (ast_edit, 1 file), {runs} runs: median {:.2} ms, p90 {:.2} ms, min {:.2} ms, max {:.2} ms",
        ms(times[runs / 2]),
        ms(times[(runs * 9) / 10]),
        ms(times[0]),
        ms(times[runs - 1])
    );
}
