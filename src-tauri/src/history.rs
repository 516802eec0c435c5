//! The History dialog's commands: a page of the search (`search_history`) and the export
//! (`export_history`), converted from the desk's (`resolve_desk_core::history`), which does
//! the work.

use std::path::Path;

use resolve_protocol as wire;
use wire::IpcError;

use crate::state::AppState;

pub async fn page(
    state: &AppState,
    q: &wire::HistoryQuery,
    offset: u32,
    limit: u32,
) -> Result<wire::HistoryPage, IpcError> {
    let desk = state.desk().await;
    let page =
        desk.search_history(q.clone(), offset as usize, limit as usize).await.map_err(crate::convert::desk_error)?;
    let mut entries: Vec<wire::HistoryEntry> =
        page.rows.iter().map(|r| crate::convert::history_entry(&r.entry, r.earlier_session)).collect();
    for e in &mut entries {
        // Who asked for each change: the client of the call that pushed it (the journal's pushes).
        e.asked_by = page.asked_by.get(&e.action_id).cloned();
    }
    // What each applied entry offers now: Undo, Redo, or nothing any more.
    crate::undo::annotate_with(&page.undo, &mut entries);
    Ok(wire::HistoryPage { entries, offset, total: page.total.min(u32::MAX as usize) as u32, tools: page.tools })
}

/// Writes every entry matching `q` to `path` as `format` (whole or not at all).
pub async fn export(
    state: &AppState,
    q: &wire::HistoryQuery,
    format: wire::ExportFormat,
    path: &Path,
) -> Result<wire::ExportOutcome, IpcError> {
    let desk = state.desk().await;
    let count = desk.export_history(q.clone(), format, path).await.map_err(crate::convert::desk_error)?;
    Ok(wire::ExportOutcome { path: path.display().to_string(), count: count.min(u32::MAX as usize) as u32 })
}
