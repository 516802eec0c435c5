//! Reaching the desk of a folder: its window's user-only socket (checked: the socket, its
//! folder and the process listening are this user's), starting `resolve-desk DIR` when no
//! window has it open. `rdesk mcp` and `rdesk hook` join the same way.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use tokio::net::UnixStream;

/// How long a started desk may take to open its socket.
pub const START_TIMEOUT: Duration = Duration::from_secs(60);

/// The desk binary: `RESOLVE_DESK_BIN`, else `resolve-desk` beside this executable, else on PATH.
pub fn desk_binary() -> PathBuf {
    if let Some(bin) = std::env::var_os("RESOLVE_DESK_BIN").filter(|b| !b.is_empty()) {
        return PathBuf::from(bin);
    }
    if let Some(beside) = std::env::current_exe().ok().and_then(|e| e.parent().map(|d| d.join("resolve-desk"))) {
        if beside.is_file() {
            return beside;
        }
    }
    PathBuf::from("resolve-desk")
}

/// The checked connection to the desk that has `root` open, if one has (`Err`: something of
/// another user is there; never talk to it).
pub async fn connect(root: &Path) -> Result<Option<UnixStream>, String> {
    let path = resolve_mcp::socket_path(root);
    resolve_mcp::check_socket_path(&path).map_err(|e| e.to_string())?;
    resolve_mcp::connect_checked(&path).await.map_err(|e| e.to_string())
}

/// Starts `resolve-desk ROOT` detached (own session, stdio to /dev/null; `--policy` when
/// given) and waits until its socket accepts connections; returns that (checked)
/// connection. When a desk is already running for this user, `resolve-desk ROOT` has it open
/// ROOT beside its other folders and exits once ROOT's socket is up.
pub async fn start_desk(root: &Path, policy: Option<&str>) -> Result<UnixStream, String> {
    use std::os::unix::process::CommandExt;
    let socket = resolve_mcp::socket_path(root);
    let bin = desk_binary();
    let mut cmd = std::process::Command::new(&bin);
    cmd.arg(root).stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::null());
    if let Some(p) = policy {
        cmd.args(["--policy", p]);
    }
    // SAFETY: setsid is async-signal-safe; the desk must outlive the agent's process group.
    unsafe {
        cmd.pre_exec(|| {
            libc::setsid();
            Ok(())
        });
    }
    let mut child = cmd.spawn().map_err(|e| {
        format!(
            "no Resolve Desk window has {} open, and starting `{}` failed: {e}. Install Resolve Desk (or set \
             RESOLVE_DESK_BIN), or start the desk yourself.",
            root.display(),
            bin.display()
        )
    })?;
    let deadline = Instant::now() + START_TIMEOUT;
    loop {
        match resolve_mcp::connect_checked(&socket).await {
            Ok(Some(stream)) => {
                // The child keeps running on its own; reap it in the background if it exits early.
                std::thread::spawn(move || child.wait());
                return Ok(stream);
            }
            Ok(None) => {}
            // Another user's socket appeared meanwhile: never talk to it.
            Err(e) => return Err(e.to_string()),
        }
        if let Ok(Some(status)) = child.try_wait() {
            if status.success() {
                if let Ok(Some(stream)) = resolve_mcp::connect_checked(&socket).await {
                    return Ok(stream);
                }
            }
            return Err(format!(
                "started `{} {}` but it exited ({status}) before opening its socket {}. Run it yourself to see why.",
                bin.display(),
                root.display(),
                socket.display()
            ));
        }
        if Instant::now() >= deadline {
            return Err(format!(
                "started `{} {}` but its socket {} did not appear within {} s. Is a display available? Start the desk \
                 yourself.",
                bin.display(),
                root.display(),
                socket.display(),
                START_TIMEOUT.as_secs()
            ));
        }
        // Polling the socket with a deadline: the desk gives no other signal that it is up.
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
