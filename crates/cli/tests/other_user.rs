//! Another user at the other end of the desk's socket: a socket (or its folder, or the process
//! listening on it) planted by someone else, and someone else connecting to the desk. Each
//! side is a real process: `rdesk mcp` / `rdesk serve-socket`, and this test binary re-run as
//! user id 65534 (`nobody`: it starts as root and drops to that user before touching a
//! socket), listening or connecting on a real Unix socket.
//!
//! Changing to another user needs root: run as anyone else, every test here is reported as
//! ignored (run with `--include-ignored` and they fail, saying so).

use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdout, Command, ExitCode, Output, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use libtest_mimic::{Arguments, Failed, Trial};

/// The user the planted side runs as.
const OTHER: u32 = 65534;
/// Set when this binary runs as the other user's process: `listen` or `connect`.
const CHILD_MODE: &str = "RD_OTHER_USER_CHILD";
/// The socket the child listens on or connects to.
const CHILD_SOCKET: &str = "RD_OTHER_USER_SOCKET";
/// `1`: the child creates the socket's folder first (mode 0700, owned by the other user).
const CHILD_MKDIR: &str = "RD_OTHER_USER_MKDIR";

fn main() -> ExitCode {
    if let Ok(mode) = std::env::var(CHILD_MODE) {
        return other_user::run(&mode);
    }
    let args = Arguments::from_args();
    let root = is_root();
    let trials = vec![
        Trial::test(
            "rdesk_mcp_refuses_a_socket_folder_planted_by_another_user_sends_nothing_and_starts_no_desk",
            a_planted_folder_is_refused,
        ),
        Trial::test(
            "rdesk_mcp_refuses_a_socket_of_another_user_in_its_own_folder_and_sends_nothing",
            a_socket_of_another_user_is_refused,
        ),
        Trial::test(
            "rdesk_mcp_refuses_a_listener_of_another_user_behind_a_socket_file_of_its_own_after_connecting_and_sends_nothing",
            a_listener_of_another_user_is_refused,
        ),
        Trial::test(
            "the_desk_serves_nothing_to_a_connection_from_another_user_says_so_and_keeps_serving_its_own",
            the_desk_refuses_another_user,
        ),
    ];
    let trials = trials.into_iter().map(|t| t.with_ignored_flag(!root)).collect();
    libtest_mimic::run(&args, trials).exit_code()
}

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

fn check(cond: bool, what: impl Into<String>) -> Result<(), Failed> {
    if cond {
        Ok(())
    } else {
        Err(what.into().into())
    }
}

fn needs_root() -> Result<(), Failed> {
    check(is_root(), "this test needs root: it runs a process as user id 65534")
}

/// A temp folder the other user can enter (and write in, with `writable`: like /tmp).
fn shared_dir(writable: bool) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let mode = if writable { 0o1777 } else { 0o755 };
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(mode)).unwrap();
    dir
}

/// The other user's listener on `socket`, once it listens.
struct Planted {
    child: Child,
    stdout: BufReader<ChildStdout>,
}

/// A test that fails midway leaves no process behind.
impl Drop for Planted {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A child stopped and reaped if the test ends before it does.
struct Running(Option<Child>);

impl Running {
    fn child(&mut self) -> &mut Child {
        self.0.as_mut().expect("still running")
    }

