//! The app's state: the open session (one per workspace), the demo folder it may own,
//! and the list of recent workspaces.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use resolve_desk_core::{Desk, DeskOptions, Note};
use resolve_engine::{Actor, Recovery, ResolvePolicy, Session};
use resolve_journal::{Journal, Writer};
use resolve_protocol::{IpcError, IpcErrorCode, SessionInfo};
use tauri::async_runtime::JoinHandle;
use tokio::sync::RwLock;

use crate::agent::Conversation;
use crate::args::Args;
use crate::events::{self, Emitter, EventHub};
use crate::notices::{self, Notices};

/// What is open now.
pub struct Current {
    /// The workspace, composed by `resolve_desk_core` as every front end does: session,
    /// tools (a folder's own only once trusted), journal mirror, watches (live staleness,
    /// tool reload; stopped when this is dropped: switch or exit).
    pub desk: Arc<Desk>,
    pub session: Arc<Session>,
    pub is_demo: bool,
    /// The demo's temporary folder, removed when the session is closed.
    _demo_dir: Option<tempfile::TempDir>,
    forwarder: Option<JoinHandle<()>>,
    /// The MCP socket coding agents join this session through (see `mcp_socket`).
    mcp: Option<resolve_mcp::SocketServer>,
    /// The conversation with the model in this session (messages, running turn).
    pub conversation: Arc<Conversation>,
    /// Keeps the window's banners about the tools (could not be loaded; not trusted) up to date.
    _tool_banners: AbortOnDrop,
}

/// Managed by Tauri; every command reads the current session from here.
pub struct AppState {
    current: RwLock<Current>,
    policy: ResolvePolicy,
    recents: Recents,
    /// The events the page fetches (`next_events`).
    events: Arc<EventHub>,
    /// The decision journal (SQLite), written on its own thread; `None` when it could not be
    /// opened (the app still works, the history is then this session's only, and a banner
    /// says so).
    journal: Option<Arc<Writer>>,
    /// Banners for the window (see `notices`).
    notices: Arc<Notices>,
    /// Where the agent settings live (`<config_dir>/resolve-desk/agent.json`).
    config_dir: PathBuf,
    /// Holds a window close while actions are pending (see `leave`).
    close_guard: crate::leave::CloseGuard,
    /// The window's tool runs in flight (Cancel stops them).
    runs: crate::runs::UiRuns,
}

impl AppState {
    /// Opens the workspace named on the command line, or the demo; runs `--script`.
    pub async fn start(args: &Args) -> Result<AppState, String> {
        let data_dir = args.data_dir.clone().unwrap_or_else(default_data_dir);
        let recents = Recents::new(data_dir.clone());
        let notices = Arc::new(Notices::default());
        let journal = open_journal(&data_dir.join("journal.sqlite3"), &notices);
        crate::startup::mark("journal_opened");
        let config_dir = args
            .config_dir
            .clone()
            .or_else(resolve_agent::ProviderConfig::user_config_dir)
            .unwrap_or_else(|| data_dir.join("config"));
        let current = match &args.workspace {
            Some(path) => {
                open_session(path, args.policy, journal.clone(), &config_dir, &notices).await.map_err(|e| e.message)?
            }
            None => open_demo(args.policy, &config_dir, &notices).await?,
        };
        if !current.is_demo {
            recents.add(current.session.workspace().root());
        }
        crate::startup::mark("workspace_opened");
        let mut current = current;
        // Events are queued from here on; the page fetches them once it runs (`next_events`).
        let events = Arc::new(EventHub::default());
        let emitter = events.emitter();
        notices.set_emitter(emitter.clone());
        current.forwarder = Some(events::forward_queue(current.session.clone(), emitter.clone()));
        current.mcp = crate::mcp_socket::start(&current.session, current.is_demo);
        crate::startup::mark("mcp_started");
        if let Some(script) = &args.script {
            let file =
                std::fs::File::open(script).map_err(|e| format!("cannot read script {}: {e}", script.display()))?;
            resolve_agent::run_script(&current.session, Actor::Script, std::io::BufReader::new(file), |step| {
                if step.is_error {
                    eprintln!("resolve-desk: script step {} ({}) failed: {}", step.step, step.tool, step.text);
                }
            })
            .await
            .map_err(|e| format!("script {}: {e}", script.display()))?;
        }
        Ok(AppState {
            current: RwLock::new(current),
            policy: args.policy,
            recents,
            events,
            journal,
            notices,
            config_dir,
            close_guard: crate::leave::CloseGuard::default(),
            runs: crate::runs::UiRuns::default(),
        })
    }

