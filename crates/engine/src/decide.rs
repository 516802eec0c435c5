//! The typed core of `resolve`: applies or discards the top pending action (SPEC §4).
//!
//! Guarantees: one resolve at a time per session (a second call waits, then sees the new
//! top); `expected_id` makes a double click or a race harmless; a failed apply keeps the
//! action on the stack with status `stale` or `failed`; a panicking apply is a failed apply.
//!
//! One door for every apply of a change set — whole, part (`leave_out`), or with the
//! person's edits: [`apply_change_set`], with the action named in the intent record (for a
//! crash recovery) as a parameter. Only an action made of a closure runs its own `apply`.
//! The decision comes back as a value ([`Decision`]): its details, typed, and the record that
//! undoes it; nothing is read back out of a result's JSON.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use async_trait::async_trait;
use futures::FutureExt;
use serde_json::{json, Value};

use crate::changeset::edits::EditedFile;
use crate::changeset::{ApplyContext, ChangeSet, LeaveOut, PartialApply};
use crate::pending::{ActionKind, ActionStatus, PendingAction, PendingActionStore};
use crate::resolve::{Resolve, ResolveAction, ResolveDetails, RESOLVE_TOOL_NAME};
use crate::review::{Review, ReviewRequest};
use crate::tool::{Content, ErrorCode, Tool, ToolContext, ToolError, ToolResult};
use crate::undo::UndoRecord;
use crate::vocab::Actor;
use crate::waits::{Relayed, Waits};
use crate::workspace::Workspace;

/// Who asks for a decision.
#[derive(Debug, Clone)]
pub(crate) struct Caller {
    pub actor: Actor,
    /// The agent or MCP client, when it said.
    pub client: Option<String>,
    /// The call that decides (waiting agents are told which).
    pub call_id: String,
}

/// What a resolve that got as far as an action did.
#[derive(Debug, Clone)]
pub(crate) struct Decision {
    /// What the caller sees (an error result for a failed apply).
    pub result: ToolResult,
    /// The decision, typed (a failed apply too: the action stays, with its status).
    pub details: ResolveDetails,
    /// For a successful apply of a change set: the record that reverts exactly what was written.
    pub undo: Option<Arc<UndoRecord>>,
}

/// Decides the top pending action of one session's store.
pub(crate) struct Decider {
    store: Arc<PendingActionStore>,
    /// Where change sets are written (the session's workspace).
    workspace: Arc<Workspace>,
    /// Agents waiting on decisions, and decisions kept for those that were not.
    waits: Arc<Waits>,
    /// One resolve at a time per session.
    lock: tokio::sync::Mutex<()>,
}

/// What an agent that waited (or was not waiting) receives for a decision: the decider's
/// result, plus `Decided by <who>: applied|discarded. Reason: …`, and `decided_by` in the
/// details.
pub(crate) fn relayed_result(result: &ToolResult, details: &ResolveDetails, actor: Actor) -> ToolResult {
    let verb = match details.action {
        ResolveAction::Apply => "applied",
        ResolveAction::Discard => "discarded",
        ResolveAction::Undo => "undone",
        ResolveAction::Redo => "redone",
    };
    let reason = &details.reason;
    let who = match actor {
        Actor::Script => "a script",
        Actor::Agent => "another agent",
        Actor::Person => "the person",
    };
    let mut result = result.clone();
    let line = Content::Text { text: format!("Decided by {who}: {verb}. Reason: {reason}") };
    // The review, when there is one, stays last: decision, who decided and why, then comments.
    let has_review = details.review.is_some();
    if has_review && !result.content.is_empty() {
        let at = result.content.len() - 1;
        // The review's own `Reason:` line (an apply's) is said by this line now.
        let Content::Text { text } = &mut result.content[at];
        if let Some(rest) = text.split_once('\n').filter(|(first, _)| first.starts_with("Reason: ")).map(|(_, r)| r) {
            *text = rest.to_string();
        }
        result.content.insert(at, line);
    } else {
        result.content.push(line);
    }
    if let Some(Value::Object(details)) = result.details.as_mut() {
        let by = match actor {
            Actor::Script => "script",
            Actor::Agent => "agent",
            Actor::Person => "person",
        };
        details.insert("decided_by".into(), json!(by));
    }
    result
}