    fn into_inner(mut self) -> Child {
        self.0.take().expect("still running")
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(mut child) = self.0.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Planted {
    fn listen(socket: &Path, mkdir: bool) -> Planted {
        let mut child = Command::new(std::env::current_exe().unwrap())
            .env(CHILD_MODE, "listen")
            .env(CHILD_SOCKET, socket)
            .env(CHILD_MKDIR, if mkdir { "1" } else { "0" })
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        let mut ready = String::new();
        stdout.read_line(&mut ready).unwrap();
        assert_eq!(ready.trim(), "listening", "the other user's listener started");
        Planted { child, stdout }
    }

    /// Stops listening; (connections accepted, bytes received on them).
    fn report(mut self) -> (u64, u64) {
        drop(self.child.stdin.take());
        let mut report = String::new();
        self.stdout.read_to_string(&mut report).unwrap();
        assert!(self.child.wait().unwrap().success(), "the listener's report: {report}");
        let field = |name: &str| -> u64 {
            report
                .split_whitespace()
                .find_map(|kv| kv.strip_prefix(name).and_then(|v| v.strip_prefix('=')))
                .unwrap_or_else(|| panic!("`{name}` in the listener's report: {report}"))
                .parse()
                .unwrap()
        };
        (field("connections"), field("bytes"))
    }
}

/// `rdesk mcp --workspace WS` joining the socket folder `runtime/resolve-desk` as an agent
/// would: one `initialize` on stdin, then the end of input. Its desk stand-in (started if
/// rdesk decides no desk is up; written beside `mark`) only leaves `mark`.
fn run_rdesk_mcp(ws: &Path, runtime: &Path, mark: &Path) -> Output {
    let stand_in = mark.with_file_name("desk-stand-in");
    std::fs::write(&stand_in, format!("#!/bin/sh\ntouch {}\n", mark.display())).unwrap();
    std::fs::set_permissions(&stand_in, std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_rdesk"))
        .args(["mcp", "--workspace"])
        .arg(ws)
        .env("XDG_RUNTIME_DIR", runtime)
        .env("RESOLVE_DESK_BIN", &stand_in)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    // It may refuse (and exit) before reading: a closed pipe is fine.
    let _ = stdin.write_all(INITIALIZE.as_bytes());
    drop(stdin);
    wait_with_limit(child)
}

const INITIALIZE: &str = "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},\"clientInfo\":{\"name\":\"probe\",\"version\":\"0\"}}}\n";

/// The process's output once it ends; a failure after 60 s (it is then killed).
fn wait_with_limit(child: Child) -> Output {
    let pid = child.id();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || tx.send(child.wait_with_output()));
    match rx.recv_timeout(Duration::from_secs(60)) {
        Ok(out) => out.unwrap(),
        Err(_) => {
            // SAFETY: kill has no memory preconditions; pid is our own child's.
            unsafe { libc::kill(pid as i32, libc::SIGKILL) };
            panic!("pid {pid} did not finish within 60 s");
        }
    }
}

/// What a refusing `rdesk mcp` must have done: exit 1 with an error naming the socket, the
/// other user and what to do; no answer on stdout; no desk started.
fn assert_refused(out: &Output, socket: &Path, mark: &Path, problem: &str) -> Result<(), Failed> {
    let stderr = String::from_utf8_lossy(&out.stderr);
    check(out.status.code() == Some(1), format!("exit 1: {out:?}"))?;
    check(out.stdout.is_empty(), format!("no answer to the agent: {out:?}"))?;
    for part in [socket.display().to_string(), OTHER.to_string(), problem.into(), "XDG_RUNTIME_DIR".into()] {
        check(stderr.contains(&part), format!("the error names `{part}`: {stderr}"))?;
    }
    check(!mark.exists(), format!("no desk was started on top of it: {stderr}"))
}

fn a_planted_folder_is_refused() -> Result<(), Failed> {
    needs_root()?;
    let tmp = shared_dir(true);
    let ws = tempfile::tempdir().unwrap();
    let socket = resolve_mcp::socket_path_in(&tmp.path().join("resolve-desk"), ws.path());
    // The other user made the folder (0700, theirs) and listens in it.
    let planted = Planted::listen(&socket, true);
    let mark = tmp.path().join("desk-started");
    let out = run_rdesk_mcp(ws.path(), tmp.path(), &mark);
    let (connections, bytes) = planted.report();
    assert_refused(&out, &socket, &mark, "its folder")?;
    check(
        (connections, bytes) == (0, 0),
        format!("nothing reached the planted socket: {connections} connections, {bytes} bytes"),
    )
}

fn a_socket_of_another_user_is_refused() -> Result<(), Failed> {
    needs_root()?;
    let tmp = shared_dir(false);
    let ws = tempfile::tempdir().unwrap();
    let folder = tmp.path().join("resolve-desk");
    std::fs::create_dir(&folder).unwrap();
    let socket = resolve_mcp::socket_path_in(&folder, ws.path());
    // Open for a moment so the other user can bind in it, then ours and private again.
    std::fs::set_permissions(&folder, std::fs::Permissions::from_mode(0o777)).unwrap();
    let planted = Planted::listen(&socket, false);
    std::fs::set_permissions(&folder, std::fs::Permissions::from_mode(0o700)).unwrap();
    let mark = tmp.path().join("desk-started");
    let out = run_rdesk_mcp(ws.path(), tmp.path(), &mark);
    let (connections, bytes) = planted.report();
    assert_refused(&out, &socket, &mark, "it belongs to user id")?;
    check(!String::from_utf8_lossy(&out.stderr).contains("its folder"), "the socket itself is named as the problem")?;
    check(
        (connections, bytes) == (0, 0),
        format!("nothing reached the planted socket: {connections} connections, {bytes} bytes"),
    )
}

fn a_listener_of_another_user_is_refused() -> Result<(), Failed> {
    needs_root()?;
    let tmp = shared_dir(false);
    let ws = tempfile::tempdir().unwrap();
    let folder = tmp.path().join("resolve-desk");
    std::fs::create_dir(&folder).unwrap();
    let socket = resolve_mcp::socket_path_in(&folder, ws.path());
    std::fs::set_permissions(&folder, std::fs::Permissions::from_mode(0o777)).unwrap();
    let planted = Planted::listen(&socket, false);
    std::fs::set_permissions(&folder, std::fs::Permissions::from_mode(0o700)).unwrap();
    // The socket file is ours now: only the process behind it tells.
    std::os::unix::fs::chown(&socket, Some(0), Some(0)).unwrap();
    let mark = tmp.path().join("desk-started");
    let out = run_rdesk_mcp(ws.path(), tmp.path(), &mark);
    let (connections, bytes) = planted.report();
    assert_refused(&out, &socket, &mark, "the process listening on it runs as user id")?;
    check(connections == 1, format!("rdesk connected once, to ask who listens: {connections} connections"))?;
    check(bytes == 0, format!("and sent nothing: {bytes} bytes reached the planted listener"))
}

fn the_desk_refuses_another_user() -> Result<(), Failed> {
    needs_root()?;
    let tmp = shared_dir(false);
    let ws = tempfile::tempdir().unwrap();
    let mut desk = Running(Some(
        Command::new(env!("CARGO_BIN_EXE_rdesk"))
            .args(["serve-socket", "--policy", "agent", "--workspace"])
            .arg(ws.path())
            .env("XDG_RUNTIME_DIR", tmp.path())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    ));
    let mut desk_out = BufReader::new(desk.child().stdout.take().unwrap());
    let mut path = String::new();
    desk_out.read_line(&mut path).unwrap();
    let socket = PathBuf::from(path.trim());
    check(socket.exists(), format!("the desk listens on {}", socket.display()))?;
    // Loosened so the other user can connect at all: the desk's own check is what is tested.
    std::fs::set_permissions(socket.parent().unwrap(), std::fs::Permissions::from_mode(0o711)).unwrap();
    std::fs::set_permissions(&socket, std::fs::Permissions::from_mode(0o666)).unwrap();

    let other = Command::new(std::env::current_exe().unwrap())
        .env(CHILD_MODE, "connect")
        .env(CHILD_SOCKET, &socket)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let other = wait_with_limit(other);
    let report = String::from_utf8_lossy(&other.stdout);
    check(other.status.success(), format!("the other user's client ran: {other:?}"))?;
    check(report.trim() == "received=0", format!("the desk sent nothing to the other user: {report}"))?;

    // Its own user is still served.
    let mut own = std::os::unix::net::UnixStream::connect(&socket).unwrap();
    own.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    own.write_all(INITIALIZE.as_bytes()).unwrap();
    let mut answer = String::new();
    BufReader::new(&own).read_line(&mut answer).unwrap();
    check(answer.contains("\"resolve-desk\""), format!("its own user is served: {answer}"))?;
    drop(own);

    // SAFETY: kill has no memory preconditions; the pid is our own child's.
    unsafe { libc::kill(desk.child().id() as i32, libc::SIGTERM) };
    let out = wait_with_limit(desk.into_inner());
    let stderr = String::from_utf8_lossy(&out.stderr);
    check(
        stderr.contains("refused a connection")
            && stderr.contains(&socket.display().to_string())
            && stderr.contains(&format!("runs as user id {OTHER}")),
        format!("the desk says on stderr whom it refused: {stderr}"),
    )
}

/// This binary as the other user's process.
mod other_user {
    use super::*;
    use std::os::fd::AsRawFd;
    use std::os::unix::net::{UnixListener, UnixStream};

    pub fn run(mode: &str) -> ExitCode {
        if let Err(e) = become_other() {
            eprintln!("other-user child: {e}");
            return ExitCode::from(4);
        }
        let socket = PathBuf::from(std::env::var_os(CHILD_SOCKET).unwrap_or_default());
        let result = match mode {
            "listen" => listen(&socket),
            "connect" => connect(&socket),
            other => Err(format!("unknown mode {other}")),
        };
        match result {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("other-user child: {e}");
                ExitCode::from(3)
            }
        }
    }

    fn become_other() -> Result<(), String> {
        // SAFETY: plain system calls on this single-threaded process, before anything else.
        unsafe {
            if libc::setgroups(0, std::ptr::null()) != 0 || libc::setgid(OTHER) != 0 || libc::setuid(OTHER) != 0 {
                return Err(format!("cannot become user id {OTHER}: {}", std::io::Error::last_os_error()));
            }
            if libc::geteuid() != OTHER || libc::getegid() != OTHER {
                return Err("still not user id 65534".into());
            }
        }
        Ok(())
    }

    /// Listens on the socket; on the end of stdin prints `connections=N bytes=M` (everything
    /// any connection sent until it closed).
    fn listen(socket: &Path) -> Result<(), String> {
        if std::env::var(CHILD_MKDIR).as_deref() == Ok("1") {
            let dir = socket.parent().ok_or("no folder")?;
            std::fs::DirBuilder::new().mode(0o700).create(dir).map_err(|e| format!("mkdir {}: {e}", dir.display()))?;
        }
        let listener = UnixListener::bind(socket).map_err(|e| format!("bind {}: {e}", socket.display()))?;
        println!("listening");
        std::io::stdout().flush().map_err(|e| e.to_string())?;
        let mut readers = Vec::new();
        let mut stdin = std::io::stdin();
        loop {
            let mut fds = [
                libc::pollfd { fd: listener.as_raw_fd(), events: libc::POLLIN, revents: 0 },
                libc::pollfd { fd: stdin.as_raw_fd(), events: libc::POLLIN, revents: 0 },
            ];
            // SAFETY: `fds` is a valid array of two pollfd for the call's duration.
            if unsafe { libc::poll(fds.as_mut_ptr(), 2, -1) } < 0 {
                return Err(format!("poll: {}", std::io::Error::last_os_error()));
            }
            if fds[0].revents & libc::POLLIN != 0 {
                let (stream, _) = listener.accept().map_err(|e| e.to_string())?;
                readers.push(std::thread::spawn(move || drain(stream)));
            }
            if fds[1].revents != 0 {
                let mut buf = [0u8; 64];
                if stdin.read(&mut buf).map_err(|e| e.to_string())? == 0 {
                    break;
                }
            }
        }
        // Connections made but not accepted yet.
        listener.set_nonblocking(true).map_err(|e| e.to_string())?;
        while let Ok((stream, _)) = listener.accept() {
            stream.set_nonblocking(false).map_err(|e| e.to_string())?;
            readers.push(std::thread::spawn(move || drain(stream)));
        }
        let connections = readers.len();
        let bytes: u64 = readers.into_iter().map(|r| r.join().unwrap_or(0)).sum();
        println!("connections={connections} bytes={bytes}");
        Ok(())
    }

    /// Everything the peer sends until it closes.
    fn drain(mut stream: UnixStream) -> u64 {
        let mut all = Vec::new();
        let _ = stream.read_to_end(&mut all);
        all.len() as u64
    }

    /// Connects, sends an `initialize`, and prints `received=N`: what came back before the
    /// desk closed the connection.
    fn connect(socket: &Path) -> Result<(), String> {
        let mut stream = UnixStream::connect(socket).map_err(|e| format!("connect {}: {e}", socket.display()))?;
        stream.set_read_timeout(Some(Duration::from_secs(30))).map_err(|e| e.to_string())?;
        // The desk may have closed it already: what matters is what comes back.
        let _ = stream.write_all(INITIALIZE.as_bytes());
        let _ = stream.shutdown(std::net::Shutdown::Write);
        let mut back = Vec::new();
        match stream.read_to_end(&mut back) {
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => {}
            Err(e) => return Err(format!("read: {e}")),
        }
        println!("received={}", back.len());
        Ok(())
    }
}
