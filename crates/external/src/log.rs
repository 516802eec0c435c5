//! A tool's stderr log: `<log dir>/<name>.log`, the user's only, rotated at a size.
//!
//! The folder is created `0700` (an existing one of ours is tightened, a shared sticky one
//! such as `/tmp` is left alone, and one owned by another user is refused); the log is
//! created `0600` (`OpenOptions::mode`, so never readable by others even for a moment) and
//! an existing one tightened. When a write would take the log past
//! [`ToolLimits::log_bytes`](crate::ToolLimits), it is renamed `<name>.log.1` (replacing the
//! older one) and a new log started, so a tool keeps at most twice that on disk.
//!
//! Every process of one tool (a replaced tool's process whose action still waits, and the
//! new one) writes through the same [`ToolLog`], so rotation is never done twice. Another
//! program writing the same file (the app and `rdesk mcp --headless` at once) is noticed:
//! the size is read from the open file, and a log renamed under us is reopened.

use std::collections::HashMap;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock, Weak};

/// One tool's log, shared by every process of that tool.
pub(crate) struct ToolLog {
    path: PathBuf,
    max_bytes: u64,
    file: Mutex<Option<File>>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// `<path>.1`: the one older log kept.
pub(crate) fn rotated(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(".1");
    name.into()
}

impl ToolLog {
    /// The log at `path` (one per path in this process; nothing is created before the first
    /// write), rotated at `max_bytes`.
    pub fn shared(path: &Path, max_bytes: u64) -> Arc<ToolLog> {
        static OPEN: OnceLock<Mutex<HashMap<PathBuf, Weak<ToolLog>>>> = OnceLock::new();
        let mut open = lock(OPEN.get_or_init(Default::default));
        open.retain(|_, log| log.strong_count() > 0);
        if let Some(log) = open.get(path).and_then(Weak::upgrade) {
            return log;
        }
        let log = Arc::new(ToolLog { path: path.to_path_buf(), max_bytes: max_bytes.max(1), file: Mutex::new(None) });
        open.insert(path.to_path_buf(), Arc::downgrade(&log));
        log
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Creates the folder and the log if needed (both private); an error names the path.
    pub fn prepare(&self) -> Result<(), String> {
        let mut file = lock(&self.file);
        self.ensure_open(&mut file).map(|_| ())
    }

    /// Appends a line of the desk's own (`--- resolve-desk: …`).
    pub fn note(&self, text: &str) {
        let _ = self.write(format!("--- resolve-desk: {text}\n").as_bytes());
    }

    /// Appends `bytes`, rotating first whenever the log would pass its size (at a line end
    /// when the bytes have one before the cut).
    pub fn write(&self, mut bytes: &[u8]) -> Result<(), String> {
        let mut slot = lock(&self.file);
        while !bytes.is_empty() {
            let file = self.ensure_open(&mut slot)?;
            let size = file.metadata().map_err(|e| self.error("read the size of", e))?.len();
            let room = self.max_bytes.saturating_sub(size);
            if room == 0 {
                self.rotate(&mut slot)?;
                continue;
            }
            let mut take = bytes.len().min(usize::try_from(room).unwrap_or(usize::MAX));
            if take < bytes.len() {
                if let Some(nl) = bytes[..take].iter().rposition(|b| *b == b'\n') {
                    take = nl + 1;
                }
            }
            file.write_all(&bytes[..take]).map_err(|e| self.error("write", e))?;
            bytes = &bytes[take..];
            if !bytes.is_empty() {
                self.rotate(&mut slot)?;
            }
        }
        Ok(())
    }

    fn error(&self, what: &str, e: std::io::Error) -> String {
        format!("cannot {what} the tool log {}: {e}", self.path.display())
    }

    /// The open log: opened (and its folder made) if needed, and opened again if it was
    /// renamed or removed under us.
    fn ensure_open<'a>(&self, slot: &'a mut Option<File>) -> Result<&'a mut File, String> {
        if slot.as_ref().is_some_and(|f| !same_file(f, &self.path)) {
            *slot = None;
        }
        if slot.is_none() {
            *slot = Some(self.open()?);
        }
        slot.as_mut().ok_or_else(|| self.error("open", std::io::Error::other("no file")))
    }

    fn rotate(&self, slot: &mut Option<File>) -> Result<(), String> {
        *slot = None;
        match std::fs::rename(&self.path, rotated(&self.path)) {
            Ok(()) => Ok(()),
            // Another program rotated it first.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(self.error("rotate", e)),
        }
    }

