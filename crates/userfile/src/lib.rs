//! # resolve-userfile
//!
//! The files of one user that several Resolve Desk processes may write at once (the trust
//! store, recent and open folders, `desk.json`, `agent.json`, the agents' settings that
//! `rdesk setup` merges into): one way to change them, so that no process's change is lost.
//!
//! - [`update`] holds an exclusive advisory lock (`flock`) on a lock file beside the file
//!   (`<name>.lock`) across read, change and write; the wait for it is bounded and its error
//!   names the file and the process holding it. The file is re-read under the lock, so a
//!   change is made to what the last writer left.
//! - Every write is atomic ([`write_atomic`]): a temporary file in the same folder, fsync,
//!   rename over the file, fsync of the folder. A reader never sees half a file, and needs no
//!   lock ([`read`]).
//! - A file that is not valid JSON is reported with its path, line and column
//!   ([`UserFileError::Invalid`]) and never replaced by an empty one; [`set_aside`] moves it
//!   to `<name>.bad-<time>` only where the person asked for it.
//!
//! The lock dies with its process (the kernel drops a `flock` when its last descriptor
//! closes), so a process killed while holding it blocks nobody.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Seek, Write};
use std::os::fd::AsRawFd;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::Value;

/// How long [`update`] waits for another process's lock by default.
pub const LOCK_WAIT: Duration = Duration::from_secs(10);

/// Why a user file could not be read or changed.
#[derive(Debug)]
pub enum UserFileError {
    /// Reading failed (other than "it does not exist").
    Read { path: PathBuf, source: io::Error },
    /// It is not valid JSON.
    Invalid { path: PathBuf, line: usize, column: usize, message: String },
    /// The lock could not be had within the wait.
    Locked { path: PathBuf, holder: Option<String>, waited: Duration },
    /// The lock file could not be opened or locked.
    Lock { path: PathBuf, source: io::Error },
    /// Writing failed; the file holds what it held before.
    Write { path: PathBuf, source: io::Error },
    /// The change refused (its own message).
    Refused(String),
}

impl std::fmt::Display for UserFileError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            UserFileError::Read { path, source } => write!(f, "cannot read {}: {source}", path.display()),
            UserFileError::Invalid { path, line, column, message } => write!(
                f,
                "{} is not valid JSON (line {line}, column {column}: {message}); fix it by hand or move it away — \
                 nothing was written to it",
                path.display()
            ),
            UserFileError::Locked { path, holder, waited } => write!(
                f,
                "{} is being changed by {} and stayed locked for {} s; nothing was written. Try again once it has \
                 finished (its lock file is {}.lock)",
                path.display(),
                holder.as_deref().unwrap_or("another process"),
                waited.as_secs(),
                path.display()
            ),
            UserFileError::Lock { path, source } => {
                write!(f, "cannot lock {} (lock file {}.lock): {source}", path.display(), path.display())
            }
            UserFileError::Write { path, source } => {
                write!(f, "cannot write {}: {source}; it holds what it held before", path.display())
            }
            UserFileError::Refused(message) => f.write_str(message),
        }
    }
}

impl std::error::Error for UserFileError {}

/// The lock file of `path`: `<name>.lock` beside it.
pub fn lock_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().map(|n| n.to_os_string()).unwrap_or_default();
    name.push(".lock");
    path.with_file_name(name)
}

/// An exclusive lock on a user file, held until dropped (or until the process ends).
pub struct Lock {
    file: File,
}

impl Drop for Lock {
    fn drop(&mut self) {
        // SAFETY: the descriptor is open for the lifetime of `self.file`.
        unsafe { libc::flock(self.file.as_raw_fd(), libc::LOCK_UN) };
    }
}

/// Takes the exclusive lock of `path` (creating its folder and lock file, 0600), waiting at
/// most `wait` for another process to release it.
pub fn lock(path: &Path, wait: Duration) -> Result<Lock, UserFileError> {
    let lock_file = lock_path(path);
    let lock_err = |source| UserFileError::Lock { path: path.to_path_buf(), source };
    if let Some(dir) = lock_file.parent().filter(|d| !d.as_os_str().is_empty()) {
        fs::create_dir_all(dir).map_err(lock_err)?;
    }
    let mut file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .open(&lock_file)
        .map_err(lock_err)?;
    let started = Instant::now();
    loop {
        // SAFETY: a valid open descriptor.
        if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0 {
            break;
        }
        let e = io::Error::last_os_error();
        if e.raw_os_error() != Some(libc::EWOULDBLOCK) {
            return Err(lock_err(e));
        }
        if started.elapsed() >= wait {
            return Err(UserFileError::Locked { path: path.to_path_buf(), holder: holder(&lock_file), waited: wait });
        }
        // flock has no timed wait: poll the non-blocking form until the deadline.
        std::thread::sleep(Duration::from_millis(5));
    }
    // Who holds it, for the error another process may have to give.
    let _ = file.set_len(0);
    let _ = file.rewind();
    let _ = write!(file, "{}", std::process::id());
    Ok(Lock { file })
}

