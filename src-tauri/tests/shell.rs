//! The shell's commands on Tauri's mock runtime, called through the real IPC layer with the
//! exact command names and argument keys the UI uses (`ui/src/ipc/tauriBackend.ts`).

use std::fs;

use resolve_desk::args::Args;
use resolve_desk::state::AppState;
use serde_json::{json, Value};
use tauri::ipc::{CallbackFn, InvokeBody};
use tauri::test::{get_ipc_response, mock_builder, mock_context, noop_assets, MockRuntime, INVOKE_KEY};
use tauri::webview::InvokeRequest;
use tauri::WebviewWindow;

struct App {
    _app: tauri::App<MockRuntime>,
    webview: WebviewWindow<MockRuntime>,
    ws: tempfile::TempDir,
    _data: tempfile::TempDir,
}

fn fixture_ws() -> tempfile::TempDir {
    let ws = tempfile::tempdir().unwrap();
    fs::create_dir_all(ws.path().join("src")).unwrap();
    fs::write(ws.path().join("src/a.ts"), "console.log(1);\nconsole.log(\"é\", 2);\n").unwrap();
    fs::create_dir_all(ws.path().join("photos")).unwrap();
    for n in ["IMG_1.JPG", "IMG_2.JPG"] {
        fs::write(ws.path().join("photos").join(n), n).unwrap();
    }
    ws
}

fn start() -> App {
    start_in(fixture_ws(), tempfile::tempdir().unwrap())
}

fn start_in(ws: tempfile::TempDir, data: tempfile::TempDir) -> App {
    start_with(ws, data, true)
}

/// An app on a fresh workspace with nothing pending (for the agent's own previews).
fn start_empty() -> App {
    start_with(fixture_ws(), tempfile::tempdir().unwrap(), false)
}

fn start_with(ws: tempfile::TempDir, data: tempfile::TempDir, queue_previews: bool) -> App {
    let script = data.path().join("setup.jsonl");
    fs::write(
        &script,
        concat!(
            r#"{"tool":"batch_rename_preview","params":{"files":["photos/*.JPG"],"find":"^IMG_(\\d)\\.JPG$","replace":"p$1.jpg"}}"#,
            "\n",
            r#"{"tool":"ast_edit","params":{"ops":[{"pat":"console.log($$$A)","out":"logger.debug($$$A)"}],"lang":"ts","path":"src"}}"#,
            "\n"
        ),
    )
    .unwrap();
    let args = Args {
        workspace: Some(ws.path().to_path_buf()),
        script: queue_previews.then(|| script.clone()),
        policy: resolve_engine::ResolvePolicy::Human,
        data_dir: Some(data.path().to_path_buf()),
        config_dir: Some(data.path().join("config")),
        new_window: false,
    };
    let state = tauri::async_runtime::block_on(AppState::start(&args)).expect("state starts");
    let app = resolve_desk::builder(mock_builder(), state).build(mock_context(noop_assets())).expect("app builds");
    let webview = tauri::WebviewWindowBuilder::new(&app, "main", Default::default()).build().expect("window");
    App { _app: app, webview, ws, _data: data }
}

fn invoke(app: &App, cmd: &str, args: Value) -> Result<Value, Value> {
    invoke_on(&app.webview, cmd, args)
}

fn invoke_on(webview: &WebviewWindow<MockRuntime>, cmd: &str, args: Value) -> Result<Value, Value> {
    get_ipc_response(
        webview,
        InvokeRequest {
            cmd: cmd.into(),
            callback: CallbackFn(0),
            error: CallbackFn(1),
            url: "tauri://localhost".parse().unwrap(),
            body: InvokeBody::Json(args),
            headers: Default::default(),
            invoke_key: INVOKE_KEY.to_string(),
        },
    )
    .map(|b| b.deserialize::<Value>().unwrap())
}

#[test]
fn every_command_is_callable_with_the_ui_argument_keys() {
    let app = start();
    let session = invoke(&app, "get_session", json!({})).unwrap();
    assert_eq!(session["isDemo"], false);
    assert_eq!(session["policy"], "human");

    let queue = invoke(&app, "list_actions", json!({})).unwrap();
    let actions = queue["actions"].as_array().unwrap();
    assert_eq!(actions.len(), 2, "{queue}");
    assert_eq!(actions[0]["label"], "AST Edit: 2 replacements in 1 file", "top first");
    assert_eq!(actions[0]["isTop"], true);
    assert_eq!(actions[0]["kind"], "changeSet");
    assert_eq!(actions[0]["origin"]["tool"], "ast_edit");
    assert_eq!(actions[1]["label"], "Batch rename: 2 files");
    assert_eq!(actions[1]["kind"], "rename");
    assert_eq!(actions[1]["counts"]["renames"], 2);
    let top = actions[0]["id"].as_str().unwrap().to_string();
    let below = actions[1]["id"].as_str().unwrap().to_string();

    let files = invoke(&app, "get_action_files", json!({"actionId": top})).unwrap();
    assert_eq!(files[0]["path"], "src/a.ts");
    assert_eq!(files[0]["change"], "modified");
    let diff = invoke(&app, "get_file_diff", json!({"actionId": top, "path": "src/a.ts", "context": null})).unwrap();
    assert_eq!(diff["language"], "typescript");
    assert_eq!(diff["added"], 2);
    let err = invoke(&app, "get_file_diff", json!({"actionId": top, "path": "nope.ts", "context": 3})).unwrap_err();
    assert_eq!(err["code"], "unknownFile");

    let renames = invoke(&app, "get_action_renames", json!({"actionId": below})).unwrap();
    assert_eq!(renames.as_array().unwrap().len(), 2, "{renames}");
    assert_eq!(renames[0], json!({"from": "photos/IMG_1.JPG", "to": "photos/p1.jpg", "status": "rename"}));
    assert_eq!((&actions[1]["badge"], &actions[1]["summary"]), (&json!("Batch rename"), &json!("2 files")));
    assert_eq!((&actions[1]["filesText"], &actions[1]["renamesText"]), (&json!("2 files"), &json!("2 renames")));
    assert_eq!(files[0]["language"], "typescript");

    let tools = invoke(&app, "list_tools", json!({})).unwrap();
    let names: Vec<&str> = tools.as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        vec![
            "resolve",
            "set_policy",
            "await_decision",
            "ast_edit",
            "batch_rename_preview",
            "write_file",
            "edit_file",
            "apply_patch",
            "gate_edit"
        ]
    );
    let hidden: Vec<&str> =
        tools.as_array().unwrap().iter().filter(|t| t["hidden"] == true).map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(hidden, vec!["resolve", "set_policy", "await_decision", "gate_edit"], "hooks' tools are never offered");
    assert!(tools[1]["hidden"].as_bool().unwrap(), "set_policy is the policy switch's, not offered in Run tool");

    // A person's resolve must name the top; the one below is refused and nothing changes.
    let err =
        invoke(&app, "resolve_action", json!({"action": "apply", "reason": "r", "expectedId": below})).unwrap_err();
    assert_eq!(err["code"], "idMismatch");
    let err =
        invoke(&app, "resolve_action", json!({"action": "apply", "reason": "  ", "expectedId": top})).unwrap_err();
    assert_eq!(err["code"], "invalidParams");
    let out =
        invoke(&app, "resolve_action", json!({"action": "apply", "reason": "looks right", "expectedId": top})).unwrap();
    assert_eq!(out["isError"], false);
    assert_eq!(out["text"], "Applied 2 replacements in 1 file.");
    assert_eq!(out["details"]["actionId"], top);
    let written = fs::read_to_string(app.ws.path().join("src/a.ts")).unwrap();
    assert_eq!(written, "logger.debug(1);\nlogger.debug(\"é\", 2);\n");

    let out =
        invoke(&app, "resolve_action", json!({"action": "discard", "reason": "not now", "expectedId": below})).unwrap();
    assert_eq!(out["text"], "Discarded batch rename of 2 files. Reason: not now");
    assert!(app.ws.path().join("photos/IMG_1.JPG").exists(), "discard renames nothing");

    let history = invoke(&app, "list_history", json!({})).unwrap();
    assert_eq!(history[0]["action"], "discard");
    assert_eq!(history[1]["action"], "apply");
    assert_eq!(history[1]["reason"], "looks right");

    let err = invoke(&app, "resolve_action", json!({"action": "apply", "reason": "r", "expectedId": top})).unwrap_err();
    assert_eq!(err["code"], "noPendingAction");
    assert_eq!(err["message"], "No pending action to resolve. Nothing to apply or discard.");
}

