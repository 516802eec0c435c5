//! The Tauri commands. Each one: read the state, call the session, convert, return.
//! Argument keys are camelCase on the JavaScript side (Tauri v2 converts).

use resolve_agent::ProviderConfig;
use resolve_engine::{Actor, Resolve, ToolContext};
use resolve_protocol as wire;
use serde_json::{json, Value};
use tauri::State;
use wire::{IpcError, IpcErrorCode};

use crate::convert;
use crate::events;
use crate::state::AppState;

type Result<T> = std::result::Result<T, IpcError>;

#[tauri::command]
pub async fn get_session(state: State<'_, AppState>) -> Result<wire::SessionInfo> {
    Ok(state.info().await)
}

#[tauri::command]
pub async fn list_actions(state: State<'_, AppState>) -> Result<wire::QueueSnapshot> {
    let (session, _) = state.session().await;
    let store = session.store();
    let revision = store.revision();
    let actions = store.list().iter().enumerate().map(|(i, info)| convert::action_summary(info, i == 0)).collect();
    Ok(wire::QueueSnapshot { revision, actions })
}

fn unknown_action(id: &str) -> IpcError {
    IpcError::new(
        IpcErrorCode::UnknownAction,
        format!("Pending action {id} is not on the stack any more (it was resolved or the workspace changed); refresh the queue."),
    )
}

#[tauri::command]
pub async fn get_action_files(state: State<'_, AppState>, action_id: String) -> Result<Vec<wire::FileEntry>> {
    let (session, _) = state.session().await;
    let action = session.store().get(&action_id).ok_or_else(|| unknown_action(&action_id))?;
    Ok(match &action.change_set {
        Some(cs) => cs.files().iter().map(convert::file_entry).collect(),
        None => Vec::new(),
    })
}

/// What changed in one file of a review's next round since the previous round's proposal.
#[tauri::command]
pub async fn get_round_diff(
    state: State<'_, AppState>,
    action_id: String,
    path: String,
    context: Option<u32>,
) -> Result<wire::FileDiff> {
    let (session, _) = state.session().await;
    let context = context.unwrap_or(3) as usize;
    let store = session.store().clone();
    let (id, p) = (action_id.clone(), path.clone());
    diff_off_thread(
        move || store.round_diff(&id, &p, context),
        || format!("{path} of action {action_id} has no previous round to compare with."),
    )
    .await
}

/// Computes a file diff on a blocking thread (a big file must not hold an async worker);
/// `None` is the `unknownFile` error `missing` words.
async fn diff_off_thread(
    diff: impl FnOnce() -> Option<resolve_engine::FileDiff> + Send + 'static,
    missing: impl FnOnce() -> String,
) -> Result<wire::FileDiff> {
    let diff = tauri::async_runtime::spawn_blocking(diff)
        .await
        .map_err(|e| IpcError::new(IpcErrorCode::Internal, format!("diff task failed: {e}")))?
        .ok_or_else(|| IpcError::new(IpcErrorCode::UnknownFile, missing()))?;
    Ok(convert::file_diff(diff))
}

#[tauri::command]
pub async fn get_file_diff(
    state: State<'_, AppState>,
    action_id: String,
    path: String,
    context: Option<u32>,
) -> Result<wire::FileDiff> {
    let (session, _) = state.session().await;
    let action = session.store().get(&action_id).ok_or_else(|| unknown_action(&action_id))?;
    let cs = action.change_set.clone().ok_or_else(|| {
        IpcError::new(IpcErrorCode::UnknownFile, format!("Action {action_id} has no file changes to show."))
    })?;
    let context = context.unwrap_or(3) as usize;
    let p = path.clone();
    diff_off_thread(move || cs.diff_file(&p, context), || format!("{path} is not part of action {action_id}.")).await
}

#[tauri::command]
pub async fn get_action_renames(state: State<'_, AppState>, action_id: String) -> Result<Vec<wire::RenameRow>> {
    let (session, _) = state.session().await;
    let action = session.store().get(&action_id).ok_or_else(|| unknown_action(&action_id))?;
    Ok(action.renames.iter().flat_map(|rows| rows.iter()).map(convert::rename_row).collect())
}

