//! What the journal records: a decision row, the merged history of a workspace, and the
//! row codec (stored names of actors and actions).

use std::collections::{HashMap, HashSet};

use resolve_engine::{
    render_resolve_header, Actor, HistoryEntry, PartialApply, Recovery, ResolveAction, ResolveDetails, Review,
};

use crate::JournalError;

/// One recorded decision.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decision {
    pub workspace: String,
    pub at_ms: i64,
    /// Who decided (stored as `agent`, `person` or `script`).
    pub actor: Actor,
    /// What was decided (stored as `apply` or `discard`).
    pub action: ResolveAction,
    pub action_id: String,
    pub label: String,
    pub source_tool_name: String,
    pub reason: String,
    /// A failed apply (the action stayed on the stack).
    pub is_error: bool,
    pub text: String,
    /// The agent or MCP client that made the deciding call, when known (schema version 2).
    pub client: Option<String>,
    /// A partial apply: what was applied and left out (`None` for any other decision).
    pub partial: Option<PartialApply>,
    /// The review that went with the decision (comments, Request changes); `None` without one.
    pub review: Option<Review>,
}

impl Decision {
    /// The journal row of a session's history entry in `workspace`.
    pub fn of(workspace: &str, h: &HistoryEntry) -> Decision {
        Decision {
            workspace: workspace.to_string(),
            at_ms: h.at.timestamp_millis(),
            actor: h.actor,
            action: h.details.action,
            action_id: h.details.action_id.clone(),
            label: h.details.label.clone(),
            source_tool_name: h.details.source_tool_name.clone(),
            reason: h.details.reason.clone(),
            is_error: h.is_error,
            text: h.text.clone(),
            client: h.client.clone(),
            partial: h.details.partial.as_deref().cloned(),
            review: h.details.review.as_deref().cloned(),
        }
    }

    /// The row of an apply that a killed process interrupted and that opening `workspace`
    /// recovered: a failed apply with the reason [`Recovery::REASON`] (never an applied one),
    /// dated when the apply started, with the recovery's message as its text.
    pub fn interrupted(workspace: &str, recovery: &Recovery) -> Decision {
        let c = recovery.context.as_ref();
        let unknown = || "(unknown)".to_string();
        Decision {
            workspace: workspace.to_string(),
            at_ms: recovery.started_at.timestamp_millis(),
            actor: c.and_then(|c| c.actor).unwrap_or(Actor::Script),
            action: ResolveAction::Apply,
            action_id: c.map(|c| c.action_id.clone()).unwrap_or_default(),
            label: c.map(|c| c.label.clone()).unwrap_or_else(unknown),
            source_tool_name: c.map(|c| c.source_tool_name.clone()).unwrap_or_else(unknown),
            reason: Recovery::REASON.to_string(),
            is_error: true,
            text: recovery.message(),
            client: c.and_then(|c| c.client.clone()),
            partial: None,
            review: None,
        }
    }

    /// The decision as a history entry (without the proposal, which the journal does not keep).
    pub fn to_history(&self) -> HistoryEntry {
        let details = ResolveDetails {
            action: self.action,
            reason: self.reason.clone(),
            source_tool_name: self.source_tool_name.clone(),
            label: self.label.clone(),
            action_id: self.action_id.clone(),
            partial: self.partial.clone().map(Box::new),
            review: self.review.clone().map(Box::new),
            // The edits' diff is in the result text, which the journal keeps.
            edits: None,
            written_by: None,
            approved: None,
        };
        HistoryEntry {
            header: render_resolve_header(&details, self.is_error, &self.text),
            details,
            text: self.text.clone(),
            is_error: self.is_error,
            actor: self.actor,
            at: chrono::DateTime::from_timestamp_millis(self.at_ms).unwrap_or_default(),
            client: self.client.clone(),
            proposal: None,
        }
    }
}

/// One row of a workspace's merged history.
#[derive(Debug, Clone)]
pub struct Recorded {
    pub entry: HistoryEntry,
    /// Decided in an earlier session of the workspace (only the journal knew it).
    pub earlier_session: bool,
}

/// The history of a workspace, newest first: the journal's rows, where this session's own
/// decisions (`current`, which keep who asked and what it proposed) replace their rows; an
/// action this session never decided is from an earlier session. A decision of this session
/// that has no row (its write failed) is still listed, in its place by time.
pub fn merge(current: &[HistoryEntry], rows: &[Decision]) -> Vec<Recorded> {
    merge_page(current, current, rows, true)
}