/// The review that goes with deciding `top`: the comments kept with it, then those the call
/// gives (anchored on its change set), in file order; `None` when there is nothing to say.
fn review_of(
    store: &PendingActionStore,
    top: &PendingAction,
    request: Option<&ReviewRequest>,
) -> Result<Option<Review>, ToolError> {
    let mut comments = store.comments(&top.id);
    if let Some(request) = request {
        if !request.comments.is_empty() {
            let cs = top.change_set.as_deref().ok_or_else(|| {
                ToolError::InvalidParams(format!(
                    "\"{}\" has no file list to comment on: leave `review.comments` out and say it in the reason.",
                    top.label
                ))
            })?;
            for (i, draft) in request.comments.iter().enumerate() {
                let comment = crate::review::anchor(cs, draft, format!("r{}", i + 1))
                    .map_err(|e| ToolError::InvalidParams(format!("`review.comments[{i}]`: {e}")))?;
                comments.push(comment);
            }
        }
    }
    crate::review::sort_in_file_order(&mut comments, top.change_set.as_deref());
    let review = Review { request_changes: request.is_some_and(|r| r.request_changes), comments };
    Ok((!review.is_empty()).then_some(review))
}

/// The part of `top` that `leave_out` keeps, or why it cannot be left out of.
fn select_part(top: &PendingAction, leave_out: &LeaveOut) -> Result<(Arc<ChangeSet>, PartialApply), ToolError> {
    let cs = match (top.kind(), &top.change_set) {
        (ActionKind::ChangeSet, Some(cs)) => cs,
        (kind, _) => {
            let what = match kind {
                ActionKind::Rename => "a rename table",
                _ => "a custom tool's action without a file list",
            };
            return Err(ToolError::InvalidParams(format!(
                "`leave_out` needs an action with a file list (a change set), but \"{}\" is {what}: apply or discard it whole (call again without `leave_out`).",
                top.label
            )));
        }
    };
    let (kept, partial) = cs.select(leave_out).map_err(ToolError::InvalidParams)?;
    Ok((Arc::new(kept), partial))
}

impl Decider {
    pub(crate) fn new(store: Arc<PendingActionStore>, workspace: Arc<Workspace>, waits: Arc<Waits>) -> Self {
        Self { store, workspace, waits, lock: tokio::sync::Mutex::new(()) }
    }

    /// Takes the action off the stack, then hands the decision to every agent waiting on it
    /// and keeps it for each interested agent that is not (the one that pushed the action,
    /// the one that proposed on it; not the agent that decided itself).
    fn decided(&self, caller: &Caller, details: &ResolveDetails, result: &ToolResult) {
        let action_id = details.action_id.as_str();
        let info = self.store.info(action_id);
        self.store.remove_decided(action_id);
        let mut interested = Vec::new();
        if let Some(info) = &info {
            interested.extend(info.pushed_by.clone());
            interested.extend(info.proposal.as_ref().and_then(|p| p.client.clone()));
        }
        if caller.actor == Actor::Agent {
            interested.retain(|c| Some(c) != caller.client.as_ref());
        }
        let relayed = Relayed {
            result: relayed_result(result, details, caller.actor),
            details: Some(details.clone()),
            call_id: caller.call_id.clone(),
            actor: Some(caller.actor),
        };
        let label = info.map(|i| i.label).unwrap_or_default();
        self.waits.decided(action_id, &label, &relayed, &interested);
    }

