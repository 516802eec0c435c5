//! `rdesk mcp`: Resolve Desk as an MCP server for a coding agent, on stdio.
//!
//! - `rdesk mcp --workspace DIR` joins the desk window that has DIR open (its user-only
//!   socket), starting `resolve-desk DIR` first when none has; it is then a plain
//!   stdio ↔ socket pipe, so the agent's previews land in that window's queue.
//! - `rdesk mcp --workspace DIR --headless --policy agent` serves a session of its own on
//!   stdio, without a window (for CI and scripted agents).
//! - `rdesk serve-socket --workspace DIR` (hidden; for tests and CI) serves a session on the
//!   socket like the app does, without a window, until SIGTERM/SIGINT.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use clap::{Args, ValueEnum};
use resolve_engine::{ResolvePolicy, Session};

use crate::builtin;

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Policy {
    /// A person applies or discards in the window; the agent's `resolve` waits for them.
    Human,
    /// The agent's own `resolve` call decides at once.
    Agent,
}

impl Policy {
    pub(crate) fn engine(self) -> ResolvePolicy {
        match self {
            Policy::Human => ResolvePolicy::Human,
            Policy::Agent => ResolvePolicy::Agent,
        }
    }
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Policy::Human => "human",
            Policy::Agent => "agent",
        }
    }
}

#[derive(Args, Debug)]
pub struct McpArgs {
    /// The workspace folder (every path a tool touches stays inside it).
    #[arg(long, short = 'w')]
    pub workspace: PathBuf,
    /// Who resolves pending actions. Without --headless it applies when rdesk starts the desk
    /// (a desk already open keeps the policy its person chose).
    #[arg(long, value_enum)]
    pub policy: Option<Policy>,
    /// Serve a session of this process's own on stdio, without a window (needs --policy agent:
    /// with no window nobody could decide).
    #[arg(long)]
    pub headless: bool,
    /// How long a `resolve` waits for the person's decision before it answers that they have
    /// not decided yet (the agent then calls `resolve` again). Keep it below your client's
    /// request time-out (often 60 s).
    #[arg(long, value_name = "SECONDS", default_value_t = resolve_engine::DEFAULT_RESOLVE_WAIT.as_secs(),
          value_parser = clap::value_parser!(u64).range(1..=resolve_mcp::MAX_RESOLVE_WAIT_SECS))]
    pub resolve_wait: u64,
}

pub const MCP_HELP: &str = "\
Serve Resolve Desk to a coding agent over MCP (stdio).

Without --headless, rdesk joins the Resolve Desk window that has --workspace open, through a
socket only your user can open ($XDG_RUNTIME_DIR/resolve-desk/, no TCP port); if no window
has it open, rdesk starts `resolve-desk DIR` (found beside rdesk, else on PATH; the
RESOLVE_DESK_BIN variable overrides) and joins it once it is up. When a desk is already
running for another folder, DIR opens there, beside its other folders (one desk, many
folders), instead of in a second window. The agent's previews then
wait in that window, and `resolve` returns the person's decision and reason. Before sending
anything, rdesk checks that the socket, its folder and the process listening on it are your
user's; if any is another user's, it stops with an error (exit 1) and starts no desk.

Incoming lines (one JSON-RPC message each) longer than RESOLVE_DESK_MCP_MAX_LINE_BYTES
(default 16777216, 16 MiB) are dropped and answered with a -32600 error.

`resolve` is always listed. While the person reviews, a `resolve` waits at most
--resolve-wait seconds (default 45, below the 60-second request time-out of common clients),
then answers that the person has not decided yet (nothing was written) and the agent calls it
again. A decision made while the agent was not waiting is kept for it (by its client name,
across restarts of the window) and given to its next `resolve`, or at the start of its next
call of another tool.

With --headless --policy agent, rdesk runs a session of its own without a window; the
agent's `resolve` applies or discards at once. (--headless with --policy human is refused:
with no window, nobody could decide.)

Set-up for a terminal agent:
  claude mcp add resolve-desk -- rdesk mcp --workspace /path/to/project";

