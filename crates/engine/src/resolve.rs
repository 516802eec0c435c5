//! What a resolve says (SPEC §4): the typed request ([`Resolve`]) and its JSON form for
//! agents and scripts (`Resolve::parse`, the hidden `resolve` tool's schema), the details of
//! a decision ([`ResolveDetails`]), and how a decision reads in a history. The decision
//! itself is made by the typed core, `crate::decide`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::changeset::edits::{EditedFile, PersonEdit};
use crate::changeset::{LeaveOut, PartialApply};
use crate::review::{CommentDraft, CommentSide, Review, ReviewRequest};
use crate::tool::{ToolError, ToolResult};

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
    /// The agent that writes an approved change itself (an outside agent's gated edit); with
    /// an apply, nothing was written by the desk and `approved` says what the agent may write.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub written_by: Option<String>,
    /// For an approved change its agent writes: every file, with what it may hold afterwards.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approved: Option<Vec<ApprovedFile>>,
}

/// One file of an approved change that its agent writes itself.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApprovedFile {
    pub path: String,
    /// The BLAKE3 (hex) of the bytes it may hold afterwards; `None` when it is deleted.
    pub blake3: Option<String>,
    /// Those bytes as text, when they differ from what the agent proposed (the person took
    /// part of it, or edited it); `None` when the agent's own proposal was approved as is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
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

/// A resolve as its caller asks for it: the typed parameters of the `resolve` tool. The
/// session decides it ([`Session::resolve`](crate::Session::resolve)); agents and scripts
/// send it as JSON, read by [`Resolve::parse`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolve {
    pub choice: ResolveAction,
    /// Why; required (a blank reason is refused). Verbatim, byte for byte (SPEC §4): never
    /// trimmed or otherwise altered.
    pub reason: String,
    /// The id of the action the caller saw on top; another action on top is refused.
    pub expected_id: Option<String>,
    /// What to leave out of an apply (a partial apply; `None` or empty: the whole action).
    pub leave_out: Option<LeaveOut>,
    /// Comments to send besides those kept with the action, and Request changes (with
    /// `Discard`); `None`: the kept comments only.
    pub review: Option<ReviewRequest>,
    /// Edit, then apply: the person's own text for some files (apply only; refused from an
    /// agent). Empty: the proposal as it is.
    pub edits: Vec<PersonEdit>,
}

/// The keys `resolve` takes.
const RESOLVE_KEYS: [&str; 6] = ["action", "reason", "expected_id", "leave_out", "review", "edits"];

/// The message for an undo or a redo sent as a resolve.
pub(crate) const NOT_UNDO: &str =
    "`action` must be \"apply\" or \"discard\"; an applied action is undone from the history.";

/// The message for a missing or blank reason.
pub(crate) const BLANK_REASON: &str = "`reason` must be a non-empty string: say why you apply or discard this action.";

