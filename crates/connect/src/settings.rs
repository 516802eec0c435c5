//! The agents' JSON settings files, merged in place: read (a file that is not valid JSON is
//! reported with its path and line, never overwritten), changed under the user-file lock,
//! written atomically keeping the file's mode; keys the desk does not own are kept as they
//! were (order included).

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use serde_json::{Map, Value};

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

/// [`merge`] with a change that can fail: on `Err` the file is left as it was and the error
/// returned.
pub fn try_merge(
    path: &Path,
    change: impl FnOnce(&mut Map<String, Value>) -> Result<Vec<String>, String>,
) -> Result<Vec<String>, String> {
    let mut failure = None;
    let words = merge(path, |o| {
        change(o).unwrap_or_else(|e| {
            failure = Some(e);
            Vec::new()
        })
    })?;
    match failure {
        Some(e) => Err(e),
        None => Ok(words),
    }
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
