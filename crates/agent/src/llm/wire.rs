//! The OpenAI-compatible Chat Completions wire format: what is sent (`ChatRequest`,
//! [`Message`], [`FunctionTool`]) and what streams back ([`ChunkBody`]), plus the
//! [`ToolCallAssembler`] that puts streamed tool calls back together.
//!
//! Streamed tool calls arrive in pieces keyed by `index`: the first piece of a call carries
//! its `id` and `function.name`, later pieces carry fragments of `function.arguments` (a
//! JSON text cut anywhere, even inside a string or a multi-byte character's escape). The
//! assembler concatenates fragments per index and keeps calls in index order.

use resolve_engine::{ToolChoice, ToolSpec};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

/// One message of the conversation, as the provider reads it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "snake_case")]
pub enum Message {
    System {
        content: String,
    },
    User {
        content: String,
    },
    Assistant {
        /// `null` when the message only calls tools.
        content: Option<String>,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<WireToolCall>,
    },
    Tool {
        tool_call_id: String,
        content: String,
    },
}

/// A tool call inside an assistant message: `{"id", "type": "function", "function": {"name", "arguments"}}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WireToolCall {
    pub id: String,
    #[serde(rename = "type", default = "function_type")]
    pub kind: String,
    pub function: FunctionCall,
}

fn function_type() -> String {
    "function".into()
}

/// The function part of a tool call. `arguments` is a JSON *text* (as the model wrote it,
/// possibly not valid JSON).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FunctionCall {
    pub name: String,
    pub arguments: String,
}

/// A tool offered to the model: `{"type": "function", "function": {name, description, parameters}}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FunctionTool {
    #[serde(rename = "type")]
    pub kind: String,
    pub function: FunctionSpec,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FunctionSpec {
    pub name: String,
    pub description: String,
    pub parameters: Value,
}

impl From<&ToolSpec> for FunctionTool {
    fn from(t: &ToolSpec) -> Self {
        FunctionTool {
            kind: "function".into(),
            function: FunctionSpec {
                name: t.name.clone(),
                description: t.description.clone(),
                parameters: t.parameters.clone(),
            },
        }
    }
}

/// The request body of `POST {base_url}/chat/completions`. `tool_choice` is omitted (the
/// provider's default, "auto") unless a tool is forced.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ChatRequest {
    pub model: String,
    pub messages: Vec<Message>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<FunctionTool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_choice: Option<Value>,
    pub stream: bool,
}

impl ChatRequest {
    /// A streaming request offering `tools` with the engine's `choice`.
    pub fn new(model: &str, messages: Vec<Message>, tools: &[ToolSpec], choice: &ToolChoice) -> Self {
        ChatRequest {
            model: model.to_string(),
            messages,
            tools: tools.iter().map(FunctionTool::from).collect(),
            tool_choice: tool_choice_value(choice),
            stream: true,
        }
    }
}

/// `{"type":"function","function":{"name": tool}}` for a forced tool; `None` (omitted) for auto.
pub fn tool_choice_value(choice: &ToolChoice) -> Option<Value> {
    match choice {
        ToolChoice::Auto => None,
        ToolChoice::Forced { tool } => Some(json!({"type": "function", "function": {"name": tool}})),
    }
}

/// One streamed chunk (`data: {...}`), or a whole non-streamed completion: both have
/// `choices`; a chunk's choice has `delta`, a completion's has `message`. Providers may also
/// send `{"error": {...}}` in the stream.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct ChunkBody {
    #[serde(default)]
    pub choices: Vec<ChunkChoice>,
    #[serde(default)]
    pub error: Option<Value>,
}

#[derive(Debug, Clone, Default, Deserialize)]
pub struct ChunkChoice {
    #[serde(default)]
    pub index: u32,
    #[serde(default)]
    pub delta: Option<Delta>,
    #[serde(default)]
    pub message: Option<Delta>,
    #[serde(default)]
    pub finish_reason: Option<String>,
}

/// A delta (streamed) or a message (whole); the same shape serves both.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct Delta {
    #[serde(default)]
    pub content: Option<String>,
    #[serde(default)]
    pub tool_calls: Option<Vec<ToolCallDelta>>,
}

#[derive(Debug, Clone, Default, Deserialize)]
pub struct ToolCallDelta {
    /// Absent in whole (non-streamed) messages; their position is the index then.
    #[serde(default)]
    pub index: Option<u32>,
    #[serde(default)]
    pub id: Option<String>,
    #[serde(default)]
    pub function: Option<FunctionDelta>,
}

#[derive(Debug, Clone, Default, Deserialize)]
pub struct FunctionDelta {
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub arguments: Option<String>,
}

/// Streamed tool calls being put back together, by `index`.
#[derive(Debug, Default)]
pub struct ToolCallAssembler {
    calls: Vec<(u32, WireToolCall)>,
}

