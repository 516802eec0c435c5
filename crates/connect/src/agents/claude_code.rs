//! Claude Code: its `PreToolUse` hook holds every Edit, MultiEdit and Write in the desk until
//! the person decides; its `PostToolUse` hook checks that what Claude wrote is what was
//! approved. Hook input and answers as Claude Code 2.1 documents them (JSON on stdin; a
//! `hookSpecificOutput` with `permissionDecision` on stdout).
//!
//! What Claude's tools write, computed here exactly as they do: Edit replaces `old_string`
//! (once, or everywhere with `replace_all`) in the file's text with its line endings made `\n`,
//! and writes the result back with the file's `\r\n` when it had them; an `old_string` not
//! found as typed is looked up with curly quotes made straight; deleting text that does not end
//! a line also deletes the newline after it; an empty `old_string` creates the file. Write
//! writes `content` as it is. NotebookEdit (a notebook's JSON re-serialised by Claude) is
//! refused with why, so no notebook edit passes unreviewed.
//!
//! The answer: Apply → `allow` (with `updatedInput` when the person changed the edit, or took
//! only some of its hunks, so Claude writes what the person chose); Discard and Request changes
//! → `deny` with the desk's words (the decision, the reason, every line comment); no decision
//! within the wait → `deny` saying so, the action stays pending, and the same edit retried
//! joins it; any failure → `deny` saying what to do.

use std::path::{Path, PathBuf};

use serde_json::{json, Map, Value};

use super::hooks;
use super::review::{self, Asker, Reviewed, Target};
use super::{AgentInfo, HookOptions, Outside, Scope, SetupOptions, SetupReport, HOOK_TIMEOUT};
use crate::gate::Policy;
use crate::settings;

pub const INFO: AgentInfo = AgentInfo {
    id: "claude-code",
    name: "Claude Code",
    gets: "hooks: Edit, MultiEdit and Write wait in the desk (NotebookEdit is refused, with why); the desk's MCP \
           server (resolve, ast_edit, the plain edit previews)",
};

const AGENT: &str = "Claude Code";
/// Claude Code's tools that write files (2.1: Edit, Write, NotebookEdit; MultiEdit in older ones).
const PRE_MATCHER: &str = "Edit|MultiEdit|Write|NotebookEdit";
const POST_MATCHER: &str = "Edit|MultiEdit|Write";
/// How a hook command of ours is recognised in settings (to update or remove it).
const MARK: &str = " hook claude-code";
const MCP_NAME: &str = "resolve-desk";

// ---------------------------------------------------------------------------------------------
// What Claude's tools write

/// Curly quotes made straight, one character for one (so character positions match).
fn straight_quotes(s: &str) -> String {
    s.chars()
        .map(|c| match c {
            '\u{2018}' | '\u{2019}' => '\'',
            '\u{201C}' | '\u{201D}' => '"',
            c => c,
        })
        .collect()
}

/// The text of the file that `old` matches as Claude's Edit finds it: as typed, else with
/// curly quotes made straight on both sides.
fn find_actual<'a>(text: &'a str, old: &str) -> Option<&'a str> {
    if text.contains(old) {
        return text.find(old).map(|at| &text[at..at + old.len()]);
    }
    let (t, o) = (straight_quotes(text), straight_quotes(old));
    let at_chars = t.find(&o).map(|b| t[..b].chars().count())?;
    let len_chars = o.chars().count();
    let start = text.char_indices().nth(at_chars).map(|(i, _)| i)?;
    let end = text.char_indices().nth(at_chars + len_chars).map(|(i, _)| i).unwrap_or(text.len());
    Some(&text[start..end])
}

/// One replacement of Claude's Edit on `text` (line endings `\n`); `Err` as Claude would refuse.
fn replace_once(text: &str, old: &str, new: &str, replace_all: bool, file: &str) -> Result<(String, String), String> {
    if old.is_empty() {
        if text.is_empty() {
            return Ok((new.to_string(), String::new()));
        }
        return Err(format!("{file} already exists and old_string is empty; Claude Code refuses this edit."));
    }
    let Some(actual) = find_actual(text, old) else {
        return Err(format!("old_string was not found in {file}; Claude Code refuses this edit."));
    };
    let actual = actual.to_string();
    let count = text.matches(actual.as_str()).count();
    if count > 1 && !replace_all {
        return Err(format!(
            "old_string is found {count} times in {file} and replace_all is false; Claude Code refuses this edit."
        ));
    }
    let mut pattern = actual.clone();
    if new.is_empty() && !actual.ends_with('\n') && text.contains(&format!("{actual}\n")) {
        pattern.push('\n');
    }
    let out = if replace_all { text.replace(&pattern, new) } else { text.replacen(&pattern, new, 1) };
    Ok((out, actual))
}

