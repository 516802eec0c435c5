//! `rdesk` sees external tools: `rdesk tools --workspace` lists them (and what could not be
//! loaded), `rdesk run` calls them. Real binary, real child processes, an isolated config
//! folder (XDG_CONFIG_HOME) and log folder (XDG_STATE_HOME).

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use serde_json::{json, Value};

fn rdesk(args: &[&str], stdin: Option<&str>, home: &Path) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_rdesk"))
        .args(args)
        .env("XDG_CONFIG_HOME", home.join("config"))
        .env("XDG_STATE_HOME", home.join("state"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("rdesk starts");
    if let Some(input) = stdin {
        child.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
    } else {
        drop(child.stdin.take());
    }
    child.wait_with_output().unwrap()
}

fn install(dir: &Path, manifest: Value, files: &[(&str, &str)]) {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join("tool.json"), manifest.to_string()).unwrap();
    for (name, text) in files {
        std::fs::write(dir.join(name), text).unwrap();
    }
}

fn python_sdk() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tools/sdk/python/run.py").display().to_string()
}

const TOOL: &str = "def factory(pi):\n    def execute(call_id, params):\n        pi.push_pending_action({'label': 'Greet ' + params['who'], 'apply': lambda reason: 'greeted ' + params['who'] + ' (' + reason + ')'})\n        return 'previewed'\n    return {'name': 'greet', 'label': 'Greet', 'description': 'd', 'parameters': {}, 'execute': execute}\n";

fn greet_manifest() -> Value {
    json!({"name": "greet", "label": "Greet", "description": "Greets someone after review",
        "parameters": {"type": "object", "properties": {"who": {"type": "string"}}, "required": ["who"]},
        "command": "python3", "args": [python_sdk(), "tool.py"]})
}

#[test]
fn tools_lists_external_tools_and_what_could_not_be_loaded() {
    let ws = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    install(&ws.path().join(".resolve/tools/greet"), greet_manifest(), &[("tool.py", TOOL)]);
    let clash = home.path().join("config/resolve-desk/tools/clash");
    install(
        &clash,
        json!({"name": "ast_edit", "label": "A", "description": "d", "parameters": {"type": "object"}, "command": "true"}),
        &[],
    );
    let out = rdesk(&["tools", "--workspace", ws.path().to_str().unwrap()], None, home.path());
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("greet — Greet (external)\n    Greets someone after review"), "{text}");
    assert!(
        text.contains(&format!(
            "Not loaded:\n  {}: Tool name \"ast_edit\" conflicts with existing tool",
            clash.join("tool.json").display()
        )),
        "{text}"
    );
}

#[test]
fn run_calls_an_external_tool_and_resolves_its_action() {
    let ws = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    install(&home.path().join("config/resolve-desk/tools/greet"), greet_manifest(), &[("tool.py", TOOL)]);
    let script = "{\"tool\":\"greet\",\"params\":{\"who\":\"Ada\"}}\n{\"tool\":\"resolve\",\"params\":{\"action\":\"apply\",\"reason\":\"polite\"}}\n";
    let out = rdesk(&["run", "-", "--workspace", ws.path().to_str().unwrap()], Some(script), home.path());
    assert!(out.status.success(), "{out:?}");
    let steps: Vec<Value> =
        String::from_utf8_lossy(&out.stdout).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(steps[0]["text"], "previewed", "{steps:?}");
    assert_eq!(steps[0]["pending"][0]["label"], "Greet Ada");
    assert_eq!(steps[0]["pending"][0]["source_tool_name"], "custom_tool");
    assert_eq!(steps[1]["text"], "greeted Ada (polite)");
    assert_eq!(steps[1]["pending"], json!([]));
}
