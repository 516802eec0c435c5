//! The app's state: the open folders (one desk each: stack, policy, journal history and lock
//! of their own; `folder`), the one the window shows, and what the app keeps in its data
//! folder (`saved`).

use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

use resolve_desk_core::Desk;
use resolve_engine::{Actor, ResolvePolicy, Session};
use resolve_journal::Writer;
use resolve_protocol::{FolderList, IpcError, IpcErrorCode, SessionInfo};
use tokio::sync::RwLock;

use crate::agent::Conversation;
use crate::args::Args;
use crate::events::{Emitter, EventHub};
use crate::folder::{open_demo, open_session, session_info, show_banners, start_serving, Current};
use crate::notices::Notices;
use crate::saved::{default_data_dir, open_journal, OpenFolders, Recents};

/// The open folders, in the order they were opened; never empty.
struct Folders {
    list: Vec<Current>,
    active: usize,
}

impl Folders {
    fn active(&self) -> &Current {
        &self.list[self.active]
    }

    fn position(&self, root: &Path) -> Option<usize> {
        self.list.iter().position(|f| f.root() == root)
    }

    fn show(&mut self, index: usize) {
        self.active = index;
        for (i, f) in self.list.iter().enumerate() {
            f.shown.store(i == index, Ordering::SeqCst);
        }
    }

    fn view(&self) -> FolderList {
        FolderList {
            folders: self.list.iter().enumerate().map(|(i, f)| f.info(i == self.active)).collect(),
            active: self.active().root().display().to_string(),
        }
    }
}

/// Managed by Tauri; every command reads the folder the window shows from here.
pub struct AppState {
    folders: RwLock<Folders>,
    policy: ResolvePolicy,
    recents: Recents,
    /// The folders to open again at the next start (`None`: `--new-window`, which neither
    /// restores nor records them).
    open_list: Option<OpenFolders>,
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
    /// Where the journal, recent and open folders are kept.
    data_dir: PathBuf,
    /// Holds a window close while actions are pending (see `leave`).
    close_guard: crate::leave::CloseGuard,
    /// The window's tool runs in flight (Cancel stops them).
    runs: crate::runs::UiRuns,
    /// The control socket other `resolve-desk DIR` processes join through (see `join`).
    control: Mutex<Option<crate::join::ControlServer>>,
    /// Told about every folder's changes once the app exists (see `nudge`).
    nudger: Arc<std::sync::OnceLock<crate::nudge::Nudger>>,
    /// Notifications and the tray icon on or off.
    settings: Mutex<resolve_protocol::DeskSettings>,
}

