//! The built-in, hidden `resolve` tool (SPEC §4): applies or discards the top pending action.
//!
//! Guarantees: one resolve at a time per session (a second call waits, then sees the new
//! top); `expected_id` makes a double click or a race harmless; a failed apply keeps the
//! action on the stack with status `stale` or `failed`; a panicking apply is a failed apply.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use async_trait::async_trait;
use futures::FutureExt;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::changeset::edits::{EditedFile, PersonEdit};
use crate::changeset::{ChangeSet, LeaveOut, PartialApply};
use crate::pending::{ActionKind, ActionStatus, PendingAction, PendingActionStore};
use crate::review::{CommentDraft, Review, ReviewRequest, Side};
use crate::session::Actor;
use crate::tool::{Content, ErrorCode, Tool, ToolContext, ToolError, ToolResult};
use crate::waits::{Relayed, Waits};
use crate::workspace::Workspace;

pub const RESOLVE_TOOL_NAME: &str = "resolve";

pub use crate::vocab::ResolveAction;

/// The details of every resolve result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResolveDetails {
    pub action: ResolveAction,
    pub reason: String,
    pub source_tool_name: String,
    pub label: String,
    pub action_id: String,
    /// A partial apply: what was applied and what was left out (discarded in the same
    /// decision). `None` for a full apply and for a discard.
    /// Boxed: most results have none, and the details travel in events.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partial: Option<Box<PartialApply>>,
    /// The review that went with the decision (the person's comments, in file order, and
    /// whether changes were requested); `None` when there was none.
    /// Boxed, like `partial`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub review: Option<Box<Review>>,
    /// Edit, then apply: per file the person edited, the diff from the proposal to what was
    /// written. `None` when the person edited nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub edits: Option<Vec<EditedFile>>,
}

impl ResolveDetails {
    /// "Request changes": a discard that carries a review asking the agent to propose again.
    pub fn requests_changes(&self) -> bool {
        self.action == ResolveAction::Discard && self.review.as_ref().is_some_and(|r| r.request_changes)
    }
}

impl ResolveDetails {
    /// The details of a `resolve` result that got as far as an action (`None` for a call
    /// refused before anything ran, or for another tool's result).
    pub fn of_result(result: &ToolResult) -> Option<ResolveDetails> {
        serde_json::from_value(result.details.clone()?).ok()
    }
}

/// `resolve`'s parameters, read by hand so every message names the field and the value.
#[derive(Debug)]
pub(crate) struct ResolveParams {
    pub action: ResolveAction,
    /// Verbatim, byte for byte (SPEC §4): never trimmed or otherwise altered.
    pub reason: String,
    pub expected_id: Option<String>,
    /// What to leave out of an apply (a partial apply); `None` when nothing is left out.
    pub leave_out: Option<LeaveOut>,
    /// Comments to send with the decision (besides those kept with the action), and whether
    /// changes are requested (a discard only).
    pub review: Option<ReviewRequest>,
    /// The person's own text for some files (edit, then apply); apply only.
    pub edits: Vec<PersonEdit>,
}

/// The keys `resolve` takes.
const RESOLVE_KEYS: [&str; 6] = ["action", "reason", "expected_id", "leave_out", "review", "edits"];

/// The message for a missing or blank reason.
pub(crate) const BLANK_REASON: &str = "`reason` must be a non-empty string: say why you apply or discard this action.";

