//! Crash recovery: an apply interrupted by a killed process (power loss, `kill -9`, a crash)
//! is finished on the next open of its workspace. The apply's durable intent record says
//! which files, temporary and backup names, and how far the commit got; recovery rolls
//! everything back (or, when the record says the commit completed, finishes the clean-up)
//! and removes every temporary file.
//!
//! The record is read as untrusted input (`super::record_check`): one the desk could not have
//! written here (another owner, not 0600, a link, a name with `..`, a name it does not make,
//! an unknown format) is [`RecoveryOutcome::Refused`] and nothing is touched. A record whose
//! rollback could not put everything back is [`RecoveryOutcome::Incomplete`]: it stays, and
//! every later recovery of it is cautious (`super::rollback::Care`).

use std::path::Path;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::fsops::Tree;
use super::intent::{self, Phase, Record};
use super::lock::WorkspaceLock;
pub use super::record_check::{Refusal, RefusalReason, MAX_RECORD_BYTES};
use super::rollback::{self, Care};

use crate::vocab::Actor;
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

/// How an interrupted apply was finished, or why it was not touched.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RecoveryOutcome {
    /// Every file was put back as it was before the apply.
    RolledBack,
    /// The record shows every file had been written; only the clean-up was finished.
    Completed,
    /// Some files could not be put back (`Recovery::problems` says where they are); the
    /// record stays, so the next open tries again, without replacing anything.
    Incomplete,
    /// The record is not one Resolve Desk could have written here: nothing was touched.
    Refused(Refusal),
}

/// What recovery did in a workspace.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Recovery {
    /// The interrupted action, when the record says.
    pub context: Option<ApplyContext>,
    pub outcome: RecoveryOutcome,
    /// When the interrupted apply started (for a refused record: when it was last written).
    pub started_at: DateTime<Utc>,
    /// How many files the apply touched (0 for a refused record).
    pub files: usize,
    /// What could not be put back, and where it is, or what was left as it is and should be
    /// checked (empty when everything was restored).
    pub problems: Vec<String>,
}

impl Recovery {
    /// The reason an interrupted action is recorded with in the history.
    pub const REASON: &'static str = "interrupted";

    /// The record was refused: nothing was done, and this is not an interrupted apply (do
    /// not journal it as one).
    pub fn refused(&self) -> bool {
        matches!(self.outcome, RecoveryOutcome::Refused(_))
    }

    /// Why the record was refused, when it was.
    pub fn refusal(&self) -> Option<&Refusal> {
        match &self.outcome {
            RecoveryOutcome::Refused(r) => Some(r),
            RecoveryOutcome::RolledBack | RecoveryOutcome::Completed | RecoveryOutcome::Incomplete => None,
        }
    }

    /// One human sentence (or a few) for a banner or a line on stderr.
    pub fn message(&self) -> String {
        if let RecoveryOutcome::Refused(r) = &self.outcome {
            return format!(
                "The apply record {} was refused, because {}. {}",
                r.record.display(),
                r.reason,
                r.what_to_do()
            );
        }
        let what = match &self.context {
            Some(c) => format!("Applying \"{}\"", c.label),
            None => "An apply".to_string(),
        };
        let when = self.started_at.format("%Y-%m-%d %H:%M:%S UTC");
        let files = |one, many| crate::changeset::plural(self.files, one, many);
        let mut text = match self.outcome {
            RecoveryOutcome::RolledBack => format!(
                "{what} was interrupted (started {when}): {} restored as before the apply, and its temporary files were removed.",
                files("file was", "files were")
            ),
            RecoveryOutcome::Completed => format!(
                "{what} was interrupted (started {when}): its {} had all been written, so only the clean-up was finished, and its temporary files were removed.",
                files("file", "files")
            ),
            RecoveryOutcome::Incomplete => format!(
                "{what} was interrupted (started {when}) and could not be undone completely; its record {} and temporary files are kept, and no file you can see was replaced or removed.",
                intent::RECORD_NAME
            ),
            RecoveryOutcome::Refused(_) => String::new(),
        };
        if !self.problems.is_empty() {
            text.push_str(&format!(" Check these by hand: {}.", self.problems.join("; ")));
        }
        if self.outcome == RecoveryOutcome::Incomplete {
            text.push_str(&format!(
                " Opening this folder again tries again; or, once you have put these files right, delete {}.",
                intent::RECORD_NAME
            ));
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
    let record = root.join(intent::RECORD_NAME);
    let found = match intent::read(&mut tree) {
        Ok(None) => return None,
        Ok(Some(found)) => found,
        Err(reason) => {
            let started_at = std::fs::symlink_metadata(&record)
                .and_then(|m| m.modified())
                .map(DateTime::<Utc>::from)
                .unwrap_or_else(|_| Utc::now());
            return Some(Recovery {
                context: None,
                outcome: RecoveryOutcome::Refused(Refusal { record, reason }),
                started_at,
                files: 0,
                problems: Vec::new(),
            });
        }
    };
    let (intent, phase, incomplete) = match found {
        // The record never got its first line down, so nothing else was touched.
        intent::Found::Torn => {
            let _ = intent::remove(&mut tree);
            return None;
        }
        intent::Found::Intent { intent, phase, rollback_incomplete } => (intent, phase, rollback_incomplete),
    };
    // Every folder it names must open beneath the root without a symlink (or be missing).
    for folder in super::record_check::folders(&intent) {
        if let Err(e) = tree.dir(folder) {
            if e.kind() != std::io::ErrorKind::NotFound {
                let reason = RefusalReason::Folder { folder: folder.to_string(), why: e.to_string() };
                return Some(Recovery {
                    context: None,
                    outcome: RecoveryOutcome::Refused(Refusal { record, reason }),
                    started_at: intent.started_at,
                    files: 0,
                    problems: Vec::new(),
                });
            }
        }
    }
    let (mut outcome, mut problems) = if phase == Phase::Committed {
        (RecoveryOutcome::Completed, rollback::clean_up(&mut tree, &intent, &|_, _| Ok(())))
    } else {
        let care = if incomplete { Care::Cautious } else { Care::Normal };
        let undone = rollback::roll_back(&mut tree, &intent, phase, care);
        if undone.failed.is_empty() {
            (RecoveryOutcome::RolledBack, undone.left)
        } else {
            if !incomplete {
                if let Err(e) = Record::reopen(&mut tree).and_then(|mut r| r.mark_rollback_incomplete(&mut tree)) {
                    let mut failed = undone.failed;
                    failed.push(format!("{} (could not be marked: {e})", record.display()));
                    return Some(incomplete_recovery(*intent, failed, undone.left));
                }
            }
            return Some(incomplete_recovery(*intent, undone.failed, undone.left));
        }
    };
    if let Err(e) = intent::remove(&mut tree) {
        problems.push(format!("{} (remove it: {e})", record.display()));
        if outcome == RecoveryOutcome::RolledBack {
            outcome = RecoveryOutcome::Incomplete;
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

fn incomplete_recovery(intent: intent::Intent, mut failed: Vec<String>, left: Vec<String>) -> Recovery {
    failed.extend(left);
    Recovery {
        context: intent.context,
        outcome: RecoveryOutcome::Incomplete,
        started_at: intent.started_at,
        files: intent.ops.len(),
        problems: failed,
    }
}
