//! The user-only local socket the app serves its session on.
//!
//! Where: `$XDG_RUNTIME_DIR/resolve-desk/<hash>.sock`, or `/tmp/resolve-desk-<uid>/<hash>.sock`
//! without a runtime directory; `<hash>` is derived from the canonical workspace root, so
//! every `rdesk mcp --workspace DIR` finds the window that has DIR open. The folder is 0700 and
//! the socket 0600 (only the same user can connect; no TCP port); a folder owned by someone
//! else, or open to others, is refused.
//!
//! Both ends check who is at the other end before a byte is sent: the desk serves a connection
//! only when its peer (`SO_PEERCRED`) runs as the desk's own user, and [`connect_checked`]
//! (what `rdesk mcp` uses) connects only to a socket owned by its user in a private folder of
//! its user, and keeps the connection only when the listening process runs as its user.

use std::os::unix::fs::{DirBuilderExt, FileTypeExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use resolve_engine::Session;
use tokio::net::{UnixListener, UnixStream};
use tokio::task::{JoinHandle, JoinSet};
use tokio_util::sync::CancellationToken;

use crate::server::serve_until;

/// Why the socket could not be served.
#[derive(Debug, thiserror::Error)]
pub enum SocketError {
    #[error("cannot create the socket folder {path}: {source}")]
    CreateDir { path: PathBuf, source: std::io::Error },
    #[error(
        "the socket folder {path} is not safe: {problem}. Remove it (or fix it: a folder owned by you with mode 0700) and try again."
    )]
    UnsafeDir { path: PathBuf, problem: String },
    #[error("another Resolve Desk already serves this workspace on {0}; use that window (or close it first).")]
    AlreadyServed(PathBuf),
    #[error("cannot listen on {path}: {source}")]
    Bind { path: PathBuf, source: std::io::Error },
    #[error(
        "the socket path {0} is longer than the {MAX_SOCKET_PATH} bytes a Unix socket allows; set XDG_RUNTIME_DIR to a shorter folder (owned by you, mode 0700) and try again."
    )]
    PathTooLong(PathBuf),
    /// What is at a desk's socket path is not this user's desk: nothing was sent to it.
    #[error(
        "refusing the desk socket {path}: {problem}. Nothing was sent to it: another user may have put it there to read your agent's calls and answer them. Remove it if it is yours to remove (or ask an administrator), or set XDG_RUNTIME_DIR to a folder owned by you with mode 0700, then try again."
    )]
    NotYours { path: PathBuf, problem: String },
    #[error("cannot connect to the desk's socket {path}: {source}")]
    Connect { path: PathBuf, source: std::io::Error },
}

/// The longest socket path Linux accepts (`sun_path` is 108 bytes with its NUL).
pub const MAX_SOCKET_PATH: usize = 107;

/// Refuses a socket path too long to bind or connect to, with an error that says what to do.
pub fn check_socket_path(path: &Path) -> Result<(), SocketError> {
    if path.as_os_str().len() > MAX_SOCKET_PATH {
        return Err(SocketError::PathTooLong(path.into()));
    }
    Ok(())
}

fn uid() -> u32 {
    // SAFETY: getuid has no preconditions and cannot fail.
    unsafe { libc::getuid() }
}

/// The user files and sockets are created as, and the only one allowed at the other end.
fn euid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

/// The folder the sockets live in (not created by this call).
pub fn runtime_dir() -> PathBuf {
    match std::env::var_os("XDG_RUNTIME_DIR").filter(|d| !d.is_empty() && Path::new(d).is_absolute()) {
        Some(dir) => PathBuf::from(dir).join("resolve-desk"),
        None => std::env::temp_dir().join(format!("resolve-desk-{}", uid())),
    }
}

/// The socket of the desk that has `root` open.
pub fn socket_path(root: &Path) -> PathBuf {
    socket_path_in(&runtime_dir(), root)
}

/// The socket of the desk that has `root` open, in the socket folder `dir` (see [`runtime_dir`]).
pub fn socket_path_in(dir: &Path, root: &Path) -> PathBuf {
    let canonical = std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
    let hash = blake3::hash(canonical.as_os_str().as_encoded_bytes()).to_hex();
    dir.join(format!("{}.sock", &hash[..24]))
}

