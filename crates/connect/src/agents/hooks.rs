//! The hook entries agents keep in their JSON settings (Claude Code, Codex and Gemini CLI share
//! the shape `hooks.<Event>: [{matcher, hooks: [{type: "command", command, timeout}]}]`): the
//! command `rdesk setup` writes, and putting or removing ours among the person's own.

use std::path::Path;

use serde_json::{Map, Value};

use super::{Outside, SetupOptions};
use crate::gate::Policy;
use crate::settings::{array_at, drop_if_empty, object_at};

/// The hook command written into the settings.
pub fn hook_command(opts: &SetupOptions, mark: &str) -> String {
    let mut cmd = format!("{}{mark}", shell_quote(&opts.rdesk.to_string_lossy()));
    if opts.policy != Policy::Human {
        cmd.push_str(&format!(" --policy {}", opts.policy.as_str()));
    }
    if opts.outside != Outside::Deny {
        cmd.push_str(&format!(" --outside {}", opts.outside.as_str()));
    }
    cmd
}

pub fn shell_quote(s: &str) -> String {
    if s.chars().all(|c| c.is_ascii_alphanumeric() || "/._-+".contains(c)) {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

/// Whether a hooks entry runs a command with `mark` in it (one of ours).
pub fn is_ours(entry: &Value, mark: &str) -> bool {
    entry.get("hooks").and_then(Value::as_array).is_some_and(|hooks| {
        hooks.iter().any(|h| h.get("command").and_then(Value::as_str).is_some_and(|c| c.contains(mark)))
    })
}

/// Puts `entry` as our one entry of `hooks.<event>` (replacing an older one of ours), or
/// removes ours. Returns the words.
pub fn set_hook(
    settings: &mut Map<String, Value>,
    event: &str,
    entry: Option<Value>,
    file: &Path,
    mark: &str,
) -> Result<Vec<String>, String> {
    let hooks = object_at(settings, "hooks", file)?;
    let list = array_at(hooks, event, file)?;
    let before = list.clone();
    list.retain(|e| !is_ours(e, mark));
    let removed = before.len() - list.len();
    if let Some(e) = &entry {
        // Keep its place when it was there already.
        let at = before.iter().position(|e| is_ours(e, mark)).map(|p| p.min(list.len())).unwrap_or(list.len());
        list.insert(at, e.clone());
    }
    let changed = *list != before;
    drop_if_empty(hooks, event);
    drop_if_empty(settings, "hooks");
    if !changed {
        return Ok(Vec::new());
    }
    Ok(vec![match (&entry, removed) {
        (Some(e), 0) => format!(
            "added a {event} hook on {} running `{}`",
            e["matcher"].as_str().unwrap_or(""),
            e["hooks"][0]["command"].as_str().unwrap_or("")
        ),
        (Some(e), _) => format!(
            "updated the {event} hook on {} to run `{}`",
            e["matcher"].as_str().unwrap_or(""),
            e["hooks"][0]["command"].as_str().unwrap_or("")
        ),
        (None, _) => format!("removed the {event} hook of Resolve Desk"),
    }])
}

/// Puts (or with `None` removes) our entry of each `(event, entry)` in the hooks of the JSON
/// settings file `file`, as one change: all of them, or none when one fails.
pub fn merge_hooks(file: &Path, entries: &[(&str, Option<Value>)], mark: &str) -> Result<Vec<String>, String> {
    crate::settings::try_merge(file, |s| {
        let mut words = Vec::new();
        for (event, entry) in entries {
            words.extend(set_hook(s, event, entry.clone(), file, mark)?);
        }
        Ok(words)
    })
}
