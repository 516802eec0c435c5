fn main() {
    // The app's own commands, so capabilities can grant each one explicitly (deny by default).
    const COMMANDS: &[&str] = &[
        "get_session",
        "list_actions",
        "get_action_files",
        "get_file_diff",
        "get_action_renames",
        "resolve_action",
        "list_history",
        "list_tools",
        "run_tool",
        "rerun_action",
        "run_script",
        "open_workspace",
        "list_folders",
        "select_folder",
        "close_folder",
        "list_inbox",
        "get_desk_settings",
        "save_desk_settings",
        "recent_workspaces",
        "set_policy",
        "start_agent_turn",
        "stop_agent_turn",
        "new_conversation",
        "get_conversation",
        "get_agent_settings",
        "save_agent_settings",
        "list_notices",
        "dismiss_notice",
        "notice_action",
        "snooze_action",
        "discard_all",
        "confirm_close",
        "search_history",
        "export_history",
        "get_since_preview",
        "undo_decision",
        "redo_decision",
        "get_file_texts",
        "cancel_tool_run",
        "get_file_replacements",
        "get_round_diff",
        "add_comment",
        "edit_comment",
        "delete_comment",
        "set_file_viewed",
        "read_tool_log",
        "startup_painted",
        "next_events",
    ];
    link_hot_functions_first();
    tauri_build::try_build(
        tauri_build::Attributes::new()
            .config_path("tauri.conf.json")
            .capabilities_path_pattern("src-tauri/capabilities/**/*")
            .app_manifest(tauri_build::AppManifest::new().commands(COMMANDS)),
    )
    .expect("tauri-build failed");
}

/// Release builds of the app put the functions that run while it starts and shows an action
/// first in `.text`, in the order they first run (`link-order.txt`, made by
/// `scripts/trace-hot-functions.py`). Code is mapped in 64 KiB windows around each page that
/// runs, so scattered hot functions kept most of the 18 MB of code resident (docs/PERFORMANCE.md,
/// "App start and footprint"). A name the file lists that a build no longer has is skipped, so a
/// stale file costs memory, never correctness.
fn link_hot_functions_first() {
    // Cargo's variable when the script runs, not `env!` when it was compiled: a build script's
    // binary is reused by checkouts of the same package elsewhere that share the target folder.
    let root = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_default();
    let order = std::path::Path::new(&root).join("src-tauri/link-order.txt");
    println!("cargo:rerun-if-changed={}", order.display());
    let var = |name: &str| std::env::var(name).unwrap_or_default();
    // rust-lld is the default linker of x86_64-unknown-linux-gnu since Rust 1.90; GNU ld does not
    // take a symbol ordering file.
    let lld = var("CARGO_CFG_TARGET_ARCH") == "x86_64"
        && var("CARGO_CFG_TARGET_OS") == "linux"
        && var("CARGO_CFG_TARGET_ENV") == "gnu";
    if var("PROFILE") == "release" && lld && order.is_file() {
        println!("cargo:rustc-link-arg-bins=-Wl,--symbol-ordering-file={}", order.display());
        println!("cargo:rustc-link-arg-bins=-Wl,--no-warn-symbol-ordering");
        // Relative relocations packed (DT_RELR): the loader reads a few KiB instead of the 0.9 MB
        // `.rela.dyn` table, which stayed resident. Only when the C library the binary is built
        // against (so the one it needs) reads them: glibc 2.36 or later.
        if glibc_at_least(2, 36) {
            println!("cargo:rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
        }
    }
}

/// Whether this machine's glibc (`getconf GNU_LIBC_VERSION`, "glibc 2.36") is at least the given one.
fn glibc_at_least(major: u32, minor: u32) -> bool {
    let Ok(out) = std::process::Command::new("getconf").arg("GNU_LIBC_VERSION").output() else {
        return false;
    };
    let text = String::from_utf8_lossy(&out.stdout);
    let mut parts = text.trim().trim_start_matches("glibc ").split('.').map(|p| p.parse::<u32>().ok());
    match (parts.next().flatten(), parts.next().flatten()) {
        (Some(a), Some(b)) => (a, b) >= (major, minor),
        _ => false,
    }
}