/// The process a lock file names, with its command line when it is still running.
fn holder(lock_file: &Path) -> Option<String> {
    let pid: u32 = fs::read_to_string(lock_file).ok()?.trim().parse().ok()?;
    let cmdline = fs::read(format!("/proc/{pid}/cmdline")).ok();
    Some(match cmdline {
        Some(c) if !c.is_empty() => {
            let words: Vec<String> = c
                .split(|b| *b == 0)
                .filter(|w| !w.is_empty())
                .map(|w| String::from_utf8_lossy(w).into_owned())
                .collect();
            format!("process {pid} ({})", words.join(" "))
        }
        _ => format!("process {pid}"),
    })
}

/// The bytes of `path`, `None` when it does not exist.
pub fn read_bytes(path: &Path) -> Result<Option<Vec<u8>>, UserFileError> {
    match fs::read(path) {
        Ok(b) => Ok(Some(b)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(UserFileError::Read { path: path.to_path_buf(), source }),
    }
}

/// Parses `bytes` read from `path` as JSON (an empty or blank file is `None`, as if absent).
pub fn parse(path: &Path, bytes: &[u8]) -> Result<Option<Value>, UserFileError> {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Ok(None);
    }
    serde_json::from_slice(bytes).map(Some).map_err(|e| UserFileError::Invalid {
        path: path.to_path_buf(),
        line: e.line(),
        column: e.column(),
        message: e.to_string().split(" at line ").next().unwrap_or_default().to_string(),
    })
}

/// The JSON in `path` (no lock needed: writers replace it atomically); `None` when absent.
pub fn read(path: &Path) -> Result<Option<Value>, UserFileError> {
    match read_bytes(path)? {
        Some(b) => parse(path, &b),
        None => Ok(None),
    }
}

/// Writes `bytes` to `path` atomically: a temporary file in the same folder (mode `mode`),
/// fsync, rename over `path`, fsync of the folder.
pub fn write_atomic(path: &Path, bytes: &[u8], mode: u32) -> Result<(), UserFileError> {
    let err = |source| UserFileError::Write { path: path.to_path_buf(), source };
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    fs::create_dir_all(dir).map_err(err)?;
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let tmp = dir.join(format!(".{name}.tmp-{}-{}", std::process::id(), nanos()));
    let written = (|| {
        let mut f = OpenOptions::new().write(true).create_new(true).mode(mode).open(&tmp)?;
        f.set_permissions(fs::Permissions::from_mode(mode))?;
        f.write_all(bytes)?;
        f.sync_all()?;
        fs::rename(&tmp, path)?;
        File::open(dir)?.sync_all()
    })();
    if written.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    written.map_err(err)
}

fn nanos() -> u128 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0)
}

/// What an [`update`]'s change decided.
pub enum Change<T> {
    /// Write these bytes, then return `T`.
    Write(Vec<u8>, T),
    /// Leave the file as it is and return `T`.
    Keep(T),
}

/// Changes `path` under its lock: `change` gets what the file holds now (`None`: absent) and
/// says what to write. The default wait is [`LOCK_WAIT`]; the new file gets `mode`. The
/// change may fail with its caller's own error (`E`), which is returned as it is and leaves
/// the file untouched.
pub fn update<T, E: From<UserFileError>>(
    path: &Path,
    mode: u32,
    change: impl FnOnce(Option<&[u8]>) -> Result<Change<T>, E>,
) -> Result<T, E> {
    update_waiting(path, mode, LOCK_WAIT, change)
}

/// [`update`] with its own lock wait.
pub fn update_waiting<T, E: From<UserFileError>>(
    path: &Path,
    mode: u32,
    wait: Duration,
    change: impl FnOnce(Option<&[u8]>) -> Result<Change<T>, E>,
) -> Result<T, E> {
    let _lock = lock(path, wait)?;
    let now = read_bytes(path)?;
    match change(now.as_deref())? {
        Change::Keep(t) => Ok(t),
        Change::Write(bytes, t) => {
            write_atomic(path, &bytes, mode)?;
            Ok(t)
        }
    }
}

