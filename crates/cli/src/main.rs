//! `rdesk`: Resolve Desk without a window.
//!
//! - `rdesk run SCRIPT --workspace DIR` replays a JSON Lines script of tool calls against a
//!   fresh session on DIR, printing one JSON line per step (see `rdesk run --help`).
//! - `rdesk ast-edit --pat P --out R [--lang L] [--json] [--apply] PATH...` runs the
//!   `ast_edit` rewrite outside any session: a preview, a JSON summary, or an atomic apply.
//! - `rdesk agent --prompt TEXT --workspace DIR [--base-url URL --model NAME] [--policy agent|human]`
//!   runs one LLM agent turn (or `--replay FILE` a recorded one), printing JSON Lines; see
//!   `rdesk agent --help` for its exit codes (3: waits for a person, 130: cancelled).
//!
//! - `rdesk mcp --workspace DIR [--policy human|agent] [--headless]` serves the desk to a
//!   coding agent over MCP on stdio (see `mcp`).
//! - `rdesk tools [-w DIR]` lists the tools; `rdesk tools new NAME --lang js|ts|python` writes
//!   one from a template (`scaffold`) using the SDK `rdesk sdk-path` prints (`sdk`).
//! - `rdesk completions SHELL` / `rdesk man` print what the packages install: completion
//!   scripts and manual pages generated from this file's clap definition (see `manual`).
//!
//! Exit codes (docs/CLI.md has every command's): 0 when the command did its work (a script's
//! tool errors are reported in-band); 2 for bad input (a malformed script line, a missing
//! workspace, bad arguments); 1 for anything else (an I/O error writing the output).

