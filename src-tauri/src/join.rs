//! One desk for every folder: a second `resolve-desk DIR` (which is also what `rdesk mcp
//! --workspace DIR` starts when no window has DIR open) joins the desk already running for
//! this user and data folder, which opens DIR beside its other folders; the second process then
//! exits. `--new-window` skips this (a desk of its own, as before).
//!
//! The channel is a per-user control socket beside the MCP sockets
//! (`$XDG_RUNTIME_DIR/resolve-desk/desk-<hash of the data folder>.sock`), with the same checks:
//! the folder is a private folder of this user (0700), the socket 0600, the desk serves only
//! peers of its own user (`SO_PEERCRED`), and the joining side connects only through
//! [`resolve_mcp::connect_checked`] (owner of the folder, of the socket, of the listening
//! process). One JSON line each way: [`JoinRequest`] → [`JoinReply`]. Keyed by the data folder
//! because two desks with different journals cannot share one window.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio_util::sync::CancellationToken;

/// The longest request line the desk reads (a path and a flag).
const MAX_REQUEST: u64 = 64 * 1024;

/// What a joining process asks the running desk.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JoinRequest {
    /// The folder to open beside the others (absolute; shown when it is open already).
    /// `None`: only bring the window forward.
    pub open: Option<PathBuf>,
}

/// The running desk's answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JoinReply {
    /// The folder is open (or the window was brought forward).
    pub ok: bool,
    /// For the person: what happened, or why not and what to do.
    pub message: String,
}

/// The control socket of the desk that keeps its data in `data_dir`.
pub fn control_path(data_dir: &Path) -> PathBuf {
    let canonical = std::fs::canonicalize(data_dir).unwrap_or_else(|_| data_dir.to_path_buf());
    let hash = blake3::hash(canonical.as_os_str().as_encoded_bytes()).to_hex();
    resolve_mcp::runtime_dir().join(format!("desk-{}.sock", &hash[..24]))
}

/// Asks the desk listening at `path` to do `request`. `Ok(None)` when no desk is there (then
/// the caller starts one); `Err` when something that is not this user's desk is there (nothing
/// was sent to it) or the desk did not answer.
pub async fn ask(path: &Path, request: &JoinRequest) -> Result<Option<JoinReply>, String> {
    let Some(stream) = resolve_mcp::connect_checked(path).await.map_err(|e| e.to_string())? else {
        return Ok(None);
    };
    let exchange = async {
        let (read, mut write) = stream.into_split();
        let mut line = serde_json::to_vec(request).map_err(|e| e.to_string())?;
        line.push(b'\n');
        write.write_all(&line).await.map_err(|e| e.to_string())?;
        let mut answer = String::new();
        BufReader::new(read).take(MAX_REQUEST).read_line(&mut answer).await.map_err(|e| e.to_string())?;
        serde_json::from_str::<JoinReply>(&answer)
            .map_err(|e| format!("the running desk answered something unexpected ({e}): {answer:?}"))
    };
    // Opening a folder runs its recovery and restores its stack: allow for a large one.
    match tokio::time::timeout(Duration::from_secs(120), exchange).await {
        Ok(Ok(reply)) => Ok(Some(reply)),
        Ok(Err(e)) => Err(format!("the running desk at {} did not answer: {e}", path.display())),
        Err(_) => Err(format!("the running desk at {} did not answer within 120 s", path.display())),
    }
}

/// What the desk does with a request (opens the folder, brings the window forward).
pub type Handler = std::sync::Arc<
    dyn Fn(JoinRequest) -> std::pin::Pin<Box<dyn std::future::Future<Output = JoinReply> + Send>> + Send + Sync,
>;

/// The running control socket; dropping it stops accepting and removes the socket (only its
/// own: a newer desk may have replaced it).
pub struct ControlServer {
    path: PathBuf,
    inode: (u64, u64),
    shutdown: CancellationToken,
}

