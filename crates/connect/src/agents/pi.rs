//! pi (`@mariozechner/pi-coding-agent`): an extension re-registers pi's own `edit` and `write`
//! tools, running pi's code with file operations whose `writeFile` hands the text pi computed
//! to `rdesk hook pi` (see [`super::plugin`]). pi 0.73 loads extensions from
//! `<project>/.pi/extensions/` and `~/.pi/agent/extensions/` (`$PI_CODING_AGENT_DIR`), with no
//! time-out on a tool; `--no-extensions` turns them off (then nothing is reviewed).

use std::path::PathBuf;

use serde_json::Value;

use super::{plugin, AgentInfo, HookOptions, Scope, SetupOptions, SetupReport};

pub const INFO: AgentInfo = AgentInfo {
    id: "pi",
    name: "pi",
    gets: "an extension: edit and write wait in the desk (pi's own tools compute the text; the desk writes what you approve)",
};

const SOURCE: &str = include_str!("../../plugins/pi.ts");
const FILE: &str = "resolve-desk.ts";

/// Answers one call of the extension.
pub async fn hook(input: &[u8], opts: &HookOptions) -> Value {
    plugin::hook(INFO.id, INFO.name, input, opts).await
}

/// pi's own folder for the user: `$PI_CODING_AGENT_DIR`, else `~/.pi/agent`.
fn agent_dir(home: &std::path::Path) -> PathBuf {
    match std::env::var_os("PI_CODING_AGENT_DIR").filter(|d| !d.is_empty()) {
        Some(d) => PathBuf::from(d),
        None => home.join(".pi").join("agent"),
    }
}

/// `rdesk setup pi`: the extension in the project's or the user's extensions folder.
pub fn setup(opts: &SetupOptions) -> Result<SetupReport, String> {
    let dir = match &opts.scope {
        Scope::Workspace(d) => d.join(".pi").join("extensions"),
        Scope::User => agent_dir(&opts.home).join("extensions"),
    };
    let file = dir.join(FILE);
    let mut report = plugin::place(&file, &plugin::render(SOURCE, INFO.id, opts), opts.remove, "pi extension")?;
    report.check = if opts.remove {
        vec!["pi no longer loads Resolve Desk's extension (its start-up list of extensions no longer names it).".into()]
    } else {
        vec![
            "Start pi in the project: its edit and write tools wait in the Resolve Desk window until you apply or discard.".into(),
            "Not covered: files written by bash commands, and pi started with --no-extensions.".into(),
        ]
    };
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_extension_says_its_protocol_and_takes_the_hook_command() {
        assert!(
            SOURCE.contains(&format!("({} {})", plugin::MARK, plugin::PROTOCOL)),
            "marked with the protocol version"
        );
        assert_eq!(SOURCE.matches("__RDESK_HOOK__").count(), 1, "one place for the hook's command");
    }
}
