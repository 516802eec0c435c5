//! Undo and redo from the history, converted from the desk's (`resolve_desk_core::undo`,
//! which keeps the undo data in the journal and reverts through the normal apply).

use std::collections::HashMap;

use resolve_desk_core::UndoResult;
use resolve_engine::ResolveAction;
use resolve_journal::{UndoEntry, UndoState};
use resolve_protocol as wire;
use wire::IpcError;

use crate::state::AppState;

/// Adds what each applied entry of `history` offers now (Undo, Redo, expired).
pub async fn annotate(state: &AppState, history: &mut [wire::HistoryEntry]) {
    let entries = state.desk().await.undo_entries().await;
    annotate_with(&entries, history);
}

/// [`annotate`] with the undo data already read.
pub fn annotate_with(entries: &HashMap<String, UndoEntry>, history: &mut [wire::HistoryEntry]) {
    for h in history.iter_mut() {
        if h.action != wire::ResolveChoice::Apply || h.is_error {
            continue;
        }
        if let Some(e) = entries.get(&h.action_id) {
            let state = match e.state {
                UndoState::CanUndo | UndoState::Redone => wire::UndoState::CanUndo,
                UndoState::Undone => wire::UndoState::Undone,
                UndoState::Expired => wire::UndoState::Expired,
            };
            h.undo = Some(wire::UndoInfo { state, note: e.note.clone() });
        }
    }
}

/// `undo_decision` / `redo_decision`: reverts the applied action `decision_id` (or its undo).
/// Refusals that write nothing because files changed since are outcomes (`isError`, the
/// message naming every file); a decision that cannot be undone at all is a command error.
pub async fn run(
    state: &AppState,
    direction: ResolveAction,
    decision_id: String,
    reason: String,
) -> Result<wire::ResolveOutcome, IpcError> {
    let desk = state.desk().await;
    match desk.undo(direction, decision_id, reason).await.map_err(crate::convert::desk_error)? {
        UndoResult::Done { details, text } => Ok(wire::ResolveOutcome {
            is_error: false,
            text,
            details: Some(crate::convert::resolve_details(&details)),
            status: None,
        }),
        UndoResult::Refused { message } => {
            Ok(wire::ResolveOutcome { is_error: true, text: message, details: None, status: None })
        }
    }
}
