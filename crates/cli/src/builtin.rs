//! Opening a workspace for an `rdesk` command: the same desk the window opens
//! (`resolve_desk_core::Desk`), and what opening found told on stderr (stdout may be a
//! protocol or JSON Lines).

use std::path::Path;

use resolve_desk_core::{Desk, DeskOptions, TrustState};
use resolve_engine::ResolvePolicy;

/// How an `rdesk` command opens its workspace.
pub struct Open {
    pub policy: ResolvePolicy,
    /// Deterministic ids `pa-1`, `pa-2`… (scripts and their outputs).
    pub script_ids: bool,
    /// Reload external tools live while the command runs (servers).
    pub watch_tools: bool,
    /// More variables no tool may get (the API key variable `rdesk agent` was told to use).
    pub never_pass_env: Vec<String>,
    /// The decision journal (`rdesk serve-socket --data-dir`); `None` for every other command.
    pub journal: Option<std::sync::Arc<resolve_journal::Writer>>,
}

/// Opens `workspace` as every front end does, and says on stderr what opening found
/// (`prog`: `rdesk`, `rdesk mcp`…). `rdesk` keeps no journal (but `serve-socket --data-dir`,
/// which stands in for the window in tests): its commands are one-shot or serve an agent with
/// no person at a window, so no pending action is restored or kept for later (the window's
/// desk does that).
pub async fn open(workspace: &Path, how: Open, prog: &str) -> Result<Desk, String> {
    let mut options = DeskOptions::new(how.policy);
    if how.script_ids {
        options.id_prefix = Some("pa-".into());
    }
    options.watch_tools = how.watch_tools;
    options.never_pass_env = how.never_pass_env;
    options.journal = how.journal;
    let desk = Desk::open(workspace, options).await.map_err(|e| e.to_string())?;
    report(&desk, prog);
    Ok(desk)
}

/// One stderr line per note, tool problem and untrusted tool.
pub fn report(desk: &Desk, prog: &str) {
    for note in desk.notes() {
        eprintln!("{prog}: {}", crate::terminal::safe(&note.message()));
    }
    for problem in desk.tool_problems() {
        eprintln!("{prog}: tool not loaded: {}", crate::terminal::safe(&problem.to_string()));
    }
    if let TrustState::Untrusted(folder) = desk.trust_state() {
        let names: Vec<String> = folder.tools.iter().map(|t| format!("{} (`{}`)", t.name, t.command_line())).collect();
        let why = if folder.changed_since_trusted { "changed since you trusted them" } else { "not trusted" };
        eprintln!(
            "{prog}: this folder's own tools are {why}, so they will not run: {}. Review them, then `rdesk trust {}`.",
            crate::terminal::safe(&names.join(", ")),
            crate::terminal::safe(&desk.root().display().to_string())
        );
    }
}