/// What one Claude Code tool call would leave in its file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Planned {
    /// The file (absolute, as Claude names it).
    pub path: PathBuf,
    /// Its bytes now (`None`: it does not exist).
    pub before: Option<Vec<u8>>,
    /// What it would hold.
    pub after: String,
    /// The tool's input with every `old_string` as the file holds it (where Claude would have
    /// matched it another way, e.g. curly quotes), when that differs from the input.
    pub exact_input: Option<Value>,
}

fn str_field<'a>(input: &'a Value, key: &str, tool: &str) -> Result<&'a str, String> {
    input.get(key).and_then(Value::as_str).ok_or_else(|| format!("the {tool} call has no `{key}` string"))
}

/// The file a tool call names, made absolute against `cwd`.
fn target(input: &Value, tool: &str, cwd: &Path) -> Result<PathBuf, String> {
    let p = Path::new(str_field(input, "file_path", tool)?);
    Ok(if p.is_absolute() { p.to_path_buf() } else { cwd.join(p) })
}

/// Computes what `tool` with `input` writes (see the module's doc for the rules).
pub fn plan(tool: &str, input: &Value, cwd: &Path) -> Result<Planned, String> {
    let path = target(input, tool, cwd)?;
    let before = review::read_now(&path)?;
    let shown = path.display().to_string();
    match tool {
        "Write" => {
            let content = str_field(input, "content", tool)?;
            Ok(Planned { path, before, after: content.to_string(), exact_input: None })
        }
        "Edit" | "MultiEdit" => {
            let text = review::text_of(&path, &before)?;
            let crlf = text.contains("\r\n");
            let mut lf = text.replace("\r\n", "\n");
            let mut exact = input.clone();
            let mut changed_input = false;
            let edits: Vec<(usize, &Value)> = if tool == "Edit" {
                vec![(0, input)]
            } else {
                input
                    .get("edits")
                    .and_then(Value::as_array)
                    .ok_or("the MultiEdit call has no `edits` list")?
                    .iter()
                    .enumerate()
                    .collect()
            };
            if before.is_none()
                && edits.first().is_none_or(|(_, e)| e.get("old_string").and_then(Value::as_str) != Some(""))
            {
                return Err(format!("{shown} does not exist; Claude Code refuses this edit."));
            }
            for (i, e) in edits {
                let old = str_field(e, "old_string", tool)?;
                let new = str_field(e, "new_string", tool)?;
                let all = e.get("replace_all").and_then(Value::as_bool).unwrap_or(false);
                let (next, actual) = replace_once(&lf, old, new, all, &shown)?;
                if actual != old && !old.is_empty() {
                    changed_input = true;
                    let slot = if tool == "Edit" { &mut exact } else { &mut exact["edits"][i] };
                    slot["old_string"] = json!(actual);
                }
                lf = next;
            }
            let after = if crlf { lf.replace("\r\n", "\n").replace('\n', "\r\n") } else { lf };
            Ok(Planned { path, before, after, exact_input: changed_input.then_some(exact) })
        }
        other => Err(format!("{other} is not one of Claude Code's edit tools")),
    }
}

