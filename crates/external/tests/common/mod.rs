//! Helpers for the external-tool tests: real temp workspaces, real tool folders, real child
//! processes (node and python3).
#![allow(dead_code)]

use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use resolve_engine::{Actor, ResolvePolicy, Session, ToolResult};
use resolve_external::{Config, ExternalTools};
use serde_json::{json, Value};
use tempfile::TempDir;

pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap()
}

pub fn node_run() -> String {
    repo().join("tools/sdk/node/run.js").display().to_string()
}

pub fn python_run() -> String {
    repo().join("tools/sdk/python/run.py").display().to_string()
}

pub fn example(path: &str) -> String {
    repo().join("examples/tools").join(path).display().to_string()
}

/// A workspace with its own tools folder and log folder.
pub struct Desk {
    pub dir: TempDir,
    pub logs: TempDir,
}

impl Desk {
    pub fn new() -> Desk {
        Desk { dir: tempfile::tempdir().unwrap(), logs: tempfile::tempdir().unwrap() }
    }

    pub fn root(&self) -> &Path {
        self.dir.path()
    }

    pub fn tools_dir(&self) -> PathBuf {
        self.root().join(".resolve/tools")
    }

    pub fn config(&self) -> Config {
        Config {
            dirs: vec![self.tools_dir()],
            log_dir: self.logs.path().to_path_buf(),
            never_pass: resolve_external::DEFAULT_NEVER_PASS.iter().map(|n| n.to_string()).collect(),
            limits: resolve_external::ToolLimits::default(),
        }
    }

    /// Writes `<workspace>/.resolve/tools/<folder>/tool.json` (and extra files).
    pub fn install(&self, folder: &str, manifest: Value, files: &[(&str, &str)]) -> PathBuf {
        let dir = self.tools_dir().join(folder);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("tool.json"), serde_json::to_string_pretty(&manifest).unwrap()).unwrap();
        for (name, text) in files {
            std::fs::write(dir.join(name), text).unwrap();
        }
        dir
    }

    pub fn session(&self) -> Arc<Session> {
        Arc::new(Session::open(self.root(), ResolvePolicy::Agent).unwrap())
    }
}

pub fn schema_any() -> Value {
    json!({"type": "object"})
}

/// A manifest for a Python script in the tool's folder.
pub fn python_manifest(name: &str, script: &str, extra: Value) -> Value {
    let mut m = json!({
        "name": name, "label": name, "description": format!("test tool {name}"),
        "parameters": schema_any(), "command": "python3", "args": [script],
    });
    if let Value::Object(extra) = extra {
        for (k, v) in extra {
            m[k] = v;
        }
    }
    m
}

pub async fn call(session: &Session, tool: &str, params: Value) -> ToolResult {
    session.call(Actor::Agent, tool, params).await
}

pub async fn resolve(session: &Session, action: &str, reason: &str) -> ToolResult {
    session.call(Actor::Person, "resolve", json!({"action": action, "reason": reason})).await
}

/// Waits (up to 20 s) until `cond` holds; panics with `what` otherwise.
pub async fn wait_until<F: FnMut() -> bool>(what: &str, mut cond: F) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    while !cond() {
        assert!(tokio::time::Instant::now() < deadline, "timed out waiting until {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

pub async fn wait_until_async<F, Fut>(what: &str, mut cond: F)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = bool>,
{
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    while !cond().await {
        assert!(tokio::time::Instant::now() < deadline, "timed out waiting until {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

pub fn load(desk: &Desk, session: &Session) -> ExternalTools {
    ExternalTools::load(session, desk.config())
}
