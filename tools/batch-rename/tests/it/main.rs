//! Integration tests of `batch_rename_preview`, driven through a real `resolve_engine::Session`
//! on real temporary folders. All of them compile into this one binary:
//! - `preview.rs`: what the preview shows and queues (labels, tables, details, selection);
//! - `refusals.rs`: every plan that is refused, with nothing queued and nothing renamed;
//! - `apply.rs`: what apply and discard do on disk (chains, swaps, stale, rollback, links).
//!
//! New tests go in the file of the behaviour they check; shared set-up lives here.

mod apply;
mod preview;
mod refusals;

use std::fs;
use std::path::{Path, PathBuf};

use resolve_engine::{ActionInfo, Actor, ResolvePolicy, Session, ToolResult};
use serde_json::{json, Value};

pub const TOOL: &str = "batch_rename_preview";

/// A temporary workspace with the tool loaded.
pub struct Fixture {
    _dir: tempfile::TempDir,
    pub session: Session,
}

/// A workspace holding `files` (path, contents); folders are created as needed.
pub fn fixture(files: &[(&str, &str)]) -> Fixture {
    let dir = tempfile::tempdir().expect("temp dir");
    for (path, contents) in files {
        let abs = dir.path().join(path);
        fs::create_dir_all(abs.parent().unwrap()).unwrap();
        fs::write(abs, contents).unwrap();
    }
    let session = Session::open(dir.path(), ResolvePolicy::Agent).expect("session opens");
    session.load(resolve_tool_batch_rename::factory()).expect("the tool loads");
    Fixture { _dir: dir, session }
}

impl Fixture {
    /// The canonical workspace root.
    pub fn root(&self) -> &Path {
        self.session.workspace().root()
    }

    pub fn abs(&self, rel: &str) -> PathBuf {
        self.root().join(rel)
    }

    pub async fn preview(&self, files: Value, find: &str, replace: &str) -> ToolResult {
        self.session.call(Actor::Agent, TOOL, json!({"files": files, "find": find, "replace": replace})).await
    }

    pub async fn apply(&self) -> ToolResult {
        self.session.call(Actor::Agent, "resolve", json!({"action": "apply", "reason": "r"})).await
    }

    pub async fn discard(&self, reason: &str) -> ToolResult {
        self.session.call(Actor::Agent, "resolve", json!({"action": "discard", "reason": reason})).await
    }

    pub fn actions(&self) -> Vec<ActionInfo> {
        self.session.store().list()
    }

    pub fn read(&self, rel: &str) -> String {
        fs::read_to_string(self.abs(rel)).unwrap_or_else(|e| panic!("reading {rel}: {e}"))
    }

    pub fn write(&self, rel: &str, contents: &str) {
        fs::write(self.abs(rel), contents).unwrap();
    }

    /// Every entry below the root (files, links, folders with a trailing `/`), sorted,
    /// symlinks not followed.
    pub fn listing(&self) -> Vec<String> {
        let mut out = Vec::new();
        walk(self.root(), "", &mut out);
        out.sort();
        out
    }
}

fn walk(dir: &Path, prefix: &str, out: &mut Vec<String>) {
    for entry in fs::read_dir(dir).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name().to_string_lossy().into_owned();
        let rel = format!("{prefix}{name}");
        if entry.file_type().unwrap().is_dir() {
            out.push(format!("{rel}/"));
            walk(&entry.path(), &format!("{rel}/"), out);
        } else {
            out.push(rel);
        }
    }
}

/// Asserts that a refused preview is an error containing `needle`, and that nothing was
/// queued or renamed.
pub fn assert_refused(fx: &Fixture, result: &ToolResult, needle: &str, before: &[String]) {
    assert!(result.is_error, "the preview must be refused, got: {}", result.text_content());
    assert!(result.text_content().contains(needle), "the refusal must say `{needle}`, got: {}", result.text_content());
    assert!(fx.actions().is_empty(), "a refused preview queues nothing");
    assert_eq!(fx.listing(), before, "a refused preview renames nothing");
}