#[test]
fn events_reach_the_page_through_next_events_in_order_from_where_it_started() {
    let app = start();
    let start = invoke(&app, "next_events", json!({"after": null})).unwrap();
    assert_eq!(start["events"], json!([]), "the start answers at once: {start}");
    assert_eq!(start["missed"], false);
    let top = invoke(&app, "list_actions", json!({})).unwrap()["actions"][0]["id"].clone();
    let revision = invoke(&app, "list_actions", json!({})).unwrap()["revision"].as_u64().unwrap();

    invoke(&app, "resolve_action", json!({"action": "discard", "reason": "not now", "expectedId": top})).unwrap();
    // The queue's changes are forwarded from the store by a task, so the start-up script's
    // pushes may still arrive after the start: poll until the discard's change is there (each
    // poll returns as soon as something was pushed, or empty after 25 s).
    let discarded = |e: &Value| e["name"] == "queue-changed" && e["payload"]["revision"].as_u64() > Some(revision);
    let mut seen: Vec<Value> = Vec::new();
    let mut last = start["last"].clone();
    for _ in 0..5 {
        if seen.iter().any(discarded) {
            break;
        }
        let batch = invoke(&app, "next_events", json!({"after": last})).unwrap();
        assert_eq!(batch["missed"], false, "{batch}");
        seen.extend(batch["events"].as_array().unwrap().iter().cloned());
        last = batch["last"].clone();
    }
    assert!(seen.iter().any(discarded), "a queue-changed above revision {revision}: {seen:?}");
    let revisions: Vec<u64> = seen.iter().filter_map(|e| e["payload"]["revision"].as_u64()).collect();
    assert!(revisions.is_sorted(), "in the order they were pushed: {revisions:?}");
    assert!(last.as_u64().unwrap() > start["last"].as_u64().unwrap());
}

#[test]
fn run_tool_rerun_and_scripts_go_through_the_session() {
    let app = start();
    let out = invoke(
        &app,
        "run_tool",
        json!({"name": "ast_edit", "params": {"ops": [{"pat": "console.log($A)", "out": "print($A)"}], "path": "src"}}),
    )
    .unwrap();
    assert_eq!(out["isError"], false, "{out}");
    assert!(out["callId"].as_str().unwrap().starts_with("call-"));
    let queue = invoke(&app, "list_actions", json!({})).unwrap();
    assert_eq!(queue["actions"].as_array().unwrap().len(), 3);
    let top = queue["actions"][0]["id"].as_str().unwrap().to_string();

    let out = invoke(&app, "rerun_action", json!({"actionId": top})).unwrap();
    assert_eq!(out["isError"], false, "{out}");
    assert_eq!(invoke(&app, "list_actions", json!({})).unwrap()["actions"].as_array().unwrap().len(), 4);

    let bad = invoke(&app, "run_tool", json!({"name": "ast_edit", "params": {"ops": []}})).unwrap();
    assert_eq!(bad["isError"], true);
    assert_eq!(bad["text"], "`ops` must include at least one op entry");

    let steps = invoke(
        &app,
        "run_script",
        json!({"text": "{\"tool\":\"resolve\",\"params\":{\"action\":\"discard\",\"reason\":\"x\"}}\n# c\n{\"tool\":\"nope\"}\n"}),
    )
    .unwrap();
    assert_eq!(steps.as_array().unwrap().len(), 2);
    assert_eq!(steps[1]["isError"], true);
    assert_eq!((&steps[1]["step"], &steps[1]["line"]), (&json!(2), &json!(3)), "the second step is on line 3: {steps}");
    let err = invoke(&app, "run_script", json!({"text": "{oops"})).unwrap_err();
    assert_eq!(err["code"], "invalidParams");
    assert!(err["message"].as_str().unwrap().contains("line 1"));
}

#[test]
fn open_workspace_switches_sessions_and_remembers_recents() {
    let app = start();
    let other = fixture_ws();
    let info = invoke(&app, "open_workspace", json!({"path": other.path().to_str().unwrap()})).unwrap();
    assert_eq!(info["workspaceRoot"], other.path().canonicalize().unwrap().display().to_string());
    assert_eq!(invoke(&app, "list_actions", json!({})).unwrap()["actions"].as_array().unwrap().len(), 0);
    let recents = invoke(&app, "recent_workspaces", json!({})).unwrap();
    assert_eq!(recents[0], info["workspaceRoot"]);
    assert_eq!(recents.as_array().unwrap().len(), 2);
    let err = invoke(&app, "open_workspace", json!({"path": "/nonexistent/rd-ws"})).unwrap_err();
    assert_eq!(err["code"], "notFound");
    assert!(err["message"].as_str().unwrap().contains("/nonexistent/rd-ws"));
}

/// The app's state as `resolve-desk` with no workspace starts it: the built-in demo.
fn demo_state(data: &tempfile::TempDir) -> AppState {
    let args = Args {
        workspace: None,
        script: None,
        policy: resolve_engine::ResolvePolicy::Human,
        data_dir: Some(data.path().to_path_buf()),
        config_dir: Some(data.path().join("config")),
        new_window: false,
    };
    tauri::async_runtime::block_on(AppState::start(&args)).expect("demo starts")
}

#[test]
fn the_demo_opens_with_two_previews() {
    let data = tempfile::tempdir().unwrap();
    let state = demo_state(&data);
    let (session, is_demo) = tauri::async_runtime::block_on(state.session());
    assert!(is_demo);
    let labels: Vec<String> = session.store().list().into_iter().map(|a| a.label).collect();
    assert_eq!(labels.len(), 2, "{labels:?}");
    assert!(labels[0].starts_with("Batch rename: 6 files"), "{labels:?}");
    assert!(labels[1].starts_with("AST Edit: "), "{labels:?}");
}

#[test]
fn decisions_are_journalled_and_shown_after_a_restart() {
    let app = start();
    let queue = invoke(&app, "list_actions", json!({})).unwrap();
    let top = queue["actions"][0]["id"].as_str().unwrap().to_string();
    invoke(&app, "resolve_action", json!({"action": "discard", "reason": "first session", "expectedId": top})).unwrap();
    let history = invoke(&app, "list_history", json!({})).unwrap();
    assert_eq!(history[0]["earlierSession"], false, "this session's decision: {history}");
    let App { _app, webview, ws, _data } = app;
    drop(webview);
    drop(_app);

    // A new app on the same workspace and data folder: the decision is still there.
    let again = start_in(ws, _data);
    let history = invoke(&again, "list_history", json!({})).unwrap();
    let entries = history.as_array().unwrap();
    assert_eq!(entries.len(), 1, "{history}");
    assert_eq!(entries[0]["reason"], "first session");
    assert_eq!(entries[0]["action"], "discard");
    assert_eq!(entries[0]["earlierSession"], true);
    let queue = invoke(&again, "list_actions", json!({})).unwrap();
    let labels: Vec<&str> = queue["actions"].as_array().unwrap().iter().map(|a| a["label"].as_str().unwrap()).collect();
    assert_eq!(
        labels,
        vec!["AST Edit: 2 replacements in 1 file", "Batch rename: 2 files", "Batch rename: 2 files"],
        "a restart applies nothing: the script queued two fresh previews above the one still pending"
    );
}

#[test]
fn pending_actions_come_back_after_a_switch_and_a_restart_and_apply_the_previewed_bytes() {
    let app = start();
    let queue = |app: &App| -> Vec<(String, String, String)> {
        invoke(app, "list_actions", json!({})).unwrap()["actions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| {
                let s = |k: &str| a[k].as_str().unwrap_or_default().to_string();
                (s("id"), s("label"), a["status"]["kind"].as_str().unwrap().to_string())
            })
            .collect()
    };
    let before = queue(&app);
    assert_eq!(before.len(), 2);
    let source = fs::read(app.ws.path().join("src/a.ts")).unwrap();

    // Switching workspace keeps them (nothing applied, nothing forgotten).
    let other = fixture_ws();
    invoke(&app, "open_workspace", json!({"path": other.path().to_str().unwrap()})).unwrap();
    assert!(queue(&app).is_empty(), "another workspace has its own queue");
    invoke(&app, "open_workspace", json!({"path": app.ws.path().to_str().unwrap()})).unwrap();
    assert_eq!(queue(&app), before, "the same ids, labels and order after switching back");
    assert_eq!(fs::read(app.ws.path().join("src/a.ts")).unwrap(), source, "switching applied nothing");

    // Closing the app keeps them too.
    let App { _app, webview, ws, _data } = app;
    drop(webview);
    drop(_app);
    let again = start_with(ws, _data, false);
    assert_eq!(queue(&again), before, "the same queue after a restart");
    assert_eq!(fs::read(again.ws.path().join("src/a.ts")).unwrap(), source, "a restart applied nothing");
    let top = before[0].0.clone();
    let outcome =
        invoke(&again, "resolve_action", json!({"action": "apply", "reason": "after a restart", "expectedId": top}))
            .unwrap();
    assert_eq!(outcome["isError"], false, "{outcome}");
    assert_eq!(
        fs::read_to_string(again.ws.path().join("src/a.ts")).unwrap(),
        "logger.debug(1);\nlogger.debug(\"é\", 2);\n",
        "the previewed bytes"
    );
    assert_eq!(queue(&again), before[1..].to_vec());
}

// ---- notices: banners from the backend ----

fn recovery(label: &str) -> resolve_engine::Recovery {
    resolve_engine::Recovery {
        context: Some(resolve_engine::ApplyContext {
            action_id: "pa-old-7".into(),
            label: label.into(),
            source_tool_name: "ast_edit".into(),
            actor: Some(resolve_engine::Actor::Person),
            client: None,
        }),
        outcome: resolve_engine::RecoveryOutcome::RolledBack,
        started_at: chrono::Utc::now() - chrono::Duration::minutes(5),
        files: 3,
        problems: vec![],
    }
}