    /// Applies or discards the top action. `Err`: refused before anything ran (empty stack,
    /// another action on top, a wrong selection or edit); nothing changed.
    pub(crate) async fn decide(&self, caller: &Caller, resolve: Resolve) -> Result<Decision, ToolError> {
        resolve.check()?;
        let _one_at_a_time = self.lock.lock().await;
        let top = self.store.top().ok_or(ToolError::NoPendingAction)?;
        resolve.check_top(&top.id, &top.label)?;
        let details = ResolveDetails {
            action: resolve.choice,
            reason: resolve.reason.clone(),
            source_tool_name: top.source_tool_name.clone(),
            label: top.label.clone(),
            action_id: top.id.clone(),
            partial: None,
            review: review_of(&self.store, &top, resolve.review.as_ref())?.map(Box::new),
            edits: None,
            written_by: top.written_by().map(str::to_string),
            approved: None,
        };
        match resolve.choice {
            ResolveAction::Apply => self.apply(caller, &top, resolve, details).await,
            ResolveAction::Undo | ResolveAction::Redo => Err(ToolError::InvalidParams(crate::resolve::NOT_UNDO.into())),
            ResolveAction::Discard => {
                let reason = resolve.reason;
                let default_text = format!("Discarded: {}. Reason: {}", top.label, reason);
                let text = match &top.reject {
                    None => default_text,
                    Some(reject) => match AssertUnwindSafe(reject(reason.clone())).catch_unwind().await {
                        Ok(Ok(Some(result))) if result.has_text() => result.text_content(),
                        Ok(Ok(_)) => default_text,
                        Ok(Err(err)) => {
                            format!("{default_text} (its cleanup reported an error: {err})")
                        }
                        Err(_) => format!("{default_text} (its cleanup panicked)"),
                    },
                };
                let mut result = ToolResult::text(text).with_details(details_json(&details));
                if let Some(review) = &details.review {
                    result.content.push(Content::Text { text: review.render(None) });
                }
                if details.requests_changes() {
                    let comments = details.review.as_ref().map(|r| r.comments.clone()).unwrap_or_default();
                    self.store.remember_round(&top.id, comments);
                }
                self.decided(caller, &details, &result);
                Ok(Decision { result, details, undo: None })
            }
        }
    }