/// An Edit that turns `orig` into `want` (both as Claude sees them: `\n` line endings): the
/// smallest run of whole lines that differs, widened until it occurs once in `orig`.
pub fn region_edit(orig: &str, want: &str) -> (String, String) {
    let mut prefix = orig.bytes().zip(want.bytes()).take_while(|(a, b)| a == b).count();
    while !orig.is_char_boundary(prefix) {
        prefix -= 1;
    }
    let max_suffix = orig.len().min(want.len()) - prefix;
    let mut suffix = orig.bytes().rev().zip(want.bytes().rev()).take(max_suffix).take_while(|(a, b)| a == b).count();
    // Whole lines: back to the start of the first changed line, on past the end of the last.
    let mut start = orig[..prefix].rfind('\n').map(|i| i + 1).unwrap_or(0);
    let mut end = orig.len() - suffix;
    while !orig.is_char_boundary(end) {
        end += 1;
        suffix -= 1;
    }
    let ext = orig[end..].find('\n').map(|i| i + 1).unwrap_or(orig.len() - end);
    end += ext;
    suffix -= ext;
    loop {
        let old = &orig[start..end];
        if (!old.is_empty() && orig.matches(old).count() == 1) || (start == 0 && end == orig.len()) {
            let new = &want[start..want.len() - suffix];
            return (old.to_string(), new.to_string());
        }
        // One more line on each side.
        if start > 0 {
            start = orig[..start - 1].rfind('\n').map(|i| i + 1).unwrap_or(0);
        }
        if end < orig.len() {
            let ext = orig[end..].find('\n').map(|i| i + 1).unwrap_or(orig.len() - end);
            end += ext;
            suffix -= ext;
        }
    }
}

/// The `updatedInput` that makes Claude's `tool` write `want` over the file's `before` text.
fn input_for(tool: &str, input: &Value, before: &str, want: &str) -> Value {
    let mut out = input.clone();
    match tool {
        "Write" => out["content"] = json!(want),
        _ => {
            let (old, new) = region_edit(&before.replace("\r\n", "\n"), &want.replace("\r\n", "\n"));
            let edit = json!({"old_string": old, "new_string": new, "replace_all": false});
            if tool == "MultiEdit" {
                out["edits"] = json!([edit]);
            } else {
                for (k, v) in edit.as_object().into_iter().flatten() {
                    out[k] = v.clone();
                }
            }
        }
    }
    out
}

// ---------------------------------------------------------------------------------------------
// The hook

/// Claude Code's answer to a `PreToolUse` call.
fn decision(kind: &str, reason: &str, updated: Option<Value>) -> Value {
    let mut out =
        json!({"hookEventName": "PreToolUse", "permissionDecision": kind, "permissionDecisionReason": reason});
    if let Some(u) = updated {
        out["updatedInput"] = u;
    }
    json!({"hookSpecificOutput": out})
}

/// A deny whose reason says what to do (used for every failure).
pub fn deny(reason: &str) -> Value {
    decision("deny", reason, None)
}

/// Where an approved edit is noted for the `PostToolUse` check.
fn note_path(tool_use_id: &str) -> PathBuf {
    let safe: String = tool_use_id.chars().filter(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '-').collect();
    resolve_desk_core::journal::default_data_dir().join("hooks").join("claude-code").join(format!("{safe}.json"))
}

/// Answers one hook call (`input`: the JSON Claude Code sent). `Value::Null`: say nothing
/// (Claude's own permission rules decide).
pub async fn hook(input: &[u8], opts: &HookOptions) -> Value {
    let call: Value =
        match serde_json::from_slice(input) {
            Ok(v @ Value::Object(_)) => v,
            _ => return deny(
                "Resolve Desk's hook got input that is not Claude Code's hook JSON, so the edit was not made. Check \
                 the hook with `rdesk setup claude-code` (it rewrites the hook) and try again.",
            ),
        };
    let event = call.get("hook_event_name").and_then(Value::as_str).unwrap_or("PreToolUse");
    match event {
        "PostToolUse" => post_tool_use(&call),
        _ => pre_tool_use(&call, opts).await,
    }
}

