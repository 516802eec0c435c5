//! What the desk keeps in its data folder: the decision journal (opened with its banners),
//! the recent workspaces and the folders open at exit (small JSON lists, written atomically).

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

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

/// Recent workspaces, most recent first, kept in `recent-workspaces.json` (written
/// atomically). A missing or unreadable file is an empty list, never an error.
pub struct Recents {
    file: PathBuf,
    lock: Mutex<()>,
}

const MAX_RECENTS: usize = 10;

impl Recents {
    pub fn new(data_dir: PathBuf) -> Self {
        Self { file: data_dir.join("recent-workspaces.json"), lock: Mutex::new(()) }
    }

    pub fn list(&self) -> Vec<String> {
        let _g = self.lock.lock().unwrap_or_else(|p| p.into_inner());
        self.read()
    }

    fn read(&self) -> Vec<String> {
        read_list(&self.file)
    }

    pub fn add(&self, root: &Path) {
        let _g = self.lock.lock().unwrap_or_else(|p| p.into_inner());
        let entry = root.display().to_string();
        let mut list = self.read();
        list.retain(|p| p != &entry);
        list.insert(0, entry);
        list.truncate(MAX_RECENTS);
        write_list(&self.file, &list, "recent workspaces");
    }
}

/// The folders open when the desk closed, opened again at the next start:
/// `open-folders.json` in the data folder (written atomically). A missing or unreadable file
/// is an empty list, never an error.
pub struct OpenFolders {
    file: PathBuf,
}

impl OpenFolders {
    pub fn new(data_dir: &Path) -> Self {
        Self { file: data_dir.join("open-folders.json") }
    }

    pub fn read(&self) -> Vec<PathBuf> {
        read_list(&self.file)
    }

    pub fn write<'a>(&self, roots: impl Iterator<Item = &'a Path>) {
        let list: Vec<&Path> = roots.collect();
        write_list(&self.file, &list, "the open folders");
    }
}

/// A JSON list kept in `file`; missing or unreadable is empty.
fn read_list<T: serde::de::DeserializeOwned>(file: &Path) -> Vec<T> {
    std::fs::read(file).ok().and_then(|b| serde_json::from_slice(&b).ok()).unwrap_or_default()
}

/// Writes `list` to `file` through a temporary file renamed over it (the old list or the
/// new, never half of one); a failure is said on stderr, naming `what` and the file.
fn write_list<T: serde::Serialize>(file: &Path, list: &[T], what: &str) {
    if let Some(dir) = file.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    let tmp = file.with_extension("json.tmp");
    let ok = serde_json::to_vec_pretty(list)
        .ok()
        .map(|bytes| std::fs::write(&tmp, bytes).and_then(|_| std::fs::rename(&tmp, file)).is_ok());
    if ok != Some(true) {
        eprintln!("resolve-desk: could not save {what} to {}", file.display());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn open_folders_are_kept_in_order_and_a_broken_file_is_an_empty_list() {
        let dir = tempfile::tempdir().unwrap();
        let open = OpenFolders::new(&dir.path().join("data"));
        assert!(open.read().is_empty(), "no file yet");
        open.write([Path::new("/w/a"), Path::new("/w/b")].into_iter());
        assert_eq!(open.read(), vec![PathBuf::from("/w/a"), PathBuf::from("/w/b")]);
        std::fs::write(dir.path().join("data/open-folders.json"), "{not json").unwrap();
        assert!(open.read().is_empty(), "an unreadable list opens nothing, and says nothing is wrong");
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
