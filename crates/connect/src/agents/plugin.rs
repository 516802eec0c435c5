//! The hook of agents wired through a plugin or extension in their own language (pi, opencode):
//! the plugin runs the agent's own edit tool up to the point where it would write, and hands the
//! exact text it computed to `rdesk hook <agent>` instead. So the bytes in the desk are the
//! agent's by construction; no matching rule of the agent is re-implemented here.
//!
//! Input (JSON on stdin): `{"tool", "tool_call_id", "cwd", "path" (absolute), "content"}`.
//! Answer (JSON on stdout): `{"decision": "written", "text", "changed"}` once the desk wrote
//! what the person approved (their version when they changed it); `{"decision": "deny",
//! "reason"}` for a discard, a request for changes, an undecided wait and every failure;
//! `{"decision": "pass"}` for a file outside the folder under `--outside allow` (the plugin
//! writes it itself). The plugin source is embedded here and written by `rdesk setup`.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use super::review::{self, Asker, Reviewed, Target};
use super::{HookOptions, Outside, Scope, SetupOptions, SetupReport};
use crate::gate::Policy;

/// The version of the plugin ↔ hook protocol; written into each plugin file.
pub const PROTOCOL: u32 = 1;
/// How a plugin file of ours is recognised (to update or remove it).
pub const MARK: &str = "resolve-desk-plugin";

/// A deny, worded for the plugin.
pub fn deny(reason: &str) -> Value {
    json!({"decision": "deny", "reason": reason})
}

/// Answers one plugin call for the agent `who` (`who.tool` is replaced by the call's tool).
pub async fn hook(id: &str, name: &str, input: &[u8], opts: &HookOptions) -> Value {
    let call: Value = match serde_json::from_slice(input) {
        Ok(v @ Value::Object(_)) => v,
        _ => {
            return deny(&format!(
                "Resolve Desk's hook got input that is not its {name} plugin's, so the edit was not made. Run `rdesk \
                 setup {id}` again (it rewrites the plugin) and retry."
            ))
        }
    };
    let field = |k: &str| call.get(k).and_then(Value::as_str);
    let (Some(tool), Some(path), Some(content)) = (field("tool"), field("path"), field("content")) else {
        return deny(&format!(
            "Resolve Desk's {name} plugin sent no tool, path or content, so the edit was not made. Run `rdesk setup \
             {id}` again (the plugin may be older than this rdesk) and retry."
        ));
    };
    let cwd = field("cwd").map(PathBuf::from);
    let root = match review::root_of(opts, std::slice::from_ref(&cwd)) {
        Ok(r) => r,
        Err(e) => return deny(&e),
    };
    let path = review::absolute(path, cwd.as_deref().unwrap_or(&root));
    if review::inside(&root, &path).is_none() {
        return match opts.outside {
            Outside::Allow => json!({"decision": "pass"}),
            Outside::Deny => deny(&review::outside(id, &root, &path)),
        };
    }
    let target = match Target::read(path.clone(), Some(content.to_string())) {
        Ok(t) => t,
        Err(e) => return deny(&format!("{e}; the edit was not made.")),
    };
    if let Err(e) = review::text_of(&path, &target.before) {
        return deny(&format!("{e}; the edit was not made."));
    }
    let who = Asker { id, name, tool };
    let targets = std::slice::from_ref(&target);
    match review::review(who, &root, targets, opts).await {
        Reviewed::Pass => json!({"decision": "pass"}),
        Reviewed::Denied(text) => deny(&text),
        Reviewed::Applied { text, files } => {
            let changed = files.iter().any(|f| f.changed);
            if let Err(e) = review::write_chosen(targets, &files) {
                return deny(&format!("The person applied this edit in Resolve Desk, but {e}"));
            }
            let text = if changed {
                format!(
                    "{text} The person changed the edit before applying it: {} now holds their version, not yours. \
                     Read it before you edit it again.",
                    path.display()
                )
            } else {
                text
            };
            json!({"decision": "written", "text": text, "changed": changed})
        }
    }
}

/// The plugin file for `source` (with `__RDESK_HOOK__` where the hook's command goes).
pub fn render(source: &str, id: &str, opts: &SetupOptions) -> String {
    let mut argv = vec![opts.rdesk.to_string_lossy().into_owned(), "hook".into(), id.into()];
    if opts.policy != Policy::Human {
        argv.extend(["--policy".into(), opts.policy.as_str().into()]);
    }
    if opts.outside != Outside::Deny {
        argv.extend(["--outside".into(), opts.outside.as_str().into()]);
    }
    if let Scope::Workspace(dir) = &opts.scope {
        argv.extend(["--workspace".into(), dir.to_string_lossy().into_owned()]);
    }
    source.replace("__RDESK_HOOK__", &serde_json::to_string(&argv).unwrap_or_default())
}

/// Writes (or with `--remove` deletes) the plugin file `file`, refusing to touch a file of the
/// same name that is not ours.
pub fn place(file: &Path, content: &str, remove: bool, what: &str) -> Result<SetupReport, String> {
    let now = resolve_userfile::read_to_string(file).map_err(|e| e.to_string())?;
    if let Some(text) = &now {
        if !text.contains(MARK) {
            return Err(format!(
                "{} exists and is not Resolve Desk's; it was left alone. Move it away and run this again.",
                file.display()
            ));
        }
    }
    let mut report = SetupReport::default();
    if remove {
        if now.is_some() {
            std::fs::remove_file(file).map_err(|e| format!("cannot delete {}: {e}", file.display()))?;
            report.changes.push((file.to_path_buf(), vec![format!("deleted Resolve Desk's {what}")]));
        }
        return Ok(report);
    }
    if now.as_deref() == Some(content) {
        return Ok(report);
    }
    resolve_userfile::write_atomic(file, content.as_bytes(), 0o644).map_err(|e| e.to_string())?;
    let verb = if now.is_some() { "updated" } else { "added" };
    report.changes.push((file.to_path_buf(), vec![format!("{verb} Resolve Desk's {what}")]));
    Ok(report)
}
