//! Engine types → wire types. Pure mapping; anything that decides belongs in the engine.

use resolve_engine::{self as engine, hidden, ActionInfo, ToolResult};
use resolve_protocol as wire;
use wire::{IpcError, IpcErrorCode};

fn millis(t: chrono::DateTime<chrono::Utc>) -> u64 {
    t.timestamp_millis().max(0) as u64
}

pub fn rename_row(r: &engine::RenameRow) -> wire::RenameRow {
    wire::RenameRow {
        from: r.from.clone(),
        to: r.to.clone(),
        status: r.status,
        from_hidden: name_hidden(&r.from),
        to_hidden: name_hidden(&r.to),
    }
}

/// The engine's findings in `text` (byte ranges) as wire values (UTF-16 ranges).
pub fn hidden_chars(text: &str, findings: &[hidden::Finding]) -> Vec<wire::HiddenChar> {
    findings
        .iter()
        .map(|f| wire::HiddenChar {
            start: utf16_offset(text, f.start),
            end: utf16_offset(text, f.end),
            code_point: f.code_point(),
            kind: f.kind,
            name: f.name(),
            marker: f.marker(),
        })
        .collect()
}

/// The hidden and look-alike characters of a name, a label or a short text.
pub fn name_hidden(name: &str) -> Vec<wire::HiddenChar> {
    hidden_chars(name, &hidden::scan_line(name, hidden::Place::Elsewhere))
}

fn text_hidden(text: Option<&str>) -> Vec<wire::LineHidden> {
    let Some(text) = text else { return Vec::new() };
    let lines: Vec<&str> = text.split('\n').collect();
    hidden::scan_text(text)
        .into_iter()
        .map(|l| {
            let line = lines.get(l.line as usize - 1).copied().unwrap_or_default();
            wire::LineHidden { line: l.line, chars: hidden_chars(line, &l.findings) }
        })
        .collect()
}

/// Both sides of a file whole, with the lines that hold hidden or look-alike characters.
pub fn file_texts(path: String, old: Option<String>, new: Option<String>) -> wire::FileTexts {
    let old_hidden = text_hidden(old.as_deref());
    let new_hidden = text_hidden(new.as_deref());
    wire::FileTexts { path, old, new, old_hidden, new_hidden }
}

pub fn action_summary(info: &ActionInfo, is_top: bool) -> wire::ActionSummary {
    let (badge, summary) = label_parts(&info.label);
    wire::ActionSummary {
        id: info.id.clone(),
        label: info.label.clone(),
        badge: badge.clone(),
        summary: summary.clone(),
        source_tool_name: info.source_tool_name.clone(),
        pushed_by: info.pushed_by.clone(),
        created_at_ms: millis(info.created_at),
        status: info.status.clone(),
        is_top,
        kind: info.kind,
        counts: info.counts,
        files_text: engine::plural(info.counts.files as usize, "file", "files"),
        renames_text: engine::plural(info.counts.renames as usize, "rename", "renames"),
        origin: info.origin.as_ref().map(|o| wire::ToolCallInfo { tool: o.tool.clone(), params: o.params.clone() }),
        proposal: info.proposal.as_ref().map(proposal),
        // Only a custom action's: it has no file preview, and a change set's details (a
        // tool's own diff data) would only weigh on every queue read.
        details: if info.kind == engine::ActionKind::Custom { info.details.clone() } else { None },
        badge_hidden: badge.as_deref().map(name_hidden).unwrap_or_default(),
        summary_hidden: name_hidden(&summary),
        hidden_warning: info.hidden.warning(),
        comments: info.comments.iter().map(review_comment).collect(),
        round: info.round.as_ref().map(|r| wire::RoundInfo {
            number: r.number,
            first_label: r.first_label.clone(),
            previous_id: r.previous_id.clone(),
            unchanged: r.unchanged.clone(),
            earlier: r
                .earlier
                .iter()
                .map(|e| wire::EarlierComment {
                    round: e.round,
                    comment: review_comment(&e.comment),
                    now_start_line: e.now_lines.map(|l| l.0),
                    now_end_line: e.now_lines.map(|l| l.1),
                    changed: e.changed,
                })
                .collect(),
        }),
        viewed: info.viewed.clone(),
    }
}

pub fn review_comment(c: &engine::Comment) -> wire::ReviewComment {
    wire::ReviewComment {
        id: c.id.clone(),
        path: c.path.clone(),
        side: c.side,
        start_line: c.start_line,
        end_line: c.end_line,
        quote: c.quote.clone(),
        text: c.text.clone(),
        replacement_id: c.replacement_id,
        rendered: c.render(),
    }
}

