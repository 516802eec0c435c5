//! The command line: `resolve-desk [WORKSPACE] [--script FILE] [--policy human|agent] [--new-window]`.

use std::path::PathBuf;

use resolve_engine::ResolvePolicy;

pub const USAGE: &str = "\
Usage: resolve-desk [WORKSPACE] [--script FILE] [--policy human|agent] [--data-dir DIR] [--config-dir DIR] [--new-window]

Opens WORKSPACE (a folder) in Resolve Desk. One desk serves every folder: when a desk is
already running for you (and the same data folder), WORKSPACE opens beside its other folders
and this command exits. The folders open when the desk closed come back at its next start.
Without WORKSPACE (and none to reopen) it opens a built-in demo: a small project copied to a
fresh temporary folder, with an ast_edit preview and a batch rename preview on the stack.

  --script FILE   run a JSON Lines script of tool calls (the `rdesk run` format) in the
                  session before the window opens (e.g. to queue previews for review);
                  implies --new-window
  --policy P      who resolves pending actions: human (default) or agent
  --data-dir DIR  where recent workspaces are kept (default: the user data folder)
  --config-dir DIR  where the agent settings are kept, as DIR/resolve-desk/agent.json
                  (default: $XDG_CONFIG_HOME, else ~/.config)
  --new-window    a desk of its own in a new window: it joins no running desk, others do
                  not join it, and it neither reopens nor records the open folders
";

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

    /// Parses the arguments after the program name. `Err` holds the usage text or an error.
    pub fn parse(args: impl IntoIterator<Item = String>) -> Result<Args, String> {
        let mut out = Args {
            workspace: None,
            script: None,
            policy: ResolvePolicy::Human,
            data_dir: None,
            config_dir: None,
            new_window: false,
        };
        let mut it = args.into_iter();
        while let Some(arg) = it.next() {
            let mut value =
                |name: &str| it.next().ok_or_else(|| format!("resolve-desk: {name} needs a value\n\n{USAGE}"));
            match arg.as_str() {
                "-h" | "--help" => return Err(USAGE.to_string()),
                "--new-window" => out.new_window = true,
                "--script" => out.script = Some(PathBuf::from(value("--script")?)),
                "--data-dir" => out.data_dir = Some(PathBuf::from(value("--data-dir")?)),
                "--config-dir" => out.config_dir = Some(PathBuf::from(value("--config-dir")?)),
                "--policy" => {
                    out.policy = match value("--policy")?.as_str() {
                        "human" => ResolvePolicy::Human,
                        "agent" => ResolvePolicy::Agent,
                        other => return Err(format!("resolve-desk: unknown policy `{other}`; use human or agent")),
                    }
                }
                s if s.starts_with('-') => return Err(format!("resolve-desk: unknown option `{s}`\n\n{USAGE}")),
                _ if out.workspace.is_some() => {
                    return Err(format!("resolve-desk: one workspace at a time (got a second: `{arg}`)"))
                }
                _ => out.workspace = Some(PathBuf::from(arg)),
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(v: &[&str]) -> Result<Args, String> {
        Args::parse(v.iter().map(|s| s.to_string()))
    }

    #[test]
    fn no_arguments_means_the_demo() {
        assert_eq!(parse(&[]).unwrap().workspace, None);
    }

    #[test]
    fn workspace_script_and_policy_are_read() {
        let a = parse(&["/w", "--script", "s.jsonl", "--policy", "agent"]).unwrap();
        assert_eq!(a.workspace, Some(PathBuf::from("/w")));
        assert_eq!(a.script, Some(PathBuf::from("s.jsonl")));
        assert_eq!(a.policy, ResolvePolicy::Agent);
        assert!(!a.new_window, "joining the running desk is the default");
        assert!(parse(&["/w", "--new-window"]).unwrap().new_window);
    }

    #[test]
    fn bad_arguments_are_explained() {
        assert!(parse(&["--policy", "robot"]).unwrap_err().contains("unknown policy `robot`"));
        assert!(parse(&["--bogus"]).unwrap_err().contains("unknown option `--bogus`"));
        assert!(parse(&["a", "b"]).unwrap_err().contains("one workspace at a time"));
        assert!(parse(&["--script"]).unwrap_err().contains("--script needs a value"));
    }
}
