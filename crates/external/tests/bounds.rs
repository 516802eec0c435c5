//! What a tool process can make the desk hold is bounded, and its log is private: a stdout
//! line past the limit stops the tool (naming the limit and its setting), the stderr log is
//! rotated at its size and still read by `read_log`, logs are 0600 in a 0700 folder, and a
//! push past the pending-action limit fails the tool's call. Real python3 processes.

mod common;

use common::*;
use resolve_engine::PendingLimits;
use resolve_external::{ExternalTools, ToolLimits};
use serde_json::json;

const REPLY: &str = "import json, sys, os\ndef reply(msg, text):\n    print(json.dumps({'jsonrpc': '2.0', 'id': msg['id'], 'result': {'content': [{'type': 'text', 'text': text}]}}), flush=True)\n";

fn raw_tool(desk: &Desk, name: &str, body: &str) {
    let script = format!("{REPLY}{body}");
    desk.install(name, python_manifest(name, "tool.py", json!({})), &[("tool.py", &script)]);
}

fn load_with(desk: &Desk, session: &resolve_engine::Session, limits: ToolLimits) -> ExternalTools {
    let mut config = desk.config();
    config.limits = limits;
    ExternalTools::load(session, config)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stdout_line_past_the_limit_stops_the_tool_naming_the_limit_and_its_setting() {
    let desk = Desk::new();
    raw_tool(
        &desk,
        "flood",
        "for line in sys.stdin:\n    msg = json.loads(line)\n    if msg['params']['params'].get('big'):\n        sys.stdout.write('x' * (300 * 1024))\n        sys.stdout.flush()\n        sys.stdin.readline()\n    reply(msg, 'small answer')\n",
    );
    let session = desk.session();
    let tools = load_with(&desk, &session, ToolLimits { max_line_bytes: 64 * 1024, ..ToolLimits::default() });
    let out = call(&session, "flood", json!({"big": true})).await;
    assert!(out.is_error, "{}", out.text_content());
    let text = out.text_content();
    assert!(text.contains("External tool `flood` stopped before answering `execute`"), "{text}");
    assert!(text.contains("it wrote a line of more than 64 KiB to stdout"), "names the limit: {text}");
    assert!(text.contains("RESOLVE_DESK_TOOL_LINE_MIB"), "names the setting: {text}");
    assert!(text.contains("it was stopped"), "{text}");
    wait_until_async("the flooding process is gone", || async { !tools.is_running("flood").await }).await;
    let again = call(&session, "flood", json!({})).await;
    assert_eq!(again.text_content(), "small answer", "the next call starts it again");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_stderr_log_is_rotated_at_its_size_and_read_log_still_reads_its_end() {
    let desk = Desk::new();
    raw_tool(
        &desk,
        "noisy",
        "for line in sys.stdin:\n    msg = json.loads(line)\n    for i in range(40):\n        print('noise %02d ' % i + '.' * 200, file=sys.stderr, flush=True)\n    print('last words', file=sys.stderr, flush=True)\n    reply(msg, 'done')\n",
    );
    let session = desk.session();
    let tools = load_with(&desk, &session, ToolLimits { log_bytes: 4096, ..ToolLimits::default() });
    for _ in 0..2 {
        assert_eq!(call(&session, "noisy", json!({})).await.text_content(), "done");
    }
    wait_until("the last stderr line is in the log", || {
        tools.read_log("noisy").unwrap().trim_end().ends_with("last words")
    })
    .await;
    let log = tools.log_path("noisy");
    let older = log.with_extension("log.1");
    let (now, old) = (std::fs::metadata(&log).unwrap().len(), std::fs::metadata(&older).unwrap().len());
    assert!(now <= 4096 && old <= 4096, "each file stays within the size: {now} / {old}");
    assert!(!log.with_extension("log.2").exists(), "one older file only");
    let tail = tools.read_log("noisy").unwrap();
    assert!(tail.len() as u64 > now, "read_log reaches into {}", older.display());
    assert!(tail.contains("noise 39"), "{tail}");
    let files: Vec<String> = std::fs::read_dir(desk.logs.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(files.len(), 2, "the log and one rotated file: {files:?}");
}

#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tool_logs_are_private_and_an_existing_open_log_is_tightened() {
    use std::os::unix::fs::PermissionsExt;
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    let desk = Desk::new();
    raw_tool(&desk, "quiet", "for line in sys.stdin:\n    msg = json.loads(line)\n    reply(msg, 'ok')\n");
    let session = desk.session();
    let mut config = desk.config();
    config.log_dir = desk.logs.path().join("tool-logs");
    std::fs::create_dir(&config.log_dir).unwrap();
    std::fs::set_permissions(&config.log_dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    let log = config.log_dir.join("quiet.log");
    std::fs::write(&log, "an older run\n").unwrap();
    std::fs::set_permissions(&log, std::fs::Permissions::from_mode(0o644)).unwrap();
    let fresh_dir = desk.logs.path().join("fresh/tool-logs");
    let tools = ExternalTools::load(&session, config.clone());
    assert_eq!(call(&session, "quiet", json!({})).await.text_content(), "ok");
    assert_eq!(mode(&log), 0o600, "an existing log is tightened");
    assert_eq!(mode(&config.log_dir), 0o700, "its folder too");
    assert!(tools.read_log("quiet").unwrap().starts_with("an older run\n"), "and nothing of it is lost");

    let session = desk.session();
    let tools = ExternalTools::load(&session, resolve_external::Config { log_dir: fresh_dir.clone(), ..config });
    assert_eq!(call(&session, "quiet", json!({})).await.text_content(), "ok");
    assert_eq!(mode(&fresh_dir.join("quiet.log")), 0o600, "a new log is created private");
    assert_eq!(mode(&fresh_dir), 0o700, "and its new folder");
    drop(tools);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_push_past_the_pending_limit_fails_the_tools_call_and_the_stack_is_unchanged() {
    let desk = Desk::new();
    desk.install(
        "pusher",
        json!({"name": "pusher", "label": "Pusher", "description": "d", "parameters": {"type": "object"}, "command": "python3", "args": [python_run(), "tool.py"]}),
        &[(
            "tool.py",
            "def factory(pi):\n    def execute(call_id, params):\n        pi.push_pending_action({'label': 'Pushed ' + params.get('tag', ''), 'apply': lambda reason: 'applied'})\n        return 'pushed'\n    return {'name': 'pusher', 'label': 'Pusher', 'description': 'd', 'parameters': {'type': 'object'}, 'execute': execute}\n",
        )],
    );
    let session = desk.session();
    session.store().set_limits(PendingLimits { max_actions: 1, ..PendingLimits::default() });
    load(&desk, &session);
    assert_eq!(call(&session, "pusher", json!({"tag": "one"})).await.text_content(), "pushed");
    let before = session.store().list();
    let refused = call(&session, "pusher", json!({"tag": "two"})).await;
    assert!(refused.is_error, "the tool's call gets the error");
    let text = refused.text_content();
    assert!(text.contains("RESOLVE_DESK_MAX_PENDING=1"), "{text}");
    assert!(text.contains("Apply or discard some pending actions, or raise RESOLVE_DESK_MAX_PENDING"), "{text}");
    assert_eq!(session.store().list(), before, "nothing added, nothing dropped");
}