/// Runs `rdesk mcp`.
pub async fn run(args: McpArgs) -> ExitCode {
    if args.headless {
        let policy = args.policy.unwrap_or(Policy::Human);
        if policy == Policy::Human {
            eprintln!(
                "rdesk mcp: --headless has no window, so under --policy human nobody could apply or discard \
                 a preview and every `resolve` would wait forever. Use `--headless --policy agent` (the agent's \
                 `resolve` decides), or drop --headless to join the Resolve Desk window for {}.",
                args.workspace.display()
            );
            return ExitCode::from(2);
        }
        let desk = match open(&args.workspace, policy, None, "rdesk mcp").await {
            Ok(d) => d,
            Err(e) => {
                eprintln!("rdesk mcp: {e}");
                return ExitCode::from(2);
            }
        };
        desk.session().waits().set_bound(Duration::from_secs(args.resolve_wait));
        return match resolve_mcp::serve(desk.session().clone(), tokio::io::stdin(), tokio::io::stdout()).await {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("rdesk mcp: {e}");
                ExitCode::from(1)
            }
        };
    }
    let root = match std::fs::canonicalize(&args.workspace) {
        Ok(r) if r.is_dir() => r,
        _ => {
            eprintln!(
                "rdesk mcp: the workspace {} is not a folder; pass an existing folder.",
                args.workspace.display()
            );
            return ExitCode::from(2);
        }
    };
    let path = resolve_mcp::socket_path(&root);
    if let Err(e) = resolve_mcp::check_socket_path(&path) {
        eprintln!("rdesk mcp: {e}");
        return ExitCode::from(2);
    }
    // Is a desk up? Checked (owner of the folder, of the socket, of the process listening)
    // before anything is sent; something of another user there is refused, and no desk is
    // started in its place.
    let stream = match resolve_mcp::connect_checked(&path).await {
        Ok(Some(stream)) => stream,
        Ok(None) => match resolve_connect::join::start_desk(&root, args.policy.map(Policy::as_str)).await {
            Ok(stream) => stream,
            Err(e) => {
                eprintln!("rdesk mcp: {e} (Without a window: `rdesk mcp --headless --policy agent`.)");
                return ExitCode::from(1);
            }
        },
        Err(e) => {
            eprintln!("rdesk mcp: {e}");
            return ExitCode::from(1);
        }
    };
    let wait = Some(Duration::from_secs(args.resolve_wait));
    resolve_mcp::bridge_stream(stream, &root, tokio::io::stdin(), tokio::io::stdout(), wait).await;
    ExitCode::SUCCESS
}

/// The desk a server opens (what it found told on stderr: stdout is the MCP protocol).
/// Adding, editing or removing a tool folder updates the tools live (the client is sent
/// `tools/list_changed`) while the returned desk lives. With a `journal`, pending actions and
/// decisions kept for agents are restored from it and mirrored to it (as the window does).
async fn open(
    workspace: &Path,
    policy: Policy,
    journal: Option<Arc<resolve_journal::Writer>>,
    prog: &str,
) -> Result<resolve_desk_core::Desk, String> {
    let how = builtin::Open {
        policy: policy.engine(),
        script_ids: false,
        watch_tools: true,
        never_pass_env: Vec::new(),
        journal,
    };
    builtin::open(workspace, how, prog).await
}

/// The journal `DIR/journal.sqlite3` (the window's `--data-dir` layout) and its writer.
fn open_journal(data_dir: &Path, prog: &str) -> Result<Arc<resolve_journal::Writer>, String> {
    let prog = prog.to_string();
    let report = Box::new(move |path: &Path, result: Result<(), &resolve_journal::JournalError>| {
        if let Err(e) = result {
            eprintln!("{prog}: could not write to the journal {}: {e}", path.display());
        }
    });
    resolve_desk_core::journal::open_writer(data_dir, report).map_err(|e| e.to_string())
}

#[derive(Args, Debug)]
pub struct ServeSocketArgs {
    /// The workspace folder.
    #[arg(long, short = 'w')]
    pub workspace: PathBuf,
    /// Who resolves pending actions.
    #[arg(long, value_enum, default_value = "human")]
    pub policy: Policy,
    /// Keep the journal in DIR/journal.sqlite3, as the window does with its data folder:
    /// pending actions and the decisions kept for agents survive a restart.
    #[arg(long, value_name = "DIR")]
    pub data_dir: Option<PathBuf>,
}

