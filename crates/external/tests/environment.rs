//! A tool process starts from a clean environment: a real tool (python3) prints the
//! environment it got. A secret of the desk's environment is absent; the allow-list and the
//! variables its manifest names are present; the LLM key variable is absent even when named,
//! and the tool's log says so once.
//!
//! One test in this binary: it sets variables of its own process environment before any
//! other thread of the test starts (no other test shares this process).

mod common;

use std::collections::BTreeMap;

use common::*;
use serde_json::json;

const PRINT_ENV: &str = "import json, sys, os\nfor line in sys.stdin:\n    msg = json.loads(line)\n    if msg.get('method') == 'execute':\n        text = json.dumps(dict(os.environ))\n        print(json.dumps({'jsonrpc': '2.0', 'id': msg['id'], 'result': {'content': [{'type': 'text', 'text': text}]}}), flush=True)\n";

#[test]
fn a_tool_gets_the_allow_list_and_its_named_variables_and_never_the_key() {
    let set = [
        ("RD_TEST_SECRET", "hunter2"),
        ("OPENAI_API_KEY", "sk-default-key"),
        ("RD_TEST_LLM_KEY", "sk-configured-key"),
        ("RD_TEST_NAMED", "named-value"),
        ("LANG", "C.UTF-8"),
        ("LC_MESSAGES", "C"),
        ("TZ", "UTC"),
        ("XDG_CONFIG_HOME", "/tmp/rd-test-config"),
        ("XDG_SESSION_ID", "7"),
        ("TMPDIR", "/tmp"),
    ];
    // The interpreter itself, not a launcher (a pyenv shim) that would change PATH and add
    // variables of its own before python starts.
    let python = std::process::Command::new("python3")
        .args(["-c", "import sys; print(sys.executable)"])
        .output()
        .expect("python3 runs");
    let python = String::from_utf8(python.stdout).unwrap().trim().to_string();
    for (k, v) in set {
        std::env::set_var(k, v);
    }
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    runtime.block_on(async {
        let desk = Desk::new();
        desk.install(
            "envprobe",
            python_manifest(
                "envprobe",
                "tool.py",
                json!({"command": python, "env": ["RD_TEST_NAMED", "OPENAI_API_KEY", "RD_TEST_LLM_KEY", "RD_TEST_UNSET"]}),
            ),
            &[("tool.py", PRINT_ENV)],
        );
        let session = desk.session();
        let mut config = desk.config();
        // What a front end does with the configured key variable.
        config.never_pass.push("RD_TEST_LLM_KEY".into());
        let tools = resolve_external::ExternalTools::load(&session, config);
        assert!(tools.problems().is_empty(), "{:?}", tools.problems());
        let out = call(&session, "envprobe", json!({})).await;
        assert!(!out.is_error, "{}", out.text_content());
        let got: BTreeMap<String, String> = serde_json::from_str(&out.text_content()).unwrap();

        for absent in ["RD_TEST_SECRET", "XDG_SESSION_ID", "RD_TEST_UNSET"] {
            assert!(!got.contains_key(absent), "{absent} must not reach the tool: {got:?}");
        }
        assert!(!got.contains_key("OPENAI_API_KEY"), "the default key variable is never passed, even when named");
        assert!(!got.contains_key("RD_TEST_LLM_KEY"), "the configured key variable is never passed, even when named");
        assert!(
            !got.values().any(|v| v.starts_with("sk-") || v == "hunter2"),
            "no secret value under any name: {got:?}"
        );
        assert_eq!(got.get("RD_TEST_NAMED").map(String::as_str), Some("named-value"), "a named variable passes");
        for (k, v) in [
            ("LANG", "C.UTF-8"),
            ("LC_MESSAGES", "C"),
            ("TZ", "UTC"),
            ("XDG_CONFIG_HOME", "/tmp/rd-test-config"),
            ("TMPDIR", "/tmp"),
        ] {
            assert_eq!(got.get(k).map(String::as_str), Some(v), "{k} is on the allow-list");
        }
        assert_eq!(got.get("PATH"), std::env::var("PATH").ok().as_ref(), "PATH passes (python3 was found with it)");
        assert_eq!(got.get("HOME"), std::env::var("HOME").ok().as_ref(), "HOME passes");
        assert_eq!(got.get("RESOLVE_DESK_TOOL").map(String::as_str), Some("envprobe"));
        assert_eq!(
            got.get("RESOLVE_DESK_PROTOCOL").map(String::as_str),
            Some(resolve_external::manifest::PROTOCOL_VERSION.to_string().as_str()),
            "the desk's protocol version, which the SDKs check"
        );
        assert_eq!(
            got.get("RESOLVE_DESK_WORKSPACE").map(String::as_str),
            Some(session.workspace().root().to_str().unwrap())
        );
        // Nothing else: every variable the tool saw is one it may see (python may add LC_CTYPE).
        let allowed = |k: &str| {
            resolve_external::environment::PASSED.contains(&k)
                || k.starts_with("LC_")
                || ["RD_TEST_NAMED", "RESOLVE_DESK_TOOL", "RESOLVE_DESK_WORKSPACE", "RESOLVE_DESK_PROTOCOL"].contains(&k)
        };
        let extra: Vec<&String> = got.keys().filter(|k| !allowed(k)).collect();
        assert!(extra.is_empty(), "variables outside the allow-list reached the tool: {extra:?}");

        // Started a second time: the log says it withheld the named keys once, not per start.
        assert!(tools.stop_if_idle("envprobe").await);
        assert!(!call(&session, "envprobe", json!({})).await.is_error);
        let log = tools.read_log("envprobe").unwrap();
        assert_eq!(log.matches("--- resolve-desk: starting").count(), 2, "{log}");
        let notes: Vec<&str> = log.lines().filter(|l| l.contains("not passing")).collect();
        assert_eq!(notes.len(), 1, "said once: {log}");
        assert!(
            notes[0].contains("`OPENAI_API_KEY`, `RD_TEST_LLM_KEY`") && notes[0].contains("never passed to tools"),
            "{}",
            notes[0]
        );
        assert!(!log.contains("sk-"), "the log never holds a key's value");
    });
}