impl ResolveParams {
    /// Parses `resolve`'s parameters. The reason is kept exactly as given; only a blank
    /// (empty or whitespace-only) one is refused.
    pub(crate) fn parse(params: &Value) -> Result<Self, ToolError> {
        let invalid = |message: String| ToolError::InvalidParams(message);
        let obj = crate::params::as_object(RESOLVE_TOOL_NAME, params)?;
        crate::params::check_known_keys(RESOLVE_TOOL_NAME, "", obj, &RESOLVE_KEYS)?;
        let action = match obj.get("action") {
            Some(Value::String(s)) if s == "apply" => ResolveAction::Apply,
            Some(Value::String(s)) if s == "discard" => ResolveAction::Discard,
            None | Some(Value::Null) => return Err(invalid("`action` is required: \"apply\" or \"discard\".".into())),
            Some(other) => {
                return Err(invalid(format!(
                    "`action` must be \"apply\" or \"discard\", got {}.",
                    crate::params::quote(other)
                )))
            }
        };
        let reason = match obj.get("reason") {
            Some(Value::String(s)) if !s.trim().is_empty() => s.clone(),
            None | Some(Value::Null) | Some(Value::String(_)) => return Err(invalid(BLANK_REASON.into())),
            Some(other) => {
                return Err(invalid(format!(
                    "`reason` must be a non-empty string, got {}: say why you apply or discard this action.",
                    crate::params::quote(other)
                )))
            }
        };
        let expected_id = match obj.get("expected_id") {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(s.clone()),
            Some(other) => {
                return Err(invalid(format!(
                    "`expected_id` must be a string (the id of the action you reviewed), got {}.",
                    crate::params::quote(other)
                )))
            }
        };
        let leave_out = match obj.get("leave_out") {
            None | Some(Value::Null) => None,
            Some(value) => Some(parse_leave_out(value)?).filter(|l| !l.is_empty()),
        };
        if leave_out.is_some() && action == ResolveAction::Discard {
            return Err(invalid(
                "`leave_out` is only for \"apply\": a discard drops the whole action. Remove `leave_out`, or apply with it.".into(),
            ));
        }
        let review = match obj.get("review") {
            None | Some(Value::Null) => None,
            Some(value) => Some(parse_review(value)?),
        };
        if review.as_ref().is_some_and(|r| r.request_changes) && action == ResolveAction::Apply {
            return Err(invalid(
                "`review.request_changes` goes with \"discard\" (Request changes discards the action so that a new preview answers the review). To apply with comments, leave `request_changes` out.".into(),
            ));
        }
        let edits = match obj.get("edits") {
            None | Some(Value::Null) => Vec::new(),
            Some(value) => parse_edits(value)?,
        };
        if !edits.is_empty() && action == ResolveAction::Discard {
            return Err(invalid(
                "`edits` are only for \"apply\": a discard writes nothing. Remove `edits`, or apply with them.".into(),
            ));
        }
        if let Some(leave_out) = &leave_out {
            for e in &edits {
                let path = crate::changeset::select::normalise(&e.path);
                let left_out = leave_out.files.iter().any(|f| crate::changeset::select::normalise(f) == path)
                    || leave_out
                        .replacements
                        .iter()
                        .any(|(f, ids)| !ids.is_empty() && crate::changeset::select::normalise(f) == path);
                if left_out {
                    return Err(invalid(format!(
                        "\"{}\" is both edited and left out: keep your edit and apply the file, or leave it out and drop the edit.",
                        e.path
                    )));
                }
            }
        }
        Ok(Self { action, reason, expected_id, leave_out, review, edits })
    }

    /// `Err(IdMismatch)` when `expected_id` was given and the top action has another id.
    pub(crate) fn check_top(&self, top_id: &str, top_label: &str) -> Result<(), ToolError> {
        match self.expected_id.as_deref() {
            Some(expected) if expected != top_id => Err(ToolError::IdMismatch {
                expected: expected.to_string(),
                actual: top_id.to_string(),
                actual_label: top_label.to_string(),
            }),
            _ => Ok(()),
        }
    }
}

