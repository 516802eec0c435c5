//! Gemini CLI: a `BeforeTool` hook in `settings.json` holds every `replace` and `write_file` in
//! the desk. Hook input and answers as Gemini CLI 0.61 runs them: JSON on stdin (`tool_name`,
//! `tool_input` as the model sent it, `cwd`, `transcript_path`); on stdout
//! `{"decision": "allow"}`, `{"decision": "deny", "reason"}` (the model reads
//! `Tool execution blocked: <reason>`), or an allow with `hookSpecificOutput.tool_input`, which
//! replaces the tool's arguments. The hook fails open in Gemini CLI when it exits 1, is killed or
//! times out, so `rdesk hook gemini` always answers in JSON with exit 0, and `rdesk setup`
//! gives it a time-out above the desk's wait.
//!
//! What the tools write, computed as Gemini's do on their exact path: `replace` turns `\r\n`
//! into `\n` in the file and both strings, replaces every occurrence of `old_string` (more than
//! one only with `allow_multiple`), gives the result the original's trailing newline (or lack of
//! one), and writes `\r\n` everywhere when the file had any; an empty `old_string` creates a
//! file that does not exist. Gemini's looser matches (whitespace-insensitive, token regex,
//! edit distance) are not re-done here: an `old_string` that is not in the file exactly is
//! refused with why, so the model sends the exact text and the person sees exactly what is
//! written. `write_file` writes `content` (with `\r\n` when the file it replaces had them);
//! models other than gemini-2.x, gemini-3.x and non-Gemini ones get escape sequences undone
//! first, so the model is read from the session's transcript when that matters.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use super::hooks;
use super::review::{self, Asker, Reviewed, Target};
use super::{AgentInfo, HookOptions, Outside, Scope, SetupOptions, SetupReport, HOOK_TIMEOUT};

pub const INFO: AgentInfo = AgentInfo {
    id: "gemini",
    name: "Gemini CLI",
    gets: "a BeforeTool hook: replace and write_file wait in the desk (exact matches only)",
};

const AGENT: &str = "Gemini CLI";
const MATCHER: &str = "^(replace|write_file)$";
const MARK: &str = " hook gemini";

fn str_field<'a>(input: &'a Value, key: &str, tool: &str) -> Result<&'a str, String> {
    input.get(key).and_then(Value::as_str).ok_or_else(|| format!("the {tool} call has no `{key}` string"))
}

/// `\r\n` → `\n`.
fn lf(s: &str) -> String {
    s.replace("\r\n", "\n")
}

/// Every `\r?\n` → `\r\n`.
fn crlf(s: &str) -> String {
    s.replace("\r\n", "\n").replace('\n', "\r\n")
}

/// The result given the original's trailing newline, or lack of one (Gemini's
/// `restoreTrailingNewline`).
fn restore_trailing_newline(original: &str, mut result: String) -> String {
    match (original.ends_with('\n'), result.ends_with('\n')) {
        (true, false) => result.push('\n'),
        (false, true) => {
            result.pop();
        }
        _ => {}
    }
    result
}

/// Gemini's `unescapeStringForGeminiBug`: `\n`, `\t`, `\r`, `\'`, `\"`, `` \` ``, `\\` and a
/// backslash before a newline, with any number of backslashes, become the character.
pub fn unescape(s: &str) -> String {
    // The regex `\\+(n|t|r|'|"|`|\\|\n)`: a run of backslashes and the character after it, or,
    // when that character is not one of these, the run's last backslash as the character.
    let chars: Vec<char> = s.chars().collect();
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    while i < chars.len() {
        if chars[i] != '\\' {
            out.push(chars[i]);
            i += 1;
            continue;
        }
        let mut j = i;
        while j < chars.len() && chars[j] == '\\' {
            j += 1;
        }
        match chars.get(j) {
            Some(c @ ('n' | 't' | 'r' | '\'' | '"' | '`' | '\n')) => {
                out.push(match c {
                    'n' => '\n',
                    't' => '\t',
                    'r' => '\r',
                    c => *c,
                });
                i = j + 1;
            }
            // Two or more: the last one is the escaped backslash.
            _ => {
                out.push('\\');
                i = if j - i >= 2 { j } else { i + 1 };
            }
        }
    }
    out
}

