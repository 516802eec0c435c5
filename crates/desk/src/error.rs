//! What a desk operation can fail with: a code front ends branch on (the window maps it to its
//! wire code, `rdesk` to an exit status) and a message for people that names the value and
//! says what to do.

use resolve_engine::ErrorCode;

/// Why a desk operation did nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DeskErrorCode {
    /// The engine refused (an empty stack, another action on top, a closed session…).
    Engine(ErrorCode),
    /// A reason is required and was blank.
    ReasonRequired,
    /// A value the caller gave is out of range or names nothing.
    InvalidParams,
    /// The decision named has no undo data.
    UnknownDecision,
    /// The journal could not be read or a file written.
    Io,
    /// Something that should not happen (a blocking task that died).
    Internal,
}

/// A failed desk operation.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct DeskError {
    pub code: DeskErrorCode,
    pub message: String,
}

impl DeskError {
    pub fn new(code: DeskErrorCode, message: impl Into<String>) -> DeskError {
        DeskError { code, message: message.into() }
    }
}

/// Runs `f` (SQLite, files: blocking) off the async workers.
pub(crate) async fn blocking<T: Send + 'static>(
    what: &str,
    f: impl FnOnce() -> Result<T, DeskError> + Send + 'static,
) -> Result<T, DeskError> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| DeskError::new(DeskErrorCode::Internal, format!("{what} stopped: {e}")))?
}