#[tauri::command]
pub async fn resolve_action(
    state: State<'_, AppState>,
    action: wire::ResolveChoice,
    reason: String,
    expected_id: String,
    leave_out: Option<wire::LeaveOut>,
    edits: Option<Vec<wire::PersonEdit>>,
) -> Result<wire::ResolveOutcome> {
    let (session, _) = state.session().await;
    let (choice, review) = convert::resolve_action(action);
    let resolve =
        Resolve { choice, reason, expected_id: Some(expected_id), leave_out, review, edits: edits.unwrap_or_default() };
    convert::resolve_outcome(session.resolve(Actor::Person, resolve).await)
}

#[tauri::command]
pub async fn list_history(state: State<'_, AppState>) -> Result<Vec<wire::HistoryEntry>> {
    let mut history = state.history().await;
    crate::undo::annotate(&state, &mut history).await;
    Ok(history)
}

#[tauri::command]
pub async fn list_tools(state: State<'_, AppState>) -> Result<Vec<wire::ToolInfo>> {
    let (session, _) = state.session().await;
    Ok(session.tools().iter().map(convert::tool_info).collect())
}

#[tauri::command]
pub async fn run_tool(
    state: State<'_, AppState>,
    name: String,
    params: Value,
    run_id: Option<u64>,
) -> Result<wire::ToolRunOutcome> {
    let (session, _) = state.session().await;
    let run = state.runs().start_run(run_id);
    let ctx = ToolContext::new(session.new_call_id())
        .with_cancel(run.cancel.clone())
        .with_progress(events::progress_sink(state.emitter()));
    let call_id = ctx.call_id.clone();
    let result = session.call_with(Actor::Person, ctx, &name, params).await;
    Ok(convert::tool_run(call_id, result))
}

#[tauri::command]
pub async fn rerun_action(
    state: State<'_, AppState>,
    action_id: String,
    run_id: Option<u64>,
) -> Result<wire::ToolRunOutcome> {
    let (session, _) = state.session().await;
    let run = state.runs().start_run(run_id);
    let ctx = ToolContext::new(session.new_call_id())
        .with_cancel(run.cancel.clone())
        .with_progress(events::progress_sink(state.emitter()));
    let call_id = ctx.call_id.clone();
    let result = session.rerun_with(Actor::Person, ctx, &action_id).await;
    Ok(convert::tool_run(call_id, result))
}

#[tauri::command]
pub async fn run_script(
    state: State<'_, AppState>,
    text: String,
    run_id: Option<u64>,
) -> Result<Vec<wire::ScriptStep>> {
    let (session, _) = state.session().await;
    let run = state.runs().start_run(run_id);
    let emit = state.emitter();
    // Progress: one `tool-progress` per step (call id `script`), and each step's own tool
    // progress under its call id.
    let total =
        text.lines().enumerate().filter(|(i, l)| matches!(resolve_agent::parse_line(i + 1, l), Ok(Some(_)))).count();
    let script_progress = |done: usize, message: Option<String>| {
        let payload =
            wire::ToolProgress { call_id: "script".into(), done: done as u64, total: Some(total as u64), message };
        emit(wire::ipc::events::TOOL_PROGRESS, serde_json::to_value(payload).unwrap_or_default());
    };
    let mut steps = Vec::new();
    let done = std::sync::atomic::AtomicUsize::new(0);
    let outcome = resolve_agent::run_script_in(
        &session,
        Actor::Script,
        text.as_bytes(),
        &run.cancel,
        |line| {
            script_progress(done.load(std::sync::atomic::Ordering::Relaxed), Some(format!("line {line}")));
            ToolContext::new(session.new_call_id()).with_progress(events::progress_sink(emit.clone()))
        },
        |r| {
            done.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            steps.push(wire::ScriptStep {
                step: r.step as u32,
                line: r.line as u32,
                tool: r.tool.clone(),
                is_error: r.is_error,
                text: r.text.clone(),
            })
        },
    )
    .await;
    script_progress(steps.len(), None);
    match outcome {
        Ok(_) => Ok(steps),
        Err(resolve_agent::ScriptError::Cancelled { line }) => Err(IpcError::new(
            IpcErrorCode::Cancelled,
            format!("Cancelled before line {line}: the {} step(s) before it ran.", steps.len()),
        )),
        Err(e) => Err(IpcError::new(IpcErrorCode::InvalidParams, format!("{e}; the steps before it ran."))),
    }
}

