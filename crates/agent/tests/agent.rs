//! The agent loop against a fake OpenAI-compatible server (real HTTP on 127.0.0.1, real SSE,
//! tool-call arguments split across chunks), real temp workspaces and the real `ast_edit`.
//! All of the crate's integration tests live in this one binary; add new ones here.

use std::sync::{Arc, Mutex};

use resolve_agent::fake::{FakeChunk, FakeLlm, FakeReply};
use resolve_agent::llm::client::ApiKey;
use resolve_agent::{
    AgentError, AgentEvent, AgentLoop, LlmClient, LlmError, ModelSource, ProviderConfig, Replay, TurnOutcome,
};
use resolve_engine::{
    Actor, CancellationToken, PendingActionStore, ResolvePolicy, Session, PREVIEW_REMINDER, RESOLVE_TOOL_NAME,
};
use serde_json::{json, Value};

#[path = "agent/human.rs"]
mod human;

const KEY: &str = "sk-test-RECOGNISABLE-8d1f3c";

struct Desk {
    dir: tempfile::TempDir,
    session: Arc<Session>,
}

fn desk(policy: ResolvePolicy) -> Desk {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.ts"), "console.log(1);\n").unwrap();
    std::fs::write(dir.path().join("b.ts"), "console.log(2);\n").unwrap();
    let session = Session::with_store(dir.path(), policy, PendingActionStore::with_id_prefix("pa-")).unwrap();
    session.load(resolve_tool_ast_edit::factory()).unwrap();
    Desk { dir, session: Arc::new(session) }
}

impl Desk {
    fn read(&self, name: &str) -> String {
        std::fs::read_to_string(self.dir.path().join(name)).unwrap()
    }
}

fn ast_edit_args(path: &str) -> Value {
    json!({"ops": [{"pat": "console.log($A)", "out": "logger.debug($A)"}], "lang": "ts", "path": path})
}

fn live(fake: &FakeLlm, key: Option<&str>) -> AgentLoop {
    let mut config = ProviderConfig::new(fake.base_url(), "fake-model");
    config.idle_timeout_secs = 30;
    let client = LlmClient::with_key(config, key.map(ApiKey::new)).unwrap();
    AgentLoop::new(ModelSource::Live(client))
}

/// Runs one turn, collecting its events.
async fn turn(
    agent: &mut AgentLoop,
    session: &Session,
    prompt: &str,
) -> (Result<TurnOutcome, AgentError>, Vec<AgentEvent>) {
    let mut events = Vec::new();
    let result = agent.run_turn(session, prompt, CancellationToken::new(), |e| events.push(e)).await;
    (result, events)
}

fn tool_names(body: &Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .map(|a| a.iter().map(|t| t["function"]["name"].as_str().unwrap().to_string()).collect())
        .unwrap_or_default()
}

fn messages(body: &Value) -> &Vec<Value> {
    body["messages"].as_array().expect("every request has messages")
}

fn forced_resolve() -> Value {
    json!({"type": "function", "function": {"name": "resolve"}})
}