impl ControlServer {
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for ControlServer {
    fn drop(&mut self) {
        self.shutdown.cancel();
        if let Ok(meta) = std::fs::symlink_metadata(&self.path) {
            if (meta.dev(), meta.ino()) == self.inode {
                let _ = std::fs::remove_file(&self.path);
            }
        }
    }
}

/// Listens on `path` (see [`control_path`]) and hands each request of a process of this user
/// to `handle`. Refused when another desk already listens there. Must run inside the runtime.
pub fn serve(path: &Path, handle: Handler) -> Result<ControlServer, resolve_mcp::SocketError> {
    let (listener, inode) = resolve_mcp::bind_private(path)?;
    let shutdown = CancellationToken::new();
    let stop = shutdown.clone();
    let shown = path.to_path_buf();
    tokio::spawn(async move {
        loop {
            let accepted = tokio::select! {
                _ = stop.cancelled() => break,
                accepted = listener.accept() => accepted,
            };
            let Ok((stream, _)) = accepted else {
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            };
            if let Some(problem) = resolve_mcp::peer_problem(&stream) {
                eprintln!(
                    "resolve-desk: refused a connection to the control socket {}: the connecting process {problem}; nothing was read from it or sent to it.",
                    shown.display()
                );
                continue;
            }
            let handle = handle.clone();
            tokio::spawn(async move {
                let (read, mut write) = stream.into_split();
                let mut line = String::new();
                let reply = match BufReader::new(read).take(MAX_REQUEST).read_line(&mut line).await {
                    Ok(_) => match serde_json::from_str::<JoinRequest>(&line) {
                        Ok(request) => handle(request).await,
                        Err(e) => JoinReply { ok: false, message: format!("not a join request ({e})") },
                    },
                    Err(e) => JoinReply { ok: false, message: format!("could not read the request: {e}") },
                };
                let mut out = serde_json::to_vec(&reply).unwrap_or_default();
                out.push(b'\n');
                let _ = write.write_all(&out).await;
            });
        }
    });
    Ok(ControlServer { path: path.into(), inode, shutdown })
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;
    use std::sync::Arc;

    fn private_runtime() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
        dir
    }

    #[tokio::test]
    async fn a_second_process_reaches_the_running_desk_and_nobody_answers_once_it_is_gone() {
        let runtime = private_runtime();
        let path = runtime.path().join("resolve-desk").join("desk-test.sock");
        let handler: Handler = Arc::new(|req: JoinRequest| {
            Box::pin(async move { JoinReply { ok: true, message: format!("opened {}", req.open.unwrap().display()) } })
        });
        let server = serve(&path, handler.clone()).expect("listens");
        let mode = std::fs::metadata(&path).unwrap().mode() & 0o777;
        assert_eq!(mode, 0o600, "the socket is user-only");
        let reply = ask(&path, &JoinRequest { open: Some("/w/shop".into()) }).await.unwrap().expect("a desk answers");
        assert_eq!(reply, JoinReply { ok: true, message: "opened /w/shop".into() });
        assert!(matches!(serve(&path, handler), Err(resolve_mcp::SocketError::AlreadyServed(_))), "one desk per path");
        drop(server);
        assert!(!path.exists(), "the socket goes with its desk");
        assert_eq!(ask(&path, &JoinRequest { open: None }).await.unwrap(), None, "no desk: start one");
    }

    #[tokio::test]
    async fn a_socket_in_a_folder_open_to_others_is_never_talked_to() {
        let runtime = tempfile::tempdir().unwrap();
        let dir = runtime.path().join("resolve-desk");
        std::fs::create_dir(&dir).unwrap();
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).unwrap();
        let _listener = std::os::unix::net::UnixListener::bind(dir.join("desk-x.sock")).unwrap();
        let err = ask(&dir.join("desk-x.sock"), &JoinRequest { open: None }).await.unwrap_err();
        assert!(err.contains("777") && err.contains("Nothing was sent"), "{err}");
    }

    #[test]
    fn each_data_folder_has_its_own_desk() {
        let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        assert_ne!(control_path(a.path()), control_path(b.path()));
        assert_eq!(control_path(a.path()), control_path(&a.path().join(".")));
    }
}
