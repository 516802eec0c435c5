//! A change set described as JSON, so a test and a child process build the same one:
//! `[{"op":"edit","path":"a","after":"…"}, {"op":"create","path":"b","after":"…"},
//!   {"op":"delete","path":"c"}, {"op":"rename","from":"d","to":"e"}]`.
//! Edits and deletions pin the bytes on disk when the change set is built (the preview);
//! renames pin the entry's hash (a file or a symlink).

use resolve_engine::{ChangeSet, ContentHash, EntryKind, Workspace};
use serde_json::Value;

/// Builds the change set `plan` describes against the files in `ws` now.
pub fn change_set(ws: &Workspace, plan: &str) -> Result<ChangeSet, String> {
    let items: Vec<Value> = serde_json::from_str(plan).map_err(|e| format!("plan: {e}"))?;
    let mut cs = ChangeSet::new();
    let s = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).map(str::to_string).ok_or(format!("missing {k}"));
    for item in &items {
        match s(item, "op")?.as_str() {
            "edit" => {
                let path = s(item, "path")?;
                let before = std::fs::read(ws.root().join(&path)).map_err(|e| format!("{path}: {e}"))?;
                cs.edit(path, before, s(item, "after")?.into_bytes());
            }
            "create" => {
                cs.create(s(item, "path")?, s(item, "after")?.into_bytes());
            }
            "delete" => {
                let path = s(item, "path")?;
                let before = std::fs::read(ws.root().join(&path)).map_err(|e| format!("{path}: {e}"))?;
                cs.delete(path, before);
            }
            "rename" => {
                let from = s(item, "from")?;
                let abs = ws.root().join(&from);
                let meta = std::fs::symlink_metadata(&abs).map_err(|e| format!("{from}: {e}"))?;
                let kind = if meta.file_type().is_symlink() { EntryKind::Symlink } else { EntryKind::File };
                let hash = ContentHash::of_entry(&abs, kind).map_err(|e| format!("{from}: {e}"))?;
                cs.rename(from, s(item, "to")?, kind, hash);
            }
            other => return Err(format!("unknown op {other}")),
        }
    }
    Ok(cs)
}
