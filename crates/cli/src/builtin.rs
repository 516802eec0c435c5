//! The built-in tools every `rdesk` session has (besides `resolve`, which the engine adds).

use resolve_engine::{RegistryError, Session};

/// Loads the built-in tools into `session`.
pub fn load(session: &Session) -> Result<(), RegistryError> {
    session.load(resolve_tool_ast_edit::factory())?;
    session.load(resolve_tool_batch_rename::factory())?;
    Ok(())
}
