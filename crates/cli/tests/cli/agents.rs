//! `rdesk hook` and `rdesk setup` for Codex CLI, Gemini CLI, opencode and pi, as those agents
//! run them: the real binary, each agent's hook or plugin JSON on stdin, the answer on stdout;
//! the desk is `rdesk serve-socket` (its stdin the person) or, under the `agent` policy, a desk
//! of the hook's own. The agents themselves run in tests/e2e/{codex,gemini,opencode,pi}.test.js.

use std::path::Path;
use std::process::{Child, Command};

use serde_json::{json, Value};

use super::hook::{agent_hook_child, env, Desk, Env};

const RDESK: &str = env!("CARGO_BIN_EXE_rdesk");
const A_TS: &str = "const a = 1;\nconsole.log(a);\n";

fn child(e: &Env, agent: &str, input: &Value, args: &[&str]) -> Child {
    agent_hook_child(e, agent, &input.to_string(), args)
}

fn answer(child: Child) -> Value {
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "the hook answers in JSON and exits 0: {out:?}");
    if out.stdout.is_empty() {
        return Value::Null;
    }
    serde_json::from_slice(&out.stdout).unwrap_or_else(|err| panic!("{err}: {}", String::from_utf8_lossy(&out.stdout)))
}

fn hook(e: &Env, agent: &str, input: &Value, args: &[&str]) -> Value {
    answer(child(e, agent, input, args))
}

fn gemini_replace(e: &Env, old: &str, new: &str) -> Value {
    json!({
        "session_id": "s", "cwd": e.ws, "hook_event_name": "BeforeTool", "tool_name": "replace",
        "tool_input": {"file_path": e.ws.join("src/a.ts"), "instruction": "change a", "old_string": old, "new_string": new},
    })
}

fn pi_edit(e: &Env, content: &str) -> Value {
    json!({"tool": "edit", "tool_call_id": "call_1", "cwd": e.ws, "path": e.ws.join("src/a.ts"), "content": content})
}

fn opencode_edit(e: &Env, old: &str, new: &str) -> Value {
    json!({"tool": "edit", "cwd": e.ws, "call_id": "c1", "args": {"filePath": e.ws.join("src/a.ts"), "oldString": old, "newString": new}})
}

fn codex_patch(e: &Env, patch: &str) -> Value {
    json!({"cwd": e.ws, "hook_event_name": "PreToolUse", "tool_name": "apply_patch", "tool_input": {"command": patch}, "tool_use_id": "call_1"})
}

/// Each agent's deny as `(is it a deny, its reason)`.
fn denied(agent: &str, a: &Value) -> (bool, String) {
    let (kind, reason) = match agent {
        "codex" => {
            (&a["hookSpecificOutput"]["permissionDecision"], &a["hookSpecificOutput"]["permissionDecisionReason"])
        }
        _ => (&a["decision"], &a["reason"]),
    };
    (kind == "deny", reason.as_str().unwrap_or_default().to_string())
}

#[test]
fn every_failure_of_every_agents_hook_is_a_deny_that_says_what_to_do() {
    let e = env();
    for agent in ["codex", "gemini", "opencode", "pi"] {
        let bad = hook(&e, agent, &json!("not an object"), &[]);
        let (deny, reason) = denied(agent, &bad);
        assert!(deny && reason.contains(&format!("rdesk setup {agent}")), "{agent}: {bad}");
    }
    // No desk to reach (the window cannot be started): denied, never let through.
    for (agent, input) in [
        ("gemini", gemini_replace(&e, "const a = 1;", "const a = 2;")),
        ("opencode", opencode_edit(&e, "const a = 1;", "const a = 2;")),
        ("pi", pi_edit(&e, "const a = 2;\nconsole.log(a);\n")),
    ] {
        let (deny, reason) = denied(agent, &hook(&e, agent, &input, &[]));
        assert!(deny && reason.contains("could not review this edit"), "{agent}: {reason}");
    }
    // Codex's bytes come from the Codex that runs the hook; run from elsewhere, nothing passes.
    let patch = "*** Begin Patch\n*** Update File: src/a.ts\n@@\n-const a = 1;\n+const a = 2;\n*** End Patch\n";
    let (deny, reason) = denied("codex", &hook(&e, "codex", &codex_patch(&e, patch), &[]));
    assert!(deny && reason.contains("could not find the Codex binary"), "{reason}");
    assert_eq!(std::fs::read_to_string(e.ws.join("src/a.ts")).unwrap(), A_TS, "nothing was written");
}

