//! `rdesk setup <agent>` and `rdesk hook <agent>`: the agents people run, wired to the desk
//! (the work is in the `resolve-connect` crate, one module per agent).

use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Args, ValueEnum};
use resolve_connect::agents::{self, HookOptions, Outside, Scope, SetupOptions};
use serde_json::Value;

use crate::mcp::Policy;

pub const SETUP_HELP: &str = "\
Wire an agent you run to the desk, so that every file edit it makes waits in the Resolve Desk
window until you apply or discard it (and the agent reads your decision, reason and comments).

  rdesk setup claude-code              # this folder: .claude/settings.json and .mcp.json
  rdesk setup claude-code --user       # your own settings: every project
  rdesk setup claude-code --remove     # undo
  rdesk setup --list                   # the agents and what each gets

It merges into the agent's existing settings (nothing else is dropped), is idempotent, and
prints exactly what it changed. --policy agent wires it without a person (CI): each edit is
recorded in the journal (History, undo) and allowed at once.";

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum OutsideArg {
    /// Refuse edits outside the folder, saying why.
    Deny,
    /// Leave edits outside the folder to the agent's own permission rules (unreviewed).
    Allow,
}

impl OutsideArg {
    fn into_outside(self) -> Outside {
        match self {
            OutsideArg::Deny => Outside::Deny,
            OutsideArg::Allow => Outside::Allow,
        }
    }
}

fn connect_policy(p: Policy) -> resolve_connect::Policy {
    match p {
        Policy::Human => resolve_connect::Policy::Human,
        Policy::Agent => resolve_connect::Policy::Agent,
    }
}

#[derive(Args, Debug)]
pub struct SetupArgs {
    /// The agent (see --list): claude-code, codex, gemini, opencode, pi.
    #[arg(required_unless_present = "list")]
    pub agent: Option<String>,
    /// The project folder to wire (default: the current folder).
    #[arg(long, short = 'w', conflicts_with = "user")]
    pub workspace: Option<PathBuf>,
    /// Wire the user's own settings (every project) instead of one folder.
    #[arg(long)]
    pub user: bool,
    /// Undo: remove what `rdesk setup` added, nothing else.
    #[arg(long)]
    pub remove: bool,
    /// Who decides the agent's edits: the person in the window (human), or nobody (agent:
    /// recorded and allowed at once).
    #[arg(long, value_enum, default_value_t = Policy::Human)]
    pub policy: Policy,
    /// What happens to an edit outside the folder the desk reviews.
    #[arg(long, value_enum, default_value_t = OutsideArg::Deny)]
    pub outside: OutsideArg,
    /// List the agents and what each gets.
    #[arg(long)]
    pub list: bool,
}

pub fn setup(args: SetupArgs) -> ExitCode {
    if args.list {
        for a in agents::AGENTS {
            println!("{:<12} {} — {}", a.id, a.name, a.gets);
        }
        return ExitCode::SUCCESS;
    }
    let id = args.agent.unwrap_or_default();
    let agent = match agents::find(&id) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("rdesk setup: {e}");
            return ExitCode::from(2);
        }
    };
    let scope = if args.user {
        Scope::User
    } else {
        let dir = args.workspace.unwrap_or_else(|| PathBuf::from("."));
        match std::fs::canonicalize(&dir) {
            Ok(d) if d.is_dir() => Scope::Workspace(d),
            _ => {
                eprintln!("rdesk setup: {} is not a folder; pass the project folder with --workspace", dir.display());
                return ExitCode::from(2);
            }
        }
    };
    let rdesk = match std::env::current_exe().and_then(std::fs::canonicalize) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("rdesk setup: cannot tell where rdesk is installed ({e}); the hook needs its path");
            return ExitCode::from(1);
        }
    };
    let Some(home) = std::env::var_os("HOME").filter(|h| !h.is_empty()).map(PathBuf::from) else {
        eprintln!("rdesk setup: HOME is not set");
        return ExitCode::from(1);
    };
    let opts = SetupOptions {
        scope,
        remove: args.remove,
        policy: connect_policy(args.policy),
        outside: args.outside.into_outside(),
        rdesk,
        home,
    };
    let report = match agent.id {
        "claude-code" => resolve_connect::agents::claude_code::setup(&opts),
        "codex" => resolve_connect::agents::codex::setup(&opts),
        "gemini" => resolve_connect::agents::gemini::setup(&opts),
        "opencode" => resolve_connect::agents::opencode::setup(&opts),
        "pi" => resolve_connect::agents::pi::setup(&opts),
        other => Err(format!("no setup for {other}")),
    };
    match report {
        Ok(report) => {
            if report.changes.is_empty() {
                println!(
                    "{}: already {}; nothing changed.",
                    agent.name,
                    if args.remove { "unwired" } else { "wired to Resolve Desk" }
                );
            }
            for (file, words) in &report.changes {
                println!("{}:", file.display());
                for w in words {
                    println!("  {w}");
                }
            }
            for line in &report.check {
                println!("{line}");
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("rdesk setup {}: {e}", agent.id);
            ExitCode::from(1)
        }
    }
}

