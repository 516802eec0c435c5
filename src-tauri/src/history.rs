//! The History dialog's reads: searched, filtered and paged (`search_history`), and
//! exported as JSON or CSV (`export_history`).
//!
//! With a journal (a real workspace), SQLite does the filtering and paging, after the
//! journal's writer has written everything queued; this session's entries stand in for their
//! rows ([`resolve_journal::Journal::search`]). Without one (the demo, or a journal that
//! could not be opened) the session's own entries are filtered in memory by the same rules.

use std::io::Write as _;
use std::path::Path;

use resolve_journal::{ExportFormat, HistoryQuery, Outcome, Page, Recorded};
use resolve_protocol as wire;
use wire::{IpcError, IpcErrorCode};

use crate::state::AppState;

/// The most entries one page may hold.
pub const MAX_PAGE: u32 = 1_000;

pub fn query(q: &wire::HistoryQuery) -> HistoryQuery {
    HistoryQuery {
        text: q.text.clone(),
        tool: q.tool.clone().filter(|t| !t.is_empty()),
        outcome: q.outcome.map(|o| match o {
            wire::HistoryOutcome::Applied => Outcome::Applied,
            wire::HistoryOutcome::Discarded => Outcome::Discarded,
            wire::HistoryOutcome::Failed => Outcome::Failed,
            wire::HistoryOutcome::Reverted => Outcome::Reverted,
        }),
        from_ms: q.from_ms,
        to_ms: q.to_ms,
    }
}

/// The matching entries from `offset` (at most `limit`), and every tool name.
pub async fn search(
    state: &AppState,
    q: HistoryQuery,
    offset: usize,
    limit: usize,
) -> Result<(Page, Vec<String>), IpcError> {
    let (session, is_demo) = state.session().await;
    let current = session.history();
    let Some(writer) = state.journal().cloned().filter(|_| !is_demo) else {
        let mut tools: Vec<String> = current.iter().map(|h| h.details.source_tool_name.clone()).collect();
        tools.sort();
        tools.dedup();
        let matching: Vec<Recorded> = current
            .into_iter()
            .filter(|h| q.matches(h))
            .map(|entry| Recorded { entry, earlier_session: false })
            .collect();
        let total = matching.len();
        let rows = matching.into_iter().skip(offset).take(limit).collect();
        return Ok((Page { rows, total }, tools));
    };
    let root = session.workspace().root().display().to_string();
    // SQLite blocks: off the async workers. Writes queued before this read come first.
    tauri::async_runtime::spawn_blocking(move || {
        writer.flush();
        let j = writer.journal();
        Ok((j.search(&root, &current, &q, offset, limit)?, j.tools(&root)?))
    })
    .await
    .map_err(|e| IpcError::new(IpcErrorCode::Internal, format!("The history read stopped: {e}")))?
    .map_err(|e: resolve_journal::JournalError| {
        IpcError::new(IpcErrorCode::Io, format!("Could not read the history: {e}"))
    })
}

pub async fn page(
    state: &AppState,
    q: &wire::HistoryQuery,
    offset: u32,
    limit: u32,
) -> Result<wire::HistoryPage, IpcError> {
    if limit == 0 || limit > MAX_PAGE {
        return Err(IpcError::new(
            IpcErrorCode::InvalidParams,
            format!("`limit` must be between 1 and {MAX_PAGE} entries; got {limit}. Ask for the rest with `offset`."),
        ));
    }
    let (page, tools) = search(state, query(q), offset as usize, limit as usize).await?;
    let mut entries: Vec<wire::HistoryEntry> =
        page.rows.iter().map(|r| crate::convert::history_entry(&r.entry, r.earlier_session)).collect();
    // Who asked for each change: the client of the call that pushed it (the journal's pushes).
    let asked = asked_by(state, entries.iter().map(|e| e.action_id.clone()).collect()).await;
    for e in &mut entries {
        e.asked_by = asked.get(&e.action_id).cloned();
    }
    // What each applied entry offers now: Undo, Redo, or nothing any more.
    crate::undo::annotate(state, &mut entries).await;
    Ok(wire::HistoryPage { entries, offset, total: page.total.min(u32::MAX as usize) as u32, tools })
}

/// The clients that asked for `ids` (see `Journal::asked_by`); empty for the demo, without a
/// journal, or when the read fails (the History still shows who decided).
async fn asked_by(state: &AppState, ids: Vec<String>) -> std::collections::HashMap<String, String> {
    let (session, is_demo) = state.session().await;
    let Some(writer) = state.journal().cloned().filter(|_| !is_demo) else { return Default::default() };
    let root = session.workspace().root().display().to_string();
    let read = tauri::async_runtime::spawn_blocking(move || writer.journal().asked_by(&root, &ids)).await;
    match read {
        Ok(Ok(map)) => map,
        Ok(Err(e)) => {
            eprintln!("resolve-desk: cannot read who asked for the history's actions: {e}");
            Default::default()
        }
        Err(e) => {
            eprintln!("resolve-desk: the read of who asked failed: {e}");
            Default::default()
        }
    }
}

/// Writes every entry matching `q` to `path` as `format`: to a temporary file beside it,
/// synced, then renamed over it, so `path` is either the old file or the whole export.
pub async fn export(
    state: &AppState,
    q: &wire::HistoryQuery,
    format: wire::ExportFormat,
    path: &Path,
) -> Result<wire::ExportOutcome, IpcError> {
    let (page, _) = search(state, query(q), 0, usize::MAX).await?;
    let format = match format {
        wire::ExportFormat::Json => ExportFormat::Json,
        wire::ExportFormat::Csv => ExportFormat::Csv,
    };
    let bytes = resolve_journal::export(&page.rows, format)
        .map_err(|e| IpcError::new(IpcErrorCode::Internal, e.to_string()))?;
    write_whole(path, &bytes).map_err(|e| {
        IpcError::new(
            IpcErrorCode::Io,
            format!("Could not write the export to {}: {e}. Choose another file.", path.display()),
        )
    })?;
    Ok(wire::ExportOutcome { path: path.display().to_string(), count: page.rows.len().min(u32::MAX as usize) as u32 })
}

fn write_whole(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    if path.file_name().is_none() {
        return Err(std::io::Error::new(std::io::ErrorKind::InvalidInput, "the path names no file"));
    }
    let mut tmp = tempfile::Builder::new().prefix(".rdesk-export-").tempfile_in(dir)?;
    tmp.write_all(bytes)?;
    tmp.as_file().sync_all()?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}
