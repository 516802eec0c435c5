//! The desk as every front end opens it: a folder's own tools run only once trusted, never
//! shadow the user's, and are asked about again when they change. Real folders, a real config
//! folder, real tool processes (python3) that leave a marker outside the workspace when they
//! run.

use std::fs;
use std::path::{Path, PathBuf};

use resolve_desk_core::{Desk, DeskOptions, TrustState};
use resolve_engine::{Actor, ErrorCode, ResolvePolicy};
use serde_json::json;

/// A tool that writes `marker` when its process starts, and answers every request.
fn install(tools_dir: &Path, name: &str, marker: &Path, text: &str) -> PathBuf {
    let dir = tools_dir.join(name);
    fs::create_dir_all(&dir).unwrap();
    let script = format!(
        "import json, sys\nopen({marker:?}, 'a').write('ran\\n')\nfor line in sys.stdin:\n    m = json.loads(line)\n    if 'id' in m:\n        print(json.dumps({{'jsonrpc': '2.0', 'id': m['id'], 'result': {{'content': [{{'type': 'text', 'text': {text:?}}}]}}}}), flush=True)\n",
        marker = marker.display().to_string(),
    );
    fs::write(dir.join("tool.py"), script).unwrap();
    let manifest = json!({"name": name, "label": name, "description": "d", "parameters": {"type": "object"},
        "command": "python3", "args": ["tool.py"]});
    fs::write(dir.join("tool.json"), manifest.to_string()).unwrap();
    dir
}

struct Place {
    ws: tempfile::TempDir,
    config: tempfile::TempDir,
    logs: tempfile::TempDir,
    outside: tempfile::TempDir,
}

impl Place {
    fn new() -> Place {
        Place {
            ws: tempfile::tempdir().unwrap(),
            config: tempfile::tempdir().unwrap(),
            logs: tempfile::tempdir().unwrap(),
            outside: tempfile::tempdir().unwrap(),
        }
    }

    fn marker(&self) -> PathBuf {
        self.outside.path().join("ran")
    }

    fn folder_tools(&self) -> PathBuf {
        self.ws.path().join(".resolve/tools")
    }

    fn user_tools(&self) -> PathBuf {
        self.config.path().join("resolve-desk/tools")
    }

    fn options(&self, config: bool) -> DeskOptions {
        DeskOptions {
            policy: ResolvePolicy::Agent,
            id_prefix: Some("pa-".into()),
            config_dir: config.then(|| self.config.path().to_path_buf()),
            log_dir: self.logs.path().to_path_buf(),
            journal: None,
            watch_files: false,
            watch_tools: false,
            never_pass_env: Vec::new(),
        }
    }

    async fn open(&self) -> Desk {
        Desk::open(self.ws.path(), self.options(true)).await.expect("the folder opens")
    }
}

#[tokio::test]
async fn opening_a_folder_runs_none_of_its_tools_and_a_call_names_the_folder_and_how_to_trust_it() {
    let p = Place::new();
    install(&p.folder_tools(), "probe", &p.marker(), "probed");
    let desk = p.open().await;
    let TrustState::Untrusted(shown) = desk.trust_state() else { panic!("a new folder's tools are untrusted") };
    assert_eq!(shown.tools[0].command_line(), "python3 tool.py");
    assert!(desk.session().tools().iter().any(|t| t.name == "probe"), "listed, so a caller learns why it cannot run");

    let r = desk.session().call(Actor::Agent, "probe", json!({})).await;
    assert!(r.is_error, "{r:?}");
    assert_eq!(r.error_code.as_deref(), Some(ErrorCode::Untrusted.as_str()));
    let text = r.text_content();
    let root = desk.root().display().to_string();
    assert!(text.contains(&root) && text.contains(&format!("rdesk trust {root}")), "{text}");
    assert!(!p.marker().exists(), "nothing of the folder's ran, neither on open nor on the call");

    desk.trust_tools(shown.fingerprint.as_ref().ok()).expect("trusted as shown");
    let r = desk.session().call(Actor::Agent, "probe", json!({})).await;
    assert_eq!((r.is_error, r.text_content().as_str()), (false, "probed"), "{r:?}");
    assert_eq!(fs::read_to_string(p.marker()).unwrap(), "ran\n");
}

#[tokio::test]
async fn a_tool_changed_after_it_was_trusted_is_refused_at_its_next_start() {
    let p = Place::new();
    let dir = install(&p.folder_tools(), "probe", &p.marker(), "probed");
    let desk = p.open().await;
    desk.trust_tools(None).unwrap();
    // Changed with no reload in between (no watch): the check at the process start sees it.
    fs::write(dir.join("tool.py"), "import os\nos.system('touch changed')\n").unwrap();
    let r = desk.session().call(Actor::Agent, "probe", json!({})).await;
    assert_eq!(r.error_code.as_deref(), Some("untrusted"), "{r:?}");
    assert!(r.text_content().contains("changed since you trusted them"), "{}", r.text_content());
    assert!(!p.marker().exists() && !dir.join("changed").exists(), "the changed tool never ran");
    assert!(matches!(desk.trust_state(), TrustState::Untrusted(f) if f.changed_since_trusted));
}

#[tokio::test]
async fn a_folders_tool_never_shadows_the_users_tool_of_the_same_name() {
    let p = Place::new();
    let outside_user = p.outside.path().join("user-ran");
    install(&p.user_tools(), "greet", &outside_user, "the user's greet");
    let theirs = install(&p.folder_tools(), "greet", &p.marker(), "the folder's greet");
    let desk = p.open().await;
    let problems = desk.tool_problems();
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert_eq!(problems[0].file, theirs.join("tool.json"));
    assert_eq!(problems[0].message, "Tool name \"greet\" conflicts with existing tool", "SPEC §6's message");
    // The user's own tool needs no trust and is the one that runs.
    let r = desk.session().call(Actor::Agent, "greet", json!({})).await;
    assert_eq!(r.text_content(), "the user's greet", "{r:?}");
    assert!(outside_user.exists() && !p.marker().exists());
}

#[tokio::test]
async fn without_a_config_folder_a_folders_tools_never_run() {
    let p = Place::new();
    install(&p.folder_tools(), "probe", &p.marker(), "probed");
    let desk = Desk::open(p.ws.path(), p.options(false)).await.unwrap();
    assert!(matches!(desk.trust_state(), TrustState::Untrusted(_)));
    assert!(desk.trust_tools(None).is_err(), "nowhere to keep trust");
    let r = desk.session().call(Actor::Agent, "probe", json!({})).await;
    assert_eq!(r.error_code.as_deref(), Some("untrusted"));
    assert!(!p.marker().exists());
}

#[tokio::test]
async fn trust_is_kept_for_the_next_desk_on_the_same_folder_and_not_for_a_copy() {
    let p = Place::new();
    install(&p.folder_tools(), "probe", &p.marker(), "probed");
    p.open().await.trust_tools(None).unwrap();
    let again = p.open().await;
    assert!(matches!(again.trust_state(), TrustState::Trusted { .. }), "the same folder, the same tools");
    // The same tools in another folder are another folder's: untrusted.
    let copy = tempfile::tempdir().unwrap();
    install(&copy.path().join(".resolve/tools"), "probe", &p.marker(), "probed");
    let other = Desk::open(copy.path(), p.options(true)).await.unwrap();
    assert!(matches!(other.trust_state(), TrustState::Untrusted(_)));
}