    /// Whether the window may close now (see `leave`).
    pub fn close_guard(&self) -> &crate::leave::CloseGuard {
        &self.close_guard
    }

    pub fn runs(&self) -> &crate::runs::UiRuns {
        &self.runs
    }

    /// The open session and whether it is the demo.
    pub async fn session(&self) -> (Arc<Session>, bool) {
        let c = self.current.read().await;
        (c.session.clone(), c.is_demo)
    }

    /// The open desk (session, tools, trust).
    pub async fn desk(&self) -> Arc<Desk> {
        self.current.read().await.desk.clone()
    }

    /// The end of external tool `name`'s stderr log and where it is; `None` when `name` is not
    /// an external tool of the open session.
    pub async fn tool_log(&self, name: &str) -> Option<(String, std::io::Result<String>)> {
        let c = self.current.read().await;
        let tools = c.desk.external();
        if !tools.names().iter().any(|n| n == name) {
            return None;
        }
        Some((tools.log_path(name).display().to_string(), tools.read_log(name)))
    }

    /// The events the page fetches.
    pub fn events(&self) -> &EventHub {
        &self.events
    }

    /// The open session and its conversation with the model.
    pub async fn conversation(&self) -> (Arc<Session>, Arc<Conversation>) {
        let c = self.current.read().await;
        (c.session.clone(), c.conversation.clone())
    }

    /// Where the agent settings are read and saved.
    pub fn config_dir(&self) -> &Path {
        &self.config_dir
    }

    /// Sends events to the page.
    pub fn emitter(&self) -> Emitter {
        self.events.emitter()
    }

    /// Closes the current session (its pending actions are never applied; outside the demo
    /// they stay kept in the journal for the next time the workspace is opened) and opens
    /// `path`, restoring the pending actions kept for it.
    pub async fn switch(&self, path: &Path) -> Result<SessionInfo, IpcError> {
        let mut next = open_session(path, self.policy, self.journal.clone(), &self.config_dir, &self.notices).await?;
        let (old_mcp, old_session) = {
            let mut c = self.current.write().await;
            (c.mcp.take(), c.session.clone())
        };
        crate::mcp_socket::stop(old_mcp, &old_session).await;
        next.mcp = crate::mcp_socket::start(&next.session, next.is_demo);
        self.recents.add(next.session.workspace().root());
        let emitter = self.emitter();
        next.forwarder = Some(events::forward_queue(next.session.clone(), emitter.clone()));
        let mut current = self.current.write().await;
        if let Some(f) = current.forwarder.take() {
            f.abort();
        }
        current.conversation.stop();
        current.session.close();
        *current = next;
        emitter(
            resolve_protocol::ipc::events::QUEUE_CHANGED,
            serde_json::json!({"revision": current.session.store().revision()}),
        );
        Ok(session_info(&current))
    }

    /// When the app exits: agents connected over MCP are told the desk closed.
    pub async fn shutdown(&self) {
        let mut c = self.current.write().await;
        c.desk.stop_watching();
        let mcp = c.mcp.take();
        crate::mcp_socket::stop(mcp, &c.session).await;
    }

    pub async fn info(&self) -> SessionInfo {
        session_info(&*self.current.read().await)
    }

    pub fn recent_workspaces(&self) -> Vec<String> {
        self.recents.list()
    }

    /// The banners to show now.
    pub fn notices(&self) -> &Arc<Notices> {
        &self.notices
    }

    /// The journal's writer, when the journal could be opened.
    pub fn journal(&self) -> Option<&Arc<Writer>> {
        self.journal.as_ref()
    }

    /// Decisions in the open workspace, newest first (the desk's history: the journal's
    /// merged rows, or this session's for the demo).
    pub async fn history(&self) -> Vec<resolve_protocol::HistoryEntry> {
        let desk = self.desk().await;
        desk.history(500).await.iter().map(|r| crate::convert::history_entry(&r.entry, r.earlier_session)).collect()
    }
}

