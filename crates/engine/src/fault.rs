//! Test hooks for change-set commits (feature `fault-injection`, never in the app's builds).
//!
//! Every step of a commit passes a [`Point`] here first. Tests can:
//! - make the next step touching an absolute path fail once ([`fail_once_at`]); running as
//!   root, a read-only folder does not stop a rename, so this is how I/O failures are made;
//! - run a hook at every point of commits under one workspace root ([`set_hook`]): fail a
//!   chosen step, or change the disk between the plan and the commit (a race);
//! - stop a child process at a point: with `RDESK_TEST_PAUSE_AT=phase:index` in its
//!   environment, the process prints `RDESK_PAUSED phase:index` on stderr and waits for a
//!   line on stdin (kill tests `SIGKILL` it there; race tests act, then let it go on).
//!
//! Points, in order: `planned` (after verification, before anything is written), then one
//! per operation in `staging`, `parking`, `commit` and `cleanup` (index counted from 0 in
//! each phase); `sync` before the folders of a phase are synced (0 staging, 1 parking,
//! 2 commit) and `mark` before its mark is written to the record (0 `staged`, 1 `parked`,
//! 2 `committed`); `rollback` before each operation a rollback undoes (newest first).
//! Besides, every real `fsync`/`fdatasync` of a file, a folder or the record is the point
//! `fsync`, numbered from 0 in each apply (or recovery), its [`Point::target`] the
//! workspace-relative name synced (`""` for the root): a hook that fails it fails that sync
//! (nothing is synced), and a pause there stops the process just before it.

use std::collections::HashMap;
use std::io::{self, BufRead, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// One step of a commit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Point<'a> {
    /// The workspace root.
    pub root: &'a Path,
    pub phase: &'static str,
    pub index: usize,
    /// What an `fsync` point syncs (workspace-relative; `""` is the root); `""` elsewhere.
    pub target: &'a str,
}

/// What a hook makes of a point.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hook {
    Continue,
    /// The step fails with an injected I/O error.
    Fail,
}

type HookFn = Box<dyn FnMut(&Point) -> Hook + Send>;

static ARMED: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());
static HOOKS: Mutex<Option<HashMap<PathBuf, HookFn>>> = Mutex::new(None);

/// Makes the next change-set step touching `path` (absolute, canonical) fail once.
pub fn fail_once_at(path: impl Into<PathBuf>) {
    ARMED.lock().unwrap_or_else(|p| p.into_inner()).push(path.into());
}

/// Runs `hook` at every point of commits under `root` (canonical) until [`clear_hook`].
pub fn set_hook(root: impl Into<PathBuf>, hook: impl FnMut(&Point) -> Hook + Send + 'static) {
    HOOKS
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .get_or_insert_with(HashMap::new)
        .insert(root.into(), Box::new(hook));
}

pub fn clear_hook(root: &Path) {
    if let Some(map) = HOOKS.lock().unwrap_or_else(|p| p.into_inner()).as_mut() {
        map.remove(root);
    }
}

pub(crate) fn check(path: &Path) -> io::Result<()> {
    let mut armed = ARMED.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(pos) = armed.iter().position(|p| p == path) {
        armed.remove(pos);
        return Err(io::Error::other(format!("injected fault at {}", path.display())));
    }
    Ok(())
}

pub(crate) fn at(point: Point) -> io::Result<()> {
    if let Ok(spec) = std::env::var("RDESK_TEST_PAUSE_AT") {
        if spec == format!("{}:{}", point.phase, point.index) {
            let mut err = io::stderr().lock();
            let _ = writeln!(err, "RDESK_PAUSED {spec}");
            let _ = err.flush();
            drop(err);
            let mut line = String::new();
            let _ = io::stdin().lock().read_line(&mut line);
        }
    }
    // The hook runs outside the lock it is stored under (it may do anything, even apply).
    let taken = HOOKS.lock().unwrap_or_else(|p| p.into_inner()).as_mut().and_then(|m| m.remove(point.root));
    let Some(mut hook) = taken else { return Ok(()) };
    let verdict = hook(&point);
    HOOKS
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .get_or_insert_with(HashMap::new)
        .entry(point.root.to_path_buf())
        .or_insert(hook);
    match verdict {
        Hook::Continue => Ok(()),
        Hook::Fail => Err(io::Error::other(format!("injected fault at {} {}", point.phase, point.index))),
    }
}