    /// An apply: the top action's change set (whole, a part, or with the person's edits)
    /// through [`apply_change_set`], or a closure action's own `apply`.
    async fn apply(
        &self,
        caller: &Caller,
        top: &PendingAction,
        resolve: Resolve,
        mut details: ResolveDetails,
    ) -> Result<Decision, ToolError> {
        let reason = resolve.reason.clone();
        // An orphaned action has no apply to run: refused before anything, status kept.
        if let Some(ActionStatus::Orphaned { message }) = self.store.info(&top.id).map(|a| a.status) {
            return Err(ToolError::Failed(crate::stored::orphaned_apply_refusal(&top.id, &top.label, &message)));
        }
        // Edits are the person's: an agent proposes another text with a new preview.
        if !resolve.edits.is_empty() && caller.actor == Actor::Agent {
            return Err(ToolError::InvalidParams(
                "`edits` are the person's (edit, then apply in the window); an agent proposes another text by pushing a new preview and discarding this one.".into(),
            ));
        }
        // What is written: the change set, narrowed by `leave_out`, with the person's edits;
        // refused before anything runs when the selection or an edit is wrong.
        let mut write = top.change_set.clone();
        if let Some(leave_out) = resolve.leave_out.as_ref().filter(|l| !l.is_empty()) {
            let (kept, partial) = select_part(top, leave_out)?;
            details.partial = Some(Box::new(partial));
            write = Some(kept);
        }
        if !resolve.edits.is_empty() {
            let base = write.ok_or_else(|| {
                ToolError::InvalidParams(format!(
                    "\"{}\" has no file list to edit: apply it as proposed, or discard it.",
                    top.label
                ))
            })?;
            let (edited_cs, edited) = base.with_edits(&resolve.edits).map_err(ToolError::InvalidParams)?;
            write = Some(match edited.is_empty() {
                true => base,
                false => {
                    details.edits = Some(edited);
                    Arc::new(edited_cs)
                }
            });
        }
        // The action is named in the apply's intent record (for a crash recovery).
        let context = ApplyContext {
            action_id: top.id.clone(),
            label: top.label.clone(),
            source_tool_name: top.source_tool_name.clone(),
            actor: Some(caller.actor),
            client: caller.client.clone(),
        };
        let run = match (&write, top.written_by()) {
            // Its agent writes it: checked against the disk, nothing written here.
            (Some(cs), Some(agent)) => {
                let proposed = top.change_set.clone();
                details.approved = Some(approved_files(cs, proposed.as_deref()));
                approve_change_set(&top.label, agent, cs.clone(), &details, self.workspace.clone()).boxed()
            }
            (Some(cs), None) => {
                let whole_text = top.recipe.as_ref().map(|r| r.applied_text.clone()).unwrap_or_default();
                apply_change_set(&top.label, cs.clone(), &details, whole_text, self.workspace.clone(), context).boxed()
            }
            (None, _) => (top.apply)(reason.clone()),
        };
        let failure = match AssertUnwindSafe(run).catch_unwind().await {
            Ok(Ok(result)) if !result.is_error => {
                let mut result = result;
                if !result.has_text() {
                    result.content = vec![Content::Text { text: format!("Applied: {}.", top.label) }];
                }
                if let Some(review) = &details.review {
                    result.content.push(Content::Text { text: review.render(Some(&reason)) });
                }
                result.details = Some(details_json(&details));
                // The undo data covers exactly what was written.
                let undo = match write {
                    Some(cs) => tokio::task::spawn_blocking(move || UndoRecord::of(&cs)).await.ok().map(Arc::new),
                    None => None,
                };
                self.decided(caller, &details, &result);
                return Ok(Decision { result, details, undo });
            }
            Ok(Ok(result)) => ToolError::Failed(result.text_content()),
            Ok(Err(err)) => err,
            Err(_) => ToolError::Failed("the action's apply panicked".into()),
        };
        let (status, message) = match &failure {
            ToolError::Stale { files, message } => {
                (ActionStatus::Stale { files: files.clone(), message: message.clone() }, message.clone())
            }
            other => {
                let message = format!(
                    "Apply failed for \"{}\": {other} The action stays on the stack (status: failed); apply again or discard it.",
                    top.label
                );
                (ActionStatus::Failed { error: other.to_string() }, message)
            }
        };
        self.store.set_status(&top.id, status);
        let code = match failure {
            ToolError::Stale { .. } => ErrorCode::Stale,
            _ => ErrorCode::ApplyFailed,
        };
        let result = ToolResult {
            content: vec![Content::Text { text: message }],
            details: Some(details_json(&details)),
            is_error: true,
            error_code: Some(code.as_str().to_string()),
        };
        Ok(Decision { result, details, undo: None })
    }
}

/// The details as agents read them in a result.
fn details_json(details: &ResolveDetails) -> Value {
    serde_json::to_value(details).unwrap_or(Value::Null)
}

/// The one door for writing an action's change set (whole, a part, or with the person's
/// edits) through the ordinary [`ChangeSet::apply_with_context`]. The text is the action's own
/// applied text for a whole apply as proposed; otherwise `Applied: <label>.` (or `Applied
/// with the person's edits: <label>.`), then what was left out, one line each, then the edits'
/// diffs; then warnings, if any.
async fn apply_change_set(
    label: &str,
    cs: Arc<ChangeSet>,
    details: &ResolveDetails,
    whole_text: String,
    ws: Arc<Workspace>,
    context: ApplyContext,
) -> Result<ToolResult, ToolError> {
    let report = tokio::task::spawn_blocking(move || cs.apply_with_context(&ws, Some(context)))
        .await
        .map_err(|e| ToolError::Failed(format!("apply stopped unexpectedly: {e}; nothing was written")))??;
    let (partial, edits) = (details.partial.as_deref(), details.edits.as_deref());
    let mut result = match (partial, edits) {
        (None, None) => ToolResult::text(whole_text),
        _ => ToolResult::text(part_text(label, partial, edits)),
    };
    if !report.warnings.is_empty() {
        result.content.push(Content::Text { text: format!("Warnings: {}", report.warnings.join("; ")) });
    }
    Ok(result)
}