#[derive(Args, Debug)]
pub struct HookArgs {
    /// The agent whose hook this is: claude-code, codex, gemini, opencode, pi.
    pub agent: String,
    /// The folder the desk reviews (default: the agent's project folder).
    #[arg(long, short = 'w')]
    pub workspace: Option<PathBuf>,
    /// Who decides (see `rdesk setup --help`).
    #[arg(long, value_enum, default_value_t = Policy::Human)]
    pub policy: Policy,
    /// What happens to an edit outside the folder.
    #[arg(long, value_enum, default_value_t = OutsideArg::Deny)]
    pub outside: OutsideArg,
    /// How long to wait for the person before answering "not decided yet" (below the hook's
    /// time-out in the agent's settings).
    #[arg(long, value_name = "SECONDS", default_value_t = agents::HOOK_WAIT.as_secs())]
    pub wait: u64,
}

/// Runs one hook; a panic in it becomes a deny with its message, never a pass.
async fn guarded(
    answer: impl std::future::Future<Output = Value> + Send + 'static,
    deny: fn(&str) -> Value,
    id: &str,
) -> Value {
    match tokio::spawn(answer).await {
        Ok(v) => v,
        Err(e) => deny(&format!(
            "Resolve Desk's hook failed ({e}), so the edit was not made. Please report this; meanwhile `rdesk setup \
             {id} --remove` unwires the desk."
        )),
    }
}

/// Reads the hook's JSON on stdin, prints the answer; never lets an edit through on a
/// failure (a deny, exit 2 with the reason on stderr, when even that cannot be printed).
pub async fn hook(args: HookArgs) -> ExitCode {
    let mut input = Vec::new();
    if let Err(e) = std::io::stdin().read_to_end(&mut input) {
        eprintln!("Resolve Desk's hook could not read its input ({e}); the edit was not made.");
        return ExitCode::from(2);
    }
    let opts = HookOptions {
        workspace: args.workspace,
        policy: connect_policy(args.policy),
        outside: args.outside.into_outside(),
        wait: Duration::from_secs(args.wait.max(1)),
    };
    use resolve_connect::agents::{claude_code, codex, gemini, opencode, pi, plugin};
    let id = args.agent.clone();
    let answer = match args.agent.as_str() {
        "claude-code" => guarded(async move { claude_code::hook(&input, &opts).await }, claude_code::deny, &id).await,
        "codex" => guarded(async move { codex::hook(&input, &opts).await }, codex::deny, &id).await,
        "gemini" => guarded(async move { gemini::hook(&input, &opts).await }, gemini::deny, &id).await,
        "opencode" => guarded(async move { opencode::hook(&input, &opts).await }, plugin::deny, &id).await,
        "pi" => guarded(async move { pi::hook(&input, &opts).await }, plugin::deny, &id).await,
        other => {
            eprintln!("rdesk hook: {}", agents::find(other).err().unwrap_or_default());
            return ExitCode::from(2);
        }
    };
    if answer == Value::Null {
        return ExitCode::SUCCESS;
    }
    let mut out = std::io::stdout().lock();
    if writeln!(out, "{answer}").and_then(|_| out.flush()).is_err() {
        eprintln!("Resolve Desk's hook could not write its answer; the edit was not made.");
        return ExitCode::from(2);
    }
    ExitCode::SUCCESS
}
