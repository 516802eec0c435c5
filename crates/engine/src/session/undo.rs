//! Undo and redo of an applied change set ([`Session::undo`]): a decision of its own in the
//! transcript, written through the normal apply.

use std::sync::Arc;

use chrono::Utc;

use crate::changeset::{plural, ApplyContext};
use crate::resolve::{ResolveAction, ResolveDetails};
use crate::tool::ToolResult;
use crate::undo::{UndoRecord, REDO_TOOL_NAME, UNDO_TOOL_NAME};
use crate::vocab::{Actor, ToolCall};

use super::{Session, TranscriptEntry};

/// An undo or a redo as its caller asks for it: the decision it reverts and that decision's
/// record (read back from the journal).
#[derive(Debug, Clone)]
pub struct Undo {
    /// `ResolveAction::Undo` or `ResolveAction::Redo` (anything else is refused).
    pub direction: ResolveAction,
    /// The id of the applied action whose effect is reverted (or restored, for a redo).
    pub of_action_id: String,
    pub label: String,
    pub source_tool_name: String,
    pub record: UndoRecord,
    /// Why; required (a blank reason is refused).
    pub reason: String,
}

/// What [`Session::undo`] did.
#[derive(Debug, Clone, PartialEq)]
pub enum UndoOutcome {
    /// Written, and recorded as a decision of its own (details, result text); `record`
    /// reverts this undo (the redo), or this redo (the next undo).
    Done { details: ResolveDetails, text: String, record: Arc<UndoRecord> },
    /// Nothing was written: `message` says why; `changed` names the files that changed since
    /// the apply (empty for other refusals).
    Refused { message: String, changed: Vec<String> },
}

impl Session {
    /// Reverts an applied change set (or an undo), writing through the normal apply
    /// (hash-pinned, atomic, crash-safe). On success the undo is a decision of its own in the
    /// transcript (tool `undo` or `redo`; observers journal it) carrying the record that
    /// reverts it. Refused, with nothing written, when the reason is blank, the session is
    /// closed, or a file changed since the apply (every such file is named).
    pub async fn undo(&self, actor: Actor, undo: Undo) -> UndoOutcome {
        let (verb, done, tool) = match undo.direction {
            ResolveAction::Undo => ("undo", "Undone", UNDO_TOOL_NAME),
            ResolveAction::Redo => ("redo", "Redone", REDO_TOOL_NAME),
            ResolveAction::Apply | ResolveAction::Discard => {
                return UndoOutcome::Refused {
                    message: "An undo is either \"undo\" or \"redo\".".into(),
                    changed: Vec::new(),
                }
            }
        };
        let refused = |message: String| UndoOutcome::Refused { message, changed: Vec::new() };
        if self.is_closed() {
            return refused(format!(
                "The workspace {} was closed; open it again to {verb} \"{}\".",
                self.workspace().root().display(),
                undo.label
            ));
        }
        if undo.reason.trim().is_empty() {
            return refused(format!("A reason is required: say why you {verb} \"{}\".", undo.label));
        }
        let at = Utc::now();
        let action_id = format!("{}-{verb}-{}", undo.of_action_id, at.timestamp_millis());
        let context = ApplyContext {
            action_id: action_id.clone(),
            label: format!("{done}: {}", undo.label),
            source_tool_name: undo.source_tool_name.clone(),
            actor: Some(actor),
            client: None,
        };
        let ws = self.workspace().clone();
        let record = undo.record.clone();
        let outcome = tokio::task::spawn_blocking(move || record.revert(&ws, Some(context))).await;
        let (report, next) = match outcome {
            Ok(Ok(done)) => done,
            Ok(Err(e)) => {
                return UndoOutcome::Refused {
                    message: format!("Cannot {verb} \"{}\": {e}", undo.label),
                    changed: e.changed_files(),
                }
            }
            Err(e) => return refused(format!("The {verb} stopped unexpectedly: {e}; nothing was written.")),
        };
        let details = ResolveDetails {
            action: undo.direction,
            reason: undo.reason.clone(),
            source_tool_name: undo.source_tool_name.clone(),
            label: undo.label.clone(),
            action_id,
            partial: None,
            review: None,
            edits: None,
            written_by: None,
            approved: None,
        };
        let mut text = format!(
            "{done}: {}. {} back as {} before.",
            undo.label,
            plural(next.changes.len(), "file is", "files are"),
            if undo.direction == ResolveAction::Undo { "it was" } else { "they were" },
        );
        if !report.warnings.is_empty() {
            text.push_str(&format!(" Warnings: {}", report.warnings.join("; ")));
        }
        let next = Arc::new(next);
        let result = ToolResult::text(text.clone()).with_details(serde_json::to_value(&details).unwrap_or_default());
        self.record_entry(TranscriptEntry {
            call_id: self.new_call_id(),
            actor,
            call: ToolCall {
                tool: tool.to_string(),
                params: serde_json::json!({"decision": undo.of_action_id, "reason": undo.reason}),
            },
            result,
            at,
            client: None,
            relay_of: None,
            proposal: None,
            undo: Some(next.clone()),
            decision: Some(details.clone()),
            elided: 0,
        });
        UndoOutcome::Done { details, text, record: next }
    }
}
