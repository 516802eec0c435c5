//! The built-in tools every desk has (the engine adds `resolve` and `set_policy`).

use resolve_engine::{RegistryError, Session};

/// Loads `ast_edit` and `batch_rename_preview` into `session`.
pub fn load_builtin(session: &Session) -> Result<(), RegistryError> {
    session.load(resolve_tool_ast_edit::factory())?;
    session.load(resolve_tool_batch_rename::factory())?;
    Ok(())
}
