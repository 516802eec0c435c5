//! File operations relative to directory handles.
//!
//! Every folder a commit touches is opened beneath the workspace root without following any
//! symlink: with `openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS)`
//! where the kernel has it (Linux 5.6+), else one component at a time with `O_NOFOLLOW`.
//! Every operation (create, rename, unlink, stat, hash) is made relative to such a handle
//! (`openat`, `renameat2`, ...). A folder swapped for a symlink after the preview cannot
//! send a write outside the workspace: opening it fails (`ELOOP`, `ENOTDIR` or `EXDEV`), and
//! a handle opened before the swap still names the original folder.
//!
//! Every name is checked before it is split and opened, whoever passes it
//! (`super::record_check::check_rel`: no `..`, `.`, empty or NUL component, not absolute),
//! so even a name that skipped the record's checks cannot leave the root.
//!
//! Every sync (`sync_file`, `sync_data`, `sync_dir`) goes through here too, so the tests'
//! fault hook can fail the real `fsync`/`fdatasync` (point `fsync`, numbered per tree).

use std::collections::HashMap;
use std::fs;
use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::{Path, PathBuf};

use rustix::fs::{AtFlags, Mode, OFlags, RenameFlags, ResolveFlags};

use super::record_check::check_rel;
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
    /// `openat2` is missing (`ENOSYS`): folders are opened one component at a time.
    no_openat2: bool,
    /// Syncs made so far (the index of the next `fsync` fault point).
    syncs: usize,
}

fn dir_flags() -> OFlags {
    OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC
}

/// `rel` checked (see the module docs), split into its folder and its name.
fn parts(rel: &str) -> io::Result<(&str, &str)> {
    check_rel(rel)
        .map_err(|why| io::Error::new(io::ErrorKind::InvalidInput, format!("refused the name {rel:?}: it {why}")))?;
    Ok(split(rel))
}

