//! Tools: what an agent (or a person) can call, what a call returns, and how it fails.

use std::sync::Arc;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

/// One part of a tool result's content. Only text exists today; the enum leaves room for
/// images without breaking the wire format (`{"type": "text", "text": ...}`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Content {
    Text { text: String },
}

/// What a tool call returns: content for the model, structured details for the UI, and
/// whether it is an error. `error_code` is the stable code of [`ToolError::code`] when the
/// result comes from an error, so a UI can branch on it instead of on message text.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct ToolResult {
    pub content: Vec<Content>,
    pub details: Option<Value>,
    pub is_error: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_code: Option<String>,
}

impl ToolResult {
    /// A successful result with one text part.
    pub fn text(text: impl Into<String>) -> Self {
        Self { content: vec![Content::Text { text: text.into() }], ..Self::default() }
    }

    /// A successful result with no content (the caller supplies a default text).
    pub fn empty() -> Self {
        Self::default()
    }

    /// An error result carrying the error's message and code.
    pub fn from_error(err: &ToolError) -> Self {
        Self {
            content: vec![Content::Text { text: err.to_string() }],
            details: None,
            is_error: true,
            error_code: Some(err.code().as_str().to_string()),
        }
    }

    pub fn with_details(mut self, details: Value) -> Self {
        self.details = Some(details);
        self
    }

    /// All text parts joined with newlines.
    pub fn text_content(&self) -> String {
        let parts: Vec<&str> = self
            .content
            .iter()
            .map(|c| match c {
                Content::Text { text } => text.as_str(),
            })
            .collect();
        parts.join("\n")
    }

    /// True when at least one text part is non-empty.
    pub fn has_text(&self) -> bool {
        self.content.iter().any(|c| match c {
            Content::Text { text } => !text.trim().is_empty(),
        })
    }
}

/// Why a tool call failed. Messages name the offending value and what to do.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ToolError {
    #[error("{0}")]
    InvalidParams(String),
    #[error("Unknown tool `{name}`. Known tools: {known}.")]
    UnknownTool { name: String, known: String },
    #[error("No pending action to resolve. Nothing to apply or discard.")]
    NoPendingAction,
    #[error(
        "The top pending action is {actual} (\"{actual_label}\"), not {expected}: nothing was applied or discarded. Look at the queue again and resolve the action now on top."
    )]
    IdMismatch { expected: String, actual: String, actual_label: String },
    #[error("{message}")]
    Stale { files: Vec<String>, message: String },
    #[error("Path is outside the workspace: {0}")]
    OutsideWorkspace(String),
    #[error("Path not found: {0}")]
    NotFound(String),
    #[error("{0}")]
    Io(String),
    #[error("Cancelled: {0}")]
    Cancelled(String),
    #[error("{0}")]
    Failed(String),
    #[error("Pending action store unavailable for custom tools in this runtime.")]
    StoreUnavailable,
    /// The session was closed (the window closed or another workspace was opened): nothing
    /// was applied, and this session takes no more calls.
    #[error(
        "The desk was closed before a decision: nothing was applied or discarded, and this session takes no more calls. Reopen it with `resolve-desk {root}` and run the preview again."
    )]
    Closed { root: String },
    /// A tool of a folder the person has not trusted (or that changed since): nothing ran.
    /// The message names the folder and says how to trust it.
    #[error("{0}")]
    Untrusted(String),
}

/// The stable codes of error results (`ToolResult::error_code`), so a UI can branch on a
/// code instead of on message text. `ApplyFailed` is what `resolve` reports when an
/// action's apply fails for another reason than staleness.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorCode {
    InvalidParams,
    UnknownTool,
    NoPendingAction,
    IdMismatch,
    Stale,
    ApplyFailed,
    PathOutsideWorkspace,
    NotFound,
    Io,
    Cancelled,
    Failed,
    StoreUnavailable,
    Closed,
    Untrusted,
}

impl ErrorCode {
    const ALL: [ErrorCode; 14] = [
        ErrorCode::InvalidParams,
        ErrorCode::UnknownTool,
        ErrorCode::NoPendingAction,
        ErrorCode::IdMismatch,
        ErrorCode::Stale,
        ErrorCode::ApplyFailed,
        ErrorCode::PathOutsideWorkspace,
        ErrorCode::NotFound,
        ErrorCode::Io,
        ErrorCode::Cancelled,
        ErrorCode::Failed,
        ErrorCode::StoreUnavailable,
        ErrorCode::Closed,
        ErrorCode::Untrusted,
    ];