/// Every file of `cs` with the bytes it may hold once its agent wrote it, the text included
/// where it differs from the agent's own proposal (`proposed`).
fn approved_files(cs: &ChangeSet, proposed: Option<&ChangeSet>) -> Vec<crate::resolve::ApprovedFile> {
    use crate::changeset::Change;
    let proposal_of = |path: &str| -> Option<&[u8]> {
        proposed?.changes().iter().find(|c| c.path() == path).and_then(|c| match c {
            Change::Edit { after, .. } => Some(&after[..]),
            Change::Create { contents, .. } => Some(&contents[..]),
            _ => None,
        })
    };
    cs.changes()
        .iter()
        .map(|c| {
            let after: Option<&[u8]> = match c {
                Change::Edit { after, .. } => Some(after),
                Change::Create { contents, .. } => Some(contents),
                Change::Delete { .. } | Change::Rename { .. } => None,
            };
            crate::resolve::ApprovedFile {
                path: c.path().to_string(),
                blake3: after.map(|a| blake3::hash(a).to_hex().to_string()),
                content: after
                    .filter(|a| proposal_of(c.path()) != Some(a))
                    .map(|a| String::from_utf8_lossy(a).into_owned()),
            }
        })
        .collect()
}

/// The approval of a change its agent writes itself: every file checked against the bytes
/// the preview read (a file changed since makes the action stale, named), then nothing
/// written. The text says who writes what; then what was left out and the person's edits.
async fn approve_change_set(
    label: &str,
    agent: &str,
    cs: Arc<ChangeSet>,
    details: &ResolveDetails,
    ws: Arc<Workspace>,
) -> Result<ToolResult, ToolError> {
    tokio::task::spawn_blocking(move || cs.verify_on_disk(&ws))
        .await
        .map_err(|e| ToolError::Failed(format!("the check stopped unexpectedly: {e}; nothing was approved")))??;
    let (partial, edits) = (details.partial.as_deref(), details.edits.as_deref());
    let mut text = match (partial, edits) {
        (None, None) => format!("Approved: {label}. {agent} writes it now, exactly as proposed."),
        _ => {
            let part = part_text(label, partial, edits);
            let rest = part.split_once('\n').map(|(_, r)| format!("\n{r}")).unwrap_or_default();
            format!("Approved with changes: {label}. {agent} writes the approved version now.{rest}")
        }
    };
    if edits.is_some() {
        text = text.replace("from your proposal to what was written", "from the proposal to what was approved");
    }
    Ok(ToolResult::text(text))
}

/// `Applied: <label>.` then what was left out, then the person's edits as diffs.
fn part_text(label: &str, partial: Option<&PartialApply>, edits: Option<&[EditedFile]>) -> String {
    let mut lines = match edits {
        Some(_) => vec![format!("Applied with the person's edits: {label}.")],
        None => vec![format!("Applied: {label}.")],
    };
    if let Some(partial) = partial {
        lines.extend(partial.left_out_lines());
    }
    if let Some(edits) = edits {
        lines.push("The person's edits, from your proposal to what was written:".to_string());
        for e in edits {
            lines.push(e.diff.trim_end_matches('\n').to_string());
        }
    }
    lines.join("\n")
}

/// The `resolve` tool as the registry lists it: its schema and description for agents, and
/// the JSON adapter onto the typed core ([`Decider`]). The session
/// routes every `resolve` call to the core itself (with the caller's actor); `execute` is
/// for a caller holding the bare tool, decided as a script.
pub(crate) struct ResolveTool {
    decider: Arc<Decider>,
}

