//! `rdesk tools new`: each language's template, written by the real binary, is listed by
//! `rdesk tools` at once and runs through `rdesk run` with the SDK `rdesk sdk-path` prints:
//! a call pushes a pending action, apply with a reason writes the file, a second call is
//! discarded and writes nothing. Real child processes (node, tsx, python3), an isolated config
//! folder (XDG_CONFIG_HOME) and log folder (XDG_STATE_HOME).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::Value;

struct Home {
    dir: tempfile::TempDir,
    /// Extra PATH entries in front of the inherited PATH (where tsx is).
    path_front: Option<PathBuf>,
}

impl Home {
    fn new() -> Self {
        Home { dir: tempfile::tempdir().unwrap(), path_front: None }
    }

    fn rdesk(&self, args: &[&str], stdin: Option<&str>) -> Output {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_rdesk"));
        cmd.args(args)
            .env("XDG_CONFIG_HOME", self.dir.path().join("config"))
            .env("XDG_STATE_HOME", self.dir.path().join("state"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        if let Some(front) = &self.path_front {
            let path = std::env::var_os("PATH").unwrap_or_default();
            let joined =
                std::env::join_paths(std::iter::once(front.clone()).chain(std::env::split_paths(&path))).unwrap();
            cmd.env("PATH", joined);
        }
        let mut child = cmd.spawn().expect("rdesk starts");
        if let Some(input) = stdin {
            child.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
        } else {
            drop(child.stdin.take());
        }
        child.wait_with_output().unwrap()
    }
}

fn text(out: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
}

fn steps(out: &Output) -> Vec<Value> {
    String::from_utf8_lossy(&out.stdout).lines().map(|l| serde_json::from_str(l).expect("each line is JSON")).collect()
}

/// Lists, then runs the tool `add_line` in `ws`: push + apply with a reason, push + discard.
fn round_trip(home: &Home, ws: &Path) {
    let wsp = ws.to_str().unwrap();
    let listed = home.rdesk(&["tools", "-w", wsp], None);
    assert!(listed.status.success(), "{}", text(&listed));
    assert!(
        String::from_utf8_lossy(&listed.stdout).contains("add_line — Add Line"),
        "listed at once: {}",
        text(&listed)
    );

    let script = concat!(
        r#"{"tool":"add_line","params":{"path":"notes.txt","line":"first"}}"#,
        "\n",
        r#"{"tool":"resolve","params":{"action":"apply","reason":"the note is right"}}"#,
        "\n",
        r#"{"tool":"add_line","params":{"path":"notes.txt","line":"second"}}"#,
        "\n",
        r#"{"tool":"resolve","params":{"action":"discard","reason":"not this one"}}"#,
        "\n",
    );
    let out = home.rdesk(&["run", "-", "-w", wsp], Some(script));
    assert!(out.status.success(), "{}", text(&out));
    let s = steps(&out);
    assert_eq!(s.len(), 4, "{}", text(&out));
    assert_eq!(s[0]["is_error"], false, "the call works: {}", s[0]);
    assert_eq!(s[0]["pending"][0]["label"], "Add a line to notes.txt", "it pushed its action: {}", s[0]);
    assert_eq!(s[0]["pending"][0]["source_tool_name"], "add_line");
    assert_eq!(s[1]["is_error"], false, "{}", s[1]);
    assert!(s[1]["text"].as_str().unwrap().contains("Added the line to notes.txt."), "{}", s[1]);
    assert_eq!(s[2]["is_error"], false, "{}", s[2]);
    assert_eq!(s[2]["pending"].as_array().unwrap().len(), 1);
    assert_eq!(s[3]["is_error"], false, "{}", s[3]);
    assert!(s[3]["text"].as_str().unwrap().contains("Left notes.txt as it was."), "{}", s[3]);
    assert_eq!(s[3]["pending"], serde_json::json!([]));
    assert_eq!(
        std::fs::read_to_string(ws.join("notes.txt")).unwrap(),
        "first\n",
        "the applied line is written, the discarded one is not"
    );
}

#[test]
fn sdk_path_prints_the_checkouts_sdk_for_a_build_here() {
    let home = Home::new();
    let out = home.rdesk(&["sdk-path"], None);
    assert!(out.status.success(), "{}", text(&out));
    let dir = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    assert!(dir.join("node/run.js").is_file() && dir.join("python/run.py").is_file(), "{}", dir.display());
}

#[test]
fn an_installed_rdesk_prints_the_sdk_under_its_prefix() {
    let prefix = tempfile::tempdir().unwrap();
    let sdk = prefix.path().join("share/resolve-desk/sdk");
    for f in ["node/run.js", "python/run.py"] {
        std::fs::create_dir_all(sdk.join(f).parent().unwrap()).unwrap();
        std::fs::write(sdk.join(f), "").unwrap();
    }
    std::fs::create_dir(prefix.path().join("bin")).unwrap();
    let exe = prefix.path().join("bin/rdesk");
    // A hard link, not a copy: a copy's written file can still be open in a process another
    // test thread forks at that moment, and executing it then fails with "Text file busy".
    if std::fs::hard_link(env!("CARGO_BIN_EXE_rdesk"), &exe).is_err() {
        std::fs::copy(env!("CARGO_BIN_EXE_rdesk"), &exe).unwrap();
    }
    let out = Command::new(&exe).arg("sdk-path").output().unwrap();
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), std::fs::canonicalize(&sdk).unwrap().to_str().unwrap());
}