/// An error for an operation on `what` that names it.
fn named(what: &str, e: impl Into<io::Error>) -> io::Error {
    let e: io::Error = e.into();
    let escaped = [rustix::io::Errno::LOOP, rustix::io::Errno::NOTDIR, rustix::io::Errno::XDEV];
    if escaped.iter().any(|errno| e.raw_os_error() == Some(errno.raw_os_error())) {
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
            no_openat2: false,
            syncs: 0,
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

    /// The handle of the folder `rel` (`""` is the root), opened beneath the root without
    /// following symlinks (see the module docs).
    pub(super) fn dir(&mut self, rel: &str) -> io::Result<BorrowedFd<'_>> {
        if rel.is_empty() {
            return Ok(self.root.as_fd());
        }
        if !self.dirs.contains_key(rel) {
            let (parent, name) = parts(rel)?;
            let beneath = ResolveFlags::BENEATH | ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS;
            let fd = match (!self.no_openat2)
                .then(|| rustix::fs::openat2(&self.root, rel, dir_flags(), Mode::empty(), beneath))
            {
                Some(Ok(fd)) => fd,
                Some(Err(rustix::io::Errno::NOSYS)) | None => {
                    self.no_openat2 = true;
                    let parent_fd = self.dir(parent)?;
                    rustix::fs::openat(parent_fd, name, dir_flags(), Mode::empty()).map_err(|e| named(rel, e))?
                }
                // `EAGAIN`: a rename raced the lookup; the component walk has no such limit.
                Some(Err(rustix::io::Errno::AGAIN)) => {
                    let parent_fd = self.dir(parent)?;
                    rustix::fs::openat(parent_fd, name, dir_flags(), Mode::empty()).map_err(|e| named(rel, e))?
                }
                Some(Err(e)) => return Err(named(rel, e)),
            };
            self.dirs.insert(rel.to_string(), fd);
        }
        Ok(self.dirs[rel].as_fd())
    }

    /// Creates the folder `rel` (its parent must exist). False when it already existed.
    pub(super) fn mkdir(&mut self, rel: &str) -> io::Result<bool> {
        let (parent, name) = parts(rel)?;
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
        let (parent, name) = parts(rel)?;
        self.dirs.remove(rel);
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
        let (dir, name) = parts(rel)?;
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
        let (dir, name) = parts(rel)?;
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
        let (from_dir, from_name) = parts(from)?;
        let (to_dir, to_name) = parts(to)?;
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
        let (dir, name) = parts(rel)?;
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
        let (dir, name) = parts(rel)?;
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
            let r = self.sync_dir(&d);
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

    /// `fsync` of the folder `rel` (`""` is the root).
    pub(super) fn sync_dir(&mut self, rel: &str) -> io::Result<()> {
        self.sync_point(rel)?;
        let fd = self.dir(rel)?;
        rustix::fs::fsync(fd).map_err(io::Error::from)
    }

    /// `fsync` of `file`, open at `rel` (its data and its metadata).
    pub(super) fn sync_file(&mut self, file: &fs::File, rel: &str) -> io::Result<()> {
        self.sync_point(rel)?;
        rustix::fs::fsync(file).map_err(io::Error::from)
    }

    /// `fdatasync` of `file`, open at `rel` (its data, and its size).
    pub(super) fn sync_data(&mut self, file: &fs::File, rel: &str) -> io::Result<()> {
        self.sync_point(rel)?;
        rustix::fs::fdatasync(file).map_err(io::Error::from)
    }

    #[cfg(feature = "fault-injection")]
    fn sync_point(&mut self, rel: &str) -> io::Result<()> {
        let index = self.syncs;
        self.syncs += 1;
        crate::fault::at(crate::fault::Point { root: &self.root_path, phase: "fsync", index, target: rel })
    }

    #[cfg(not(feature = "fault-injection"))]
    fn sync_point(&mut self, _rel: &str) -> io::Result<()> {
        self.syncs += 1;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_with_dot_dot_or_an_absolute_name_is_refused_before_anything_is_opened() {
        let outside = tempfile::tempdir().unwrap();
        std::fs::create_dir(outside.path().join("ws")).unwrap();
        std::fs::write(outside.path().join("secret.txt"), "keep").unwrap();
        let mut tree = Tree::open(&outside.path().join("ws")).unwrap();
        for name in ["../secret.txt", "a/../../secret.txt", "./x", "a//b", ""] {
            let err = tree.unlink(name).expect_err(name);
            assert_eq!(err.kind(), io::ErrorKind::InvalidInput, "{name:?}: {err}");
            assert!(err.to_string().contains(&format!("{name:?}")), "the error names it: {err}");
        }
        let abs = outside.path().join("secret.txt");
        assert!(tree.unlink(abs.to_str().unwrap()).is_err(), "an absolute name is refused");
        assert!(tree.rename_noreplace("../secret.txt", "stolen").is_err());
        assert!(tree.dir("..").is_err());
        assert_eq!(std::fs::read_to_string(&abs).unwrap(), "keep");
    }

    #[test]
    fn a_symlinked_folder_is_not_followed_by_either_way_of_opening_folders() {
        let outside = tempfile::tempdir().unwrap();
        let ws = outside.path().join("ws");
        std::fs::create_dir_all(ws.join("real")).unwrap();
        std::fs::create_dir(outside.path().join("other")).unwrap();
        std::fs::write(outside.path().join("other/secret.txt"), "keep").unwrap();
        std::os::unix::fs::symlink(outside.path().join("other"), ws.join("link")).unwrap();
        std::os::unix::fs::symlink("../other", ws.join("real/rel")).unwrap();
        for no_openat2 in [false, true] {
            // A recovery's tree (it looks into every folder a record names).
            let mut tree = Tree::open_for_recovery(&ws).unwrap();
            tree.no_openat2 = no_openat2;
            for name in ["link/secret.txt", "real/rel/secret.txt"] {
                let err = tree.unlink(name).expect_err(name);
                assert!(err.to_string().contains("no longer a folder inside the workspace"), "{no_openat2}: {err}");
                let err = tree.rename_noreplace(name, "stolen.txt").expect_err(name);
                assert!(err.to_string().contains("no longer a folder inside the workspace"), "{no_openat2}: {err}");
            }
            assert!(tree.dir("real").is_ok(), "a real folder opens");
        }
        assert_eq!(std::fs::read_to_string(outside.path().join("other/secret.txt")).unwrap(), "keep");
    }
}