impl AppState {
    /// Opens the workspace named on the command line (and, unless `--new-window`, the folders
    /// open when the desk last closed), or the demo when there is none; runs `--script` in the
    /// one named.
    pub async fn start(args: &Args) -> Result<AppState, String> {
        let data_dir = args.data_dir.clone().unwrap_or_else(default_data_dir);
        let recents = Recents::new(data_dir.clone());
        let open_list = args.joins().then(|| OpenFolders::new(&data_dir));
        let notices = Arc::new(Notices::default());
        let journal = open_journal(&data_dir, &notices);
        crate::startup::mark("journal_opened");
        let config_dir = args
            .config_dir
            .clone()
            .or_else(resolve_agent::ProviderConfig::user_config_dir)
            .unwrap_or_else(|| data_dir.join("config"));
        // Events are queued from here on; the page fetches them once it runs (`next_events`).
        let events = Arc::new(EventHub::default());
        let emitter = events.emitter();
        notices.set_emitter(emitter.clone());
        let mut list = Vec::new();
        let named = match &args.workspace {
            Some(path) => Some(
                open_session(path, args.policy, journal.clone(), &config_dir, &notices).await.map_err(|e| e.message)?,
            ),
            None => None,
        };
        let named_root = named.as_ref().map(|c| c.root().to_path_buf());
        // The folders open when the desk last closed come back beside it (their stacks
        // restored from the journal); one that cannot be opened now is said and skipped.
        let saved = open_list.as_ref().map(|l| l.read()).unwrap_or_default();
        for root in saved.iter().filter(|r| Some(r.as_path()) != named_root.as_deref()) {
            match open_session(root, args.policy, journal.clone(), &config_dir, &notices).await {
                Ok(folder) => list.push(folder),
                Err(e) => eprintln!("resolve-desk: not reopening {}: {}", root.display(), e.message),
            }
        }
        let active = match named {
            Some(folder) => {
                recents.add(folder.root());
                list.push(folder);
                list.len() - 1
            }
            None if list.is_empty() => {
                list.push(open_demo(args.policy, &config_dir, &notices).await?);
                0
            }
            None => 0,
        };
        crate::startup::mark("workspace_opened");
        let nudger = Arc::new(std::sync::OnceLock::new());
        for folder in &mut list {
            start_serving(folder, &emitter, &nudger);
        }
        let mut folders = Folders { list, active };
        folders.show(active);
        crate::startup::mark("mcp_started");
        if let Some(script) = &args.script {
            let session = folders.active().session.clone();
            let file =
                std::fs::File::open(script).map_err(|e| format!("cannot read script {}: {e}", script.display()))?;
            resolve_agent::run_script(&session, Actor::Script, std::io::BufReader::new(file), |step| {
                if step.is_error {
                    eprintln!("resolve-desk: script step {} ({}) failed: {}", step.step, step.tool, step.text);
                }
            })
            .await
            .map_err(|e| format!("script {}: {e}", script.display()))?;
        }
        show_banners(folders.active(), &notices);
        let settings = Mutex::new(crate::nudge::load_settings(&config_dir));
        let state = AppState {
            folders: RwLock::new(folders),
            policy: args.policy,
            recents,
            open_list,
            events,
            journal,
            notices,
            config_dir,
            data_dir,
            close_guard: crate::leave::CloseGuard::default(),
            runs: crate::runs::UiRuns::default(),
            control: Mutex::new(None),
            nudger,
            settings,
        };
        state.save_open_list().await;
        Ok(state)
    }

    /// Whether the window may close now (see `leave`).
    pub fn close_guard(&self) -> &crate::leave::CloseGuard {
        &self.close_guard
    }

    pub fn runs(&self) -> &crate::runs::UiRuns {
        &self.runs
    }

    /// Where the journal and the lists of folders are kept.
    pub fn data_dir(&self) -> &Path {
        &self.data_dir
    }

    /// Starts telling `nudger` about every folder's changes (once).
    /// Tells the nudger that counts may have changed (the title and tray are set again), e.g.
    /// once the window exists: actions restored or pushed before it was shown are counted too.
    pub fn recount(&self) {
        if let Some(nudger) = self.nudger.get() {
            nudger(crate::nudge::Signal::Changed);
        }
    }

    pub fn set_nudger(&self, nudger: crate::nudge::Nudger) {
        let _ = self.nudger.set(nudger);
    }