#[tokio::test]
async fn resolve_is_offered_and_forced_only_while_an_action_is_pending_and_agent_policy_applies() {
    let d = desk(ResolvePolicy::Agent);
    let fake = FakeLlm::start(vec![
        FakeReply::tool_calls(Some("Renaming."), &[("c1", "ast_edit", ast_edit_args("a.ts"))]),
        FakeReply::tool_calls(None, &[("c2", "resolve", json!({"action": "apply", "reason": "as asked"}))]),
        FakeReply::text("Done: a.ts now uses logger.debug."),
    ])
    .await
    .unwrap();
    let mut agent = live(&fake, None);
    let (result, events) = turn(&mut agent, &d.session, "use logger.debug in a.ts").await;
    assert_eq!(result.unwrap(), TurnOutcome::Answered);

    let reqs = fake.requests();
    assert_eq!(reqs.len(), 3, "one request per assistant message");
    assert!(!tool_names(&reqs[0].body).contains(&"resolve".to_string()), "empty stack: resolve not offered");
    assert!(tool_names(&reqs[0].body).contains(&"ast_edit".to_string()));
    assert!(reqs[0].body.get("tool_choice").is_none(), "empty stack: default tool choice (omitted)");
    assert_eq!(reqs[0].body["stream"], true);
    assert_eq!(reqs[0].body["model"], "fake-model");
    assert!(tool_names(&reqs[1].body).contains(&"resolve".to_string()), "pending: resolve offered");
    assert_eq!(reqs[1].body["tool_choice"], forced_resolve(), "pending: resolve forced by name");
    let resolve_tool =
        reqs[1].body["tools"].as_array().unwrap().iter().find(|t| t["function"]["name"] == "resolve").unwrap();
    assert_eq!(resolve_tool["type"], "function");
    assert_eq!(resolve_tool["function"]["parameters"]["required"], json!(["action", "reason"]));
    assert!(!tool_names(&reqs[2].body).contains(&"resolve".to_string()), "stack empty again: resolve gone");
    assert!(reqs[2].body.get("tool_choice").is_none(), "stack empty again: default tool choice");

    assert_eq!(d.read("a.ts"), "logger.debug(1);\n", "the agent's resolve applied under the agent policy");
    assert_eq!(d.read("b.ts"), "console.log(2);\n");
    let transcript = d.session.transcript();
    assert_eq!(transcript.len(), 2);
    assert!(transcript.iter().all(|e| e.actor == Actor::Agent));
    let results: Vec<&AgentEvent> = events.iter().filter(|e| matches!(e, AgentEvent::ToolResult { .. })).collect();
    match results[0] {
        AgentEvent::ToolResult { tool, pending, is_error, .. } => {
            assert_eq!((tool.as_str(), *is_error), ("ast_edit", false));
            assert_eq!(pending.len(), 1, "the preview is on the stack after the call");
            assert_eq!(pending[0].label, "AST Edit: 1 replacement in 1 file");
        }
        other => panic!("{other:?}"),
    }
    match results[1] {
        AgentEvent::ToolResult { tool, pending, text, .. } => {
            assert_eq!(tool, RESOLVE_TOOL_NAME);
            assert!(pending.is_empty());
            assert_eq!(text, "Applied 1 replacement in 1 file.");
        }
        other => panic!("{other:?}"),
    }
    let text: String = events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::TextDelta { step: 3, text } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(text, "Done: a.ts now uses logger.debug.", "text streamed in pieces adds up");
    assert!(matches!(events.last(), Some(AgentEvent::TurnDone { outcome: TurnOutcome::Answered, steps: 3, .. })));
}

#[tokio::test]
async fn the_reminder_is_appended_to_the_last_tool_result_before_the_next_request() {
    let d = desk(ResolvePolicy::Agent);
    let fake = FakeLlm::start(vec![
        FakeReply::tool_calls(None, &[("c1", "ast_edit", ast_edit_args("a.ts"))]),
        FakeReply::tool_calls(None, &[("c2", "resolve", json!({"action": "discard", "reason": "not now"}))]),
        FakeReply::text("Left as is."),
    ])
    .await
    .unwrap();
    let mut agent = live(&fake, None);
    turn(&mut agent, &d.session, "try it").await.0.unwrap();
    let reqs = fake.requests();
    let second = messages(&reqs[1].body);
    let last = second.last().unwrap();
    assert_eq!(last["role"], "tool");
    assert_eq!(last["tool_call_id"], "c1");
    let content = last["content"].as_str().unwrap();
    assert!(content.ends_with(&format!("\n\n{PREVIEW_REMINDER}")), "reminder after the ast_edit result: {content}");
    assert!(content.len() > PREVIEW_REMINDER.len() + 2, "the tool's own text is kept before it");
    let third = messages(&reqs[2].body);
    let reminders =
        third.iter().filter(|m| m["content"].as_str().is_some_and(|c| c.contains(PREVIEW_REMINDER))).count();
    assert_eq!(
        reminders, 0,
        "no new reminder after the resolve (it pushed nothing); the first went with the elided preview"
    );
    assert_eq!(
        third.iter().find(|m| m["tool_call_id"] == "c1").unwrap()["content"],
        resolve_agent::elided_note(&["pa-1".to_string()]),
        "the discarded preview's result is elided"
    );
    assert_eq!(third.last().unwrap()["content"], "Discarded: AST Edit: 1 replacement in 1 file. Reason: not now");
    assert_eq!(d.read("a.ts"), "console.log(1);\n", "discarded: nothing written");
}

