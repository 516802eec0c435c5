//! The tray (status) icon with the pending count, where the desktop has a tray: its label and
//! tooltip say how many actions wait over every open folder; its menu brings the window forward.
//! Optional (`DeskSettings::tray`); when off, or when the desktop has no tray, nothing changes
//! elsewhere (the window's title carries the count too).

use tauri::menu::{Menu, MenuItem};
use tauri::tray::TrayIconBuilder;
use tauri::{Manager, Runtime};

const TRAY: &str = "desk";
const SHOW: &str = "show";

/// Sets the tray icon's count (creating the icon the first time), or removes the icon when the
/// person turned it off (`wanted` false).
pub fn show_count<R: Runtime>(app: &tauri::AppHandle<R>, pending: usize, wanted: bool) {
    if !wanted {
        let _ = app.remove_tray_by_id(TRAY);
        return;
    }
    let text = if pending == 0 { "Nothing pending".to_string() } else { format!("{pending} pending") };
    let tray = match app.tray_by_id(TRAY) {
        Some(tray) => tray,
        None => match create(app) {
            Ok(tray) => tray,
            Err(e) => {
                eprintln!("resolve-desk: no tray icon ({e}); the window's title shows the count");
                return;
            }
        },
    };
    let _ = tray.set_tooltip(Some(format!("Resolve Desk: {text}")));
    let _ = tray.set_title(Some(if pending == 0 { String::new() } else { pending.to_string() }));
}

fn create<R: Runtime>(app: &tauri::AppHandle<R>) -> tauri::Result<tauri::tray::TrayIcon<R>> {
    let show = MenuItem::with_id(app, SHOW, "Show Resolve Desk", true, None::<&str>)?;
    let menu = Menu::with_items(app, &[&show])?;
    let mut builder = TrayIconBuilder::with_id(TRAY).menu(&menu).on_menu_event(|app, event| {
        if event.id().as_ref() == SHOW {
            if let Some(window) = app.get_webview_window("main") {
                let _ = window.unminimize();
                let _ = window.show();
                let _ = window.set_focus();
            }
        }
    });
    if let Some(icon) = app.default_window_icon() {
        builder = builder.icon(icon.clone());
    }
    builder.build(app)
}
