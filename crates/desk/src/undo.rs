//! Undo and redo from the history: every applied change set's record is kept in the journal
//! (bounded by [`retention`]), so an apply can be undone (and redone) from the History, even
//! after a restart, through `Session::undo` (the normal apply: hash-pinned, atomic, journalled
//! as its own decision).
//!
//! The retention is a setting read from the environment: `RESOLVE_DESK_UNDO_KEEP` (entries,
//! default 200) and `RESOLVE_DESK_UNDO_MAX_MIB` (MiB, default 256).

use std::collections::HashMap;
use std::sync::Arc;

use resolve_engine::{Actor, ResolveAction, ResolveDetails, TranscriptEntry, Undo, UndoOutcome, RESOLVE_TOOL_NAME};
use resolve_journal::{UndoEntry, UndoRetention, UndoState, Writer};

use crate::error::{blocking, DeskError, DeskErrorCode};
use crate::Desk;

/// The retention setting: the defaults, or the environment's numbers.
pub fn retention() -> UndoRetention {
    let mut r = UndoRetention::default();
    let number = |name: &str| std::env::var(name).ok().and_then(|v| v.trim().parse::<u64>().ok());
    if let Some(n) = number("RESOLVE_DESK_UNDO_KEEP") {
        r.max_entries = n as usize;
    }
    if let Some(mib) = number("RESOLVE_DESK_UNDO_MAX_MIB") {
        r.max_bytes = mib.saturating_mul(1024 * 1024);
    }
    r
}

/// Called for every transcript entry: a successful apply of a change set has its undo data
/// queued for the journal (after its decision row).
pub fn keep(journal: &Arc<Writer>, root: &str, entry: &TranscriptEntry) {
    if entry.call.tool != RESOLVE_TOOL_NAME || entry.result.is_error || entry.relay_of.is_some() {
        return;
    }
    let (Some(record), Some(details)) = (entry.undo.clone(), entry.decision.clone()) else {
        return;
    };
    if details.action != ResolveAction::Apply {
        return;
    }
    let root = root.to_string();
    let at_ms = entry.at.timestamp_millis();
    // Weighed by the bytes it puts back, so the journal's bounded queue counts it right.
    journal.run_sized(
        record.held_bytes(),
        Box::new(move |j| {
            j.keep_undo(
                &root,
                &details.action_id,
                &details.label,
                &details.source_tool_name,
                at_ms,
                &record,
                retention(),
            )
        }),
    );
}

/// What an Undo or Redo from the history did.
#[derive(Debug, Clone, PartialEq)]
pub enum UndoResult {
    /// Reverted (or re-applied); journalled as its own decision.
    Done { details: ResolveDetails, text: String },
    /// Nothing was written because files changed since; the message names every one.
    Refused { message: String },
}

impl Desk {
    /// What each applied change set of this workspace offers now (undo data), by action id;
    /// empty without a journal or when the read fails.
    pub async fn undo_entries(&self) -> HashMap<String, UndoEntry> {
        let Some(writer) = self.journal().cloned() else { return HashMap::new() };
        let root = self.root().display().to_string();
        let read = blocking("the undo data read", move || {
            writer.flush();
            writer.journal().undo_entries(&root).map_err(|e| DeskError::new(DeskErrorCode::Io, e.to_string()))
        })
        .await;
        read.unwrap_or_else(|e| {
            eprintln!("resolve-desk: cannot read the undo data: {e}");
            HashMap::new()
        })
    }

    /// Undo (`ResolveAction::Undo`) or redo (`ResolveAction::Redo`) the applied action
    /// `decision_id` as the person: through the normal apply (hash-pinned, atomic, journalled
    /// as its own decision). A refusal that wrote nothing because files changed since is an
    /// outcome (noted in the journal); a decision that cannot be undone at all is an error.
    pub async fn undo(
        &self,
        direction: ResolveAction,
        decision_id: String,
        reason: String,
    ) -> Result<UndoResult, DeskError> {
        let verb = if direction == ResolveAction::Redo { "redo" } else { "undo" };
        if reason.trim().is_empty() {
            return Err(DeskError::new(
                DeskErrorCode::ReasonRequired,
                format!("A reason is required: say why you {verb} it."),
            ));
        }
        let Some(writer) = self.journal().cloned() else {
            return Err(DeskError::new(
                DeskErrorCode::InvalidParams,
                "Decisions here are not kept in a journal (the demo, or a journal that could not be opened: see the banner), \
                 so no undo data exists; nothing was written.",
            ));
        };
        let root = self.root().display().to_string();
        let (w, r, id) = (writer.clone(), root.clone(), decision_id.clone());
        let row = blocking("the undo data read", move || {
            w.flush();
            w.journal().undo_entry(&r, &id).map_err(|e| DeskError::new(DeskErrorCode::Io, e.to_string()))
        })
        .await?;
        let Some((entry, record)) = row else {
            return Err(DeskError::new(
                DeskErrorCode::UnknownDecision,
                format!("Decision {decision_id} has no undo data: only an applied change set (ast_edit, a batch rename, …) can be undone."),
            ));
        };
        let Some(record) = record else {
            let r = retention();
            return Err(DeskError::new(
                DeskErrorCode::InvalidParams,
                format!(
                    "\"{}\" can no longer be undone: its undo data expired by retention (the newest {} applies, {} MiB at most).",
                    entry.label,
                    r.max_entries,
                    r.max_bytes / (1024 * 1024)
                ),
            ));
        };
        let allowed = match direction {
            ResolveAction::Redo => entry.state == UndoState::Undone,
            _ => matches!(entry.state, UndoState::CanUndo | UndoState::Redone),
        };
        if !allowed {
            let now = if entry.state == UndoState::Undone { "undone" } else { "applied" };
            return Err(DeskError::new(
                DeskErrorCode::InvalidParams,
                format!("\"{}\" is {now} now, so it cannot be {verb}ne; reload the history.", entry.label),
            ));
        }
        let undo = Undo {
            direction,
            of_action_id: decision_id.clone(),
            label: entry.label.clone(),
            source_tool_name: entry.source_tool_name.clone(),
            record,
            reason,
        };
        match self.session().undo(Actor::Person, undo).await {
            UndoOutcome::Done { details, text, record } => {
                let done = if direction == ResolveAction::Redo { UndoState::Redone } else { UndoState::Undone };
                writer.run(Box::new(move |j| j.undo_done(&root, &decision_id, done, &record, retention())));
                Ok(UndoResult::Done { details, text })
            }
            UndoOutcome::Refused { message, changed } => {
                if !changed.is_empty() {
                    let note = message.clone();
                    writer.run(Box::new(move |j| j.undo_note(&root, &decision_id, Some(&note))));
                }
                Ok(UndoResult::Refused { message })
            }
        }
    }
}
