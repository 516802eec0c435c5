//! The hidden `await_decision` tool: an agent waits for the decision on one pending action it
//! pushed, wherever it is on the stack (an outside agent's gated edit: its hook pushes the
//! edit, then waits here). Under the `human` policy it proposes "apply" on that action and
//! waits like a `resolve` (bounded; "not decided yet" when the bound ends; a later call
//! returns the decision); under `agent` it decides at once, as the agent's `resolve` does
//! (the action must be on top then). An action already decided in this session answers with
//! that decision.

use async_trait::async_trait;
use serde_json::{json, Value};

use crate::params::{as_object, check_known_keys, quote};
use crate::tool::{Tool, ToolContext, ToolError, ToolResult};

/// The tool's name.
pub const AWAIT_DECISION_TOOL_NAME: &str = "await_decision";

/// What an `await_decision` call asks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct AwaitDecision {
    pub action_id: String,
    /// Why the agent proposes to apply it (shown beside the card).
    pub reason: String,
}

impl AwaitDecision {
    pub(crate) fn parse(params: &Value) -> Result<AwaitDecision, ToolError> {
        let obj = as_object(AWAIT_DECISION_TOOL_NAME, params)?;
        check_known_keys(AWAIT_DECISION_TOOL_NAME, "", obj, &["action_id", "reason"])?;
        let text = |key: &str| match obj.get(key) {
            Some(Value::String(s)) if !s.trim().is_empty() => Ok(s.clone()),
            Some(other) => Err(ToolError::InvalidParams(format!(
                "`{key}` of `{AWAIT_DECISION_TOOL_NAME}` must be a non-empty string, got {}.",
                quote(other)
            ))),
            None => Err(ToolError::InvalidParams(format!(
                "`{key}` is required by `{AWAIT_DECISION_TOOL_NAME}`: {}.",
                if key == "action_id" {
                    "the id of the pending action to wait for"
                } else {
                    "why it should be applied"
                }
            ))),
        };
        Ok(AwaitDecision { action_id: text("action_id")?, reason: text("reason")? })
    }
}

/// The tool as the registry lists it (the session routes every call itself).
pub(super) struct AwaitDecisionTool;

#[async_trait]
impl Tool for AwaitDecisionTool {
    fn name(&self) -> &str {
        AWAIT_DECISION_TOOL_NAME
    }
    fn label(&self) -> &str {
        "Await decision"
    }
    fn description(&self) -> &str {
        "Wait for the decision on one pending action you pushed (`action_id`), proposing to apply it \
         (`reason`). Under the human policy it waits for the person (bounded; call again while it says the \
         person has not decided yet); under the agent policy it applies the action at once. Never offered to a \
         model: outside agents' edit hooks use it."
    }
    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "action_id": {"type": "string", "minLength": 1},
                "reason": {"type": "string", "minLength": 1}
            },
            "required": ["action_id", "reason"],
            "additionalProperties": false
        })
    }
    fn hidden(&self) -> bool {
        true
    }
    fn check_params(&self, params: &Value) -> Result<(), ToolError> {
        AwaitDecision::parse(params).map(|_| ())
    }
    async fn execute(&self, _ctx: ToolContext, _params: Value) -> Result<ToolResult, ToolError> {
        Err(ToolError::Failed(format!("`{AWAIT_DECISION_TOOL_NAME}` runs only through a session's call.")))
    }
}