/// Whether `write_file` undoes escapes for `model` (Gemini's `aggressiveUnescape`).
fn aggressive_unescape(model: &str) -> bool {
    model.starts_with("gemini-") && !model.starts_with("gemini-2") && !model.starts_with("gemini-3")
}

/// The model of the session, from the last model turn of its transcript (JSON lines).
fn model_of(transcript: &Path) -> Option<String> {
    let text = std::fs::read_to_string(transcript).ok()?;
    let mut model = None;
    let mut seen = |v: &Value| {
        if let Some(m) = v.get("model").and_then(Value::as_str) {
            model = Some(m.to_string());
        }
    };
    if let Ok(v) = serde_json::from_str::<Value>(&text) {
        // A whole JSON document: its messages.
        for m in v.get("messages").and_then(Value::as_array).into_iter().flatten() {
            seen(m);
        }
    } else {
        for line in text.lines() {
            if let Ok(v) = serde_json::from_str::<Value>(line) {
                seen(&v);
            }
        }
    }
    model
}

/// The file a call names, as Gemini resolves it: absolute (links resolved), or against `cwd`.
fn target(input: &Value, tool: &str, cwd: &Path) -> Result<PathBuf, String> {
    let named = str_field(input, "file_path", tool)?;
    let p = review::absolute(named, cwd);
    Ok(std::fs::canonicalize(&p).unwrap_or(p))
}

/// What one Gemini CLI tool call would leave in its file.
pub fn plan(tool: &str, input: &Value, cwd: &Path, transcript: Option<&Path>) -> Result<Target, String> {
    let path = target(input, tool, cwd)?;
    let before = review::read_now(&path)?;
    let shown = path.display().to_string();
    match tool {
        "write_file" => {
            let mut content = str_field(input, "content", tool)?.to_string();
            let json_like = ["json", "ipynb", "jsonc", "json5"]
                .iter()
                .any(|e| path.extension().is_some_and(|x| x.eq_ignore_ascii_case(e)));
            if !json_like && unescape(&content) != content {
                match transcript.and_then(model_of) {
                    Some(m) if aggressive_unescape(&m) => content = unescape(&content),
                    Some(_) => {}
                    None => {
                        return Err(format!(
                            "Resolve Desk cannot tell which model wrote this content (the session's transcript does \
                             not say), and Gemini CLI writes escape sequences differently for some models, so the \
                             write to {shown} was not made. Write the file again with plain text."
                        ))
                    }
                }
            }
            let text = review::text_of(&path, &before)?;
            let after = if before.is_some() && text.contains("\r\n") { crlf(&content) } else { content };
            Ok(Target { path, before, after: Some(after) })
        }
        "replace" => {
            let old = lf(str_field(input, "old_string", tool)?);
            let new = lf(str_field(input, "new_string", tool)?);
            let multiple = input.get("allow_multiple").and_then(Value::as_bool).unwrap_or(false);
            if before.is_none() {
                if old.is_empty() {
                    return Ok(Target { path, before, after: Some(new) });
                }
                return Err(format!("File not found: {shown}; Gemini CLI refuses this edit."));
            }
            let text = review::text_of(&path, &before)?;
            if old.is_empty() {
                return Err(format!("File already exists, cannot create: {shown}; Gemini CLI refuses this edit."));
            }
            let content = lf(&text);
            let count = content.matches(old.as_str()).count();
            if count == 0 {
                return Err(format!(
                    "old_string is not in {shown} exactly as given. Resolve Desk reviews exact replacements only \
                     (so the person sees exactly what is written): read the file and send old_string exactly as it \
                     is there, whitespace and line breaks included."
                ));
            }
            if count > 1 && !multiple {
                return Err(format!(
                    "Expected 1 occurrence but found {count} for old_string in {shown}; Gemini CLI refuses this edit. \
                     Give more context, or set allow_multiple."
                ));
            }
            if old == new {
                return Err(format!("No changes to apply: old_string and new_string are identical in {shown}."));
            }
            let result = restore_trailing_newline(&content, content.replace(old.as_str(), &new));
            let after = if text.contains("\r\n") { crlf(&result) } else { result };
            Ok(Target { path, before, after: Some(after) })
        }
        other => Err(format!("{other} is not one of Gemini CLI's edit tools")),
    }
}

