//! The tool catalogue and running tools or scripts from the UI.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// One row of `list_tools`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ToolInfo {
    /// e.g. `ast_edit`.
    pub name: String,
    /// e.g. `AST Edit`.
    pub label: String,
    pub description: String,
    /// A JSON Schema (object) for the parameters; the UI builds a form from it.
    #[ts(type = "unknown")]
    pub parameters: serde_json::Value,
    /// Hidden tools (e.g. `resolve`) are not offered in "Run tool…".
    pub hidden: bool,
}

/// Returned by `run_tool` and `rerun_action`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ToolRunOutcome {
    /// Matches the `callId` of the `tool-progress` events of this run.
    pub call_id: String,
    pub is_error: bool,
    pub text: String,
    #[ts(type = "unknown")]
    pub details: Option<serde_json::Value>,
}

/// Payload of the `tool-progress` event.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ToolProgress {
    pub call_id: String,
    #[ts(type = "number")]
    pub done: u64,
    /// `null` when the total is not known yet.
    #[ts(type = "number | null")]
    pub total: Option<u64>,
    pub message: Option<String>,
}

/// One line's result of `run_script`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ScriptStep {
    /// 1-based count of the steps run (blank and comment lines are not steps).
    pub step: u32,
    /// 1-based line of the script text this step came from.
    pub line: u32,
    pub tool: String,
    pub is_error: bool,
    pub text: String,
}

/// Returned by `read_tool_log`: the end of an external tool's stderr log.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ToolLog {
    pub tool: String,
    /// Where the whole log is.
    pub path: String,
    /// Its last 64 KiB; empty before the tool first ran.
    pub text: String,
}
