//! Pending actions that survive a restart, and are never applied by one.
//!
//! A pending action built on a change set ([`CustomToolPendingAction::from_change_set`]) is
//! data: its change set (every change with the bytes the preview read and the bytes to
//! write, pinned to their hashes), its rename table, its label, source, details, origin
//! call, who pushed it, and the texts its apply and discard answer. [`StoredAction`] is that
//! data; a program keeps it somewhere durable (the journal) through the store's persistence
//! hook ([`PendingActionStore::set_persistence`]: every push is `Save`d, every decision or
//! `pop` is a `Remove`; `clear`, closing and dropping the session remove nothing).
//!
//! [`Session::restore`](crate::Session::restore) puts stored actions back when the workspace is opened again, in the
//! same LIFO order and with the same ids, rebuilding each change set's apply exactly as
//! `from_change_set` made it (same bytes, same result text). Each change set is checked
//! against the disk first: a file that changed while the program was closed makes the
//! action `stale` (same message as a stale apply). Nothing is ever applied by a restore.
//!
//! An action whose apply is a closure (a custom tool's code) cannot be stored; only its
//! label, source and details are, and it comes back [`ActionStatus::Orphaned`](crate::ActionStatus::Orphaned): `resolve`
//! refuses to apply it (nothing written, status kept) and discards it as any other action.
//!
//! [`CustomToolPendingAction::from_change_set`]: crate::CustomToolPendingAction::from_change_set
//! [`PendingActionStore::set_persistence`]: crate::PendingActionStore::set_persistence

use chrono::{DateTime, Utc};
use serde_json::Value;

use crate::changeset::{Change, ContentHash, FileChange};
use crate::vocab::{ActionId, RenameRow, ToolCall};

/// The status message of an orphaned action (the queue shows it; starts with the exact
/// words `Orphaned: can only be discarded`).
pub const ORPHANED_MESSAGE: &str =
    "Orphaned: can only be discarded. Its apply was code that could not be stored when the \
     desk closed, so it cannot be applied after a restart; nothing was applied. Discard it, or run its preview again.";

/// What rebuilds a change set's apply and discard after a restart (set by
/// `from_change_set` and `with_discard_text`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Recipe {
    pub applied_text: String,
    pub discard_text: Option<String>,
    /// The agent that writes the change itself once the person approves it (an outside
    /// agent's own edit tool, gated by a hook): Apply then checks the files and writes
    /// nothing (see [`CustomToolPendingAction::written_by_agent`](crate::CustomToolPendingAction::written_by_agent)).
    pub written_by: Option<String>,
}

/// A pending action as data: everything needed to show it again and, for a change set, to
/// apply it with the same bytes and the same result text.
#[derive(Debug, Clone)]
pub struct StoredAction {
    pub id: ActionId,
    pub label: String,
    pub source_tool_name: String,
    pub details: Option<Value>,
    pub created_at: DateTime<Utc>,
    /// The tool call that produced it ("run the preview again" repeats it).
    pub origin: Option<ToolCall>,
    pub pushed_by: Option<String>,
    pub body: StoredBody,
    /// The person's comments on it so far (drafts until the decision), in file order.
    pub comments: Vec<crate::review::Comment>,
    /// Its review round and the files marked viewed.
    pub review: crate::rounds::ReviewState,
}

/// What a stored action does when applied.
#[derive(Debug, Clone)]
pub enum StoredBody {
    /// A change set's apply: `changes` in order (with their bytes and previewed hashes), the
    /// rename table if it had one, the text a successful apply answers, and the discard
    /// text (`<text> Reason: <reason>`) if it set one with `with_discard_text`.
    ChangeSet {
        changes: Vec<Change>,
        renames: Option<Vec<RenameRow>>,
        applied_text: String,
        discard_text: Option<String>,
        /// The single replacements of its `ast_edit` edits, by path (partial apply; empty
        /// when none). Re-attached on restore only if they still rebuild the edit exactly.
        replacements: Vec<(String, crate::changeset::Replacements)>,
        /// The agent that writes it itself once approved (an outside agent's gated edit).
        written_by: Option<String>,
    },
    /// A closure that could not be stored: restored as [`ActionStatus::Orphaned`](crate::ActionStatus::Orphaned).
    Orphaned,
}

/// One file of a push, as the journal records it: the path, the path it is renamed from,
/// what the change does, and the hash of the bytes the preview read (none for a creation).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PreviewedFile {
    pub path: String,
    pub from: Option<String>,
    pub change: FileChange,
    pub previewed_hash: Option<ContentHash>,
}

impl StoredAction {
    /// The files the preview read or will create, in change order (empty when orphaned).
    pub fn previewed_files(&self) -> Vec<PreviewedFile> {
        let StoredBody::ChangeSet { changes, .. } = &self.body else { return Vec::new() };
        changes
            .iter()
            .map(|c| match c {
                Change::Edit { path, before_hash, .. } => PreviewedFile {
                    path: path.clone(),
                    from: None,
                    change: FileChange::Modified,
                    previewed_hash: Some(*before_hash),
                },
                Change::Create { path, .. } => {
                    PreviewedFile { path: path.clone(), from: None, change: FileChange::Added, previewed_hash: None }
                }
                Change::Delete { path, before_hash, .. } => PreviewedFile {
                    path: path.clone(),
                    from: None,
                    change: FileChange::Deleted,
                    previewed_hash: Some(*before_hash),
                },
                Change::Rename { from, to, before_hash, .. } => PreviewedFile {
                    path: to.clone(),
                    from: Some(from.clone()),
                    change: FileChange::Renamed,
                    previewed_hash: Some(*before_hash),
                },
            })
            .collect()
    }
}

/// What the store tells its persistence hook, in store order.
#[derive(Debug, Clone)]
// One value per push, handed on at once: boxing the large variant would buy nothing.
#[allow(clippy::large_enum_variant)]
pub enum Persist {
    /// Pushed: keep it.
    Save(StoredAction),
    /// Left the stack by a decision (apply or discard) or `pop`: forget it.
    Remove { id: ActionId },
    /// Its comments changed: keep this list (in file order) instead of the one kept.
    Comments { id: ActionId, comments: Vec<crate::review::Comment> },
    /// Its viewed marks changed: keep this review state instead of the one kept.
    Review { id: ActionId, state: crate::rounds::ReviewState },
    /// Discarded with "Request changes": keep it (its changes are the previous proposal)
    /// as the prior round of `round.agent`'s review; the `Remove` that follows leaves it.
    Round { id: ActionId, round: crate::rounds::StoredRound },
    /// Its agent pushed the next round (or a newer Request changes replaced it): forget it.
    RoundTaken { id: ActionId },
}

/// The store's persistence hook (see [`crate::PendingActionStore::set_persistence`]).
pub type PersistFn = Box<dyn Fn(Persist) + Send + Sync>;

/// What `resolve` answers when asked to apply an orphaned action: nothing is written and the
/// action stays, orphaned.
pub(crate) fn orphaned_apply_refusal(id: &str, label: &str, message: &str) -> String {
    if message != ORPHANED_MESSAGE {
        // Orphaned for another reason (an external tool's process died): its own message.
        return format!("Cannot apply \"{label}\" ({id}): {message}");
    }
    format!(
        "Cannot apply \"{label}\" ({id}): it is orphaned, restored after a restart without its apply (code that \
         could not be stored). Nothing was written; discard it, or run its preview again."
    )
}
