//! The transcript (every call and its result) and the history read from it.

use std::sync::Arc;

use chrono::{DateTime, Utc};
use serde::Serialize;

use crate::pending::Proposal;
use crate::resolve::{render_resolve_header, ResolveDetails, RESOLVE_TOOL_NAME};
use crate::tool::ToolResult;
use crate::vocab::{Actor, ToolCall};

use super::Session;

/// One call and its result.
#[derive(Debug, Clone, Serialize)]
pub struct TranscriptEntry {
    pub call_id: String,
    pub actor: Actor,
    pub call: ToolCall,
    pub result: ToolResult,
    pub at: DateTime<Utc>,
    /// The agent or MCP client that made the call (`ToolContext::client`), when it said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<String>,
    /// For an agent's `resolve` under the `human` policy: the id of the call that decided
    /// (a person's resolve, itself in the transcript). Such an entry relays that decision to
    /// the agent and is not a decision of its own (not in the history).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub relay_of: Option<String>,
    /// For a resolve that decided an action an agent had proposed a decision for: what the
    /// agent proposed, and who it was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proposal: Option<Proposal>,
    /// For a successful apply of a change set, an undo or a redo: what reverts it (the bytes
    /// it replaced, pinned to the hashes it left). The journal keeps it for the history's Undo.
    #[serde(skip)]
    pub undo: Option<Arc<crate::undo::UndoRecord>>,
    /// For a decision (`resolve` that got as far as an action, `undo`, `redo`): what was
    /// decided, typed. The result's details say the same to agents, as JSON.
    #[serde(skip)]
    pub decision: Option<ResolveDetails>,
    /// Bytes of the result's text and details the transcript dropped (0: whole). Observers
    /// see every entry whole; the transcript keeps at most
    /// [`TRANSCRIPT_TEXT_BYTES`](crate::lean::TRANSCRIPT_TEXT_BYTES) of text and
    /// [`TRANSCRIPT_DETAILS_BYTES`](crate::lean::TRANSCRIPT_DETAILS_BYTES) of details of a
    /// call that does not decide (`resolve`, `undo` and `redo` entries stay whole).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub elided: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// One resolve, for the history view (newest first in [`Session::history`]).
#[derive(Debug, Clone, Serialize)]
pub struct HistoryEntry {
    pub details: ResolveDetails,
    pub header: String,
    pub text: String,
    pub is_error: bool,
    pub actor: Actor,
    pub at: DateTime<Utc>,
    /// The agent or MCP client that made the deciding call (under the `agent` policy), when
    /// known (the journal keeps it too); `None` for a person's or a script's decision.
    pub client: Option<String>,
    /// What an agent had proposed for the action, when one was waiting on the person.
    pub proposal: Option<Proposal>,
}

impl HistoryEntry {
    /// The history entry of a transcript entry, when it is a resolve that got as far as an
    /// action (not one refused before anything ran).
    pub fn from_transcript(e: &TranscriptEntry) -> Option<HistoryEntry> {
        let tool = e.call.tool.as_str();
        let decides =
            tool == RESOLVE_TOOL_NAME || tool == crate::undo::UNDO_TOOL_NAME || tool == crate::undo::REDO_TOOL_NAME;
        if !decides || e.relay_of.is_some() {
            return None;
        }
        let details = e.decision.clone()?;
        let text = e.result.text_content();
        Some(HistoryEntry {
            header: render_resolve_header(&details, e.result.is_error, &text),
            details,
            text,
            is_error: e.result.is_error,
            actor: e.actor,
            at: e.at,
            client: e.client.clone(),
            proposal: e.proposal.clone(),
        })
    }
}

impl Session {
    /// Calls `observer` with every transcript entry from now on, as it is recorded.
    pub fn observe(&self, observer: impl Fn(&TranscriptEntry) + Send + Sync + 'static) {
        self.observers.write().unwrap_or_else(|p| p.into_inner()).push(Box::new(observer));
    }

    /// Every call so far, oldest first.
    pub fn transcript(&self) -> Vec<TranscriptEntry> {
        self.transcript.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// How many calls the transcript holds.
    pub fn transcript_len(&self) -> usize {
        self.transcript.lock().unwrap_or_else(|p| p.into_inner()).len()
    }

    /// Resolves so far (applies, discards and failed applies), newest first.
    pub fn history(&self) -> Vec<HistoryEntry> {
        let transcript = self.transcript.lock().unwrap_or_else(|p| p.into_inner());
        transcript.iter().rev().filter_map(HistoryEntry::from_transcript).collect()
    }
}