/// Creates `dir` 0700 if missing; refuses it unless it is a real folder owned by this user
/// that nobody else can enter. (The app's control socket lives in the same folder.)
pub fn ensure_private_dir(dir: &Path) -> Result<(), SocketError> {
    if let Some(parent) = dir.parent() {
        std::fs::create_dir_all(parent).map_err(|source| SocketError::CreateDir { path: parent.into(), source })?;
    }
    match std::fs::DirBuilder::new().mode(0o700).create(dir) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(source) => return Err(SocketError::CreateDir { path: dir.into(), source }),
    }
    let meta = std::fs::symlink_metadata(dir).map_err(|source| SocketError::CreateDir { path: dir.into(), source })?;
    private_dir_problem(&meta).map_or(Ok(()), |problem| Err(SocketError::UnsafeDir { path: dir.into(), problem }))
}

/// Why a folder (its `symlink_metadata`) is not a private folder of this user, if it is not.
fn private_dir_problem(meta: &std::fs::Metadata) -> Option<String> {
    if !meta.file_type().is_dir() {
        return Some("it is not a folder (a file or a symbolic link is in its place)".into());
    }
    if meta.uid() != euid() {
        return Some(format!("it belongs to user id {}, not to you (user id {})", meta.uid(), euid()));
    }
    if meta.mode() & 0o077 != 0 {
        return Some(format!("its mode is {:o}, open to other users (it must be 0700)", meta.mode() & 0o777));
    }
    None
}

/// Connects to the desk socket at `path`, checking who is there before anything is sent:
/// its folder must be a real folder owned by this user with no access for others, the socket
/// must be a socket owned by this user, and the process listening on it must run as this user
/// (`SO_PEERCRED`). `Ok(None)` when no desk is there (no folder, no socket, or a socket a
/// crashed desk left behind, which refuses connections); [`SocketError::NotYours`] when
/// something of another user is there (then nothing must be started in its place either).
pub async fn connect_checked(path: &Path) -> Result<Option<UnixStream>, SocketError> {
    check_socket_path(path)?;
    let not_yours = |problem: String| SocketError::NotYours { path: path.into(), problem };
    let dir = path.parent().unwrap_or(Path::new("/"));
    match std::fs::symlink_metadata(dir) {
        Ok(meta) => {
            if let Some(problem) = private_dir_problem(&meta) {
                return Err(not_yours(format!("its folder {}: {problem}", dir.display())));
            }
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => return Err(SocketError::Connect { path: path.into(), source }),
    }
    match std::fs::symlink_metadata(path) {
        Ok(meta) => {
            if !meta.file_type().is_socket() {
                return Err(not_yours("it is not a socket (a file or a symbolic link is in its place)".into()));
            }
            if meta.uid() != euid() {
                return Err(not_yours(format!(
                    "it belongs to user id {}, not to you (user id {})",
                    meta.uid(),
                    euid()
                )));
            }
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => return Err(SocketError::Connect { path: path.into(), source }),
    }
    let stream = match UnixStream::connect(path).await {
        Ok(stream) => stream,
        // A socket left behind by a desk that crashed (or one just removed).
        Err(e) if matches!(e.kind(), std::io::ErrorKind::ConnectionRefused | std::io::ErrorKind::NotFound) => {
            return Ok(None)
        }
        Err(source) => return Err(SocketError::Connect { path: path.into(), source }),
    };
    match peer_problem(&stream) {
        None => Ok(Some(stream)),
        Some(problem) => Err(not_yours(format!("the process listening on it {problem}"))),
    }
}

/// Why the process at the other end of `stream` is not this user's, if it is not
/// (`SO_PEERCRED`).
pub fn peer_problem(stream: &UnixStream) -> Option<String> {
    match stream.peer_cred() {
        Ok(cred) if cred.uid() == euid() => None,
        Ok(cred) => Some(format!(
            "runs as user id {}{}, not as you (user id {})",
            cred.uid(),
            cred.pid().map(|pid| format!(" (pid {pid})")).unwrap_or_default(),
            euid()
        )),
        Err(e) => Some(format!("cannot be identified ({e})")),
    }
}

/// A running socket server. Closing it (or dropping it) stops accepting and removes the
/// socket; [`close`](Self::close) also closes the session and lets connected clients know.
pub struct SocketServer {
    path: PathBuf,
    inode: (u64, u64),
    session: Arc<Session>,
    shutdown: CancellationToken,
    accept: Option<JoinHandle<()>>,
}

/// Serves `session` on a Unix socket at `path` (see [`socket_path`]): each connection is an
/// MCP client served by [`crate::serve`], all sharing the session. Must be called inside a
/// tokio runtime.
pub fn listen(path: &Path, session: Arc<Session>) -> Result<SocketServer, SocketError> {
    let (listener, inode) = bind_private(path)?;
    let shutdown = CancellationToken::new();
    let accept = tokio::spawn(accept_loop(listener, path.into(), session.clone(), shutdown.clone()));
    Ok(SocketServer { path: path.into(), inode, session, shutdown, accept: Some(accept) })
}

/// Binds a socket only this user can reach at `path`: the path's length checked, its folder a
/// private folder of this user (0700, made if missing), the socket 0600; refused when a live
/// server already listens there, a socket left by a crashed one replaced. Returns the listener
/// and the socket's (device, inode), so its owner removes only its own socket. Every socket of
/// the desk (the MCP sockets, the app's control socket) is bound here. Must be called inside a
/// tokio runtime.
pub fn bind_private(path: &Path) -> Result<(UnixListener, (u64, u64)), SocketError> {
    check_socket_path(path)?;
    let dir = path.parent().unwrap_or(Path::new("/"));
    ensure_private_dir(dir)?;
    if std::fs::symlink_metadata(path).is_ok() {
        if std::os::unix::net::UnixStream::connect(path).is_ok() {
            return Err(SocketError::AlreadyServed(path.into()));
        }
        // A socket left behind by a desk that crashed.
        let _ = std::fs::remove_file(path);
    }
    let listener = UnixListener::bind(path).map_err(|source| SocketError::Bind { path: path.into(), source })?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))
        .map_err(|source| SocketError::Bind { path: path.into(), source })?;
    let meta = std::fs::symlink_metadata(path).map_err(|source| SocketError::Bind { path: path.into(), source })?;
    Ok((listener, (meta.dev(), meta.ino())))
}