#[tokio::test]
async fn two_tool_calls_in_one_message_both_run_in_order_with_their_own_results() {
    let d = desk(ResolvePolicy::Agent);
    let fake = FakeLlm::start(vec![
        FakeReply::tool_calls(
            None,
            &[("c1", "ast_edit", ast_edit_args("a.ts")), ("c2", "ast_edit", ast_edit_args("b.ts"))],
        ),
        FakeReply::tool_calls(
            None,
            &[
                ("c3", "resolve", json!({"action": "discard", "reason": "not b"})),
                ("c4", "resolve", json!({"action": "apply", "reason": "a is fine"})),
            ],
        ),
        FakeReply::text("a.ts changed, b.ts kept."),
    ])
    .await
    .unwrap();
    let mut agent = live(&fake, None);
    let (result, events) = turn(&mut agent, &d.session, "both files").await;
    assert_eq!(result.unwrap(), TurnOutcome::Answered);
    let reqs = fake.requests();
    let second = messages(&reqs[1].body);
    let n = second.len();
    let assistant = &second[n - 3];
    assert_eq!(assistant["role"], "assistant");
    let ids: Vec<&str> =
        assistant["tool_calls"].as_array().unwrap().iter().map(|c| c["id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["c1", "c2"], "the assistant message keeps both calls in order");
    assert_eq!(
        assistant["tool_calls"][1]["function"]["arguments"],
        ast_edit_args("b.ts").to_string(),
        "fragments reassembled"
    );
    assert_eq!(
        (second[n - 2]["tool_call_id"].as_str(), second[n - 1]["tool_call_id"].as_str()),
        (Some("c1"), Some("c2"))
    );
    for m in &second[n - 2..] {
        assert!(m["content"].as_str().unwrap().contains("1 replacement"), "each call has its own real result: {m}");
        assert!(!m["content"].as_str().unwrap().contains("skipped"), "nothing is skipped");
    }
    let last = second[n - 1]["content"].as_str().unwrap();
    assert_eq!(last.matches(PREVIEW_REMINDER).count(), 2, "one reminder per push: {last}");
    assert_eq!(reqs[1].body["tool_choice"], forced_resolve());
    let third = messages(&reqs[2].body);
    let k = third.len();
    assert_eq!(third[k - 2]["content"], "Discarded: AST Edit: 1 replacement in 1 file. Reason: not b", "LIFO: b first");
    assert_eq!(third[k - 1]["content"], "Applied 1 replacement in 1 file.");
    assert_eq!(d.read("a.ts"), "logger.debug(1);\n");
    assert_eq!(d.read("b.ts"), "console.log(2);\n");
    let started: Vec<&str> = events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::ToolCallStarted { call_id, .. } => Some(call_id.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(started, ["c1", "c2", "c3", "c4"]);
    let stacks: Vec<usize> = events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::ToolResult { pending, .. } => Some(pending.len()),
            _ => None,
        })
        .collect();
    assert_eq!(stacks, [1, 2, 1, 0], "each result carries the stack after it");
}

#[tokio::test]
async fn arguments_that_are_not_json_get_an_error_result_and_the_turn_goes_on() {
    let d = desk(ResolvePolicy::Agent);
    let fake = FakeLlm::start(vec![
        FakeReply::tool_calls_raw(None, &[("c1", "ast_edit", "{\"ops\": [".to_string())]),
        FakeReply::text("Sorry."),
    ])
    .await
    .unwrap();
    let mut agent = live(&fake, None);
    let (result, events) = turn(&mut agent, &d.session, "go").await;
    assert_eq!(result.unwrap(), TurnOutcome::Answered);
    let reqs = fake.requests();
    let last = messages(&reqs[1].body).last().unwrap().clone();
    assert_eq!(last["tool_call_id"], "c1");
    let content = last["content"].as_str().unwrap();
    assert!(content.starts_with("Error: The arguments of this ast_edit call are not valid JSON"), "{content}");
    assert!(content.contains("{\"ops\": ["), "quotes what was received: {content}");
    assert!(d.session.transcript().is_empty(), "the tool was not called");
    assert!(events.iter().any(|e| matches!(e, AgentEvent::ToolCallStarted { arguments: Value::String(_), .. })));
}

#[tokio::test]
async fn cancelling_mid_stream_ends_the_turn_and_drops_the_connection() {
    let d = desk(ResolvePolicy::Agent);
    let fake = FakeLlm::start(vec![FakeReply::text_then_hang("Thinking")]).await.unwrap();
    let mut agent = live(&fake, None);
    let cancel = CancellationToken::new();
    let stop = cancel.clone();
    let mut events = Vec::new();
    let result = agent
        .run_turn(&d.session, "go", cancel, |e| {
            if matches!(e, AgentEvent::TextDelta { .. }) {
                stop.cancel();
            }
            events.push(e);
        })
        .await;
    assert!(matches!(result, Err(AgentError::Cancelled)), "{result:?}");
    assert!(matches!(events.last(), Some(AgentEvent::TurnDone { outcome: TurnOutcome::Cancelled, .. })));
    assert!(!events.iter().any(|e| matches!(e, AgentEvent::Error { .. })), "a cancel is not an error");
    fake.wait_until(|f| f.dropped_streams() == 1).await;
}

#[tokio::test]
async fn unauthorized_names_the_variable_to_set_whether_or_not_a_key_was_sent() {
    let d = desk(ResolvePolicy::Agent);
    let fake = FakeLlm::start(vec![
        FakeReply::error(401, "Incorrect API key provided"),
        FakeReply::error(401, "Missing bearer token"),
    ])
    .await
    .unwrap();
    let (result, events) = turn(&mut live(&fake, Some(KEY)), &d.session, "go").await;
    let err = result.unwrap_err();
    assert_eq!(err.code(), "unauthorized");
    let msg = err.to_string();
    assert!(msg.contains("OPENAI_API_KEY") && msg.contains("was refused"), "{msg}");
    assert!(msg.contains("Incorrect API key provided"), "quotes the server: {msg}");
    assert!(events.iter().any(|e| matches!(e, AgentEvent::Error { code, .. } if code == "unauthorized")));
    assert!(matches!(events.last(), Some(AgentEvent::TurnDone { outcome: TurnOutcome::Failed, .. })));

    let (result, _) = turn(&mut live(&fake, None), &d.session, "go").await;
    let msg = result.unwrap_err().to_string();
    assert!(msg.contains("no API key was sent because OPENAI_API_KEY is not set"), "{msg}");
    let reqs = fake.requests();
    assert_eq!(reqs[0].authorization.as_deref(), Some(format!("Bearer {KEY}").as_str()));
    assert_eq!(reqs[1].authorization, None, "no key, no Authorization header (local servers need none)");
    assert_eq!(reqs.len(), 2, "401 is not retried");
}

#[tokio::test]
async fn unknown_model_names_the_model_and_the_base_url() {
    let d = desk(ResolvePolicy::Agent);
    let fake = FakeLlm::start(vec![FakeReply::error(404, "The model `fake-model` does not exist")]).await.unwrap();
    let (result, _) = turn(&mut live(&fake, None), &d.session, "go").await;
    let err = result.unwrap_err();
    assert_eq!(err.code(), "model_not_found");
    let msg = err.to_string();
    assert!(msg.contains("\"fake-model\"") && msg.contains(&fake.base_url()), "{msg}");
}

#[tokio::test]
async fn rate_limit_is_retried_after_retry_after_then_succeeds() {
    let d = desk(ResolvePolicy::Agent);
    let fake = FakeLlm::start(vec![
        FakeReply::error(429, "slow down").with_header("retry-after", "1"),
        FakeReply::error(503, "overloaded").with_header("retry-after", "0"),
        FakeReply::text("Hello."),
    ])
    .await
    .unwrap();
    let (result, events) = turn(&mut live(&fake, None), &d.session, "hi").await;
    assert_eq!(result.unwrap(), TurnOutcome::Answered);
    let retries: Vec<(u32, u64, u16)> = events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::Retrying { attempt, delay_ms, status, .. } => Some((*attempt, *delay_ms, *status)),
            _ => None,
        })
        .collect();
    assert_eq!(retries, [(1, 1000, 429), (2, 0, 503)], "Retry-After seconds are honoured");
    assert_eq!(fake.requests().len(), 3);
    assert_eq!(fake.requests()[0].body, fake.requests()[2].body, "the same request is sent again");
}