#[test]
fn a_recovered_apply_is_in_the_history_as_failed_interrupted_and_a_dismissible_banner() {
    use tauri::Manager;
    let app = start();
    assert_eq!(invoke(&app, "list_notices", json!({})).unwrap(), json!([]), "nothing to say on a clean start");
    let root = invoke(&app, "get_session", json!({})).unwrap()["workspaceRoot"].as_str().unwrap().to_string();
    let r = recovery("AST Edit: 3 replacements in 3 files");
    {
        let state = app._app.state::<AppState>();
        resolve_desk::folder::report_recovery(Some(&r), &root, state.journal().map(|w| &**w), state.notices());
        resolve_desk::folder::report_recovery(None, &root, state.journal().map(|w| &**w), state.notices());
    }
    let history = invoke(&app, "list_history", json!({})).unwrap();
    let entries = history.as_array().unwrap();
    assert_eq!(entries.len(), 1, "{history}");
    let e = &entries[0];
    assert_eq!((&e["action"], &e["isError"], &e["reason"]), (&json!("apply"), &json!(true), &json!("interrupted")));
    assert_eq!(e["text"], r.message());
    assert_eq!(e["label"], "AST Edit: 3 replacements in 3 files");
    assert_eq!(e["decidedBy"], "person");
    let notices = invoke(&app, "list_notices", json!({})).unwrap();
    assert_eq!(notices.as_array().unwrap().len(), 1, "{notices}");
    assert_eq!(notices[0]["id"], "recovery");
    assert_eq!(notices[0]["message"], r.message());
    assert_eq!(notices[0]["dismissible"], true);
    assert_eq!(invoke(&app, "dismiss_notice", json!({"id": "recovery"})).unwrap(), json!([]));
    assert_eq!(invoke(&app, "list_notices", json!({})).unwrap(), json!([]));

    // After a restart the interrupted apply is still a failed one, never an applied one.
    let App { _app, webview, ws, _data } = app;
    drop(webview);
    drop(_app);
    let again = start_in(ws, _data);
    let history = invoke(&again, "list_history", json!({})).unwrap();
    assert_eq!((&history[0]["isError"], &history[0]["reason"]), (&json!(true), &json!("interrupted")), "{history}");
    assert_eq!(history[0]["earlierSession"], true);
}

#[test]
fn a_journal_that_cannot_be_opened_is_a_banner_that_stays_and_names_the_file() {
    let data = tempfile::tempdir().unwrap();
    // The data folder is a file: nothing can be created inside it.
    let blocked = data.path().join("not-a-folder");
    fs::write(&blocked, "x").unwrap();
    let ws = fixture_ws();
    let args = Args {
        workspace: Some(ws.path().to_path_buf()),
        script: None,
        policy: resolve_engine::ResolvePolicy::Human,
        data_dir: Some(blocked.clone()),
        config_dir: Some(data.path().join("config")),
        new_window: false,
    };
    let state = tauri::async_runtime::block_on(AppState::start(&args)).expect("the app starts without its journal");
    let app = resolve_desk::builder(mock_builder(), state).build(mock_context(noop_assets())).expect("app builds");
    let webview = tauri::WebviewWindowBuilder::new(&app, "main", Default::default()).build().expect("window");
    let app = App { _app: app, webview, ws, _data: data };
    let notices = invoke(&app, "list_notices", json!({})).unwrap();
    assert_eq!(notices.as_array().unwrap().len(), 1, "{notices}");
    let n = &notices[0];
    assert_eq!((&n["id"], &n["level"], &n["dismissible"]), (&json!("journal"), &json!("error"), &json!(false)));
    assert_eq!(n["title"], "Decisions are not being saved");
    let message = n["message"].as_str().unwrap();
    let db = blocked.join("journal.sqlite3").display().to_string();
    assert!(message.starts_with(&format!("Cannot open the decision journal {db}")), "names the file: {message}");
    assert!(message.contains("restart Resolve Desk"), "says what to do: {message}");
    let err = invoke(&app, "dismiss_notice", json!({"id": "journal"})).unwrap_err();
    assert_eq!(err["code"], "invalidParams", "it stays while the journal is broken: {err}");
    assert_eq!(invoke(&app, "list_notices", json!({})).unwrap(), notices);
}

// ---- the agent in the window (against a local fake OpenAI-compatible server) ----

use resolve_agent::fake::{FakeLlm, FakeReply};
use std::time::{Duration, Instant};

