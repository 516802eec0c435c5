//! The JSON Lines script format and its runner.
//!
//! A script is one tool call per line: `{"tool": NAME, "params": {...}}`. Blank lines and
//! lines starting with `#` are skipped; `params` may be omitted (it is then `{}`). After
//! each step the runner reports a [`StepReport`]: the result and the pending stack after the
//! step, top first. Tool errors are reported in-band and the run goes on; a malformed line
//! stops the run with [`ScriptError::Malformed`] naming the line number.

use std::io::BufRead;

use resolve_engine::params::{did_you_mean, quote, shown};
use resolve_engine::{Actor, Session};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One parsed line.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScriptLine {
    pub tool: String,
    #[serde(default = "empty_object")]
    pub params: Value,
}

fn empty_object() -> Value {
    Value::Object(Default::default())
}

/// Why a script stopped.
#[derive(Debug, thiserror::Error)]
pub enum ScriptError {
    #[error("line {line}: {message}")]
    Malformed { line: usize, message: String },
    #[error("could not read the script: {0}")]
    Read(#[from] std::io::Error),
}

/// One entry of the pending stack as scripts see it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PendingSummary {
    pub id: String,
    pub label: String,
    pub source_tool_name: String,
    pub status: String,
}

/// What a step printed: field order is the documented output format.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StepReport {
    pub step: usize,
    /// The 1-based line of the script the step came from (not printed by `rdesk run`, whose
    /// output format is fixed; the app shows it).
    #[serde(skip)]
    pub line: usize,
    pub tool: String,
    pub is_error: bool,
    pub text: String,
    pub details: Option<Value>,
    pub pending: Vec<PendingSummary>,
}

/// The keys a script line takes.
const LINE_KEYS: [&str; 2] = ["tool", "params"];

/// Parses line `line_no` (1-based); `Ok(None)` for blank and comment lines. Every error names
/// the line, and the offending key or value (the line itself when it is not JSON). Strings
/// inside the line (a resolve's reason) are kept byte for byte.
pub fn parse_line(line_no: usize, text: &str) -> Result<Option<ScriptLine>, ScriptError> {
    let trimmed = text.trim();
    if trimmed.is_empty() || trimmed.starts_with('#') {
        return Ok(None);
    }
    let malformed = |message: String| ScriptError::Malformed { line: line_no, message };
    let value: Value = serde_json::from_str(trimmed)
        .map_err(|e| malformed(format!("not valid JSON: {e}; the line reads `{}`", shown(trimmed))))?;
    let Value::Object(mut obj) = value else {
        return Err(malformed(format!(
            "expected an object like {{\"tool\": \"resolve\", \"params\": {{...}}}}, got {}: {}",
            kind_of(&value),
            quote(&value)
        )));
    };
    let unknown: Vec<&str> = obj.keys().map(String::as_str).filter(|k| !LINE_KEYS.contains(k)).collect();
    if !unknown.is_empty() {
        let names = unknown.iter().map(|k| format!("`{}`", shown(k))).collect::<Vec<_>>().join(", ");
        let hint = match unknown.as_slice() {
            [one] => did_you_mean(one, &LINE_KEYS).map(|k| format!(" Did you mean `{k}`?")).unwrap_or_default(),
            _ => String::new(),
        };
        return Err(malformed(format!(
            "unknown key{} {names}: a line has only `tool` and `params`.{hint}",
            if unknown.len() == 1 { "" } else { "s" }
        )));
    }
    let tool = match obj.remove("tool") {
        Some(Value::String(tool)) if !tool.trim().is_empty() => tool,
        None => return Err(malformed("`tool` is missing: name the tool to call, e.g. \"tool\": \"resolve\"".into())),
        Some(other) => return Err(malformed(format!("`tool` must be a non-empty tool name, got {}", quote(&other)))),
    };
    let params = match obj.remove("params") {
        None => empty_object(),
        Some(params @ Value::Object(_)) => params,
        Some(other) => {
            return Err(malformed(format!("`params` must be an object, got {}: {}", kind_of(&other), quote(&other))))
        }
    };
    Ok(Some(ScriptLine { tool, params }))
}

fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Runs one call (from line `line_no` of its script) and reports it with the stack after it.
pub async fn run_step(session: &Session, actor: Actor, step: usize, line_no: usize, line: &ScriptLine) -> StepReport {
    let result = session.call(actor, &line.tool, line.params.clone()).await;
    StepReport {
        step,
        line: line_no,
        tool: line.tool.clone(),
        is_error: result.is_error,
        text: result.text_content(),
        details: result.details,
        pending: pending(session),
    }
}

/// The stack, top first, as scripts see it.
pub fn pending(session: &Session) -> Vec<PendingSummary> {
    session
        .store()
        .list()
        .into_iter()
        .map(|a| PendingSummary {
            id: a.id,
            label: a.label,
            source_tool_name: a.source_tool_name,
            status: a.status.as_str().to_string(),
        })
        .collect()
}