#[test]
fn edits_outside_the_folder_are_denied_for_every_agent() {
    let e = env();
    let outside = tempfile::tempdir().unwrap();
    let sentinel = outside.path().join("x.txt");
    std::fs::write(&sentinel, "keep\n").unwrap();
    let inputs = [
        (
            "gemini",
            json!({"cwd": e.ws, "hook_event_name": "BeforeTool", "tool_name": "write_file", "tool_input": {"file_path": sentinel, "content": "x"}}),
        ),
        ("opencode", json!({"tool": "write", "cwd": e.ws, "args": {"filePath": sentinel, "content": "x"}})),
        ("pi", json!({"tool": "write", "cwd": e.ws, "path": sentinel, "content": "x"})),
        (
            "codex",
            codex_patch(&e, &format!("*** Begin Patch\n*** Add File: {}\n+x\n*** End Patch\n", sentinel.display())),
        ),
        ("codex", codex_patch(&e, "*** Begin Patch\n*** Update File: ../x.txt\n@@\n-keep\n+x\n*** End Patch\n")),
    ];
    for (agent, input) in inputs {
        let (deny, reason) = denied(agent, &hook(&e, agent, &input, &["--policy", "agent"]));
        assert!(deny && reason.contains("outside"), "{agent}: {reason}");
    }
    assert_eq!(std::fs::read_to_string(&sentinel).unwrap(), "keep\n");
}

#[test]
fn under_the_agent_policy_each_agents_edit_is_journalled_and_allowed() {
    let e = env();
    let a = hook(&e, "gemini", &gemini_replace(&e, "const a = 1;", "const a = 2;"), &["--policy", "agent"]);
    assert_eq!(a, json!({"decision": "allow"}));
    let a = hook(&e, "opencode", &opencode_edit(&e, "const a = 1;", "const a = 2;"), &["--policy", "agent"]);
    assert_eq!(a, json!({"decision": "allow"}));
    assert_eq!(std::fs::read_to_string(e.ws.join("src/a.ts")).unwrap(), A_TS, "their own tools write");
    // pi's extension hands over the text pi computed; the desk writes it.
    let a = hook(&e, "pi", &pi_edit(&e, "const a = 3;\nconsole.log(a);\n"), &["--policy", "agent"]);
    assert_eq!(a["decision"], "written", "{a}");
    assert_eq!(std::fs::read_to_string(e.ws.join("src/a.ts")).unwrap(), "const a = 3;\nconsole.log(a);\n");
    let journal = resolve_journal::Journal::open(&e.data.join("resolve-desk/journal.sqlite3")).unwrap();
    let labels: Vec<String> =
        journal.decisions(&e.ws.display().to_string(), 10).unwrap().into_iter().map(|d| d.label).collect();
    assert_eq!(labels.len(), 3, "the History (and undo) have each: {labels:?}");
    for who in ["Gemini CLI replace: src/a.ts", "opencode edit: src/a.ts", "pi edit: src/a.ts"] {
        assert!(labels.iter().any(|l| l == who), "{who} in {labels:?}");
    }
}

#[test]
fn gemini_and_opencode_edits_that_do_not_match_exactly_are_refused_with_why() {
    let e = env();
    let (deny, reason) =
        denied("gemini", &hook(&e, "gemini", &gemini_replace(&e, "const a  = 1;", "x"), &["--policy", "agent"]));
    assert!(deny && reason.contains("exactly as given"), "{reason}");
    let (deny, reason) =
        denied("opencode", &hook(&e, "opencode", &opencode_edit(&e, "  const a = 1;", "x"), &["--policy", "agent"]));
    assert!(deny && reason.contains("exactly as given"), "{reason}");
    let patch = json!({"tool": "apply_patch", "cwd": e.ws, "args": {"patchText": "*** Begin Patch\n*** End Patch"}});
    let (deny, reason) = denied("opencode", &hook(&e, "opencode", &patch, &["--policy", "agent"]));
    assert!(deny && reason.contains("edit or write"), "{reason}");
}