#[tokio::test]
async fn retries_are_bounded() {
    let d = desk(ResolvePolicy::Agent);
    let fake = FakeLlm::start(vec![
        FakeReply::error(500, "a"),
        FakeReply::error(500, "b").with_header("retry-after", "0"),
        FakeReply::error(500, "c"),
    ])
    .await
    .unwrap();
    let mut config = ProviderConfig::new(fake.base_url(), "m");
    config.max_attempts = 2;
    let mut agent = AgentLoop::new(ModelSource::Live(LlmClient::with_key(config, None).unwrap()));
    let (result, _) = turn(&mut agent, &d.session, "hi").await;
    let msg = result.unwrap_err().to_string();
    assert!(msg.contains("HTTP 500 after 2 attempt(s)") && msg.contains("server said: b"), "{msg}");
    assert_eq!(fake.requests().len(), 2);
}

#[tokio::test]
async fn a_malformed_chunk_is_an_error_that_says_what_was_received() {
    let d = desk(ResolvePolicy::Agent);
    let fake = FakeLlm::start(vec![FakeReply::Stream(vec![
        FakeChunk::Data(r#"{"choices":[{"index":0,"delta":{"content":"Hi"}}]}"#.into()),
        FakeChunk::Raw("data: {\"choices\": [oops\n\n".into()),
        FakeChunk::Data("[DONE]".into()),
    ])])
    .await
    .unwrap();
    let (result, _) = turn(&mut live(&fake, None), &d.session, "hi").await;
    let err = result.unwrap_err();
    assert_eq!(err.code(), "malformed_response");
    let msg = err.to_string();
    assert!(msg.contains("received: {\"choices\": [oops"), "{msg}");
    assert!(msg.contains(&fake.base_url()), "names the server: {msg}");
}

#[tokio::test]
async fn a_server_that_ignores_stream_and_answers_one_json_completion_is_read_too() {
    let d = desk(ResolvePolicy::Agent);
    let completion = json!({
        "id": "chatcmpl-1", "object": "chat.completion",
        "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {"role": "assistant", "content": null,
            "tool_calls": [{"id": "j1", "type": "function", "function": {"name": "ast_edit", "arguments": ast_edit_args("a.ts").to_string()}}]}}]
    });
    let fake = FakeLlm::start(vec![
        FakeReply::Status {
            status: 200,
            headers: vec![("content-type".into(), "application/json".into())],
            body: completion.to_string(),
        },
        FakeReply::tool_calls(None, &[("j2", "resolve", json!({"action": "apply", "reason": "ok"}))]),
        FakeReply::text("Done."),
    ])
    .await
    .unwrap();
    let (result, _) = turn(&mut live(&fake, None), &d.session, "go").await;
    assert_eq!(result.unwrap(), TurnOutcome::Answered);
    assert_eq!(d.read("a.ts"), "logger.debug(1);\n");
}

