//! Engine types → wire types. Pure mapping; anything that decides belongs in the engine.

use resolve_engine::{self as engine, ActionInfo, PendingAction, ToolResult};
use resolve_protocol as wire;
use wire::{IpcError, IpcErrorCode};

fn millis(t: chrono::DateTime<chrono::Utc>) -> u64 {
    t.timestamp_millis().max(0) as u64
}

pub fn status(s: &engine::ActionStatus) -> wire::ActionStatus {
    match s {
        engine::ActionStatus::Pending => wire::ActionStatus::Pending,
        engine::ActionStatus::Stale { files, message } => {
            wire::ActionStatus::Stale { files: files.clone(), message: message.clone() }
        }
        engine::ActionStatus::Failed { error } => wire::ActionStatus::Failed { error: error.clone() },
    }
}

/// The rename rows an action's details carry (`{"renames": [{from, to, status}]}`), if any.
pub fn rename_rows(details: Option<&serde_json::Value>) -> Option<Vec<wire::RenameRow>> {
    let rows = details?.get("renames")?.as_array()?;
    Some(
        rows.iter()
            .filter_map(|r| {
                let status = match r.get("status").and_then(|s| s.as_str()).unwrap_or("rename") {
                    "unchanged" => wire::RenameStatus::Unchanged,
                    "directory_skipped" | "directorySkipped" => wire::RenameStatus::DirectorySkipped,
                    _ => wire::RenameStatus::Rename,
                };
                Some(wire::RenameRow {
                    from: r.get("from")?.as_str()?.to_string(),
                    to: r.get("to").and_then(|t| t.as_str()).unwrap_or_default().to_string(),
                    status,
                })
            })
            .collect(),
    )
}

pub fn action_summary(info: &ActionInfo, action: Option<&PendingAction>, is_top: bool) -> wire::ActionSummary {
    let change_set = action.and_then(|a| a.change_set.as_deref());
    let renames = rename_rows(info.details.as_ref());
    let (kind, counts) = if let Some(cs) = change_set {
        let (added, removed) = cs.line_totals();
        let files = cs.files();
        (
            wire::ActionKind::ChangeSet,
            wire::ActionCounts {
                files: files.len() as u32,
                added: added as u32,
                removed: removed as u32,
                renames: files.iter().filter(|f| f.change == "renamed").count() as u32,
            },
        )
    } else if let Some(rows) = &renames {
        let n = rows.iter().filter(|r| r.status == wire::RenameStatus::Rename).count() as u32;
        (wire::ActionKind::Rename, wire::ActionCounts { files: n, added: 0, removed: 0, renames: n })
    } else {
        (wire::ActionKind::Custom, wire::ActionCounts::default())
    };
    wire::ActionSummary {
        id: info.id.clone(),
        label: info.label.clone(),
        source_tool_name: info.source_tool_name.clone(),
        pushed_by: info.pushed_by.clone(),
        created_at_ms: millis(info.created_at),
        status: status(&info.status),
        is_top,
        kind,
        counts,
        origin: info.origin.as_ref().map(|o| wire::ToolCallInfo { tool: o.tool.clone(), params: o.params.clone() }),
    }
}

pub fn file_entry(f: &engine::FileSummary) -> wire::FileEntry {
    wire::FileEntry {
        path: f.path.clone(),
        old_path: f.old_path.clone(),
        change: match f.change {
            "added" => wire::FileChange::Added,
            "deleted" => wire::FileChange::Deleted,
            "renamed" => wire::FileChange::Renamed,
            _ => wire::FileChange::Modified,
        },
        binary: f.binary,
        too_large: f.too_large,
        added: f.added,
        removed: f.removed,
    }
}

/// Byte offset in `text` → UTF-16 code unit offset (what JavaScript strings index by).
fn utf16_offset(text: &str, byte: usize) -> u32 {
    let byte = byte.min(text.len());
    let mut b = byte;
    while !text.is_char_boundary(b) {
        b -= 1;
    }
    text[..b].encode_utf16().count() as u32
}