    /// The snake_case spelling carried in `ToolResult::error_code`.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::InvalidParams => "invalid_params",
            ErrorCode::UnknownTool => "unknown_tool",
            ErrorCode::NoPendingAction => "no_pending_action",
            ErrorCode::IdMismatch => "id_mismatch",
            ErrorCode::Stale => "stale",
            ErrorCode::ApplyFailed => "apply_failed",
            ErrorCode::PathOutsideWorkspace => "path_outside_workspace",
            ErrorCode::NotFound => "not_found",
            ErrorCode::Io => "io",
            ErrorCode::Cancelled => "cancelled",
            ErrorCode::Failed => "failed",
            ErrorCode::StoreUnavailable => "store_unavailable",
            ErrorCode::Closed => "closed",
            ErrorCode::Untrusted => "untrusted",
        }
    }

    /// The code a result carries, if it is one of ours.
    pub fn parse(code: &str) -> Option<ErrorCode> {
        ErrorCode::ALL.into_iter().find(|c| c.as_str() == code)
    }
}

/// A code equals its spelling (`ErrorCode::Stale == "stale"`).
impl PartialEq<&str> for ErrorCode {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl ToolError {
    /// The stable code of this error.
    pub fn code(&self) -> ErrorCode {
        match self {
            ToolError::InvalidParams(_) => ErrorCode::InvalidParams,
            ToolError::UnknownTool { .. } => ErrorCode::UnknownTool,
            ToolError::NoPendingAction => ErrorCode::NoPendingAction,
            ToolError::IdMismatch { .. } => ErrorCode::IdMismatch,
            ToolError::Stale { .. } => ErrorCode::Stale,
            ToolError::OutsideWorkspace(_) => ErrorCode::PathOutsideWorkspace,
            ToolError::NotFound(_) => ErrorCode::NotFound,
            ToolError::Io(_) => ErrorCode::Io,
            ToolError::Cancelled(_) => ErrorCode::Cancelled,
            ToolError::Failed(_) => ErrorCode::Failed,
            ToolError::StoreUnavailable => ErrorCode::StoreUnavailable,
            ToolError::Closed { .. } => ErrorCode::Closed,
            ToolError::Untrusted(_) => ErrorCode::Untrusted,
        }
    }
}

/// Progress of a long tool run (files scanned / total).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Progress {
    pub done: u64,
    pub total: Option<u64>,
    pub message: Option<String>,
}

/// Receives progress reports; called from any thread.
pub type ProgressSink = Arc<dyn Fn(&str, Progress) + Send + Sync>;

/// What a running tool call gets besides its parameters.
#[derive(Clone)]
pub struct ToolContext {
    /// The id of this call (stable in the transcript).
    pub call_id: String,
    /// Cancelled when the caller gives up; long tools check it between units of work.
    pub cancel: CancellationToken,
    /// Which agent or client makes the call (an MCP client's name, a model's name); actions
    /// pushed during the call record it as `pushed_by`.
    pub client: Option<String>,
    /// How long a `resolve` that waits for the person may wait (the session's bound unless set).
    pub wait: WaitBound,
    progress: Option<ProgressSink>,
    /// Set by the session for the call it runs (`None` for a context made by hand).
    pub(crate) origin: Option<CallOrigin>,
}

impl ToolContext {
    pub fn new(call_id: impl Into<String>) -> Self {
        Self {
            call_id: call_id.into(),
            cancel: CancellationToken::new(),
            client: None,
            wait: WaitBound::SessionDefault,
            progress: None,
            origin: None,
        }
    }

    /// This context as the one of `call`, whose pushes are collected in `pushed`.
    pub(crate) fn with_origin(
        mut self,
        call: crate::vocab::ToolCall,
        pushed: Arc<std::sync::Mutex<Vec<crate::vocab::ActionId>>>,
    ) -> Self {
        self.origin = Some(CallOrigin { call, pushed });
        self
    }

    /// How long a `resolve` of this call may wait for the person.
    pub fn with_wait(mut self, wait: WaitBound) -> Self {
        self.wait = wait;
        self
    }

    pub fn with_client(mut self, client: impl Into<String>) -> Self {
        self.client = Some(client.into());
        self
    }

    pub fn with_cancel(mut self, cancel: CancellationToken) -> Self {
        self.cancel = cancel;
        self
    }