#[tokio::test]
async fn an_error_object_in_the_stream_is_reported_with_its_message() {
    let d = desk(ResolvePolicy::Agent);
    let fake = FakeLlm::start(vec![FakeReply::Stream(vec![FakeChunk::Data(
        json!({"error": {"message": "context length exceeded", "type": "invalid_request_error"}}).to_string(),
    )])])
    .await
    .unwrap();
    let (result, _) = turn(&mut live(&fake, None), &d.session, "go").await;
    let err = result.unwrap_err();
    assert_eq!(err.code(), "provider_error");
    assert!(err.to_string().contains("context length exceeded"), "{err}");
}

#[tokio::test]
async fn a_refused_connection_names_the_url_and_asks_if_the_server_runs() {
    let d = desk(ResolvePolicy::Agent);
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let url = format!("http://127.0.0.1:{port}/v1");
    let client = LlmClient::with_key(ProviderConfig::new(&url, "m"), None).unwrap();
    let (result, _) = turn(&mut AgentLoop::new(ModelSource::Live(client)), &d.session, "hi").await;
    let err = result.unwrap_err();
    assert_eq!(err.code(), "connection_refused");
    let msg = err.to_string();
    assert!(msg.contains(&format!("{url}/chat/completions")) && msg.contains("Is the server running"), "{msg}");
}

