//! Runs the real `rdesk` binary against real temp dirs.

use std::io::Write;
use std::process::{Command, Output, Stdio};

use serde_json::Value;

fn rdesk(args: &[&str], stdin: Option<&str>) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_rdesk"))
        .args(args)
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

fn lines(out: &Output) -> Vec<Value> {
    String::from_utf8_lossy(&out.stdout).lines().map(|l| serde_json::from_str(l).expect("each line is JSON")).collect()
}

#[test]
fn run_reads_stdin_and_prints_one_json_line_per_step() {
    let ws = tempfile::tempdir().unwrap();
    let script = "# comment\n\n{\"tool\":\"resolve\",\"params\":{\"action\":\"apply\",\"reason\":\"ok\"}}\n{\"tool\":\"nope\",\"params\":{}}\n";
    let out = rdesk(&["run", "-", "--workspace", ws.path().to_str().unwrap()], Some(script));
    assert!(out.status.success(), "exit 0 even with in-band errors: {out:?}");
    let steps = lines(&out);
    assert_eq!(steps.len(), 2);
    let keys: Vec<&str> = steps[0].as_object().unwrap().keys().map(|k| k.as_str()).collect();
    assert_eq!(keys.len(), 6);
    let raw = String::from_utf8_lossy(&out.stdout);
    assert!(
        raw.starts_with(r#"{"step":1,"tool":"resolve","is_error":true,"text":"No pending action to resolve. Nothing to apply or discard.","details":null,"pending":[]}"#),
        "exact format and field order: {raw}"
    );
    assert_eq!(steps[1]["is_error"], true);
    assert!(steps[1]["text"].as_str().unwrap().starts_with("Unknown tool `nope`. Known tools: resolve"));
}

#[test]
fn run_reads_a_script_file() {
    let ws = tempfile::tempdir().unwrap();
    let script = ws.path().join("s.jsonl");
    std::fs::write(&script, "{\"tool\":\"resolve\",\"params\":{\"action\":\"discard\",\"reason\":\"x\"}}\n").unwrap();
    let out = rdesk(&["run", script.to_str().unwrap(), "-w", ws.path().to_str().unwrap()], None);
    assert!(out.status.success());
    assert_eq!(lines(&out).len(), 1);
}

#[test]
fn malformed_line_stops_with_exit_2_naming_the_line() {
    let ws = tempfile::tempdir().unwrap();
    let script = "{\"tool\":\"resolve\",\"params\":{\"action\":\"apply\",\"reason\":\"ok\"}}\n\n{broken\n{\"tool\":\"resolve\",\"params\":{}}\n";
    let out = rdesk(&["run", "-", "--workspace", ws.path().to_str().unwrap()], Some(script));
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(lines(&out).len(), 1, "the steps before the bad line ran and were printed");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("line 3: not valid JSON"), "stderr names the line: {err}");
}

#[test]
fn missing_workspace_is_exit_2_with_a_clear_message() {
    let out = rdesk(&["run", "-", "--workspace", "/nonexistent/rdesk-ws"], Some(""));
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("/nonexistent/rdesk-ws"), "{err}");
}

#[test]
fn help_documents_the_format() {
    let out = rdesk(&["run", "--help"], None);
    assert!(out.status.success());
    let help = String::from_utf8_lossy(&out.stdout);
    for needle in ["\"pending\"", "Exit status", "`-`", "top first"] {
        assert!(help.contains(needle), "help mentions {needle}");
    }
}

#[test]
fn run_drives_ast_edit_and_batch_rename_then_resolves_lifo() {
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("a.ts"), "console.log(1);\n").unwrap();
    std::fs::write(ws.path().join("IMG_1.JPG"), "x").unwrap();
    let script = [
        r#"{"tool":"ast_edit","params":{"ops":[{"pat":"console.log($A)","out":"logger.debug($A)"}],"lang":"ts"}}"#,
        r#"{"tool":"batch_rename_preview","params":{"files":["*.JPG"],"find":"^IMG_(\\d)\\.JPG$","replace":"photo-$1.jpg"}}"#,
        r#"{"tool":"resolve","params":{"action":"discard","reason":"keep the names"}}"#,
        r#"{"tool":"resolve","params":{"action":"apply","reason":"ok"}}"#,
    ]
    .join("\n");
    let out = rdesk(&["run", "-", "--workspace", ws.path().to_str().unwrap()], Some(&script));
    assert!(out.status.success(), "{out:?}");
    let steps = lines(&out);
    assert_eq!(steps[0]["pending"][0]["label"], "AST Edit: 1 replacement in 1 file");
    assert_eq!(steps[0]["pending"][0]["id"], "pa-1", "ids are deterministic in scripts");
    assert_eq!(steps[1]["pending"][0]["label"], "Batch rename: 1 file", "the rename is on top");
    assert_eq!(steps[1]["pending"][0]["source_tool_name"], "batch_rename_preview");
    assert_eq!(steps[2]["text"], "Discarded batch rename of 1 file. Reason: keep the names");
    assert_eq!(steps[3]["text"], "Applied 1 replacement in 1 file.");
    assert_eq!(steps[3]["pending"], serde_json::json!([]));
    assert_eq!(std::fs::read_to_string(ws.path().join("a.ts")).unwrap(), "logger.debug(1);\n");
    assert!(ws.path().join("IMG_1.JPG").exists(), "the discarded rename did nothing");
}

