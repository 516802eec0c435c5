//! One module per outside agent: how its edit hook's input becomes the bytes its tool would
//! write, how its answer is worded, and which settings `rdesk setup` merges into its
//! configuration. Adding an agent is adding a file here and a line to [`AGENTS`].

use std::path::PathBuf;
use std::time::Duration;

use crate::gate::Policy;

pub mod claude_code;
pub mod codex;
pub mod gemini;
pub mod hooks;
pub mod opencode;
pub mod pi;
pub mod plugin;
pub mod review;

/// An agent the desk can be wired to.
#[derive(Debug, Clone, Copy)]
pub struct AgentInfo {
    /// Its name on the command line: `rdesk setup claude-code`.
    pub id: &'static str,
    /// Its name as people say it.
    pub name: &'static str,
    /// What `rdesk setup` gives it, in a line.
    pub gets: &'static str,
}

/// Every agent `rdesk setup` and `rdesk hook` know.
pub const AGENTS: &[AgentInfo] = &[claude_code::INFO, codex::INFO, gemini::INFO, opencode::INFO, pi::INFO];

/// The agent named `id`, or an error listing the known ones.
pub fn find(id: &str) -> Result<AgentInfo, String> {
    AGENTS.iter().copied().find(|a| a.id == id).ok_or_else(|| {
        format!(
            "`{id}` is not an agent Resolve Desk can wire; known: {}",
            AGENTS.iter().map(|a| a.id).collect::<Vec<_>>().join(", ")
        )
    })
}

/// What to do with an edit outside the folder the desk reviews.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outside {
    /// Refuse it, saying why (the default).
    Deny,
    /// Leave it to the agent's own permission rules (not reviewed, not recorded).
    Allow,
}

impl Outside {
    pub fn as_str(self) -> &'static str {
        match self {
            Outside::Deny => "deny",
            Outside::Allow => "allow",
        }
    }
}

/// Where `rdesk setup` writes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scope {
    /// One project folder (absolute).
    Workspace(PathBuf),
    /// The user's own settings (every project).
    User,
}

/// What `rdesk setup <agent>` was asked.
#[derive(Debug, Clone)]
pub struct SetupOptions {
    pub scope: Scope,
    pub remove: bool,
    pub policy: Policy,
    pub outside: Outside,
    /// The `rdesk` the hook runs (absolute).
    pub rdesk: PathBuf,
    /// The user's home folder.
    pub home: PathBuf,
}

/// What `rdesk setup` did: each file it changed with what changed in it, and how to check.
#[derive(Debug, Clone, Default)]
pub struct SetupReport {
    pub changes: Vec<(PathBuf, Vec<String>)>,
    pub check: Vec<String>,
}

impl SetupReport {
    /// Notes what changed in `file`, if anything did.
    pub fn add(&mut self, file: PathBuf, words: Vec<String>) {
        if !words.is_empty() {
            self.changes.push((file, words));
        }
    }
}

/// How `rdesk hook <agent>` was started.
#[derive(Debug, Clone)]
pub struct HookOptions {
    /// The folder the desk reviews; `None`: the agent's project folder.
    pub workspace: Option<PathBuf>,
    pub policy: Policy,
    pub outside: Outside,
    /// The longest wait for the person (below the agent's hook time-out).
    pub wait: Duration,
}

/// The hook's time-out `rdesk setup` writes into an agent's settings: long enough to review.
pub const HOOK_TIMEOUT: Duration = Duration::from_secs(1800);
/// How long the hook waits for the person by default: a margin below [`HOOK_TIMEOUT`], so the
/// agent hears "not decided yet" from the desk instead of a killed hook.
pub const HOOK_WAIT: Duration = Duration::from_secs(1770);
