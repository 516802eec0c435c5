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
        script: Some(script.clone()),
        policy: resolve_engine::ResolvePolicy::Human,
        data_dir: Some(data.path().to_path_buf()),
    };
    let state = tauri::async_runtime::block_on(AppState::start(&args)).expect("state starts");
    let app = resolve_desk::builder(mock_builder(), state).build(mock_context(noop_assets())).expect("app builds");
    let webview = tauri::WebviewWindowBuilder::new(&app, "main", Default::default()).build().expect("window");
    App { _app: app, webview, ws, _data: data }
}

fn invoke(app: &App, cmd: &str, args: Value) -> Result<Value, Value> {
    get_ipc_response(
        &app.webview,
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

    let tools = invoke(&app, "list_tools", json!({})).unwrap();
    let names: Vec<&str> = tools.as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names, vec!["resolve", "ast_edit", "batch_rename_preview"]);

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

#[test]
fn the_demo_opens_with_two_previews() {
    let data = tempfile::tempdir().unwrap();
    let args = Args {
        workspace: None,
        script: None,
        policy: resolve_engine::ResolvePolicy::Human,
        data_dir: Some(data.path().to_path_buf()),
    };
    let state = tauri::async_runtime::block_on(AppState::start(&args)).expect("demo starts");
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
    assert_eq!(
        queue["actions"].as_array().unwrap().len(),
        2,
        "a restart applies nothing: the script queued two fresh previews"
    );
}