#[tokio::test]
async fn a_silent_server_hits_the_idle_timeout() {
    let d = desk(ResolvePolicy::Agent);
    let fake = FakeLlm::start(vec![FakeReply::text_then_hang("Hm")]).await.unwrap();
    let mut config = ProviderConfig::new(fake.base_url(), "m");
    config.idle_timeout_secs = 1;
    let mut agent = AgentLoop::new(ModelSource::Live(LlmClient::with_key(config, None).unwrap()));
    let (result, _) = turn(&mut agent, &d.session, "hi").await;
    let err = result.unwrap_err();
    assert_eq!(err.code(), "idle_timeout", "{err}");
    assert!(err.to_string().contains("sent nothing for 1 s"), "{err}");
}

#[tokio::test]
async fn the_api_key_never_appears_in_events_transcript_conversation_or_errors() {
    let d = desk(ResolvePolicy::Agent);
    let fake = FakeLlm::start(vec![
        FakeReply::tool_calls(Some("Sure."), &[("c1", "ast_edit", ast_edit_args("a.ts"))]),
        FakeReply::tool_calls(None, &[("c2", "resolve", json!({"action": "apply", "reason": "ok"}))]),
        FakeReply::text("Done."),
        FakeReply::error(401, &format!("Incorrect API key provided: {KEY}")),
        FakeReply::Stream(vec![FakeChunk::Raw(format!("data: {{{KEY}\n\n"))]),
    ])
    .await
    .unwrap();
    let mut agent = live(&fake, Some(KEY));
    let mut everything = String::new();
    for prompt in ["change a.ts", "again", "and again"] {
        let (result, events) = turn(&mut agent, &d.session, prompt).await;
        if let Err(e) = &result {
            everything += &format!("{e}\n{e:?}\n");
        }
        for e in &events {
            everything += &serde_json::to_string(e).unwrap();
        }
    }
    everything += &serde_json::to_string(&d.session.transcript()).unwrap();
    everything += &serde_json::to_string(agent.conversation()).unwrap();
    everything += &format!("{agent:?}");
    assert!(fake.requests().iter().all(|r| r.authorization.as_deref() == Some(&format!("Bearer {KEY}"))), "key sent");
    assert!(everything.contains("Incorrect API key provided: <redacted>"), "echoes are blanked: {everything}");
    assert!(!everything.contains("RECOGNISABLE"), "the key leaked: {everything}");
}

#[tokio::test]
async fn replay_drives_the_same_loop_without_a_model() {
    let d = desk(ResolvePolicy::Agent);
    let file = d.dir.path().join("conversation.jsonl");
    let lines = [
        json!({"content": "Renaming.", "tool_calls": [{"name": "ast_edit", "arguments": ast_edit_args("a.ts")}]}),
        json!({"tool_calls": [{"name": "resolve", "arguments": {"action": "apply", "reason": "replayed"}}]}),
        json!({"content": "Done."}),
    ];
    std::fs::write(&file, lines.iter().map(|l| l.to_string() + "\n").collect::<String>()).unwrap();
    let mut agent = AgentLoop::new(ModelSource::Replay(Replay::load(&file).unwrap()));
    let (result, events) = turn(&mut agent, &d.session, "go").await;
    assert_eq!(result.unwrap(), TurnOutcome::Answered);
    assert_eq!(d.read("a.ts"), "logger.debug(1);\n");
    let kinds: Vec<String> =
        events.iter().map(|e| serde_json::to_value(e).unwrap()["kind"].as_str().unwrap().to_string()).collect();
    assert_eq!(
        kinds,
        [
            "text_delta",
            "assistant_message",
            "tool_call_started",
            "tool_result",
            "assistant_message",
            "tool_call_started",
            "tool_result",
            "text_delta",
            "assistant_message",
            "turn_done"
        ]
    );
    // A replay that runs out mid-turn says so.
    let mut agent = AgentLoop::new(ModelSource::Replay(
        Replay::from_reader("short", "{\"tool_calls\":[{\"name\":\"nope\"}]}\n".as_bytes()).unwrap(),
    ));
    let (result, _) = turn(&mut agent, &d.session, "go").await;
    let err = result.unwrap_err();
    assert_eq!(err.code(), "replay_exhausted");
    assert!(err.to_string().contains("no assistant turn left for request 2"), "{err}");
}

