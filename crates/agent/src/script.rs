//! The JSON Lines script format and its runner.
//!
//! A script is one tool call per line: `{"tool": NAME, "params": {...}}`. Blank lines and
//! lines starting with `#` are skipped; `params` may be omitted (it is then `{}`). After
//! each step the runner reports a [`StepReport`]: the result and the pending stack after the
//! step, top first. Tool errors are reported in-band and the run goes on; a malformed line
//! stops the run with [`ScriptError::Malformed`] naming the line number.

use std::io::BufRead;

use resolve_engine::params::{did_you_mean, quote, shown};
use resolve_engine::{Actor, CancellationToken, Session, ToolContext};
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
    #[error("cancelled before line {line}")]
    Cancelled { line: usize },
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
    run_step_in(session, actor, ToolContext::new(session.new_call_id()), step, line_no, line).await
}

/// [`run_step`] with a given tool context (its cancellation and progress).
pub async fn run_step_in(
    session: &Session,
    actor: Actor,
    ctx: ToolContext,
    step: usize,
    line_no: usize,
    line: &ScriptLine,
) -> StepReport {
    let result = session.call_with(actor, ctx, &line.tool, line.params.clone()).await;
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
    on_step: impl FnMut(&StepReport),
) -> Result<usize, ScriptError> {
    run_script_in(
        session,
        actor,
        script,
        &CancellationToken::new(),
        |_| ToolContext::new(session.new_call_id()),
        on_step,
    )
    .await
}