/// Cancels the window's tool run, re-run or script in flight (see `runs`).
#[tauri::command]
/// `runIds`: the window's runs to cancel (one not started here yet starts cancelled); without
/// them, every run in flight.
pub async fn cancel_tool_run(state: State<'_, AppState>, run_ids: Option<Vec<u64>>) -> Result<()> {
    match run_ids {
        Some(ids) => state.runs().cancel_runs(&ids),
        None => {
            state.runs().cancel_all();
        }
    }
    Ok(())
}

#[tauri::command]
pub async fn get_file_texts(state: State<'_, AppState>, action_id: String, path: String) -> Result<wire::FileTexts> {
    let (session, _) = state.session().await;
    let action = session.store().get(&action_id).ok_or_else(|| unknown_action(&action_id))?;
    let cs = action.change_set.clone().ok_or_else(|| {
        IpcError::new(IpcErrorCode::UnknownFile, format!("Action {action_id} has no file changes to show."))
    })?;
    let texts = tauri::async_runtime::spawn_blocking(move || match cs.file_texts(&path) {
        Some((old, new)) => Ok(convert::file_texts(path, old, new)),
        None => Err(path),
    })
    .await
    .map_err(|e| IpcError::new(IpcErrorCode::Internal, format!("text task failed: {e}")))?
    .map_err(|path| IpcError::new(IpcErrorCode::UnknownFile, format!("{path} is not part of action {action_id}.")))?;
    Ok(texts)
}

/// Opens a folder beside the open ones (or finds it open) and shows it.
#[tauri::command]
pub async fn open_workspace(state: State<'_, AppState>, path: String) -> Result<wire::SessionInfo> {
    state.open_folder(std::path::Path::new(&path), crate::state::Show::Yes).await
}

#[tauri::command]
pub async fn list_folders(state: State<'_, AppState>) -> Result<wire::FolderList> {
    Ok(state.folders().await)
}

/// Every open folder's pending actions, newest push first.
#[tauri::command]
pub async fn list_inbox(state: State<'_, AppState>) -> Result<Vec<wire::InboxItem>> {
    Ok(state.inbox().await)
}

/// Whether the desk notifies and shows a tray icon.
#[tauri::command]
pub async fn get_desk_settings(state: State<'_, AppState>) -> Result<wire::DeskSettings> {
    Ok(state.desk_settings())
}

/// Saves the notification and tray settings (`<config>/resolve-desk/desk.json`).
#[tauri::command]
pub async fn save_desk_settings(
    state: State<'_, AppState>,
    settings: wire::DeskSettings,
) -> Result<wire::DeskSettings> {
    state.set_desk_settings(settings).map_err(|e| IpcError::new(IpcErrorCode::Io, e))?;
    Ok(state.desk_settings())
}

/// Shows another open folder: every other command then acts on it.
#[tauri::command]
pub async fn select_folder(state: State<'_, AppState>, root: String) -> Result<wire::SessionInfo> {
    state.select_folder(&root).await
}

/// Closes one open folder (the UI asked about its pending actions first: kept unless
/// discarded with `discard_all { folder }`).
#[tauri::command]
pub async fn close_folder(state: State<'_, AppState>, root: String) -> Result<wire::FolderList> {
    state.close_folder(&root).await
}

#[tauri::command]
pub async fn recent_workspaces(state: State<'_, AppState>) -> Result<Vec<String>> {
    Ok(state.recent_workspaces())
}