#[test]
fn a_javascript_tool_in_the_workspace_runs_once_trusted() {
    let home = Home::new();
    let ws = tempfile::tempdir().unwrap();
    let wsp = ws.path().to_str().unwrap();
    let out = home.rdesk(&["tools", "new", "add_line", "--lang", "js", "-w", wsp], None);
    assert!(out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("rdesk trust"), "says the folder needs trust: {}", text(&out));
    let dir = ws.path().join(".resolve/tools/add_line");
    for f in ["tool.json", "tool.mjs", "README.md"] {
        assert!(dir.join(f).is_file(), "{f} written");
    }
    let manifest: Value = serde_json::from_str(&std::fs::read_to_string(dir.join("tool.json")).unwrap()).unwrap();
    let sdk = home.rdesk(&["sdk-path"], None);
    let sdk = String::from_utf8_lossy(&sdk.stdout).trim().to_string();
    assert_eq!(manifest["args"][0], format!("{sdk}/node/run.js"), "points at the SDK rdesk sdk-path prints");

    let untrusted = home.rdesk(&["tools", "-w", wsp], None);
    assert!(text(&untrusted).contains("NOT TRUSTED"), "{}", text(&untrusted));
    let trusted = home.rdesk(&["trust", wsp, "--yes"], None);
    assert!(trusted.status.success(), "{}", text(&trusted));
    round_trip(&home, ws.path());

    let again = home.rdesk(&["tools", "new", "add_line", "--lang", "js", "-w", wsp], None);
    assert_eq!(again.status.code(), Some(2), "an existing tool is never overwritten: {}", text(&again));
    assert!(text(&again).contains("exists already"), "{}", text(&again));
}

#[test]
fn a_python_tool_of_the_user_runs_in_any_folder() {
    let home = Home::new();
    let ws = tempfile::tempdir().unwrap();
    let out = home.rdesk(&["tools", "new", "add_line", "--lang", "python", "--user"], None);
    assert!(out.status.success(), "{}", text(&out));
    assert!(home.dir.path().join("config/resolve-desk/tools/add_line/tool.py").is_file());
    round_trip(&home, ws.path());
}

#[test]
fn a_typescript_tool_of_the_user_runs_through_tsx() {
    let tsx_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/tools/node_modules/.bin");
    assert!(tsx_dir.join("tsx").exists(), "run scripts/setup.sh (npm install in examples/tools) first");
    let mut home = Home::new();
    home.path_front = Some(tsx_dir.clone());
    let ws = tempfile::tempdir().unwrap();
    let out = home.rdesk(&["tools", "new", "add_line", "--lang", "ts", "--user"], None);
    assert!(out.status.success(), "{}", text(&out));
    assert!(!text(&out).contains("npm install --global tsx"), "tsx was found: {}", text(&out));
    let manifest =
        std::fs::read_to_string(home.dir.path().join("config/resolve-desk/tools/add_line/tool.json")).unwrap();
    assert!(manifest.contains("node_modules/.bin/tsx"), "the tsx found is written: {manifest}");
    round_trip(&home, ws.path());
}

#[test]
fn typescript_without_tsx_says_how_to_get_it() {
    let home = Home::new();
    // A PATH without tsx.
    let bare = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_rdesk"))
        .args(["tools", "new", "t", "--lang", "ts", "--user"])
        .env("XDG_CONFIG_HOME", home.dir.path().join("config"))
        .env("PATH", bare.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "the tool is still written: {}", text(&out));
    assert!(String::from_utf8_lossy(&out.stderr).contains("npm install --global tsx"), "{}", text(&out));
}

#[test]
fn bad_names_and_languages_are_refused_with_status_2() {
    let home = Home::new();
    let ws = tempfile::tempdir().unwrap();
    let out = home.rdesk(&["tools", "new", "add line", "--lang", "js", "-w", ws.path().to_str().unwrap()], None);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("\"add line\""), "names the value: {}", text(&out));
    let out = home.rdesk(&["tools", "new", "x", "--lang", "cobol"], None);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out).contains("cobol"), "{}", text(&out));
    assert!(!ws.path().join(".resolve").exists(), "nothing written");
}