async fn accept_loop(listener: UnixListener, path: PathBuf, session: Arc<Session>, shutdown: CancellationToken) {
    let mut connections = JoinSet::new();
    loop {
        tokio::select! {
            _ = shutdown.cancelled() => break,
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => {
                    // Only this user's processes are served; anyone else is closed on unread.
                    if let Some(problem) = peer_problem(&stream) {
                        eprintln!(
                            "resolve-desk: refused a connection to the MCP socket {}: the connecting process {problem}; nothing was read from it or sent to it.",
                            path.display()
                        );
                        continue;
                    }
                    let (r, w) = stream.into_split();
                    connections.spawn(serve_until(session.clone(), r, w, shutdown.child_token()));
                }
                Err(_) => {
                    // Out of file descriptors and the like: try again shortly.
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            },
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
        }
    }
    drop(listener);
    // Answers in flight (e.g. `resolve` told that the desk closed) are flushed by each
    // connection within two seconds of the shutdown; do not wait longer than that.
    let _ =
        tokio::time::timeout(Duration::from_secs(3), async { while connections.join_next().await.is_some() {} }).await;
}

impl SocketServer {
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Closes the desk for its clients: the session is closed (a `resolve` waiting for the
    /// person ends with a `closed` error, nothing is applied, later calls say the desk is
    /// closed), those answers are sent, then every connection ends and the socket is removed.
    pub async fn close(mut self) {
        self.session.close();
        self.remove_socket();
        self.shutdown.cancel();
        if let Some(accept) = self.accept.take() {
            let _ = accept.await;
        }
    }

    fn remove_socket(&self) {
        // Only our own socket: a newer desk may have replaced it.
        if let Ok(meta) = std::fs::symlink_metadata(&self.path) {
            if (meta.dev(), meta.ino()) == self.inode {
                let _ = std::fs::remove_file(&self.path);
            }
        }
    }
}

impl Drop for SocketServer {
    fn drop(&mut self) {
        self.remove_socket();
        self.shutdown.cancel();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_socket_path_too_long_for_unix_sockets_is_refused_with_what_to_do() {
        let long = PathBuf::from(format!("/tmp/{}/x.sock", "d".repeat(MAX_SOCKET_PATH)));
        let err = check_socket_path(&long).unwrap_err().to_string();
        assert!(err.contains(&long.display().to_string()) && err.contains("XDG_RUNTIME_DIR"), "{err}");
        let fits = PathBuf::from(format!("/{}", "d".repeat(MAX_SOCKET_PATH - 1)));
        assert!(check_socket_path(&fits).is_ok(), "{MAX_SOCKET_PATH} bytes fit");
    }

    #[test]
    fn socket_path_depends_on_the_canonical_root_only() {
        let dir = tempfile::tempdir().unwrap();
        let a = socket_path(dir.path());
        let b = socket_path(&dir.path().join("."));
        assert_eq!(a, b);
        let other = tempfile::tempdir().unwrap();
        assert_ne!(a, socket_path(other.path()));
        assert!(a.to_string_lossy().len() < 100, "fits a sockaddr_un: {}", a.display());
    }

    #[test]
    fn a_folder_open_to_others_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let sockets = dir.path().join("resolve-desk");
        ensure_private_dir(&sockets).unwrap();
        assert_eq!(std::fs::metadata(&sockets).unwrap().mode() & 0o777, 0o700);
        std::fs::set_permissions(&sockets, std::fs::Permissions::from_mode(0o755)).unwrap();
        let err = ensure_private_dir(&sockets).unwrap_err().to_string();
        assert!(err.contains("755") && err.contains("0700"), "{err}");
    }

