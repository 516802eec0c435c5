//! The command line: `resolve-desk [WORKSPACE] [--script FILE] [--policy human|agent]
//! [--new-window] …`, parsed by clap like `rdesk`'s (`--help`, `--version`, errors with exit
//! status 2; docs/CLI.md).

use std::path::PathBuf;

use clap::{Parser, ValueEnum};
use resolve_engine::ResolvePolicy;

const ABOUT: &str = "\
Opens WORKSPACE (a folder) in Resolve Desk. One desk serves every folder: when a desk is
already running for you (and the same data folder), WORKSPACE opens beside its other folders
and this command exits. The folders open when the desk closed come back at its next start.
Without WORKSPACE (and none to reopen) it opens a built-in demo: a small project copied to a
fresh temporary folder, with an ast_edit preview and a batch rename preview on the stack.";

/// Who resolves pending actions (the engine's `ResolvePolicy`, as the command line spells it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum PolicyArg {
    /// A person applies or discards in the window; the agent's `resolve` waits for them.
    Human,
    /// The agent's own `resolve` call decides at once.
    Agent,
}

#[derive(Parser, Debug)]
#[command(name = "resolve-desk", version, about = "Resolve Desk: review what a coding agent wants to change before it is written.", long_about = ABOUT)]
struct Cli {
    /// The folder to open (a file manager's "Open with Resolve Desk" passes it here).
    workspace: Option<PathBuf>,
    /// Run a JSON Lines script of tool calls (the `rdesk run` format) in the session before
    /// the window opens (e.g. to queue previews for review); implies --new-window.
    #[arg(long, value_name = "FILE")]
    script: Option<PathBuf>,
    /// Who resolves pending actions.
    #[arg(long, value_enum, default_value_t = PolicyArg::Human)]
    policy: PolicyArg,
    /// Where recent workspaces are kept (default: the user data folder).
    #[arg(long, value_name = "DIR")]
    data_dir: Option<PathBuf>,
    /// Where the agent settings are kept, as DIR/resolve-desk/agent.json (default:
    /// $XDG_CONFIG_HOME, else ~/.config).
    #[arg(long, value_name = "DIR")]
    config_dir: Option<PathBuf>,
    /// A desk of its own in a new window: it joins no running desk, others do not join it,
    /// and it neither reopens nor records the open folders.
    #[arg(long)]
    new_window: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Args {
    pub workspace: Option<PathBuf>,
    pub script: Option<PathBuf>,
    pub policy: ResolvePolicy,
    pub data_dir: Option<PathBuf>,
    pub config_dir: Option<PathBuf>,
    /// A desk of its own (see `join`).
    pub new_window: bool,
}

impl Args {
    /// Whether this start joins the desk already running (and records the open folders for
    /// the next start): not with `--new-window`, nor with `--script` (a script runs in a desk
    /// of its own, before its window opens).
    pub fn joins(&self) -> bool {
        !self.new_window && self.script.is_none()
    }

    /// Parses the arguments after the program name. `Err` is clap's: `--help` and
    /// `--version` (exit 0, printed on stdout) or a usage error naming the argument (exit 2,
    /// on stderr); `clap::Error::exit` does both.
    pub fn parse(args: impl IntoIterator<Item = String>) -> Result<Args, clap::Error> {
        let cli = Cli::try_parse_from(std::iter::once("resolve-desk".to_string()).chain(args))?;
        Ok(Args {
            workspace: cli.workspace,
            script: cli.script,
            policy: match cli.policy {
                PolicyArg::Human => ResolvePolicy::Human,
                PolicyArg::Agent => ResolvePolicy::Agent,
            },
            data_dir: cli.data_dir,
            config_dir: cli.config_dir,
            new_window: cli.new_window,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(v: &[&str]) -> Result<Args, clap::Error> {
        Args::parse(v.iter().map(|s| s.to_string()))
    }

    fn error(v: &[&str]) -> String {
        parse(v).expect_err("these arguments are wrong").to_string()
    }

    #[test]
    fn no_arguments_means_the_demo() {
        let a = parse(&[]).unwrap();
        assert_eq!(a.workspace, None);
        assert_eq!(a.policy, ResolvePolicy::Human, "a person decides unless told otherwise");
        assert!(!a.new_window);
    }

    #[test]
    fn workspace_script_policy_and_new_window_are_read() {
        let a = parse(&["/w", "--script", "s.jsonl", "--policy", "agent", "--new-window"]).unwrap();
        assert_eq!(a.workspace, Some(PathBuf::from("/w")));
        assert_eq!(a.script, Some(PathBuf::from("s.jsonl")));
        assert_eq!(a.policy, ResolvePolicy::Agent);
        assert!(a.new_window);
        assert!(!parse(&["/w"]).unwrap().new_window, "joining the running desk is the default");
        let b = parse(&["--data-dir", "/d", "--config-dir=/c"]).unwrap();
        assert_eq!((b.data_dir, b.config_dir), (Some("/d".into()), Some("/c".into())));
    }

    #[test]
    fn bad_arguments_are_explained_with_status_2() {
        for (args, names) in [
            (&["--policy", "robot"][..], "robot"),
            (&["--bogus"][..], "--bogus"),
            (&["a", "b"][..], "'b'"),
            (&["--script"][..], "--script"),
        ] {
            let e = parse(args).unwrap_err();
            assert_eq!(e.exit_code(), 2, "a usage error exits with 2: {args:?}");
            assert!(e.to_string().contains(names), "the error names {names}: {e}");
        }
        assert!(error(&["--policy", "robot"]).contains("human"), "the error lists the possible values");
    }

    #[test]
    fn help_and_version_exit_0() {
        for flag in ["--help", "--version", "-V"] {
            let e = parse(&[flag]).unwrap_err();
            assert_eq!(e.exit_code(), 0, "{flag} is not an error");
        }
        assert!(parse(&["--version"]).unwrap_err().to_string().contains(env!("CARGO_PKG_VERSION")));
        let help = parse(&["--help"]).unwrap_err().to_string();
        for option in ["--script", "--policy", "--data-dir", "--config-dir", "--new-window", "--version"] {
            assert!(help.contains(option), "--help mentions {option}");
        }
    }
}
