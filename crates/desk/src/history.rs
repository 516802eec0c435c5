//! The history of a workspace's decisions: searched, filtered and paged, and exported as JSON
//! or CSV.
//!
//! With a journal (a real workspace), SQLite does the filtering and paging, after the
//! journal's writer has written everything queued; this session's entries stand in for their
//! rows ([`resolve_journal::Journal::search`]). Without one (the demo, a one-shot command, a
//! journal that could not be opened) the session's own entries are filtered in memory by the
//! same rules.

use std::collections::HashMap;
use std::io::Write as _;
use std::path::Path;

use resolve_journal::{ExportFormat, Filter, HistoryQuery, Page, Recorded, UndoEntry};

use crate::error::{blocking, DeskError, DeskErrorCode};
use crate::Desk;

/// The most entries one page may hold.
pub const MAX_PAGE: usize = 1_000;

/// One page of the history, with what the window shows beside each entry.
#[derive(Debug, Clone, Default)]
pub struct HistoryPage {
    /// Newest first.
    pub rows: Vec<Recorded>,
    /// How many entries match in all.
    pub total: usize,
    /// Every tool name in the workspace's history (for the filter).
    pub tools: Vec<String>,
    /// The client that asked for each action (the journal's pushes), by action id.
    pub asked_by: HashMap<String, String>,
    /// What each applied change set offers now (undo data), by action id.
    pub undo: HashMap<String, UndoEntry>,
}

impl Desk {
    /// Decisions in this workspace, newest first (at most `limit`): the journal's merged
    /// history (this session's and earlier ones), or this session's without a journal.
    pub async fn history(&self, limit: usize) -> Vec<Recorded> {
        let current = self.session().history();
        let this_session = |current: Vec<resolve_engine::HistoryEntry>| {
            current.into_iter().map(|entry| Recorded { entry, earlier_session: false }).collect()
        };
        let Some(writer) = self.journal().cloned() else { return this_session(current) };
        let root = self.root().display().to_string();
        let entries = current.clone();
        let rows = blocking("the history read", move || {
            writer.flush();
            writer
                .journal()
                .history(&root, &entries, limit)
                .map_err(|e| DeskError::new(DeskErrorCode::Io, e.to_string()))
        })
        .await;
        match rows {
            Ok(rows) => rows,
            Err(e) => {
                eprintln!("resolve-desk: {e}");
                this_session(current)
            }
        }
    }

    /// The entries matching `q` from `offset` (at most `limit`, 1 to [`MAX_PAGE`]).
    pub async fn search_history(&self, q: HistoryQuery, offset: usize, limit: usize) -> Result<HistoryPage, DeskError> {
        if limit == 0 || limit > MAX_PAGE {
            return Err(DeskError::new(
                DeskErrorCode::InvalidParams,
                format!(
                    "`limit` must be between 1 and {MAX_PAGE} entries; got {limit}. Ask for the rest with `offset`."
                ),
            ));
        }
        let mut page = self.matching(q, offset, limit).await?;
        let ids: Vec<String> = page.rows.iter().map(|r| r.entry.details.action_id.clone()).collect();
        page.asked_by = self.asked_by(ids).await;
        page.undo = self.undo_entries().await;
        Ok(page)
    }

    /// Writes every entry matching `q` to `path` as `format`: to a temporary file beside it,
    /// synced, then renamed over it, so `path` is either the old file or the whole export.
    /// Returns how many entries were written. (CSV cells a spreadsheet would run as formulas
    /// are neutralised by the journal's export.)
    pub async fn export_history(&self, q: HistoryQuery, format: ExportFormat, path: &Path) -> Result<usize, DeskError> {
        let page = self.matching(q, 0, usize::MAX).await?;
        let bytes = resolve_journal::export(&page.rows, format)
            .map_err(|e| DeskError::new(DeskErrorCode::Internal, e.to_string()))?;
        write_whole(path, &bytes).map_err(|e| {
            DeskError::new(
                DeskErrorCode::Io,
                format!("Could not write the export to {}: {e}. Choose another file.", path.display()),
            )
        })?;
        Ok(page.rows.len())
    }

    async fn matching(&self, mut q: HistoryQuery, offset: usize, limit: usize) -> Result<HistoryPage, DeskError> {
        // An empty tool name (the tool menu's "all tools") filters nothing.
        q.tool = q.tool.filter(|t| !t.is_empty());
        let current = self.session().history();
        let Some(writer) = self.journal().cloned() else {
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
            return Ok(HistoryPage { rows, total, tools, ..HistoryPage::default() });
        };
        let root = self.root().display().to_string();
        let (Page { rows, total }, tools) = blocking("the history read", move || {
            writer.flush();
            let j = writer.journal();
            let read = || Ok((j.search(&root, &current, &q, offset, limit)?, j.tools(&root)?));
            read().map_err(|e: resolve_journal::JournalError| {
                DeskError::new(DeskErrorCode::Io, format!("Could not read the history: {e}"))
            })
        })
        .await?;
        Ok(HistoryPage { rows, total, tools, ..HistoryPage::default() })
    }

    /// The clients that asked for `ids` (see `Journal::asked_by`); empty without a journal, or
    /// when the read fails (the history still shows who decided).
    async fn asked_by(&self, ids: Vec<String>) -> HashMap<String, String> {
        let Some(writer) = self.journal().cloned() else { return HashMap::new() };
        let root = self.root().display().to_string();
        let read = blocking("the read of who asked", move || {
            writer.journal().asked_by(&root, &ids).map_err(|e| DeskError::new(DeskErrorCode::Io, e.to_string()))
        })
        .await;
        read.unwrap_or_else(|e| {
            eprintln!("resolve-desk: cannot read who asked for the history's actions: {e}");
            HashMap::new()
        })
    }
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