/// Reads `leave_out`: `{"files": ["a.ts"], "replacements": {"src/x.ts": [3, 7]}}`.
fn parse_leave_out(value: &Value) -> Result<LeaveOut, ToolError> {
    let invalid = |message: String| ToolError::InvalidParams(message);
    const SHAPE: &str = "{\"files\": [\"src/a.ts\"], \"replacements\": {\"src/x.ts\": [3, 7]}}";
    let Value::Object(obj) = value else {
        return Err(invalid(format!(
            "`leave_out` must be an object like {SHAPE}, got {}.",
            crate::params::quote(value)
        )));
    };
    crate::params::check_known_keys(RESOLVE_TOOL_NAME, "leave_out", obj, &["files", "replacements"])?;
    let mut leave_out = LeaveOut::default();
    match obj.get("files") {
        None | Some(Value::Null) => {}
        Some(Value::Array(items)) => {
            for item in items {
                match item {
                    Value::String(s) if !s.trim().is_empty() => leave_out.files.push(s.clone()),
                    other => {
                        return Err(invalid(format!(
                            "`leave_out.files` must list workspace-relative paths (strings), got {}.",
                            crate::params::quote(other)
                        )))
                    }
                }
            }
        }
        Some(other) => {
            return Err(invalid(format!(
                "`leave_out.files` must be a list of workspace-relative paths, got {}.",
                crate::params::quote(other)
            )))
        }
    }
    match obj.get("replacements") {
        None | Some(Value::Null) => {}
        Some(Value::Object(map)) => {
            for (path, ids) in map {
                let bad = |v: &Value| {
                    invalid(format!(
                        "`leave_out.replacements[\"{path}\"]` must be a list of replacement ids (whole numbers from 1), got {}.",
                        crate::params::quote(v)
                    ))
                };
                let Value::Array(items) = ids else { return Err(bad(ids)) };
                let mut list = Vec::with_capacity(items.len());
                for item in items {
                    match item.as_u64().filter(|&n| n >= 1 && n <= u32::MAX as u64) {
                        Some(n) => list.push(n as u32),
                        None => return Err(bad(item)),
                    }
                }
                leave_out.replacements.insert(path.clone(), list);
            }
        }
        Some(other) => {
            return Err(invalid(format!(
                "`leave_out.replacements` must map a file to the ids of its replacements to leave out, like {SHAPE}, got {}.",
                crate::params::quote(other)
            )))
        }
    }
    Ok(leave_out)
}

/// Reads `edits`: `[{"path": "src/a.ts", "text": "the whole new text"}]`.
fn parse_edits(value: &Value) -> Result<Vec<PersonEdit>, ToolError> {
    const SHAPE: &str = "[{\"path\": \"src/a.ts\", \"text\": \"the file's whole new text\"}]";
    let Value::Array(items) = value else {
        return Err(ToolError::InvalidParams(format!(
            "`edits` must be a list like {SHAPE}, got {}.",
            crate::params::quote(value)
        )));
    };
    let mut edits = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let at = format!("edits[{i}]");
        let Value::Object(e) = item else {
            return Err(ToolError::InvalidParams(format!(
                "`{at}` must be an object like {SHAPE}, got {}.",
                crate::params::quote(item)
            )));
        };
        crate::params::check_known_keys(RESOLVE_TOOL_NAME, &at, e, &["path", "text"])?;
        let (Some(Value::String(path)), Some(Value::String(text))) = (e.get("path"), e.get("text")) else {
            return Err(ToolError::InvalidParams(format!(
                "`{at}` needs `path` (a file of the action) and `text` (its whole new text), both strings."
            )));
        };
        edits.push(PersonEdit { path: path.clone(), text: text.clone() });
    }
    Ok(edits)
}