use std::io::{self, BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{CommandFactory, Parser, Subcommand};
use resolve_engine::{Actor, ResolvePolicy};

mod agent;
mod ast_edit;
mod builtin;
mod connect;
mod manual;
mod mcp;
mod recovery;
mod scaffold;
mod sdk;
mod terminal;
mod trust;

#[derive(Parser)]
#[command(
    name = "rdesk",
    version,
    about = "Resolve Desk, headless: preview far-reaching changes, then apply or discard them."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run a JSON Lines script of tool calls against a fresh session.
    #[command(long_about = RUN_HELP)]
    Run {
        /// The script file, or `-` for standard input.
        script: String,
        /// The workspace folder the session works in (every path a tool touches stays inside it).
        #[arg(long, short = 'w')]
        workspace: PathBuf,
    },
    /// Structural rewrite outside any session: preview (default), --json, or --apply.
    #[command(name = "ast-edit")]
    AstEdit(ast_edit::AstEditArgs),
    /// List the tools a session offers (name, label, hidden, description), external tools
    /// included (a folder's own with the command they run and whether they are trusted), and
    /// the external tools that could not be loaded.
    Tools(ToolsArgs),
    /// Print the folder of the tool SDKs installed with Resolve Desk (node/, python/).
    #[command(name = "sdk-path")]
    SdkPath,
    /// Trust a folder's own tools (`.resolve/tools`), so they may run; list or revoke trust.
    #[command(long_about = trust::TRUST_HELP)]
    Trust(trust::TrustArgs),
    /// Run an LLM agent turn (live or replayed) against a fresh session; prints JSON Lines.
    #[command(long_about = agent::AGENT_HELP)]
    Agent(agent::AgentArgs),
    /// Serve Resolve Desk to a coding agent over MCP on stdio (joins the desk window).
    #[command(long_about = mcp::MCP_HELP)]
    Mcp(mcp::McpArgs),
    /// Wire an agent you run (Claude Code) so that every edit it makes waits in the desk.
    #[command(long_about = connect::SETUP_HELP)]
    Setup(connect::SetupArgs),
    /// An agent's edit hook (written by `rdesk setup`): reads the agent's hook JSON on stdin,
    /// holds the edit in the desk until it is decided, prints the agent's answer.
    Hook(connect::HookArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    #[command(long_about = manual::COMPLETIONS_HELP)]
    Completions(manual::CompletionsArgs),
    /// Print the manual page, or write one page per subcommand into --out-dir.
    #[command(long_about = manual::MAN_HELP)]
    Man(manual::ManArgs),
    /// For tests and CI: serve a session on the desk's socket without a window.
    #[command(name = "serve-socket", hide = true)]
    ServeSocket(mcp::ServeSocketArgs),
}

#[derive(clap::Args)]
#[command(args_conflicts_with_subcommands = true)]
struct ToolsArgs {
    #[command(subcommand)]
    command: Option<ToolsCommand>,
    /// The workspace whose `.resolve/tools/` to include (default: only the built-in and
    /// the user's own tools).
    #[arg(long, short = 'w')]
    workspace: Option<PathBuf>,
}

#[derive(Subcommand)]
enum ToolsCommand {
    /// Write a working tool (manifest, program, README) from a template.
    #[command(long_about = scaffold::NEW_HELP)]
    New(scaffold::NewToolArgs),
}

const RUN_HELP: &str = "\
Run a JSON Lines script of tool calls against a fresh session on --workspace.

Script format: one call per line, `{\"tool\": NAME, \"params\": {...}}`; `params` may be
omitted (it is then {}). Blank lines and lines starting with `#` are skipped. SCRIPT may be
`-` to read standard input (lines run as they arrive).

Tools: resolve (apply or discard the top pending action), plus every built-in tool
(`rdesk tools` lists them).

Output: after each step, exactly one JSON line:
  {\"step\": N, \"tool\": NAME, \"is_error\": BOOL, \"text\": TEXT, \"details\": JSON or null,
   \"pending\": [{\"id\": ID, \"label\": LABEL, \"source_tool_name\": NAME, \"status\": STATUS}]}
where `pending` is the pending-action stack after the step, top first, and STATUS is
pending, stale or failed. Action ids are pa-1, pa-2, ... in push order.

Tool errors (an unknown tool, bad parameters, a stale preview, an empty stack) are reported
in-band with is_error true, and the run goes on.

Exit status: 0 when every line ran; 2 when a line is malformed (the run stops there; stderr
names the line number and the problem) or the workspace cannot be opened; 1 on an output
error. Nothing is ever applied implicitly: actions still pending at the end are dropped
unapplied.

A run is a fresh session of its own: it keeps no journal, so it neither restores the actions
the window keeps pending for the workspace nor keeps its own for later (a script is replayed
whole, and nobody is at a window to review what it leaves). To review later, push through
the window: `resolve-desk DIR`, or `rdesk mcp -w DIR` for an agent.

Example:
  printf '%s\\n' '{\"tool\":\"resolve\",\"params\":{\"action\":\"apply\",\"reason\":\"ok\"}}' \\
    | rdesk run - --workspace .
  {\"step\":1,\"tool\":\"resolve\",\"is_error\":true,\"text\":\"No pending action to resolve. Nothing to apply or discard.\",\"details\":null,\"pending\":[]}";

fn main() -> ExitCode {
    // SAFETY: first in `main`: no tree-sitter object and no other thread exist yet.
    unsafe { resolve_tool_ast_edit::alloc::parse_with_mimalloc() };
    let cli = Cli::parse();
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("rdesk: cannot start the async runtime: {e}");
            return ExitCode::from(1);
        }
    };
    match cli.command {
        Command::Run { script, workspace } => runtime.block_on(run(&script, &workspace)),
        Command::AstEdit(args) => ast_edit::run(args),
        Command::Tools(ToolsArgs { command: Some(ToolsCommand::New(args)), .. }) => scaffold::run(args),
        Command::Tools(ToolsArgs { command: None, workspace }) => runtime.block_on(list_tools(workspace)),
        Command::SdkPath => sdk::run(),
        Command::Trust(args) => trust::run(args),
        Command::Agent(args) => runtime.block_on(agent::run(args)),
        Command::Mcp(args) => runtime.block_on(mcp::run(args)),
        Command::ServeSocket(args) => runtime.block_on(mcp::serve_socket(args)),
        Command::Setup(args) => connect::setup(args),
        Command::Hook(args) => runtime.block_on(connect::hook(args)),
        Command::Completions(args) => manual::completions(args, Cli::command()),
        Command::Man(args) => manual::man(args, Cli::command()),
    }
}

/// The desk of a one-shot command (`run`, `agent`): deterministic ids, no live reload.
async fn open_desk(
    workspace: &std::path::Path,
    policy: ResolvePolicy,
    never_pass_env: Vec<String>,
) -> Result<resolve_desk_core::Desk, String> {
    let how = builtin::Open { policy, script_ids: true, watch_tools: false, never_pass_env, journal: None };
    builtin::open(workspace, how, "rdesk").await
}

async fn run(script: &str, workspace: &std::path::Path) -> ExitCode {
    let desk = match open_desk(workspace, ResolvePolicy::Agent, Vec::new()).await {
        Ok(d) => d,
        Err(e) => {
            eprintln!("rdesk: {e}");
            return ExitCode::from(2);
        }
    };
    let session = desk.session();
    let reader: Box<dyn BufRead> = if script == "-" {
        Box::new(BufReader::new(io::stdin()))
    } else {
        match std::fs::File::open(script) {
            Ok(f) => Box::new(BufReader::new(f)),
            Err(e) => {
                eprintln!("rdesk: cannot read script {script}: {e}");
                return ExitCode::from(2);
            }
        }
    };
    let mut out = io::stdout().lock();
    let mut write_error = None;
    let result = resolve_agent::run_script(session, Actor::Script, reader, |report| {
        if write_error.is_some() {
            return;
        }
        let line = serde_json::to_string(report).unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}"));
        if let Err(e) = writeln!(out, "{line}").and_then(|_| out.flush()) {
            write_error = Some(e);
        }
    })
    .await;
    if let Some(e) = write_error {
        eprintln!("rdesk: cannot write the output: {e}");
        return ExitCode::from(1);
    }
    match result {
        Ok(_) => ExitCode::SUCCESS,
        Err(e @ resolve_agent::ScriptError::Malformed { .. }) => {
            eprintln!("rdesk: {script}: {}; the run stopped here (earlier steps ran).", terminal::safe(&e.to_string()));
            ExitCode::from(2)
        }
        Err(e) => {
            eprintln!("rdesk: {e}");
            ExitCode::from(2)
        }
    }
}