#[tauri::command]
pub async fn set_policy(state: State<'_, AppState>, policy: wire::Policy) -> Result<wire::SessionInfo> {
    let (session, _) = state.session().await;
    let name = match policy {
        wire::Policy::Human => "human",
        wire::Policy::Agent => "agent",
    };
    // The engine refuses while actions are pending; its message says so.
    let result = session.call(Actor::Person, "set_policy", json!({"policy": name})).await;
    if result.is_error {
        return Err(convert::ipc_error(&result));
    }
    Ok(state.info().await)
}

fn settings_error(e: resolve_agent::llm::ConfigError) -> IpcError {
    let code = match e {
        resolve_agent::llm::ConfigError::File(resolve_userfile::UserFileError::Invalid { .. }) => {
            IpcErrorCode::InvalidParams
        }
        resolve_agent::llm::ConfigError::File(_) => IpcErrorCode::Io,
        resolve_agent::llm::ConfigError::Parse { .. }
        | resolve_agent::llm::ConfigError::BaseUrl(_)
        | resolve_agent::llm::ConfigError::EmptyModel
        | resolve_agent::llm::ConfigError::KeyEnvName(_)
        | resolve_agent::llm::ConfigError::ResolveWait(_) => IpcErrorCode::InvalidParams,
    };
    IpcError::new(code, e.to_string())
}

#[tauri::command]
pub async fn start_agent_turn(state: State<'_, AppState>, prompt: String) -> Result<u64> {
    let (session, conversation) = state.conversation().await;
    let config = ProviderConfig::load(state.config_dir()).map_err(settings_error)?;
    conversation.start_turn(session, config, prompt, Some(state.emitter()))
}

#[tauri::command]
pub async fn stop_agent_turn(state: State<'_, AppState>) -> Result<()> {
    let (_, conversation) = state.conversation().await;
    conversation.stop();
    Ok(())
}

#[tauri::command]
pub async fn new_conversation(
    state: State<'_, AppState>,
    discard_reason: Option<String>,
) -> Result<wire::NewConversationOutcome> {
    let (_, conversation) = state.conversation().await;
    let desk = state.desk().await;
    let discarded = conversation.start_new(&desk, discard_reason.as_deref()).await?;
    Ok(wire::NewConversationOutcome { discarded })
}

#[tauri::command]
pub async fn get_conversation(state: State<'_, AppState>) -> Result<wire::ConversationView> {
    let (_, conversation) = state.conversation().await;
    Ok(conversation.view())
}

#[tauri::command]
pub async fn get_agent_settings(state: State<'_, AppState>) -> Result<wire::AgentSettings> {
    let config = ProviderConfig::load(state.config_dir()).map_err(settings_error)?;
    Ok(agent_settings_view(config, state.config_dir().to_path_buf()).await)
}

/// The settings as shown, with where the key comes from (asking the keyring, off the async
/// workers: it is a D-Bus round trip).
async fn agent_settings_view(config: ProviderConfig, config_dir: std::path::PathBuf) -> wire::AgentSettings {
    let (source, problem) = tauri::async_runtime::spawn_blocking({
        let config = config.clone();
        move || {
            let (_key, source, problem) = resolve_agent::llm::secret::api_key(&config);
            (source, problem)
        }
    })
    .await
    .unwrap_or((resolve_agent::llm::secret::KeySource::None, None));
    convert::agent_settings(&config, &config_dir, source, problem.map(|p| p.to_string()))
}

