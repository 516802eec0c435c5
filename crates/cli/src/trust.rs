//! `rdesk trust`: a folder's own tools (`.resolve/tools`) run only once the person trusts
//! that folder; this is the command-line way to look at them and trust them, list trusted
//! folders, or revoke trust. Trust is kept in the user's config folder, keyed by the folder's
//! canonical path and a fingerprint of its tools: a changed tool asks again.

use std::io::{BufRead, IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use resolve_desk_core::{trust, TrustState, TrustStore};

use crate::terminal::safe as escape;

#[derive(Args, Debug)]
pub struct TrustArgs {
    /// The folder whose own tools to trust (or, with --revoke, to stop trusting).
    pub folder: Option<PathBuf>,
    /// List the trusted folders.
    #[arg(long, conflicts_with_all = ["revoke", "yes"])]
    pub list: bool,
    /// Stop trusting FOLDER's tools.
    #[arg(long)]
    pub revoke: bool,
    /// Trust without asking (for scripts; the tools are still printed).
    #[arg(long, short = 'y')]
    pub yes: bool,
    /// Move a trust file that cannot be read aside (to `trusted-folders.json.bad-<time>`):
    /// every folder is then untrusted.
    #[arg(long, conflicts_with_all = ["list", "revoke", "yes", "folder"])]
    pub reset: bool,
}

pub const TRUST_HELP: &str = "\
Trust a folder's own tools, so they may run.

A repository can carry tools of its own in .resolve/tools/*/tool.json. Each names a command
that Resolve Desk would start on the tool's first call, with your user's rights. Until you
trust the folder, these tools are listed but never started: a call says which folder and how
to trust it, and nothing runs. Your own tools (~/.config/resolve-desk/tools) need no trust.

  rdesk trust DIR            show DIR's tools and the commands they run, then ask
  rdesk trust DIR --yes      trust without asking (the tools are still printed)
  rdesk trust --list         the trusted folders
  rdesk trust --revoke DIR   stop trusting DIR's tools
  rdesk trust --reset        move a broken trust file aside (every folder untrusted)

Trust is kept in $XDG_CONFIG_HOME/resolve-desk/trusted-folders.json (or ~/.config/…), keyed by
the folder's canonical path and a fingerprint of every file under .resolve/tools (and of any
file a tool's command names elsewhere in the folder): when a tool changes, it asks again.
Every change is made under a lock on that file (trusted-folders.json.lock) and written whole,
so several `rdesk trust` and windows at once lose nothing; a file that is not valid JSON is
reported with its line and never overwritten.

Exit status: 0 done; 1 not trusted (declined, nothing to trust, or an error); 2 bad arguments.";

pub fn run(args: TrustArgs) -> ExitCode {
    let Some(config) = resolve_agent::ProviderConfig::user_config_dir() else {
        eprintln!("rdesk trust: there is no config folder to keep trust in; set HOME or XDG_CONFIG_HOME.");
        return ExitCode::from(1);
    };
    let store = TrustStore::in_config_dir(&config);
    if args.list {
        return list(&store);
    }
    if args.reset {
        return match store.reset() {
            Ok(Some(aside)) => {
                println!(
                    "Moved {} aside to {}; no folder is trusted now.",
                    escape(&store.path().display().to_string()),
                    escape(&aside.display().to_string())
                );
                ExitCode::SUCCESS
            }
            Ok(None) => {
                println!("There is no trust file; nothing changed.");
                ExitCode::SUCCESS
            }
            Err(e) => fail(&e.to_string()),
        };
    }
    let Some(folder) = args.folder else {
        eprintln!("rdesk trust: name a folder (`rdesk trust DIR`), or use --list.");
        return ExitCode::from(2);
    };
    let folder = match std::fs::canonicalize(&folder) {
        Ok(f) if f.is_dir() => f,
        _ => {
            eprintln!(
                "rdesk trust: {} is not a folder; pass an existing folder.",
                escape(&folder.display().to_string())
            );
            return ExitCode::from(2);
        }
    };
    let shown_folder = escape(&folder.display().to_string()).into_owned();
    if args.revoke {
        return match store.revoke(&folder) {
            Ok(true) => {
                println!("No longer trusted: the tools of {shown_folder} will not run until you trust them again.");
                ExitCode::SUCCESS
            }
            Ok(false) => {
                println!("{shown_folder} was not trusted; nothing changed.");
                ExitCode::SUCCESS
            }
            Err(e) => fail(&e.to_string()),
        };
    }
    let shown = match store.state(&folder) {
        TrustState::NoTools => {
            return fail(&format!(
                "{shown_folder} has no tools of its own (no {} folder with a tool.json), so there is nothing to trust.",
                resolve_external::WORKSPACE_TOOLS_DIR
            ))
        }
        TrustState::Trusted { .. } => {
            println!("The tools of {shown_folder} are already trusted as they are.");
            return ExitCode::SUCCESS;
        }
        TrustState::Untrusted(shown) => shown,
    };
    println!("The tools of {shown_folder} would run, with your user's rights:");
    for t in &shown.tools {
        println!("  {}: {}", escape(&t.name), escape(&t.command_line()));
        println!("      (from {})", escape(&t.manifest.display().to_string()));
    }
    let fingerprint = match &shown.fingerprint {
        Ok(f) => f.clone(),
        Err(e) => return fail(&format!("they cannot be trusted: {e}")),
    };
    if !args.yes {
        if !std::io::stdin().is_terminal() {
            return fail("not trusted: standard input is not a terminal to ask on; pass --yes to trust them as shown.");
        }
        print!("Trust these tools? [y/N] ");
        let _ = std::io::stdout().flush();
        let mut answer = String::new();
        if std::io::stdin().lock().read_line(&mut answer).is_err() || !matches!(answer.trim(), "y" | "Y" | "yes") {
            return fail("not trusted; nothing changed.");
        }
    }
    match store.trust_now(&folder, Some(&fingerprint)) {
        Ok(_) => {
            println!("Trusted. They run when called; if one changes, you are asked again.");
            ExitCode::SUCCESS
        }
        Err(e) => fail(&e.to_string()),
    }
}

fn list(store: &TrustStore) -> ExitCode {
    match store.list() {
        Ok(entries) if entries.is_empty() => {
            println!("No folder is trusted.");
            ExitCode::SUCCESS
        }
        Ok(entries) => {
            for e in entries {
                let now = match trust::state_of(Some(store), &e.folder) {
                    TrustState::Trusted { .. } => "trusted",
                    TrustState::Untrusted(_) => "changed since: asks again",
                    TrustState::NoTools => "no tools now",
                };
                println!(
                    "{}  (since {}; {now})",
                    escape(&e.folder.display().to_string()),
                    e.trusted_at.format("%Y-%m-%d %H:%M UTC")
                );
            }
            ExitCode::SUCCESS
        }
        Err(e) => fail(&e.to_string()),
    }
}

fn fail(message: &str) -> ExitCode {
    eprintln!("rdesk trust: {message}");
    ExitCode::from(1)
}