pub fn review(r: &engine::Review) -> wire::Review {
    wire::Review { request_changes: r.request_changes, comments: r.comments.iter().map(review_comment).collect() }
}

/// Why a comment could not change, as a command error.
pub fn comment_error(e: engine::CommentError) -> IpcError {
    let code = match &e {
        engine::CommentError::NoAction { .. } => IpcErrorCode::UnknownAction,
        engine::CommentError::NoComment { .. } => IpcErrorCode::NotFound,
        engine::CommentError::NoFiles { .. } | engine::CommentError::Refused(_) => IpcErrorCode::InvalidParams,
    };
    IpcError::new(code, e.to_string())
}

/// The wire's new comment as the engine's draft.
pub fn comment_draft(d: wire::CommentDraft) -> engine::CommentDraft {
    engine::CommentDraft {
        path: d.path,
        side: d.side,
        start_line: d.start_line,
        end_line: d.end_line,
        text: d.text,
        replacement_id: d.replacement_id,
    }
}

/// What a decision was, as the history and the outcome show it: a discard that requested
/// changes is `requestChanges`.
pub fn decision_choice(d: &engine::ResolveDetails) -> wire::ResolveChoice {
    if d.requests_changes() {
        wire::ResolveChoice::RequestChanges
    } else {
        resolve_choice(d.action)
    }
}

pub fn proposal(p: &engine::Proposal) -> wire::Proposal {
    wire::Proposal {
        choice: resolve_choice(p.choice),
        reason: p.reason.clone(),
        client: p.client.clone(),
        call_id: p.call_id.clone(),
        waiting: p.waiting,
    }
}

