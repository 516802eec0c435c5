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
        "read_tool_log",
        "startup_painted",
        "next_events",
    ];
    tauri_build::try_build(
        tauri_build::Attributes::new()
            .config_path("tauri.conf.json")
            .capabilities_path_pattern("src-tauri/capabilities/**/*")
            .app_manifest(tauri_build::AppManifest::new().commands(COMMANDS)),
    )
    .expect("tauri-build failed");
}