/// Reads `review`: `{"request_changes": true, "comments": [{"path": "a.ts", "side": "new",
/// "start_line": 3, "end_line": 4, "text": "…"}]}` (or `"replacement_id": 2` instead of lines).
fn parse_review(value: &Value) -> Result<ReviewRequest, ToolError> {
    let invalid = |message: String| ToolError::InvalidParams(message);
    const SHAPE: &str =
        "{\"request_changes\": true, \"comments\": [{\"path\": \"src/a.ts\", \"start_line\": 3, \"text\": \"…\"}]}";
    let Value::Object(obj) = value else {
        return Err(invalid(format!("`review` must be an object like {SHAPE}, got {}.", crate::params::quote(value))));
    };
    crate::params::check_known_keys(RESOLVE_TOOL_NAME, "review", obj, &["request_changes", "comments"])?;
    let request_changes = match obj.get("request_changes") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(other) => {
            return Err(invalid(format!(
                "`review.request_changes` must be true or false, got {}.",
                crate::params::quote(other)
            )))
        }
    };
    let items = match obj.get("comments") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(items)) => items.clone(),
        Some(other) => {
            return Err(invalid(format!(
                "`review.comments` must be a list of comments like {SHAPE}, got {}.",
                crate::params::quote(other)
            )))
        }
    };
    const COMMENT_KEYS: [&str; 6] = ["path", "side", "start_line", "end_line", "text", "replacement_id"];
    let mut comments = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let at = format!("review.comments[{i}]");
        let Value::Object(c) = item else {
            return Err(invalid(format!("`{at}` must be an object like {SHAPE}, got {}.", crate::params::quote(item))));
        };
        crate::params::check_known_keys(RESOLVE_TOOL_NAME, &at, c, &COMMENT_KEYS)?;
        let string = |key: &str| match c.get(key) {
            Some(Value::String(s)) if !s.trim().is_empty() => Ok(s.clone()),
            other => Err(invalid(format!(
                "`{at}.{key}` must be a non-empty string, got {}.",
                other.map_or("nothing".to_string(), crate::params::quote)
            ))),
        };
        let line = |key: &str| match c.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(v) => match v.as_u64().filter(|&n| n >= 1 && n <= u32::MAX as u64) {
                Some(n) => Ok(Some(n as u32)),
                None => Err(invalid(format!(
                    "`{at}.{key}` must be a line number (a whole number from 1), got {}.",
                    crate::params::quote(v)
                ))),
            },
        };
        let side = match c.get("side") {
            None | Some(Value::Null) => Side::New,
            Some(Value::String(s)) if s == "new" => Side::New,
            Some(Value::String(s)) if s == "old" => Side::Old,
            Some(other) => {
                return Err(invalid(format!(
                    "`{at}.side` must be \"new\" (the proposed text) or \"old\" (the text before), got {}.",
                    crate::params::quote(other)
                )))
            }
        };
        let replacement_id = line("replacement_id")?;
        let start_line = line("start_line")?;
        if start_line.is_none() && replacement_id.is_none() {
            return Err(invalid(format!(
                "`{at}` needs `start_line` (1-based), or `replacement_id` for an ast_edit replacement."
            )));
        }
        comments.push(CommentDraft {
            path: string("path")?,
            side,
            start_line: start_line.unwrap_or(0),
            end_line: line("end_line")?,
            text: string("text")?,
            replacement_id,
        });
    }
    Ok(ReviewRequest { request_changes, comments })
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

pub(crate) struct ResolveTool {
    store: Arc<PendingActionStore>,
    /// Where a partial apply writes (the session's workspace).
    workspace: Option<Arc<Workspace>>,
    /// Agents waiting on decisions, and decisions kept for those that were not.
    waits: Arc<Waits>,
    /// One resolve at a time per session.
    lock: tokio::sync::Mutex<()>,
}

/// What an agent that waited (or was not waiting) receives for a decision: the decider's
/// result, plus `Decided by <who>: applied|discarded. Reason: …`, and `decided_by` in the
/// details.
pub(crate) fn relayed_result(result: &ToolResult, actor: Option<Actor>) -> ToolResult {
    let choice = result.details.as_ref().and_then(|d| serde_json::from_value::<ResolveDetails>(d.clone()).ok());
    let (verb, reason) = match &choice {
        Some(d) => (
            match d.action {
                ResolveAction::Apply => "applied",
                ResolveAction::Discard => "discarded",
                ResolveAction::Undo => "undone",
                ResolveAction::Redo => "redone",
            },
            d.reason.clone(),
        ),
        None => ("decided", String::new()),
    };
    let who = match actor {
        Some(Actor::Script) => "a script",
        Some(Actor::Agent) => "another agent",
        Some(Actor::Person) | None => "the person",
    };
    let mut result = result.clone();
    let line = Content::Text { text: format!("Decided by {who}: {verb}. Reason: {reason}") };
    // The review, when there is one, stays last: decision, who decided and why, then comments.
    let has_review = ResolveDetails::of_result(&result).is_some_and(|d| d.review.is_some());
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
            Some(Actor::Script) => "script",
            Some(Actor::Agent) => "agent",
            Some(Actor::Person) | None => "person",
        };
        details.insert("decided_by".into(), json!(by));
    }
    result
}