    #[cfg(unix)]
    fn open(&self) -> Result<File, String> {
        use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
        if let Some(dir) = self.path.parent().filter(|d| !d.as_os_str().is_empty()) {
            let folder_error = |e: std::io::Error| format!("cannot create the log folder {}: {e}", dir.display());
            std::fs::DirBuilder::new().recursive(true).mode(0o700).create(dir).map_err(folder_error)?;
            let meta = std::fs::metadata(dir).map_err(folder_error)?;
            let sticky = meta.mode() & 0o1000 != 0;
            if meta.uid() != rustix::process::geteuid().as_raw() && !sticky {
                return Err(format!(
                    "the log folder {} belongs to another user (uid {}); tool logs go in a folder of your own: remove it \
                     or point the log folder elsewhere",
                    dir.display(),
                    meta.uid()
                ));
            }
            if !sticky && meta.mode() & 0o077 != 0 {
                std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700)).map_err(folder_error)?;
            }
        }
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .mode(0o600)
            .open(&self.path)
            .map_err(|e| self.error("open", e))?;
        let mode = file.metadata().map_err(|e| self.error("open", e))?.mode();
        if mode & 0o077 != 0 {
            file.set_permissions(std::fs::Permissions::from_mode(mode & 0o700))
                .map_err(|e| self.error("protect", e))?;
        }
        Ok(file)
    }

    #[cfg(not(unix))]
    fn open(&self) -> Result<File, String> {
        if let Some(dir) = self.path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| format!("cannot create the log folder {}: {e}", dir.display()))?;
        }
        std::fs::OpenOptions::new().create(true).append(true).open(&self.path).map_err(|e| self.error("open", e))
    }
}

/// Whether the open `file` is still the one at `path`.
#[cfg(unix)]
fn same_file(file: &File, path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (file.metadata(), std::fs::metadata(path)) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}

#[cfg(not(unix))]
fn same_file(_file: &File, path: &Path) -> bool {
    path.exists()
}

/// The last `max` bytes a tool wrote to its log (lossy UTF-8), reaching into the rotated
/// `<name>.log.1` when the current log is shorter; empty before the tool first ran.
pub fn read_log_tail(path: &Path, max: u64) -> std::io::Result<String> {
    let current = tail(path, max)?;
    let older = match max.checked_sub(current.len() as u64) {
        Some(rest) if rest > 0 => tail(&rotated(path), rest)?,
        _ => Vec::new(),
    };
    let mut bytes = older;
    bytes.extend_from_slice(&current);
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

fn tail(path: &Path, max: u64) -> std::io::Result<Vec<u8>> {
    let mut f = match File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    let len = f.metadata()?.len();
    f.seek(SeekFrom::Start(len.saturating_sub(max)))?;
    let mut buf = Vec::new();
    f.take(max).read_to_end(&mut buf)?;
    Ok(buf)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_log_rotates_at_its_size_keeping_one_older_file_and_the_tail_reads_across() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("logs/t.log");
        let log = ToolLog::shared(&path, 100);
        for i in 0..30 {
            log.write(format!("line {i:02} of the tool\n").as_bytes()).unwrap();
        }
        let current = std::fs::read_to_string(&path).unwrap();
        let older = std::fs::read_to_string(rotated(&path)).unwrap();
        assert!(current.len() <= 100 && older.len() <= 100, "{} / {}", current.len(), older.len());
        assert!(current.ends_with("line 29 of the tool\n"), "{current}");
        assert!(older.ends_with('\n') && current.starts_with("line "), "cut at line ends: {older:?} {current:?}");
        assert!(!dir.path().join("logs/t.log.2").exists(), "one older file only");
        let tail = read_log_tail(&path, 150).unwrap();
        assert!(tail.len() > current.len(), "reaches into the rotated log");
        assert!(tail.ends_with(&current) && older.ends_with(&tail[..tail.len() - current.len()]), "{tail}");
        // A single write longer than the size is cut, never kept whole past it.
        log.write(&[b'x'; 250]).unwrap();
        assert!(std::fs::metadata(&path).unwrap().len() <= 100);
    }

    #[test]
    fn every_process_of_a_tool_shares_one_log() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.log");
        let a = ToolLog::shared(&path, 1000);
        let b = ToolLog::shared(&path, 1000);
        assert!(Arc::ptr_eq(&a, &b));
    }

    #[cfg(unix)]
    #[test]
    fn a_log_and_its_folder_are_private_from_creation_and_existing_ones_are_tightened() {
        use std::os::unix::fs::PermissionsExt;
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o7777;
        let dir = tempfile::tempdir().unwrap();
        let fresh = dir.path().join("new/logs/t.log");
        ToolLog::shared(&fresh, 1000).note("hello");
        assert_eq!(mode(&fresh), 0o600);
        assert_eq!(mode(fresh.parent().unwrap()), 0o700);
        let old_dir = dir.path().join("old");
        std::fs::create_dir(&old_dir).unwrap();
        std::fs::set_permissions(&old_dir, std::fs::Permissions::from_mode(0o755)).unwrap();
        let old = old_dir.join("t.log");
        std::fs::write(&old, "before\n").unwrap();
        std::fs::set_permissions(&old, std::fs::Permissions::from_mode(0o644)).unwrap();
        ToolLog::shared(&old, 10).note("after a rotation");
        assert_eq!((mode(&old), mode(&old_dir)), (0o600, 0o700));
        assert_eq!(mode(&rotated(&old)), 0o600, "the rotated log keeps its private mode");
    }
}
