//! What the desk keeps in its data folder: the decision journal (opened with its banners),
//! the recent workspaces and the folders open at exit (small JSON lists, changed under their
//! lock and written atomically by `resolve_userfile`).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use resolve_journal::Writer;

use crate::notices::{self, Notices};

/// Opens the decision journal of the data folder `data_dir` and its writer thread. A journal
/// that cannot be opened, or a write that fails, becomes a banner that stays while the
/// journal is broken (a later successful write removes it).
pub fn open_journal(data_dir: &Path, notices: &Arc<Notices>) -> Option<Arc<Writer>> {
    let n = notices.clone();
    let report = Box::new(move |path: &Path, result: Result<(), &resolve_journal::JournalError>| match result {
        Ok(()) => n.remove(notices::JOURNAL),
        Err(e) => {
            eprintln!("resolve-desk: could not journal a decision: {e}");
            n.show(notices::journal_write_failed(path, e));
        }
    });
    match resolve_desk_core::journal::open_writer(data_dir, report) {
        Ok(w) => Some(w),
        Err(e) => {
            let path = data_dir.join(resolve_desk_core::journal::JOURNAL_FILE);
            eprintln!("resolve-desk: {e}; decisions of this session will not be kept after it closes");
            notices.show(notices::journal_unopenable(&path, &e));
            None
        }
    }
}

/// `$XDG_DATA_HOME/resolve-desk`, else `~/.local/share/resolve-desk` (one definition for
/// the window and `rdesk hook`).
pub use resolve_desk_core::journal::default_data_dir;

/// Recent workspaces, most recent first, kept in `recent-workspaces.json`. Every window
/// changes it under the file's lock, re-read under it and written atomically
/// (`resolve_userfile`), so two windows opening folders at once both get theirs in.
pub struct Recents {
    file: PathBuf,
}

const MAX_RECENTS: usize = 10;

impl Recents {
    pub fn new(data_dir: PathBuf) -> Self {
        Self { file: data_dir.join("recent-workspaces.json") }
    }

    /// The list; empty when there is none, or when the file is not a JSON list (said on
    /// stderr with its path and line; the file is left for the person to fix).
    pub fn list(&self) -> Vec<String> {
        read_list(&self.file, "recent workspaces")
    }

    /// Puts `root` first. A file that is not a JSON list is not replaced (said on stderr).
    pub fn add(&self, root: &Path) {
        let entry = root.display().to_string();
        change_list(&self.file, "recent workspaces", |list: &mut Vec<String>| {
            list.retain(|p| p != &entry);
            list.insert(0, entry);
            list.truncate(MAX_RECENTS);
        });
    }
}

/// The folders open when the desk closed, opened again at the next start:
/// `open-folders.json` in the data folder (changed under its lock, written atomically).
pub struct OpenFolders {
    file: PathBuf,
}

impl OpenFolders {
    pub fn new(data_dir: &Path) -> Self {
        Self { file: data_dir.join("open-folders.json") }
    }

    /// The list; empty when there is none or it is not a JSON list (said on stderr).
    pub fn read(&self) -> Vec<PathBuf> {
        read_list(&self.file, "the open folders")
    }

    /// Replaces the list with `roots`. A file that is not a JSON list is not replaced.
    pub fn write<'a>(&self, roots: impl Iterator<Item = &'a Path>) {
        let roots: Vec<PathBuf> = roots.map(Path::to_path_buf).collect();
        change_list(&self.file, "the open folders", |list: &mut Vec<PathBuf>| *list = roots);
    }
}

/// A JSON list kept in `file`, or why it cannot be read.
fn try_read_list<T: serde::de::DeserializeOwned>(
    file: &Path,
    bytes: Option<&[u8]>,
) -> Result<Vec<T>, resolve_userfile::UserFileError> {
    match bytes.map(|b| resolve_userfile::parse(file, b)).transpose()?.flatten() {
        None => Ok(Vec::new()),
        Some(v) => serde_json::from_value(v).map_err(|e| {
            resolve_userfile::UserFileError::Refused(format!(
                "{} does not hold a list of folders ({e}); fix it by hand or move it away — nothing was written to it",
                file.display()
            ))
        }),
    }
}

/// A JSON list kept in `file`; missing is empty, and so is a bad file (said on stderr).
fn read_list<T: serde::de::DeserializeOwned>(file: &Path, what: &str) -> Vec<T> {
    resolve_userfile::read_bytes(file).and_then(|b| try_read_list(file, b.as_deref())).unwrap_or_else(|e| {
        eprintln!("resolve-desk: cannot read {what}: {e}");
        Vec::new()
    })
}

/// Changes the list in `file` under its lock (re-read under it, written atomically); a
/// failure, or a file that is not a JSON list, is said on stderr naming `what` and the file,
/// and the file stays as it was.
fn change_list<T: serde::Serialize + serde::de::DeserializeOwned>(
    file: &Path,
    what: &str,
    change: impl FnOnce(&mut Vec<T>),
) {
    let changed = resolve_userfile::update(file, 0o600, |bytes| {
        let mut list = try_read_list(file, bytes)?;
        change(&mut list);
        Ok::<_, resolve_userfile::UserFileError>(resolve_userfile::Change::Write(
            resolve_userfile::to_bytes(&list)?,
            (),
        ))
    });
    if let Err(e) = changed {
        eprintln!("resolve-desk: could not save {what}: {e}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn open_folders_are_kept_in_order_and_a_broken_file_is_an_empty_list_never_overwritten() {
        let dir = tempfile::tempdir().unwrap();
        let open = OpenFolders::new(&dir.path().join("data"));
        assert!(open.read().is_empty(), "no file yet");
        open.write([Path::new("/w/a"), Path::new("/w/b")].into_iter());
        assert_eq!(open.read(), vec![PathBuf::from("/w/a"), PathBuf::from("/w/b")]);
        std::fs::write(dir.path().join("data/open-folders.json"), "{not json").unwrap();
        assert!(open.read().is_empty(), "an unreadable list opens nothing (and says so on stderr)");
        open.write([Path::new("/w/c")].into_iter());
        let kept = std::fs::read_to_string(dir.path().join("data/open-folders.json")).unwrap();
        assert_eq!(kept, "{not json", "a bad file is not replaced");
    }

    #[test]
    fn recents_added_from_many_threads_at_once_are_all_kept() {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("data");
        std::thread::scope(|s| {
            for i in 0..MAX_RECENTS {
                let data = data.clone();
                // Each its own `Recents`, as two windows would have.
                s.spawn(move || Recents::new(data).add(Path::new(&format!("/w/{i}"))));
            }
        });
        let mut got = Recents::new(data).list();
        got.sort();
        let mut want: Vec<String> = (0..MAX_RECENTS).map(|i| format!("/w/{i}")).collect();
        want.sort();
        assert_eq!(got, want);
    }

    #[test]
    fn recents_are_most_recent_first_without_duplicates() {
        let dir = tempfile::tempdir().unwrap();
        let r = Recents::new(dir.path().join("data"));
        assert!(r.list().is_empty(), "no file yet is an empty list");
        r.add(Path::new("/a"));
        r.add(Path::new("/b"));
        r.add(Path::new("/a"));
        assert_eq!(r.list(), vec!["/a", "/b"]);
    }
}
