//! The open workspace, as the top bar shows it.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// Who resolves pending actions in this session (SPEC §7).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub enum Policy {
    /// The agent waits; a person applies or discards (the app's default).
    Human,
    /// The model's own `resolve` call decides.
    Agent,
}

/// Returned by `get_session` and `open_workspace`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct SessionInfo {
    /// Absolute path of the workspace root.
    pub workspace_root: String,
    /// True when the app opened its built-in demo workspace.
    pub is_demo: bool,
    pub policy: Policy,
    /// The pending-action store's current revision.
    #[ts(type = "number")]
    pub revision: u64,
}
