//! Where a path leads and what it holds now: inside the folder (no `..` above it, no symlink
//! that leaves it), a text file within [`MAX_FILE_BYTES`], or missing; and whether another
//! pending action already changes it.

use std::io::Read;
use std::path::Path;
use std::sync::Arc;

use resolve_engine::Change;
use resolve_engine::{CustomToolApi, ToolError, Workspace, WorkspaceError};

/// The largest file a text edit reads or writes: 8 MiB (either side).
pub const MAX_FILE_BYTES: u64 = 8 * 1024 * 1024;

/// One file as a preview reads it.
#[derive(Debug, Clone)]
pub struct FileNow {
    /// Workspace-relative, with `/`, symlinks inside the folder resolved (the file written).
    pub rel: String,
    /// Its bytes now; `None` when it does not exist.
    pub bytes: Option<Arc<[u8]>>,
}

fn invalid(message: String) -> ToolError {
    ToolError::InvalidParams(message)
}

/// Resolves `path` (workspace-relative, or absolute inside the folder) for `tool` and reads
/// what is there. Refused, naming the path and what to do: an empty path, one outside the
/// folder or reaching out of it through a symlink, a folder, the desk's own files, a file
/// over [`MAX_FILE_BYTES`], a binary file (a NUL byte, or not UTF-8).
pub fn read_target(ws: &Workspace, tool: &str, path: &str) -> Result<FileNow, ToolError> {
    if path.trim().is_empty() {
        return Err(invalid(format!(
            "`{tool}` needs a file path relative to the folder (e.g. \"src/main.rs\"), got an empty one."
        )));
    }
    let abs = ws.resolve(path).map_err(|e| match e {
        WorkspaceError::Outside(_) => outside(ws, path),
        other => ToolError::from(other),
    })?;
    let rel = ws.relative(&abs).map_err(|_| outside(ws, path))?;
    if rel.is_empty() {
        return Err(invalid(format!("\"{path}\" is the folder itself, not a file; name a file inside it.")));
    }
    if rel.split('/').any(|part| part.starts_with(".rdesk-")) {
        return Err(invalid(format!(
            "\"{path}\" is one of Resolve Desk's own working files (`.rdesk-*`); it cannot be edited."
        )));
    }
    let bytes = match std::fs::symlink_metadata(&abs) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(ToolError::Io(format!("Cannot read {rel}: {e}"))),
        Ok(meta) if meta.is_dir() => {
            return Err(invalid(format!("\"{path}\" is a folder, not a file; name a file inside it.")))
        }
        Ok(meta) if !meta.is_file() => {
            return Err(invalid(format!(
                "\"{path}\" is not a regular file (a device, socket or pipe); it cannot be edited."
            )))
        }
        Ok(meta) if meta.len() > MAX_FILE_BYTES => return Err(too_big(&rel, meta.len())),
        Ok(_) => Some(read_bounded(&abs, &rel)?),
    };
    if let Some(b) = &bytes {
        check_text(&rel, b, "holds")?;
    }
    Ok(FileNow { rel, bytes })
}

fn outside(ws: &Workspace, path: &str) -> ToolError {
    ToolError::OutsideWorkspace(format!(
        "{path} (the folder is {}; a path may not go above it with `..` or through a symlink that leads out of it)",
        ws.root().display()
    ))
}

fn too_big(rel: &str, len: u64) -> ToolError {
    invalid(format!(
        "{rel} is {} MiB, over the {} MiB a text edit handles; edit it with another tool, or split it.",
        (len as f64 / (1024.0 * 1024.0) * 10.0).round() / 10.0,
        MAX_FILE_BYTES / (1024 * 1024)
    ))
}

/// Reads at most [`MAX_FILE_BYTES`] + 1 bytes (a file that grew meanwhile is refused too).
fn read_bounded(abs: &Path, rel: &str) -> Result<Arc<[u8]>, ToolError> {
    let file = std::fs::File::open(abs).map_err(|e| ToolError::Io(format!("Cannot read {rel}: {e}")))?;
    let mut buf = Vec::new();
    file.take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut buf)
        .map_err(|e| ToolError::Io(format!("Cannot read {rel}: {e}")))?;
    if buf.len() as u64 > MAX_FILE_BYTES {
        return Err(too_big(rel, buf.len() as u64));
    }
    Ok(buf.into())
}

/// Refuses bytes that are not text (`what`: "holds" for the file now, "would hold" for new
/// content), or over the size bound.
pub fn check_text(rel: &str, bytes: &[u8], what: &str) -> Result<(), ToolError> {
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(too_big(rel, bytes.len() as u64));
    }
    if bytes.contains(&0) || std::str::from_utf8(bytes).is_err() {
        return Err(invalid(format!(
            "{rel} {what} binary data (a NUL byte, or bytes that are not UTF-8 text); text edits change text files only."
        )));
    }
    Ok(())
}

/// Refuses when a pending action other than `except` already changes one of `paths` (its
/// files, or a rename's source), naming it: the stack is per folder and LIFO, so a second
/// change to one file would be decided against bytes the first may change.
pub fn check_no_pending_change(api: &CustomToolApi, paths: &[String], except: Option<&str>) -> Result<(), ToolError> {
    let Some(store) = api.store() else { return Ok(()) };
    for info in store.list() {
        if Some(info.id.as_str()) == except {
            continue;
        }
        let Some(action) = store.get(&info.id) else { continue };
        let Some(cs) = action.change_set.as_ref() else { continue };
        for change in cs.changes() {
            let touched: [Option<&str>; 2] = match change {
                Change::Rename { from, to, .. } => [Some(from), Some(to)],
                other => [Some(other.path()), None],
            };
            if let Some(p) = paths.iter().find(|p| touched.contains(&Some(p.as_str()))) {
                return Err(invalid(format!(
                    "{p} is already changed by the pending action {} (\"{}\"). Pending actions of a folder are decided \
                     one at a time, newest first: apply or discard {} first, then propose this change against what it \
                     leaves.",
                    info.id, info.label, info.id
                )));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_outside_binary_and_big_files_are_refused_by_name() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret.txt"), "x").unwrap();
        std::os::unix::fs::symlink(outside.path(), dir.path().join("link")).unwrap();
        std::fs::write(dir.path().join("bin.dat"), b"a\0b").unwrap();
        std::fs::write(dir.path().join("big.txt"), vec![b'a'; MAX_FILE_BYTES as usize + 1]).unwrap();
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        let ws = Workspace::open(dir.path()).unwrap();
        let err = |p: &str| read_target(&ws, "edit_file", p).unwrap_err().to_string();
        assert!(err("../x.txt").contains("outside"), "{}", err("../x.txt"));
        assert!(err("link/secret.txt").contains("through a symlink"), "{}", err("link/secret.txt"));
        assert!(err("bin.dat").contains("bin.dat holds binary data"), "{}", err("bin.dat"));
        assert!(err("big.txt").contains("over the 8 MiB"), "{}", err("big.txt"));
        assert!(err("sub").contains("is a folder"), "{}", err("sub"));
        assert!(err("").contains("empty"));
        let new = read_target(&ws, "write_file", "sub/new.md").unwrap();
        assert_eq!((new.rel.as_str(), new.bytes.is_none()), ("sub/new.md", true));
    }
}