/// Runs `rdesk serve-socket`: the app's socket server without the app. Prints the socket
/// path on stdout once listening; closes the desk (like the app does) on SIGTERM/SIGINT.
/// Standing in for the window's buttons, each line on stdin (`{"tool": NAME, "params": {...}}`)
/// is called as the person, and its result printed as one JSON line
/// (`{"is_error": BOOL, "text": TEXT, "details": JSON}`); `{"wait_for_proposal": true}` prints
/// `{"proposal": {...}}` once the top action carries an agent's proposal (human policy; with
/// `"waiting": BOOL`, once that proposal's agent is, or is no longer, waiting).
pub async fn serve_socket(args: ServeSocketArgs) -> ExitCode {
    let journal = match args.data_dir.as_deref().map(|d| open_journal(d, "rdesk serve-socket")).transpose() {
        Ok(j) => j,
        Err(e) => {
            eprintln!("rdesk serve-socket: {e}");
            return ExitCode::from(2);
        }
    };
    let desk = match open(&args.workspace, args.policy, journal.clone(), "rdesk serve-socket").await {
        Ok(d) => d,
        Err(e) => {
            eprintln!("rdesk serve-socket: {e}");
            return ExitCode::from(2);
        }
    };
    let session = desk.session().clone();
    let path = resolve_mcp::socket_path(session.workspace().root());
    let server_session = session.clone();
    let server = match resolve_mcp::listen(&path, session) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("rdesk serve-socket: {e}");
            return ExitCode::from(1);
        }
    };
    println!("{}", path.display());
    tokio::spawn(person_calls(server_session));
    use tokio::signal::unix::{signal, SignalKind};
    let (Ok(mut term), Ok(mut int)) = (signal(SignalKind::terminate()), signal(SignalKind::interrupt())) else {
        eprintln!("rdesk serve-socket: cannot watch for signals");
        return ExitCode::from(1);
    };
    tokio::select! {
        _ = term.recv() => {}
        _ = int.recv() => {}
    }
    server.close().await;
    // What the journal was told is on disk before the process goes.
    if let Some(journal) = journal {
        journal.flush();
    }
    // Exit here: the runtime would otherwise wait on the blocking read of stdin (the person
    // channel) before it can shut down.
    std::process::exit(0)
}

/// The person's calls for `serve-socket` (see there), until stdin ends.
async fn person_calls(session: Arc<Session>) {
    use std::io::Write;
    use tokio::io::AsyncBufReadExt;
    let mut lines = tokio::io::BufReader::new(tokio::io::stdin()).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        let call: serde_json::Value = match serde_json::from_str(&line) {
            Ok(v) => v,
            Err(e) => {
                eprintln!("rdesk serve-socket: stdin line is not JSON ({e}); expected {{\"tool\": NAME, \"params\": {{...}}}}");
                continue;
            }
        };
        if call.get("wait_for_proposal").is_some() {
            // Like a person looking at the window until an agent's proposal shows up (with
            // `"waiting": BOOL`, until it shows the agent waiting, or no longer waiting).
            let session = session.clone();
            let waiting = call.get("waiting").and_then(serde_json::Value::as_bool);
            tokio::spawn(async move {
                let mut events = session.store().subscribe();
                let proposal = loop {
                    let top = session.store().list().first().and_then(|a| a.proposal.clone());
                    if let Some(p) = top.filter(|p| waiting.is_none_or(|w| p.waiting == w)) {
                        break p;
                    }
                    if let Err(tokio::sync::broadcast::error::RecvError::Closed) = events.recv().await {
                        return;
                    }
                };
                let out = serde_json::json!({ "proposal": proposal });
                let mut stdout = std::io::stdout().lock();
                let _ = writeln!(stdout, "{out}").and_then(|_| stdout.flush());
            });
            continue;
        }
        let tool = call["tool"].as_str().unwrap_or_default().to_string();
        let params = call.get("params").cloned().unwrap_or_else(|| serde_json::json!({}));
        let session = session.clone();
        // Each call runs on its own, so a slow one does not hold up the next line.
        tokio::spawn(async move {
            let r = session.call(resolve_engine::Actor::Person, &tool, params).await;
            let out = serde_json::json!({"is_error": r.is_error, "text": r.text_content(), "details": r.details});
            let mut stdout = std::io::stdout().lock();
            let _ = writeln!(stdout, "{out}").and_then(|_| stdout.flush());
        });
    }
}
