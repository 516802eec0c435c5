//! Undo and redo from the history: the undo data of every applied change set is kept in the
//! decision journal (`resolve_journal::undo`), an Undo click reverts through
//! `Session::undo` (the normal apply: hash-pinned, atomic, journalled as its own decision),
//! and the history says what each applied entry offers now.
//!
//! The undo data is kept by the desk's journal mirror (`resolve_desk_core::undo`, with its
//! retention setting).

use resolve_engine::{Actor, ResolveAction, Undo, UndoOutcome};
use resolve_journal::UndoState;
use resolve_protocol as wire;
use wire::{IpcError, IpcErrorCode};

use crate::state::AppState;

use resolve_desk_core::undo::retention;

/// Adds what each applied entry of `history` offers now (Undo, Redo, expired).
pub async fn annotate(state: &AppState, history: &mut [wire::HistoryEntry]) {
    let (session, is_demo) = state.session().await;
    let Some(writer) = state.journal().cloned().filter(|_| !is_demo) else { return };
    let root = session.workspace().root().display().to_string();
    let read = tauri::async_runtime::spawn_blocking(move || {
        writer.flush();
        writer.journal().undo_entries(&root)
    })
    .await;
    let entries = match read {
        Ok(Ok(e)) => e,
        Ok(Err(e)) => {
            eprintln!("resolve-desk: cannot read the undo data: {e}");
            return;
        }
        Err(e) => {
            eprintln!("resolve-desk: the undo data read failed: {e}");
            return;
        }
    };
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
    let verb = if direction == ResolveAction::Redo { "redo" } else { "undo" };
    if reason.trim().is_empty() {
        return Err(IpcError::new(
            IpcErrorCode::ReasonRequired,
            format!("A reason is required: say why you {verb} it."),
        ));
    }
    let (session, is_demo) = state.session().await;
    if is_demo {
        return Err(IpcError::new(
            IpcErrorCode::InvalidParams,
            "The demo's decisions are not kept, so they cannot be undone; open a folder to undo applies there.",
        ));
    }
    let Some(writer) = state.journal().cloned() else {
        return Err(IpcError::new(
            IpcErrorCode::Io,
            "The decision journal is not open (see the banner), so no undo data is kept; nothing was written.",
        ));
    };
    let root = session.workspace().root().display().to_string();
    let (w, r, id) = (writer.clone(), root.clone(), decision_id.clone());
    let row = tauri::async_runtime::spawn_blocking(move || {
        w.flush();
        w.journal().undo_entry(&r, &id)
    })
    .await
    .map_err(|e| IpcError::new(IpcErrorCode::Internal, format!("the undo data read failed: {e}")))?
    .map_err(|e| IpcError::new(IpcErrorCode::Io, e.to_string()))?;
    let Some((entry, record)) = row else {
        return Err(IpcError::new(
            IpcErrorCode::UnknownAction,
            format!("Decision {decision_id} has no undo data: only an applied change set (ast_edit, a batch rename, …) can be undone."),
        ));
    };
    let Some(record) = record else {
        let r = retention();
        return Err(IpcError::new(
            IpcErrorCode::InvalidParams,
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
        return Err(IpcError::new(
            IpcErrorCode::InvalidParams,
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
    match session.undo(Actor::Person, undo).await {
        UndoOutcome::Done { details, text, record } => {
            let done = if direction == ResolveAction::Redo { UndoState::Redone } else { UndoState::Undone };
            writer.run(Box::new(move |j| j.undo_done(&root, &decision_id, done, &record, retention())));
            Ok(wire::ResolveOutcome {
                is_error: false,
                text,
                details: Some(crate::convert::resolve_details(&details)),
                status: None,
            })
        }
        UndoOutcome::Refused { message, changed } => {
            if !changed.is_empty() {
                let note = message.clone();
                writer.run(Box::new(move |j| j.undo_note(&root, &decision_id, Some(&note))));
            }
            Ok(wire::ResolveOutcome { is_error: true, text: message, details: None, status: None })
        }
    }
}
