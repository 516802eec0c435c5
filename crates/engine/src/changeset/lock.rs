//! The workspace lock: an advisory `flock` on the workspace root folder itself (no lock
//! file to leave behind). Every apply and every recovery holds it, so two processes
//! resolving in the same workspace (two windows, the app and `rdesk`) never interleave their
//! commits. The kernel releases it when the process dies, which is how recovery tells an
//! interrupted apply from one still running.

use std::io;
use std::os::fd::OwnedFd;
use std::path::Path;
use std::time::{Duration, Instant};

use rustix::fs::{FlockOperation, Mode, OFlags};

/// How long an apply waits for another one in the same workspace to finish.
pub const LOCK_WAIT: Duration = Duration::from_secs(3);

pub(super) struct WorkspaceLock {
    _fd: OwnedFd,
}

impl WorkspaceLock {
    /// Takes the lock now, or `Ok(None)` when another process (or another apply) holds it.
    pub(super) fn try_acquire(root: &Path) -> io::Result<Option<Self>> {
        let fd = rustix::fs::open(root, OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC, Mode::empty())?;
        match rustix::fs::flock(&fd, FlockOperation::NonBlockingLockExclusive) {
            Ok(()) => Ok(Some(Self { _fd: fd })),
            Err(rustix::io::Errno::WOULDBLOCK) => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    /// Takes the lock, waiting up to `wait` for the holder to finish; `Ok(None)` when it
    /// did not.
    pub(super) fn acquire(root: &Path, wait: Duration) -> io::Result<Option<Self>> {
        let deadline = Instant::now() + wait;
        loop {
            if let Some(lock) = Self::try_acquire(root)? {
                return Ok(Some(lock));
            }
            if Instant::now() >= deadline {
                return Ok(None);
            }
            // flock has no timed wait; poll the lock a few times a second.
            std::thread::sleep(Duration::from_millis(25));
        }
    }
}