/// [`merge`] for one page of a search: `current` is every entry of this session (it says
/// which actions are this session's and stands in for their rows), `missing_from` the ones
/// that may be listed without a row (this session's entries matching the search), added
/// only when `include_missing` (the first page).
pub(crate) fn merge_page(
    current: &[HistoryEntry],
    missing_from: &[HistoryEntry],
    rows: &[Decision],
    include_missing: bool,
) -> Vec<Recorded> {
    let key = |id: &str, at_ms: i64, action: ResolveAction| (id.to_string(), at_ms, action);
    let here: HashMap<_, &HistoryEntry> =
        current.iter().map(|h| (key(&h.details.action_id, h.at.timestamp_millis(), h.details.action), h)).collect();
    let ids: HashSet<&str> = current.iter().map(|h| h.details.action_id.as_str()).collect();
    let in_rows: HashSet<_> = rows.iter().map(|d| key(&d.action_id, d.at_ms, d.action)).collect();
    let mut out: Vec<Recorded> = rows
        .iter()
        .map(|d| Recorded {
            entry: match here.get(&key(&d.action_id, d.at_ms, d.action)) {
                Some(h) => (*h).clone(),
                None => d.to_history(),
            },
            earlier_session: !ids.contains(d.action_id.as_str()),
        })
        .collect();
    if !include_missing {
        return out;
    }
    let missing: Vec<&HistoryEntry> = missing_from
        .iter()
        .filter(|h| !in_rows.contains(&key(&h.details.action_id, h.at.timestamp_millis(), h.details.action)))
        .collect();
    if !missing.is_empty() {
        out.extend(missing.into_iter().map(|h| Recorded { entry: h.clone(), earlier_session: false }));
        // Stable: rows of one millisecond keep the journal's order.
        out.sort_by_key(|r| std::cmp::Reverse(r.entry.at.timestamp_millis()));
    }
    out
}

pub(crate) fn actor_name(a: Actor) -> &'static str {
    match a {
        Actor::Agent => "agent",
        Actor::Person => "person",
        Actor::Script => "script",
    }
}

fn parse_actor(s: &str) -> Option<Actor> {
    match s {
        "agent" => Some(Actor::Agent),
        "person" => Some(Actor::Person),
        "script" => Some(Actor::Script),
        _ => None,
    }
}

fn parse_action(s: &str) -> Option<ResolveAction> {
    match s {
        "apply" => Some(ResolveAction::Apply),
        "discard" => Some(ResolveAction::Discard),
        "undo" => Some(ResolveAction::Undo),
        "redo" => Some(ResolveAction::Redo),
        _ => None,
    }
}

/// The columns [`decision_row`] reads, in its order.
pub(crate) const DECISION_COLUMNS: &str =
    "workspace, at_ms, actor, action, action_id, label, source_tool_name, reason, is_error, text, client, partial, review";

/// A row of [`DECISION_COLUMNS`]: the actor and action as stored, and the rest.
pub(crate) fn decision_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<(String, String, Decision)> {
    Ok((
        r.get::<_, String>(2)?,
        r.get::<_, String>(3)?,
        Decision {
            workspace: r.get(0)?,
            at_ms: r.get(1)?,
            actor: Actor::Person,
            action: ResolveAction::Apply,
            action_id: r.get(4)?,
            label: r.get(5)?,
            source_tool_name: r.get(6)?,
            reason: r.get(7)?,
            is_error: r.get(8)?,
            text: r.get(9)?,
            client: r.get(10)?,
            // A row this build cannot read back as a partial apply shows as a full one.
            partial: r.get::<_, Option<String>>(11)?.and_then(|json| serde_json::from_str(&json).ok()),
            // Likewise a review this build cannot read: the result text still says it.
            review: r.get::<_, Option<String>>(12)?.and_then(|json| serde_json::from_str(&json).ok()),
        },
    ))
}

/// Checks the stored actor and action of a [`decision_row`].
pub(crate) fn decode((actor, action, mut d): (String, String, Decision)) -> Result<Decision, JournalError> {
    d.actor = parse_actor(&actor).ok_or(JournalError::Unknown { column: "actor", value: actor })?;
    d.action = parse_action(&action).ok_or(JournalError::Unknown { column: "action", value: action })?;
    Ok(d)
}
