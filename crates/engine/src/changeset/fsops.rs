//! File operations relative to directory handles.
//!
//! Every folder a commit touches is opened from the workspace root one component at a time
//! with `O_NOFOLLOW`, and every operation (create, rename, unlink, stat, hash) is made
//! relative to such a handle (`openat`, `renameat2`, ...). A folder swapped for a symlink
//! after the preview cannot send a write outside the workspace: opening it fails (`ELOOP`
//! or `ENOTDIR`), and a handle opened before the swap still names the original folder.

use std::collections::HashMap;
use std::fs;
use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::{Path, PathBuf};

use rustix::fs::{AtFlags, Mode, OFlags, RenameFlags};

use super::{ContentHash, EntryKind};

/// A workspace-relative path split into its folder (`""` for the root) and its name.
pub(super) fn split(rel: &str) -> (&str, &str) {
    match rel.rfind('/') {
        Some(i) => (&rel[..i], &rel[i + 1..]),
        None => ("", rel),
    }
}

/// Directory handles under one root, opened without following symlinks.
pub(super) struct Tree {
    root_path: PathBuf,
    root: OwnedFd,
    dirs: HashMap<String, OwnedFd>,
    /// Folders changed (an entry added, removed or renamed): synced by `Tree::sync_changed`.
    changed: Vec<String>,
    /// This tree made every change the apply made (not a recovery in a new process): a
    /// folder it never opened holds nothing of the apply's.
    knows_all: bool,
}

fn dir_flags() -> OFlags {
    OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC
}

/// An error for an operation on `what` that names it.
fn named(what: &str, e: impl Into<io::Error>) -> io::Error {
    let e: io::Error = e.into();
    if e.raw_os_error() == Some(rustix::io::Errno::LOOP.raw_os_error())
        || e.raw_os_error() == Some(rustix::io::Errno::NOTDIR.raw_os_error())
    {
        return io::Error::new(
            e.kind(),
            format!("{what} is no longer a folder inside the workspace (it was replaced, perhaps by a symlink)"),
        );
    }
    e
}

impl Tree {
    /// The tree of an apply about to start.
    pub(super) fn open(root: &Path) -> io::Result<Self> {
        let root_fd = rustix::fs::open(root, dir_flags(), Mode::empty())?;
        Ok(Self {
            root_path: root.to_path_buf(),
            root: root_fd,
            dirs: HashMap::new(),
            changed: Vec::new(),
            knows_all: true,
        })
    }

    /// The tree of a recovery: the apply ran in another process.
    pub(super) fn open_for_recovery(root: &Path) -> io::Result<Self> {
        Ok(Self { knows_all: false, ..Self::open(root)? })
    }