/// Polls `cond` until it returns `Some`, failing after 20 s with `what`.
fn wait_for<T>(what: &str, mut cond: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        if let Some(v) = cond() {
            return v;
        }
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn fake(replies: Vec<FakeReply>) -> FakeLlm {
    tauri::async_runtime::block_on(FakeLlm::start(replies)).expect("fake provider starts")
}

fn use_provider(app: &App, base_url: &str) {
    let saved = invoke(
        app,
        "save_agent_settings",
        json!({"baseUrl": base_url, "model": "fake-model", "apiKeyEnv": "RD_SHELL_TEST_UNSET_KEY"}),
    )
    .expect("settings saved");
    assert_eq!(saved["baseUrl"], base_url);
}

/// The conversation's events once turn `turn` is done.
fn finished_turn(app: &App, turn: u64) -> Vec<Value> {
    wait_for(&format!("turn {turn} to end"), || {
        let view = invoke(app, "get_conversation", json!({})).unwrap();
        let events: Vec<Value> = view["updates"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|u| u["turn"] == turn)
            .map(|u| u["event"].clone())
            .collect();
        events.iter().any(|e| e["kind"] == "turnDone").then_some(events)
    })
}

fn edit_call() -> FakeReply {
    FakeReply::tool_calls(
        Some("Previewing."),
        &[(
            "call_1",
            "ast_edit",
            json!({"ops": [{"pat": "console.log($$$A)", "out": "logger.debug($$$A)"}], "lang": "ts", "path": "src"}),
        )],
    )
}

#[test]
fn an_agent_turn_previews_waits_for_the_person_and_the_model_gets_the_decision() {
    let app = start_empty();
    let llm = fake(vec![
        edit_call(),
        FakeReply::tool_calls(None, &[("call_2", "resolve", json!({"action": "apply", "reason": "tests pass"}))]),
        FakeReply::text("Done."),
    ]);
    use_provider(&app, &llm.base_url());
    let turn = invoke(&app, "start_agent_turn", json!({"prompt": "use logger.debug"})).unwrap();
    assert_eq!(turn, 1);
    let busy = invoke(&app, "start_agent_turn", json!({"prompt": "again"})).unwrap_err();
    assert_eq!(busy["code"], "busy", "one turn at a time: {busy}");

    // The model's resolve does not decide: it proposes beside the top action and waits.
    let top = wait_for("the agent's proposal on the top action", || {
        let q = invoke(&app, "list_actions", json!({})).unwrap();
        let top = q["actions"][0].clone();
        (!top["proposal"].is_null()).then_some(top)
    });
    assert_eq!(top["label"], "AST Edit: 2 replacements in 1 file");
    assert_eq!(top["proposal"]["choice"], "apply");
    assert_eq!(top["proposal"]["reason"], "tests pass");
    assert!(
        fs::read_to_string(app.ws.path().join("src/a.ts")).unwrap().contains("console.log"),
        "nothing is written while the agent waits"
    );
    let id = top["id"].as_str().unwrap();
    invoke(&app, "resolve_action", json!({"action": "apply", "reason": "checked by me", "expectedId": id})).unwrap();

    let events = finished_turn(&app, 1);
    let kinds: Vec<&str> = events.iter().map(|e| e["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds.first(), Some(&"prompt"));
    assert!(kinds.contains(&"waitingForPerson"), "{kinds:?}");
    let preview = events.iter().find(|e| e["kind"] == "toolResult" && e["tool"] == "ast_edit").unwrap();
    assert_eq!(preview["pushedActionIds"], json!([id]), "the preview result links to its card");
    let resolved = events.iter().find(|e| e["kind"] == "toolResult" && e["tool"] == "resolve").unwrap();
    assert_eq!(resolved["resolved"]["decidedBy"], "person", "{resolved}");
    assert_eq!(resolved["resolved"]["reason"], "checked by me");
    assert_eq!(events.last().unwrap()["outcome"], "answered");

    let requests = llm.requests();
    assert_eq!(requests.len(), 3);
    let tool_msg = requests[2].body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool" && m["tool_call_id"] == "call_2")
        .expect("the resolve call's result is in the next request")
        .clone();
    let text = tool_msg["content"].as_str().unwrap();
    assert!(text.contains("Decided by the person: applied. Reason: checked by me"), "{text}");
    assert_eq!(
        fs::read_to_string(app.ws.path().join("src/a.ts")).unwrap(),
        "logger.debug(1);\nlogger.debug(\"é\", 2);\n"
    );
    let history = invoke(&app, "list_history", json!({})).unwrap();
    assert_eq!(history[0]["decidedBy"], "person");
    assert_eq!(history[0]["proposal"]["reason"], "tests pass", "{history}");
}

#[test]
fn not_now_answers_the_waiting_agent_and_keeps_the_action_pending() {
    let app = start_empty();
    let llm = fake(vec![
        edit_call(),
        FakeReply::tool_calls(None, &[("call_2", "resolve", json!({"action": "apply", "reason": "tests pass"}))]),
        FakeReply::text("I will wait for the person's review."),
    ]);
    use_provider(&app, &llm.base_url());
    invoke(&app, "start_agent_turn", json!({"prompt": "use logger.debug"})).unwrap();
    let top = wait_for("the agent waiting on the top action", || {
        let q = invoke(&app, "list_actions", json!({})).unwrap();
        let top = q["actions"][0].clone();
        (top["proposal"]["waiting"] == true).then_some(top)
    });
    let id = top["id"].as_str().unwrap().to_string();
    let answered = invoke(&app, "snooze_action", json!({"actionId": id})).unwrap();
    assert_eq!(answered, 1, "one agent was waiting");
    let events = finished_turn(&app, 1);
    let resolved = events.iter().find(|e| e["kind"] == "toolResult" && e["tool"] == "resolve").unwrap();
    let text = resolved["text"].as_str().unwrap();
    assert!(text.contains("will review") && text.contains("nothing was applied"), "the agent hears Not now: {text}");
    let q = invoke(&app, "list_actions", json!({})).unwrap();
    assert_eq!(q["actions"][0]["id"], json!(id), "the action stays pending: {q}");
    assert_eq!(q["actions"][0]["proposal"]["waiting"], false, "nobody waits now: {q}");
    assert!(fs::read_to_string(app.ws.path().join("src/a.ts")).unwrap().contains("console.log"), "nothing written");
    assert_eq!(invoke(&app, "list_history", json!({})).unwrap(), json!([]), "Not now decides nothing");
    assert_eq!(invoke(&app, "snooze_action", json!({"actionId": id})).unwrap(), 0, "nobody left to answer");
    let err = invoke(&app, "snooze_action", json!({"actionId": "pa-nope-1"})).unwrap_err();
    assert_eq!(err["code"], "unknownAction", "{err}");
}

#[test]
fn stop_cancels_a_streaming_turn() {
    let app = start_empty();
    let llm = fake(vec![FakeReply::text_then_hang("Thinking")]);
    use_provider(&app, &llm.base_url());
    invoke(&app, "start_agent_turn", json!({"prompt": "go"})).unwrap();
    wait_for("the first streamed text", || {
        let view = invoke(&app, "get_conversation", json!({})).unwrap();
        view["updates"].as_array().unwrap().iter().any(|u| u["event"]["kind"] == "textDelta").then_some(())
    });
    invoke(&app, "stop_agent_turn", json!({})).unwrap();
    let events = finished_turn(&app, 1);
    assert_eq!(events.last().unwrap()["outcome"], "cancelled");
    assert!(invoke(&app, "get_conversation", json!({})).unwrap()["runningTurn"].is_null());
}

#[test]
fn an_unreachable_provider_is_explained_in_the_conversation() {
    let app = start_empty();
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    use_provider(&app, &format!("http://127.0.0.1:{port}/v1"));
    invoke(&app, "start_agent_turn", json!({"prompt": "go"})).unwrap();
    let events = finished_turn(&app, 1);
    let error = events.iter().find(|e| e["kind"] == "error").expect("an error event");
    assert_eq!(error["code"], "connectionRefused", "{error}");
    assert!(error["message"].as_str().unwrap().contains(&format!("127.0.0.1:{port}")), "{error}");
    assert_eq!(events.last().unwrap()["outcome"], "failed");
}

#[test]
fn new_conversation_discards_pending_actions_into_the_history_after_asking_for_a_reason() {
    let app = start();
    let err = invoke(&app, "new_conversation", json!({"discardReason": null})).unwrap_err();
    assert_eq!(err["code"], "reasonRequired", "{err}");
    let err = invoke(&app, "new_conversation", json!({"discardReason": " \n\t"})).unwrap_err();
    assert_eq!(err["code"], "reasonRequired", "a blank reason is no reason: {err}");
    assert_eq!(invoke(&app, "list_actions", json!({})).unwrap()["actions"].as_array().unwrap().len(), 2);
    // The reason is passed on byte for byte (SPEC §4), spaces and newline included.
    let reason = "  Discarded: new conversation started\n";
    let out = invoke(&app, "new_conversation", json!({"discardReason": reason})).unwrap();
    assert_eq!(out["discarded"].as_array().unwrap().len(), 2, "{out}");
    assert_eq!(invoke(&app, "list_actions", json!({})).unwrap()["actions"].as_array().unwrap().len(), 0);
    let history = invoke(&app, "list_history", json!({})).unwrap();
    for h in history.as_array().unwrap() {
        assert_eq!(h["action"], "discard");
        assert_eq!(h["reason"], reason);
        assert_eq!(h["decidedBy"], "person");
    }
    assert!(app.ws.path().join("photos/IMG_1.JPG").exists(), "nothing applied");
    let view = invoke(&app, "get_conversation", json!({})).unwrap();
    assert!(view["updates"].as_array().unwrap().is_empty());
}

#[test]
fn the_policy_switches_only_while_nothing_is_pending() {
    let app = start();
    let err = invoke(&app, "set_policy", json!({"policy": "agent"})).unwrap_err();
    assert!(!err["message"].as_str().unwrap().is_empty(), "the engine says why: {err}");
    assert_eq!(invoke(&app, "get_session", json!({})).unwrap()["policy"], "human");
    invoke(&app, "new_conversation", json!({"discardReason": "clear"})).unwrap();
    let info = invoke(&app, "set_policy", json!({"policy": "agent"})).unwrap();
    assert_eq!(info["policy"], "agent");
}

#[test]
fn agent_settings_are_saved_and_the_key_is_only_reported_as_set() {
    let app = start_empty();
    let secret = "sk-shell-test-secret-4242";
    // SAFETY of the test: this variable name is used by this test only.
    std::env::set_var("RD_SHELL_TEST_KEY", secret);
    let s = invoke(&app, "get_agent_settings", json!({})).unwrap();
    assert_eq!(s["apiKeyEnv"], "OPENAI_API_KEY", "defaults before a file exists");
    let saved = invoke(
        &app,
        "save_agent_settings",
        json!({"baseUrl": "http://127.0.0.1:11434/v1", "model": "llama3.1", "apiKeyEnv": "RD_SHELL_TEST_KEY"}),
    )
    .unwrap();
    assert_eq!(saved["apiKeyIsSet"], true);
    assert!(!saved.to_string().contains(secret), "the key never crosses the IPC");
    let path = saved["configPath"].as_str().unwrap();
    let file = fs::read_to_string(path).unwrap();
    assert!(file.contains("llama3.1") && !file.contains(secret), "{file}");
    assert_eq!(invoke(&app, "get_agent_settings", json!({})).unwrap()["model"], "llama3.1");
    let err = invoke(&app, "save_agent_settings", json!({"baseUrl": "localhost:1", "model": "m", "apiKeyEnv": "K"}))
        .unwrap_err();
    assert_eq!(err["code"], "invalidParams");
    assert!(err["message"].as_str().unwrap().contains("\"localhost:1\""), "{err}");
}

// ---- the UI's demo fixture, from the real demo workspace ----

/// Replaces, everywhere in `v`: the demo's temporary root, the store's random id tag
/// (`pa-<tag>-<n>` → `act-000<n>`) and creation times (`createdAtMs`, `atMs`), so the
/// fixture is the same on every run.
fn normalise_demo(v: Value, root: &str) -> Value {
    let text = serde_json::to_string(&v).unwrap().replace(root, "/tmp/resolve-desk-demo");
    let ids = regex_lite_ids(&text);
    let mut text = text;
    for (from, to) in ids {
        text = text.replace(&from, &to);
    }
    let mut v: Value = serde_json::from_str(&text).unwrap();
    fix_times(&mut v);
    v
}

/// Every `pa-<tag>-<n>` id in `text`, with its stable name `act-000<n>`.
fn regex_lite_ids(text: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for (at, _) in text.match_indices("\"pa-") {
        let rest = &text[at + 1..];
        let end = rest.find('"').unwrap();
        let id = &rest[..end];
        let n: u64 = id.rsplit('-').next().unwrap().parse().unwrap();
        if !out.iter().any(|(f, _)| f == id) {
            out.push((id.to_string(), format!("act-{n:04}")));
        }
    }
    // Longest first, so `pa-x-1` never rewrites a part of `pa-x-12`.
    out.sort_by_key(|(f, _)| std::cmp::Reverse(f.len()));
    out
}

fn fix_times(v: &mut Value) {
    match v {
        Value::Object(map) => {
            let id_n = map
                .get("id")
                .or_else(|| map.get("actionId"))
                .and_then(Value::as_str)
                .and_then(|id| id.strip_prefix("act-").and_then(|n| n.parse::<u64>().ok()));
            for key in ["createdAtMs", "atMs"] {
                if let Some(t) = map.get_mut(key) {
                    *t = json!(1_764_694_200_000u64 + 1000 * id_n.unwrap_or(1).saturating_sub(1));
                }
            }
            map.values_mut().for_each(fix_times);
        }
        Value::Array(items) => items.iter_mut().for_each(fix_times),
        _ => {}
    }
}

#[test]
fn the_demo_fixture_is_what_the_real_demo_workspace_shows() {
    let data = tempfile::tempdir().unwrap();
    let state = demo_state(&data);
    let app = resolve_desk::builder(mock_builder(), state).build(mock_context(noop_assets())).expect("app builds");
    let webview = tauri::WebviewWindowBuilder::new(&app, "main", Default::default()).build().expect("window");
    let app = App { _app: app, webview, ws: tempfile::tempdir().unwrap(), _data: data };

    let session = invoke(&app, "get_session", json!({})).unwrap();
    assert_eq!(session["isDemo"], true);
    let root = session["workspaceRoot"].as_str().unwrap().to_string();
    let queue = invoke(&app, "list_actions", json!({})).unwrap();
    let (mut files, mut diffs, mut renames, mut texts) = (json!({}), json!({}), json!({}), json!({}));
    let raw_edit = queue["actions"][1]["id"].as_str().unwrap().to_string();
    for action in queue["actions"].as_array().unwrap() {
        let id = action["id"].as_str().unwrap();
        let entries = invoke(&app, "get_action_files", json!({"actionId": id})).unwrap();
        let (mut by_path, mut texts_by_path) = (json!({}), json!({}));
        for f in entries.as_array().unwrap() {
            let path = f["path"].as_str().unwrap();
            by_path[path] =
                invoke(&app, "get_file_diff", json!({"actionId": id, "path": path, "context": null})).unwrap();
            texts_by_path[path] = invoke(&app, "get_file_texts", json!({"actionId": id, "path": path})).unwrap();
        }
        files[id] = entries;
        diffs[id] = by_path;
        texts[id] = texts_by_path;
        renames[id] = invoke(&app, "get_action_renames", json!({"actionId": id})).unwrap();
    }
    let tools = invoke(&app, "list_tools", json!({})).unwrap();
    let history = invoke(&app, "list_history", json!({})).unwrap();
    // Last, as it pushes the demo's previews once more.
    let script_steps = invoke(&app, "run_script", json!({"text": resolve_desk::demo::SCRIPT})).unwrap();
    let fixture = normalise_demo(
        json!({
            "session": session, "tools": tools, "queue": queue, "files": files, "diffs": diffs,
            "renames": renames, "history": history, "scriptSteps": script_steps, "texts": texts,
        }),
        &root,
    );
    // Every value is the wire type the UI reads.
    let _: resolve_protocol::QueueSnapshot = serde_json::from_value(fixture["queue"].clone()).unwrap();
    let _: Vec<resolve_protocol::ScriptStep> = serde_json::from_value(fixture["scriptSteps"].clone()).unwrap();
    assert_eq!(fixture["scriptSteps"][0]["line"], 2, "the demo script's first step is on line 2 (line 1 is a comment)");
    assert_eq!(fixture["queue"]["actions"][0]["kind"], "rename");
    let edit = fixture["queue"]["actions"][1]["id"].as_str().unwrap();
    for (path, t) in fixture["texts"][edit].as_object().unwrap() {
        let t: resolve_protocol::FileTexts = serde_json::from_value(t.clone()).unwrap();
        assert_eq!(&t.path, path);
        let lines = t.new.as_deref().map_or(0, |n| n.lines().count()) as u32;
        let hunks = fixture["diffs"][edit][path]["hunks"].as_array().unwrap();
        let last_new =
            hunks.last().map_or(0, |h| h["newStart"].as_u64().unwrap() + h["newLines"].as_u64().unwrap() - 1);
        assert!(last_new as u32 <= lines, "{path}: the whole text covers every hunk");
    }
    let err = invoke(&app, "get_file_texts", json!({"actionId": raw_edit, "path": "nope.ts"})).unwrap_err();
    assert_eq!(err["code"], "unknownFile", "{err}");
    invoke(&app, "cancel_tool_run", json!({})).expect("cancelling with nothing running is a no-op");
    assert!(!fixture["renames"]["act-0002"].as_array().unwrap().is_empty(), "{}", fixture["renames"]);

    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("ui/src/ipc/fixtures/demo.json");
    let text = serde_json::to_string_pretty(&fixture).unwrap() + "\n";
    if std::env::var_os("RD_UPDATE_FIXTURES").is_some() {
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(&path, &text).unwrap();
    }
    let committed = fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == text,
        "{} differs from what the demo workspace shows; regenerate it with RD_UPDATE_FIXTURES=1 cargo test -p resolve-desk --test shell the_demo_fixture",
        path.display()
    );
}

#[test]
fn discard_all_asks_for_a_reason_then_discards_every_action_with_it_verbatim() {
    let app = start();
    let err = invoke(&app, "discard_all", json!({"reason": "  "})).unwrap_err();
    assert_eq!(err["code"], "reasonRequired", "{err}");
    assert!(err["message"].as_str().unwrap().contains("before leaving this workspace"), "{err}");
    assert_eq!(invoke(&app, "list_actions", json!({})).unwrap()["actions"].as_array().unwrap().len(), 2);
    let reason = " leaving for another project\n";
    let out = invoke(&app, "discard_all", json!({"reason": reason})).unwrap();
    assert_eq!(out.as_array().unwrap().len(), 2, "{out}");
    assert_eq!(invoke(&app, "list_actions", json!({})).unwrap()["actions"].as_array().unwrap().len(), 0);
    let history = invoke(&app, "list_history", json!({})).unwrap();
    assert_eq!(history.as_array().unwrap().len(), 2, "{history}");
    for h in history.as_array().unwrap() {
        assert_eq!(h["action"], "discard");
        assert_eq!(h["reason"], reason);
        assert_eq!(h["decidedBy"], "person");
    }
    assert!(app.ws.path().join("photos/IMG_1.JPG").exists(), "nothing applied");
    // Nothing pending: nothing to give a reason for.
    assert_eq!(invoke(&app, "discard_all", json!({"reason": ""})).unwrap(), json!([]));
}

#[test]
fn search_history_filters_and_pages_the_journal_and_export_writes_what_it_finds() {
    let app = start();
    invoke(&app, "discard_all", json!({"reason": "not today, Needle"})).unwrap();
    let all = invoke(&app, "search_history", json!({"query": {}, "offset": 0, "limit": 10})).unwrap();
    assert_eq!(all["total"], 2, "{all}");
    assert_eq!(all["tools"], json!(["ast_edit", "batch_rename_preview"]), "{all}");
    let one = invoke(&app, "search_history", json!({"query": {}, "offset": 1, "limit": 1})).unwrap();
    assert_eq!(one["entries"].as_array().unwrap().len(), 1);
    assert_eq!(one["entries"][0]["actionId"], all["entries"][1]["actionId"], "page 2 of 1 = the second entry");
    let renames = invoke(
        &app,
        "search_history",
        json!({"query": {"text": "needle", "tool": "batch_rename_preview", "outcome": "discarded"}, "offset": 0, "limit": 10}),
    )
    .unwrap();
    assert_eq!(renames["total"], 1, "{renames}");
    assert_eq!(renames["entries"][0]["sourceToolName"], "batch_rename_preview");
    let none =
        invoke(&app, "search_history", json!({"query": {"outcome": "applied"}, "offset": 0, "limit": 10})).unwrap();
    assert_eq!(none["total"], 0);
    let err = invoke(&app, "search_history", json!({"query": {}, "offset": 0, "limit": 0})).unwrap_err();
    assert_eq!(err["code"], "invalidParams", "{err}");

    let out = app._data.path().join("export.csv");
    let done = invoke(
        &app,
        "export_history",
        json!({"query": {"text": "needle"}, "format": "csv", "path": out.display().to_string()}),
    )
    .unwrap();
    assert_eq!(done["count"], 2);
    let csv = fs::read_to_string(&out).unwrap();
    assert!(csv.starts_with("at,outcome,decided_by,"), "{csv}");
    assert_eq!(csv.lines().filter(|l| l.contains("\"not today, Needle\"")).count(), 2, "{csv}");
    let json_out = app._data.path().join("export.json");
    invoke(&app, "export_history", json!({"query": {}, "format": "json", "path": json_out.display().to_string()}))
        .unwrap();
    let parsed: Value = serde_json::from_str(&fs::read_to_string(&json_out).unwrap()).unwrap();
    assert_eq!(parsed.as_array().unwrap().len(), 2);
    assert_eq!(parsed[0]["decided_by"], "person");
    // A folder that does not exist: a clear error, nothing written.
    let bad = app._data.path().join("no/such/folder/export.csv");
    let err = invoke(&app, "export_history", json!({"query": {}, "format": "csv", "path": bad.display().to_string()}))
        .unwrap_err();
    assert_eq!(err["code"], "io", "{err}");
    assert!(err["message"].as_str().unwrap().contains("no/such/folder/export.csv"), "{err}");
}

/// Undo and redo from the history through the commands the UI calls, on a real workspace
/// and a real journal file; the undo data survives a restart of the app.
#[test]
fn undo_and_redo_from_the_history_write_the_old_bytes_and_survive_a_restart() {
    let app = start();
    let original_a = fs::read(app.ws.path().join("src/a.ts")).unwrap();
    let queue = invoke(&app, "list_actions", json!({})).unwrap();
    let (edit, rename) = (queue["actions"][0]["id"].clone(), queue["actions"][1]["id"].clone());
    invoke(&app, "resolve_action", json!({"action": "apply", "reason": "r1", "expectedId": edit})).unwrap();
    invoke(&app, "resolve_action", json!({"action": "apply", "reason": "r2", "expectedId": rename})).unwrap();
    assert!(app.ws.path().join("photos/p1.jpg").exists());

    let history = invoke(&app, "list_history", json!({})).unwrap();
    assert_eq!(history[0]["undo"], json!({"state": "canUndo", "note": null}), "{history}");
    assert_eq!(history[1]["undo"], json!({"state": "canUndo", "note": null}));

    // A blank reason and an unknown decision are refused.
    let err = invoke(&app, "undo_decision", json!({"decisionId": rename, "reason": " "})).unwrap_err();
    assert_eq!(err["code"], "reasonRequired");
    let err = invoke(&app, "undo_decision", json!({"decisionId": "pa-nope", "reason": "r"})).unwrap_err();
    assert_eq!(err["code"], "unknownAction");

    let out = invoke(&app, "undo_decision", json!({"decisionId": rename, "reason": "keep the camera names"})).unwrap();
    assert_eq!(out["isError"], false, "{out}");
    assert_eq!(out["details"]["action"], "undo");
    assert!(app.ws.path().join("photos/IMG_1.JPG").exists() && !app.ws.path().join("photos/p1.jpg").exists());
    let history = invoke(&app, "list_history", json!({})).unwrap();
    assert_eq!(history[0]["action"], "undo");
    assert_eq!(history[0]["reason"], "keep the camera names");
    assert_eq!(history[0]["decidedBy"], "person");
    assert_eq!(history[1]["undo"]["state"], "undone", "{history}");
    let err = invoke(&app, "undo_decision", json!({"decisionId": rename, "reason": "again"})).unwrap_err();
    assert_eq!(err["code"], "invalidParams", "an undone entry offers redo, not undo");

    // An edit behind the app's back: the undo of the rewrite is refused, names the file, writes nothing.
    let a = app.ws.path().join("src/a.ts");
    fs::write(&a, "logger.debug(1); // mine\n").unwrap();
    let out = invoke(&app, "undo_decision", json!({"decisionId": edit, "reason": "revert"})).unwrap();
    assert_eq!(out["isError"], true);
    assert!(out["text"].as_str().unwrap().contains("src/a.ts (content changed)"), "{out}");
    assert_eq!(fs::read_to_string(&a).unwrap(), "logger.debug(1); // mine\n");
    let history = invoke(&app, "list_history", json!({})).unwrap();
    let entry = history.as_array().unwrap().iter().find(|h| h["actionId"] == edit).unwrap();
    assert!(entry["undo"]["note"].as_str().unwrap().contains("changed since the apply"), "{entry}");
    fs::write(&a, "logger.debug(1);\nlogger.debug(\"é\", 2);\n").unwrap();

    // Restart on the same data folder: the undo data is still there.
    let App { _app, webview, ws, _data } = app;
    drop((webview, _app));
    let app = start_in_existing(ws, _data);
    let history = invoke(&app, "list_history", json!({})).unwrap();
    let find = |id: &Value| history.as_array().unwrap().iter().find(|h| &h["actionId"] == id).unwrap().clone();
    assert_eq!(find(&rename)["undo"]["state"], "undone");
    let out = invoke(&app, "redo_decision", json!({"decisionId": rename, "reason": "rename after all"})).unwrap();
    assert_eq!(out["isError"], false, "{out}");
    assert!(app.ws.path().join("photos/p1.jpg").exists());
    let out = invoke(&app, "undo_decision", json!({"decisionId": edit, "reason": "revert the rewrite"})).unwrap();
    assert_eq!(out["isError"], false, "{out}");
    assert_eq!(fs::read(app.ws.path().join("src/a.ts")).unwrap(), original_a, "every byte back");
}

/// The app on an existing workspace and data folder, nothing queued.
fn start_in_existing(ws: tempfile::TempDir, data: tempfile::TempDir) -> App {
    start_with(ws, data, false)
}

#[test]
fn a_partial_apply_leaves_out_one_replacement_and_the_history_says_so() {
    let app = start();
    let queue = invoke(&app, "list_actions", json!({})).unwrap();
    let top = queue["actions"][0]["id"].as_str().unwrap().to_string();
    let below = queue["actions"][1]["id"].as_str().unwrap().to_string();

    let reps = invoke(&app, "get_file_replacements", json!({"actionId": top, "path": "src/a.ts"})).unwrap();
    assert_eq!(reps["note"], Value::Null);
    assert_eq!(reps["replacements"][0], json!({"id": 1, "line": 1, "old": "console.log(1)", "new": "logger.debug(1)"}));
    assert_eq!(reps["replacements"][1]["line"], 2);
    let err = invoke(&app, "get_file_replacements", json!({"actionId": top, "path": "nope.ts"})).unwrap_err();
    assert_eq!(err["code"], "unknownFile");
    let renames = invoke(&app, "get_file_replacements", json!({"actionId": below, "path": "photos/p1.jpg"})).unwrap();
    assert!(renames["note"].as_str().unwrap().starts_with("This file cannot be taken in part"), "{renames}");

    // A wrong id is refused with the action still on top and nothing written.
    let err = invoke(
        &app,
        "resolve_action",
        json!({"action": "apply", "reason": "r", "expectedId": top, "leaveOut": {"files": [], "replacements": {"src/a.ts": [3]}}}),
    )
    .unwrap_err();
    assert_eq!(err["code"], "invalidParams");
    assert!(err["message"].as_str().unwrap().contains("replacement 3 of \"src/a.ts\""), "{err}");
    assert_eq!(invoke(&app, "list_actions", json!({})).unwrap()["actions"][0]["id"], top);

    let out = invoke(
        &app,
        "resolve_action",
        json!({"action": "apply", "reason": "not the second", "expectedId": top, "leaveOut": {"files": [], "replacements": {"src/a.ts": [2]}}}),
    )
    .unwrap();
    assert_eq!(out["isError"], false, "{out}");
    assert_eq!(out["text"], "Applied: AST Edit: 2 replacements in 1 file.\nLeft out 1 of 2 replacements in src/a.ts");
    let written = fs::read_to_string(app.ws.path().join("src/a.ts")).unwrap();
    assert_eq!(written, "logger.debug(1);\nconsole.log(\"é\", 2);\n");
    let history = invoke(&app, "list_history", json!({})).unwrap();
    assert_eq!(history[0]["partialText"], "applied 1 of 2 replacements");

    // A selection on the rename table is refused; the action stays pending.
    let err = invoke(
        &app,
        "resolve_action",
        json!({"action": "apply", "reason": "r", "expectedId": below, "leaveOut": {"files": ["photos/p1.jpg"], "replacements": {}}}),
    )
    .unwrap_err();
    assert_eq!(err["code"], "invalidParams");
    // Without `leaveOut` (or with nothing in it) an apply is a full one.
    let out = invoke(
        &app,
        "resolve_action",
        json!({"action": "apply", "reason": "all", "expectedId": below, "leaveOut": null}),
    )
    .unwrap();
    assert_eq!(out["isError"], false, "{out}");
    assert!(app.ws.path().join("photos/p1.jpg").exists());
}

#[test]
fn a_tool_that_cannot_be_loaded_is_shown_in_a_banner_and_built_in_tools_have_no_log() {
    let ws = fixture_ws();
    let bad = ws.path().join(".resolve/tools/broken");
    fs::create_dir_all(&bad).unwrap();
    fs::write(bad.join("tool.json"), r#"{"name": "broken", "label": "Broken"}"#).unwrap();
    let app = start_in(ws, tempfile::tempdir().unwrap());
    let notices = invoke(&app, "list_notices", json!({})).unwrap();
    let banner = notices.as_array().unwrap().iter().find(|n| n["id"] == "tools").unwrap_or_else(|| panic!("{notices}"));
    assert_eq!(banner["level"], "warning");
    let message = banner["message"].as_str().unwrap();
    assert!(message.contains(".resolve/tools/broken/tool.json"), "names the file: {message}");
    assert_eq!(banner["title"], "A tool could not be loaded");
    let err = invoke(&app, "read_tool_log", json!({"name": "ast_edit"})).unwrap_err();
    assert_eq!(err["code"], "unknownTool", "{err}");
    assert!(err["message"].as_str().unwrap().contains("ast_edit is not an external tool"), "{err}");
}

/// A folder carrying a tool of its own that writes a marker file outside the workspace when it
/// runs: the window lists it with its command, runs nothing until the person trusts the
/// folder, refuses a trust for tools that changed since they were shown, and runs it once
/// trusted.
#[test]
fn a_folders_own_tool_runs_only_once_the_person_trusts_it_as_shown() {
    let ws = fixture_ws();
    let outside = tempfile::tempdir().unwrap();
    let marker = outside.path().join("ran");
    let dir = ws.path().join(".resolve/tools/probe");
    fs::create_dir_all(&dir).unwrap();
    let script = format!(
        "import json, sys\nopen({:?}, 'w').write('ran')\nfor line in sys.stdin:\n    m = json.loads(line)\n    print(json.dumps({{'jsonrpc': '2.0', 'id': m['id'], 'result': {{'content': [{{'type': 'text', 'text': 'probed'}}]}}}}), flush=True)\n",
        marker.display().to_string()
    );
    fs::write(dir.join("tool.py"), script).unwrap();
    let manifest = json!({"name": "probe", "label": "Probe", "description": "d", "parameters": {"type": "object"},
        "command": "python3", "args": ["tool.py"]});
    fs::write(dir.join("tool.json"), manifest.to_string()).unwrap();
    let app = start_in(ws, tempfile::tempdir().unwrap());

    let notices = invoke(&app, "list_notices", json!({})).unwrap();
    let banner = notices.as_array().unwrap().iter().find(|n| n["id"] == "trust").unwrap_or_else(|| panic!("{notices}"));
    assert_eq!(banner["details"], json!(["probe: python3 tool.py"]), "the tool and the command it would run");
    let actions = banner["actions"].as_array().unwrap();
    assert_eq!(actions[0]["label"], "Trust this folder's tools");
    assert_eq!(actions[1], json!({"id": "not-now", "label": "Not now", "primary": false}));
    let trust = actions[0]["id"].as_str().unwrap().to_string();

    let out = invoke(&app, "run_tool", json!({"name": "probe", "params": {}})).unwrap();
    assert_eq!(out["isError"], true, "{out}");
    let message = out["text"].as_str().unwrap();
    assert!(message.contains("nothing was run") && message.contains("rdesk trust"), "{message}");
    assert!(!marker.exists(), "the tool's command never ran");

    // "Not now": the banner goes, the tool stays untrusted.
    let left = invoke(&app, "notice_action", json!({"noticeId": "trust", "actionId": "not-now"})).unwrap();
    assert!(!left.as_array().unwrap().iter().any(|n| n["id"] == "trust"), "{left}");
    let out = invoke(&app, "run_tool", json!({"name": "probe", "params": {}})).unwrap();
    assert!(out["isError"] == true && out["text"].as_str().unwrap().contains("not trusted"), "{out}");

    // Trusting what was shown after the tool changed is refused; nothing is trusted.
    fs::write(app.ws.path().join(".resolve/tools/probe/extra.py"), "x = 1\n").unwrap();
    let err = invoke(&app, "notice_action", json!({"noticeId": "trust", "actionId": trust})).unwrap_err();
    assert!(err["message"].as_str().unwrap().contains("changed since they were shown"), "{err}");
    assert!(!marker.exists());

    // The banner now shows the tools as they are; trusting those lets the tool run.
    let notices = invoke(&app, "list_notices", json!({})).unwrap();
    let banner = notices.as_array().unwrap().iter().find(|n| n["id"] == "trust").unwrap_or_else(|| panic!("{notices}"));
    let trust = banner["actions"][0]["id"].as_str().unwrap().to_string();
    let left = invoke(&app, "notice_action", json!({"noticeId": "trust", "actionId": trust})).unwrap();
    assert!(!left.as_array().unwrap().iter().any(|n| n["id"] == "trust"), "{left}");
    let out = invoke(&app, "run_tool", json!({"name": "probe", "params": {}})).unwrap();
    assert_eq!((&out["isError"], &out["text"]), (&json!(false), &json!("probed")), "{out}");
    assert_eq!(fs::read_to_string(&marker).unwrap(), "ran");
}

/// Copies `examples/hidden-unicode/workspace` into a temporary folder.
fn hidden_unicode_ws() -> tempfile::TempDir {
    let ws = tempfile::tempdir().unwrap();
    let from = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/hidden-unicode/workspace");
    for dir in ["src", "docs"] {
        fs::create_dir_all(ws.path().join(dir)).unwrap();
        for e in fs::read_dir(from.join(dir)).unwrap() {
            let e = e.unwrap();
            fs::copy(e.path(), ws.path().join(dir).join(e.file_name())).unwrap();
        }
    }
    ws
}

/// Writes (with `RD_UPDATE_FIXTURES`) or compares a protocol fixture.
fn check_fixture(name: &str, value: &Value) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("crates/protocol/fixtures").join(name);
    let text = serde_json::to_string_pretty(value).unwrap() + "\n";
    if std::env::var_os("RD_UPDATE_FIXTURES").is_some() {
        fs::write(&path, &text).unwrap();
    }
    let committed = fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == text,
        "{} differs from what the shell serves; regenerate it with RD_UPDATE_FIXTURES=1 cargo test -p resolve-desk --test shell hidden_unicode",
        path.display()
    );
}

#[test]
fn the_hidden_unicode_fixtures_are_what_the_shell_shows() {
    let data = tempfile::tempdir().unwrap();
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/hidden-unicode/review.jsonl");
    let ws = hidden_unicode_ws();
    let args = Args {
        workspace: Some(ws.path().to_path_buf()),
        script: Some(script),
        policy: resolve_engine::ResolvePolicy::Human,
        data_dir: Some(data.path().to_path_buf()),
        config_dir: Some(data.path().join("config")),
        new_window: false,
    };
    let state = tauri::async_runtime::block_on(AppState::start(&args)).expect("state starts");
    let app = resolve_desk::builder(mock_builder(), state).build(mock_context(noop_assets())).expect("app builds");
    let webview = tauri::WebviewWindowBuilder::new(&app, "main", Default::default()).build().expect("window");
    let app = App { _app: app, webview, ws, _data: data };
    let root = app.ws.path().display().to_string();

    let queue = invoke(&app, "list_actions", json!({})).unwrap();
    let actions = queue["actions"].as_array().unwrap();
    assert_eq!(actions.len(), 2, "both previews are queued: {queue}");
    let (edit, rename) = (actions[0]["id"].as_str().unwrap(), actions[1]["id"].as_str().unwrap());
    assert_eq!(
        actions[0]["hiddenWarning"],
        "This change contains hidden or bidirectional Unicode characters: 8 in 2 files. They are shown as ⟨U+…⟩.",
        "the Trojan Source edit's card warns, with the count computed by the engine"
    );
    assert!(
        actions[1]["hiddenWarning"]
            .as_str()
            .unwrap()
            .starts_with("This change contains 2 characters that look like ASCII"),
        "the look-alike rename's card warns: {}",
        actions[1]
    );

    let files = invoke(&app, "get_action_files", json!({"actionId": edit})).unwrap();
    assert!(files.as_array().unwrap().iter().all(|f| f["hiddenCount"] == 4), "each file is marked: {files}");
    let diff =
        invoke(&app, "get_file_diff", json!({"actionId": edit, "path": "src/access.js", "context": null})).unwrap();
    let added = diff["hunks"][0]["lines"].as_array().unwrap().iter().find(|l| l["kind"] == "added").unwrap().clone();
    let text: Vec<u16> = added["text"].as_str().unwrap().encode_utf16().collect();
    let found: Vec<(String, String, String)> = added["hidden"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| {
            let (s, e) = (h["start"].as_u64().unwrap() as usize, h["end"].as_u64().unwrap() as usize);
            (
                String::from_utf16(&text[s..e]).unwrap(),
                h["name"].as_str().unwrap().into(),
                h["kind"].as_str().unwrap().into(),
            )
        })
        .collect();
    assert_eq!(
        found,
        vec![
            ("\u{202E}".into(), "U+202E RIGHT-TO-LEFT OVERRIDE".into(), "bidi".into()),
            ("\u{2066}".into(), "U+2066 LEFT-TO-RIGHT ISOLATE".into(), "bidi".into()),
            ("\u{2069}".into(), "U+2069 POP DIRECTIONAL ISOLATE".into(), "bidi".into()),
            ("\u{2066}".into(), "U+2066 LEFT-TO-RIGHT ISOLATE".into(), "bidi".into()),
        ],
        "get_file_diff carries each hidden character of the added line, its UTF-16 range pointing at it"
    );
    let removed = diff["hunks"][0]["lines"].as_array().unwrap().iter().find(|l| l["kind"] == "removed").unwrap();
    assert!(removed.get("hidden").is_none(), "a clean line carries nothing: {removed}");
    let texts = invoke(&app, "get_file_texts", json!({"actionId": edit, "path": "src/access.js"})).unwrap();
    assert_eq!(texts["newHidden"][0]["line"], 4, "the whole text's findings are by line: {texts}");
    assert!(texts.get("oldHidden").is_none(), "the old side is clean");
    let renames = invoke(&app, "get_action_renames", json!({"actionId": rename})).unwrap();
    assert!(
        renames
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["toHidden"][0]["kind"] == "confusable" && r.get("fromHidden").is_none()),
        "new names with a Cyrillic е are marked, the old names are clean: {renames}"
    );

    let reps = invoke(&app, "get_file_replacements", json!({"actionId": edit, "path": "src/access.js"})).unwrap();
    assert_eq!(
        reps["replacements"][0]["newHidden"].as_array().map(Vec::len),
        Some(4),
        "the partial-apply list marks the replacement's hidden characters too: {reps}"
    );

    let normalise = |v: Value| normalise_demo(v, &root);
    check_fixture("queue_snapshot_hidden.json", &normalise(queue.clone()));
    check_fixture("file_entries_hidden.json", &normalise(files.clone()));
    check_fixture("file_diff_hidden.json", &normalise(diff));
    check_fixture("file_texts_hidden.json", &normalise(texts));
    check_fixture("rename_rows_hidden.json", &normalise(renames));
}