async fn pre_tool_use(call: &Value, opts: &HookOptions) -> Value {
    let tool = call.get("tool_name").and_then(Value::as_str).unwrap_or_default();
    let input = call.get("tool_input").cloned().unwrap_or(Value::Null);
    if !matches!(tool, "Edit" | "MultiEdit" | "Write" | "NotebookEdit") {
        return Value::Null;
    }
    let cwd = call.get("cwd").and_then(Value::as_str).map(PathBuf::from);
    let project = std::env::var_os("CLAUDE_PROJECT_DIR").filter(|p| !p.is_empty()).map(PathBuf::from);
    let root = match review::root_of(opts, &[project, cwd.clone()]) {
        Ok(r) => r,
        Err(e) => return deny(&e),
    };
    let cwd = cwd.unwrap_or_else(|| root.clone());
    let file_key = if tool == "NotebookEdit" { "notebook_path" } else { "file_path" };
    let Some(named) = input.get(file_key).and_then(Value::as_str).map(|p| review::absolute(p, &cwd)) else {
        return deny(&format!("The {tool} call names no `{file_key}`; Resolve Desk did not let it through."));
    };
    let Some(rel) = review::inside(&root, &named) else {
        return match opts.outside {
            Outside::Allow => Value::Null,
            Outside::Deny => deny(&review::outside(INFO.id, &root, &named)),
        };
    };
    if tool == "NotebookEdit" {
        return deny(&format!(
            "Resolve Desk cannot show a NotebookEdit exactly as it would be written, so it did not let it through \
             unreviewed. To change {rel}, use Write with the notebook's whole JSON (the person reviews that in Resolve Desk)."
        ));
    }
    let planned = match plan(tool, &input, &cwd) {
        Ok(p) => p,
        Err(e) => return deny(&format!("{e} Resolve Desk did not let it through.")),
    };
    let target =
        Target { path: planned.path.clone(), before: planned.before.clone(), after: Some(planned.after.clone()) };
    let who = Asker { id: INFO.id, name: AGENT, tool };
    match review::review(who, &root, std::slice::from_ref(&target), opts).await {
        Reviewed::Pass => Value::Null,
        Reviewed::Denied(text) => deny(&text),
        Reviewed::Applied { text, files } => {
            let chosen = files.first().filter(|f| f.changed).and_then(|f| f.after.clone());
            let before_text = String::from_utf8_lossy(planned.before.as_deref().unwrap_or_default()).into_owned();
            let (updated, written, reason) = match &chosen {
                Some(want) => (
                    Some(input_for(tool, &input, &before_text, want)),
                    want.clone(),
                    format!("{text} The person changed the edit before applying it; Claude Code writes their version."),
                ),
                None => (planned.exact_input.clone(), planned.after.clone(), text),
            };
            if let Some(id) = call.get("tool_use_id").and_then(Value::as_str) {
                let note = json!({
                    "path": planned.path,
                    "blake3": blake3::hash(written.as_bytes()).to_hex().to_string(),
                    "changed": chosen.is_some(),
                });
                let _ = resolve_userfile::write_atomic(&note_path(id), note.to_string().as_bytes(), 0o600);
            }
            decision("allow", &reason, updated)
        }
    }
}

/// After Claude wrote an approved edit: the file must hold exactly the approved bytes; the
/// model is told when the person changed its edit, and warned when the file differs.
fn post_tool_use(call: &Value) -> Value {
    let Some(id) = call.get("tool_use_id").and_then(Value::as_str) else { return Value::Null };
    let note_file = note_path(id);
    let Ok(Some(note)) = resolve_userfile::read(&note_file) else { return Value::Null };
    let _ = std::fs::remove_file(&note_file);
    let path = PathBuf::from(note.get("path").and_then(Value::as_str).unwrap_or_default());
    let want = note.get("blake3").and_then(Value::as_str).unwrap_or_default();
    let now = std::fs::read(&path).map(|b| blake3::hash(&b).to_hex().to_string()).unwrap_or_default();
    let context = if now != want {
        eprintln!("rdesk hook: {} does not hold what the person approved in Resolve Desk", path.display());
        format!(
            "Warning from Resolve Desk: {} does not hold exactly what the person approved. Read it again and tell the person.",
            path.display()
        )
    } else if note.get("changed").and_then(Value::as_bool) == Some(true) {
        format!(
            "The person changed your edit in Resolve Desk before applying it: {} now holds their version. Read it before you edit it again.",
            path.display()
        )
    } else {
        return Value::Null;
    };
    json!({"hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": context}})
}

// ---------------------------------------------------------------------------------------------
// rdesk setup claude-code

fn set_mcp(object: &mut Map<String, Value>, server: Option<Value>, file: &Path) -> Result<Vec<String>, String> {
    let servers = settings::object_at(object, "mcpServers", file)?;
    let before = servers.get(MCP_NAME).cloned();
    match &server {
        Some(s) => {
            servers.insert(MCP_NAME.into(), s.clone());
        }
        None => {
            servers.remove(MCP_NAME);
        }
    }
    let after = servers.get(MCP_NAME).cloned();
    settings::drop_if_empty(object, "mcpServers");
    Ok(match (before, after) {
        (b, a) if b == a => Vec::new(),
        (None, Some(_)) => vec![format!("added the MCP server `{MCP_NAME}`")],
        (Some(_), Some(_)) => vec![format!("updated the MCP server `{MCP_NAME}`")],
        _ => vec![format!("removed the MCP server `{MCP_NAME}`")],
    })
}