/// The person applies their own version of the agent's edit of src/a.ts; the hook's answer.
fn changed_by_the_person(e: &Env, agent: &str, input: &Value, mine: &str) -> Value {
    let mut desk = Desk::start(e);
    let c = child(e, agent, input, &[]);
    desk.until_waiting();
    let decided = desk.person(json!({"tool": "resolve", "params": {"action": "apply", "reason": "mine", "edits": [{"path": "src/a.ts", "text": mine}]}}));
    assert_eq!(decided["is_error"], false, "{decided}");
    answer(c)
}

#[test]
fn an_edit_the_person_changed_reaches_the_disk_as_the_person_wrote_it() {
    let mine = "const a = 3;\nconsole.log(a);\n";
    // Gemini: its replace gets arguments that write exactly the person's version.
    let e = env();
    let a = changed_by_the_person(&e, "gemini", &gemini_replace(&e, "const a = 1;", "const a = 2;"), mine);
    assert_eq!(a["decision"], "allow", "{a}");
    let args = &a["hookSpecificOutput"]["tool_input"];
    let (old, new) = (args["old_string"].as_str().unwrap(), args["new_string"].as_str().unwrap());
    assert_eq!(A_TS.matches(old).count(), 1, "{args}");
    assert_eq!(A_TS.replace(old, new), mine);
    assert_eq!(args["file_path"], json!(e.ws.join("src/a.ts")));
    // opencode: the same, in its own argument names.
    let e = env();
    let a = changed_by_the_person(&e, "opencode", &opencode_edit(&e, "const a = 1;", "const a = 2;"), mine);
    assert_eq!(a["decision"], "allow", "{a}");
    let (old, new) = (a["args"]["oldString"].as_str().unwrap(), a["args"]["newString"].as_str().unwrap());
    assert_eq!(A_TS.replacen(old, new, 1), mine, "{a}");
    // pi: the desk writes the person's version and pi's model is told.
    let e = env();
    let a = changed_by_the_person(&e, "pi", &pi_edit(&e, "const a = 2;\nconsole.log(a);\n"), mine);
    assert_eq!((a["decision"].as_str(), a["changed"].as_bool()), (Some("written"), Some(true)), "{a}");
    assert!(a["text"].as_str().unwrap().contains("now holds their version"), "{a}");
    assert_eq!(std::fs::read_to_string(e.ws.join("src/a.ts")).unwrap(), mine);
}