impl ResolveTool {
    pub(crate) fn new(store: Arc<PendingActionStore>, waits: Arc<Waits>) -> Self {
        Self { store, workspace: None, waits, lock: tokio::sync::Mutex::new(()) }
    }

    /// Lets `leave_out` apply part of an action in `workspace`.
    pub(crate) fn with_workspace(mut self, workspace: Arc<Workspace>) -> Self {
        self.workspace = Some(workspace);
        self
    }

    /// Takes the action off the stack, then hands the decision to every agent waiting on it
    /// and keeps it for each interested agent that is not (the one that pushed the action,
    /// the one that proposed on it; not the agent that decided itself).
    fn decided(&self, ctx: &ToolContext, action_id: &str, result: &ToolResult) {
        let info = self.store.info(action_id);
        self.store.remove_decided(action_id);
        let actor = crate::session::CALL_SCOPE.try_with(|s| s.actor).ok();
        let mut interested = Vec::new();
        if let Some(info) = &info {
            interested.extend(info.pushed_by.clone());
            interested.extend(info.proposal.as_ref().and_then(|p| p.client.clone()));
        }
        if actor == Some(Actor::Agent) {
            interested.retain(|c| Some(c) != ctx.client.as_ref());
        }
        let relayed = Relayed { result: relayed_result(result, actor), call_id: ctx.call_id.clone(), actor };
        let label = info.map(|i| i.label).unwrap_or_default();
        self.waits.decided(action_id, &label, &relayed, &interested);
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
         `{\"files\": [paths], \"replacements\": {path: [ids]}}` applies the rest and discards what it names. \
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
                        "replacements": {"type": "object", "additionalProperties": {"type": "array", "items": {"type": "integer", "minimum": 1}}, "description": "ast_edit only: file path -> ids of single replacements to leave out"}
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
        ResolveParams::parse(params).map(|_| ())
    }

