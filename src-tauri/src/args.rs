//! The command line: `resolve-desk [WORKSPACE] [--script FILE] [--policy human|agent]`.

use std::path::PathBuf;

use resolve_engine::ResolvePolicy;

pub const USAGE: &str = "\
Usage: resolve-desk [WORKSPACE] [--script FILE] [--policy human|agent] [--data-dir DIR] [--config-dir DIR]

Opens WORKSPACE (a folder) in Resolve Desk. Without WORKSPACE it opens a built-in demo:
a small project copied to a fresh temporary folder, with an ast_edit preview and a batch
rename preview already on the stack.

  --script FILE   run a JSON Lines script of tool calls (the `rdesk run` format) in the
                  session before the window opens (e.g. to queue previews for review)
  --policy P      who resolves pending actions: human (default) or agent
  --data-dir DIR  where recent workspaces are kept (default: the user data folder)
  --config-dir DIR  where the agent settings are kept, as DIR/resolve-desk/agent.json
                  (default: $XDG_CONFIG_HOME, else ~/.config)
";

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Args {
    pub workspace: Option<PathBuf>,
    pub script: Option<PathBuf>,
    pub policy: ResolvePolicy,
    pub data_dir: Option<PathBuf>,
    pub config_dir: Option<PathBuf>,
}

impl Args {
    /// Parses the arguments after the program name. `Err` holds the usage text or an error.
    pub fn parse(args: impl IntoIterator<Item = String>) -> Result<Args, String> {
        let mut out =
            Args { workspace: None, script: None, policy: ResolvePolicy::Human, data_dir: None, config_dir: None };
        let mut it = args.into_iter();
        while let Some(arg) = it.next() {
            let mut value =
                |name: &str| it.next().ok_or_else(|| format!("resolve-desk: {name} needs a value\n\n{USAGE}"));
            match arg.as_str() {
                "-h" | "--help" => return Err(USAGE.to_string()),
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
    }

    #[test]
    fn bad_arguments_are_explained() {
        assert!(parse(&["--policy", "robot"]).unwrap_err().contains("unknown policy `robot`"));
        assert!(parse(&["--bogus"]).unwrap_err().contains("unknown option `--bogus`"));
        assert!(parse(&["a", "b"]).unwrap_err().contains("one workspace at a time"));
        assert!(parse(&["--script"]).unwrap_err().contains("--script needs a value"));
    }
}
