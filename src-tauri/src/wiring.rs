//! Where the app's state meets the desktop: the window's close, the control socket's
//! requests, the window title, tray count and notifications (and their clicks). Each looks up
//! the [`AppState`] from the app; the state itself imports none of this, and the parts below
//! it (`join`, `leave`, `nudge`, `tray`) know nothing of the state.

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use resolve_protocol::ipc::events::CLOSE_REQUESTED;
use resolve_protocol::CloseRequested;

use crate::join::{serve, ControlServer, Handler, JoinReply, JoinRequest};
use crate::leave::CloseVerdict;
use crate::nudge::{message, title, Deduper, Nudger, Signal};
use crate::state::{AppState, Show};

/// Wired to the window's `CloseRequested`: holds the close and sends `close-requested`
/// while actions are pending and the person has not answered.
pub fn on_close_requested<R: tauri::Runtime>(window: &tauri::Window<R>, api: &tauri::CloseRequestApi) {
    use tauri::Manager as _;
    let state = window.state::<AppState>();
    let pending = tauri::async_runtime::block_on(state.pending_total());
    if let CloseVerdict::Ask(pending) = state.close_guard().on_request(pending) {
        api.prevent_close();
        let payload = serde_json::to_value(CloseRequested { pending }).unwrap_or_default();
        state.events().push(CLOSE_REQUESTED, payload);
    }
}

/// Serves the app's control socket at `path`: a folder asked for is opened beside the others
/// (shown when the folder on screen has nothing pending, see [`Show::IfIdle`]),
/// and the window is brought forward.
pub fn serve_app<R: tauri::Runtime>(
    app: tauri::AppHandle<R>,
    path: &Path,
) -> Result<ControlServer, resolve_mcp::SocketError> {
    let handler: Handler = std::sync::Arc::new(move |request: JoinRequest| {
        let app = app.clone();
        Box::pin(async move { answer(&app, request).await })
    });
    serve(path, handler)
}

async fn answer<R: tauri::Runtime>(app: &tauri::AppHandle<R>, request: JoinRequest) -> JoinReply {
    use tauri::Manager as _;
    let state = app.state::<AppState>();
    let reply = match &request.open {
        Some(dir) => match state.open_folder(dir, Show::IfIdle).await {
            Ok(info) => JoinReply { ok: true, message: format!("opened {} in the running desk", info.workspace_root) },
            Err(e) => JoinReply { ok: false, message: e.message },
        },
        None => JoinReply { ok: true, message: "the running desk is brought forward".into() },
    };
    if let Some(window) = app.get_webview_window("main") {
        let _ = window.unminimize();
        let _ = window.show();
        let _ = window.set_focus();
    }
    reply
}

/// The app's nudger: updates the title and the tray on every change, and notifies (when the
/// window is not focused and notifications are on) with an urgency hint on every arrival.
pub fn nudger<R: tauri::Runtime>(app: tauri::AppHandle<R>) -> Nudger {
    let dedupe = Arc::new(Deduper::default());
    Arc::new(move |signal| {
        let app = app.clone();
        let dedupe = dedupe.clone();
        tauri::async_runtime::spawn(async move { react(&app, signal, &dedupe).await });
    })
}

async fn react<R: tauri::Runtime>(app: &tauri::AppHandle<R>, signal: Signal, dedupe: &Deduper) {
    use tauri::Manager as _;
    use tauri_plugin_notification::NotificationExt as _;
    let state = app.state::<AppState>();
    let window = app.get_webview_window("main");
    match signal {
        Signal::Changed => {
            let pending = state.pending_total().await;
            if let Some(window) = &window {
                let _ = window.set_title(&title(pending));
            }
            crate::tray::show_count(app, pending, state.desk_settings().tray);
        }
        Signal::Arrived(arrival) => {
            let focused = window.as_ref().and_then(|w| w.is_focused().ok()).unwrap_or(false);
            if focused || !state.desk_settings().notifications || !dedupe.admit(&arrival, Instant::now()) {
                return;
            }
            let (title, body) = message(&arrival);
            let shown = app
                .notification()
                .builder()
                .title(title)
                .body(body)
                .extra("root", &arrival.root)
                .extra("actionId", &arrival.action_id)
                .show();
            if let Err(e) = shown {
                eprintln!("resolve-desk: could not show a notification: {e}");
            }
            if let Some(window) = &window {
                let _ = window.request_user_attention(Some(tauri::UserAttentionType::Informational));
            }
        }
    }
}

/// A click on one of the desk's notifications: the window comes forward showing that folder,
/// with that action (the page is told through `reveal-action`).
pub fn on_click<R: tauri::Runtime>(app: &tauri::AppHandle<R>) {
    use tauri_plugin_notification::NotificationExt as _;
    let handle = app.clone();
    let registered = app.notification().on_action(move |performed| {
        if performed.action_id() != "tap" {
            return;
        }
        let Some(extra) = performed.notification().map(|n| n.extra().clone()) else { return };
        let text = |k: &str| extra.get(k).and_then(|v| v.as_str()).map(str::to_string);
        let (Some(root), Some(action_id)) = (text("root"), text("actionId")) else { return };
        let app = handle.clone();
        tauri::async_runtime::spawn(async move { reveal(&app, root, action_id).await });
    });
    if let Err(e) = registered {
        eprintln!("resolve-desk: clicks on notifications cannot be followed: {e}");
    }
}

/// Shows folder `root` with action `action_id` and brings the window forward.
pub async fn reveal<R: tauri::Runtime>(app: &tauri::AppHandle<R>, root: String, action_id: String) {
    use tauri::Manager as _;
    let state = app.state::<AppState>();
    if let Err(e) = state.select_folder(&root).await {
        eprintln!("resolve-desk: {}", e.message);
        return;
    }
    let payload = serde_json::to_value(resolve_protocol::RevealAction { root, action_id }).unwrap_or_default();
    state.events().push(resolve_protocol::ipc::events::REVEAL_ACTION, payload);
    if let Some(window) = app.get_webview_window("main") {
        let _ = window.unminimize();
        let _ = window.show();
        let _ = window.set_focus();
    }
}