/// The user's Claude Code folder: `CLAUDE_CONFIG_DIR`, else `~/.claude`.
fn claude_dir(home: &Path) -> PathBuf {
    std::env::var_os("CLAUDE_CONFIG_DIR")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| home.join(".claude"))
}

/// `rdesk setup claude-code`: see [`INFO`].
pub fn setup(opts: &SetupOptions) -> Result<SetupReport, String> {
    let (settings_file, mcp_file, mcp_args) = match &opts.scope {
        Scope::Workspace(dir) => (
            dir.join(".claude").join("settings.json"),
            dir.join(".mcp.json"),
            vec!["mcp".to_string(), "--workspace".into(), dir.to_string_lossy().into_owned()],
        ),
        Scope::User => {
            let dir = claude_dir(&opts.home);
            // Claude Code keeps user-scope MCP servers in ~/.claude.json (beside its folder when
            // CLAUDE_CONFIG_DIR moves it).
            let json = if std::env::var_os("CLAUDE_CONFIG_DIR").is_some_and(|d| !d.is_empty()) {
                dir.join(".claude.json")
            } else {
                opts.home.join(".claude.json")
            };
            (dir.join("settings.json"), json, vec!["mcp".to_string(), "--workspace".into(), ".".into()])
        }
    };
    let command = hooks::hook_command(opts, MARK);
    let pre = (!opts.remove).then(|| {
        json!({"matcher": PRE_MATCHER, "hooks": [{"type": "command", "command": command, "timeout": HOOK_TIMEOUT.as_secs()}]})
    });
    let post = (!opts.remove)
        .then(|| json!({"matcher": POST_MATCHER, "hooks": [{"type": "command", "command": command, "timeout": 30}]}));
    let mut mcp_args = mcp_args;
    if opts.policy == Policy::Agent {
        mcp_args.extend(["--headless".to_string(), "--policy".into(), "agent".into()]);
    }
    let server = (!opts.remove).then(|| json!({"type": "stdio", "command": opts.rdesk, "args": mcp_args}));
    let words = hooks::merge_hooks(&settings_file, &[("PreToolUse", pre), ("PostToolUse", post)], MARK)?;
    let mut report = SetupReport::default();
    report.add(settings_file, words);
    let words = settings::try_merge(&mcp_file, |o| set_mcp(o, server.clone(), &mcp_file))?;
    report.add(mcp_file, words);
    report.check = if opts.remove {
        vec!["In Claude Code, `/hooks` no longer lists Resolve Desk's hook; `claude mcp list` no longer lists resolve-desk.".into()]
    } else {
        vec![
            "In Claude Code, `/hooks` lists the PreToolUse hook on Edit|MultiEdit|Write|NotebookEdit; `claude mcp list` lists resolve-desk.".into(),
            "Ask Claude for an edit: it waits in the Resolve Desk window until you apply or discard it.".into(),
            "Not covered: files written by Bash commands (Claude's own permission prompts decide those).".into(),
        ]
    };
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        p
    }

    #[test]
    fn edit_keeps_crlf_and_matches_curly_quotes() {
        let dir = tempfile::tempdir().unwrap();
        let p = write(dir.path(), "a.txt", "one\r\nsay \u{201C}hi\u{201D}\r\nthree\r\n");
        let input =
            json!({"file_path": p, "old_string": "say \"hi\"", "new_string": "say \"bye\"", "replace_all": false});
        let planned = plan("Edit", &input, dir.path()).unwrap();
        assert_eq!(planned.after, "one\r\nsay \"bye\"\r\nthree\r\n");
        // Claude is handed the text as the file holds it, so it matches exactly.
        assert_eq!(planned.exact_input.unwrap()["old_string"], "say \u{201C}hi\u{201D}");
    }

    #[test]
    fn deleting_text_that_does_not_end_a_line_deletes_its_newline() {
        let dir = tempfile::tempdir().unwrap();
        let p = write(dir.path(), "a.txt", "keep\ndrop me\nkeep too\n");
        let input = json!({"file_path": p, "old_string": "drop me", "new_string": ""});
        assert_eq!(plan("Edit", &input, dir.path()).unwrap().after, "keep\nkeep too\n");
    }

    #[test]
    fn edit_refuses_what_claude_refuses() {
        let dir = tempfile::tempdir().unwrap();
        let p = write(dir.path(), "a.txt", "x\nx\n");
        let twice = json!({"file_path": p, "old_string": "x", "new_string": "y"});
        assert!(plan("Edit", &twice, dir.path()).unwrap_err().contains("found 2 times"));
        let all = json!({"file_path": p, "old_string": "x", "new_string": "y", "replace_all": true});
        assert_eq!(plan("Edit", &all, dir.path()).unwrap().after, "y\ny\n");
        let missing = json!({"file_path": dir.path().join("none.txt"), "old_string": "", "new_string": "new\n"});
        let created = plan("Edit", &missing, dir.path()).unwrap();
        assert_eq!((created.before, created.after.as_str()), (None, "new\n"));
    }

    #[test]
    fn multi_edit_applies_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let p = write(dir.path(), "a.txt", "a b c\n");
        let input = json!({"file_path": p, "edits": [{"old_string": "a", "new_string": "b b"}, {"old_string": "b b b", "new_string": "z"}]});
        assert_eq!(plan("MultiEdit", &input, dir.path()).unwrap().after, "z c\n");
    }

    #[test]
    fn region_edit_turns_the_original_into_the_wanted_text_with_a_unique_old_string() {
        let cases = [
            ("a\nb\nc\n", "a\nB\nc\n"),
            ("x\ny\nx\ny\n", "x\ny\nx\nY\n"),
            ("same\nsame\nsame\n", "same\nsame\n"),
            ("one\n", "one\ntwo\n"),
            ("", "new\n"),
            ("α\nβ\n", "α\nγ\n"),
            ("no newline", "no newline at all"),
        ];
        for (orig, want) in cases {
            let (old, new) = region_edit(orig, want);
            assert!(orig.is_empty() || orig.matches(&old).count() == 1, "{orig:?} → {old:?}");
            let (out, _) = replace_once(orig, &old, &new, false, "f").unwrap();
            assert_eq!(out, want, "{orig:?} → {want:?} via {old:?} → {new:?}");
        }
    }

    #[test]
    fn setup_merges_is_idempotent_and_removes_only_its_own() {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().join("proj");
        std::fs::create_dir_all(ws.join(".claude")).unwrap();
        let mine = json!({"permissions": {"allow": ["Read"]}, "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "echo mine"}]}]}});
        std::fs::write(ws.join(".claude/settings.json"), serde_json::to_string_pretty(&mine).unwrap()).unwrap();
        let opts = SetupOptions {
            scope: Scope::Workspace(ws.clone()),
            remove: false,
            policy: Policy::Human,
            outside: Outside::Deny,
            rdesk: PathBuf::from("/opt/rdesk/bin/rdesk"),
            home: dir.path().to_path_buf(),
        };
        let first = setup(&opts).unwrap();
        assert_eq!(first.changes.len(), 2, "{:?}", first.changes);
        let s: Value = serde_json::from_slice(&std::fs::read(ws.join(".claude/settings.json")).unwrap()).unwrap();
        assert_eq!(s["permissions"], mine["permissions"]);
        let pre = s["hooks"]["PreToolUse"].as_array().unwrap();
        assert_eq!(pre.len(), 2);
        assert_eq!(pre[1]["hooks"][0]["command"], "/opt/rdesk/bin/rdesk hook claude-code");
        assert_eq!(pre[1]["hooks"][0]["timeout"], 1800);
        let m: Value = serde_json::from_slice(&std::fs::read(ws.join(".mcp.json")).unwrap()).unwrap();
        assert_eq!(m["mcpServers"]["resolve-desk"]["command"], "/opt/rdesk/bin/rdesk");
        assert!(setup(&opts).unwrap().changes.is_empty(), "a second run changes nothing");
        let removed = setup(&SetupOptions { remove: true, ..opts }).unwrap();
        assert_eq!(removed.changes.len(), 2);
        let s: Value = serde_json::from_slice(&std::fs::read(ws.join(".claude/settings.json")).unwrap()).unwrap();
        assert_eq!(s, mine, "only its own entries are removed");
        assert!(!ws.join(".mcp.json").exists(), "a file that held only the desk's server is removed");
    }
}