impl ToolCallAssembler {
    /// Adds one piece. `position` is used when the piece has no `index` (whole messages).
    /// Returns the index the piece went to.
    pub fn add(&mut self, position: usize, piece: &ToolCallDelta) -> u32 {
        let index = piece.index.unwrap_or(position as u32);
        let slot = match self.calls.iter().position(|(i, _)| *i == index) {
            Some(p) => p,
            None => {
                self.calls.push((
                    index,
                    WireToolCall {
                        id: String::new(),
                        kind: function_type(),
                        function: FunctionCall { name: String::new(), arguments: String::new() },
                    },
                ));
                self.calls.sort_by_key(|(i, _)| *i);
                self.calls.iter().position(|(i, _)| *i == index).unwrap_or(0)
            }
        };
        let call = &mut self.calls[slot].1;
        if let Some(id) = piece.id.as_deref().filter(|id| !id.is_empty()) {
            call.id = id.to_string();
        }
        if let Some(f) = &piece.function {
            if let Some(name) = f.name.as_deref().filter(|n| !n.is_empty()) {
                // Some servers repeat the name in every piece; others send it once.
                if call.function.name != name {
                    call.function.name.push_str(name);
                }
            }
            if let Some(args) = &f.arguments {
                call.function.arguments.push_str(args);
            }
        }
        index
    }

    pub fn is_empty(&self) -> bool {
        self.calls.is_empty()
    }

    /// The calls in index order. A call the server sent without an id gets `call_<index>`.
    pub fn finish(self) -> Vec<WireToolCall> {
        self.calls
            .into_iter()
            .map(|(i, mut c)| {
                if c.id.is_empty() {
                    c.id = format!("call_{i}");
                }
                c
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn piece(index: Option<u32>, id: Option<&str>, name: Option<&str>, args: Option<&str>) -> ToolCallDelta {
        ToolCallDelta {
            index,
            id: id.map(String::from),
            function: Some(FunctionDelta { name: name.map(String::from), arguments: args.map(String::from) }),
        }
    }

    #[test]
    fn interleaved_pieces_are_assembled_by_index_in_index_order() {
        let mut a = ToolCallAssembler::default();
        a.add(0, &piece(Some(1), Some("b"), Some("resolve"), Some("")));
        a.add(0, &piece(Some(0), Some("a"), Some("ast_edit"), Some("{\"pat")));
        a.add(0, &piece(Some(1), None, None, Some("{\"action\":")));
        a.add(0, &piece(Some(0), None, None, Some("\":1}")));
        a.add(0, &piece(Some(1), None, None, Some("\"apply\"}")));
        let calls = a.finish();
        assert_eq!(calls.len(), 2);
        assert_eq!((calls[0].id.as_str(), calls[0].function.name.as_str()), ("a", "ast_edit"));
        assert_eq!(calls[0].function.arguments, "{\"pat\":1}");
        assert_eq!(calls[1].function.arguments, "{\"action\":\"apply\"}");
    }

    #[test]
    fn a_repeated_name_is_not_doubled_and_a_missing_id_is_made_up() {
        let mut a = ToolCallAssembler::default();
        a.add(0, &piece(Some(0), None, Some("resolve"), Some("{")));
        a.add(0, &piece(Some(0), None, Some("resolve"), Some("}")));
        let calls = a.finish();
        assert_eq!(calls[0].function.name, "resolve");
        assert_eq!(calls[0].id, "call_0");
    }

    #[test]
    fn forced_choice_is_named_and_auto_is_omitted() {
        let forced = ToolChoice::Forced { tool: "resolve".into() };
        assert_eq!(tool_choice_value(&forced), Some(json!({"type":"function","function":{"name":"resolve"}})));
        let req = ChatRequest::new("m", vec![], &[], &ToolChoice::Auto);
        let body = serde_json::to_value(&req).unwrap();
        assert!(body.get("tool_choice").is_none(), "auto is the default and is omitted: {body}");
        assert!(body.get("tools").is_none(), "no tools, no field: {body}");
    }

    #[test]
    fn messages_serialise_with_their_role() {
        let m = Message::Assistant {
            content: None,
            tool_calls: vec![WireToolCall {
                id: "c1".into(),
                kind: "function".into(),
                function: FunctionCall { name: "resolve".into(), arguments: "{}".into() },
            }],
        };
        assert_eq!(
            serde_json::to_value(&m).unwrap(),
            json!({"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"resolve","arguments":"{}"}}]})
        );
        let t = Message::Tool { tool_call_id: "c1".into(), content: "ok".into() };
        assert_eq!(serde_json::to_value(&t).unwrap(), json!({"role":"tool","tool_call_id":"c1","content":"ok"}));
    }
}