fn session_info(c: &Current) -> SessionInfo {
    SessionInfo {
        workspace_root: c.session.workspace().root().display().to_string(),
        is_demo: c.is_demo,
        policy: match c.session.policy() {
            ResolvePolicy::Human => resolve_protocol::Policy::Human,
            ResolvePolicy::Agent => resolve_protocol::Policy::Agent,
        },
        revision: c.session.store().revision(),
    }
}

/// Opens the decision journal at `path` and its writer thread. A journal that cannot be
/// opened, or a write that fails, becomes a banner that stays while the journal is broken (a
/// later successful write removes it).
pub fn open_journal(path: &Path, notices: &Arc<Notices>) -> Option<Arc<Writer>> {
    let journal = match Journal::open(path) {
        Ok(j) => Arc::new(j),
        Err(e) => {
            eprintln!("resolve-desk: {e}; decisions of this session will not be kept after it closes");
            notices.show(notices::journal_unopenable(path, &e));
            return None;
        }
    };
    let n = notices.clone();
    let report = Box::new(move |path: &Path, result: Result<(), &resolve_journal::JournalError>| match result {
        Ok(()) => n.remove(notices::JOURNAL),
        Err(e) => {
            eprintln!("resolve-desk: could not journal a decision: {e}");
            n.show(notices::journal_write_failed(path, e));
        }
    });
    match Writer::spawn(journal, report) {
        Ok(w) => Some(Arc::new(w)),
        Err(e) => {
            eprintln!("resolve-desk: {e}; decisions of this session will not be kept after it closes");
            notices.show(notices::journal_unopenable(path, &e));
            None
        }
    }
}

/// Tells the person about an apply that opening the workspace at `root` recovered (an
/// interrupted apply, see `Session::recovery`): journals it as a failed apply with the reason
/// `interrupted` and shows a banner with its message. A refused record (`Recovery::refused`:
/// nothing was done, it may not be the desk's) is shown, never journalled. Nothing when
/// `recovery` is `None`.
pub fn report_recovery(recovery: Option<&Recovery>, root: &str, journal: Option<&Writer>, notices: &Notices) {
    let Some(recovery) = recovery else { return };
    if let Some(journal) = journal {
        resolve_desk_core::journal::record_recovery(journal, root, recovery);
    }
    show_recovery(recovery, notices);
}

fn show_recovery(recovery: &Recovery, notices: &Notices) {
    eprintln!("resolve-desk: {}", recovery.message());
    notices.show(notices::recovered(recovery));
}

/// Opens the desk on `path` (`resolve_desk_core::Desk::open`: recovery, tools — the folder's
/// own only once trusted —, pending actions restored, journal mirror, watches) and shows in
/// the window what opening found: a recovered apply, a journal that could not be read, tools
/// that could not be loaded or are not trusted (kept up to date as the tool folders change).
pub async fn open_session(
    path: &Path,
    policy: ResolvePolicy,
    journal: Option<Arc<Writer>>,
    config_dir: &Path,
    notices: &Arc<Notices>,
) -> Result<Current, IpcError> {
    let options = DeskOptions {
        policy,
        id_prefix: None,
        config_dir: Some(config_dir.to_path_buf()),
        log_dir: resolve_external::default_log_dir(),
        journal,
        watch_files: true,
        watch_tools: true,
        never_pass_env: Vec::new(),
    };
    let desk = Desk::open(path, options).await.map_err(|e| {
        let code = match &e {
            resolve_desk_core::OpenError::Workspace { source, .. } => match source {
                resolve_engine::WorkspaceError::NotFound(_) => IpcErrorCode::NotFound,
                resolve_engine::WorkspaceError::Outside(_) => IpcErrorCode::PathOutsideWorkspace,
                resolve_engine::WorkspaceError::NotADirectory(_)
                | resolve_engine::WorkspaceError::SymlinkLoop(_)
                | resolve_engine::WorkspaceError::Io { .. } => IpcErrorCode::Io,
            },
            resolve_desk_core::OpenError::Tools(_) => IpcErrorCode::Internal,
        };
        let message = match &e {
            resolve_desk_core::OpenError::Workspace { source, .. } => {
                format!("Cannot open workspace {}: {source}", path.display())
            }
            other => other.to_string(),
        };
        IpcError::new(code, message)
    })?;
    for note in desk.notes() {
        match note {
            Note::Recovery(r) => show_recovery(r, notices),
            Note::Restored(report) => eprintln!("resolve-desk: {}: {}", desk.root().display(), report.summary()),
            Note::RestoreFailed(e) => {
                eprintln!("resolve-desk: {}", note.message());
                notices.show(notices::restore_failed(e));
            }
            Note::TrustUnreadable(e) => {
                eprintln!("resolve-desk: {}", note.message());
                notices.show(notices::trust_file_unreadable(e));
            }
            Note::WatchFailed(_) => eprintln!("resolve-desk: {}", note.message()),
        }
    }
    let desk = Arc::new(desk);
    let tool_banners = follow_tool_banners(&desk, notices);
    Ok(Current {
        session: desk.session().clone(),
        desk,
        is_demo: false,
        _demo_dir: None,
        forwarder: None,
        mcp: None,
        conversation: Arc::new(Conversation::default()),
        _tool_banners: tool_banners,
    })
}

