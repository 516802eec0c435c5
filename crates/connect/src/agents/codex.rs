//! Codex CLI: a `PreToolUse` hook holds every `apply_patch` in the desk (and an `apply_patch`
//! heredoc run through the shell, which Codex hooks as `Bash`). Hook input and answers as Codex
//! 0.169 runs them: JSON on stdin (`tool_name`, `tool_input.command` = the patch, `cwd`); allow
//! is silence (exit 0, nothing on stdout: an explicit `allow` counts as a failed hook there);
//! deny is `hookSpecificOutput.permissionDecision: "deny"` with a reason, which the model reads as
//! `Command blocked by PreToolUse hook: <reason>`. Codex lets a patch through when its hook fails,
//! times out or is not trusted, so `rdesk hook codex` always answers, `rdesk setup codex` gives it
//! a long time-out and records Codex's trust of exactly that hook.
//!
//! What the patch writes is computed by Codex's own `apply_patch` (the binary that runs the hook,
//! started under that name, as Codex itself does) on a private copy of the files it touches, so
//! its fuzzy context matching and line-ending rules are Codex's by construction.
//!
//! When the person changed the edit before applying it, the desk writes their version and the
//! patch is blocked with a reason saying exactly that (Codex would not tell the model that it
//! wrote other arguments).

use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};

use serde_json::{json, Value};

use super::hooks;
use super::review::{self, Asker, Reviewed, Target};
use super::{AgentInfo, HookOptions, Outside, Scope, SetupOptions, SetupReport, HOOK_TIMEOUT};
use crate::settings;

pub const INFO: AgentInfo = AgentInfo {
    id: "codex",
    name: "Codex CLI",
    gets:
        "a PreToolUse hook (trusted in config.toml): apply_patch waits in the desk, computed by Codex's own apply_patch",
};

const AGENT: &str = "Codex CLI";
const MATCHER: &str = "^(apply_patch|Bash)$";
const MARK: &str = " hook codex";
/// The hook's time-out in seconds in `hooks.json`.
fn timeout_secs() -> u64 {
    HOOK_TIMEOUT.as_secs()
}

/// The patch in an `apply_patch <<'EOF' … EOF` shell command, when it is one.
pub fn heredoc_patch(command: &str) -> Option<String> {
    let command = command.trim_start();
    let rest = command.strip_prefix("apply_patch").or_else(|| command.strip_prefix("applypatch"))?;
    let (first, body) = rest.split_once('\n')?;
    let tag = first.trim().strip_prefix("<<")?.trim().trim_matches(|c| c == '\'' || c == '"');
    if tag.is_empty() || tag.contains(char::is_whitespace) {
        return None;
    }
    let mut lines = Vec::new();
    for line in body.lines() {
        if line.trim_end() == tag {
            return Some(lines.join("\n") + "\n");
        }
        lines.push(line);
    }
    None
}

/// One file a patch names: its path as written, and its role.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Named {
    written: String,
    path: PathBuf,
}

/// The files a `*** Begin Patch` patch names (Add, Update, Delete, Move to).
fn named_files(patch: &str, cwd: &Path) -> Vec<Named> {
    let mut out: Vec<Named> = Vec::new();
    for line in patch.lines() {
        let line = line.trim();
        let p = ["*** Add File:", "*** Update File:", "*** Delete File:", "*** Move to:"]
            .iter()
            .find_map(|h| line.strip_prefix(h))
            .map(str::trim);
        if let Some(p) = p.filter(|p| !p.is_empty()) {
            let path = normalize(&review::absolute(p, cwd));
            if !out.iter().any(|n| n.path == path) {
                out.push(Named { written: p.to_string(), path });
            }
        }
    }
    out
}

/// `..` and `.` taken out of an absolute path, without touching the disk.
fn normalize(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            c => out.push(c),
        }
    }
    out
}