impl ResolveTool {
    pub(crate) fn new(decider: Arc<Decider>) -> Self {
        Self { decider }
    }
}

#[async_trait]
impl Tool for ResolveTool {
    fn name(&self) -> &str {
        RESOLVE_TOOL_NAME
    }
    fn label(&self) -> &str {
        "Resolve"
    }
    fn description(&self) -> &str {
        "Apply or discard the most recent pending preview (the top of the pending-action stack). \
         `action`: \"apply\" makes the previewed change persistent, \"discard\" drops it. \
         `reason`: why, in a sentence (required). Optional `leave_out` (apply only): \
         `{\"files\": [paths], \"replacements\": {path: [ids]}, \"hunks\": {path: [ids]}}` applies the rest and discards what it names \
         (hunks: the runs of changed lines of a file's diff, numbered from 1 in file order). \
         Optional `review`: `{\"request_changes\": true, \"comments\": [{\"path\", \"start_line\", \"text\"}]}` \
         (request_changes with \"discard\" only) sends line comments with the decision."
    }
    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "action": {"type": "string", "enum": ["apply", "discard"], "description": "apply or discard the top pending action"},
                "reason": {"type": "string", "minLength": 1, "description": "why (shown in the history)"},
                "expected_id": {"type": "string", "description": "optional: the id of the action you reviewed; the call fails if another action is on top"},
                "leave_out": {
                    "type": "object",
                    "description": "optional, apply only: what to leave out (discarded in the same decision); the rest is applied",
                    "properties": {
                        "files": {"type": "array", "items": {"type": "string"}, "description": "workspace-relative paths from the action's file list"},
                        "replacements": {"type": "object", "additionalProperties": {"type": "array", "items": {"type": "integer", "minimum": 1}}, "description": "ast_edit only: file path -> ids of single replacements to leave out"},
                        "hunks": {"type": "object", "additionalProperties": {"type": "array", "items": {"type": "integer", "minimum": 1}}, "description": "any text edit: file path -> ids of hunks to leave out (hunk n = the n-th run of changed lines in the file's diff)"}
                    },
                    "additionalProperties": false
                },
                "edits": {
                    "type": "array",
                    "description": "the person's own text for files before applying (sent by the Resolve Desk window; refused from an agent: push a new preview instead)",
                    "items": {
                        "type": "object",
                        "properties": {"path": {"type": "string"}, "text": {"type": "string"}},
                        "required": ["path", "text"],
                        "additionalProperties": false
                    }
                },
                "review": {
                    "type": "object",
                    "description": "optional: line comments sent with the decision; request_changes (discard only) asks for a new preview",
                    "properties": {
                        "request_changes": {"type": "boolean"},
                        "comments": {
                            "type": "array",
                            "items": {
                                "type": "object",
                                "properties": {
                                    "path": {"type": "string"},
                                    "side": {"type": "string", "enum": ["new", "old"]},
                                    "start_line": {"type": "integer", "minimum": 1},
                                    "end_line": {"type": "integer", "minimum": 1},
                                    "text": {"type": "string", "minLength": 1},
                                    "replacement_id": {"type": "integer", "minimum": 1}
                                },
                                "required": ["path", "text"],
                                "additionalProperties": false
                            }
                        }
                    },
                    "additionalProperties": false
                }
            },
            "required": ["action", "reason"],
            "additionalProperties": false
        })
    }
    fn hidden(&self) -> bool {
        true
    }

    fn check_params(&self, params: &Value) -> Result<(), ToolError> {
        Resolve::parse(params).map(|_| ())
    }

    async fn execute(&self, ctx: ToolContext, params: Value) -> Result<ToolResult, ToolError> {
        let resolve = Resolve::parse(&params)?;
        let caller = Caller { actor: Actor::Script, client: ctx.client.clone(), call_id: ctx.call_id };
        Ok(self.decider.decide(&caller, resolve).await?.result)
    }
}
