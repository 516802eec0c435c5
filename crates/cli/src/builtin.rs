//! The built-in tools every `rdesk` session has (besides `resolve`, which the engine adds).

use resolve_engine::{RegistryError, Session};

/// Loads the built-in tools into `session`.
pub fn load(session: &Session) -> Result<(), RegistryError> {
    session.load(resolve_tool_ast_edit::factory())?;
    session.load(resolve_tool_batch_rename::factory())?;
    Ok(())
}

/// Loads the external tools (docs/TOOLS.md) of the session's workspace
/// (`.resolve/tools/*/`) and of the user's config folder (`<config>/resolve-desk/tools/*/`).
/// A tool that cannot be loaded is kept in `problems()`, with the file at fault.
pub fn load_external(session: &Session) -> resolve_external::ExternalTools {
    resolve_external::ExternalTools::load(session, resolve_external::Config::for_workspace(session.workspace().root()))
}

/// Names each external tool that could not be loaded on stderr (stdout may be a protocol).
pub fn report_problems(tools: &resolve_external::ExternalTools, prefix: &str) {
    for problem in tools.problems() {
        eprintln!("{prefix}: tool not loaded: {}", crate::terminal::safe(&problem.to_string()));
    }
}
