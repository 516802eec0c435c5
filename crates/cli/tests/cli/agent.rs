//! `rdesk agent`: the real binary against a fake OpenAI-compatible server (real HTTP and SSE
//! on 127.0.0.1) and replay files, on real temp workspaces.

use std::path::Path;
use std::process::{Command, Output, Stdio};

use resolve_agent::fake::{FakeLlm, FakeReply};
use serde_json::{json, Value};

const KEY: &str = "sk-cli-RECOGNISABLE-51e0";

/// Runs `rdesk agent ARGS` with a private config folder and the given environment.
fn rdesk_agent(args: &[&str], env: &[(&str, &str)], config: &Path) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_rdesk"));
    cmd.arg("agent").args(args).env("XDG_CONFIG_HOME", config).env_remove("OPENAI_API_KEY");
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped()).output().expect("rdesk runs")
}

fn json_lines(out: &Output) -> Vec<Value> {
    String::from_utf8_lossy(&out.stdout).lines().map(|l| serde_json::from_str(l).expect("each line is JSON")).collect()
}

fn workspace() -> tempfile::TempDir {
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("a.ts"), "console.log(1);\n").unwrap();
    ws
}

fn ast_edit_args() -> Value {
    json!({"ops": [{"pat": "console.log($A)", "out": "logger.debug($A)"}], "lang": "ts"})
}

fn kinds(lines: &[Value]) -> Vec<&str> {
    lines.iter().map(|l| l["kind"].as_str().unwrap()).collect()
}

#[test]
fn agent_replay_prints_the_conversation_and_the_agent_policy_applies() {
    let ws = workspace();
    let cfg = tempfile::tempdir().unwrap();
    let replay = cfg.path().join("r.jsonl");
    let turns = [
        json!({"content": "Switching to logger.debug.", "tool_calls": [{"name": "ast_edit", "arguments": ast_edit_args()}]}),
        json!({"tool_calls": [{"name": "resolve", "arguments": {"action": "apply", "reason": "as asked"}}]}),
        json!({"content": "Done."}),
    ];
    std::fs::write(&replay, turns.iter().map(|t| format!("{t}\n")).collect::<String>()).unwrap();
    let out = rdesk_agent(&["--replay", replay.to_str().unwrap(), "-w", ws.path().to_str().unwrap()], &[], cfg.path());
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let lines = json_lines(&out);
    assert_eq!(
        kinds(&lines),
        [
            "assistant_message",
            "tool_call_started",
            "tool_result",
            "assistant_message",
            "tool_call_started",
            "tool_result",
            "assistant_message",
            "turn_done"
        ]
    );
    assert_eq!(lines[2]["pending"][0]["label"], "AST Edit: 1 replacement in 1 file", "stack after the preview");
    assert_eq!(lines[2]["pending"][0]["id"], "pa-1");
    assert_eq!(lines[5]["text"], "Applied 1 replacement in 1 file.");
    assert_eq!(lines[5]["pending"], json!([]));
    assert_eq!(lines[7]["outcome"], "answered");
    assert_eq!(std::fs::read_to_string(ws.path().join("a.ts")).unwrap(), "logger.debug(1);\n");
}