/// The Codex binary that started this hook: the nearest ancestor process whose executable is
/// named `codex`.
fn codex_binary() -> Option<PathBuf> {
    let mut pid = std::os::unix::process::parent_id();
    for _ in 0..8 {
        if pid <= 1 {
            return None;
        }
        if let Ok(exe) = std::fs::read_link(format!("/proc/{pid}/exe")) {
            if exe.file_name().is_some_and(|n| n == "codex") {
                return Some(exe);
            }
        }
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        // `pid (comm) state ppid …`; comm may hold spaces and parentheses.
        let after = &stat[stat.rfind(')')? + 1..];
        pid = after.split_whitespace().nth(1)?.parse().ok()?;
    }
    None
}

/// What the patch would leave in each file it names, computed by Codex's `apply_patch` on a
/// private copy of those files under `root`.
pub fn plan(patch: &str, cwd: &Path, root: &Path, codex: &Path) -> Result<Vec<Target>, String> {
    let named = named_files(patch, cwd);
    if named.is_empty() {
        return Err(
            "the patch names no file (no `*** Add File:`, `*** Update File:` or `*** Delete File:` line)".into()
        );
    }
    let scratch = tempfile::tempdir().map_err(|e| format!("no private temporary folder: {e}"))?;
    let copy = scratch.path().join("root");
    let map = |p: &Path| -> Result<PathBuf, String> {
        let rel = p.strip_prefix(root).map_err(|_| format!("{} is outside {}", p.display(), root.display()))?;
        Ok(copy.join(rel))
    };
    let mut before = BTreeMap::new();
    let mut text = patch.to_string();
    for n in &named {
        let bytes = review::read_now(&n.path)?;
        review::text_of(&n.path, &bytes)?;
        let there = map(&n.path)?;
        if let Some(b) = &bytes {
            std::fs::create_dir_all(there.parent().unwrap_or(&copy)).map_err(|e| e.to_string())?;
            std::fs::write(&there, b).map_err(|e| e.to_string())?;
        }
        before.insert(n.path.clone(), bytes);
        if Path::new(&n.written).is_absolute() {
            text = text.replace(&n.written, &there.to_string_lossy());
        }
    }
    let run_in = map(&normalize(cwd)).unwrap_or_else(|_| copy.clone());
    std::fs::create_dir_all(&run_in).map_err(|e| e.to_string())?;
    let link = scratch.path().join("apply_patch");
    std::os::unix::fs::symlink(codex, &link).map_err(|e| e.to_string())?;
    let out = std::process::Command::new(&link)
        .arg(&text)
        .current_dir(&run_in)
        .env("CODEX_HOME", scratch.path().join("home"))
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|e| format!("cannot run Codex's apply_patch ({}): {e}", codex.display()))?;
    if !out.status.success() {
        let said =
            String::from_utf8_lossy(&out.stderr).replace(&copy.to_string_lossy().into_owned(), &root.to_string_lossy());
        return Err(format!("Codex's apply_patch refuses this patch: {}", said.trim()));
    }
    let mut targets = Vec::new();
    for n in &named {
        let after = review::read_now(&map(&n.path)?)?;
        let after = match after {
            Some(b) => Some(String::from_utf8(b).map_err(|_| format!("{} would not be UTF-8 text", n.path.display()))?),
            None => None,
        };
        let before = before.remove(&n.path).flatten();
        if before.is_none() && after.is_none() {
            continue;
        }
        if before.as_deref() == after.as_ref().map(|s| s.as_bytes()) {
            continue;
        }
        targets.push(Target { path: n.path.clone(), before, after });
    }
    if targets.is_empty() {
        return Err("the patch changes nothing".into());
    }
    Ok(targets)
}

