//! The app put together: the builder (state, commands, window events) and `run` (command
//! line, joining a running desk, opening the folders, plugins, the event loop).

use tauri::{Manager, Runtime};

use crate::{args, commands, fit, join, memory, nudge, renderer, saved, startup, state, wiring};

/// Adds the app's state, commands and event forwarding to a builder; generic over the
/// runtime so tests can pass Tauri's `mock_builder()`.
pub fn builder<R: Runtime>(base: tauri::Builder<R>, state: state::AppState) -> tauri::Builder<R> {
    let commands: fn(tauri::ipc::Invoke<R>) -> bool = tauri::generate_handler![
        commands::get_session,
        commands::list_actions,
        commands::get_action_files,
        commands::get_file_diff,
        commands::get_action_renames,
        commands::resolve_action,
        commands::list_history,
        commands::list_tools,
        commands::run_tool,
        commands::rerun_action,
        commands::run_script,
        commands::open_workspace,
        commands::list_folders,
        commands::select_folder,
        commands::close_folder,
        commands::list_inbox,
        commands::get_desk_settings,
        commands::save_desk_settings,
        commands::recent_workspaces,
        commands::set_policy,
        commands::start_agent_turn,
        commands::stop_agent_turn,
        commands::new_conversation,
        commands::get_conversation,
        commands::get_agent_settings,
        commands::save_agent_settings,
        commands::list_notices,
        commands::dismiss_notice,
        commands::notice_action,
        commands::snooze_action,
        commands::discard_all,
        commands::confirm_close,
        commands::search_history,
        commands::export_history,
        commands::get_since_preview,
        commands::undo_decision,
        commands::redo_decision,
        commands::get_file_texts,
        commands::cancel_tool_run,
        commands::get_file_replacements,
        commands::get_round_diff,
        commands::add_comment,
        commands::edit_comment,
        commands::delete_comment,
        commands::set_file_viewed,
        commands::read_tool_log,
        commands::startup_painted,
        commands::next_events,
    ];
    base.manage(state)
        .invoke_handler(move |invoke| {
            memory::after_quiet_moment();
            commands(invoke)
        })
        .on_window_event(|window, event| {
            if let tauri::WindowEvent::CloseRequested { api, .. } = event {
                wiring::on_close_requested(window, api);
            }
        })
        .setup(|app| {
            startup::mark("window_created");
            if let Some(window) = app.get_webview_window("main") {
                if let Err(e) = fit::fit_to_monitor(&window, (900.0, 600.0), (1400.0, 900.0)) {
                    eprintln!("resolve-desk: could not fit the window to the screen: {e}");
                }
            }
            Ok(())
        })
}

/// Starts the app (parses the command line, opens the workspace or the demo).
pub fn run() {
    startup::begin();
    renderer::choose();
    // SAFETY: first in `run` (called by `main`): no tree-sitter object and no other thread
    // exist yet (`startup::begin` and `renderer::choose` start none).
    unsafe { resolve_tool_ast_edit::alloc::parse_with_mimalloc() };
    let args = match args::Args::parse(std::env::args().skip(1)) {
        Ok(a) => a,
        // `--help`/`--version` print and exit 0; a usage error prints and exits 2.
        Err(e) => e.exit(),
    };
    // One desk per user and data folder: a desk already running opens the folder beside its
    // others, and this process is done.
    let control =
        args.joins().then(|| join::control_path(&args.data_dir.clone().unwrap_or_else(saved::default_data_dir)));
    if let Some(path) = &control {
        join_running_desk(path, &args);
    }
    let state = match tauri::async_runtime::block_on(state::AppState::start(&args)) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("resolve-desk: {e}");
            std::process::exit(2);
        }
    };
    startup::mark("session_opened");
    let result = builder(tauri::Builder::<tauri::Wry>::new(), state)
        .plugin(tauri_plugin_dialog::init())
        .plugin(tauri_plugin_notification::init())
        // The last size and position (not the visibility: the window always shows).
        .plugin(
            tauri_plugin_window_state::Builder::default()
                .with_state_flags(
                    tauri_plugin_window_state::StateFlags::SIZE
                        | tauri_plugin_window_state::StateFlags::POSITION
                        | tauri_plugin_window_state::StateFlags::MAXIMIZED,
                )
                .build(),
        )
        .build(tauri::generate_context!("tauri.conf.json"));
    match result {
        // On exit, agents connected over MCP learn that the desk closed (nothing applied).
        Ok(app) => {
            // The nudge: notifications, their clicks, the title's count, the tray icon.
            wiring::on_click(app.handle());
            let nudger = wiring::nudger(app.handle().clone());
            nudger(nudge::Signal::Changed);
            app.state::<state::AppState>().set_nudger(nudger);
            if let Some(path) = &control {
                let handle = app.handle().clone();
                match tauri::async_runtime::block_on(async { wiring::serve_app(handle, path) }) {
                    Ok(server) => app.state::<state::AppState>().set_control(server),
                    Err(e) => eprintln!("resolve-desk: other folders cannot join this window: {e}"),
                }
            }
            app.run(|handle, event| match event {
                // The window exists now: its title (and the tray) count what is already pending
                // (the demo, restored actions, a script's previews).
                tauri::RunEvent::Ready => handle.state::<state::AppState>().recount(),
                tauri::RunEvent::Exit => {
                    tauri::async_runtime::block_on(handle.state::<state::AppState>().shutdown());
                }
                _ => {}
            })
        }
        Err(e) => {
            eprintln!("resolve-desk: {e}");
            std::process::exit(1);
        }
    }
}

/// Hands the folder named on the command line to the desk already running at `control`, if
/// one is, and exits; returns when none is (this process becomes the desk).
fn join_running_desk(control: &std::path::Path, args: &args::Args) {
    let open = args.workspace.as_ref().map(|w| std::fs::canonicalize(w).unwrap_or_else(|_| w.clone()));
    let request = join::JoinRequest { open };
    match tauri::async_runtime::block_on(join::ask(control, &request)) {
        Ok(None) => {}
        Ok(Some(reply)) => {
            eprintln!("resolve-desk: {}", reply.message);
            std::process::exit(if reply.ok { 0 } else { 2 });
        }
        Err(e) => {
            eprintln!("resolve-desk: {e}\nTo start a desk of its own anyway, add --new-window.");
            std::process::exit(1);
        }
    }
}
