//! Fault injection for tests (feature `fault-injection`, never in release builds of the app).
//!
//! Running as root, a read-only folder does not stop a rename, so tests that need an I/O
//! failure in the middle of a commit arm one here: the next commit step that touches the
//! armed absolute path fails with an injected error, once.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

static ARMED: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// Makes the next change-set step touching `path` (absolute, canonical) fail once.
pub fn fail_once_at(path: impl Into<PathBuf>) {
    ARMED.lock().unwrap_or_else(|p| p.into_inner()).push(path.into());
}

pub(crate) fn check(path: &Path) -> io::Result<()> {
    let mut armed = ARMED.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(pos) = armed.iter().position(|p| p == path) {
        armed.remove(pos);
        return Err(io::Error::other(format!("injected fault at {}", path.display())));
    }
    Ok(())
}