    /// A private socket folder in a temp dir, and the path of a socket in it.
    fn private_socket() -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let sockets = dir.path().join("resolve-desk");
        ensure_private_dir(&sockets).unwrap();
        (dir, sockets.join("desk.sock"))
    }

    #[tokio::test]
    async fn no_folder_or_no_socket_means_no_desk() {
        let (dir, sock) = private_socket();
        assert!(connect_checked(&sock).await.unwrap().is_none(), "no socket");
        assert!(connect_checked(&dir.path().join("missing/desk.sock")).await.unwrap().is_none(), "no folder");
    }

    #[tokio::test]
    async fn a_socket_left_by_a_crashed_desk_means_no_desk() {
        let (_dir, sock) = private_socket();
        drop(std::os::unix::net::UnixListener::bind(&sock).unwrap());
        assert!(sock.exists(), "the socket file stays after its listener is gone");
        assert!(connect_checked(&sock).await.unwrap().is_none());
    }

    #[tokio::test]
    async fn a_desk_of_this_user_in_a_private_folder_is_connected() {
        let (_dir, sock) = private_socket();
        let listener = UnixListener::bind(&sock).unwrap();
        let stream = connect_checked(&sock).await.unwrap();
        assert!(stream.is_some(), "our own listener is accepted");
        let (_accepted, _) = listener.accept().await.unwrap();
    }

    #[tokio::test]
    async fn a_socket_in_a_folder_open_to_others_is_refused_before_connecting() {
        let (_dir, sock) = private_socket();
        let listener = UnixListener::bind(&sock).unwrap();
        let folder = sock.parent().unwrap();
        std::fs::set_permissions(folder, std::fs::Permissions::from_mode(0o777)).unwrap();
        let err = connect_checked(&sock).await.unwrap_err().to_string();
        assert!(
            err.contains(&sock.display().to_string()) && err.contains("777") && err.contains("Nothing was sent"),
            "{err}"
        );
        // Nobody connected.
        let accepted = tokio::time::timeout(Duration::from_millis(0), listener.accept()).await;
        assert!(accepted.is_err(), "no connection was made");
    }

    #[tokio::test]
    async fn a_file_in_place_of_the_socket_is_refused() {
        let (_dir, sock) = private_socket();
        std::fs::write(&sock, "").unwrap();
        let err = connect_checked(&sock).await.unwrap_err().to_string();
        assert!(err.contains("not a socket") && err.contains(&sock.display().to_string()), "{err}");
    }

    #[test]
    fn a_symlink_in_place_of_the_folder_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real");
        std::fs::create_dir(&real).unwrap();
        std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o700)).unwrap();
        let link = dir.path().join("resolve-desk");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        let err = ensure_private_dir(&link).unwrap_err().to_string();
        assert!(err.contains("symbolic link"), "{err}");
    }
}
