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
    let (badge, summary) = label_parts(&info.label);
    wire::ActionSummary {
        id: info.id.clone(),
        label: info.label.clone(),
        badge,
        summary,
        source_tool_name: info.source_tool_name.clone(),
        pushed_by: info.pushed_by.clone(),
        created_at_ms: millis(info.created_at),
        status: status(&info.status),
        is_top,
        kind,
        files_text: engine::plural(counts.files as usize, "file", "files"),
        renames_text: engine::plural(counts.renames as usize, "rename", "renames"),
        counts,
        origin: info.origin.as_ref().map(|o| wire::ToolCallInfo { tool: o.tool.clone(), params: o.params.clone() }),
        proposal: info.proposal.as_ref().map(proposal),
    }
}

pub fn proposal(p: &engine::Proposal) -> wire::Proposal {
    wire::Proposal {
        choice: resolve_choice(p.choice),
        reason: p.reason.clone(),
        client: p.client.clone(),
        call_id: p.call_id.clone(),
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
        language: language_of(&f.path),
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

/// The highlighter's language id for a path (the engine's table).
pub fn language_of(path: &str) -> Option<String> {
    engine::language_for_path(path).map(str::to_string)
}

/// A label as (badge, summary), by the engine's rule.
pub fn label_parts(label: &str) -> (Option<String>, String) {
    let (badge, summary) = engine::label_parts(label);
    (badge.map(str::to_string), summary.to_string())
}

pub fn history_entry(h: &engine::HistoryEntry) -> wire::HistoryEntry {
    let (badge, summary) = label_parts(&h.details.label);
    wire::HistoryEntry {
        action: resolve_choice(h.details.action),
        label: h.details.label.clone(),
        badge,
        summary,
        source_tool_name: h.details.source_tool_name.clone(),
        reason: h.details.reason.clone(),
        text: h.text.clone(),
        is_error: h.is_error,
        at_ms: millis(h.at),
        action_id: h.details.action_id.clone(),
        earlier_session: false,
        decided_by: actor(h.actor),
        // The engine's transcript does not keep the deciding agent's name yet.
        client: None,
        proposal: h.proposal.as_ref().map(proposal),
    }
}

pub fn actor(a: engine::Actor) -> wire::Actor {
    match a {
        engine::Actor::Agent => wire::Actor::Agent,
        engine::Actor::Person => wire::Actor::Person,
        engine::Actor::Script => wire::Actor::Script,
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
    let (badge, summary) = label_parts(&d.label);
    wire::HistoryEntry {
        action: if d.action == "discard" { wire::ResolveChoice::Discard } else { wire::ResolveChoice::Apply },
        label: d.label.clone(),
        badge,
        summary,
        source_tool_name: d.source_tool_name.clone(),
        reason: d.reason.clone(),
        text: d.text.clone(),
        is_error: d.is_error,
        at_ms: d.at_ms.max(0) as u64,
        action_id: d.action_id.clone(),
        earlier_session,
        decided_by: match d.actor.as_str() {
            "agent" => wire::Actor::Agent,
            "script" => wire::Actor::Script,
            _ => wire::Actor::Person,
        },
        client: None,
        proposal: None,
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

/// Converts the agent loop's events into wire events. It remembers the stack as each tool
/// call started, so a result can name the actions that call pushed (the preview links).
#[derive(Default)]
pub struct AgentEventMapper {
    before_call: Vec<String>,
}

impl AgentEventMapper {
    pub fn map(&mut self, e: resolve_agent::AgentEvent) -> wire::AgentEvent {
        use resolve_agent::AgentEvent as A;
        let step = |s: usize| s.min(u32::MAX as usize) as u32;
        match e {
            A::TextDelta { step: s, text } => wire::AgentEvent::TextDelta { step: step(s), text },
            A::Retrying { step: s, attempt, max_attempts, delay_ms, status } => {
                wire::AgentEvent::Retrying { step: step(s), attempt, max_attempts, delay_ms, status }
            }
            A::AssistantMessage { step: s, content, tool_calls, .. } => wire::AgentEvent::AssistantMessage {
                step: step(s),
                content,
                tool_calls: tool_calls
                    .into_iter()
                    .map(|c| wire::AgentToolCall { id: c.id, name: c.name, arguments: c.arguments })
                    .collect(),
            },
            A::ToolCallStarted { step: s, call_id, tool, arguments, pending, .. } => {
                self.before_call = pending.into_iter().map(|p| p.id).collect();
                wire::AgentEvent::ToolCallStarted { step: step(s), call_id, tool, arguments }
            }
            A::WaitingForPerson { step: s, call_id, proposed_action, proposed_reason, pending, .. } => {
                wire::AgentEvent::WaitingForPerson {
                    step: step(s),
                    call_id,
                    proposed_action: proposed_action.as_deref().and_then(|a| match a {
                        "apply" => Some(wire::ResolveChoice::Apply),
                        "discard" => Some(wire::ResolveChoice::Discard),
                        _ => None,
                    }),
                    proposed_reason,
                    action_id: pending.first().map(|p| p.id.clone()),
                }
            }
            A::ToolResult { step: s, call_id, tool, is_error, text, details, pending, .. } => {
                let before = std::mem::take(&mut self.before_call);
                let pushed_action_ids = pending.into_iter().map(|p| p.id).filter(|id| !before.contains(id)).collect();
                let resolved = if tool == engine::RESOLVE_TOOL_NAME && !is_error {
                    details.as_ref().and_then(resolved_info)
                } else {
                    None
                };
                wire::AgentEvent::ToolResult {
                    step: step(s),
                    call_id,
                    tool,
                    is_error,
                    text,
                    pushed_action_ids,
                    resolved,
                }
            }
            A::Error { code, message } => wire::AgentEvent::Error { code: agent_error_code(&code), message },
            A::TurnDone { outcome, steps, .. } => wire::AgentEvent::TurnDone {
                outcome: match outcome {
                    resolve_agent::TurnOutcome::Answered => wire::TurnOutcome::Answered,
                    resolve_agent::TurnOutcome::WaitingForPerson => wire::TurnOutcome::WaitingForPerson,
                    resolve_agent::TurnOutcome::Cancelled => wire::TurnOutcome::Cancelled,
                    resolve_agent::TurnOutcome::MaxSteps => wire::TurnOutcome::MaxSteps,
                    resolve_agent::TurnOutcome::Failed => wire::TurnOutcome::Failed,
                },
                steps: step(steps),
            },
        }
    }
}

/// What a successful `resolve` result decided: its details, and `decided_by` (set by the
/// engine when the person decided for a waiting agent; absent when the caller decided).
fn resolved_info(details: &serde_json::Value) -> Option<wire::ResolvedInfo> {
    let d: engine::ResolveDetails = serde_json::from_value(details.clone()).ok()?;
    let decided_by = match details.get("decided_by").and_then(|v| v.as_str()) {
        Some("person") => wire::Actor::Person,
        Some("script") => wire::Actor::Script,
        _ => wire::Actor::Agent,
    };
    let (badge, summary) = label_parts(&d.label);
    Some(wire::ResolvedInfo {
        action: resolve_choice(d.action),
        reason: d.reason,
        label: d.label,
        badge,
        summary,
        action_id: d.action_id,
        decided_by,
    })
}

/// The agent crate's error codes (`LlmError::code`, `AgentError::code`) as a wire enum.
pub fn agent_error_code(code: &str) -> wire::AgentErrorCode {
    use wire::AgentErrorCode as C;
    match code {
        "unauthorized" => C::Unauthorized,
        "model_not_found" => C::ModelNotFound,
        "connection_refused" => C::ConnectionRefused,
        "connect_timeout" => C::ConnectTimeout,
        "idle_timeout" => C::IdleTimeout,
        "connect" => C::Connect,
        "http_status" => C::HttpStatus,
        "malformed_response" => C::MalformedResponse,
        "provider_error" => C::ProviderError,
        "stream_broken" => C::StreamBroken,
        "truncated" => C::Truncated,
        "config" => C::Config,
        "max_steps" => C::MaxSteps,
        // The loop's other codes (replay_*, client) cannot come from a live provider turn.
        _ => C::Other,
    }
}

/// The settings panel's view of the provider settings.
pub fn agent_settings(c: &resolve_agent::ProviderConfig, config_dir: &std::path::Path) -> wire::AgentSettings {
    wire::AgentSettings {
        base_url: c.base_url.clone(),
        model: c.model.clone(),
        api_key_env: c.api_key_env.clone(),
        api_key_is_set: c.api_key_is_set(),
        config_path: resolve_agent::ProviderConfig::path_in(config_dir).display().to_string(),
    }
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

    #[test]
    fn labels_reach_the_wire_split() {
        assert_eq!(
            label_parts("AST Edit: 1 replacement in 1 file"),
            (Some("AST Edit".into()), "1 replacement in 1 file".into())
        );
        assert_eq!(label_parts("Changelog entry"), (None, "Changelog entry".into()));
    }
}