impl Resolve {
    /// Reads `resolve`'s JSON parameters, by hand so every message names the field and the
    /// value. The reason is kept exactly as given; only a blank (empty or whitespace-only)
    /// one is refused.
    pub fn parse(params: &Value) -> Result<Self, ToolError> {
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
            Some(Value::String(s)) => s.clone(),
            None | Some(Value::Null) => return Err(invalid(BLANK_REASON.into())),
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
            Some(value) => Some(parse_leave_out(value)?),
        };
        let review = match obj.get("review") {
            None | Some(Value::Null) => None,
            Some(value) => Some(parse_review(value)?),
        };
        let edits = match obj.get("edits") {
            None | Some(Value::Null) => Vec::new(),
            Some(value) => parse_edits(value)?,
        };
        let resolve = Self { choice: action, reason, expected_id, leave_out, review, edits };
        resolve.check()?;
        Ok(resolve)
    }

    /// The rules a resolve keeps whoever sends it (JSON or typed): a reason that is not blank,
    /// `leave_out` and `edits` with an apply only, Request changes with a discard only, no
    /// file both edited and left out, comments with a path, a text and a place.
    pub(crate) fn check(&self) -> Result<(), ToolError> {
        let invalid = |message: String| ToolError::InvalidParams(message);
        if self.reason.trim().is_empty() {
            return Err(invalid(BLANK_REASON.into()));
        }
        if matches!(self.choice, ResolveAction::Undo | ResolveAction::Redo) {
            return Err(invalid(NOT_UNDO.into()));
        }
        let leave_out = self.leave_out.as_ref().filter(|l| !l.is_empty());
        if leave_out.is_some() && self.choice == ResolveAction::Discard {
            return Err(invalid(
                "`leave_out` is only for \"apply\": a discard drops the whole action. Remove `leave_out`, or apply with it.".into(),
            ));
        }
        if self.review.as_ref().is_some_and(|r| r.request_changes) && self.choice == ResolveAction::Apply {
            return Err(invalid(
                "`review.request_changes` goes with \"discard\" (Request changes discards the action so that a new preview answers the review). To apply with comments, leave `request_changes` out.".into(),
            ));
        }
        for (i, c) in self.review.iter().flat_map(|r| r.comments.iter()).enumerate() {
            let at = format!("review.comments[{i}]");
            if c.path.trim().is_empty() || c.text.trim().is_empty() {
                return Err(invalid(format!("`{at}` needs a `path` and a `text`, both non-empty.")));
            }
            if c.start_line == 0 && c.replacement_id.is_none() {
                return Err(invalid(format!(
                    "`{at}` needs `start_line` (1-based), or `replacement_id` for an ast_edit replacement."
                )));
            }
        }
        if !self.edits.is_empty() && self.choice == ResolveAction::Discard {
            return Err(invalid(
                "`edits` are only for \"apply\": a discard writes nothing. Remove `edits`, or apply with them.".into(),
            ));
        }
        if let Some(leave_out) = leave_out {
            for e in &self.edits {
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
        Ok(())
    }

    /// The JSON parameters of this resolve, as an agent would send them (the transcript's
    /// and the journal's record of the call).
    pub fn to_params(&self) -> Value {
        let mut params = json!({"action": self.choice.as_str(), "reason": self.reason});
        if let Some(id) = &self.expected_id {
            params["expected_id"] = json!(id);
        }
        if let Some(leave_out) = self.leave_out.as_ref().filter(|l| !l.is_empty()) {
            params["leave_out"] = json!(leave_out);
        }
        if let Some(review) = &self.review {
            params["review"] = json!(review);
        }
        if !self.edits.is_empty() {
            params["edits"] = json!(self.edits);
        }
        params
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

/// Reads `leave_out`: `{"files": ["a.ts"], "replacements": {"src/x.ts": [3, 7]}, "hunks": {"b.md": [2]}}`.
fn parse_leave_out(value: &Value) -> Result<LeaveOut, ToolError> {
    let invalid = |message: String| ToolError::InvalidParams(message);
    const SHAPE: &str =
        "{\"files\": [\"src/a.ts\"], \"replacements\": {\"src/x.ts\": [3, 7]}, \"hunks\": {\"notes.md\": [2]}}";
    let Value::Object(obj) = value else {
        return Err(invalid(format!(
            "`leave_out` must be an object like {SHAPE}, got {}.",
            crate::params::quote(value)
        )));
    };
    crate::params::check_known_keys(RESOLVE_TOOL_NAME, "leave_out", obj, &["files", "replacements", "hunks"])?;
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
    leave_out.replacements = parse_id_map(obj.get("replacements"), "replacements", "replacement")?;
    leave_out.hunks = parse_id_map(obj.get("hunks"), "hunks", "hunk")?;
    Ok(leave_out)
}

/// Reads `leave_out.replacements` or `leave_out.hunks`: a file → the ids to leave out.
fn parse_id_map(value: Option<&Value>, key: &str, unit: &str) -> Result<BTreeMap<String, Vec<u32>>, ToolError> {
    let invalid = |message: String| ToolError::InvalidParams(message);
    let mut out = BTreeMap::new();
    match value {
        None | Some(Value::Null) => {}
        Some(Value::Object(map)) => {
            for (path, ids) in map {
                let bad = |v: &Value| {
                    invalid(format!(
                        "`leave_out.{key}[\"{path}\"]` must be a list of {unit} ids (whole numbers from 1), got {}.",
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
                out.insert(path.clone(), list);
            }
        }
        Some(other) => {
            return Err(invalid(format!(
                "`leave_out.{key}` must map a file to the ids of its {unit}s to leave out, like {{\"src/x.ts\": [2, 3]}}, got {}.",
                crate::params::quote(other)
            )))
        }
    }
    Ok(out)
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
            None | Some(Value::Null) => CommentSide::New,
            Some(Value::String(s)) if s == "new" => CommentSide::New,
            Some(Value::String(s)) if s == "old" => CommentSide::Old,
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
            written_by: None,
            approved: None,
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