// ---- one desk, many folders ----

/// An app started as `resolve-desk WS --data-dir DATA` (no script: it records and reopens its
/// folders), with its window.
fn desk_on(ws: &std::path::Path, data: &std::path::Path) -> (tauri::App<MockRuntime>, WebviewWindow<MockRuntime>) {
    let args = Args {
        workspace: Some(ws.to_path_buf()),
        script: None,
        policy: resolve_engine::ResolvePolicy::Human,
        data_dir: Some(data.to_path_buf()),
        config_dir: Some(data.join("config")),
        new_window: false,
    };
    let state = tauri::async_runtime::block_on(AppState::start(&args)).expect("state starts");
    let app = resolve_desk::builder(mock_builder(), state).build(mock_context(noop_assets())).expect("app builds");
    let webview = tauri::WebviewWindowBuilder::new(&app, "main", Default::default()).build().expect("window");
    (app, webview)
}

fn preview_in(webview: &WebviewWindow<MockRuntime>) -> String {
    let params =
        json!({"ops": [{"pat": "console.log($$$A)", "out": "logger.debug($$$A)"}], "lang": "ts", "path": "src"});
    let out = invoke_on(webview, "run_tool", json!({"name": "ast_edit", "params": params})).unwrap();
    assert_eq!(out["isError"], false, "{out}");
    out["details"]["action_id"].as_str().unwrap().to_string()
}

