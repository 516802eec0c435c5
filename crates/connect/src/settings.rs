//! The agents' JSON settings files, merged in place: read (a file that is not valid JSON is
//! reported with its path and line, never overwritten), changed under the user-file lock,
//! written atomically keeping the file's mode; keys the desk does not own are kept as they
//! were (order included).

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use serde_json::{Map, Value};

use crate::agents::{Outside, SetupOptions};
use crate::gate::Policy;

/// Changes the JSON object in `path` with `change` (which returns what it changed, in words;
/// nothing when the file already was as wanted). Creates the file (0644) when absent and
/// something is to be added; deletes it when `change` leaves an empty object in a file that
/// held nothing else. Returns the words.
pub fn merge(path: &Path, change: impl FnOnce(&mut Map<String, Value>) -> Vec<String>) -> Result<Vec<String>, String> {
    let mode = std::fs::metadata(path).map(|m| m.permissions().mode() & 0o777).unwrap_or(0o644);
    resolve_userfile::update::<_, resolve_userfile::UserFileError>(path, mode, |bytes| {
        let existed = bytes.is_some();
        let mut object = match bytes {
            Some(b) => match resolve_userfile::parse(path, b)? {
                Some(Value::Object(o)) => o,
                None => Map::new(),
                Some(other) => {
                    return Err(resolve_userfile::UserFileError::Refused(format!(
                        "{} holds {} where a JSON object was expected; fix it by hand, nothing was changed",
                        path.display(),
                        kind(&other)
                    )))
                }
            },
            None => Map::new(),
        };
        let words = change(&mut object);
        if words.is_empty() {
            return Ok(resolve_userfile::Change::Keep(words));
        }
        if object.is_empty() && existed {
            std::fs::remove_file(path)
                .map_err(|source| resolve_userfile::UserFileError::Write { path: path.to_path_buf(), source })?;
            return Ok(resolve_userfile::Change::Keep(words));
        }
        if object.is_empty() {
            return Ok(resolve_userfile::Change::Keep(Vec::new()));
        }
        let mut text = serde_json::to_vec_pretty(&Value::Object(object))
            .map_err(|e| resolve_userfile::UserFileError::Refused(e.to_string()))?;
        text.push(b'\n');
        Ok(resolve_userfile::Change::Write(text, words))
    })
    .map_err(|e| e.to_string())
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Array(_) => "a list",
        Value::String(_) => "a string",
        Value::Number(_) => "a number",
        Value::Bool(_) => "a boolean",
        Value::Null => "null",
        Value::Object(_) => "an object",
    }
}

/// The object under `key` of `object`, created when absent (`Err` when `key` holds something else).
pub fn object_at<'a>(
    object: &'a mut Map<String, Value>,
    key: &str,
    file: &Path,
) -> Result<&'a mut Map<String, Value>, String> {
    let slot = object.entry(key.to_string()).or_insert_with(|| Value::Object(Map::new()));
    match slot {
        Value::Object(o) => Ok(o),
        other => Err(format!("`{key}` in {} is {}, not an object; fix it by hand", file.display(), kind(other))),
    }
}

/// The list under `key` of `object`, created when absent.
pub fn array_at<'a>(object: &'a mut Map<String, Value>, key: &str, file: &Path) -> Result<&'a mut Vec<Value>, String> {
    let slot = object.entry(key.to_string()).or_insert_with(|| Value::Array(Vec::new()));
    match slot {
        Value::Array(a) => Ok(a),
        other => Err(format!("`{key}` in {} is {}, not a list; fix it by hand", file.display(), kind(other))),
    }
}

/// Removes `key` from `object` when it holds an empty object or list.
pub fn drop_if_empty(object: &mut Map<String, Value>, key: &str) {
    let empty = match object.get(key) {
        Some(Value::Object(o)) => o.is_empty(),
        Some(Value::Array(a)) => a.is_empty(),
        _ => false,
    };
    if empty {
        object.remove(key);
    }
}

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
