//! `rdesk hook claude-code` and `rdesk setup claude-code` as Claude Code runs them: the real
//! binary, its hook JSON on stdin, the answer on stdout; the desk is `rdesk serve-socket` (the
//! window's socket, its stdin the person's buttons) or, under the `agent` policy, a desk of the
//! hook's own with the journal.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use serde_json::{json, Value};

const RDESK: &str = env!("CARGO_BIN_EXE_rdesk");

pub(crate) struct Env {
    _dir: tempfile::TempDir,
    pub(crate) ws: PathBuf,
    pub(crate) runtime: PathBuf,
    pub(crate) data: PathBuf,
}

pub(crate) fn env() -> Env {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    std::fs::create_dir_all(ws.join("src")).unwrap();
    std::fs::write(ws.join("src/a.ts"), "const a = 1;\nconsole.log(a);\n").unwrap();
    let ws = std::fs::canonicalize(ws).unwrap();
    // Short: a socket path must fit in 108 bytes.
    let runtime = PathBuf::from(format!("/tmp/rdh-{}-{}", std::process::id(), ws.to_string_lossy().len() ^ rand_ish()));
    std::fs::create_dir_all(&runtime).unwrap();
    std::os::unix::fs::PermissionsExt::set_mode(&mut std::fs::metadata(&runtime).unwrap().permissions(), 0o700);
    std::fs::set_permissions(&runtime, std::os::unix::fs::PermissionsExt::from_mode(0o700)).unwrap();
    let data = dir.path().join("data");
    Env { _dir: dir, ws, runtime, data }
}

fn rand_ish() -> usize {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().subsec_nanos() as usize
}

fn edit_input(ws: &Path, old: &str, new: &str) -> Value {
    json!({
        "session_id": "s-1",
        "cwd": ws,
        "hook_event_name": "PreToolUse",
        "tool_name": "Edit",
        "tool_input": {"file_path": ws.join("src/a.ts"), "old_string": old, "new_string": new, "replace_all": false},
        "tool_use_id": format!("toolu_{}", rand_ish()),
    })
}

/// Runs the hook with `input` and extra `args`; returns its parsed answer.
fn hook(e: &Env, input: &str, args: &[&str]) -> Value {
    let out = hook_child(e, input, args).wait_with_output().unwrap();
    assert!(out.status.success(), "the hook answers in JSON and exits 0: {out:?}");
    serde_json::from_slice(&out.stdout).unwrap_or_else(|err| panic!("{err}: {}", String::from_utf8_lossy(&out.stdout)))
}

fn hook_child(e: &Env, input: &str, args: &[&str]) -> Child {
    agent_hook_child(e, "claude-code", input, args)
}

/// `rdesk hook AGENT ARGS` with `input` on stdin, reaching only the test's desk (no window is
/// ever started).
pub(crate) fn agent_hook_child(e: &Env, agent: &str, input: &str, args: &[&str]) -> Child {
    let mut child = Command::new(RDESK)
        .args(["hook", agent])
        .args(args)
        .env("CLAUDE_PROJECT_DIR", &e.ws)
        .env("XDG_RUNTIME_DIR", &e.runtime)
        .env("XDG_DATA_HOME", &e.data)
        .env("RESOLVE_DESK_BIN", "/bin/false")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
    child
}

fn decision(answer: &Value) -> (&str, &str) {
    let h = &answer["hookSpecificOutput"];
    (h["permissionDecision"].as_str().unwrap_or_default(), h["permissionDecisionReason"].as_str().unwrap_or_default())
}

