//! What a text edit proposes, as the queue and the agent read it: the label (`Edit:
//! src/a.ts`, `Edit: 3 files`, `Write: notes.md`), the result text (a summary, the unified
//! diff, each file's hunks when there are several, and what to do next), the details, and
//! the push of the change set.

use std::sync::Arc;

use resolve_engine::changeset::plural;
use resolve_engine::{
    ChangeSet, CustomToolApi, CustomToolPendingAction, ToolContext, ToolError, ToolResult, Workspace,
};
use serde_json::{json, Value};

use crate::patch::apply::Planned;

/// The most diff text a result carries; the pending action holds every file's diff.
pub const TEXT_DIFF_BYTES: usize = 200_000;

/// `Edit: src/a.ts` for one file, `Edit: 3 files` for more.
pub fn label(verb: &str, planned: &[Planned]) -> String {
    match planned {
        [one] => format!("{verb}: {}", one.path),
        many => format!("{verb}: {}", plural(many.len(), "file", "files")),
    }
}

/// What one proposal is, for [`push`].
pub struct Proposal<'a> {
    /// The queue's verb: `Edit`, `Write`, or an outside agent's (`Claude Code Edit`).
    pub verb: &'a str,
    /// The tool that made it (the action's source).
    pub source: &'a str,
    pub change_set: ChangeSet,
    pub planned: Vec<Planned>,
    /// The agent that writes it itself once approved (a gated edit); `None`: the desk writes.
    pub written_by: Option<&'a str>,
    /// Extra details for the window (a gated edit's key, agent and tool).
    pub extra: Option<Value>,
}

/// The per-file details (path, change, line counts).
fn file_details(cs: &ChangeSet, planned: &[Planned]) -> Vec<Value> {
    planned
        .iter()
        .map(|p| {
            let summary = cs.files().iter().find(|f| f.path == p.path);
            json!({
                "path": p.path,
                "change": p.change,
                "from": p.from,
                "added": summary.map(|s| s.added),
                "removed": summary.map(|s| s.removed),
            })
        })
        .collect()
}

/// The result text: summary, diffs (bounded), hunks, and the next step.
pub fn text(proposal: &Proposal<'_>, label: &str) -> String {
    let cs = &proposal.change_set;
    let (added, removed) = cs.line_totals();
    let mut out = format!(
        "{} preview: {} (+{added} −{removed}).\n\n",
        proposal.verb,
        plural(proposal.planned.len(), "file", "files")
    );
    let mut used = 0;
    let mut shown = 0;
    for p in &proposal.planned {
        let diff = match &p.from {
            Some(from) if cs.diff_file(&p.path, 3).is_some_and(|d| d.hunks.is_empty()) => {
                format!("rename {from} → {}\n", p.path)
            }
            _ => single_unified(cs, &p.path),
        };
        if used + diff.len() > TEXT_DIFF_BYTES && shown > 0 {
            break;
        }
        used += diff.len();
        shown += 1;
        out.push_str(&diff);
    }
    if shown < proposal.planned.len() {
        out.push_str(&format!(
            "\n({shown} of {} file diffs shown; the pending action holds every file's diff for the person's review.)\n",
            proposal.planned.len()
        ));
    }
    let with_hunks: Vec<String> = proposal
        .planned
        .iter()
        .filter_map(|p| {
            let rows = cs.hunk_rows(&p.path)?;
            (rows.len() > 1).then(|| {
                let list: Vec<String> = rows.iter().map(|r| format!("{} (line {})", r.id, r.line)).collect();
                format!("{}: {}", p.path, list.join(", "))
            })
        })
        .collect();
    if !with_hunks.is_empty() {
        out.push_str(&format!(
            "\nHunks (`leave_out.hunks` of resolve takes some and leaves the rest): {}\n",
            with_hunks.join("; ")
        ));
    }
    match proposal.written_by {
        Some(agent) => out.push_str(&format!(
            "\nNothing has been written yet: {agent} writes it once the person applies \"{label}\"; discarding it blocks the edit."
        )),
        None => out.push_str(&format!(
            "\nNothing has been written yet: apply the pending action \"{label}\" to write it, or discard it."
        )),
    }
    out
}

/// One file's unified diff from the change set (a rename's source counted as deleted).
fn single_unified(cs: &ChangeSet, path: &str) -> String {
    match cs.file_texts(path) {
        Some((old, new)) if old.is_some() || new.is_some() => {
            let old = old.unwrap_or_default();
            let new = new.unwrap_or_default();
            resolve_engine::diff::unified(path, old.as_bytes(), new.as_bytes(), 3)
        }
        _ => cs.diff_file(path, 3).and_then(|d| d.summary).map(|s| format!("{path}: {s}\n")).unwrap_or_default(),
    }
}

/// Pushes `proposal` as one pending action and returns its result (the text, and details
/// with `action_id`).
pub fn push(
    api: &CustomToolApi,
    ctx: &ToolContext,
    ws: Arc<Workspace>,
    proposal: Proposal<'_>,
) -> Result<ToolResult, ToolError> {
    let label = label(proposal.verb, &proposal.planned);
    let text = text(&proposal, &label);
    let files = file_details(&proposal.change_set, &proposal.planned);
    let (n, what) = (proposal.planned.len(), if proposal.verb.ends_with("Write") { "Wrote" } else { "Edited" });
    let applied = match proposal.planned.as_slice() {
        [one] => format!("{what} {}.", one.path),
        _ => format!("{what} {}.", plural(n, "file", "files")),
    };
    let discarded = match proposal.planned.as_slice() {
        [one] => format!("Discarded the change to {}; nothing was written.", one.path),
        _ => format!("Discarded the change to {}; nothing was written.", plural(n, "file", "files")),
    };
    let mut details = json!({ "files": files });
    if let (Some(Value::Object(extra)), Value::Object(d)) = (&proposal.extra, &mut details) {
        d.extend(extra.clone());
    }
    let mut action = CustomToolPendingAction::from_change_set(label, proposal.change_set, ws, applied)
        .with_discard_text(discarded)
        .with_details(details.clone())
        .with_source_tool_name(proposal.source);
    if let Some(agent) = proposal.written_by {
        action = action.written_by_agent(agent);
    }
    let id = api.push_from(ctx, action)?;
    details["action_id"] = json!(id);
    Ok(ToolResult::text(text).with_details(details))
}