/// Arguments that make Gemini's `tool` write `want` over `before` exactly, when there are any
/// (checked by planning them the same way).
fn input_for(tool: &str, input: &Value, before: Option<&str>, want: &str) -> Option<Value> {
    let mut out = input.clone();
    match (tool, before) {
        ("write_file", _) => out["content"] = json!(want),
        (_, None) => {
            out["old_string"] = json!("");
            out["new_string"] = json!(want);
        }
        (_, Some(before)) => {
            let (old, new) = super::claude_code::region_edit(&lf(before), &lf(want));
            out["old_string"] = json!(old);
            out["new_string"] = json!(new);
            if let Some(o) = out.as_object_mut() {
                o.remove("allow_multiple");
            }
        }
    }
    Some(out)
}

fn allow() -> Value {
    json!({"decision": "allow"})
}

/// A deny whose reason says what to do (used for every failure).
pub fn deny(reason: &str) -> Value {
    json!({"decision": "deny", "reason": reason})
}

/// Answers one hook call (`input`: the JSON Gemini CLI sent). `Value::Null`: say nothing.
pub async fn hook(input: &[u8], opts: &HookOptions) -> Value {
    let call: Value = match serde_json::from_slice(input) {
        Ok(v @ Value::Object(_)) => v,
        _ => return deny(
            "Resolve Desk's hook got input that is not Gemini CLI's hook JSON, so the edit was not made. Run `rdesk \
                 setup gemini` again (it rewrites the hook) and retry.",
        ),
    };
    if call.get("hook_event_name").and_then(Value::as_str).is_some_and(|e| e != "BeforeTool") {
        return Value::Null;
    }
    let tool = call.get("tool_name").and_then(Value::as_str).unwrap_or_default();
    if !matches!(tool, "replace" | "write_file") {
        return Value::Null;
    }
    let input = call.get("tool_input").cloned().unwrap_or(Value::Null);
    let cwd = call.get("cwd").and_then(Value::as_str).map(PathBuf::from);
    let project = std::env::var_os("GEMINI_PROJECT_DIR").filter(|p| !p.is_empty()).map(PathBuf::from);
    let root = match review::root_of(opts, &[project, cwd.clone()]) {
        Ok(r) => r,
        Err(e) => return deny(&e),
    };
    let cwd = cwd.unwrap_or_else(|| root.clone());
    let Some(named) = input.get("file_path").and_then(Value::as_str).map(|p| review::absolute(p, &cwd)) else {
        return deny(&format!("The {tool} call names no `file_path`; Resolve Desk did not let it through."));
    };
    if review::inside(&root, &named).is_none() {
        return match opts.outside {
            Outside::Allow => Value::Null,
            Outside::Deny => deny(&review::outside(INFO.id, &root, &named)),
        };
    }
    let transcript = call.get("transcript_path").and_then(Value::as_str).map(PathBuf::from);
    let planned = match plan(tool, &input, &cwd, transcript.as_deref()) {
        Ok(p) => p,
        Err(e) => return deny(&format!("{e} Resolve Desk did not let it through.")),
    };
    let who = Asker { id: INFO.id, name: AGENT, tool };
    let targets = std::slice::from_ref(&planned);
    match review::review(who, &root, targets, opts).await {
        Reviewed::Pass => Value::Null,
        Reviewed::Denied(text) => deny(&text),
        Reviewed::Applied { files, .. } => {
            let Some(chosen) = files.first().filter(|f| f.changed) else { return allow() };
            let want = chosen.after.clone().unwrap_or_default();
            let before = planned.before.as_deref().map(String::from_utf8_lossy);
            // Gemini writes the person's version itself when arguments that give exactly it exist;
            // else the desk writes it and the model is told so.
            let rewritten = input_for(tool, &input, before.as_deref(), &want).filter(|args| {
                plan(tool, args, &cwd, transcript.as_deref()).is_ok_and(|p| p.after.as_deref() == Some(want.as_str()))
            });
            match rewritten {
                Some(args) => json!({
                    "decision": "allow",
                    "reason": "The person changed the edit in Resolve Desk before applying it; Gemini CLI writes their version.",
                    "hookSpecificOutput": {"hookEventName": "BeforeTool", "tool_input": args},
                }),
                None => deny(&review::desk_wrote_it(targets, &files)),
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// rdesk setup gemini

/// Gemini CLI's user folder: `$GEMINI_CLI_HOME/.gemini`, else `~/.gemini`.
fn gemini_dir(home: &Path) -> PathBuf {
    match std::env::var_os("GEMINI_CLI_HOME").filter(|d| !d.is_empty()) {
        Some(d) => PathBuf::from(d).join(".gemini"),
        None => home.join(".gemini"),
    }
}

/// `rdesk setup gemini`: the `BeforeTool` hook in `.gemini/settings.json` of the project (or
/// the user's).
pub fn setup(opts: &SetupOptions) -> Result<SetupReport, String> {
    let file = match &opts.scope {
        Scope::Workspace(dir) => dir.join(".gemini").join("settings.json"),
        Scope::User => gemini_dir(&opts.home).join("settings.json"),
    };
    let command = hooks::hook_command(opts, MARK);
    let entry = (!opts.remove).then(|| {
        json!({"matcher": MATCHER, "hooks": [{
            "name": "resolve-desk",
            "type": "command",
            "command": command,
            // Milliseconds; above the desk's own wait, so the hook answers before Gemini gives up
            // on it (which would let the edit through).
            "timeout": HOOK_TIMEOUT.as_millis() as u64,
        }]})
    });
    let words = hooks::merge_hooks(&file, &[("BeforeTool", entry)], MARK)?;
    let mut report = SetupReport::default();
    report.add(file, words);
    report.check = if opts.remove {
        vec!["In Gemini CLI, `/hooks` no longer lists Resolve Desk's hook.".into()]
    } else {
        vec![
            "In Gemini CLI, `/hooks` lists the BeforeTool hook on replace and write_file (Gemini asks once to trust a project's hooks).".into(),
            "Ask Gemini for an edit: it waits in the Resolve Desk window until you apply or discard it.".into(),
            "Not covered: files written by shell commands, and folders Gemini CLI does not trust (it runs no hooks there).".into(),
        ]
    };
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan_in(text: &[u8], input: Value) -> Result<String, String> {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("f.txt"), text).unwrap();
        let mut input = input;
        input["file_path"] = json!(dir.path().join("f.txt"));
        plan("replace", &input, dir.path(), None).map(|t| t.after.unwrap())
    }

    #[test]
    fn replace_as_gemini_writes_it() {
        let r = |f: &str, o: &str, n: &str| plan_in(f.as_bytes(), json!({"old_string": o, "new_string": n}));
        assert_eq!(r("a\nhello world\nb\n", "hello world", "hello desk").unwrap(), "a\nhello desk\nb\n");
        assert_eq!(r("a\r\nhello\r\nb", "hello\r\nb", "x\ny").unwrap(), "a\r\nx\r\ny", "CRLF kept, no newline added");
        assert_eq!(r("a\nb\n", "b\n", "c").unwrap(), "a\nc\n", "the trailing newline is restored");
        assert_eq!(r("\u{feff}one $& two\n", "two", "$1").unwrap(), "\u{feff}one $& $1\n", "a BOM and `$` kept");
        assert!(r("x\nx\n", "x", "y").unwrap_err().contains("found 2"), "two matches need allow_multiple");
        let all = plan_in(b"x\nx\n", json!({"old_string": "x", "new_string": "y", "allow_multiple": true}));
        assert_eq!(all.unwrap(), "y\ny\n");
        assert!(r("  a  \n", "a \n", "b").unwrap_err().contains("exactly as given"), "no loose match");
    }

    #[test]
    fn unescaping_follows_gemini() {
        assert_eq!(unescape(r#"x\ny \"q\""#), "x\ny \"q\"");
        assert_eq!(unescape(r"a\\\\nb"), "a\nb", "any number of backslashes");
        assert_eq!(unescape(r"a\qb"), r"a\qb");
        assert!(aggressive_unescape("gemini-1.5-pro") && !aggressive_unescape("gemini-2.5-flash"));
        assert!(!aggressive_unescape("my-model"));
    }
}
