//! Crash recovery: an apply interrupted by a killed process (power loss, `kill -9`, a crash)
//! is finished on the next open of its workspace. The apply's durable intent record says
//! which files, temporary and backup names, and how far the commit got; recovery rolls
//! everything back (or, when the record says the commit completed, finishes the clean-up)
//! and removes every temporary file.

use std::path::Path;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::fsops::Tree;
use super::intent::{self, Phase};
use super::lock::WorkspaceLock;
use super::rollback;

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
    let Ok(Some(_lock)) = WorkspaceLock::try_acquire(ws.root()) else { return None };
    recover_locked(ws.root())
}

/// [`recover`] for a caller that holds the workspace lock.
pub(super) fn recover_locked(root: &Path) -> Option<Recovery> {
    let mut tree = match Tree::open_for_recovery(root) {
        Ok(t) => t,
        Err(_) => return None,
    };
    let found = match intent::read(&mut tree) {
        Ok(None) => return None,
        Ok(Some(found)) => found,
        Err(e) => {
            return Some(Recovery {
                context: None,
                outcome: RecoveryOutcome::RolledBack,
                started_at: Utc::now(),
                files: 0,
                problems: vec![format!(
                    "{} could not be read ({e}); look for .rdesk-* files beside the files it names",
                    root.join(intent::RECORD_NAME).display()
                )],
            })
        }
    };
    let (intent, phase) = match found {
        // The record never got its first line down, so nothing else was touched.
        intent::Found::Torn => {
            let _ = intent::remove(&mut tree);
            return None;
        }
        intent::Found::Intent(intent, phase) => (intent, phase),
    };
    let (outcome, mut problems) = if phase == Phase::Committed {
        (RecoveryOutcome::Completed, rollback::clean_up(&mut tree, &intent, &|_, _| Ok(())))
    } else {
        (RecoveryOutcome::RolledBack, rollback::roll_back(&mut tree, &intent, phase))
    };
    if problems.is_empty() || outcome == RecoveryOutcome::Completed {
        if let Err(e) = intent::remove(&mut tree) {
            problems.push(format!("{} (remove it: {e})", root.join(intent::RECORD_NAME).display()));
        }
    }
    Some(Recovery {
        context: intent.context,
        outcome,
        started_at: intent.started_at,
        files: intent.ops.len(),
        problems,
    })
}

tokio::task_local! {
    /// The action being applied, set by `resolve` around an action's `apply`.
    pub(crate) static APPLYING: ApplyContext;
}

/// The action whose `apply` is running on this task, if any.
pub(crate) fn current_context() -> Option<ApplyContext> {
    APPLYING.try_with(Clone::clone).ok()
}