/// `rdesk serve-socket --policy human` on the workspace: the window's socket; its stdin the person.
pub(crate) struct Desk {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

impl Desk {
    pub(crate) fn start(e: &Env) -> Desk {
        let mut child = Command::new(RDESK)
            .args(["serve-socket", "--policy", "human", "--workspace"])
            .arg(&e.ws)
            .env("XDG_RUNTIME_DIR", &e.runtime)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        let mut socket = String::new();
        stdout.read_line(&mut socket).unwrap();
        assert!(Path::new(socket.trim()).exists(), "the desk prints its socket: {socket}");
        Desk { child, stdin, stdout }
    }
    pub(crate) fn person(&mut self, call: Value) -> Value {
        writeln!(self.stdin, "{call}").unwrap();
        self.stdin.flush().unwrap();
        let mut line = String::new();
        self.stdout.read_line(&mut line).unwrap();
        serde_json::from_str(&line).unwrap()
    }
    /// Waits until the top action shows the agent waiting.
    pub(crate) fn until_waiting(&mut self) -> Value {
        self.person(json!({"wait_for_proposal": true, "waiting": true}))["proposal"].clone()
    }
}

impl Drop for Desk {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn input_that_is_not_hook_json_is_denied_saying_what_to_do() {
    let e = env();
    let answer = hook(&e, "not json", &[]);
    let (kind, reason) = decision(&answer);
    assert_eq!(kind, "deny");
    assert!(reason.contains("not Claude Code's hook JSON") && reason.contains("rdesk setup claude-code"), "{reason}");
}

#[test]
fn an_edit_outside_the_folder_is_denied_by_default_and_left_to_claude_when_set() {
    let e = env();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("x.txt"), "x\n").unwrap();
    let mut input = edit_input(&e.ws, "x", "y");
    input["tool_input"]["file_path"] = json!(outside.path().join("x.txt"));
    let answer = hook(&e, &input.to_string(), &[]);
    let (kind, reason) = decision(&answer);
    assert_eq!(kind, "deny");
    assert!(reason.contains("is outside") && reason.contains("--outside allow"), "{reason}");
    let out = hook_child(&e, &input.to_string(), &["--outside", "allow"]).wait_with_output().unwrap();
    assert!(out.status.success() && out.stdout.is_empty(), "no decision: Claude's own rules decide: {out:?}");
}

#[test]
fn with_no_desk_to_reach_the_edit_is_denied_never_let_through() {
    let e = env();
    let input = edit_input(&e.ws, "const a = 1;", "const a = 2;");
    let answer = hook(&e, &input.to_string(), &[]);
    let (kind, reason) = decision(&answer);
    assert_eq!(kind, "deny");
    assert!(reason.contains("could not review this edit") && reason.contains("/bin/false"), "{reason}");
    assert_eq!(std::fs::read_to_string(e.ws.join("src/a.ts")).unwrap(), "const a = 1;\nconsole.log(a);\n");
}

#[test]
fn under_the_agent_policy_the_edit_is_journalled_and_allowed_at_once() {
    let e = env();
    let input = edit_input(&e.ws, "const a = 1;", "const a = 2;");
    let answer = hook(&e, &input.to_string(), &["--policy", "agent"]);
    let (kind, reason) = decision(&answer);
    assert_eq!(kind, "allow", "{reason}");
    assert!(reason.starts_with("Approved: Claude Code Edit: src/a.ts."), "{reason}");
    let journal = resolve_journal::Journal::open(&e.data.join("resolve-desk/journal.sqlite3")).unwrap();
    let decisions = journal.decisions(&e.ws.display().to_string(), 10).unwrap();
    assert_eq!(decisions.len(), 1, "the History (and undo) have it: {decisions:?}");
    assert_eq!(decisions[0].label, "Claude Code Edit: src/a.ts");
    assert_eq!(decisions[0].client.as_deref(), Some("Claude Code"));
    // The desk wrote nothing: Claude's own tool writes.
    assert_eq!(std::fs::read_to_string(e.ws.join("src/a.ts")).unwrap(), "const a = 1;\nconsole.log(a);\n");
}

#[test]
fn the_persons_discard_is_a_deny_with_their_reason_and_comments() {
    let e = env();
    let mut desk = Desk::start(&e);
    let input = edit_input(&e.ws, "console.log(a);", "logger.debug(a);");
    let child = hook_child(&e, &input.to_string(), &[]);
    let proposal = desk.until_waiting();
    assert_eq!(proposal["client"], "Claude Code", "{proposal}");
    let decided = desk.person(json!({"tool": "resolve", "params": {
        "action": "discard",
        "reason": "Keep console.log",
        "review": {"request_changes": true, "comments": [{"path": "src/a.ts", "start_line": 2, "side": "new", "text": "use info, not debug"}]}
    }}));
    assert_eq!(decided["is_error"], false, "{decided}");
    let out = child.wait_with_output().unwrap();
    let answer: Value = serde_json::from_slice(&out.stdout).unwrap();
    let (kind, reason) = decision(&answer);
    assert_eq!(kind, "deny");
    assert!(reason.contains("Keep console.log"), "{reason}");
    assert!(reason.contains("src/a.ts:2: \"logger.debug(a);\" — use info, not debug"), "{reason}");
    assert_eq!(std::fs::read_to_string(e.ws.join("src/a.ts")).unwrap(), "const a = 1;\nconsole.log(a);\n");
}

#[test]
fn an_undecided_edit_stays_pending_and_the_same_edit_retried_joins_it_and_gets_the_decision() {
    let e = env();
    let mut desk = Desk::start(&e);
    let input = edit_input(&e.ws, "const a = 1;", "const a = 2;").to_string();
    let answer = hook(&e, &input, &["--wait", "1"]);
    let (kind, reason) = decision(&answer);
    assert_eq!(kind, "deny");
    assert!(reason.contains("has not decided yet") && reason.contains("nothing was written"), "{reason}");
    assert!(reason.contains("Make the same edit again"), "{reason}");
    // Retried: it joins the pending action (one card), and the person's Apply reaches it.
    let child = hook_child(&e, &input, &[]);
    desk.until_waiting();
    let decided = desk.person(json!({"tool": "resolve", "params": {"action": "apply", "reason": "ok"}}));
    assert_eq!(decided["is_error"], false, "{decided}");
    let again = desk.person(json!({"tool": "resolve", "params": {"action": "discard", "reason": "anything left?"}}));
    assert!(again["text"].as_str().unwrap_or_default().contains("No pending action"), "one action, not two: {again}");
    let answer: Value = serde_json::from_slice(&child.wait_with_output().unwrap().stdout).unwrap();
    let (kind, reason) = decision(&answer);
    assert_eq!(kind, "allow", "{reason}");
    assert!(answer["hookSpecificOutput"].get("updatedInput").is_none(), "as proposed: Claude's own input stands");
}

#[test]
fn an_edit_the_person_changed_before_applying_is_allowed_with_their_version() {
    let e = env();
    let mut desk = Desk::start(&e);
    let input = edit_input(&e.ws, "const a = 1;", "const a = 2;");
    let child = hook_child(&e, &input.to_string(), &[]);
    desk.until_waiting();
    let mine = "const a = 3;\nconsole.log(a);\n";
    let decided = desk.person(json!({"tool": "resolve", "params": {"action": "apply", "reason": "3, not 2", "edits": [{"path": "src/a.ts", "text": mine}]}}));
    assert_eq!(decided["is_error"], false, "{decided}");
    let answer: Value = serde_json::from_slice(&child.wait_with_output().unwrap().stdout).unwrap();
    let (kind, reason) = decision(&answer);
    assert_eq!(kind, "allow", "{reason}");
    assert!(reason.contains("changed the edit"), "{reason}");
    let updated = &answer["hookSpecificOutput"]["updatedInput"];
    let (old, new) = (updated["old_string"].as_str().unwrap(), updated["new_string"].as_str().unwrap());
    let before = "const a = 1;\nconsole.log(a);\n";
    assert_eq!(before.matches(old).count(), 1, "{updated}");
    assert_eq!(before.replacen(old, new, 1), mine, "Claude's Edit with the updated input writes the person's version");
    assert_eq!(updated["file_path"], input["tool_input"]["file_path"]);
}

#[test]
fn setup_claude_code_merges_is_idempotent_and_remove_undoes_it() {
    let e = env();
    std::fs::create_dir_all(e.ws.join(".claude")).unwrap();
    std::fs::write(e.ws.join(".claude/settings.json"), "{\"model\": \"opus\"}\n").unwrap();
    let run = |args: &[&str]| {
        let out =
            Command::new(RDESK).args(["setup", "claude-code", "--workspace"]).arg(&e.ws).args(args).output().unwrap();
        assert!(out.status.success(), "{out:?}");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let first = run(&[]);
    assert!(
        first.contains("added a PreToolUse hook on Edit|MultiEdit|Write|NotebookEdit") && first.contains(RDESK),
        "{first}"
    );
    assert!(first.contains(".mcp.json") && first.contains("added the MCP server `resolve-desk`"), "{first}");
    let settings: Value = serde_json::from_slice(&std::fs::read(e.ws.join(".claude/settings.json")).unwrap()).unwrap();
    assert_eq!(settings["model"], "opus", "what was there is kept");
    assert_eq!(settings["hooks"]["PreToolUse"][0]["hooks"][0]["timeout"], 1800);
    assert!(run(&[]).contains("nothing changed"));
    let removed = run(&["--remove"]);
    assert!(removed.contains("removed the PreToolUse hook"), "{removed}");
    let settings: Value = serde_json::from_slice(&std::fs::read(e.ws.join(".claude/settings.json")).unwrap()).unwrap();
    assert_eq!(settings, json!({"model": "opus"}));
    let list = Command::new(RDESK).args(["setup", "--list"]).output().unwrap();
    assert!(String::from_utf8_lossy(&list.stdout).contains("claude-code"));
    let bad = Command::new(RDESK).args(["setup", "cursor"]).output().unwrap();
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("known: claude-code"));
}