    /// The handle of `rel` for looking up or removing something of the apply's: `None` when
    /// there cannot be anything (the folder is missing, or this tree never opened it).
    fn lookup_dir(&mut self, rel: &str) -> io::Result<Option<BorrowedFd<'_>>> {
        if self.knows_all && !rel.is_empty() && !self.dirs.contains_key(rel) {
            return Ok(None);
        }
        match self.dir(rel) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e),
            Ok(fd) => Ok(Some(fd)),
        }
    }

    pub(super) fn root_path(&self) -> &Path {
        &self.root_path
    }

    pub(super) fn root_fd(&self) -> BorrowedFd<'_> {
        self.root.as_fd()
    }

    /// The handle of the folder `rel` (`""` is the root), opened component by component.
    pub(super) fn dir(&mut self, rel: &str) -> io::Result<BorrowedFd<'_>> {
        if rel.is_empty() {
            return Ok(self.root.as_fd());
        }
        if !self.dirs.contains_key(rel) {
            let (parent, name) = split(rel);
            let fd = {
                let parent_fd = self.dir(parent)?;
                rustix::fs::openat(parent_fd, name, dir_flags(), Mode::empty()).map_err(|e| named(rel, e))?
            };
            self.dirs.insert(rel.to_string(), fd);
        }
        Ok(self.dirs[rel].as_fd())
    }

    /// Creates the folder `rel` (its parent must exist). False when it already existed.
    pub(super) fn mkdir(&mut self, rel: &str) -> io::Result<bool> {
        let (parent, name) = split(rel);
        let made = match rustix::fs::mkdirat(self.dir(parent)?, name, Mode::from_raw_mode(0o777)) {
            Ok(()) => true,
            Err(rustix::io::Errno::EXIST) => false,
            Err(e) => return Err(named(rel, e)),
        };
        if made {
            self.mark_changed(parent);
        }
        Ok(made)
    }

    /// Removes the folder `rel` when it is empty; false when it is not empty or missing.
    pub(super) fn rmdir_if_empty(&mut self, rel: &str) -> io::Result<bool> {
        self.dirs.remove(rel);
        let (parent, name) = split(rel);
        let Ok(parent_fd) = self.dir(parent) else { return Ok(false) };
        match rustix::fs::unlinkat(parent_fd, name, AtFlags::REMOVEDIR) {
            Ok(()) => {
                self.mark_changed(parent);
                Ok(true)
            }
            Err(rustix::io::Errno::NOTEMPTY | rustix::io::Errno::EXIST | rustix::io::Errno::NOENT) => Ok(false),
            Err(e) => Err(e.into()),
        }
    }

    /// What is at `rel` (not following a final symlink), or `None` when nothing is.
    pub(super) fn stat(&mut self, rel: &str) -> io::Result<Option<rustix::fs::Stat>> {
        let (dir, name) = split(rel);
        let Some(dir_fd) = self.lookup_dir(dir)? else { return Ok(None) };
        match rustix::fs::statat(dir_fd, name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(st) => Ok(Some(st)),
            Err(rustix::io::Errno::NOENT) => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    pub(super) fn exists(&mut self, rel: &str) -> io::Result<bool> {
        Ok(self.stat(rel)?.is_some())
    }

    /// The hash of the entry at `rel`: a regular file's bytes or a symlink's target; an error
    /// when it is missing or something else.
    pub(super) fn hash(&mut self, rel: &str, kind: EntryKind) -> io::Result<ContentHash> {
        let (dir, name) = split(rel);
        let dir_fd = self.dir(dir)?;
        match kind {
            EntryKind::File => {
                let fd = rustix::fs::openat(
                    dir_fd,
                    name,
                    OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::NONBLOCK,
                    Mode::empty(),
                )?;
                let st = rustix::fs::fstat(&fd)?;
                if rustix::fs::FileType::from_raw_mode(st.st_mode) != rustix::fs::FileType::RegularFile {
                    return Err(io::Error::other("not a regular file"));
                }
                let mut hasher = blake3::Hasher::new();
                hasher.update_reader(fs::File::from(fd))?;
                Ok(ContentHash(*hasher.finalize().as_bytes()))
            }
            EntryKind::Symlink => {
                let target = rustix::fs::readlinkat(dir_fd, name, Vec::new())?;
                Ok(ContentHash::of(target.as_bytes()))
            }
        }
    }

    /// Renames `from` to `to`, failing with `AlreadyExists` when `to` exists.
    pub(super) fn rename_noreplace(&mut self, from: &str, to: &str) -> io::Result<()> {
        self.rename_with(from, to, RenameFlags::NOREPLACE)
    }

    /// Renames `from` over `to` (replacing it).
    pub(super) fn rename_replace(&mut self, from: &str, to: &str) -> io::Result<()> {
        self.rename_with(from, to, RenameFlags::empty())
    }

    fn rename_with(&mut self, from: &str, to: &str, flags: RenameFlags) -> io::Result<()> {
        let (from_dir, from_name) = split(from);
        let (to_dir, to_name) = split(to);
        // Both handles are opened first (the cache owns them), then borrowed together.
        self.dir(from_dir)?;
        self.dir(to_dir)?;
        let from_fd = self.borrow(from_dir);
        let to_fd = self.borrow(to_dir);
        let result = rustix::fs::renameat_with(from_fd, from_name, to_fd, to_name, flags);
        match result {
            // A file system without renameat2 (some network ones): link + unlink never replaces.
            Err(rustix::io::Errno::INVAL | rustix::io::Errno::NOSYS) if flags.contains(RenameFlags::NOREPLACE) => {
                rustix::fs::linkat(from_fd, from_name, to_fd, to_name, AtFlags::empty())?;
                rustix::fs::unlinkat(from_fd, from_name, AtFlags::empty())?;
            }
            Err(e) => return Err(e.into()),
            Ok(()) => {}
        }
        self.mark_changed(from_dir);
        self.mark_changed(to_dir);
        Ok(())
    }

    fn borrow(&self, rel: &str) -> BorrowedFd<'_> {
        if rel.is_empty() {
            self.root.as_fd()
        } else {
            self.dirs[rel].as_fd()
        }
    }

    /// Removes the file (or link) `rel`; false when it was already gone.
    pub(super) fn unlink(&mut self, rel: &str) -> io::Result<bool> {
        let (dir, name) = split(rel);
        let Some(dir_fd) = self.lookup_dir(dir)? else { return Ok(false) };
        match rustix::fs::unlinkat(dir_fd, name, AtFlags::empty()) {
            Ok(()) => {
                self.mark_changed(dir);
                Ok(true)
            }
            Err(rustix::io::Errno::NOENT) => Ok(false),
            Err(e) => Err(e.into()),
        }
    }

    /// Creates `rel` (it must not exist) with `mode` from the start, never following a link.
    pub(super) fn create_new(&mut self, rel: &str, mode: u32) -> io::Result<fs::File> {
        let (dir, name) = split(rel);
        let fd = rustix::fs::openat(
            self.dir(dir)?,
            name,
            OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::from_raw_mode(mode),
        )?;
        self.mark_changed(dir);
        Ok(fs::File::from(fd))
    }

    pub(super) fn mark_changed(&mut self, dir: &str) {
        if !self.changed.iter().any(|d| d == dir) {
            self.changed.push(dir.to_string());
        }
    }

    /// Syncs every folder changed since the last call; the first failure is returned, naming
    /// the folder.
    pub(super) fn sync_changed(&mut self) -> Result<(), (String, io::Error)> {
        let dirs = std::mem::take(&mut self.changed);
        let mut first = None;
        for d in dirs {
            let r = self.dir(&d).and_then(|fd| rustix::fs::fsync(fd).map_err(io::Error::from));
            // A folder removed since (an empty one a rollback made) has nothing to sync; its
            // parent, where it was removed, is in the list too.
            if let Err(e) = r.or_else(|e| if e.kind() == io::ErrorKind::NotFound { Ok(()) } else { Err(e) }) {
                first.get_or_insert((d, e));
            }
        }
        match first {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}