/// Runs every line of `script` in order, calling `on_step` after each step. Returns the
/// number of steps run. Lines are read one at a time, so a script can be streamed.
pub async fn run_script<R: BufRead>(
    session: &Session,
    actor: Actor,
    script: R,
    mut on_step: impl FnMut(&StepReport),
) -> Result<usize, ScriptError> {
    let mut step = 0;
    for (i, line) in script.lines().enumerate() {
        let line = line?;
        let Some(parsed) = parse_line(i + 1, &line)? else { continue };
        step += 1;
        let report = run_step(session, actor, step, i + 1, &parsed).await;
        on_step(&report);
    }
    Ok(step)
}

#[cfg(test)]
mod tests {
    use super::*;
    use resolve_engine::{CustomToolPendingAction, PendingActionStore, ResolvePolicy, ToolResult};
    use serde_json::json;

    #[test]
    fn blank_and_comment_lines_are_skipped() {
        assert_eq!(parse_line(1, "   ").unwrap(), None);
        assert_eq!(parse_line(1, "# a comment").unwrap(), None);
        let l = parse_line(1, r#"{"tool": "resolve"}"#).unwrap().unwrap();
        assert_eq!(l.params, json!({}), "missing params means {{}}");
    }

    #[test]
    fn malformed_lines_name_the_line_and_the_problem() {
        let err = parse_line(7, "{nope").unwrap_err();
        assert!(err.to_string().starts_with("line 7: not valid JSON"), "{err}");
        let err = parse_line(3, "[1]").unwrap_err();
        assert!(err.to_string().contains("expected an object"), "{err}");
        let err = parse_line(2, r#"{"tool": "x", "params": 3}"#).unwrap_err();
        assert_eq!(err.to_string(), "line 2: `params` must be an object, got a number: 3");
        let err = parse_line(2, r#"{"tool": "x", "parms": {}}"#).unwrap_err();
        assert!(err.to_string().contains("parms"), "{err}");
        let err = parse_line(4, r#"{"params": {}}"#).unwrap_err();
        assert!(err.to_string().contains("tool"), "{err}");
    }

    #[test]
    fn script_errors_name_the_key_and_the_value() {
        let err = |line: &str| parse_line(5, line).unwrap_err().to_string();
        assert_eq!(err(r#"{"tool": 3}"#), "line 5: `tool` must be a non-empty tool name, got 3");
        assert_eq!(err(r#"{"tool": "  "}"#), "line 5: `tool` must be a non-empty tool name, got \"  \"");
        assert_eq!(
            err(r#"{"tool": "resolve", "parms": {}}"#),
            "line 5: unknown key `parms`: a line has only `tool` and `params`. Did you mean `params`?"
        );
        assert_eq!(
            err("[1, 2]"),
            "line 5: expected an object like {\"tool\": \"resolve\", \"params\": {...}}, got an array: [1,2]"
        );
        assert_eq!(
            err(r#"{"tool": "ast_edit", params}"#),
            "line 5: not valid JSON: key must be a string at line 1 column 22; the line reads `{\"tool\": \"ast_edit\", params}`"
        );
        assert_eq!(
            err(r#"{"params": {}}"#),
            "line 5: `tool` is missing: name the tool to call, e.g. \"tool\": \"resolve\""
        );
    }

    #[test]
    fn script_lines_keep_the_reason_byte_for_byte() {
        let line = r#"  {"tool": "resolve", "params": {"action": "discard", "reason": "  not now \n\tlater\n"}}  "#;
        let parsed = parse_line(1, line).unwrap().unwrap();
        assert_eq!(parsed.params["reason"], "  not now \n\tlater\n");
    }

    #[tokio::test]
    async fn steps_report_result_and_stack_top_first() {
        let dir = tempfile::tempdir().unwrap();
        let s =
            Session::with_store(dir.path(), ResolvePolicy::Agent, PendingActionStore::with_id_prefix("pa-")).unwrap();
        for label in ["one", "two"] {
            s.api()
                .push_pending_action(CustomToolPendingAction::new(label, |_| async { Ok(ToolResult::empty()) }))
                .unwrap();
        }
        let script = "# apply the top\n{\"tool\":\"resolve\",\"params\":{\"action\":\"apply\",\"reason\":\"ok\"}}\n\n{\"tool\":\"nope\"}\n";
        let mut reports = Vec::new();
        let n = run_script(&s, Actor::Script, script.as_bytes(), |r| reports.push(r.clone())).await.unwrap();
        assert_eq!(n, 2);
        assert_eq!(reports[0].step, 1);
        assert_eq!(reports[0].line, 2, "the step came from line 2 (line 1 is a comment)");
        assert_eq!((reports[1].step, reports[1].line), (2, 4), "blank lines count as lines, not steps");
        assert_eq!(reports[0].text, "Applied: two.");
        assert_eq!(reports[0].pending.len(), 1);
        assert_eq!(reports[0].pending[0].label, "one");
        assert_eq!(reports[0].pending[0].status, "pending");
        assert!(reports[1].is_error);
        assert!(reports[1].text.contains("Known tools: resolve"), "{}", reports[1].text);
        let line = serde_json::to_string(&reports[0]).unwrap();
        assert!(
            line.starts_with(r#"{"step":1,"tool":"resolve","is_error":false,"text":"Applied: two.","details":{"#),
            "{line}"
        );
    }
}