#[tauri::command]
pub async fn save_agent_settings(
    state: State<'_, AppState>,
    base_url: String,
    model: String,
    api_key_env: String,
    resolve_wait_secs: Option<u64>,
    api_key: Option<String>,
    forget_api_key: Option<bool>,
) -> Result<wire::AgentSettings> {
    // Changed under the file's lock: timeouts and retries stay as the file has them now (a
    // file that is not valid JSON is an error, never replaced).
    let config = ProviderConfig::update(state.config_dir(), |c| {
        c.base_url = base_url.trim().to_string();
        c.model = model.trim().to_string();
        c.api_key_env = api_key_env.trim().to_string();
        if let Some(secs) = resolve_wait_secs {
            c.resolve_wait_secs = secs;
        }
    })
    .map_err(settings_error)?;
    // The key typed into the dialog goes to the system keyring only (never the file, never
    // a log); an empty field keeps the stored one.
    let key = api_key.filter(|k| !k.trim().is_empty());
    if key.is_some() || forget_api_key == Some(true) {
        let for_keyring = config.clone();
        let stored = tauri::async_runtime::spawn_blocking(move || match key {
            Some(key) => resolve_agent::llm::secret::store_key(&for_keyring, &key),
            None => resolve_agent::llm::secret::forget_key(&for_keyring).map(|_| ()),
        })
        .await
        .map_err(|e| IpcError::new(IpcErrorCode::Internal, e.to_string()))?;
        if let Err(e) = stored {
            return Err(IpcError::new(
                IpcErrorCode::Io,
                format!("The settings were saved, but the API key was not: {e}"),
            ));
        }
    }
    Ok(agent_settings_view(config, state.config_dir().to_path_buf()).await)
}

#[tauri::command]
pub async fn list_notices(state: State<'_, AppState>) -> Result<Vec<wire::Notice>> {
    Ok(state.notices().list())
}

#[tauri::command]
pub async fn dismiss_notice(state: State<'_, AppState>, id: String) -> Result<Vec<wire::Notice>> {
    state.notices().dismiss(&id)
}

/// A banner's button: "Trust this folder's tools" (its id carries the fingerprint of the tools
/// the person was shown: tools changed since are refused, naming the folder) or "Not now".
#[tauri::command]
pub async fn notice_action(
    state: State<'_, AppState>,
    notice_id: String,
    action_id: String,
) -> Result<Vec<wire::Notice>> {
    use crate::notices::{NOT_NOW, TRUST, TRUST_ACTION};
    if action_id == NOT_NOW {
        state.notices().put_away(&notice_id);
        return Ok(state.notices().list());
    }
    match action_id.strip_prefix(TRUST_ACTION) {
        Some(fingerprint) if notice_id == TRUST => {
            let desk = state.desk().await;
            let shown = resolve_desk_core::Fingerprint(fingerprint.to_string());
            let result = desk.trust_tools(Some(&shown));
            // Whatever happened, the banner now says how things are.
            crate::notices::show_trust(state.notices(), &desk.trust_state());
            result.map_err(|e| IpcError::new(IpcErrorCode::InvalidParams, sentence(&e.to_string())))?;
            Ok(state.notices().list())
        }
        _ => Err(IpcError::new(
            IpcErrorCode::InvalidParams,
            format!("The banner `{notice_id}` has no button `{action_id}`; reload the window."),
        )),
    }
}

/// "Not now" on an action an agent waits on (`Session::snooze`): the waiting agents are told
/// the person will review it later and nothing was applied; the action stays pending. How many
/// waits were answered (0: nobody waited any more).
#[tauri::command]
pub async fn snooze_action(state: State<'_, AppState>, action_id: String) -> Result<u32> {
    let (session, _) = state.session().await;
    if session.store().get(&action_id).is_none() {
        return Err(unknown_action(&action_id));
    }
    Ok(u32::try_from(session.snooze(&action_id)).unwrap_or(u32::MAX))
}

fn sentence(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect::<String>() + ".",
        None => String::new(),
    }
}

/// Discards every pending action of `folder` (a root), or of every open folder (`None`: the
/// window closes), as the person with `reason`.
#[tauri::command]
pub async fn discard_all(state: State<'_, AppState>, reason: String, folder: Option<String>) -> Result<Vec<String>> {
    let desks = match &folder {
        Some(root) => vec![state.desk_of(root).await?],
        None => state.desks().await,
    };
    // A blank reason is refused by the first folder with something pending, before it discards
    // anything; the folders before it had nothing to discard.
    let purpose = if folder.is_some() { "before closing this folder" } else { "before leaving this workspace" };
    let mut discarded = Vec::new();
    for desk in desks {
        discarded.extend(desk.discard_all(&reason, purpose).await.map_err(convert::desk_error)?);
    }
    Ok(discarded)
}

