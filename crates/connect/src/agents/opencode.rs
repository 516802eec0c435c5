//! opencode: a plugin (`tool.execute.before`) hands every `edit` and `write` call to
//! `rdesk hook opencode` before opencode runs it; the answer is `{"decision": "allow"}` (with
//! `args` to write the person's version), or `{"decision": "deny", "reason"}`, which the plugin
//! throws, so the model reads the reason as the tool's error. opencode 1.18 loads plugins from
//! `<project>/.opencode/plugins/` and `~/.config/opencode/plugins/`, with no time-out on them.
//!
//! What the tools write, computed as opencode's do on their exact path: `edit` takes the file's
//! BOM off, turns `oldString` and `newString` into the file's line endings (`\r\n` when it has
//! any), replaces the one occurrence (every one with `replaceAll`), and puts the BOM back; an
//! empty `oldString` creates a file. opencode's looser matches (trimmed lines, indentation,
//! similarity) are not re-done: an `oldString` that is not in the file exactly once is refused
//! with why. `write` writes `content`, keeping a BOM the file had. `apply_patch` (offered to
//! GPT models instead of edit and write) is refused with why: it is not reviewed yet.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use super::review::{self, Asker, Reviewed, Target};
use super::{plugin, AgentInfo, HookOptions, Outside, Scope, SetupOptions, SetupReport};

pub const INFO: AgentInfo = AgentInfo {
    id: "opencode",
    name: "opencode",
    gets: "a plugin: edit and write wait in the desk (exact matches only; apply_patch is refused)",
};

const SOURCE: &str = include_str!("../../plugins/opencode.js");
const FILE: &str = "resolve-desk.js";
const BOM: char = '\u{feff}';

fn str_field<'a>(args: &'a Value, key: &str, tool: &str) -> Result<&'a str, String> {
    args.get(key).and_then(Value::as_str).ok_or_else(|| format!("the {tool} call has no `{key}` string"))
}

fn strip_bom(s: &str) -> (bool, &str) {
    match s.strip_prefix(BOM) {
        Some(rest) => (true, rest),
        None => (false, s),
    }
}

/// What one opencode tool call would leave in its file.
pub fn plan(tool: &str, args: &Value, cwd: &Path) -> Result<Target, String> {
    let path = review::absolute(str_field(args, "filePath", tool)?, cwd);
    let before = review::read_now(&path)?;
    let shown = path.display().to_string();
    match tool {
        "write" => {
            let content = str_field(args, "content", tool)?;
            let had_bom = match &before {
                Some(_) => strip_bom(&review::text_of(&path, &before)?).0,
                None => false,
            };
            let (content_bom, text) = strip_bom(content);
            let after = if had_bom || content_bom { format!("{BOM}{text}") } else { text.to_string() };
            Ok(Target { path, before, after: Some(after) })
        }
        "edit" => {
            let old = str_field(args, "oldString", tool)?;
            let new = str_field(args, "newString", tool)?;
            let all = args.get("replaceAll").and_then(Value::as_bool).unwrap_or(false);
            if old == new {
                return Err("No changes to apply: oldString and newString are identical.".into());
            }
            if before.is_none() {
                if old.is_empty() {
                    return Ok(Target { path, before, after: Some(new.to_string()) });
                }
                return Err(format!("File {shown} not found."));
            }
            if old.is_empty() {
                return Err(format!("oldString cannot be empty when editing an existing file ({shown})."));
            }
            let file = review::text_of(&path, &before)?;
            let (had_bom, text) = strip_bom(&file);
            let crlf = text.contains("\r\n");
            let eol = |s: &str| {
                let lf = s.replace("\r\n", "\n");
                if crlf {
                    lf.replace('\n', "\r\n")
                } else {
                    lf
                }
            };
            let (q, r) = (eol(old), eol(new));
            let count = text.matches(q.as_str()).count();
            if count == 0 {
                return Err(format!(
                    "oldString is not in {shown} exactly as given. Resolve Desk reviews exact replacements only (so \
                     the person sees exactly what is written): read the file and send oldString exactly as it is \
                     there, whitespace and line breaks included."
                ));
            }
            let result = if all {
                if r.contains('$') {
                    return Err(
                        "newString holds `$` and replaceAll is set: opencode would read `$&`-style patterns in it, so \
                         Resolve Desk cannot show the result exactly. Replace each occurrence with its own edit."
                            .into(),
                    );
                }
                text.replace(q.as_str(), &r)
            } else if count > 1 {
                return Err(format!(
                    "Found multiple matches for oldString in {shown}. Provide more surrounding context to make the \
                     match unique, or set replaceAll."
                ));
            } else {
                text.replacen(q.as_str(), &r, 1)
            };
            let (result_bom, result) = strip_bom(&result);
            let after = if had_bom || result_bom { format!("{BOM}{result}") } else { result.to_string() };
            Ok(Target { path, before, after: Some(after) })
        }
        other => Err(format!("{other} is not one of opencode's edit tools")),
    }
}

/// Arguments that make opencode's `tool` write `want` exactly, when there are any (checked by
/// planning them the same way).
fn args_for(tool: &str, args: &Value, before: Option<&str>, want: &str) -> Value {
    let mut out = args.clone();
    match (tool, before) {
        ("write", _) => out["content"] = json!(want),
        (_, None) => {
            out["oldString"] = json!("");
            out["newString"] = json!(want);
        }
        (_, Some(before)) => {
            let lf = |s: &str| strip_bom(s).1.replace("\r\n", "\n");
            let (old, new) = super::claude_code::region_edit(&lf(before), &lf(want));
            out["oldString"] = json!(old);
            out["newString"] = json!(new);
            if let Some(o) = out.as_object_mut() {
                o.remove("replaceAll");
            }
        }
    }
    out
}