fn setup(agent: &str, ws: &Path, home: &Path, args: &[&str]) -> String {
    let out = Command::new(RDESK)
        .args(["setup", agent, "--workspace"])
        .arg(ws)
        .args(args)
        .env("HOME", home)
        .env("CODEX_HOME", home.join("codex"))
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("PI_CODING_AGENT_DIR")
        .env_remove("GEMINI_CLI_HOME")
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn setup_for_each_agent_merges_is_idempotent_and_remove_undoes_it() {
    let e = env();
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    // Gemini CLI: settings.json merged, the rest kept.
    std::fs::create_dir_all(e.ws.join(".gemini")).unwrap();
    std::fs::write(e.ws.join(".gemini/settings.json"), "{\"theme\": \"dark\"}\n").unwrap();
    let first = setup("gemini", &e.ws, home, &[]);
    assert!(first.contains("added a BeforeTool hook on ^(replace|write_file)$") && first.contains(RDESK), "{first}");
    let settings: Value = serde_json::from_slice(&std::fs::read(e.ws.join(".gemini/settings.json")).unwrap()).unwrap();
    assert_eq!(settings["theme"], "dark");
    assert_eq!(settings["hooks"]["BeforeTool"][0]["hooks"][0]["timeout"], 1_800_000, "milliseconds, above the wait");
    assert!(setup("gemini", &e.ws, home, &[]).contains("nothing changed"));
    setup("gemini", &e.ws, home, &["--remove"]);
    let settings: Value = serde_json::from_slice(&std::fs::read(e.ws.join(".gemini/settings.json")).unwrap()).unwrap();
    assert_eq!(settings, json!({"theme": "dark"}));

    // Codex CLI: hooks.json, and Codex's trust of exactly that hook in config.toml.
    std::fs::create_dir_all(home.join("codex")).unwrap();
    std::fs::write(home.join("codex/config.toml"), "# mine\nmodel = \"gpt-5.5\"\n").unwrap();
    let first = setup("codex", &e.ws, home, &[]);
    assert!(first.contains("added a PreToolUse hook on ^(apply_patch|Bash)$"), "{first}");
    assert!(first.contains("trusted Resolve Desk's hook") && first.contains("as a trusted project"), "{first}");
    let config = std::fs::read_to_string(home.join("codex/config.toml")).unwrap();
    assert!(config.starts_with("# mine\nmodel = \"gpt-5.5\"\n"), "the user's lines are kept: {config}");
    let hooks: Value = serde_json::from_slice(&std::fs::read(e.ws.join(".codex/hooks.json")).unwrap()).unwrap();
    let command = hooks["hooks"]["PreToolUse"][0]["hooks"][0]["command"].as_str().unwrap();
    let hash = resolve_connect::agents::codex::trust_hash("^(apply_patch|Bash)$", command, 1800);
    let key = format!("{}:pre_tool_use:0:0", e.ws.join(".codex/hooks.json").display());
    let doc: toml_edit::DocumentMut = config.parse().unwrap();
    assert_eq!(doc["hooks"]["state"][&key]["trusted_hash"].as_str(), Some(hash.as_str()), "{config}");
    assert!(setup("codex", &e.ws, home, &[]).contains("nothing changed"));
    let removed = setup("codex", &e.ws, home, &["--remove"]);
    assert!(removed.contains("removed the PreToolUse hook") && removed.contains("removed the trust"), "{removed}");
    assert!(!e.ws.join(".codex/hooks.json").exists());
    assert!(!std::fs::read_to_string(home.join("codex/config.toml")).unwrap().contains("trusted_hash"));

    // pi and opencode: a file of their own, refused where one of the same name is not ours.
    for (agent, file) in [("pi", ".pi/extensions/resolve-desk.ts"), ("opencode", ".opencode/plugins/resolve-desk.js")] {
        let first = setup(agent, &e.ws, home, &[]);
        assert!(first.contains("added Resolve Desk's"), "{first}");
        let text = std::fs::read_to_string(e.ws.join(file)).unwrap();
        assert!(text.contains(&format!("[\"{RDESK}\",\"hook\",\"{agent}\",\"--workspace\"")), "{text}");
        assert!(setup(agent, &e.ws, home, &[]).contains("nothing changed"));
        assert!(setup(agent, &e.ws, home, &["--remove"]).contains("deleted"));
        assert!(!e.ws.join(file).exists());
        std::fs::write(e.ws.join(file), "// someone else's\n").unwrap();
        let out = Command::new(RDESK).args(["setup", agent, "--workspace"]).arg(&e.ws).output().unwrap();
        assert_eq!(out.status.code(), Some(1));
        assert!(String::from_utf8_lossy(&out.stderr).contains("is not Resolve Desk's"), "{out:?}");
        assert_eq!(std::fs::read_to_string(e.ws.join(file)).unwrap(), "// someone else's\n", "left alone");
    }
    let list = Command::new(RDESK).args(["setup", "--list"]).output().unwrap();
    let list = String::from_utf8_lossy(&list.stdout);
    for agent in ["claude-code", "codex", "gemini", "opencode", "pi"] {
        assert!(list.lines().any(|l| l.starts_with(agent)), "{agent} in {list}");
    }
}