/// The banners about the external tools (those that could not be loaded, each with its file;
/// the folder's own, untrusted, with what they would run), shown now and after every reload.
fn follow_tool_banners(desk: &Arc<Desk>, notices: &Arc<Notices>) -> AbortOnDrop {
    let show = |desk: &Desk, notices: &Notices| {
        let problems = desk.tool_problems();
        for problem in &problems {
            eprintln!("resolve-desk: tool not loaded: {problem}");
        }
        crate::notices::show_tool_problems(notices, &problems);
        crate::notices::show_trust(notices, &desk.trust_state());
    };
    show(desk, notices);
    let mut reloads = desk.subscribe_tools();
    let (follow, shown) = (Arc::downgrade(desk), notices.clone());
    AbortOnDrop(tauri::async_runtime::spawn(async move {
        while reloads.changed().await.is_ok() {
            let Some(desk) = follow.upgrade() else { break };
            show(&desk, &shown);
        }
    }))
}

/// A task stopped when its owner is dropped (the session it follows is closed or switched).
pub struct AbortOnDrop(JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

async fn open_demo(policy: ResolvePolicy, config_dir: &Path, notices: &Arc<Notices>) -> Result<Current, String> {
    let dir = tempfile::Builder::new()
        .prefix("resolve-desk-demo-")
        .tempdir()
        .map_err(|e| format!("cannot create the demo folder: {e}"))?;
    crate::demo::write_files(dir.path()).map_err(|e| format!("cannot write the demo project: {e}"))?;
    // The demo's decisions are not journalled: its folder is new and temporary each time.
    let mut current = open_session(dir.path(), policy, None, config_dir, notices).await.map_err(|e| e.message)?;
    crate::startup::mark("demo_session_opened");
    resolve_agent::run_script(&current.session, Actor::Script, crate::demo::SCRIPT.as_bytes(), |step| {
        if step.is_error {
            eprintln!("resolve-desk: demo step {} ({}) failed: {}", step.step, step.tool, step.text);
        }
    })
    .await
    .map_err(|e| format!("demo script: {e}"))?;
    current.is_demo = true;
    current._demo_dir = Some(dir);
    Ok(current)
}

fn default_data_dir() -> PathBuf {
    std::env::var_os("XDG_DATA_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/share")))
        .unwrap_or_else(std::env::temp_dir)
        .join("resolve-desk")
}

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
        std::fs::read(&self.file).ok().and_then(|b| serde_json::from_slice(&b).ok()).unwrap_or_default()
    }

    pub fn add(&self, root: &Path) {
        let _g = self.lock.lock().unwrap_or_else(|p| p.into_inner());
        let entry = root.display().to_string();
        let mut list = self.read();
        list.retain(|p| p != &entry);
        list.insert(0, entry);
        list.truncate(MAX_RECENTS);
        if let Some(dir) = self.file.parent() {
            let _ = std::fs::create_dir_all(dir);
        }
        let tmp = self.file.with_extension("json.tmp");
        let ok = serde_json::to_vec_pretty(&list)
            .ok()
            .map(|bytes| std::fs::write(&tmp, bytes).and_then(|_| std::fs::rename(&tmp, &self.file)).is_ok());
        if ok != Some(true) {
            eprintln!("resolve-desk: could not save recent workspaces to {}", self.file.display());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
