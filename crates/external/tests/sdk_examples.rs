//! The design note's example and the useful example tools, through the real SDKs, as child
//! processes: discovered, run, applied and discarded through `resolve`.

mod common;

use common::*;
use resolve_engine::{ActionStatus, CustomToolApi};
use serde_json::json;

fn note_example_manifest(command: &str, args: Vec<String>) -> serde_json::Value {
    json!({
        "name": "batch_rename_preview",
        "label": "Batch Rename Preview",
        "description": "Previews renames and defers commit to resolve",
        "parameters": {"type": "object", "properties": {"files": {"type": "array", "items": {"type": "string"}}}, "required": ["files"]},
        "command": command,
        "args": args,
    })
}

async fn note_example_round(desk: &Desk) {
    let session = desk.session();
    let tools = load(desk, &session);
    assert!(tools.problems().is_empty(), "{:?}", tools.problems());
    assert!(session.tools().iter().any(|t| t.name == "batch_rename_preview" && t.label == "Batch Rename Preview"));

    let out = call(&session, "batch_rename_preview", json!({"files": ["a.txt", "b.txt"]})).await;
    assert!(!out.is_error, "{}", out.text_content());
    assert_eq!(out.text_content(), "Prepared rename plan for 2 files. Call resolve to apply or discard.");
    let top = session.store().peek().expect("the example pushed an action");
    assert_eq!(top.label, "Batch rename: 2 files");
    assert_eq!(top.source_tool_name, "batch_rename_preview");
    let info = session.store().info(&top.id).unwrap();
    assert_eq!(
        info.origin,
        Some(resolve_engine::ToolCall {
            tool: "batch_rename_preview".into(),
            params: json!({"files": ["a.txt", "b.txt"]})
        }),
        "the action pushed over the protocol records the call that made it (for Run again)"
    );

    let applied = resolve(&session, "apply", "names look right").await;
    assert!(!applied.is_error, "{}", applied.text_content());
    assert_eq!(applied.text_content(), "Applied batch rename. Reason: names look right");
    assert!(session.store().is_empty());

    call(&session, "batch_rename_preview", json!({"files": ["a.txt"]})).await;
    let discarded = resolve(&session, "discard", "not now").await;
    assert_eq!(
        discarded.text_content(),
        "Discarded batch rename. Reason: not now",
        "the tool's reject text replaces the default"
    );
    assert!(session.store().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_note_example_in_javascript_is_applied_and_discarded() {
    let desk = Desk::new();
    desk.install("rename", note_example_manifest("node", vec![node_run(), example("node/note-example/tool.mjs")]), &[]);
    note_example_round(&desk).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_note_example_in_typescript_runs_through_tsx() {
    let desk = Desk::new();
    let tsx = example("node_modules/.bin/tsx");
    assert!(std::path::Path::new(&tsx).exists(), "run scripts/setup.sh (npm install in examples/tools) first: {tsx}");
    desk.install("rename", note_example_manifest(&tsx, vec![node_run(), example("node/note-example-ts/tool.ts")]), &[]);
    note_example_round(&desk).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_note_example_in_python_is_applied_and_discarded() {
    let desk = Desk::new();
    desk.install(
        "rename",
        note_example_manifest("python3", vec![python_run(), example("python/note-example/tool.py")]),
        &[],
    );
    note_example_round(&desk).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_source_name_or_reject_the_defaults_apply() {
    let desk = Desk::new();
    let script = "def factory(pi):\n    def execute(call_id, params):\n        pi.push_pending_action({'label': 'Plain', 'apply': lambda reason: 'done: ' + reason})\n        return 'queued'\n    return {'name': 'plain', 'label': 'Plain', 'description': 'd', 'parameters': pi.typebox.Type.Object({}), 'execute': execute}\n";
    desk.install(
        "plain",
        json!({"name": "plain", "label": "Plain", "description": "d", "parameters": {"type": "object"}, "command": "python3", "args": [python_run(), "tool.py"]}),
        &[("tool.py", script)],
    );
    let session = desk.session();
    load(&desk, &session);
    assert_eq!(call(&session, "plain", json!({})).await.text_content(), "queued");
    assert_eq!(session.store().peek().unwrap().source_tool_name, "custom_tool");
    assert_eq!(resolve(&session, "discard", "nope").await.text_content(), "Discarded: Plain. Reason: nope");
    call(&session, "plain", json!({})).await;
    assert_eq!(resolve(&session, "apply", "go").await.text_content(), "done: go");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_runtime_without_a_store_answers_the_exact_message_through_the_protocol() {
    let desk = Desk::new();
    // The tool reports what the host answered its push, verbatim.
    let script = "from resolve_desk_tool import PushError\n\ndef factory(pi):\n    def execute(call_id, params):\n        try:\n            pi.push_pending_action({'label': 'X', 'apply': lambda r: 'x'})\n            return 'pushed'\n        except PushError as e:\n            return str(e)\n    return {'name': 'probe', 'label': 'Probe', 'description': 'd', 'parameters': {'type': 'object'}, 'execute': execute}\n";
    desk.install(
        "probe",
        json!({"name": "probe", "label": "Probe", "description": "d", "parameters": {"type": "object"}, "command": "python3", "args": [python_run(), "tool.py"]}),
        &[("tool.py", script)],
    );
    desk.install("rename", note_example_manifest("node", vec![node_run(), example("node/note-example/tool.mjs")]), &[]);
    let api = CustomToolApi::without_store(None);
    let (tools, problems) = resolve_external::make_tools(&api, &desk.config());
    assert!(problems.is_empty(), "{problems:?}");
    let probe = tools.iter().find(|t| t.name() == "probe").unwrap();
    let out = probe.execute(resolve_engine::ToolContext::new("c1"), json!({})).await.unwrap();
    assert_eq!(out.text_content(), "Pending action store unavailable for custom tools in this runtime.");
    // The note's example does not catch it: its call fails with the message.
    let rename = tools.iter().find(|t| t.name() == "batch_rename_preview").unwrap();
    let err = rename.execute(resolve_engine::ToolContext::new("c2"), json!({"files": ["a"]})).await.unwrap_err();
    assert!(err.to_string().contains("Pending action store unavailable for custom tools in this runtime."), "{err}");
}

fn replace_text_manifest() -> serde_json::Value {
    let text = std::fs::read_to_string(example("node/replace-text/tool.json")).unwrap();
    let mut m: serde_json::Value = serde_json::from_str(&text).unwrap();
    m["args"] = json!([node_run(), example("node/replace-text/tool.mjs")]);
    m
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replace_text_hands_the_engine_a_change_set_that_applies_and_goes_stale() {
    let desk = Desk::new();
    std::fs::write(desk.root().join("a.txt"), "hello world\nhello again\n").unwrap();
    std::fs::create_dir_all(desk.root().join("src")).unwrap();
    std::fs::write(desk.root().join("src/b.txt"), "say hello\n").unwrap();
    std::fs::write(desk.root().join("c.txt"), "nothing here\n").unwrap();
    desk.install("replace", replace_text_manifest(), &[]);
    let session = desk.session();
    load(&desk, &session);

    let ctx = resolve_engine::ToolContext::new("c-1").with_client("claude-code");
    let params = json!({"find": "hello", "replace": "bye"});
    let out = session.call_with(resolve_engine::Actor::Agent, ctx, "replace_text_preview", params.clone()).await;
    assert!(!out.is_error, "{}", out.text_content());
    let info = session.store().info(&session.store().peek().unwrap().id).unwrap();
    assert_eq!(info.origin, Some(resolve_engine::ToolCall { tool: "replace_text_preview".into(), params }));
    assert_eq!(
        info.pushed_by.as_deref(),
        Some("claude-code"),
        "the change set pushed over the protocol names its client"
    );
    assert_eq!(out.text_content(), "Previewed 3 replacements in 2 files. Call resolve to apply or discard.");
    let top = session.store().top().unwrap();
    let cs = top.change_set.as_ref().expect("a change-set action");
    let files: Vec<&str> = cs.files().iter().map(|f| f.path.as_str()).collect();
    assert_eq!(files, vec!["a.txt", "src/b.txt"]);
    assert!(matches!(top.to_stored().body, resolve_engine::StoredBody::ChangeSet { .. }), "it survives a restart");
    assert_eq!(
        std::fs::read_to_string(desk.root().join("a.txt")).unwrap(),
        "hello world\nhello again\n",
        "nothing written yet"
    );
    let applied = resolve(&session, "apply", "rename greeting").await;
    assert_eq!(applied.text_content(), "Replaced 3 occurrences in 2 files.");
    assert_eq!(std::fs::read_to_string(desk.root().join("a.txt")).unwrap(), "bye world\nbye again\n");
    assert_eq!(std::fs::read_to_string(desk.root().join("src/b.txt")).unwrap(), "say bye\n");

    // Edited after the preview: the apply refuses, the action turns stale, nothing written.
    call(&session, "replace_text_preview", json!({"find": "bye", "replace": "ciao"})).await;
    std::fs::write(desk.root().join("a.txt"), "bye edited by hand\n").unwrap();
    let stale = resolve(&session, "apply", "go").await;
    assert!(stale.is_error);
    assert_eq!(stale.error_code.as_deref(), Some("stale"), "{}", stale.text_content());
    let id = session.store().peek().unwrap().id;
    assert!(matches!(session.store().info(&id).unwrap().status, ActionStatus::Stale { .. }));
    assert_eq!(std::fs::read_to_string(desk.root().join("src/b.txt")).unwrap(), "say bye\n", "all or nothing");
    assert_eq!(
        resolve(&session, "discard", "stale").await.text_content(),
        "Kept the files as they were (no text replaced). Reason: stale"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn delete_generated_in_python_deletes_only_when_applied() {
    let desk = Desk::new();
    std::fs::create_dir_all(desk.root().join("pkg/__pycache__")).unwrap();
    std::fs::write(desk.root().join("pkg/__pycache__/m.cpython-312.pyc"), [0u8, 1, 2]).unwrap();
    std::fs::write(desk.root().join("pkg/m.py"), "x = 1\n").unwrap();
    std::fs::write(desk.root().join("notes.txt~"), "backup").unwrap();
    let text = std::fs::read_to_string(example("python/delete-generated/tool.json")).unwrap();
    let mut m: serde_json::Value = serde_json::from_str(&text).unwrap();
    m["args"] = json!([python_run(), example("python/delete-generated/tool.py")]);
    desk.install("delete", m, &[]);
    let session = desk.session();
    load(&desk, &session);
    let out = call(&session, "delete_generated_preview", json!({})).await;
    assert_eq!(out.text_content(), "Previewed deleting 2 generated files (9 bytes). Call resolve to apply or discard.");
    let top = session.store().peek().unwrap();
    assert_eq!(top.details.as_ref().unwrap()["files"], json!(["notes.txt~", "pkg/__pycache__/m.cpython-312.pyc"]));
    assert!(desk.root().join("notes.txt~").exists());
    assert_eq!(resolve(&session, "apply", "clean").await.text_content(), "Deleted 2 generated files (9 bytes).");
    assert!(!desk.root().join("notes.txt~").exists());
    assert!(!desk.root().join("pkg/__pycache__/m.cpython-312.pyc").exists());
    assert!(desk.root().join("pkg/m.py").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn beside_the_built_in_the_note_example_runs_under_the_manifest_s_name() {
    // The note's example is called batch_rename_preview, the built-in reference tool's name:
    // under that name it is refused; installed under another name it runs unchanged.
    let desk = Desk::new();
    let mut m = note_example_manifest("node", vec![node_run(), example("node/note-example/tool.mjs")]);
    desk.install("clash", m.clone(), &[]);
    m["name"] = json!("note_batch_rename");
    desk.install("renamed", m, &[]);
    let session = desk.session();
    session.load(resolve_tool_batch_rename::factory()).unwrap();
    let tools = load(&desk, &session);
    assert_eq!(tools.names(), vec!["note_batch_rename"]);
    assert_eq!(tools.problems()[0].message, "Tool name \"batch_rename_preview\" conflicts with existing tool");
    let out = call(&session, "note_batch_rename", json!({"files": ["a", "b", "c"]})).await;
    assert_eq!(out.text_content(), "Prepared rename plan for 3 files. Call resolve to apply or discard.");
    assert_eq!(resolve(&session, "apply", "ok").await.text_content(), "Applied batch rename. Reason: ok");
}

/// Copies an SDK folder (following links, so a checkout's node_modules comes along) with
/// its `PROTOCOL = 1` changed to 2: an SDK of a newer protocol than this desk's.
fn sdk_of_protocol_2(lang: &str, file: &str, from: &str, to: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let status = std::process::Command::new("cp")
        .arg("-RL")
        .arg(repo().join("tools/sdk").join(lang))
        .arg(dir.path())
        .status()
        .unwrap();
    assert!(status.success(), "the SDK copies");
    let path = dir.path().join(lang).join(file);
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains(from), "{} says `{from}`", path.display());
    std::fs::write(&path, text.replace(from, to)).unwrap();
    dir
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_on_an_sdk_of_another_protocol_fails_naming_both_versions() {
    assert_eq!(resolve_external::PROTOCOL_VERSION, 1, "this test's SDK copies say 2 instead of 1");
    let node = sdk_of_protocol_2("node", "index.js", "export const PROTOCOL = 1;", "export const PROTOCOL = 2;");
    let python = sdk_of_protocol_2("python", "resolve_desk_tool/__init__.py", "PROTOCOL = 1", "PROTOCOL = 2");
    let desk = Desk::new();
    let node_run = node.path().join("node/run.js").display().to_string();
    let python_run = python.path().join("python/run.py").display().to_string();
    desk.install("js", note_example_manifest("node", vec![node_run, example("node/note-example/tool.mjs")]), &[]);
    let mut py = note_example_manifest("python3", vec![python_run, example("python/note-example/tool.py")]);
    py["name"] = json!("batch_rename_py");
    desk.install("py", py, &[]);
    let session = desk.session();
    let tools = load(&desk, &session);
    assert!(tools.problems().is_empty(), "{:?}", tools.problems());
    for (tool, sdk) in [("batch_rename_preview", "resolve-desk-tool"), ("batch_rename_py", "resolve_desk_tool")] {
        let out = call(&session, tool, json!({"files": ["a.txt"]})).await;
        assert!(out.is_error, "{tool}: a call to an SDK of another protocol fails");
        let text = out.text_content();
        assert!(
            text.contains(&format!("SDK ({sdk}) speaks tool protocol 2"))
                && text.contains("this Resolve Desk speaks protocol 1")
                && text.contains("rdesk sdk-path"),
            "{tool}: names both versions and what to do: {text}"
        );
        assert!(session.store().is_empty(), "{tool}: nothing was pushed");
    }
}
