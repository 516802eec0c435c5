//! The workspace root and the path checks that every file access goes through.
//!
//! Invariants: the root is canonical (symlinks resolved); every path handed out by
//! [`Workspace::resolve`] or [`Workspace::resolve_entry`] is inside it, symlinks included;
//! workspace-relative paths use `/` whatever the platform.

use std::io;
use std::path::{Component, Path, PathBuf};

/// Why a path was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WorkspaceError {
    #[error("Path is outside the workspace: {0}")]
    Outside(String),
    #[error("Path not found: {0}")]
    NotFound(String),
    #[error("Workspace root is not a directory: {0}")]
    NotADirectory(String),
    #[error("Symlink loop or too many links at {0}; remove the loop or choose another path")]
    SymlinkLoop(String),
    #[error("Cannot read {path}: {message}")]
    Io { path: String, message: String },
}

impl From<WorkspaceError> for crate::tool::ToolError {
    fn from(e: WorkspaceError) -> Self {
        use crate::tool::ToolError;
        match e {
            WorkspaceError::Outside(p) => ToolError::OutsideWorkspace(p),
            WorkspaceError::NotFound(p) => ToolError::NotFound(p),
            other @ (WorkspaceError::NotADirectory(_) | WorkspaceError::SymlinkLoop(_) | WorkspaceError::Io { .. }) => {
                ToolError::Io(other.to_string())
            }
        }
    }
}

/// A canonical workspace root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Workspace {
    root: PathBuf,
}