    /// Whether the desk notifies and shows a tray icon.
    pub fn desk_settings(&self) -> resolve_protocol::DeskSettings {
        *self.settings.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Saves and applies the notification and tray settings.
    pub fn set_desk_settings(&self, settings: resolve_protocol::DeskSettings) -> Result<(), String> {
        crate::nudge::save_settings(&self.config_dir, &settings)
            .map_err(|e| format!("Cannot save the settings: {e}"))?;
        *self.settings.lock().unwrap_or_else(|p| p.into_inner()) = settings;
        if let Some(nudger) = self.nudger.get() {
            nudger(crate::nudge::Signal::Changed);
        }
        Ok(())
    }

    /// Keeps the control socket other `resolve-desk` processes join through (removed on exit).
    pub fn set_control(&self, server: crate::join::ControlServer) {
        *self.control.lock().unwrap_or_else(|p| p.into_inner()) = Some(server);
    }

    /// The session the window shows and whether it is the demo.
    pub async fn session(&self) -> (Arc<Session>, bool) {
        let f = self.folders.read().await;
        (f.active().session.clone(), f.active().is_demo)
    }

    /// The desk the window shows (session, tools, trust).
    pub async fn desk(&self) -> Arc<Desk> {
        self.folders.read().await.active().desk.clone()
    }

    /// The desk of the open folder `root`, or an error naming it.
    pub async fn desk_of(&self, root: &str) -> Result<Arc<Desk>, IpcError> {
        let f = self.folders.read().await;
        f.position(Path::new(root)).map(|i| f.list[i].desk.clone()).ok_or_else(|| not_open(root))
    }

    /// Every open folder's desk, in the order opened.
    pub async fn desks(&self) -> Vec<Arc<Desk>> {
        self.folders.read().await.list.iter().map(|f| f.desk.clone()).collect()
    }

    /// How many actions are pending over every open folder.
    pub async fn pending_total(&self) -> usize {
        self.folders.read().await.list.iter().map(|f| f.session.store().len()).sum()
    }

    /// The end of external tool `name`'s stderr log and where it is; `None` when `name` is not
    /// an external tool of the folder shown.
    pub async fn tool_log(&self, name: &str) -> Option<(String, std::io::Result<String>)> {
        let f = self.folders.read().await;
        let tools = f.active().desk.external();
        if !tools.names().iter().any(|n| n == name) {
            return None;
        }
        Some((tools.log_path(name).display().to_string(), tools.read_log(name)))
    }

    /// The events the page fetches.
    pub fn events(&self) -> &EventHub {
        &self.events
    }

    /// The session the window shows and its conversation with the model.
    pub async fn conversation(&self) -> (Arc<Session>, Arc<Conversation>) {
        let f = self.folders.read().await;
        (f.active().session.clone(), f.active().conversation.clone())
    }

    /// Where the agent settings are read and saved.
    pub fn config_dir(&self) -> &Path {
        &self.config_dir
    }

    /// Sends events to the page.
    pub fn emitter(&self) -> Emitter {
        self.events.emitter()
    }

    /// Every open folder (tabs: name, path, pending count, agent-waiting mark).
    pub async fn folders(&self) -> FolderList {
        self.folders.read().await.view()
    }

    /// Every open folder's pending actions, newest push first (within one folder, top first
    /// for pushes of the same millisecond), each with its place in its folder's stack.
    pub async fn inbox(&self) -> Vec<resolve_protocol::InboxItem> {
        let f = self.folders.read().await;
        let mut items = Vec::new();
        for folder in &f.list {
            let list = folder.session.store().list();
            let of = u32::try_from(list.len()).unwrap_or(u32::MAX);
            let (root, name) = (folder.root().display().to_string(), crate::nudge::folder_name(folder.root()));
            for (i, info) in list.iter().enumerate() {
                items.push(resolve_protocol::InboxItem {
                    root: root.clone(),
                    folder: name.clone(),
                    position: u32::try_from(i + 1).unwrap_or(u32::MAX),
                    of,
                    action: crate::convert::action_summary(info, i == 0),
                });
            }
        }
        items.sort_by_key(|b| std::cmp::Reverse(b.action.created_at_ms));
        items
    }

    /// Opens `path` beside the open folders (its pending actions restored from the journal),
    /// or finds it open already. `show`: the window shows it then. A folder other processes
    /// asked for (`join`) is shown only when the one on screen has nothing pending, so a join
    /// never pulls the person away from a review.
    pub async fn open_folder(&self, path: &Path, show: Show) -> Result<SessionInfo, IpcError> {
        let root = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
        let existing = self.folders.read().await.position(&root);
        let index = match existing {
            Some(i) => i,
            None => {
                let mut next =
                    open_session(path, self.policy, self.journal.clone(), &self.config_dir, &self.notices).await?;
                start_serving(&mut next, &self.emitter(), &self.nudger);
                self.recents.add(next.root());
                let mut f = self.folders.write().await;
                // Opened meanwhile by another request: keep the first, close this one.
                if let Some(i) = f.position(next.root()) {
                    drop(f);
                    next.close().await;
                    self.folders.read().await.position(&root).unwrap_or(i)
                } else {
                    f.list.push(next);
                    f.list.len() - 1
                }
            }
        };
        let info = {
            let mut f = self.folders.write().await;
            let index = index.min(f.list.len() - 1);
            let show_it = match show {
                Show::Yes => true,
                Show::IfIdle => f.active().is_demo || f.active().session.store().is_empty(),
            };
            if show_it && f.active != index {
                f.show(index);
                show_banners(f.active(), &self.notices);
            }
            session_info(&f.list[index])
        };
        self.save_open_list().await;
        self.folders_changed().await;
        Ok(info)
    }

    /// Shows the open folder `root`: every command then acts on it.
    pub async fn select_folder(&self, root: &str) -> Result<SessionInfo, IpcError> {
        let info = {
            let mut f = self.folders.write().await;
            let index = f.position(Path::new(root)).ok_or_else(|| not_open(root))?;
            if f.active != index {
                f.show(index);
                show_banners(f.active(), &self.notices);
            }
            session_info(f.active())
        };
        self.folders_changed().await;
        Ok(info)
    }

    /// Closes the open folder `root` (its pending actions are never applied; outside the demo
    /// they stay kept in the journal for the next time it is opened). The last folder stays.
    pub async fn close_folder(&self, root: &str) -> Result<FolderList, IpcError> {
        let closed = {
            let mut f = self.folders.write().await;
            let index = f.position(Path::new(root)).ok_or_else(|| not_open(root))?;
            if f.list.len() == 1 {
                return Err(IpcError::new(
                    IpcErrorCode::InvalidParams,
                    format!("{root} is the only open folder; open another one first, or close the window."),
                ));
            }
            let was_shown = f.active == index;
            let closed = f.list.remove(index);
            let next = if was_shown { index.min(f.list.len() - 1) } else { f.active - usize::from(f.active > index) };
            f.show(next);
            if was_shown {
                show_banners(f.active(), &self.notices);
            }
            closed
        };
        closed.close().await;
        if let Some(nudger) = self.nudger.get() {
            nudger(crate::nudge::Signal::Changed);
        }
        self.save_open_list().await;
        self.folders_changed().await;
        Ok(self.folders().await)
    }

    /// Tells the page the folders changed (and, through `active`, which one is shown).
    async fn folders_changed(&self) {
        let active = self.folders.read().await.active().root().display().to_string();
        let payload = serde_json::to_value(resolve_protocol::FoldersChanged { root: active }).unwrap_or_default();
        (self.emitter())(resolve_protocol::ipc::events::FOLDERS_CHANGED, payload);
    }

    async fn save_open_list(&self) {
        if let Some(list) = &self.open_list {
            let f = self.folders.read().await;
            list.write(f.list.iter().filter(|c| !c.is_demo).map(|c| c.root()));
        }
    }

    /// When the app exits: agents connected over MCP are told the desk closed; other
    /// processes can no longer join it. The open folders stay recorded for the next start.
    pub async fn shutdown(&self) {
        self.control.lock().unwrap_or_else(|p| p.into_inner()).take();
        let mut f = self.folders.write().await;
        for folder in &mut f.list {
            folder.desk.stop_watching();
            let mcp = folder.mcp.take();
            crate::mcp_socket::stop(mcp, &folder.session).await;
        }
    }

    pub async fn info(&self) -> SessionInfo {
        session_info(self.folders.read().await.active())
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

    /// Decisions in the folder shown, newest first (the desk's history: the journal's
    /// merged rows, or this session's for the demo).
    pub async fn history(&self) -> Vec<resolve_protocol::HistoryEntry> {
        let desk = self.desk().await;
        desk.history(500).await.iter().map(|r| crate::convert::history_entry(&r.entry, r.earlier_session)).collect()
    }
}

/// Whether opening a folder shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Show {
    /// The person opened it.
    Yes,
    /// Another process asked (`resolve-desk DIR`, `rdesk mcp`): shown only when the folder on
    /// screen has nothing pending.
    IfIdle,
}

fn not_open(root: &str) -> IpcError {
    IpcError::new(
        IpcErrorCode::NotFound,
        format!("{root} is not an open folder of this desk; reload the folder list, or open it first."),
    )
}