/// Answers one call of the plugin.
pub async fn hook(input: &[u8], opts: &HookOptions) -> Value {
    let call: Value = match serde_json::from_slice(input) {
        Ok(v @ Value::Object(_)) => v,
        _ => return plugin::deny(
            "Resolve Desk's hook got input that is not its opencode plugin's, so the edit was not made. Run `rdesk \
                 setup opencode` again (it rewrites the plugin) and retry.",
        ),
    };
    let tool = call.get("tool").and_then(Value::as_str).unwrap_or_default();
    let args = call.get("args").cloned().unwrap_or(Value::Null);
    if !matches!(tool, "edit" | "write") {
        return plugin::deny(&format!(
            "Resolve Desk reviews opencode's edit and write tools; {tool} is not reviewed yet, so it was not run. \
             Make the change with edit or write."
        ));
    }
    let cwd = call.get("cwd").and_then(Value::as_str).map(PathBuf::from);
    let root = match review::root_of(opts, std::slice::from_ref(&cwd)) {
        Ok(r) => r,
        Err(e) => return plugin::deny(&e),
    };
    let cwd = cwd.unwrap_or_else(|| root.clone());
    let Some(named) = args.get("filePath").and_then(Value::as_str).map(|p| review::absolute(p, &cwd)) else {
        return plugin::deny(&format!("The {tool} call names no `filePath`; Resolve Desk did not let it through."));
    };
    if review::inside(&root, &named).is_none() {
        return match opts.outside {
            Outside::Allow => json!({"decision": "allow"}),
            Outside::Deny => plugin::deny(&review::outside(INFO.id, &root, &named)),
        };
    }
    let planned = match plan(tool, &args, &cwd) {
        Ok(p) => p,
        Err(e) => return plugin::deny(&format!("{e} Resolve Desk did not let it through.")),
    };
    let who = Asker { id: INFO.id, name: INFO.name, tool };
    let targets = std::slice::from_ref(&planned);
    match review::review(who, &root, targets, opts).await {
        Reviewed::Pass => json!({"decision": "allow"}),
        Reviewed::Denied(text) => plugin::deny(&text),
        Reviewed::Applied { files, .. } => {
            let Some(chosen) = files.first().filter(|f| f.changed) else { return json!({"decision": "allow"}) };
            let want = chosen.after.clone().unwrap_or_default();
            let before = planned.before.as_deref().map(String::from_utf8_lossy);
            let rewritten = args_for(tool, &args, before.as_deref(), &want);
            if plan(tool, &rewritten, &cwd).is_ok_and(|p| p.after.as_deref() == Some(want.as_str())) {
                return json!({"decision": "allow", "args": rewritten});
            }
            plugin::deny(&review::desk_wrote_it(targets, &files))
        }
    }
}

/// opencode's user folder: `$XDG_CONFIG_HOME/opencode`, else `~/.config/opencode`.
fn config_dir(home: &Path) -> PathBuf {
    match std::env::var_os("XDG_CONFIG_HOME").filter(|d| !d.is_empty()) {
        Some(d) => PathBuf::from(d).join("opencode"),
        None => home.join(".config").join("opencode"),
    }
}

/// `rdesk setup opencode`: the plugin in the project's or the user's plugins folder.
pub fn setup(opts: &SetupOptions) -> Result<SetupReport, String> {
    let dir = match &opts.scope {
        Scope::Workspace(d) => d.join(".opencode").join("plugins"),
        Scope::User => config_dir(&opts.home).join("plugins"),
    };
    let file = dir.join(FILE);
    let mut report = plugin::place(&file, &plugin::render(SOURCE, INFO.id, opts), opts.remove, "opencode plugin")?;
    report.check = if opts.remove {
        vec!["opencode no longer loads Resolve Desk's plugin.".into()]
    } else {
        vec![
            "Start opencode in the project: its edit and write tools wait in the Resolve Desk window until you apply or discard.".into(),
            "Not covered: files written by bash commands, opencode started with --pure, and a configured formatter's changes after the write.".into(),
        ]
    };
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn edit(file: &str, args: Value) -> Result<String, String> {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("f.txt"), file).unwrap();
        let mut args = args;
        args["filePath"] = json!("f.txt");
        plan("edit", &args, dir.path()).map(|t| t.after.unwrap())
    }

    #[test]
    fn edit_as_opencode_writes_it() {
        let e = |f: &str, o: &str, n: &str| edit(f, json!({"oldString": o, "newString": n}));
        assert_eq!(e("a\r\nb\r\nc\r\n", "a\nb", "x\ny").unwrap(), "x\r\ny\r\nc\r\n", "the file's CRLF");
        assert_eq!(e("\u{feff}hello\n", "hello", "bye").unwrap(), "\u{feff}bye\n", "the BOM kept");
        assert!(e("x\nx\n", "x", "y").unwrap_err().contains("multiple matches"));
        assert!(e("    foo()\n", "foo()\nbar()", "z").unwrap_err().contains("exactly as given"), "no loose match");
        let all = edit("x x\n", json!({"oldString": "x", "newString": "y", "replaceAll": true}));
        assert_eq!(all.unwrap(), "y y\n");
        let dollar = edit("x\n", json!({"oldString": "x", "newString": "$&", "replaceAll": true}));
        assert!(dollar.unwrap_err().contains('$'));
        assert_eq!(e("x $ y\n", "x", "$&").unwrap(), "$& $ y\n", "one replacement is literal");
    }

    #[test]
    fn the_plugin_says_its_protocol_and_takes_the_hook_command() {
        assert!(SOURCE.contains(&format!("({} {})", plugin::MARK, plugin::PROTOCOL)));
        assert_eq!(SOURCE.matches("__RDESK_HOOK__").count(), 1);
    }
}