impl Workspace {
    /// Opens `root`, which must be an existing directory; it is canonicalised.
    pub fn open(root: impl AsRef<Path>) -> Result<Self, WorkspaceError> {
        let shown = root.as_ref().display().to_string();
        let root = root.as_ref().canonicalize().map_err(|e| match e.kind() {
            io::ErrorKind::NotFound => WorkspaceError::NotFound(shown.clone()),
            _ => WorkspaceError::Io { path: shown.clone(), message: e.to_string() },
        })?;
        if !root.is_dir() {
            return Err(WorkspaceError::NotADirectory(shown));
        }
        Ok(Self { root })
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Resolves `path` (workspace-relative, or absolute inside the workspace) to a canonical
    /// absolute path with every symlink followed. The path need not exist yet; the part that
    /// exists is canonicalised. Refuses anything that ends up outside the root.
    pub fn resolve(&self, path: &str) -> Result<PathBuf, WorkspaceError> {
        let joined = self.lexical(path)?;
        let resolved = canonicalize_existing_prefix(&joined, path)?;
        self.check_inside(&resolved, path)?;
        Ok(resolved)
    }

    /// Like [`resolve`](Self::resolve) but does not follow a symlink in the last component:
    /// the result names the directory entry itself (for renaming or deleting a link).
    pub fn resolve_entry(&self, path: &str) -> Result<PathBuf, WorkspaceError> {
        let joined = self.lexical(path)?;
        if joined == self.root {
            return Ok(self.root.clone());
        }
        let (Some(parent), Some(name)) = (joined.parent(), joined.file_name()) else {
            return Err(WorkspaceError::Outside(path.to_string()));
        };
        let parent = canonicalize_existing_prefix(parent, path)?;
        self.check_inside(&parent, path)?;
        Ok(parent.join(name))
    }

    /// Like [`resolve`](Self::resolve), and the path must exist.
    pub fn resolve_existing(&self, path: &str) -> Result<PathBuf, WorkspaceError> {
        let p = self.resolve(path)?;
        if std::fs::symlink_metadata(&p).is_err() {
            return Err(WorkspaceError::NotFound(path.to_string()));
        }
        Ok(p)
    }

    /// The workspace-relative form (with `/`) of an absolute path inside the workspace.
    pub fn relative(&self, abs: &Path) -> Result<String, WorkspaceError> {
        let rel = abs.strip_prefix(&self.root).map_err(|_| WorkspaceError::Outside(abs.display().to_string()))?;
        Ok(rel.components().map(|c| c.as_os_str().to_string_lossy()).collect::<Vec<_>>().join("/"))
    }

    /// True when `abs` (already canonical) is the root or below it.
    pub fn contains(&self, abs: &Path) -> bool {
        abs.starts_with(&self.root)
    }

    fn check_inside(&self, abs: &Path, shown: &str) -> Result<(), WorkspaceError> {
        if self.contains(abs) {
            Ok(())
        } else {
            Err(WorkspaceError::Outside(shown.to_string()))
        }
    }

    /// Joins onto the root and removes `.`/`..` lexically; `..` above the root is refused.
    fn lexical(&self, path: &str) -> Result<PathBuf, WorkspaceError> {
        if path.contains('\0') {
            return Err(WorkspaceError::Outside(path.replace('\0', "\\0")));
        }
        let trimmed = path.trim();
        let p = Path::new(trimmed);
        let start = if p.is_absolute() { PathBuf::new() } else { self.root.clone() };
        let mut out = start;
        for comp in p.components() {
            match comp {
                Component::Prefix(_) | Component::RootDir => out = PathBuf::from("/"),
                Component::CurDir => {}
                Component::ParentDir => {
                    if !out.pop() {
                        return Err(WorkspaceError::Outside(path.to_string()));
                    }
                }
                Component::Normal(s) => out.push(s),
            }
        }
        if !p.is_absolute() && !out.starts_with(&self.root) {
            return Err(WorkspaceError::Outside(path.to_string()));
        }
        Ok(out)
    }
}

/// Canonicalises the longest existing prefix of `p` and appends the rest.
fn canonicalize_existing_prefix(p: &Path, shown: &str) -> Result<PathBuf, WorkspaceError> {
    let mut existing = p.to_path_buf();
    let mut rest: Vec<std::ffi::OsString> = Vec::new();
    loop {
        match existing.canonicalize() {
            Ok(mut c) => {
                for part in rest.iter().rev() {
                    c.push(part);
                }
                return Ok(c);
            }
            Err(e) if e.raw_os_error() == Some(40) => {
                // ELOOP
                return Err(WorkspaceError::SymlinkLoop(shown.to_string()));
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                // A dangling symlink must not let a later create escape: refuse it.
                if std::fs::symlink_metadata(&existing).map(|m| m.file_type().is_symlink()).unwrap_or(false) {
                    return Err(WorkspaceError::Outside(shown.to_string()));
                }
                let Some(name) = existing.file_name().map(|n| n.to_os_string()) else {
                    return Err(WorkspaceError::NotFound(shown.to_string()));
                };
                rest.push(name);
                if !existing.pop() {
                    return Err(WorkspaceError::NotFound(shown.to_string()));
                }
            }
            Err(e) => return Err(WorkspaceError::Io { path: shown.to_string(), message: e.to_string() }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    fn ws() -> (tempfile::TempDir, Workspace) {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir_all(dir.path().join("src")).unwrap();
        fs::write(dir.path().join("src/a.ts"), "x").unwrap();
        let ws = Workspace::open(dir.path()).unwrap();
        (dir, ws)
    }

    #[test]
    fn relative_paths_resolve_inside() {
        let (_d, ws) = ws();
        assert_eq!(ws.resolve("src/a.ts").unwrap(), ws.root().join("src/a.ts"));
        assert_eq!(ws.resolve("src/../src/./a.ts").unwrap(), ws.root().join("src/a.ts"));
        assert_eq!(ws.resolve("new/file.ts").unwrap(), ws.root().join("new/file.ts"), "missing paths resolve");
        assert_eq!(ws.resolve("").unwrap(), ws.root());
    }

    #[test]
    fn parent_escapes_are_refused() {
        let (_d, ws) = ws();
        assert_eq!(ws.resolve("../x").unwrap_err(), WorkspaceError::Outside("../x".into()));
        assert_eq!(ws.resolve("src/../../x").unwrap_err().to_string(), "Path is outside the workspace: src/../../x");
    }

    #[test]
    fn absolute_paths_outside_are_refused_and_inside_accepted() {
        let (_d, ws) = ws();
        assert!(matches!(ws.resolve("/etc/passwd"), Err(WorkspaceError::Outside(_))));
        let inside = ws.root().join("src/a.ts");
        assert_eq!(ws.resolve(inside.to_str().unwrap()).unwrap(), inside);
    }

    #[test]
    fn symlink_to_outside_is_refused() {
        let (_d, ws) = ws();
        let outside = tempfile::tempdir().unwrap();
        fs::write(outside.path().join("secret"), "s").unwrap();
        std::os::unix::fs::symlink(outside.path(), ws.root().join("link")).unwrap();
        assert!(matches!(ws.resolve("link/secret"), Err(WorkspaceError::Outside(_))));
        assert!(matches!(ws.resolve("link/new-file"), Err(WorkspaceError::Outside(_))));
        // The link entry itself lives inside, so it may be named (renamed, not followed).
        assert_eq!(ws.resolve_entry("link").unwrap(), ws.root().join("link"));
    }

    #[test]
    fn dangling_symlink_cannot_be_used_to_create_outside() {
        let (_d, ws) = ws();
        std::os::unix::fs::symlink("/nonexistent-rdesk-target/x", ws.root().join("dangling")).unwrap();
        assert!(matches!(ws.resolve("dangling"), Err(WorkspaceError::Outside(_))));
    }

    #[test]
    fn symlink_loops_are_reported() {
        let (_d, ws) = ws();
        std::os::unix::fs::symlink("loop-b", ws.root().join("loop-a")).unwrap();
        std::os::unix::fs::symlink("loop-a", ws.root().join("loop-b")).unwrap();
        assert_eq!(ws.resolve("loop-a/x").unwrap_err(), WorkspaceError::SymlinkLoop("loop-a/x".into()));
    }

    #[test]
    fn relative_form_uses_slashes() {
        let (_d, ws) = ws();
        assert_eq!(ws.relative(&ws.root().join("src/a.ts")).unwrap(), "src/a.ts");
    }
}