    async fn execute(&self, ctx: ToolContext, params: Value) -> Result<ToolResult, ToolError> {
        let params = ResolveParams::parse(&params)?;
        let reason = params.reason.clone();
        let _one_at_a_time = self.lock.lock().await;
        let top = self.store.top().ok_or(ToolError::NoPendingAction)?;
        params.check_top(&top.id, &top.label)?;
        let details = ResolveDetails {
            action: params.action,
            reason: reason.clone(),
            source_tool_name: top.source_tool_name.clone(),
            label: top.label.clone(),
            action_id: top.id.clone(),
            partial: None,
            review: review_of(&self.store, &top, params.review.as_ref())?.map(Box::new),
            edits: None,
        };
        let mut details = details;
        match params.action {
            ResolveAction::Apply => {
                // An orphaned action has no apply to run: refused before anything, status kept.
                if let Some(ActionStatus::Orphaned { message }) = self.store.info(&top.id).map(|a| a.status) {
                    return Err(ToolError::Failed(crate::stored::orphaned_apply_refusal(
                        &top.id, &top.label, &message,
                    )));
                }
                // Edits are the person's: an agent proposes another text with a new preview.
                if !params.edits.is_empty()
                    && crate::session::CALL_SCOPE.try_with(|s| s.actor).ok() == Some(Actor::Agent)
                {
                    return Err(ToolError::InvalidParams(
                        "`edits` are the person's (edit, then apply in the window); an agent proposes another text by pushing a new preview and discarding this one.".into(),
                    ));
                }
                // A partial apply: refused before anything runs when the selection is wrong.
                let part = match &params.leave_out {
                    Some(leave_out) => {
                        let ws = self.workspace.clone().ok_or_else(|| {
                            ToolError::Failed("No workspace is open in this runtime; apply the whole action.".into())
                        })?;
                        let (kept, partial) = select_part(&top, leave_out)?;
                        details.partial = Some(Box::new(partial.clone()));
                        Some((kept, Some(partial), ws))
                    }
                    None => None,
                };
                // Edit, then apply: the person's text in place of the proposal, pinned to the
                // same previewed bytes; refused before anything runs when an edit is wrong.
                let part = match params.edits.is_empty() {
                    true => part,
                    false => {
                        let (base, partial, ws) = match part {
                            Some(p) => p,
                            None => {
                                let ws = self.workspace.clone().ok_or_else(|| {
                                    ToolError::Failed(
                                        "No workspace is open in this runtime; apply without edits.".into(),
                                    )
                                })?;
                                let cs = top.change_set.clone().ok_or_else(|| {
                                    ToolError::InvalidParams(format!(
                                        "\"{}\" has no file list to edit: apply it as proposed, or discard it.",
                                        top.label
                                    ))
                                })?;
                                (cs, None, ws)
                            }
                        };
                        let (edited_cs, edited) = base.with_edits(&params.edits).map_err(ToolError::InvalidParams)?;
                        if edited.is_empty() {
                            Some((base, partial, ws)).filter(|p| p.1.is_some())
                        } else {
                            details.edits = Some(edited);
                            Some((Arc::new(edited_cs), partial, ws))
                        }
                    }
                };
                let details_json = serde_json::to_value(&details).unwrap_or(Value::Null);
                // The action is named in the apply's intent record (for a crash recovery).
                let applying = crate::changeset::ApplyContext {
                    action_id: top.id.clone(),
                    label: top.label.clone(),
                    source_tool_name: top.source_tool_name.clone(),
                    actor: crate::session::CALL_SCOPE.try_with(|s| s.actor).ok(),
                    client: crate::session::CALL_SCOPE.try_with(|s| s.client.clone()).ok().flatten(),
                };
                let run = match &part {
                    None => (top.apply)(reason.clone()),
                    Some((kept, partial, ws)) => {
                        apply_part(&top.label, kept.clone(), partial.as_ref(), details.edits.as_deref(), ws.clone())
                            .boxed()
                    }
                };
                let apply = crate::changeset::recovery::APPLYING.scope(applying, run);
                let outcome = AssertUnwindSafe(apply).catch_unwind().await;
                let failure = match outcome {
                    Ok(Ok(result)) if !result.is_error => {
                        let mut result = result;
                        if !result.has_text() {
                            result.content = vec![Content::Text { text: format!("Applied: {}.", top.label) }];
                        }
                        if let Some(review) = &details.review {
                            result.content.push(Content::Text { text: review.render(Some(&reason)) });
                        }
                        result.details = Some(details_json);
                        // The undo data covers exactly what was written.
                        match &part {
                            Some((kept, _, _)) => crate::undo::remember_applied(kept.clone()).await,
                            None => {
                                if let Some(cs) = top.change_set.clone() {
                                    crate::undo::remember_applied(cs).await;
                                }
                            }
                        }
                        self.decided(&ctx, &top.id, &result);
                        return Ok(result);
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
                Ok(ToolResult {
                    content: vec![Content::Text { text: message }],
                    details: Some(details_json),
                    is_error: true,
                    error_code: Some(code.as_str().to_string()),
                })
            }
            ResolveAction::Undo | ResolveAction::Redo => Err(ToolError::InvalidParams(
                "`action` must be \"apply\" or \"discard\"; an applied action is undone from the history.".into(),
            )),
            ResolveAction::Discard => {
                let details_json = serde_json::to_value(&details).unwrap_or(Value::Null);
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
                let mut result = ToolResult::text(text).with_details(details_json);
                if let Some(review) = &details.review {
                    result.content.push(Content::Text { text: review.render(None) });
                }
                if details.requests_changes() {
                    let comments = details.review.as_ref().map(|r| r.comments.clone()).unwrap_or_default();
                    self.store.remember_round(&top.id, comments);
                }
                self.decided(&ctx, &top.id, &result);
                Ok(result)
            }
        }
    }
}

/// Applies the kept part of an action through the ordinary [`ChangeSet::apply`]; the text is
/// `Applied: <label>.` then what was left out, one line each (then warnings, if any).
async fn apply_part(
    label: &str,
    kept: Arc<ChangeSet>,
    partial: Option<&PartialApply>,
    edits: Option<&[EditedFile]>,
    ws: Arc<Workspace>,
) -> Result<ToolResult, ToolError> {
    let context = crate::changeset::recovery::current_context();
    let report = tokio::task::spawn_blocking(move || kept.apply_with_context(&ws, context))
        .await
        .map_err(|e| ToolError::Failed(format!("apply stopped unexpectedly: {e}; nothing was written")))??;
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
    let mut result = ToolResult::text(lines.join("\n"));
    if !report.warnings.is_empty() {
        result.content.push(Content::Text { text: format!("Warnings: {}", report.warnings.join("; ")) });
    }
    Ok(result)
}

/// The header of a resolve result in a transcript or history:
/// `Accept: <summary> [<source>]` or `Discard: <summary> [<source>]`, where a label of the
/// form `Source: summary` is split at the first `": "` (the badge is the source); a label
/// without it keeps the whole label as summary and the producing tool's name as source.
/// A failed apply is rendered as an error, never as a discard.
pub fn render_resolve_header(details: &ResolveDetails, is_error: bool, text: &str) -> String {
    let (source, summary) = split_label(&details.label, &details.source_tool_name);
    if is_error {
        return format!("Error: {text}");
    }
    let verb = match details.action {
        ResolveAction::Apply => "Accept",
        ResolveAction::Discard => "Discard",
        ResolveAction::Undo => "Undo",
        ResolveAction::Redo => "Redo",
    };
    format!("{verb}: {summary} [{source}]")
}

/// Splits `Source: summary` into (badge, summary); without `": "`, (fallback, label).
pub fn split_label<'a>(label: &'a str, fallback_source: &'a str) -> (&'a str, &'a str) {
    let (badge, summary) = label_parts(label);
    (badge.unwrap_or(fallback_source), summary)
}

/// The label rule (SPEC §4): `Source: summary` splits at the first `": "` into a badge and a
/// summary, both non-empty; any other label has no badge and is its own summary.
pub fn label_parts(label: &str) -> (Option<&str>, &str) {
    match label.split_once(": ") {
        Some((badge, summary)) if !badge.is_empty() && !summary.is_empty() => (Some(badge), summary),
        _ => (None, label),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn details(action: ResolveAction, label: &str) -> ResolveDetails {
        ResolveDetails {
            action,
            reason: "r".into(),
            source_tool_name: "ast_edit".into(),
            label: label.into(),
            action_id: "a1".into(),
            partial: None,
            review: None,
            edits: None,
        }
    }

    #[test]
    fn header_splits_label_at_first_colon_space() {
        let d = details(ResolveAction::Apply, "AST Edit: 3 replacements in 2 files: ok");
        assert_eq!(render_resolve_header(&d, false, ""), "Accept: 3 replacements in 2 files: ok [AST Edit]");
        let d = details(ResolveAction::Discard, "rename things");
        assert_eq!(render_resolve_header(&d, false, ""), "Discard: rename things [ast_edit]");
    }

    #[test]
    fn labels_split_at_the_first_colon_space_only_when_both_parts_are_there() {
        assert_eq!(label_parts("AST Edit: 3 replacements: ok"), (Some("AST Edit"), "3 replacements: ok"));
        assert_eq!(label_parts("Changelog entry for 2.4.0"), (None, "Changelog entry for 2.4.0"));
        assert_eq!(label_parts(": no badge"), (None, ": no badge"));
        assert_eq!(label_parts("Nothing after: "), (None, "Nothing after: "));
        assert_eq!(label_parts("time 10:30"), (None, "time 10:30"));
    }

    #[test]
    fn failed_apply_renders_as_error_not_discard() {
        let d = details(ResolveAction::Apply, "AST Edit: 1 replacement in 1 file");
        assert_eq!(render_resolve_header(&d, true, "Preview is stale"), "Error: Preview is stale");
    }
}
