//! One open folder: its desk opened for the window (recovery, tools, restored pending
//! actions, with what opening found shown as banners), the built-in demo, how the folder is
//! served (queue events, its MCP socket) and closed.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use resolve_desk_core::{Desk, DeskOptions, Note};
use resolve_engine::{Actor, Recovery, ResolvePolicy, Session};
use resolve_journal::Writer;
use resolve_protocol::{FolderInfo, IpcError, IpcErrorCode, SessionInfo};
use tauri::async_runtime::JoinHandle;

use crate::agent::Conversation;
use crate::events::{self, Emitter};
use crate::notices::{self, Notices};

/// One open folder.
pub struct Current {
    /// The workspace, composed by `resolve_desk_core` as every front end does: session,
    /// tools (a folder's own only once trusted), journal mirror, watches (live staleness,
    /// tool reload; stopped when this is dropped: close or exit).
    pub desk: Arc<Desk>,
    pub session: Arc<Session>,
    pub is_demo: bool,
    /// The demo's temporary folder, removed when the session is closed.
    pub(crate) _demo_dir: Option<tempfile::TempDir>,
    pub(crate) forwarder: Option<JoinHandle<()>>,
    /// The MCP socket coding agents join this session through (see `mcp_socket`).
    pub(crate) mcp: Option<resolve_mcp::SocketServer>,
    /// The conversation with the model in this session (messages, running turn).
    pub conversation: Arc<Conversation>,
    /// Keeps the window's banners about the tools (could not be loaded; not trusted) up to date.
    pub(crate) _tool_banners: AbortOnDrop,
    /// Whether the window shows this folder: only then do its queue events and tool banners
    /// reach the page.
    pub(crate) shown: Arc<AtomicBool>,
}

impl Current {
    pub(crate) fn root(&self) -> &Path {
        self.session.workspace().root()
    }

    pub(crate) fn info(&self, active: bool) -> FolderInfo {
        let root = self.root();
        let list = self.session.store().list();
        FolderInfo {
            root: root.display().to_string(),
            name: crate::nudge::folder_name(root),
            is_demo: self.is_demo,
            pending: u32::try_from(list.len()).unwrap_or(u32::MAX),
            waiting: list.first().and_then(|top| top.proposal.as_ref()).is_some_and(|p| p.waiting),
            active,
        }
    }

    /// Closes the folder for its agents (a waiting `resolve` learns nothing was applied) and
    /// stops its watches and event forwarding. Pending actions stay kept in the journal.
    pub(crate) async fn close(mut self) {
        self.shown.store(false, Ordering::SeqCst);
        if let Some(f) = self.forwarder.take() {
            f.abort();
        }
        self.conversation.stop();
        self.desk.stop_watching();
        crate::mcp_socket::stop(self.mcp.take(), &self.session).await;
        self.session.close();
    }
}

/// Starts serving an opened folder: its queue events (to the page while shown; the folder
/// list always) and its MCP socket.
pub(crate) fn start_serving(
    folder: &mut Current,
    emitter: &Emitter,
    nudger: &Arc<std::sync::OnceLock<crate::nudge::Nudger>>,
) {
    folder.forwarder = Some(events::forward_queue(
        folder.session.clone(),
        emitter.clone(),
        folder.shown.clone(),
        folder.root().display().to_string(),
        nudger.clone(),
    ));
    folder.mcp = crate::mcp_socket::start(&folder.session, folder.is_demo);
}

/// The banners about the tools of the folder now shown (tools that could not be loaded; its
/// own tools, untrusted).
pub(crate) fn show_banners(folder: &Current, notices: &Notices) {
    crate::notices::show_tool_problems(notices, &folder.desk.tool_problems());
    crate::notices::show_trust(notices, &folder.desk.trust_state());
}

pub(crate) fn session_info(c: &Current) -> SessionInfo {
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

pub(crate) fn show_recovery(recovery: &Recovery, notices: &Notices) {
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
    let shown = Arc::new(AtomicBool::new(false));
    let tool_banners = follow_tool_banners(&desk, notices, &shown);
    Ok(Current {
        session: desk.session().clone(),
        desk,
        is_demo: false,
        _demo_dir: None,
        forwarder: None,
        mcp: None,
        conversation: Arc::new(Conversation::default()),
        _tool_banners: tool_banners,
        shown,
    })
}

/// The banners about the external tools (those that could not be loaded, each with its file;
/// the folder's own, untrusted, with what they would run), after every reload while the window
/// shows the folder (`shown`; `show_banners` puts them up when it is shown).
pub(crate) fn follow_tool_banners(desk: &Arc<Desk>, notices: &Arc<Notices>, shown: &Arc<AtomicBool>) -> AbortOnDrop {
    let show = |desk: &Desk, notices: &Notices, shown: bool| {
        let problems = desk.tool_problems();
        for problem in &problems {
            eprintln!("resolve-desk: tool not loaded ({}): {problem}", desk.root().display());
        }
        if shown {
            crate::notices::show_tool_problems(notices, &problems);
            crate::notices::show_trust(notices, &desk.trust_state());
        }
    };
    show(desk, notices, false);
    let mut reloads = desk.subscribe_tools();
    let (follow, notices, shown) = (Arc::downgrade(desk), notices.clone(), shown.clone());
    AbortOnDrop(tauri::async_runtime::spawn(async move {
        while reloads.changed().await.is_ok() {
            let Some(desk) = follow.upgrade() else { break };
            show(&desk, &notices, shown.load(Ordering::SeqCst));
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

pub(crate) async fn open_demo(
    policy: ResolvePolicy,
    config_dir: &Path,
    notices: &Arc<Notices>,
) -> Result<Current, String> {
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