#[test]
fn ast_edit_previews_without_writing_and_applies_atomically() {
    let ws = tempfile::tempdir().unwrap();
    let file = ws.path().join("a.ts");
    std::fs::write(&file, "foo(foo(x));\r\n").unwrap();
    let dir = ws.path().to_str().unwrap();
    let out = rdesk(&["ast-edit", "--pat", "foo($A)", "--out", "bar($A)", "-w", dir, dir], None);
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("+bar(foo(x));"), "{text}");
    assert!(text.contains("1 replacement in 1 file"), "{text}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "foo(foo(x));\r\n", "a preview writes nothing");

    let out = rdesk(&["ast-edit", "--pat", "foo($A)", "--out", "bar($A)", "--json", "-w", dir, dir], None);
    let json: Value = serde_json::from_slice(&out.stdout).expect("--json prints one object");
    assert_eq!(json["summary"]["replacements"], 1);
    assert_eq!(json["summary"]["nested_skipped"], 1);

    let out = rdesk(&["ast-edit", "--pat", "foo($A)", "--out", "bar($A)", "--apply", "-w", dir, dir], None);
    assert!(out.status.success(), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("Applied 1 replacement in 1 file."));
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "bar(foo(x));\r\n", "CRLF kept, outermost match rewritten");
}

#[test]
fn ast_edit_bad_input_is_exit_2_with_the_spec_message() {
    let ws = tempfile::tempdir().unwrap();
    let dir = ws.path().to_str().unwrap();
    let out = rdesk(&["ast-edit", "--pat", "x", "--out", "y", "--lang", "cobol", "-w", dir, dir], None);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("cobol") && err.contains("typescript"), "names the value and the supported ones: {err}");
    let out = rdesk(&["ast-edit", "--pat", "x", "--out", "y", "-w", dir, "../elsewhere"], None);
    assert_eq!(out.status.code(), Some(2));
}

#[path = "cli/agent.rs"]
mod agent;

#[path = "cli/hostile_record.rs"]
mod hostile_record;

#[path = "cli/hook.rs"]
mod hook;

#[path = "cli/agents.rs"]
mod agents;

#[path = "cli/userfiles.rs"]
mod userfiles;

#[test]
fn run_passes_the_reason_byte_for_byte_and_refuses_unknown_keys_by_name() {
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("a.ts"), "foo(1);\n").unwrap();
    let reason = "  not this one \n\tsee the review\n";
    let script = [
        serde_json::json!({"tool": "ast_edit", "params": {"ops": [{"pat": "foo($A)", "out": "bar($A)"}], "paths": "a.ts"}}),
        serde_json::json!({"tool": "ast_edit", "params": {}}),
        serde_json::json!({"tool": "ast_edit", "params": {"ops": [{"pat": "foo($A)", "out": "bar($A)"}]}}),
        serde_json::json!({"tool": "resolve", "params": {"action": "discard", "reason": reason}}),
    ]
    .iter()
    .map(|l| format!("{l}\n"))
    .collect::<String>();
    let out = rdesk(&["run", "-", "--workspace", ws.path().to_str().unwrap()], Some(&script));
    assert!(out.status.success(), "{out:?}");
    let steps = lines(&out);
    assert_eq!(
        steps[0]["text"],
        "Unknown parameter `paths` for `ast_edit`: known parameters are `ops`, `lang`, `path`, `glob`, `sel`, `limit`. Did you mean `path`?"
    );
    assert_eq!(steps[1]["text"], "`ops` must include at least one op entry");
    assert_eq!(steps[3]["text"], format!("Discarded: AST Edit: 1 replacement in 1 file. Reason: {reason}"));
    assert_eq!(steps[3]["details"]["reason"], reason);
    assert_eq!(std::fs::read_to_string(ws.path().join("a.ts")).unwrap(), "foo(1);\n");
}