#[tokio::test]
async fn a_turn_that_never_answers_stops_at_the_step_limit() {
    let d = desk(ResolvePolicy::Agent);
    let line = "{\"tool_calls\":[{\"name\":\"resolve\",\"arguments\":{\"action\":\"apply\",\"reason\":\"x\"}}]}\n";
    let mut agent =
        AgentLoop::new(ModelSource::Replay(Replay::from_reader("loop", line.repeat(5).as_bytes()).unwrap()))
            .with_max_steps(3);
    let (result, events) = turn(&mut agent, &d.session, "go").await;
    let err = result.unwrap_err();
    assert!(matches!(err, AgentError::MaxSteps { max: 3 }), "{err:?}");
    assert!(err.to_string().contains("made 3 requests in this turn without finishing"), "{err}");
    assert!(matches!(events.last(), Some(AgentEvent::TurnDone { outcome: TurnOutcome::MaxSteps, steps: 3, .. })));
}

#[tokio::test]
async fn the_conversation_is_kept_across_turns_and_reset_forgets_it() {
    let d = desk(ResolvePolicy::Agent);
    let fake = FakeLlm::start(vec![FakeReply::text("One."), FakeReply::text("Two.")]).await.unwrap();
    let mut agent = live(&fake, None);
    turn(&mut agent, &d.session, "first").await.0.unwrap();
    turn(&mut agent, &d.session, "second").await.0.unwrap();
    let roles: Vec<String> =
        messages(&fake.requests()[1].body).iter().map(|m| m["role"].as_str().unwrap().to_string()).collect();
    assert_eq!(roles, ["system", "user", "assistant", "user"]);
    agent.reset();
    assert_eq!(agent.conversation().messages().len(), 1);
}

#[allow(dead_code)]
fn _events_are_send(_: Arc<Mutex<Vec<AgentEvent>>>) {}

#[allow(dead_code)]
fn _llm_error_is_send_sync(e: LlmError) -> Box<dyn std::error::Error + Send + Sync> {
    Box::new(e)
}

#[tokio::test]
async fn the_conversation_elides_preview_results_once_their_action_leaves_the_stack() {
    let d = desk(ResolvePolicy::Agent);
    let fake = FakeLlm::start(vec![
        FakeReply::tool_calls(None, &[("c1", "ast_edit", ast_edit_args("a.ts"))]),
        FakeReply::tool_calls(None, &[("c2", "resolve", json!({"action": "discard", "reason": "not now"}))]),
        FakeReply::tool_calls(None, &[("c3", "ast_edit", ast_edit_args("b.ts"))]),
        FakeReply::text("b.ts is previewed."),
    ])
    .await
    .unwrap();
    let mut agent = live(&fake, None);
    let (result, _) = turn(&mut agent, &d.session, "preview, discard, preview again").await;
    assert_eq!(result.unwrap(), TurnOutcome::Answered);

    let tool_message = |body: &Value, id: &str| -> String {
        messages(body)
            .iter()
            .find(|m| m["role"] == "tool" && m["tool_call_id"] == id)
            .map(|m| m["content"].as_str().unwrap().to_string())
            .unwrap_or_default()
    };
    let reqs = fake.requests();
    assert_eq!(reqs.len(), 4);
    let preview = tool_message(&reqs[1].body, "c1");
    assert!(preview.contains("-console.log(1);"), "while pending, the model reads the whole preview: {preview}");
    let elided = tool_message(&reqs[2].body, "c1");
    assert_eq!(elided, resolve_agent::elided_note(&["pa-1".to_string()]), "discarded: only a note is left");
    let resolve = tool_message(&reqs[2].body, "c2");
    assert!(resolve.starts_with("Discarded: AST Edit: 1 replacement in 1 file. Reason: not now"), "{resolve}");
    let second = tool_message(&reqs[3].body, "c3");
    assert!(second.contains("-console.log(2);"), "pa-2 is still pending: kept whole: {second}");
    assert_eq!(d.session.store().len(), 1);
}