pub fn file_entry(f: &engine::FileSummary) -> wire::FileEntry {
    wire::FileEntry {
        path: f.path.clone(),
        old_path: f.old_path.clone(),
        change: f.change,
        language: language_of(&f.path),
        binary: f.binary,
        too_large: f.too_large,
        added: f.added,
        removed: f.removed,
        old_size: f.old_size,
        new_size: f.new_size,
        old_hash: f.old_hash.clone(),
        new_hash: f.new_hash.clone(),
        path_hidden: name_hidden(&f.path),
        old_path_hidden: f.old_path.as_deref().map(name_hidden).unwrap_or_default(),
        hidden_count: (!f.hidden.is_empty()).then(|| f.hidden.total()),
        hidden_note: hidden::file_note(f.hidden),
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
        path_hidden: name_hidden(&d.path),
        old_path_hidden: d.old_path.as_deref().map(name_hidden).unwrap_or_default(),
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
                        kind: l.kind,
                        old_no: l.old_no,
                        new_no: l.new_no,
                        emphasis: l
                            .emphasis
                            .iter()
                            .map(|&(s, e)| (utf16_offset(&l.text, s), utf16_offset(&l.text, e)))
                            .collect(),
                        hidden: hidden_chars(&l.text, &l.hidden),
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

pub fn history_entry(h: &engine::HistoryEntry, earlier_session: bool) -> wire::HistoryEntry {
    let (badge, summary) = label_parts(&h.details.label);
    wire::HistoryEntry {
        action: decision_choice(&h.details),
        label: h.details.label.clone(),
        badge,
        summary,
        source_tool_name: h.details.source_tool_name.clone(),
        reason: h.details.reason.clone(),
        text: h.text.clone(),
        is_error: h.is_error,
        at_ms: millis(h.at),
        action_id: h.details.action_id.clone(),
        earlier_session,
        decided_by: h.actor,
        client: h.client.clone(),
        proposal: h.proposal.as_ref().map(proposal),
        undo: None,
        asked_by: None,
        partial_text: h.details.partial.as_deref().map(engine::PartialApply::history_text),
        review: h.details.review.as_deref().map(review),
    }
}

pub fn file_replacement(r: engine::ReplacementRow) -> wire::FileReplacement {
    wire::FileReplacement {
        id: r.id,
        line: r.line,
        old_hidden: name_hidden(&r.old),
        new_hidden: name_hidden(&r.new),
        old: r.old,
        new: r.new,
    }
}

pub fn resolve_choice(a: engine::ResolveAction) -> wire::ResolveChoice {
    match a {
        engine::ResolveAction::Apply => wire::ResolveChoice::Apply,
        engine::ResolveAction::Discard => wire::ResolveChoice::Discard,
        engine::ResolveAction::Undo => wire::ResolveChoice::Undo,
        engine::ResolveAction::Redo => wire::ResolveChoice::Redo,
    }
}

/// The person's choice as the engine's action, and the review request it makes (Request
/// changes: a discard with the comments kept with the action).
pub fn resolve_action(c: wire::ResolveChoice) -> (engine::ResolveAction, Option<engine::ReviewRequest>) {
    match c {
        wire::ResolveChoice::Apply => (engine::ResolveAction::Apply, None),
        wire::ResolveChoice::Discard => (engine::ResolveAction::Discard, None),
        wire::ResolveChoice::RequestChanges => (
            engine::ResolveAction::Discard,
            Some(engine::ReviewRequest { request_changes: true, comments: Vec::new() }),
        ),
        wire::ResolveChoice::Undo => (engine::ResolveAction::Undo, None),
        wire::ResolveChoice::Redo => (engine::ResolveAction::Redo, None),
    }
}

/// A resolve's outcome: refusals (empty stack, another action on top, blank reason) are
/// command errors; a failed apply is an outcome, with the action's new status.
pub fn resolve_outcome(o: engine::ResolveOutcome) -> Result<wire::ResolveOutcome, IpcError> {
    match o {
        engine::ResolveOutcome::Decided { details, text, .. } => {
            Ok(wire::ResolveOutcome { is_error: false, text, details: Some(resolve_details(&details)), status: None })
        }
        engine::ResolveOutcome::ApplyFailed { details, text, status: s } => {
            Ok(wire::ResolveOutcome { is_error: true, text, details: Some(resolve_details(&details)), status: s })
        }
        engine::ResolveOutcome::Refused { code, message } => {
            Err(IpcError::new(code.map(error_code_of).unwrap_or(IpcErrorCode::Internal), message))
        }
    }
}

pub fn resolve_details(d: &engine::ResolveDetails) -> wire::ResolveDetails {
    wire::ResolveDetails {
        action: decision_choice(d),
        reason: d.reason.clone(),
        source_tool_name: d.source_tool_name.clone(),
        label: d.label.clone(),
        action_id: d.action_id.clone(),
        review: d.review.as_deref().map(review),
        edits: d
            .edits
            .as_ref()
            .map(|e| e.iter().map(|f| wire::EditedFile { path: f.path.clone(), diff: f.diff.clone() }).collect()),
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

/// The agent loop's event as a wire event (pure mapping: the engine says which actions a
/// call pushed and who decided).
/// How much of a tool result the conversation keeps and shows (see [`tool_result_view`]).
pub const TOOL_RESULT_VIEW_CHARS: usize = 240;

/// What the window keeps of an agent's tool result: its first line, at most
/// [`TOOL_RESULT_VIEW_CHARS`] characters (an ellipsis marks a cut). The conversation shows
/// only that line, and the whole text (an `ast_edit` result carries up to 200 KB of diffs)
/// would otherwise stay in the shell's log and the page for the conversation's whole life.
pub fn tool_result_view(text: &str) -> String {
    let line = text.lines().next().unwrap_or("");
    match line.char_indices().nth(TOOL_RESULT_VIEW_CHARS) {
        Some((cut, _)) => format!("{}…", &line[..cut]),
        None => line.to_string(),
    }
}

pub fn agent_event(e: resolve_agent::AgentEvent) -> wire::AgentEvent {
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
        A::ToolCallStarted { step: s, call_id, tool, arguments, .. } => {
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
        A::ToolResult { step: s, call_id, tool, is_error, text, pushed_action_ids, resolved, .. } => {
            wire::AgentEvent::ToolResult {
                step: step(s),
                call_id,
                tool,
                is_error,
                text: tool_result_view(&text),
                pushed_action_ids,
                resolved: resolved.map(|r| resolved_info(r.0, r.1)),
            }
        }
        A::Error { code, message } => wire::AgentEvent::Error { code: agent_error_code(&code), message },
        A::TurnDone { outcome, steps, .. } => wire::AgentEvent::TurnDone { outcome, steps: step(steps) },
    }
}

/// What a `resolve` decided, and who decided it.
fn resolved_info(d: engine::ResolveDetails, decided_by: engine::Actor) -> wire::ResolvedInfo {
    let (badge, summary) = label_parts(&d.label);
    wire::ResolvedInfo {
        action: resolve_choice(d.action),
        reason: d.reason,
        label: d.label,
        badge,
        summary,
        action_id: d.action_id,
        decided_by,
    }
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
pub fn agent_settings(
    c: &resolve_agent::ProviderConfig,
    config_dir: &std::path::Path,
    source: resolve_agent::llm::secret::KeySource,
    keyring_problem: Option<String>,
) -> wire::AgentSettings {
    use resolve_agent::llm::secret::KeySource;
    wire::AgentSettings {
        base_url: c.base_url.clone(),
        model: c.model.clone(),
        api_key_env: c.api_key_env.clone(),
        api_key_is_set: c.api_key_is_set(),
        api_key_source: match source {
            KeySource::Environment => wire::ApiKeySource::Environment,
            KeySource::Keyring => wire::ApiKeySource::Keyring,
            KeySource::None => wire::ApiKeySource::None,
        },
        keyring_problem,
        resolve_wait_secs: c.resolve_wait_secs,
        config_path: resolve_agent::ProviderConfig::path_in(config_dir).display().to_string(),
    }
}

/// The wire code of an engine error code (see `ToolError::code`); a code that is not one of
/// the engine's (a custom tool's own) is `internal`.
pub fn error_code(code: &str) -> IpcErrorCode {
    engine::ErrorCode::parse(code).map(error_code_of).unwrap_or(IpcErrorCode::Internal)
}

pub fn error_code_of(code: engine::ErrorCode) -> IpcErrorCode {
    use engine::ErrorCode;
    match code {
        ErrorCode::InvalidParams => IpcErrorCode::InvalidParams,
        ErrorCode::UnknownTool => IpcErrorCode::UnknownTool,
        ErrorCode::NoPendingAction => IpcErrorCode::NoPendingAction,
        ErrorCode::IdMismatch => IpcErrorCode::IdMismatch,
        ErrorCode::Stale => IpcErrorCode::Stale,
        ErrorCode::ApplyFailed | ErrorCode::Failed => IpcErrorCode::ApplyFailed,
        ErrorCode::PathOutsideWorkspace => IpcErrorCode::PathOutsideWorkspace,
        ErrorCode::NotFound => IpcErrorCode::NotFound,
        ErrorCode::Io => IpcErrorCode::Io,
        ErrorCode::Cancelled => IpcErrorCode::Cancelled,
        ErrorCode::Closed => IpcErrorCode::Closed,
        ErrorCode::Untrusted => IpcErrorCode::Untrusted,
        // The app's sessions always have a store, so this cannot reach the UI in practice.
        ErrorCode::StoreUnavailable => IpcErrorCode::Internal,
    }
}

/// An error result as an `IpcError`.
pub fn ipc_error(r: &ToolResult) -> IpcError {
    IpcError::new(error_code(r.error_code.as_deref().unwrap_or("")), r.text_content())
}

/// A stale file's diff since the preview.
pub fn since_preview(s: engine::SincePreview) -> wire::SincePreview {
    wire::SincePreview { path: s.path, why: s.why, diff: file_diff(s.diff) }
}

/// A desk error as an `IpcError` (the engine's codes mapped as for a tool result).
pub fn desk_error(e: resolve_desk_core::DeskError) -> IpcError {
    use resolve_desk_core::DeskErrorCode;
    let code = match e.code {
        DeskErrorCode::Engine(code) => error_code_of(code),
        DeskErrorCode::ReasonRequired => IpcErrorCode::ReasonRequired,
        DeskErrorCode::InvalidParams => IpcErrorCode::InvalidParams,
        DeskErrorCode::UnknownDecision => IpcErrorCode::UnknownAction,
        DeskErrorCode::Io => IpcErrorCode::Io,
        DeskErrorCode::Internal => IpcErrorCode::Internal,
    };
    IpcError::new(code, e.message)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_conversation_keeps_a_tool_results_first_line_only() {
        let diffs = "x".repeat(200_000);
        let text = format!("AST Edit: 5000 replacements in 1000 files (action pa-1).\n--- a/f.ts\n{diffs}");
        assert_eq!(tool_result_view(&text), "AST Edit: 5000 replacements in 1000 files (action pa-1).");
        // A long first line is cut at a character boundary, with an ellipsis.
        let long = "é".repeat(TOOL_RESULT_VIEW_CHARS + 10);
        let view = tool_result_view(&long);
        assert_eq!(view.chars().count(), TOOL_RESULT_VIEW_CHARS + 1);
        assert!(view.ends_with('…'));
        assert_eq!(tool_result_view(""), "");
    }

    #[test]
    fn emphasis_ranges_become_utf16_offsets() {
        // "é" is 2 bytes and 1 UTF-16 unit; "𝄞" is 4 bytes and 2 units.
        let text = "é𝄞ab";
        assert_eq!(utf16_offset(text, 2), 1);
        assert_eq!(utf16_offset(text, 6), 3);
        assert_eq!(utf16_offset(text, 7), 4);
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
