//! Putting back, after a restart, the actions an earlier session of this workspace left
//! pending ([`Session::restore`]): a change set's action rebuilt as `from_change_set` made it
//! and checked against the disk, a stored closure orphaned. Nothing is applied.

use futures::FutureExt;
use serde_json::Value;

use crate::changeset::{ApplyError, Change, ChangeSet, ContentHash};
use crate::custom::CustomToolPendingAction;
use crate::pending::{ActionId, ActionStatus, PendingAction};
use crate::stored::{orphaned_apply_refusal, StoredAction, StoredBody, ORPHANED_MESSAGE};
use crate::tool::{ToolError, ToolResult};

use super::Session;

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

    /// Puts back the prior rounds of reviews an earlier session kept (a preview discarded
    /// with Request changes, whose agent had not answered yet), so the agent's next preview is
    /// still the next round with the person's comments beside their lines. An agent with a
    /// newer prior round keeps it. Returns the ids of those not put back (the kept data can
    /// be forgotten).
    pub fn restore_rounds(&self, rounds: Vec<(StoredAction, crate::rounds::StoredRound)>) -> Vec<ActionId> {
        let mut superseded = Vec::new();
        // Newest first, so an agent's newest prior round is the one it keeps.
        for (stored, round) in rounds.into_iter().rev() {
            let change_set = match &stored.body {
                StoredBody::ChangeSet { changes, .. } => rebuild_change_set(changes).map(std::sync::Arc::new),
                StoredBody::Orphaned => None,
            };
            let agent = round.agent.clone();
            let id = stored.id.clone();
            let prior = crate::rounds::PriorRound::from_stored(stored.id, change_set, round);
            if !self.store().restore_round(prior, agent) {
                superseded.push(id);
            }
        }
        superseded
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
        let StoredBody::ChangeSet { changes, renames, applied_text, discard_text, replacements, written_by } = body
        else {
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
        if let Some(agent) = written_by {
            built = built.written_by_agent(agent);
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
