//! Every `rdesk` command that opens a folder, on a folder holding a hostile apply record
//! (`.rdesk-apply.log`, mode 0600 and owned by this user, so only its names give it away:
//! phase `committed`, a "backup" named `../other/secret.txt`): nothing outside the folder
//! changes, the folder's files stay as they are, and stderr names the refused record.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::json;

struct Folder {
    _base: tempfile::TempDir,
    ws: PathBuf,
    other: PathBuf,
    config: PathBuf,
}

fn listing(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out: Vec<(String, Vec<u8>)> = fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let p = e.unwrap().path();
            let bytes = if p.is_file() { fs::read(&p).unwrap() } else { b"<dir>".to_vec() };
            (p.file_name().unwrap().to_string_lossy().into_owned(), bytes)
        })
        .collect();
    out.sort();
    out
}

impl Folder {
    fn new() -> Self {
        let base = tempfile::tempdir().unwrap();
        let root = base.path().canonicalize().unwrap();
        let (ws, other, config) = (root.join("ws"), root.join("other"), root.join("config"));
        for d in [&ws, &other, &config] {
            fs::create_dir_all(d).unwrap();
        }
        fs::write(other.join("secret.txt"), "outside\n").unwrap();
        fs::write(ws.join("a.ts"), "console.log(1);\n").unwrap();
        let h = "0".repeat(64);
        let intent = json!({
            "version": 1, "pid": 1, "started_at": "2024-01-01T00:00:00Z", "context": null, "dirs": [],
            "ops": [{"op": "edit", "path": "a.ts", "tmp": ".rdesk-1-0.tmp", "backup": "../other/secret.txt", "before": h, "after": h}],
        });
        let record = ws.join(".rdesk-apply.log");
        fs::write(
            &record,
            format!("{intent}\n{{\"phase\":\"staged\"}}\n{{\"phase\":\"parked\"}}\n{{\"phase\":\"committed\"}}\n"),
        )
        .unwrap();
        fs::set_permissions(&record, fs::Permissions::from_mode(0o600)).unwrap();
        Self { _base: base, ws, other, config }
    }

    fn ws(&self) -> &str {
        self.ws.to_str().unwrap()
    }

    /// Runs `rdesk ARGS` with `stdin`; checks nothing changed and stderr names the record.
    fn run_and_check(&self, args: &[&str], stdin: &str) -> Output {
        let outside = listing(&self.other);
        let inside = listing(&self.ws);
        let mut child = Command::new(env!("CARGO_BIN_EXE_rdesk"))
            .args(args)
            .env("XDG_CONFIG_HOME", &self.config)
            .env_remove("OPENAI_API_KEY")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("rdesk starts");
        std::io::Write::write_all(&mut child.stdin.take().unwrap(), stdin.as_bytes()).unwrap();
        let out = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        let record = self.ws.join(".rdesk-apply.log");
        assert!(
            err.lines().any(|l| l.starts_with("rdesk")
                && l.contains(&format!(": The apply record {} was refused", record.display()))),
            "{args:?}: stderr names the refused record: {err}"
        );
        assert!(err.contains("`..`") && err.contains("delete"), "{args:?}: why, and what to do: {err}");
        assert_eq!(listing(&self.other), outside, "{args:?}: nothing outside the folder changed");
        assert_eq!(listing(&self.ws), inside, "{args:?}: the folder's files (and the record) are as they were");
        out
    }
}

const APPLY_SCRIPT: &str = concat!(
    r#"{"tool":"ast_edit","params":{"ops":[{"pat":"console.log($A)","out":"logger.debug($A)"}],"lang":"ts"}}"#,
    "\n",
    r#"{"tool":"resolve","params":{"action":"apply","reason":"ok"}}"#,
    "\n"
);

#[test]
fn run_on_a_folder_with_a_hostile_record_touches_nothing_and_names_it() {
    let f = Folder::new();
    let out = f.run_and_check(&["run", "-", "--workspace", f.ws()], APPLY_SCRIPT);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("Cannot apply while the apply record"), "the apply says why it cannot run: {stdout}");
}

#[test]
fn mcp_headless_on_a_folder_with_a_hostile_record_touches_nothing_and_names_it() {
    let f = Folder::new();
    f.run_and_check(&["mcp", "--workspace", f.ws(), "--headless", "--policy", "agent"], "");
}

#[test]
fn agent_replay_on_a_folder_with_a_hostile_record_touches_nothing_and_names_it() {
    let f = Folder::new();
    let replay = f.config.join("r.jsonl");
    let turns = [
        json!({"tool_calls": [{"name": "ast_edit", "arguments": {"ops": [{"pat": "console.log($A)", "out": "logger.debug($A)"}], "lang": "ts"}}]}),
        json!({"tool_calls": [{"name": "resolve", "arguments": {"action": "apply", "reason": "as asked"}}]}),
        json!({"content": "Done."}),
    ];
    fs::write(&replay, turns.iter().map(|t| format!("{t}\n")).collect::<String>()).unwrap();
    let out = f.run_and_check(&["agent", "--replay", replay.to_str().unwrap(), "-w", f.ws()], "");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("Cannot apply while the apply record"), "the apply says why it cannot run: {stdout}");
}

#[test]
fn tools_with_a_workspace_holding_a_hostile_record_touches_nothing_and_names_it() {
    let f = Folder::new();
    let out = f.run_and_check(&["tools", "--workspace", f.ws()], "");
    assert!(out.status.success(), "listing the tools still works: {out:?}");
}

#[test]
fn ast_edit_apply_on_a_folder_with_a_hostile_record_touches_nothing_and_names_it() {
    let f = Folder::new();
    let out = f.run_and_check(
        &["ast-edit", "--pat", "console.log($A)", "--out", "logger.debug($A)", "--apply", "-w", f.ws(), f.ws()],
        "",
    );
    assert_eq!(out.status.code(), Some(2), "the apply fails: {out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("rdesk ast-edit: Cannot apply while the apply record"), "{err}");
}