fn roots(list: &Value) -> Vec<(String, u64, bool)> {
    list["folders"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (f["name"].as_str().unwrap().to_string(), f["pending"].as_u64().unwrap(), f["active"].as_bool().unwrap())
        })
        .collect()
}

#[test]
fn one_desk_serves_many_folders_each_with_its_own_stack_and_a_restart_reopens_them() {
    use resolve_desk::{join, wiring};
    use tauri::Manager as _;
    let data = tempfile::tempdir().unwrap();
    let parent = tempfile::tempdir().unwrap();
    let (a, b) = (parent.path().join("alpha"), parent.path().join("beta"));
    for ws in [&a, &b] {
        fs::create_dir_all(ws.join("src")).unwrap();
        fs::write(ws.join("src/a.ts"), "console.log(1);\n").unwrap();
    }
    let runtime = tempfile::tempdir().unwrap();
    fs::set_permissions(runtime.path(), std::os::unix::fs::PermissionsExt::from_mode(0o700)).unwrap();
    let control = runtime.path().join("resolve-desk").join("desk-test.sock");
    {
        let (app, window) = desk_on(&a, data.path());
        let in_a = preview_in(&window);
        let server = tauri::async_runtime::block_on(async { wiring::serve_app(app.handle().clone(), &control) })
            .expect("the control socket listens");
        // A second `resolve-desk beta`: beta opens beside alpha, which keeps the screen (it has
        // an action pending).
        let reply = tauri::async_runtime::block_on(join::ask(&control, &join::JoinRequest { open: Some(b.clone()) }))
            .unwrap()
            .expect("the running desk answers");
        assert!(reply.ok, "{reply:?}");
        let list = invoke_on(&window, "list_folders", json!({})).unwrap();
        assert_eq!(roots(&list), vec![("alpha".into(), 1, true), ("beta".into(), 0, false)], "{list}");
        assert_eq!(invoke_on(&window, "get_session", json!({})).unwrap()["workspaceRoot"], list["folders"][0]["root"]);
        // Asked again: the same folder, not a second one.
        tauri::async_runtime::block_on(join::ask(&control, &join::JoinRequest { open: Some(b.clone()) })).unwrap();
        assert_eq!(invoke_on(&window, "list_folders", json!({})).unwrap()["folders"].as_array().unwrap().len(), 2);

        let beta_root = list["folders"][1]["root"].as_str().unwrap().to_string();
        let shown = invoke_on(&window, "select_folder", json!({"root": beta_root})).unwrap();
        assert_eq!(shown["workspaceRoot"], json!(beta_root));
        assert_eq!(invoke_on(&window, "list_actions", json!({})).unwrap()["actions"], json!([]), "beta's own stack");
        let first = preview_in(&window);
        let second = preview_in(&window);
        assert_ne!(first, in_a);
        // The inbox: every folder's pending actions, newest push first, each with its place.
        let inbox = invoke_on(&window, "list_inbox", json!({})).unwrap();
        let rows: Vec<(String, String, u64, u64)> = inbox
            .as_array()
            .unwrap()
            .iter()
            .map(|i| {
                let s = |k: &str| i[k].as_str().unwrap().to_string();
                (
                    i["action"]["id"].as_str().unwrap().to_string(),
                    s("folder"),
                    i["position"].as_u64().unwrap(),
                    i["of"].as_u64().unwrap(),
                )
            })
            .collect();
        assert_eq!(
            rows,
            vec![
                (second.clone(), "beta".to_string(), 1, 2),
                (first.clone(), "beta".to_string(), 2, 2),
                (in_a.clone(), "alpha".to_string(), 1, 1)
            ],
            "{inbox}"
        );
        assert_eq!(inbox[0]["action"]["isTop"], true);
        assert_eq!(inbox[1]["action"]["isTop"], false, "only a folder's top can be resolved");
        assert_eq!(inbox[0]["action"]["counts"]["files"], 1);
        let out =
            invoke_on(&window, "resolve_action", json!({"action": "apply", "reason": "ok", "expectedId": second}))
                .unwrap();
        assert_eq!(out["isError"], false, "{out}");
        assert_eq!(fs::read_to_string(b.join("src/a.ts")).unwrap(), "logger.debug(1);\n");
        assert_eq!(fs::read_to_string(a.join("src/a.ts")).unwrap(), "console.log(1);\n", "alpha untouched");
        let list = invoke_on(&window, "list_folders", json!({})).unwrap();
        assert_eq!(roots(&list), vec![("alpha".into(), 1, false), ("beta".into(), 1, true)], "{list}");
        let history = invoke_on(&window, "list_history", json!({})).unwrap();
        assert_eq!(history.as_array().unwrap().len(), 1, "beta's history only: {history}");

        let err = invoke_on(&window, "select_folder", json!({"root": "/nowhere"})).unwrap_err();
        assert_eq!(err["code"], "notFound", "{err}");
        assert!(err["message"].as_str().unwrap().contains("/nowhere"), "{err}");
        // Discarding one folder's actions leaves the other's.
        let alpha_root = list["folders"][0]["root"].as_str().unwrap().to_string();
        let err = invoke_on(&window, "discard_all", json!({"reason": " ", "folder": alpha_root})).unwrap_err();
        assert_eq!(err["code"], "reasonRequired", "{err}");
        app.state::<AppState>().journal().unwrap().flush();
        drop(server);
        drop(window);
        drop(app);
    }
    // Started again on alpha: beta comes back beside it, each with its own stack.
    let (_app, window) = desk_on(&a, data.path());
    let list = invoke_on(&window, "list_folders", json!({})).unwrap();
    let mut got = roots(&list);
    got.sort();
    assert_eq!(got, vec![("alpha".into(), 1, true), ("beta".into(), 1, false)], "{list}");
    let beta_root = list["folders"].as_array().unwrap().iter().find(|f| f["name"] == "beta").unwrap()["root"].clone();
    let err = invoke_on(&window, "close_folder", json!({"root": list["active"]})).map(|_| ()).err();
    assert!(err.is_none(), "two open: alpha can close");
    let left = invoke_on(&window, "list_folders", json!({})).unwrap();
    assert_eq!(left["active"], beta_root, "{left}");
    let err = invoke_on(&window, "close_folder", json!({"root": beta_root})).unwrap_err();
    assert_eq!(err["code"], "invalidParams", "the last folder stays: {err}");
}

#[test]
fn the_nudge_setting_is_on_by_default_and_kept_in_the_config_folder() {
    let app = start_empty();
    let settings = invoke(&app, "get_desk_settings", json!({})).unwrap();
    assert_eq!(settings, json!({"notifications": true, "tray": true}));
    let saved =
        invoke(&app, "save_desk_settings", json!({"settings": {"notifications": false, "tray": true}})).unwrap();
    assert_eq!(saved["notifications"], false);
    let file = app._data.path().join("config/resolve-desk/desk.json");
    let kept: Value = serde_json::from_slice(&fs::read(&file).unwrap()).unwrap();
    assert_eq!(kept["notifications"], false, "{}", file.display());
}