    pub fn with_progress(mut self, sink: ProgressSink) -> Self {
        self.progress = Some(sink);
        self
    }

    /// Reports progress to whoever watches this call (no-op when nobody does).
    pub fn report(&self, progress: Progress) {
        if let Some(sink) = &self.progress {
            sink(&self.call_id, progress);
        }
    }

    /// A clonable reporter for worker threads.
    pub fn progress_sink(&self) -> Option<ProgressSink> {
        self.progress.clone()
    }

    /// `Err(Cancelled)` once the call was cancelled.
    pub fn check_cancelled(&self) -> Result<(), ToolError> {
        if self.cancel.is_cancelled() {
            Err(ToolError::Cancelled(format!("tool call {} was cancelled; nothing was changed", self.call_id)))
        } else {
            Ok(())
        }
    }
}

/// A tool an agent or a person can call. Two things are required besides the description:
/// the JSON Schema of the parameters and `execute`; `hidden` and `preview_only` default to
/// false.
#[async_trait]
pub trait Tool: Send + Sync {
    /// Unique name (what the model calls), e.g. `ast_edit`.
    fn name(&self) -> &str;
    /// Short human label, e.g. `AST Edit`.
    fn label(&self) -> &str;
    fn description(&self) -> &str;
    /// JSON Schema of the parameters object. Calls are checked against it before `execute`,
    /// after [`check_params`](Self::check_params); an object it closes with
    /// `additionalProperties: false` refuses unknown keys by name (see [`crate::params`]).
    fn parameters(&self) -> Value;
    /// The tool's own check of its parameters, run before the schema check so the tool's
    /// exact messages win over JSON-Schema wording (e.g. SPEC §5's
    /// `` `ops` must include at least one op entry ``). It must not touch the disk; the
    /// default accepts everything (the schema alone decides).
    fn check_params(&self, _params: &Value) -> Result<(), ToolError> {
        Ok(())
    }
    /// Hidden tools are not offered to the model by default (see `Session::offered_tools`).
    fn hidden(&self) -> bool {
        false
    }
    /// True only for a tool whose `execute` the desk itself guarantees to write nothing: code
    /// built into the desk that reads the workspace and proposes a change set (a pending
    /// action), never writing a file or starting a program. MCP announces such a tool
    /// `readOnlyHint` (clients may run it without asking); every other tool is announced as
    /// one that may change anything. The default is `false`: an external tool is a program that
    /// can do anything in its `execute`, whatever its manifest says, so it never claims this.
    fn preview_only(&self) -> bool {
        false
    }
    /// Runs the tool. Parameters have already passed `check_params` and `parameters()`.
    async fn execute(&self, ctx: ToolContext, params: Value) -> Result<ToolResult, ToolError>;
}

/// How long a call waits for the person.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum WaitBound {
    /// The session's setting ([`DEFAULT_RESOLVE_WAIT`](crate::DEFAULT_RESOLVE_WAIT) unless set).
    #[default]
    SessionDefault,
    /// Until the person decides (an MCP task, or a caller that polls nothing).
    Unbounded,
    /// At most this long.
    For(std::time::Duration),
}

/// The tool call a context belongs to, for the pushes the tool makes through it
/// ([`CustomToolApi::push_from`](crate::CustomToolApi::push_from) records the call that
/// produced the action; the session reads back which actions the call pushed).
#[derive(Clone)]
pub(crate) struct CallOrigin {
    pub call: crate::vocab::ToolCall,
    pub pushed: Arc<std::sync::Mutex<Vec<crate::vocab::ActionId>>>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_result_carries_message_and_code() {
        let r = ToolResult::from_error(&ToolError::NoPendingAction);
        assert!(r.is_error);
        assert_eq!(r.text_content(), "No pending action to resolve. Nothing to apply or discard.");
        assert_eq!(r.error_code.as_deref(), Some("no_pending_action"));
    }

    #[test]
    fn every_error_code_parses_back_from_its_spelling() {
        for code in ErrorCode::ALL {
            assert_eq!(ErrorCode::parse(code.as_str()), Some(code), "{code:?}");
        }
        assert_eq!(ErrorCode::parse("nope"), None);
    }

    #[test]
    fn has_text_ignores_blank_parts() {
        assert!(!ToolResult::text("  ").has_text());
        assert!(!ToolResult::empty().has_text());
        assert!(ToolResult::text("x").has_text());
    }
}
