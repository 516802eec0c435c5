//! Crash recovery: an apply interrupted by a killed process (power loss, `kill -9`, a crash)
//! is finished on the next open of its workspace. The apply's durable intent record says
//! which files, temporary and backup names, and how far the commit got; recovery rolls
//! everything back (or, when the record says the commit completed, finishes the clean-up)
//! and removes every temporary file.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::session::Actor;
use crate::workspace::Workspace;

/// What was being applied (written into the intent record, so a recovery can say it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApplyContext {
    pub action_id: String,
    pub label: String,
    pub source_tool_name: String,
    /// Who resolved it (absent for an apply outside a session, e.g. `rdesk ast-edit --apply`).
    pub actor: Option<Actor>,
    /// The agent or MCP client that asked, when known.
    pub client: Option<String>,
}

/// How an interrupted apply was finished.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RecoveryOutcome {
    /// Every file was put back as it was before the apply.
    RolledBack,
    /// The record shows every file had been written; only the clean-up was finished.
    Completed,
}

/// What recovery did in a workspace.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Recovery {
    /// The interrupted action, when the record says.
    pub context: Option<ApplyContext>,
    pub outcome: RecoveryOutcome,
    /// When the interrupted apply started.
    pub started_at: DateTime<Utc>,
    /// How many files the apply touched.
    pub files: usize,
    /// What could not be put back, and where it is (empty when everything was restored).
    pub problems: Vec<String>,
}

impl Recovery {
    /// The reason an interrupted action is recorded with in the history.
    pub const REASON: &'static str = "interrupted";

    /// One human sentence (or two) for a banner or a line on stderr.
    pub fn message(&self) -> String {
        let what = match &self.context {
            Some(c) => format!("Applying \"{}\"", c.label),
            None => "An apply".to_string(),
        };
        let when = self.started_at.format("%Y-%m-%d %H:%M:%S UTC");
        let done = match self.outcome {
            RecoveryOutcome::RolledBack => format!(
                "{} restored as before the apply",
                crate::changeset::plural(self.files, "file was", "files were")
            ),
            RecoveryOutcome::Completed => format!(
                "its {} had all been written, so only the clean-up was finished",
                crate::changeset::plural(self.files, "file", "files")
            ),
        };
        let mut text =
            format!("{what} was interrupted (started {when}): {done}, and its temporary files were removed.");
        if !self.problems.is_empty() {
            text.push_str(&format!(" Check these by hand: {}.", self.problems.join("; ")));
        }
        text
    }
}

/// Finishes any apply interrupted in `ws` (see the module docs). `None` when there was
/// nothing to recover, or when the apply the record belongs to is still running in another
/// process (it holds the workspace lock).
pub fn recover(ws: &Workspace) -> Option<Recovery> {
    // Filled in by the intent-record work (issue 11); the signature is what callers use.
    let _ = ws;
    None
}
