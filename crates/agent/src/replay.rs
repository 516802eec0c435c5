//! Replay: a recorded conversation that stands in for the model, so QA can run an agent
//! session deterministically without a provider.
//!
//! Format: JSON Lines, one assistant turn per line, consumed one per model request:
//!
//! ```text
//! # blank lines and lines starting with # are skipped
//! {"content": "I'll rename the function.", "tool_calls": [{"name": "ast_edit", "arguments": {"pat": "old()", "out": "new()", "paths": ["src"]}}]}
//! {"tool_calls": [{"name": "resolve", "arguments": {"action": "apply", "reason": "looks right"}}]}
//! {"content": "Done."}
//! ```
//!
//! - `content` (string, optional): the assistant text (sent to the event callback as one
//!   text delta).
//! - `tool_calls` (array, optional): each `{"name", "arguments", "id"?}`. `arguments` is
//!   normally an object; a *string* is passed through as the raw argument text, so a replay
//!   can reproduce a model writing invalid JSON. `id` defaults to `call_<line>_<n>`.
//! - A turn without tool calls ends the loop's turn, as a model's final answer does.
//! - Unknown fields are refused, so a typo does not silently change the replay.

use std::collections::VecDeque;
use std::io::BufRead;
use std::path::Path;

use serde::Deserialize;
use serde_json::Value;

use crate::llm::wire::{FunctionCall, WireToolCall};
use crate::llm::AssistantReply;

/// Why a replay could not be read or went on too long.
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    #[error("cannot read the replay {source_name}: {error}")]
    Read { source_name: String, error: std::io::Error },
    #[error("{source_name} line {line}: {message}")]
    Malformed { source_name: String, line: usize, message: String },
    #[error("the replay {source_name} has no assistant turn left for request {request} (it has {turns}); end it with a turn that has no tool_calls")]
    Exhausted { source_name: String, request: usize, turns: usize },
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct ReplayTurn {
    #[serde(default)]
    content: Option<String>,
    #[serde(default)]
    tool_calls: Vec<ReplayCall>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct ReplayCall {
    #[serde(default)]
    id: Option<String>,
    name: String,
    #[serde(default = "empty_object")]
    arguments: Value,
}

fn empty_object() -> Value {
    Value::Object(Default::default())
}

/// A recorded conversation, read whole (so a malformed line is reported before anything runs).
#[derive(Debug, Clone)]
pub struct Replay {
    source_name: String,
    turns: VecDeque<AssistantReply>,
    total: usize,
    served: usize,
}

impl Replay {
    /// Reads the file at `path`.
    pub fn load(path: &Path) -> Result<Self, ReplayError> {
        let source_name = path.display().to_string();
        let file =
            std::fs::File::open(path).map_err(|error| ReplayError::Read { source_name: source_name.clone(), error })?;
        Self::from_reader(&source_name, std::io::BufReader::new(file))
    }

    /// Reads a replay from `reader`; `source_name` names it in error messages.
    pub fn from_reader(source_name: &str, reader: impl BufRead) -> Result<Self, ReplayError> {
        let mut turns = VecDeque::new();
        for (i, line) in reader.lines().enumerate() {
            let line_no = i + 1;
            let line = line.map_err(|error| ReplayError::Read { source_name: source_name.into(), error })?;
            let text = line.trim();
            if text.is_empty() || text.starts_with('#') {
                continue;
            }
            let malformed =
                |message: String| ReplayError::Malformed { source_name: source_name.into(), line: line_no, message };
            let turn: ReplayTurn = serde_json::from_str(text).map_err(|e| {
                malformed(format!(
                    "{e}; expected an assistant turn like {{\"content\": \"...\", \"tool_calls\": [{{\"name\": \"resolve\", \"arguments\": {{...}}}}]}}"
                ))
            })?;
            let mut tool_calls = Vec::new();
            for (n, call) in turn.tool_calls.into_iter().enumerate() {
                if call.name.trim().is_empty() {
                    return Err(malformed(format!("tool call {} has an empty name", n + 1)));
                }
                let arguments = match call.arguments {
                    Value::String(raw) => raw,
                    other => other.to_string(),
                };
                tool_calls.push(WireToolCall {
                    id: call.id.unwrap_or_else(|| format!("call_{line_no}_{}", n + 1)),
                    kind: "function".into(),
                    function: FunctionCall { name: call.name, arguments },
                });
            }
            let finish_reason = Some(if tool_calls.is_empty() { "stop" } else { "tool_calls" }.to_string());
            turns.push_back(AssistantReply {
                content: turn.content.filter(|c| !c.is_empty()),
                tool_calls,
                finish_reason,
            });
        }
        let total = turns.len();
        Ok(Replay { source_name: source_name.into(), turns, total, served: 0 })
    }

    /// The next recorded turn.
    pub fn next_turn(&mut self) -> Result<AssistantReply, ReplayError> {
        self.served += 1;
        self.turns.pop_front().ok_or_else(|| ReplayError::Exhausted {
            source_name: self.source_name.clone(),
            request: self.served,
            turns: self.total,
        })
    }

    /// Turns not yet served.
    pub fn remaining(&self) -> usize {
        self.turns.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn turns_are_read_in_order_with_default_ids_and_raw_string_arguments() {
        let text = "# c\n\n{\"content\":\"hi\",\"tool_calls\":[{\"name\":\"a\",\"arguments\":{\"x\":1}},{\"name\":\"b\",\"arguments\":\"{bad\"}]}\n{\"content\":\"done\"}\n";
        let mut r = Replay::from_reader("r.jsonl", text.as_bytes()).unwrap();
        let t = r.next_turn().unwrap();
        assert_eq!(t.content.as_deref(), Some("hi"));
        assert_eq!(t.tool_calls[0].id, "call_3_1");
        assert_eq!(t.tool_calls[0].function.arguments, "{\"x\":1}");
        assert_eq!(t.tool_calls[1].function.arguments, "{bad", "a string is the raw argument text");
        assert!(r.next_turn().unwrap().tool_calls.is_empty());
        let err = r.next_turn().unwrap_err().to_string();
        assert!(err.contains("no assistant turn left for request 3 (it has 2)"), "{err}");
    }

    #[test]
    fn malformed_lines_and_unknown_fields_name_the_line() {
        let err = Replay::from_reader("r.jsonl", "{\"content\":\"a\"}\n{\"tool_call\":[]}\n".as_bytes()).unwrap_err();
        assert!(err.to_string().starts_with("r.jsonl line 2: unknown field `tool_call`"), "{err}");
        let err = Replay::from_reader("r.jsonl", "{nope\n".as_bytes()).unwrap_err();
        assert!(err.to_string().starts_with("r.jsonl line 1:"), "{err}");
    }
}