/// The bytes of `value` as written to a user file: pretty JSON with a final newline.
pub fn to_bytes(value: &impl serde::Serialize) -> Result<Vec<u8>, UserFileError> {
    let mut text = serde_json::to_vec_pretty(value).map_err(|e| UserFileError::Refused(e.to_string()))?;
    text.push(b'\n');
    Ok(text)
}

/// [`update`] of a JSON file: `change` gets its value (`None`: absent or blank) and returns
/// the new value to write (`None`: leave it), written pretty with a final newline. A file that
/// is not valid JSON is an error and stays as it is.
pub fn update_json<T, E: From<UserFileError>>(
    path: &Path,
    mode: u32,
    change: impl FnOnce(Option<Value>) -> Result<(Option<Value>, T), E>,
) -> Result<T, E> {
    update(path, mode, |bytes| {
        let value = match bytes {
            Some(b) => parse(path, b)?,
            None => None,
        };
        let (next, t) = change(value)?;
        Ok(match next {
            Some(v) => Change::Write(to_bytes(&v)?, t),
            None => Change::Keep(t),
        })
    })
}

/// Moves a bad `path` aside to `<name>.bad-<unix seconds>` (only where the person asked for
/// it) and returns where it went.
pub fn set_aside(path: &Path) -> Result<PathBuf, UserFileError> {
    let _lock = lock(path, LOCK_WAIT)?;
    let secs = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
    let mut name = path.file_name().map(|n| n.to_os_string()).unwrap_or_default();
    name.push(format!(".bad-{secs}"));
    let aside = path.with_file_name(name);
    fs::rename(path, &aside).map_err(|source| UserFileError::Write { path: path.to_path_buf(), source })?;
    Ok(aside)
}

/// Reads a whole file into a string (for callers that keep non-JSON formats).
pub fn read_to_string(path: &Path) -> Result<Option<String>, UserFileError> {
    match File::open(path) {
        Ok(mut f) => {
            let mut s = String::new();
            f.read_to_string(&mut s).map_err(|source| UserFileError::Read { path: path.to_path_buf(), source })?;
            Ok(Some(s))
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(UserFileError::Read { path: path.to_path_buf(), source }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn update_json_rereads_under_the_lock_and_keeps_the_file_whole() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/state.json");
        update_json(&path, 0o600, |v| {
            assert!(v.is_none());
            Ok::<_, UserFileError>((Some(json!({"a": 1})), ()))
        })
        .unwrap();
        update_json(&path, 0o600, |v| {
            let mut v = v.unwrap();
            v["b"] = json!(2);
            Ok::<_, UserFileError>((Some(v), ()))
        })
        .unwrap();
        assert_eq!(read(&path).unwrap(), Some(json!({"a": 1, "b": 2})));
        let mode = fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        // No temporary file is left beside it.
        let names: Vec<String> = fs::read_dir(path.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert!(names.iter().all(|n| !n.contains(".tmp-")), "{names:?}");
    }

    #[test]
    fn bad_json_is_reported_with_its_line_and_left_as_it_is() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("trusted.json");
        fs::write(&path, "{\n  \"a\": 1,\n  oops\n}\n").unwrap();
        let err = update_json(&path, 0o600, |_| Ok::<_, UserFileError>((Some(json!({})), ()))).unwrap_err();
        let text = err.to_string();
        assert!(matches!(err, UserFileError::Invalid { line: 3, .. }), "{text}");
        assert!(text.contains("trusted.json") && text.contains("line 3"), "{text}");
        assert_eq!(fs::read_to_string(&path).unwrap(), "{\n  \"a\": 1,\n  oops\n}\n");
        let aside = set_aside(&path).unwrap();
        assert!(aside.to_string_lossy().contains("trusted.json.bad-"));
        assert!(!path.exists() && aside.exists());
    }

    #[test]
    fn a_held_lock_times_out_naming_its_holder() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("desk.json");
        let held = lock(&path, LOCK_WAIT).unwrap();
        // flock locks belong to the open file description: a second open in this process
        // contends like another process would.
        let err = update_waiting(&path, 0o600, Duration::from_millis(50), |_| Ok::<_, UserFileError>(Change::Keep(())))
            .err()
            .unwrap();
        let text = err.to_string();
        assert!(text.contains(&format!("process {}", std::process::id())), "{text}");
        assert!(text.contains("desk.json"), "{text}");
        drop(held);
        update_waiting(&path, 0o600, Duration::from_millis(50), |_| {
            Ok::<_, UserFileError>(Change::Write(b"{}".to_vec(), ()))
        })
        .unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"{}");
    }
}
