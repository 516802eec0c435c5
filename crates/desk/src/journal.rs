//! The journal's part in an open desk: pending actions put back from an earlier session, and
//! from then on every push mirrored and every decision (with its undo data) recorded.

use std::path::Path;
use std::sync::Arc;

use resolve_engine::{HistoryEntry, Recovery, RestoreReport, Session};
use resolve_journal::{Decision, Journal, JournalError, WriteReport, Writer};

/// The journal's file in a data folder (the window's `--data-dir`, `rdesk mcp --data-dir`).
pub const JOURNAL_FILE: &str = "journal.sqlite3";

/// Opens the journal of the data folder `data_dir` (made if missing) and starts its writer
/// thread; `report` is called on that thread after each write (the window shows a failed one
/// as a banner, `rdesk` on stderr).
pub fn open_writer(data_dir: &Path, report: WriteReport) -> Result<Arc<Writer>, JournalError> {
    let journal = Journal::open(&data_dir.join(JOURNAL_FILE))?;
    Writer::spawn(Arc::new(journal), report).map(Arc::new)
}

/// Puts back the pending actions the journal keeps for the session's workspace, in order,
/// re-checked against the disk; nothing is applied. SQLite blocks: run off the async workers,
/// after the writes queued so far.
pub async fn restore(session: &Arc<Session>, journal: &Arc<Writer>) -> Result<RestoreReport, String> {
    let (s, w) = (session.clone(), journal.clone());
    let restored = tokio::task::spawn_blocking(move || {
        w.flush();
        w.journal().restore_pending(&s)
    })
    .await;
    match restored {
        Ok(Ok(report)) => Ok(report),
        Ok(Err(e)) => Err(e.to_string()),
        Err(e) => Err(format!("the read failed: {e}")),
    }
}

/// Puts back the decisions kept for agents that were not waiting (an earlier session's
/// mailbox), so an agent that comes back after a restart still learns them.
pub async fn restore_mailbox(session: &Arc<Session>, journal: &Arc<Writer>) -> Result<usize, String> {
    let (s, w) = (session.clone(), journal.clone());
    let root = session.workspace().root().display().to_string();
    let kept = tokio::task::spawn_blocking(move || {
        w.flush();
        w.journal().deliveries(&root)
    })
    .await
    .map_err(|e| format!("the read failed: {e}"))?
    .map_err(|e| e.to_string())?;
    let n = kept.len();
    s.waits().restore(kept);
    Ok(n)
}

/// From now on every push is kept (and recorded) and every decision forgets it (closing or
/// switching forgets nothing); every decision is recorded, with the undo data of an apply;
/// every decision kept for an agent (and its delivery) is mirrored. Writes are queued on the
/// journal's own thread, never made inside the call.
pub fn mirror(session: &Arc<Session>, journal: &Arc<Writer>) {
    let root = session.workspace().root().display().to_string();
    session.store().set_persistence(journal.persistence(&root));
    session.waits().set_persistence(journal.mailbox(&root));
    let journal = journal.clone();
    session.observe(move |entry| {
        let Some(h) = HistoryEntry::from_transcript(entry) else { return };
        journal.record(Decision::of(&root, &h));
        crate::undo::keep(&journal, &root, entry);
    });
}

/// Journals an interrupted apply that opening `root` finished as a failed apply with the
/// reason `interrupted` (never as applied). A record that was refused (not acted on) is not
/// journalled: nothing happened.
pub fn record_recovery(journal: &Writer, root: &str, recovery: &Recovery) {
    if !recovery.refused() {
        journal.record(Decision::interrupted(root, recovery));
    }
}

/// The window's data folder: `$XDG_DATA_HOME/resolve-desk`, else
/// `~/.local/share/resolve-desk` (its journal is where `rdesk hook` records decisions made
/// without a window, so the History shows them).
pub fn default_data_dir() -> std::path::PathBuf {
    std::env::var_os("XDG_DATA_HOME")
        .map(std::path::PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| std::path::PathBuf::from(h).join(".local/share")))
        .unwrap_or_else(std::env::temp_dir)
        .join("resolve-desk")
}
