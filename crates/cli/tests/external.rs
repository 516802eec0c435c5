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
    assert!(
        text.contains(
            "greet — Greet (external, this folder's: NOT TRUSTED, will not run)\n    Greets someone after review"
        ),
        "{text}"
    );
    assert!(text.contains(&format!("    runs: python3 {} tool.py", python_sdk())), "the command it would run: {text}");
    assert!(text.contains("rdesk trust"), "says how to trust it: {text}");
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

/// A tool of the folder's own that leaves `marker` (outside the workspace) when its process runs.
fn install_probe(ws: &Path, marker: &Path) {
    let tool = format!(
        "import json, sys\nopen({:?}, 'w').write('ran')\nfor line in sys.stdin:\n    m = json.loads(line)\n    if 'id' in m:\n        print(json.dumps({{'jsonrpc': '2.0', 'id': m['id'], 'result': {{'content': [{{'type': 'text', 'text': 'probed'}}]}}}}), flush=True)\n",
        marker.display().to_string()
    );
    install(
        &ws.join(".resolve/tools/probe"),
        json!({"name": "probe", "label": "Probe", "description": "d", "parameters": {"type": "object"},
            "command": "python3", "args": ["tool.py"]}),
        &[("tool.py", &tool)],
    );
}

#[test]
fn a_folders_own_tool_runs_nothing_until_rdesk_trust_and_asks_again_when_it_changes() {
    let ws = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let marker = outside.path().join("ran");
    install_probe(ws.path(), &marker);
    let dir = ws.path().to_str().unwrap();
    let call = "{\"tool\":\"probe\",\"params\":{}}\n";

    let out = rdesk(&["run", "-", "--workspace", dir], Some(call), home.path());
    assert!(out.status.success(), "{out:?}");
    let step: Value = serde_json::from_str(String::from_utf8_lossy(&out.stdout).lines().next().unwrap()).unwrap();
    assert_eq!(step["is_error"], true, "{step}");
    let text = step["text"].as_str().unwrap();
    let root = ws.path().canonicalize().unwrap().display().to_string();
    assert!(text.contains(&root) && text.contains("rdesk trust") && text.contains("nothing was run"), "{text}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("this folder's own tools are not trusted") && stderr.contains("probe (`python3 tool.py`)"),
        "{stderr}"
    );
    assert!(!marker.exists(), "nothing of the folder's ran");

    // Without a terminal to ask on, trusting needs --yes; nothing is trusted meanwhile.
    let out = rdesk(&["trust", dir], None, home.path());
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("pass --yes"), "{out:?}");
    let out = rdesk(&["trust", dir, "--yes"], None, home.path());
    assert!(out.status.success(), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("probe: python3 tool.py"), "shows what it trusts: {out:?}");
    let list = rdesk(&["trust", "--list"], None, home.path());
    assert!(String::from_utf8_lossy(&list.stdout).contains(&format!("{root}  (since ")), "{list:?}");

    let out = rdesk(&["run", "-", "--workspace", dir], Some(call), home.path());
    let step: Value = serde_json::from_str(String::from_utf8_lossy(&out.stdout).lines().next().unwrap()).unwrap();
    assert_eq!((&step["is_error"], &step["text"]), (&json!(false), &json!("probed")), "{step}");
    assert_eq!(std::fs::read_to_string(&marker).unwrap(), "ran");
    std::fs::remove_file(&marker).unwrap();

    // A change asks again.
    std::fs::write(ws.path().join(".resolve/tools/probe/helper.py"), "x = 1\n").unwrap();
    let out = rdesk(&["run", "-", "--workspace", dir], Some(call), home.path());
    let step: Value = serde_json::from_str(String::from_utf8_lossy(&out.stdout).lines().next().unwrap()).unwrap();
    assert!(step["text"].as_str().unwrap().contains("changed since you trusted them"), "{step}");
    assert!(!marker.exists());

    // Revoked: untrusted again.
    let out = rdesk(&["trust", "--revoke", dir], None, home.path());
    assert!(out.status.success() && String::from_utf8_lossy(&out.stdout).contains("No longer trusted"), "{out:?}");
    let list = rdesk(&["trust", "--list"], None, home.path());
    assert!(String::from_utf8_lossy(&list.stdout).contains("No folder is trusted"), "{list:?}");
}

#[test]
fn tools_without_a_workspace_never_opens_the_shared_temporary_folder() {
    // Someone else's record and tools in the system's temporary folder.
    let shared = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let marker = outside.path().join("ran");
    install_probe(shared.path(), &marker);
    let record = shared.path().join(".rdesk-apply.log");
    std::fs::write(&record, "{\"version\":1}\n{\"phase\":\"committed\"}\n").unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_rdesk"))
        .arg("tools")
        .env("TMPDIR", shared.path())
        .env("XDG_CONFIG_HOME", home.path().join("config"))
        .env("XDG_STATE_HOME", home.path().join("state"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let status = child.wait().unwrap();
    let mut stdout = String::new();
    std::io::Read::read_to_string(child.stdout.as_mut().unwrap(), &mut stdout).unwrap();
    assert!(status.success(), "{stdout}");
    assert!(stdout.contains("ast_edit") && !stdout.contains("probe"), "only built-in and the user's tools: {stdout}");
    assert!(record.exists(), "the planted record was not read, let alone acted on");
    assert!(!marker.exists());
    // Only its own private folder was made there, and it is gone.
    let left: Vec<_> = std::fs::read_dir(shared.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(left.len(), 2, "{left:?}");
}
