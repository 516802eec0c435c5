//! A change set handed over by an external tool (`pushPendingAction` with `changeSet`): the
//! engine applies it itself, with every guarantee of the built-in tools (hash-checked,
//! atomic, stale when a file changes, kept across restarts, undoable).
//!
//! Each change names a workspace-relative path; edits, deletions and renames carry the
//! sha256 (hex) of the bytes the tool read. The host reads the file again when the action is
//! pushed and refuses the push if it no longer matches (the file changed since the tool
//! read it); from then on the engine's own hash pins it.

use std::sync::Arc;

use resolve_engine::{ChangeSet, ContentHash, CustomToolPendingAction, EntryKind, Workspace};
use serde_json::Value;
use sha2::{Digest, Sha256};

/// The sha256 of `bytes`, lowercase hex (what a tool sends).
pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

fn text<'a>(change: &'a Value, key: &str, at: &str) -> Result<&'a str, String> {
    change.get(key).and_then(Value::as_str).ok_or_else(|| format!("pushPendingAction: `{at}.{key}` must be a string"))
}

fn read_pinned(ws: &Workspace, change: &Value, path_key: &str, at: &str) -> Result<(String, Vec<u8>), String> {
    let path = text(change, path_key, at)?;
    let sha = text(change, "sha256", at)?;
    let abs = ws.resolve_existing(path).map_err(|e| format!("pushPendingAction: `{at}.{path_key}`: {e}"))?;
    let bytes = std::fs::read(&abs).map_err(|e| format!("pushPendingAction: cannot read `{path}`: {e}"))?;
    if !sha256_hex(&bytes).eq_ignore_ascii_case(sha) {
        return Err(format!(
            "pushPendingAction: `{path}` changed since the tool read it (its sha256 is not `{sha}` any more); nothing was queued. Run the preview again."
        ));
    }
    Ok((path.to_string(), bytes))
}

/// Builds the action for `changeSet` (checked against the disk now).
pub(crate) fn action(label: &str, cs: &Value, ws: Arc<Workspace>) -> Result<CustomToolPendingAction, String> {
    let changes = cs
        .get("changes")
        .and_then(Value::as_array)
        .ok_or("pushPendingAction: `changeSet.changes` must be an array of changes")?;
    if changes.is_empty() {
        return Err(
            "pushPendingAction: `changeSet.changes` is empty; push nothing when there is nothing to change".into()
        );
    }
    let mut set = ChangeSet::new();
    for (i, change) in changes.iter().enumerate() {
        let at = format!("changeSet.changes[{i}]");
        match change.get("op").and_then(Value::as_str) {
            Some("edit") => {
                let (path, before) = read_pinned(&ws, change, "path", &at)?;
                let after = text(change, "contents", &at)?;
                set.edit(path, before, after.as_bytes().to_vec());
            }
            Some("create") => {
                let path = text(change, "path", &at)?;
                ws.resolve(path).map_err(|e| format!("pushPendingAction: `{at}.path`: {e}"))?;
                let contents = text(change, "contents", &at)?;
                set.create(path, contents.as_bytes().to_vec());
            }
            Some("delete") => {
                let (path, before) = read_pinned(&ws, change, "path", &at)?;
                set.delete(path, before);
            }
            Some("rename") => {
                let (from, before) = read_pinned(&ws, change, "from", &at)?;
                let to = text(change, "to", &at)?;
                ws.resolve(to).map_err(|e| format!("pushPendingAction: `{at}.to`: {e}"))?;
                set.rename(from, to, EntryKind::File, ContentHash::of(&before));
            }
            other => {
                return Err(format!(
                    "pushPendingAction: `{at}.op` must be \"edit\", \"create\", \"delete\" or \"rename\"; got {}",
                    other.map(|s| format!("\"{s}\"")).unwrap_or_else(|| "nothing".into())
                ))
            }
        }
    }
    let applied = cs
        .get("appliedText")
        .and_then(Value::as_str)
        .map(str::to_string)
        .unwrap_or_else(|| format!("Applied: {label}."));
    let mut action = CustomToolPendingAction::from_change_set(label, set, ws, applied);
    if let Some(discard) = cs.get("discardText").and_then(Value::as_str) {
        action = action.with_discard_text(discard);
    }
    Ok(action)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sha256_of_abc_is_the_standard_one() {
        assert_eq!(sha256_hex(b"abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    }
}
