//! The built-in tools every desk has (the engine adds `resolve` and `set_policy`).

use resolve_engine::{RegistryError, Session};

/// Loads `ast_edit`, `batch_rename_preview`, the plain text edits (`write_file`,
/// `edit_file`, `apply_patch`) and the hidden `gate_edit` of outside agents' hooks into
/// `session`.
pub fn load_builtin(session: &Session) -> Result<(), RegistryError> {
    session.load(resolve_tool_ast_edit::factory())?;
    session.load(resolve_tool_batch_rename::factory())?;
    session.load(resolve_tool_text_edit::factory())?;
    Ok(())
}