#[tauri::command]
pub async fn confirm_close<R: tauri::Runtime>(
    window: tauri::Window<R>,
    state: State<'_, AppState>,
    proceed: bool,
) -> Result<()> {
    state.close_guard().answer(proceed);
    if proceed {
        window
            .close()
            .map_err(|e| IpcError::new(IpcErrorCode::Internal, format!("Could not close the window: {e}")))?;
    }
    Ok(())
}

#[tauri::command]
pub async fn search_history(
    state: State<'_, AppState>,
    query: wire::HistoryQuery,
    offset: u32,
    limit: u32,
) -> Result<wire::HistoryPage> {
    crate::history::page(&state, &query, offset, limit).await
}

#[tauri::command]
pub async fn export_history(
    state: State<'_, AppState>,
    query: wire::HistoryQuery,
    format: wire::ExportFormat,
    path: String,
) -> Result<wire::ExportOutcome> {
    crate::history::export(&state, &query, format, std::path::Path::new(&path)).await
}

/// What changed at `path`, a file of stale action `action_id`, since its preview: the
/// previewed content → the disk now.
#[tauri::command]
pub async fn get_since_preview(
    state: State<'_, AppState>,
    action_id: String,
    path: String,
) -> Result<wire::SincePreview> {
    let (session, _) = state.session().await;
    if session.store().get(&action_id).is_none() {
        return Err(unknown_action(&action_id));
    }
    let since = tauri::async_runtime::spawn_blocking(move || session.since_preview(&action_id, &path))
        .await
        .map_err(|e| IpcError::new(IpcErrorCode::Internal, format!("diff task failed: {e}")))?
        .map_err(|e| IpcError::new(IpcErrorCode::UnknownFile, e.to_string()))?;
    Ok(convert::since_preview(since))
}

/// Reverts an applied change set from the history (see `crate::undo`).
#[tauri::command]
pub async fn undo_decision(
    state: State<'_, AppState>,
    decision_id: String,
    reason: String,
) -> Result<wire::ResolveOutcome> {
    crate::undo::run(&state, resolve_engine::ResolveAction::Undo, decision_id, reason).await
}

/// Writes an undone action's bytes again (see `crate::undo`).
#[tauri::command]
pub async fn redo_decision(
    state: State<'_, AppState>,
    decision_id: String,
    reason: String,
) -> Result<wire::ResolveOutcome> {
    crate::undo::run(&state, resolve_engine::ResolveAction::Redo, decision_id, reason).await
}

/// The pieces of one file of an action that a partial apply can leave out one by one: an
/// `ast_edit` file's single replacements, any other text edit's hunks; `note` says why a file
/// has none to offer.
#[tauri::command]
pub async fn get_file_replacements(
    state: State<'_, AppState>,
    action_id: String,
    path: String,
) -> Result<wire::FileReplacements> {
    let (session, _) = state.session().await;
    let action = session.store().get(&action_id).ok_or_else(|| unknown_action(&action_id))?;
    let cs = action.change_set.clone().ok_or_else(|| {
        IpcError::new(IpcErrorCode::UnknownFile, format!("Action {action_id} has no file changes to show."))
    })?;
    if !cs.changes().iter().any(|c| c.path() == path) {
        return Err(IpcError::new(IpcErrorCode::UnknownFile, format!("{path} is not part of action {action_id}.")));
    }
    // An ast_edit file's single replacements; any other text edit's hunks.
    let rows = match cs.replacement_rows(&path) {
        Some(rows) => Some((rows, wire::PieceUnit::Replacement)),
        None => cs.hunk_rows(&path).map(|rows| (rows, wire::PieceUnit::Hunk)),
    };
    Ok(match rows {
        Some((rows, unit)) => wire::FileReplacements {
            path,
            replacements: rows.into_iter().map(convert::file_replacement).collect(),
            note: None,
            unit,
        },
        None => wire::FileReplacements {
            path,
            replacements: Vec::new(),
            note: Some(
                "This file cannot be taken in part (it is created, deleted, renamed, binary or very large); you can leave out the whole file.".into(),
            ),
            unit: wire::PieceUnit::Hunk,
        },
    })
}

