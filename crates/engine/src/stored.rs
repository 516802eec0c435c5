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
//! [`Session::restore`] puts stored actions back when the workspace is opened again, in the
//! same LIFO order and with the same ids, rebuilding each change set's apply exactly as
//! `from_change_set` made it (same bytes, same result text). Each change set is checked
//! against the disk first: a file that changed while the program was closed makes the
//! action `stale` (same message as a stale apply). Nothing is ever applied by a restore.
//!
//! An action whose apply is a closure (a custom tool's code) cannot be stored; only its
//! label, source and details are, and it comes back [`ActionStatus::Orphaned`]: `resolve`
//! refuses to apply it (nothing written, status kept) and discards it as any other action.
//!
//! [`CustomToolPendingAction::from_change_set`]: crate::CustomToolPendingAction::from_change_set
//! [`PendingActionStore::set_persistence`]: crate::PendingActionStore::set_persistence

use chrono::{DateTime, Utc};
use futures::FutureExt;
use serde_json::Value;

use crate::changeset::{ApplyError, Change, ChangeKind, ChangeSet, ContentHash};
use crate::custom::CustomToolPendingAction;
use crate::pending::{ActionId, ActionStatus, PendingAction, RenameRow};
use crate::session::{Session, ToolCall};
use crate::tool::{ToolError, ToolResult};

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
    },
    /// A closure that could not be stored: restored as [`ActionStatus::Orphaned`].
    Orphaned,
}

/// One file of a push, as the journal records it: the path, the path it is renamed from,
/// what the change does, and the hash of the bytes the preview read (none for a creation).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PreviewedFile {
    pub path: String,
    pub from: Option<String>,
    pub change: ChangeKind,
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
                    change: ChangeKind::Modified,
                    previewed_hash: Some(*before_hash),
                },
                Change::Create { path, .. } => {
                    PreviewedFile { path: path.clone(), from: None, change: ChangeKind::Added, previewed_hash: None }
                }
                Change::Delete { path, before_hash, .. } => PreviewedFile {
                    path: path.clone(),
                    from: None,
                    change: ChangeKind::Deleted,
                    previewed_hash: Some(*before_hash),
                },
                Change::Rename { from, to, before_hash, .. } => PreviewedFile {
                    path: to.clone(),
                    from: Some(from.clone()),
                    change: ChangeKind::Renamed,
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
}

/// The store's persistence hook (see [`crate::PendingActionStore::set_persistence`]).
pub type PersistFn = Box<dyn Fn(Persist) + Send + Sync>;

impl PendingAction {
    /// This action as data. A change set's action keeps everything its apply needs; any
    /// other is stored as label, source and details only ([`StoredBody::Orphaned`]).
    pub fn to_stored(&self) -> StoredAction {
        let body = match (&self.change_set, &self.recipe) {
            (Some(cs), Some(recipe)) => StoredBody::ChangeSet {
                changes: cs.changes().to_vec(),
                renames: self.renames.as_ref().map(|r| r.to_vec()),
                applied_text: recipe.applied_text.clone(),
                discard_text: recipe.discard_text.clone(),
                replacements: cs
                    .changes()
                    .iter()
                    .filter_map(|c| cs.replacements(c.path()).map(|r| (c.path().to_string(), (**r).clone())))
                    .collect(),
            },
            _ => StoredBody::Orphaned,
        };
        StoredAction {
            id: self.id.clone(),
            label: self.label.clone(),
            source_tool_name: self.source_tool_name.clone(),
            details: self.details.clone(),
            created_at: self.created_at,
            origin: self.origin.clone(),
            pushed_by: self.pushed_by.clone(),
            body,
            comments: Vec::new(),
            review: crate::rounds::ReviewState::default(),
        }
    }
}

/// What [`Session::restore`] did with each stored action, in the order given.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RestoreReport {
    /// Put back, with the status it was given (`pending`, `stale` or `orphaned`).
    pub restored: Vec<(ActionId, ActionStatus)>,
    /// Not put back: `(id, why)` (an id already on the stack). It stays stored.
    pub refused: Vec<(ActionId, String)>,
}

impl RestoreReport {
    /// One line for a log: how many came back, how many are stale or orphaned.
    pub fn summary(&self) -> String {
        let count = |kind: &str| self.restored.iter().filter(|(_, s)| s.as_str() == kind).count();
        let mut text = format!(
            "restored {} pending (stale: {}, orphaned: {}); nothing was applied",
            crate::changeset::plural(self.restored.len(), "action", "actions"),
            count("stale"),
            count("orphaned")
        );
        for (id, why) in &self.refused {
            text.push_str(&format!("; {id} not restored: {why}"));
        }
        text
    }
}

