//! Tools that crash, hang, print garbage, exit early or die with an action pending; idle
//! stop; LIFO with a built-in tool; name conflicts; bad manifests; live reload. Real child
//! processes (python3, node), real folders, real file-system events.

mod common;

use std::sync::Arc;

use common::*;
use resolve_engine::{ActionStatus, Session};
use serde_json::json;

const REPLY: &str = "import json, sys, os\ndef reply(msg, text):\n    print(json.dumps({'jsonrpc': '2.0', 'id': msg['id'], 'result': {'content': [{'type': 'text', 'text': text}]}}), flush=True)\n";

fn raw_tool(desk: &Desk, name: &str, body: &str, extra: serde_json::Value) {
    let script = format!("{REPLY}{body}");
    desk.install(name, python_manifest(name, "tool.py", extra), &[("tool.py", &script)]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crash_names_the_tool_and_its_stderr_and_the_next_call_restarts_it() {
    let desk = Desk::new();
    raw_tool(
        &desk,
        "crasher",
        "for line in sys.stdin:\n    msg = json.loads(line)\n    if msg.get('method') == 'execute':\n        if not os.path.exists('crashed-once'):\n            open('crashed-once', 'w').close()\n            print('boom: the tool fell over', file=sys.stderr, flush=True)\n            sys.exit(3)\n        reply(msg, 'fine now')\n",
        json!({}),
    );
    let session = desk.session();
    let tools = load(&desk, &session);
    let out = call(&session, "crasher", json!({})).await;
    assert!(out.is_error);
    let text = out.text_content();
    assert!(text.contains("External tool `crasher` stopped before answering `execute`"), "{text}");
    assert!(text.contains("exit status: 3"), "{text}");
    assert!(text.contains("boom: the tool fell over"), "the last stderr line is shown: {text}");
    assert!(tools.read_log("crasher").unwrap().contains("boom: the tool fell over"), "stderr is in the tool's log");
    let again = call(&session, "crasher", json!({})).await;
    assert_eq!(again.text_content(), "fine now", "a dead process is restarted for the next call");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hanging_tool_is_stopped_at_its_manifest_time_out() {
    let desk = Desk::new();
    raw_tool(&desk, "sleeper", "for line in sys.stdin:\n    pass\n", json!({"timeouts": {"execute": 0.5}}));
    let session = desk.session();
    let tools = load(&desk, &session);
    let out = call(&session, "sleeper", json!({})).await;
    assert!(out.is_error);
    let text = out.text_content();
    assert!(
        text.contains("External tool `sleeper` did not answer `execute` within 0.5 s (`timeouts.execute` in "),
        "{text}"
    );
    assert!(text.contains("it was stopped"), "{text}");
    wait_until_async("the hanging process is gone", || async { !tools.is_running("sleeper").await }).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn garbage_on_stdout_and_an_early_exit_are_clear_errors() {
    let desk = Desk::new();
    raw_tool(
        &desk,
        "chatty",
        "for line in sys.stdin:\n    print('Hello! I am a tool, not JSON.', flush=True)\n",
        json!({}),
    );
    raw_tool(&desk, "quitter", "sys.exit(0)\n", json!({}));
    desk.install(
        "missing",
        json!({"name": "missing", "label": "M", "description": "d", "parameters": {"type": "object"}, "command": "./no-such-program"}),
        &[],
    );
    let session = desk.session();
    load(&desk, &session);
    let text = call(&session, "chatty", json!({})).await.text_content();
    assert!(text.contains("External tool `chatty`"), "{text}");
    assert!(text.contains("not JSON-RPC 2.0 to stdout: `Hello! I am a tool, not JSON.`"), "{text}");
    let text = call(&session, "quitter", json!({})).await.text_content();
    assert!(
        text.contains("External tool `quitter` stopped before answering `execute`: it exited (exit status: 0)"),
        "{text}"
    );
    let text = call(&session, "missing", json!({})).await.text_content();
    assert!(text.contains("External tool `missing` could not start: cannot start `./no-such-program`"), "{text}");
    assert!(text.contains("Check `command` and `args`"), "{text}");
}

const PUSHER: &str = "import os\n\ndef factory(pi):\n    def execute(call_id, params):\n        if params.get('die'):\n            os._exit(1)\n        def apply(reason):\n            if params.get('crash_on_apply'):\n                os._exit(2)\n            return 'applied ' + params.get('tag', '') + ': ' + reason\n        def reject(reason):\n            return 'rejected by the tool: ' + reason\n        pi.push_pending_action({'label': 'Pushed ' + params.get('tag', ''), 'apply': apply, 'reject': reject})\n        return 'pushed'\n    return {'name': 'pusher', 'label': 'Pusher', 'description': 'd', 'parameters': {'type': 'object'}, 'execute': execute}\n";

fn install_pusher(desk: &Desk) {
    desk.install(
        "pusher",
        json!({"name": "pusher", "label": "Pusher", "description": "d", "parameters": {"type": "object"}, "command": "python3", "args": [python_run(), "tool.py"]}),
        &[("tool.py", PUSHER)],
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn actions_of_a_process_that_died_are_orphaned_discardable_not_appliable() {
    let desk = Desk::new();
    install_pusher(&desk);
    let session = desk.session();
    load(&desk, &session);
    assert_eq!(call(&session, "pusher", json!({"tag": "first"})).await.text_content(), "pushed");
    let first = session.store().peek().unwrap().id;
    let died = call(&session, "pusher", json!({"die": true})).await;
    assert!(died.is_error && died.text_content().contains("External tool `pusher` stopped"), "{}", died.text_content());
    wait_until("the first action is orphaned", || {
        matches!(session.store().info(&first).map(|a| a.status), Some(ActionStatus::Orphaned { .. }))
    })
    .await;
    let Some(ActionStatus::Orphaned { message }) = session.store().info(&first).map(|a| a.status) else {
        unreachable!()
    };
    assert!(
        message.starts_with("Orphaned: can only be discarded. The process of tool `pusher` that made it stopped"),
        "{message}"
    );

    // The next call restarts the tool; its new action works as usual.
    assert_eq!(call(&session, "pusher", json!({"tag": "second"})).await.text_content(), "pushed");
    assert_eq!(resolve(&session, "apply", "ok").await.text_content(), "applied second: ok");

    let refused = resolve(&session, "apply", "try").await;
    assert!(refused.is_error, "an orphaned action is not applied");
    assert!(refused.text_content().contains("Cannot apply \"Pushed first\""), "{}", refused.text_content());
    assert!(matches!(session.store().info(&first).unwrap().status, ActionStatus::Orphaned { .. }), "status kept");
    let discarded = resolve(&session, "discard", "gone").await;
    assert_eq!(discarded.text_content(), "Discarded: Pushed first. Reason: gone", "default text: reject cannot run");
    assert!(session.store().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crash_during_apply_turns_the_action_failed_and_it_stays_discardable() {
    let desk = Desk::new();
    install_pusher(&desk);
    let session = desk.session();
    load(&desk, &session);
    call(&session, "pusher", json!({"tag": "x", "crash_on_apply": true})).await;
    let id = session.store().peek().unwrap().id;
    let out = resolve(&session, "apply", "go").await;
    assert!(out.is_error);
    assert_eq!(out.error_code.as_deref(), Some("apply_failed"));
    assert!(
        out.text_content().contains("External tool `pusher` stopped before answering `apply`"),
        "{}",
        out.text_content()
    );
    assert!(matches!(session.store().info(&id).unwrap().status, ActionStatus::Failed { .. }));
    let again = resolve(&session, "apply", "again").await;
    assert!(again.is_error, "a second apply does not reach a new process that never saw the action");
    assert_eq!(resolve(&session, "discard", "broken").await.text_content(), "Discarded: Pushed x. Reason: broken");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_tool_is_stopped_unless_an_action_of_its_own_waits() {
    let desk = Desk::new();
    install_pusher(&desk);
    let session = desk.session();
    let tools = load(&desk, &session);
    call(&session, "pusher", json!({"tag": "a"})).await;
    assert!(tools.is_running("pusher").await);
    assert!(!tools.stop_if_idle("pusher").await, "its pending action needs the process");
    assert_eq!(resolve(&session, "discard", "no").await.text_content(), "rejected by the tool: no");
    assert!(tools.stop_if_idle("pusher").await);
    assert!(!tools.is_running("pusher").await);
    // Started again on first use.
    assert_eq!(call(&session, "pusher", json!({"tag": "b"})).await.text_content(), "pushed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_idle_time_out_of_the_manifest_stops_the_process() {
    let desk = Desk::new();
    raw_tool(
        &desk,
        "quick",
        "for line in sys.stdin:\n    msg = json.loads(line)\n    reply(msg, 'ok')\n",
        json!({"timeouts": {"idle": 0.2}}),
    );
    let session = desk.session();
    let tools = load(&desk, &session);
    assert_eq!(call(&session, "quick", json!({})).await.text_content(), "ok");
    wait_until_async("the idle process is stopped", || async { !tools.is_running("quick").await }).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lifo_across_a_built_in_and_an_external_tool() {
    let desk = Desk::new();
    std::fs::create_dir_all(desk.root().join("photos")).unwrap();
    std::fs::write(desk.root().join("photos/IMG_1.jpg"), "jpg").unwrap();
    install_pusher(&desk);
    let session = desk.session();
    session.load(resolve_tool_batch_rename::factory()).unwrap();
    load(&desk, &session);
    let built_in = call(
        &session,
        "batch_rename_preview",
        json!({"files": "photos/*.jpg", "find": "^IMG_", "replace": "holiday-"}),
    )
    .await;
    assert!(!built_in.is_error, "{}", built_in.text_content());
    call(&session, "pusher", json!({"tag": "ext"})).await;
    assert_eq!(session.store().len(), 2);
    assert_eq!(
        resolve(&session, "apply", "first").await.text_content(),
        "applied ext: first",
        "the last pushed is resolved first"
    );
    let second = resolve(&session, "apply", "then").await;
    assert!(!second.is_error, "{}", second.text_content());
    assert!(desk.root().join("photos/holiday-1.jpg").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_name_conflict_and_a_bad_manifest_are_reported_not_loaded() {
    let desk = Desk::new();
    let clash = desk.install(
        "rename",
        json!({"name": "batch_rename_preview", "label": "B", "description": "d", "parameters": {"type": "object"}, "command": "node", "args": [node_run(), example("node/note-example/tool.mjs")]}),
        &[],
    );
    let resolve_clash = desk.install(
        "resolve",
        json!({"name": "resolve", "label": "R", "description": "d", "parameters": {"type": "object"}, "command": "node"}),
        &[],
    );
    let bad = desk.install("bad", json!({"name": "bad", "label": "B", "description": "d", "parameters": {"type": "object"}, "command": "node", "timeouts": {"execute": "soon"}}), &[]);
    install_pusher(&desk);
    let session = desk.session();
    session.load(resolve_tool_batch_rename::factory()).unwrap();
    let tools = load(&desk, &session);
    let problems = tools.problems();
    assert_eq!(tools.names(), vec!["pusher"], "the good tool still loads");
    let find =
        |file: &std::path::Path| problems.iter().find(|p| p.file == file.join("tool.json")).map(|p| p.message.clone());
    assert_eq!(find(&clash).as_deref(), Some("Tool name \"batch_rename_preview\" conflicts with existing tool"));
    assert_eq!(find(&resolve_clash).as_deref(), Some("Tool name \"resolve\" conflicts with existing tool"));
    let bad_msg = find(&bad).unwrap();
    assert!(bad_msg.contains("field `timeouts.execute` must be a number of seconds"), "{bad_msg}");
    // The built-in is untouched.
    assert_eq!(session.tools().iter().filter(|t| t.name == "batch_rename_preview").count(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn adding_editing_and_removing_a_tool_updates_the_registry_live() {
    let desk = Desk::new();
    let session: Arc<Session> = desk.session();
    let tools = load(&desk, &session);
    let mut tools_changed = session.subscribe_tools();
    let _watch = tools.watch(Arc::downgrade(&session)).unwrap();
    assert!(!desk.root().join(".resolve").exists(), "watching creates nothing in the workspace");
    let label = |s: &Session| s.tools().into_iter().find(|t| t.name == "quick").map(|t| t.label);

    raw_tool(
        &desk,
        "quick",
        "for line in sys.stdin:\n    msg = json.loads(line)\n    reply(msg, 'v1')\n",
        json!({"label": "Quick v1"}),
    );
    wait_until("the new tool is registered", || label(&session).as_deref() == Some("Quick v1")).await;
    assert!(tools_changed.has_changed().unwrap(), "whatever offers tools (MCP list_changed) is told");
    tools_changed.borrow_and_update();
    assert_eq!(call(&session, "quick", json!({})).await.text_content(), "v1");

    raw_tool(
        &desk,
        "quick",
        "for line in sys.stdin:\n    msg = json.loads(line)\n    reply(msg, 'v2')\n",
        json!({"label": "Quick v2"}),
    );
    wait_until("the edited manifest is reloaded", || label(&session).as_deref() == Some("Quick v2")).await;
    assert_eq!(call(&session, "quick", json!({})).await.text_content(), "v2", "the new code runs");

    std::fs::write(desk.tools_dir().join("quick/tool.json"), "{ not json").unwrap();
    wait_until("the broken tool is unloaded and reported", || {
        label(&session).is_none() && tools.problems().iter().any(|p| p.message.contains("is not valid JSON"))
    })
    .await;

    raw_tool(
        &desk,
        "quick",
        "for line in sys.stdin:\n    msg = json.loads(line)\n    reply(msg, 'v3')\n",
        json!({"label": "Quick v3"}),
    );
    wait_until("the fixed tool is back", || label(&session).as_deref() == Some("Quick v3")).await;
    std::fs::remove_dir_all(desk.tools_dir().join("quick")).unwrap();
    wait_until("the removed tool is unloaded", || label(&session).is_none() && tools.problems().is_empty()).await;
    assert!(tools.names().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn progress_notifications_reach_the_call_s_progress_sink() {
    let desk = Desk::new();
    raw_tool(
        &desk,
        "steps",
        "for line in sys.stdin:\n    msg = json.loads(line)\n    for i in (1, 2):\n        print(json.dumps({'jsonrpc': '2.0', 'method': 'progress', 'params': {'done': i, 'total': 2, 'message': 'step %d' % i}}), flush=True)\n    reply(msg, 'done')\n",
        json!({}),
    );
    let session = desk.session();
    load(&desk, &session);
    let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
    let sink_seen = seen.clone();
    let sink: resolve_engine::tool::ProgressSink = Arc::new(move |call: &str, p: resolve_engine::Progress| {
        sink_seen.lock().unwrap().push((call.to_string(), p.done, p.total, p.message));
    });
    let ctx = resolve_engine::ToolContext::new("call-p").with_progress(sink);
    let out = session.call_with(resolve_engine::Actor::Agent, ctx, "steps", json!({})).await;
    assert_eq!(out.text_content(), "done");
    assert_eq!(
        *seen.lock().unwrap(),
        vec![
            ("call-p".to_string(), 1, Some(2), Some("step 1".to_string())),
            ("call-p".to_string(), 2, Some(2), Some("step 2".to_string())),
        ]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_action_pending_when_its_tool_is_replaced_still_applies_in_the_process_that_made_it() {
    let desk = Desk::new();
    install_pusher(&desk);
    let session = desk.session();
    let tools = load(&desk, &session);
    call(&session, "pusher", json!({"tag": "old"})).await;
    let tool_py = desk.tools_dir().join("pusher/tool.py");
    std::fs::write(&tool_py, PUSHER.replace("'applied '", "'applied by v2 '")).unwrap();
    let report = tools.reload(&session);
    assert_eq!(report.replaced, vec!["pusher"]);
    call(&session, "pusher", json!({"tag": "new"})).await;
    assert_eq!(
        resolve(&session, "apply", "a").await.text_content(),
        "applied by v2 new: a",
        "new calls run the new code"
    );
    assert_eq!(
        resolve(&session, "apply", "b").await.text_content(),
        "applied old: b",
        "the old action's process was kept"
    );
}
