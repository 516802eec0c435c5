//! The hidden `set_policy` tool: who decides pending actions (the person sets it).

use std::sync::{Arc, RwLock};

use async_trait::async_trait;
use serde::Deserialize;
use serde_json::{json, Value};

use crate::pending::PendingActionStore;
use crate::tool::{Tool, ToolContext, ToolError, ToolResult};
use crate::vocab::ResolvePolicy;

use super::SET_POLICY_TOOL_NAME;

/// The hidden `set_policy` tool: changes who decides, only while nothing is pending (so an
/// action is never decided under a rule other than the one it was reviewed under).
pub(super) struct SetPolicyTool {
    pub(super) policy: Arc<RwLock<ResolvePolicy>>,
    pub(super) store: Arc<PendingActionStore>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SetPolicyParams {
    policy: ResolvePolicy,
}

#[async_trait]
impl Tool for SetPolicyTool {
    fn name(&self) -> &str {
        SET_POLICY_TOOL_NAME
    }
    fn label(&self) -> &str {
        "Set policy"
    }
    fn description(&self) -> &str {
        "Choose who decides pending actions: \"human\" (an agent's resolve waits for the person) or \"agent\" \
         (the agent's resolve decides). Only while nothing is pending; never offered to a model."
    }
    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {"policy": {"type": "string", "enum": ["human", "agent"]}},
            "required": ["policy"],
            "additionalProperties": false
        })
    }
    fn hidden(&self) -> bool {
        true
    }
    async fn execute(&self, _ctx: ToolContext, params: Value) -> Result<ToolResult, ToolError> {
        let params: SetPolicyParams = serde_json::from_value(params)
            .map_err(|e| ToolError::InvalidParams(format!("Invalid parameters for `set_policy`: {e}.")))?;
        let pending = self.store.len();
        if pending > 0 {
            return Err(ToolError::InvalidParams(format!(
                "The policy can change only while nothing is pending; {pending} action{} {} waiting. Apply or discard {} first.",
                if pending == 1 { "" } else { "s" },
                if pending == 1 { "is" } else { "are" },
                if pending == 1 { "it" } else { "them" },
            )));
        }
        let mut policy = self.policy.write().unwrap_or_else(|p| p.into_inner());
        let before = *policy;
        *policy = params.policy;
        let text = match params.policy {
            ResolvePolicy::Human => "Policy: human. An agent's resolve now waits for the person's decision.",
            ResolvePolicy::Agent => "Policy: agent. An agent's resolve now decides at once.",
        };
        Ok(ToolResult::text(text).with_details(json!({"policy": params.policy, "previous": before})))
    }
}
