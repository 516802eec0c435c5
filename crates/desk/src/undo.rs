//! Undo data: every applied change set's record is kept in the journal (bounded by
//! [`retention`]), so an apply can be undone from the History, even after a restart.
//!
//! The retention is a setting read from the environment: `RESOLVE_DESK_UNDO_KEEP` (entries,
//! default 200) and `RESOLVE_DESK_UNDO_MAX_MIB` (MiB, default 256).

use std::sync::Arc;

use resolve_engine::{ResolveAction, ResolveDetails, TranscriptEntry, RESOLVE_TOOL_NAME};
use resolve_journal::{UndoRetention, Writer};

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
    let (Some(record), Some(details)) = (entry.undo.clone(), ResolveDetails::of_result(&entry.result)) else {
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