#[test]
fn agent_human_policy_stops_with_exit_3_printing_the_stack_and_applies_nothing() {
    let ws = workspace();
    let cfg = tempfile::tempdir().unwrap();
    let replay = cfg.path().join("r.jsonl");
    let turns = [
        json!({"tool_calls": [{"name": "ast_edit", "arguments": ast_edit_args()}]}),
        json!({"tool_calls": [{"name": "resolve", "arguments": {"action": "apply", "reason": "looks right"}}]}),
        json!({"content": "never reached"}),
    ];
    std::fs::write(&replay, turns.iter().map(|t| format!("{t}\n")).collect::<String>()).unwrap();
    let dir = ws.path().to_str().unwrap();
    let out = rdesk_agent(&["--replay", replay.to_str().unwrap(), "-w", dir, "--policy", "human"], &[], cfg.path());
    assert_eq!(out.status.code(), Some(3), "{out:?}");
    let lines = json_lines(&out);
    let last = lines.last().unwrap();
    assert_eq!(last["kind"], "turn_done");
    assert_eq!(last["outcome"], "waiting_for_person");
    assert_eq!(last["pending"][0]["label"], "AST Edit: 1 replacement in 1 file", "the stack is the final line");
    let waiting = lines.iter().find(|l| l["kind"] == "waiting_for_person").expect("says it would wait");
    assert_eq!(
        (waiting["proposed_action"].as_str(), waiting["proposed_reason"].as_str()),
        (Some("apply"), Some("looks right"))
    );
    assert!(!lines.iter().any(|l| l["kind"] == "tool_result" && l["tool"] == "resolve"), "no resolve ran");
    assert_eq!(std::fs::read_to_string(ws.path().join("a.ts")).unwrap(), "console.log(1);\n", "nothing applied");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn agent_live_streams_from_the_server_and_never_prints_the_key() {
    let ws = workspace();
    let cfg = tempfile::tempdir().unwrap();
    let fake = FakeLlm::start(vec![
        FakeReply::tool_calls(Some("On it."), &[("c1", "ast_edit", ast_edit_args())]),
        FakeReply::tool_calls(None, &[("c2", "resolve", json!({"action": "apply", "reason": "ok"}))]),
        FakeReply::text("Done."),
    ])
    .await
    .unwrap();
    let (url, dir, cfg_path) = (fake.base_url(), ws.path().to_str().unwrap().to_string(), cfg.path().to_path_buf());
    let out = tokio::task::spawn_blocking(move || {
        rdesk_agent(
            &[
                "--prompt",
                "use logger.debug",
                "-w",
                &dir,
                "--base-url",
                &url,
                "--model",
                "fake-model",
                "--api-key-env",
                "MY_KEY",
            ],
            &[("MY_KEY", KEY)],
            &cfg_path,
        )
    })
    .await
    .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let lines = json_lines(&out);
    assert_eq!(lines[0]["kind"], "assistant_message");
    assert_eq!(lines[0]["content"], "On it.");
    assert_eq!(lines[0]["tool_calls"][0]["name"], "ast_edit");
    assert_eq!(lines.last().unwrap()["outcome"], "answered");
    assert_eq!(std::fs::read_to_string(ws.path().join("a.ts")).unwrap(), "logger.debug(1);\n");
    let reqs = fake.requests();
    assert_eq!(reqs.len(), 3);
    assert_eq!(reqs[0].authorization.as_deref(), Some(format!("Bearer {KEY}").as_str()), "the key is sent");
    assert_eq!(reqs[1].body["tool_choice"], json!({"type": "function", "function": {"name": "resolve"}}));
    let all = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(!all.contains("RECOGNISABLE"), "the key is never printed: {all}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn agent_refused_key_exits_2_naming_the_variable() {
    let ws = workspace();
    let cfg = tempfile::tempdir().unwrap();
    let fake = FakeLlm::start(vec![FakeReply::error(401, "Missing bearer token")]).await.unwrap();
    let (url, dir, cfg_path) = (fake.base_url(), ws.path().to_str().unwrap().to_string(), cfg.path().to_path_buf());
    let out = tokio::task::spawn_blocking(move || {
        rdesk_agent(&["--prompt", "hi", "-w", &dir, "--base-url", &url, "--model", "m"], &[], &cfg_path)
    })
    .await
    .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("OPENAI_API_KEY is not set, so no API key is sent"), "warned up front: {err}");
    assert!(err.contains("no API key was sent because OPENAI_API_KEY is not set"), "and on the 401: {err}");
    assert_eq!(fake.requests()[0].authorization, None);
}

#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn agent_ctrl_c_cancels_cleanly_with_exit_130() {
    let ws = workspace();
    let cfg = tempfile::tempdir().unwrap();
    let fake = FakeLlm::start(vec![FakeReply::text_then_hang("Thinking")]).await.unwrap();
    let child = Command::new(env!("CARGO_BIN_EXE_rdesk"))
        .args([
            "agent",
            "--prompt",
            "hi",
            "-w",
            ws.path().to_str().unwrap(),
            "--base-url",
            &fake.base_url(),
            "--model",
            "m",
        ])
        .env("XDG_CONFIG_HOME", cfg.path())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    fake.wait_until(|f| f.requests().len() == 1).await;
    let status = Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap();
    assert!(status.success());
    let out = tokio::task::spawn_blocking(move || child.wait_with_output().unwrap()).await.unwrap();
    assert_eq!(out.status.code(), Some(130), "{out:?}");
    let lines = json_lines(&out);
    assert_eq!(lines.last().unwrap()["outcome"], "cancelled");
    fake.wait_until(|f| f.dropped_streams() == 1).await;
}