async fn list_tools(workspace: Option<PathBuf>) -> ExitCode {
    // Without a workspace: a fresh private folder (never a shared one such as the system's
    // temporary folder, where someone else could have left a record or tools).
    let private = match workspace {
        Some(_) => None,
        None => match tempfile::Builder::new().prefix("rdesk-tools-").tempdir() {
            Ok(d) => Some(d),
            Err(e) => {
                eprintln!("rdesk: cannot create a private temporary folder: {e}");
                return ExitCode::from(1);
            }
        },
    };
    let dir = workspace.clone().unwrap_or_else(|| private.as_ref().map(|d| d.path().to_path_buf()).unwrap_or_default());
    let how = builtin::Open {
        policy: ResolvePolicy::Agent,
        script_ids: true,
        watch_tools: false,
        never_pass_env: Vec::new(),
        journal: None,
    };
    let desk = match builtin::open(&dir, how, "rdesk").await {
        Ok(d) => d,
        Err(e) => {
            eprintln!("rdesk: {e}");
            return ExitCode::from(if workspace.is_some() { 2 } else { 1 });
        }
    };
    let esc = terminal::safe;
    let untrusted = match desk.trust_state() {
        resolve_desk_core::TrustState::Untrusted(f) => Some(f),
        _ => None,
    };
    let manifests = desk.external().manifests();
    for t in desk.session().tools() {
        let hidden = if t.hidden { " (hidden: offered only while an action is pending)" } else { "" };
        let manifest = manifests.iter().find(|m| m.name == t.name);
        let kind = match manifest.map(|m| m.source) {
            None => String::new(),
            Some(resolve_external::ToolSource::User) => " (external, yours)".to_string(),
            Some(resolve_external::ToolSource::Workspace) if untrusted.is_some() => {
                " (external, this folder's: NOT TRUSTED, will not run)".to_string()
            }
            Some(resolve_external::ToolSource::Workspace) => " (external, this folder's: trusted)".to_string(),
        };
        println!("{} — {}{}{}\n    {}", esc(&t.name), esc(&t.label), kind, hidden, esc(&t.description));
        if let Some(m) = manifest {
            let launch = resolve_desk_core::ToolLaunch::of(m);
            println!("    runs: {}", esc(&launch.command_line()));
        }
    }
    let problems = desk.tool_problems();
    if !problems.is_empty() {
        println!("\nNot loaded:");
        for p in problems {
            println!("  {}", esc(&p.to_string()));
        }
    }
    if untrusted.is_some() {
        println!(
            "\nThis folder's own tools run only once you trust them: review the commands above, then `rdesk trust {}`.",
            esc(&desk.root().display().to_string())
        );
    }
    ExitCode::SUCCESS
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every visible subcommand, nested ones as `parent sub`.
    fn subcommands(cmd: &clap::Command, prefix: &str, out: &mut Vec<String>) {
        for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
            let name = format!("{prefix}{}", sub.get_name());
            out.push(name.clone());
            subcommands(sub, &format!("{name} "), out);
        }
    }

    #[test]
    fn the_definition_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn completions_and_the_manual_mention_every_subcommand() {
        let mut names = Vec::new();
        subcommands(&Cli::command(), "", &mut names);
        for expected in ["run", "tools", "tools new", "sdk-path", "trust", "agent", "mcp", "completions", "man"] {
            assert!(names.iter().any(|n| n == expected), "{expected} is a visible subcommand: {names:?}");
        }
        let mut outputs = Vec::new();
        for shell in [clap_complete::Shell::Bash, clap_complete::Shell::Zsh, clap_complete::Shell::Fish] {
            let script = String::from_utf8(manual::completion_script(shell, Cli::command())).expect("UTF-8");
            outputs.push((shell.to_string(), script));
        }
        let top = String::from_utf8(manual::man_page(Cli::command()).expect("renders")).expect("UTF-8");
        let pages = manual::man_pages(Cli::command()).expect("renders");
        let names_of_pages: Vec<&str> = pages.iter().map(|p| p.0.as_str()).collect();
        for name in &names {
            let file = format!("rdesk-{}.1", name.replace(' ', "-"));
            assert!(names_of_pages.contains(&file.as_str()), "a page for `{name}`: {names_of_pages:?}");
        }
        let all: String = pages.iter().map(|p| String::from_utf8_lossy(&p.1).into_owned()).collect();
        assert!(!all.contains("serve\\-socket"), "the manual leaves the hidden command out");
        outputs.push(("man".to_string(), top + &all));
        for (what, text) in &outputs {
            for name in &names {
                let last = name.rsplit(' ').next().unwrap_or(name);
                // roff escapes '-' as '\-'.
                let roff = last.replace('-', "\\-");
                assert!(text.contains(last) || text.contains(&roff), "{what} mentions `{name}`");
            }
        }
    }
}