pub fn file_diff(d: engine::FileDiff) -> wire::FileDiff {
    let language = language_of(&d.path);
    wire::FileDiff {
        language,
        path: d.path,
        old_path: d.old_path,
        summary: d.summary,
        added: d.added,
        removed: d.removed,
        hunks: d
            .hunks
            .into_iter()
            .map(|h| wire::Hunk {
                old_start: h.old_start,
                old_lines: h.old_lines,
                new_start: h.new_start,
                new_lines: h.new_lines,
                lines: h
                    .lines
                    .into_iter()
                    .map(|l| wire::DiffLine {
                        kind: match l.kind {
                            engine::LineKind::Context => wire::DiffLineKind::Context,
                            engine::LineKind::Added => wire::DiffLineKind::Added,
                            engine::LineKind::Removed => wire::DiffLineKind::Removed,
                        },
                        old_no: l.old_no,
                        new_no: l.new_no,
                        emphasis: l
                            .emphasis
                            .iter()
                            .map(|&(s, e)| (utf16_offset(&l.text, s), utf16_offset(&l.text, e)))
                            .collect(),
                        text: l.text,
                    })
                    .collect(),
            })
            .collect(),
    }
}

/// The highlighter's language name for a path, by extension.
pub fn language_of(path: &str) -> Option<String> {
    let ext = path.rsplit_once('.')?.1.to_ascii_lowercase();
    let lang = match ext.as_str() {
        "ts" | "mts" | "cts" | "tsx" => "typescript",
        "js" | "mjs" | "cjs" | "jsx" => "javascript",
        "rs" => "rust",
        "py" => "python",
        "json" => "json",
        "css" => "css",
        "html" | "htm" | "xml" | "svg" => "xml",
        "md" => "markdown",
        "go" => "go",
        "java" => "java",
        "c" | "h" => "c",
        "cpp" | "cc" | "hpp" => "cpp",
        "sh" | "bash" => "bash",
        "yml" | "yaml" => "yaml",
        _ => return None,
    };
    Some(lang.to_string())
}

pub fn history_entry(h: &engine::HistoryEntry) -> wire::HistoryEntry {
    wire::HistoryEntry {
        action: resolve_choice(h.details.action),
        label: h.details.label.clone(),
        source_tool_name: h.details.source_tool_name.clone(),
        reason: h.details.reason.clone(),
        text: h.text.clone(),
        is_error: h.is_error,
        at_ms: millis(h.at),
        action_id: h.details.action_id.clone(),
        earlier_session: false,
    }
}

/// The journal row of a history entry.
pub fn decision(workspace: &str, h: &engine::HistoryEntry) -> resolve_journal::Decision {
    let actor = match h.actor {
        engine::Actor::Agent => "agent",
        engine::Actor::Person => "person",
        engine::Actor::Script => "script",
    };
    resolve_journal::Decision {
        workspace: workspace.to_string(),
        at_ms: h.at.timestamp_millis(),
        actor: actor.to_string(),
        action: h.details.action.as_str().to_string(),
        action_id: h.details.action_id.clone(),
        label: h.details.label.clone(),
        source_tool_name: h.details.source_tool_name.clone(),
        reason: h.details.reason.clone(),
        is_error: h.is_error,
        text: h.text.clone(),
    }
}

/// A journal row as a history entry.
pub fn journal_entry(d: &resolve_journal::Decision, earlier_session: bool) -> wire::HistoryEntry {
    wire::HistoryEntry {
        action: if d.action == "discard" { wire::ResolveChoice::Discard } else { wire::ResolveChoice::Apply },
        label: d.label.clone(),
        source_tool_name: d.source_tool_name.clone(),
        reason: d.reason.clone(),
        text: d.text.clone(),
        is_error: d.is_error,
        at_ms: d.at_ms.max(0) as u64,
        action_id: d.action_id.clone(),
        earlier_session,
    }
}