/// The end of an external tool's stderr log (what it printed while running), for the window.
#[tauri::command]
pub async fn read_tool_log(state: State<'_, AppState>, name: String) -> Result<wire::ToolLog> {
    match state.tool_log(&name).await {
        None => Err(IpcError::new(
            IpcErrorCode::UnknownTool,
            format!("{name} is not an external tool of this workspace: only tools in .resolve/tools or your tools folder have a log."),
        )),
        Some((path, Ok(text))) => Ok(wire::ToolLog { tool: name, path, text }),
        Some((path, Err(e))) if e.kind() == std::io::ErrorKind::NotFound => {
            Ok(wire::ToolLog { tool: name, path, text: String::new() })
        }
        Some((path, Err(e))) => Err(IpcError::new(IpcErrorCode::Io, format!("cannot read the log {path}: {e}"))),
    }
}

/// The page has painted the queue for the first time: records the start-up profile (the
/// page's own marks, ms since its navigation started at `origin`, epoch ms) when
/// `RESOLVE_DESK_STARTUP_MARK` names a file; otherwise does nothing.
#[tauri::command]
pub fn startup_painted(marks: Vec<(String, f64)>, origin: f64) {
    crate::startup::painted(&marks, origin);
}

/// The events pushed after number `after` (see `events::EventHub`); waits for one when there
/// are none yet. The page keeps one call in flight.
#[tauri::command]
pub async fn next_events(state: State<'_, AppState>, after: Option<u64>) -> Result<wire::EventBatch> {
    Ok(state.events().next(after, crate::events::POLL_WAIT).await)
}

/// The comments of action `action_id` after a change, or why the change was refused.
fn comments_after(
    session: &resolve_engine::Session,
    action_id: &str,
    changed: std::result::Result<(), resolve_engine::CommentError>,
) -> Result<Vec<wire::ReviewComment>> {
    changed.map_err(convert::comment_error)?;
    Ok(session.store().comments(action_id).iter().map(convert::review_comment).collect())
}

/// Adds a comment on lines of a pending action (the backend quotes them); the action's
/// comments after it, in file order.
#[tauri::command]
pub async fn add_comment(
    state: State<'_, AppState>,
    action_id: String,
    draft: wire::CommentDraft,
) -> Result<Vec<wire::ReviewComment>> {
    let (session, _) = state.session().await;
    let added = session.add_comment(&action_id, &convert::comment_draft(draft)).map(|_| ());
    comments_after(&session, &action_id, added)
}

/// Replaces a comment's text (its lines and quote stay); the action's comments after it.
#[tauri::command]
pub async fn edit_comment(
    state: State<'_, AppState>,
    action_id: String,
    comment_id: String,
    text: String,
) -> Result<Vec<wire::ReviewComment>> {
    let (session, _) = state.session().await;
    let edited = session.edit_comment(&action_id, &comment_id, &text).map(|_| ());
    comments_after(&session, &action_id, edited)
}

/// Marks a file of a pending action viewed, or clears the mark (`viewed: false`). The queue
/// event that follows carries the action's marks.
#[tauri::command]
pub async fn set_file_viewed(state: State<'_, AppState>, action_id: String, path: String, viewed: bool) -> Result<()> {
    let (session, _) = state.session().await;
    session.set_viewed(&action_id, &path, viewed).map_err(convert::comment_error)
}

/// Deletes a comment; the action's comments after it.
#[tauri::command]
pub async fn delete_comment(
    state: State<'_, AppState>,
    action_id: String,
    comment_id: String,
) -> Result<Vec<wire::ReviewComment>> {
    let (session, _) = state.session().await;
    let deleted = session.delete_comment(&action_id, &comment_id);
    comments_after(&session, &action_id, deleted)
}