/// [`run_script`] that stops once `cancel` is cancelled: the step running then is cancelled
/// through its context (each step's context comes from `context_for`, given the line
/// number, and carries `cancel`), and the next line is not started (`ScriptError::Cancelled`).
pub async fn run_script_in<R: BufRead>(
    session: &Session,
    actor: Actor,
    script: R,
    cancel: &CancellationToken,
    mut context_for: impl FnMut(usize) -> ToolContext,
    mut on_step: impl FnMut(&StepReport),
) -> Result<usize, ScriptError> {
    let mut step = 0;
    for (i, line) in script.lines().enumerate() {
        let line = line?;
        let Some(parsed) = parse_line(i + 1, &line)? else { continue };
        if cancel.is_cancelled() {
            return Err(ScriptError::Cancelled { line: i + 1 });
        }
        step += 1;
        let ctx = context_for(i + 1).with_cancel(cancel.clone());
        let report = run_step_in(session, actor, ctx, step, i + 1, &parsed).await;
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

    #[tokio::test]
    async fn a_cancelled_script_stops_before_its_next_line_and_says_where() {
        let dir = tempfile::tempdir().unwrap();
        let s =
            Session::with_store(dir.path(), ResolvePolicy::Agent, PendingActionStore::with_id_prefix("pa-")).unwrap();
        for label in ["one", "two"] {
            s.api()
                .push_pending_action(CustomToolPendingAction::new(label, |_| async { Ok(ToolResult::empty()) }))
                .unwrap();
        }
        let apply = r#"{"tool":"resolve","params":{"action":"apply","reason":"ok"}}"#;
        let script = format!("{apply}\n# next\n{apply}\n");
        let cancel = CancellationToken::new();
        let mut lines = Vec::new();
        let err = run_script_in(
            &s,
            Actor::Script,
            script.as_bytes(),
            &cancel,
            |line| {
                lines.push(line);
                ToolContext::new(s.new_call_id())
            },
            |_| cancel.cancel(), // the person presses Cancel while the first step runs
        )
        .await
        .unwrap_err();
        assert!(matches!(err, ScriptError::Cancelled { line: 3 }), "{err}");
        assert_eq!(err.to_string(), "cancelled before line 3");
        assert_eq!(lines, vec![1], "each step's context is asked for with its line");
        assert_eq!(s.store().list().len(), 1, "the second apply never ran: `one` is still pending");
    }

    /// Property tests of the script reader (proptest): arbitrary text and JSON lines never
    /// panic, and every error names the line and the offending key or value. Each property
    /// runs `CASES` cases from a fixed seed.
    mod props {
        use super::*;
        use proptest::prelude::*;
        use proptest::test_runner::{Config, RngAlgorithm, TestCaseError, TestRng, TestRunner};

        const CASES: u32 = 2000;

        fn check<S: Strategy>(strategy: S, test: impl Fn(S::Value) -> Result<(), TestCaseError>)
        where
            S::Value: std::fmt::Debug,
        {
            let config = Config { cases: CASES, failure_persistence: None, ..Config::default() };
            let mut runner = TestRunner::new_with_rng(config, TestRng::deterministic_rng(RngAlgorithm::ChaCha));
            if let Err(e) = runner.run(&strategy, test) {
                panic!("{e}");
            }
        }

        fn any_string() -> impl Strategy<Value = String> {
            prop_oneof![
                3 => prop::collection::vec(any::<char>(), 0..16).prop_map(|c| c.into_iter().collect::<String>()),
                2 => "[ -~]{0,24}",
                1 => prop::sample::select(vec!["", " ", "#", "\0", "{", "}", "\"", "\u{feff}{}", "\u{202e}"]).prop_map(String::from),
                1 => (1usize..2000).prop_map(|n| "y".repeat(n)),
            ]
        }

        fn any_json() -> impl Strategy<Value = Value> {
            let leaf = prop_oneof![
                Just(Value::Null),
                any::<bool>().prop_map(Value::Bool),
                any::<i64>().prop_map(Value::from),
                any::<f64>().prop_filter_map("finite", |f| serde_json::Number::from_f64(f).map(Value::Number)),
                Just(serde_json::json!(u64::MAX)),
                any_string().prop_map(Value::String),
            ];
            let key = prop_oneof![prop::sample::select(vec!["tool", "params"]).prop_map(String::from), any_string()];
            leaf.prop_recursive(3, 32, 5, move |inner| {
                prop_oneof![
                    prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
                    prop::collection::vec((key.clone(), inner), 0..5)
                        .prop_map(|kv| Value::Object(kv.into_iter().collect())),
                ]
            })
        }

        /// Lines: free text, JSON values, and valid lines cut short or with a byte changed.
        fn any_line() -> impl Strategy<Value = String> {
            let valid = (any_string(), any_json())
                .prop_map(|(tool, params)| serde_json::json!({"tool": tool, "params": params}).to_string())
                .boxed();
            prop_oneof![
                any_string(),
                any_json().prop_map(|v| v.to_string()),
                valid.clone(),
                (valid, any::<prop::sample::Index>(), any::<char>()).prop_map(|(line, at, c)| {
                    let mut chars: Vec<char> = line.chars().collect();
                    let i = at.index(chars.len().max(1));
                    if i < chars.len() {
                        chars[i] = c;
                    }
                    chars.into_iter().collect()
                }),
            ]
        }

        fn head(s: &str) -> String {
            s.chars().take(40).collect()
        }

        /// The message quotes the line, or a key or a value of it.
        fn names_something(message: &str, line: &str) -> bool {
            let trimmed = line.trim();
            if message.contains(&head(trimmed)) {
                return true;
            }
            let Ok(value) = serde_json::from_str::<Value>(trimmed) else { return false };
            let mut stack = vec![&value];
            while let Some(v) = stack.pop() {
                if message.contains(&head(&quote(v))) {
                    return true;
                }
                if let Value::Object(m) = v {
                    if m.keys().any(|k| message.contains(&format!("`{}`", shown(k)))) {
                        return true;
                    }
                    stack.extend(m.values());
                }
            }
            ["`tool`", "`params`"].iter().any(|k| message.contains(k))
        }

        #[test]
        fn any_line_never_panics_and_every_error_names_the_line_and_what_is_wrong() {
            check((1usize..100_000, any_line()), |(n, line)| {
                match parse_line(n, &line) {
                    Ok(Some(parsed)) => {
                        prop_assert!(!parsed.tool.trim().is_empty());
                        prop_assert!(parsed.params.is_object());
                    }
                    Ok(None) => {
                        let t = line.trim();
                        prop_assert!(t.is_empty() || t.starts_with('#'), "skipped a line with content: {:?}", line);
                    }
                    Err(e) => {
                        let text = e.to_string();
                        let prefix = format!("line {n}: ");
                        prop_assert!(text.starts_with(&prefix), "{}", text);
                        prop_assert!(names_something(&text, &line), "{:?} → {}", line, text);
                    }
                }
                Ok(())
            });
        }

        #[test]
        fn a_bad_tool_or_params_is_named_with_its_value() {
            let bad_tool =
                any_json().prop_filter("not a usable name", |v| !matches!(v, Value::String(s) if !s.trim().is_empty()));
            let bad_params = any_json().prop_filter("not an object", |v| !v.is_object());
            check((bad_tool, bad_params, any::<bool>()), |(tool, params, break_tool)| {
                let line = if break_tool {
                    serde_json::json!({"tool": tool, "params": {}})
                } else {
                    serde_json::json!({"tool": "resolve", "params": params})
                };
                let text = parse_line(3, &line.to_string()).unwrap_err().to_string();
                let (key, value) = if break_tool { ("`tool`", &tool) } else { ("`params`", &params) };
                prop_assert!(text.contains(key), "{}", text);
                prop_assert!(text.contains(&quote(value)), "{} is quoted: {}", quote(value), text);
                Ok(())
            });
        }

        #[test]
        fn an_unknown_key_is_named() {
            let key = any_string().prop_filter("unknown", |k| k != "tool" && k != "params");
            check((key, any_json()), |(key, value)| {
                let mut line = serde_json::json!({"tool": "resolve", "params": {}});
                line[key.as_str()] = value;
                let text = parse_line(1, &line.to_string()).unwrap_err().to_string();
                prop_assert!(text.contains(&format!("`{}`", shown(&key))), "{}", text);
                Ok(())
            });
        }

        #[test]
        fn any_reason_is_read_byte_for_byte() {
            check(any_string(), |reason| {
                let line = serde_json::json!({"tool": "resolve", "params": {"action": "apply", "reason": reason}});
                let parsed = parse_line(1, &format!("  {line}\t")).unwrap().unwrap();
                prop_assert_eq!(parsed.params["reason"].as_str(), Some(reason.as_str()));
                Ok(())
            });
        }
    }
}