pub fn resolve_choice(a: engine::ResolveAction) -> wire::ResolveChoice {
    match a {
        engine::ResolveAction::Apply => wire::ResolveChoice::Apply,
        engine::ResolveAction::Discard => wire::ResolveChoice::Discard,
    }
}

pub fn resolve_details(d: &engine::ResolveDetails) -> wire::ResolveDetails {
    wire::ResolveDetails {
        action: resolve_choice(d.action),
        reason: d.reason.clone(),
        source_tool_name: d.source_tool_name.clone(),
        label: d.label.clone(),
        action_id: d.action_id.clone(),
    }
}

pub fn tool_info(t: &engine::ToolSpec) -> wire::ToolInfo {
    wire::ToolInfo {
        name: t.name.clone(),
        label: t.label.clone(),
        description: t.description.clone(),
        parameters: t.parameters.clone(),
        hidden: t.hidden,
    }
}

pub fn tool_run(call_id: String, r: ToolResult) -> wire::ToolRunOutcome {
    wire::ToolRunOutcome { call_id, is_error: r.is_error, text: r.text_content(), details: r.details }
}

/// The wire code of an engine error code (see `ToolError::code`); a code that is not one of
/// the engine's (a custom tool's own) is `internal`.
pub fn error_code(code: &str) -> IpcErrorCode {
    use engine::ErrorCode;
    match ErrorCode::parse(code) {
        Some(ErrorCode::InvalidParams) => IpcErrorCode::InvalidParams,
        Some(ErrorCode::UnknownTool) => IpcErrorCode::UnknownTool,
        Some(ErrorCode::NoPendingAction) => IpcErrorCode::NoPendingAction,
        Some(ErrorCode::IdMismatch) => IpcErrorCode::IdMismatch,
        Some(ErrorCode::Stale) => IpcErrorCode::Stale,
        Some(ErrorCode::ApplyFailed | ErrorCode::Failed) => IpcErrorCode::ApplyFailed,
        Some(ErrorCode::PathOutsideWorkspace) => IpcErrorCode::PathOutsideWorkspace,
        Some(ErrorCode::NotFound) => IpcErrorCode::NotFound,
        Some(ErrorCode::Io) => IpcErrorCode::Io,
        Some(ErrorCode::Cancelled) => IpcErrorCode::Cancelled,
        Some(ErrorCode::Closed) => IpcErrorCode::Closed,
        // The app's sessions always have a store, so this cannot reach the UI in practice.
        Some(ErrorCode::StoreUnavailable) | None => IpcErrorCode::Internal,
    }
}

/// An error result as an `IpcError`.
pub fn ipc_error(r: &ToolResult) -> IpcError {
    IpcError::new(error_code(r.error_code.as_deref().unwrap_or("")), r.text_content())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn emphasis_ranges_become_utf16_offsets() {
        // "é" is 2 bytes and 1 UTF-16 unit; "𝄞" is 4 bytes and 2 units.
        let text = "é𝄞ab";
        assert_eq!(utf16_offset(text, 2), 1);
        assert_eq!(utf16_offset(text, 6), 3);
        assert_eq!(utf16_offset(text, 7), 4);
    }

    #[test]
    fn rename_rows_are_read_from_details() {
        let d = serde_json::json!({"renames": [{"from": "a", "to": "b", "status": "rename"}, {"from": "c", "to": "c", "status": "unchanged"}]});
        let rows = rename_rows(Some(&d)).unwrap();
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[1].status, wire::RenameStatus::Unchanged);
        assert!(rename_rows(Some(&serde_json::json!({}))).is_none());
    }

    #[test]
    fn languages_follow_extensions() {
        assert_eq!(language_of("src/a.TS").as_deref(), Some("typescript"));
        assert_eq!(language_of("Makefile"), None);
    }
}