/// Codex's deny.
pub fn deny(reason: &str) -> Value {
    json!({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": reason}})
}

/// Answers one hook call. `Value::Null` (nothing on stdout): the patch goes ahead.
pub async fn hook(input: &[u8], opts: &HookOptions) -> Value {
    let call: Value = match serde_json::from_slice(input) {
        Ok(v @ Value::Object(_)) => v,
        _ => return deny(
            "Resolve Desk's hook got input that is not Codex's hook JSON, so the edit was not made. Run `rdesk setup \
                 codex` again (it rewrites the hook) and retry.",
        ),
    };
    if call.get("hook_event_name").and_then(Value::as_str).is_some_and(|e| e != "PreToolUse") {
        return Value::Null;
    }
    let tool = call.get("tool_name").and_then(Value::as_str).unwrap_or_default();
    let command = call.pointer("/tool_input/command").and_then(Value::as_str).unwrap_or_default();
    let patch = match tool {
        "apply_patch" | "Edit" | "Write" => command.to_string(),
        "Bash" => match heredoc_patch(command) {
            Some(p) => p,
            None => return Value::Null,
        },
        _ => return Value::Null,
    };
    let cwd = call.get("cwd").and_then(Value::as_str).map(PathBuf::from);
    let root = match review::root_of(opts, std::slice::from_ref(&cwd)) {
        Ok(r) => r,
        Err(e) => return deny(&e),
    };
    let cwd = cwd.and_then(|c| std::fs::canonicalize(c).ok()).unwrap_or_else(|| root.clone());
    let named = named_files(&patch, &cwd);
    if let Some(out) = named.iter().find(|n| review::inside(&root, &n.path).is_none()) {
        if opts.outside == Outside::Allow && named.iter().all(|n| review::inside(&root, &n.path).is_none()) {
            return Value::Null;
        }
        return deny(&review::outside(INFO.id, &root, &out.path));
    }
    let Some(codex) = codex_binary() else {
        return deny(
            "Resolve Desk could not find the Codex binary that runs this hook, so it cannot show the patch exactly as \
             Codex writes it; the patch was not applied. Run the hook from Codex (`rdesk setup codex`).",
        );
    };
    let targets = match plan(&patch, &cwd, &root, &codex) {
        Ok(t) => t,
        Err(e) => return deny(&format!("{e}. Resolve Desk did not let it through.")),
    };
    let who = Asker { id: INFO.id, name: AGENT, tool: "apply_patch" };
    match review::review(who, &root, &targets, opts).await {
        Reviewed::Pass => Value::Null,
        Reviewed::Denied(text) => deny(&text),
        Reviewed::Applied { files, text } => {
            if !files.iter().any(|f| f.changed) {
                return Value::Null;
            }
            match review::write_chosen(&targets, &files) {
                Ok(written) => deny(&format!(
                    "{text} The person changed your patch in Resolve Desk and applied their version: Resolve Desk \
                     wrote {} (your patch itself was not run, so this is not a failure). Read the files before you \
                     edit them again.",
                    written.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", ")
                )),
                Err(e) => deny(&format!("The person applied this edit in Resolve Desk, but {e}")),
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// rdesk setup codex

/// Codex's folder: `$CODEX_HOME`, else `~/.codex`.
fn codex_home(home: &Path) -> PathBuf {
    match std::env::var_os("CODEX_HOME").filter(|d| !d.is_empty()) {
        Some(d) => PathBuf::from(d),
        None => home.join(".codex"),
    }
}

/// Codex's hash of one command hook (`codex-rs/hooks` discovery): SHA-256 of the hook's
/// identity as canonical JSON (keys sorted, no spaces).
pub fn trust_hash(matcher: &str, command: &str, timeout: u64) -> String {
    use sha2::Digest;
    let handler = json!({"async": false, "command": command, "timeout": timeout.max(1), "type": "command"});
    let ident = json!({"event_name": "pre_tool_use", "hooks": [handler], "matcher": matcher});
    let canon = canonical(&ident);
    format!("sha256:{:x}", sha2::Sha256::digest(canon.as_bytes()))
}

fn canonical(v: &Value) -> String {
    match v {
        Value::Object(o) => {
            let mut keys: Vec<&String> = o.keys().collect();
            keys.sort();
            let parts: Vec<String> =
                keys.iter().map(|k| format!("{}:{}", Value::String((*k).clone()), canonical(&o[k.as_str()]))).collect();
            format!("{{{}}}", parts.join(","))
        }
        Value::Array(a) => format!("[{}]", a.iter().map(canonical).collect::<Vec<_>>().join(",")),
        other => other.to_string(),
    }
}

/// Sets (or removes) Codex's trust entries in its `config.toml`: the hook's hash under
/// `[hooks.state."<key>"]` and, for a project, `[projects."<dir>"] trust_level = "trusted"`
/// (Codex runs a project's hooks only in a trusted project). Returns the words.
fn set_trust(
    config: &Path,
    key: &str,
    hash: Option<&str>,
    project: Option<&Path>,
    ours_prefix: &str,
) -> Result<Vec<String>, String> {
    let mode = 0o600;
    resolve_userfile::update::<_, resolve_userfile::UserFileError>(config, mode, |bytes| {
        let text = match bytes {
            Some(b) => String::from_utf8(b.to_vec()).map_err(|_| {
                resolve_userfile::UserFileError::Refused(format!(
                    "{} is not UTF-8 text; nothing was changed",
                    config.display()
                ))
            })?,
            None => String::new(),
        };
        let mut doc: toml_edit::DocumentMut = text.parse().map_err(|e: toml_edit::TomlError| {
            resolve_userfile::UserFileError::Refused(format!(
                "{} is not valid TOML ({e}); fix it by hand, nothing was changed",
                config.display()
            ))
        })?;
        let mut words = Vec::new();
        let hooks = doc.entry("hooks").or_insert(toml_edit::table());
        let Some(hooks) = hooks.as_table_mut() else {
            return Err(resolve_userfile::UserFileError::Refused(format!(
                "{}: `hooks` is not a table",
                config.display()
            )));
        };
        hooks.set_implicit(true);
        let state = hooks.entry("state").or_insert(toml_edit::table());
        let Some(state) = state.as_table_mut() else {
            return Err(resolve_userfile::UserFileError::Refused(format!(
                "{}: `hooks.state` is not a table",
                config.display()
            )));
        };
        state.set_implicit(true);
        // Older entries of ours (another group index) go.
        let stale: Vec<String> =
            state.iter().map(|(k, _)| k.to_string()).filter(|k| k.starts_with(ours_prefix) && k != key).collect();
        for k in stale {
            state.remove(&k);
            words.push(format!("removed the stale trust entry {k}"));
        }
        match hash {
            Some(h) => {
                let now =
                    state.get(key).and_then(|t| t.get("trusted_hash")).and_then(|v| v.as_str()).map(str::to_string);
                if now.as_deref() != Some(h) {
                    let mut t = toml_edit::Table::new();
                    t.insert("trusted_hash", toml_edit::value(h));
                    state.insert(key, toml_edit::Item::Table(t));
                    words.push(format!("trusted Resolve Desk's hook ({key})"));
                }
            }
            None => {
                if state.remove(key).is_some() {
                    words.push(format!("removed the trust of Resolve Desk's hook ({key})"));
                }
            }
        }
        if state.is_empty() {
            hooks.remove("state");
        }
        if hooks.is_empty() {
            doc.remove("hooks");
        }
        if let (Some(dir), Some(_)) = (project, hash) {
            let projects = doc.entry("projects").or_insert(toml_edit::table());
            if let Some(projects) = projects.as_table_mut() {
                projects.set_implicit(true);
                let name = dir.to_string_lossy().into_owned();
                let level =
                    projects.get(&name).and_then(|t| t.get("trust_level")).and_then(|v| v.as_str()).map(str::to_string);
                if level.as_deref() != Some("trusted") {
                    let mut t = toml_edit::Table::new();
                    t.insert("trust_level", toml_edit::value("trusted"));
                    projects.insert(&name, toml_edit::Item::Table(t));
                    words.push(format!("marked {name} as a trusted project (Codex runs a project's hooks only then)"));
                }
            }
        }
        if words.is_empty() {
            return Ok(resolve_userfile::Change::Keep(words));
        }
        Ok(resolve_userfile::Change::Write(doc.to_string().into_bytes(), words))
    })
    .map_err(|e| e.to_string())
}

/// `rdesk setup codex`: the hook in `hooks.json` (the project's `.codex/hooks.json`, or
/// `$CODEX_HOME/hooks.json`) and Codex's trust of it in `$CODEX_HOME/config.toml`.
pub fn setup(opts: &SetupOptions) -> Result<SetupReport, String> {
    let home = codex_home(&opts.home);
    let (file, project) = match &opts.scope {
        Scope::Workspace(dir) => (dir.join(".codex").join("hooks.json"), Some(dir.clone())),
        Scope::User => (home.join("hooks.json"), None),
    };
    let command = hooks::hook_command(opts, MARK);
    let entry = (!opts.remove).then(
        || json!({"matcher": MATCHER, "hooks": [{"type": "command", "command": command, "timeout": timeout_secs()}]}),
    );
    let mut group = None;
    let words = settings::try_merge(&file, |s| {
        let words = hooks::set_hook(s, "PreToolUse", entry.clone(), &file, MARK)?;
        group = s
            .get("hooks")
            .and_then(|h| h.get("PreToolUse"))
            .and_then(Value::as_array)
            .and_then(|l| l.iter().position(|e| hooks::is_ours(e, MARK)));
        Ok(words)
    })?;
    let mut report = SetupReport::default();
    report.add(file.clone(), words);
    let prefix = format!("{}:pre_tool_use:", file.display());
    let key = format!("{prefix}{}:0", group.unwrap_or(0));
    let hash = (!opts.remove).then(|| trust_hash(MATCHER, &command, timeout_secs()));
    let config = home.join("config.toml");
    let words = set_trust(&config, &key, hash.as_deref(), project.as_deref(), &prefix)?;
    report.add(config, words);
    report.check = if opts.remove {
        vec!["Codex no longer runs Resolve Desk's hook.".into()]
    } else {
        vec![
            "Ask Codex for an edit: its apply_patch waits in the Resolve Desk window until you apply or discard it.".into(),
            "Not covered: files written by other shell commands (sed, redirections); Codex's own sandbox and approval rules decide those.".into(),
        ]
    };
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_trust_hash_is_codexs() {
        // Computed by Codex 0.169's own `hooks/list` for this hook (research, codex_hook_hash.py).
        assert_eq!(
            trust_hash(".*", "python3 /work/research/codex/proto-hook.py", 30),
            "sha256:0bd15ed4e2258b0fe1ec86f79c5026c4fa5ccfaf150f1955411c6408210c5d70"
        );
    }

    #[test]
    fn an_apply_patch_heredoc_is_read_from_a_shell_command() {
        let cmd = "apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: a.txt\n+x\n*** End Patch\nEOF\n";
        assert_eq!(heredoc_patch(cmd).unwrap(), "*** Begin Patch\n*** Add File: a.txt\n+x\n*** End Patch\n");
        assert_eq!(heredoc_patch("ls -la"), None);
        assert_eq!(heredoc_patch("apply_patch <<EOF\n*** Begin Patch\n"), None, "no end tag");
    }

    #[test]
    fn the_files_a_patch_names_are_made_absolute() {
        let p = "*** Begin Patch\n*** Update File: src/a.rs\n*** Move to: ../b.rs\n@@\n-x\n+y\n*** End Patch\n";
        let n = named_files(p, Path::new("/w/p"));
        assert_eq!(
            n.iter().map(|n| n.path.clone()).collect::<Vec<_>>(),
            [PathBuf::from("/w/p/src/a.rs"), PathBuf::from("/w/b.rs")]
        );
    }
}