impl Session {
    /// Puts back actions stored by an earlier session of this workspace (`actions` bottom
    /// first, i.e. in push order), below anything on the stack, with their ids. A change
    /// set's action is rebuilt as `from_change_set` made it and checked against the disk: a
    /// file that changed since the preview makes it `stale`. A stored closure comes back
    /// `orphaned`. Nothing is applied, and nothing is saved again through the persistence
    /// hook (the actions are stored already).
    pub fn restore(&self, actions: Vec<StoredAction>) -> RestoreReport {
        type Rebuilt = (PendingAction, ActionStatus, Vec<crate::review::Comment>, crate::rounds::ReviewState);
        let rebuilt: Vec<Rebuilt> = actions
            .into_iter()
            .map(|mut a| {
                let comments = std::mem::take(&mut a.comments);
                let review = std::mem::take(&mut a.review);
                let (action, status) = self.rebuild(a);
                (action, status, comments, review)
            })
            .collect();
        let statuses: Vec<ActionStatus> = rebuilt.iter().map(|(_, s, _, _)| s.clone()).collect();
        let mut report = RestoreReport::default();
        for (outcome, status) in self.store().restore_entries(rebuilt).into_iter().zip(statuses) {
            match outcome {
                Ok(id) => report.restored.push((id, status)),
                Err(id) => report.refused.push((
                    id.clone(),
                    format!("an action with the id {id} is already on the stack; it was left stored"),
                )),
            }
        }
        report
    }

    fn rebuild(&self, stored: StoredAction) -> (PendingAction, ActionStatus) {
        let StoredAction {
            id,
            label,
            source_tool_name,
            details,
            created_at,
            origin,
            pushed_by,
            body,
            comments: _,
            review: _,
        } = stored;
        let orphan = |label: String, details: Option<Value>| {
            let refusal = orphaned_apply_refusal(&id, &label, ORPHANED_MESSAGE);
            let action = PendingAction {
                id: id.clone(),
                label,
                source_tool_name: source_tool_name.clone(),
                details,
                created_at,
                origin: origin.clone(),
                pushed_by: pushed_by.clone(),
                change_set: None,
                renames: None,
                apply: Box::new(move |_reason| {
                    let refusal = refusal.clone();
                    async move { Err::<ToolResult, _>(ToolError::Failed(refusal)) }.boxed()
                }),
                reject: None,
                recipe: None,
            };
            (action, ActionStatus::Orphaned { message: ORPHANED_MESSAGE.to_string() })
        };
        let StoredBody::ChangeSet { changes, renames, applied_text, discard_text, replacements } = body else {
            return orphan(label, details);
        };
        let Some(mut change_set) = rebuild_change_set(&changes) else {
            // The stored bytes no longer match their hashes: never applied, shown, discardable.
            return orphan(label, details);
        };
        for (path, reps) in replacements {
            // Checked again: kept only if they rebuild the stored edit exactly.
            change_set.set_replacements(&path, reps);
        }
        let status = match change_set.verify_on_disk(self.workspace()) {
            Err(e @ ApplyError::Stale { .. }) => ActionStatus::Stale { files: e.stale_files(), message: e.to_string() },
            // Anything else (read-only, busy...) is said by the apply itself, as for any action.
            Ok(()) | Err(_) => ActionStatus::Pending,
        };
        let mut built =
            CustomToolPendingAction::from_change_set(label.clone(), change_set, self.workspace().clone(), applied_text);
        if let Some(text) = discard_text {
            built = built.with_discard_text(text);
        }
        if let Some(rows) = renames {
            built = built.with_renames(rows);
        }
        let (apply, reject, change_set, renames, recipe) = built.into_parts();
        let action = PendingAction {
            id,
            label,
            source_tool_name,
            details,
            created_at,
            origin,
            pushed_by,
            change_set,
            renames,
            apply,
            reject,
            recipe,
        };
        (action, status)
    }
}

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

/// The change set of stored changes, or `None` when a stored hash does not match its bytes.
fn rebuild_change_set(changes: &[Change]) -> Option<ChangeSet> {
    let mut cs = ChangeSet::new();
    for change in changes {
        match change {
            Change::Edit { path, before, before_hash, after } => {
                if ContentHash::of(before) != *before_hash {
                    return None;
                }
                cs.edit(path.clone(), before.clone(), after.clone());
            }
            Change::Create { path, contents } => {
                cs.create(path.clone(), contents.clone());
            }
            Change::Delete { path, before, before_hash } => {
                if ContentHash::of(before) != *before_hash {
                    return None;
                }
                cs.delete(path.clone(), before.clone());
            }
            Change::Rename { from, to, kind, before_hash } => {
                cs.rename(from.clone(), to.clone(), *kind, *before_hash);
            }
        }
    }
    Some(cs)
}
