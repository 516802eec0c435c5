use resolve_engine::ActionStatus;
use serde_json::json;

use crate::{fixture, TOOL};

#[tokio::test]
async fn label_is_singular_for_one_file() {
    let fx = fixture(&[("IMG_1.jpg", "1")]);
    let r = fx.preview(json!("*.jpg"), "^IMG_", "photo-").await;
    assert!(!r.is_error, "{}", r.text_content());
    assert_eq!(fx.actions()[0].label, "Batch rename: 1 file", "singular label for one file");
}

#[tokio::test]
async fn label_is_plural_for_several_files() {
    let fx = fixture(&[("IMG_1.jpg", "1"), ("IMG_2.jpg", "2"), ("IMG_3.jpg", "3")]);
    let r = fx.preview(json!("*.jpg"), "^IMG_", "photo-").await;
    assert!(!r.is_error, "{}", r.text_content());
    assert_eq!(fx.actions()[0].label, "Batch rename: 3 files", "plural label");
}

#[tokio::test]
async fn action_names_batch_rename_preview_as_its_source() {
    let fx = fixture(&[("a.txt", "a")]);
    fx.preview(json!(["a.txt"]), "a", "b").await;
    let action = &fx.actions()[0];
    assert_eq!(action.source_tool_name, "batch_rename_preview");
    assert_eq!(action.status, ActionStatus::Pending);
}

#[tokio::test]
async fn preview_shows_an_old_to_new_table_and_renames_nothing() {
    let fx = fixture(&[("photos/IMG_0001.jpg", "1"), ("photos/IMG_0002.jpg", "2")]);
    let before = fx.listing();
    let r = fx.preview(json!("photos/*.jpg"), r"^IMG_(\d+)", "holiday-$1").await;
    let text = r.text_content();
    assert!(!r.is_error, "{text}");
    assert!(text.contains("photos/IMG_0001.jpg  →  photos/holiday-0001.jpg"), "old → new row: {text}");
    assert!(text.contains("photos/IMG_0002.jpg  →  photos/holiday-0002.jpg"), "old → new row: {text}");
    assert!(text.contains("Nothing has been renamed yet"), "the text says it is a preview: {text}");
    assert_eq!(fx.listing(), before, "a preview has no side effects");
    let details = fx.actions()[0].details.clone().expect("the action has details");
    assert_eq!(
        details,
        json!({"renames": [
            {"from": "photos/IMG_0001.jpg", "to": "photos/holiday-0001.jpg", "status": "rename"},
            {"from": "photos/IMG_0002.jpg", "to": "photos/holiday-0002.jpg", "status": "rename"}
        ], "count": 2}),
        "structured list for the UI"
    );
    let result_details = r.details.expect("the preview result has details");
    assert_eq!(result_details["action_id"], json!(fx.actions()[0].id), "the result names the queued action");
}

#[tokio::test]
async fn unchanged_files_are_listed_but_not_counted() {
    let fx = fixture(&[("IMG_1.jpg", "1"), ("notes.jpg", "n")]);
    let r = fx.preview(json!("*.jpg"), "^IMG_", "photo-").await;
    let text = r.text_content();
    assert!(text.contains("notes.jpg") && text.contains("(unchanged)"), "unchanged file listed: {text}");
    assert!(text.contains("1 file to rename, 1 unchanged"), "summary: {text}");
    let action = &fx.actions()[0];
    assert_eq!(action.label, "Batch rename: 1 file", "unchanged files are not counted");
    let details = action.details.clone().unwrap();
    assert_eq!(details["count"], json!(1));
    assert_eq!(details["renames"][1], json!({"from": "notes.jpg", "to": "notes.jpg", "status": "unchanged"}));
    assert_eq!(fx.apply().await.text_content(), "Renamed 1 file.");
    assert_eq!(fx.read("notes.jpg"), "n", "the unchanged file is untouched");
}

#[tokio::test]
async fn nothing_is_queued_when_no_name_changes() {
    let fx = fixture(&[("a.txt", "a")]);
    let r = fx.preview(json!("*.txt"), "zzz", "y").await;
    assert!(!r.is_error, "a preview that changes nothing is not an error: {}", r.text_content());
    assert!(r.text_content().contains("no pending action was queued"), "{}", r.text_content());
    assert!(fx.actions().is_empty(), "nothing to apply, nothing queued");
}

#[tokio::test]
async fn folders_are_skipped_and_the_preview_says_so() {
    let fx = fixture(&[("old-notes.txt", "n"), ("old-stuff/inner.txt", "i")]);
    let r = fx.preview(json!("*"), "^old-", "new-").await;
    let text = r.text_content();
    assert!(!r.is_error, "{text}");
    assert!(text.contains("old-stuff") && text.contains("folder: not renamed"), "folder skipped and said: {text}");
    let details = fx.actions()[0].details.clone().unwrap();
    assert!(
        details["renames"]
            .as_array()
            .unwrap()
            .contains(&json!({"from": "old-stuff", "to": "old-stuff", "status": "directory_skipped"})),
        "{details}"
    );
    assert_eq!(fx.actions()[0].label, "Batch rename: 1 file", "the folder is not counted");
    fx.apply().await;
    assert_eq!(fx.listing(), vec!["new-notes.txt", "old-stuff/", "old-stuff/inner.txt"]);
}

#[tokio::test]
async fn find_matches_the_file_name_not_its_folder() {
    let fx = fixture(&[("IMG_trip/IMG_1.jpg", "1")]);
    fx.preview(json!("**/*.jpg"), "IMG_", "").await;
    assert_eq!(fx.apply().await.text_content(), "Renamed 1 file.");
    assert_eq!(fx.listing(), vec!["IMG_trip/", "IMG_trip/1.jpg"], "only the name changed, the folder kept its name");
}

#[tokio::test]
async fn star_does_not_cross_folders_and_double_star_does() {
    let fx = fixture(&[("a.txt", "a"), ("sub/b.txt", "b"), ("sub/deeper/c.txt", "c")]);
    let r = fx.preview(json!("*.txt"), r"\.txt$", ".md").await;
    assert_eq!(fx.actions()[0].label, "Batch rename: 1 file", "`*` stays in the root: {}", r.text_content());
    fx.discard("again").await;
    fx.preview(json!("**/*.txt"), r"\.txt$", ".md").await;
    assert_eq!(fx.actions()[0].label, "Batch rename: 3 files", "`**` crosses folders");
    fx.apply().await;
    assert_eq!(fx.listing(), vec!["a.md", "sub/", "sub/b.md", "sub/deeper/", "sub/deeper/c.md"]);
}

#[tokio::test]
async fn literal_paths_and_overlapping_globs_select_each_file_once() {
    let fx = fixture(&[("photo [1].jpg", "1"), ("b.jpg", "b")]);
    let r = fx.preview(json!(["photo [1].jpg", "*.jpg", "./b.jpg"]), r"\.jpg$", ".jpeg").await;
    assert!(!r.is_error, "{}", r.text_content());
    assert_eq!(fx.actions()[0].label, "Batch rename: 2 files", "each file once: {}", r.text_content());
    fx.apply().await;
    assert_eq!(fx.listing(), vec!["b.jpeg", "photo [1].jpeg"]);
}

#[tokio::test]
async fn named_captures_and_every_match_are_replaced() {
    let fx = fixture(&[("2023-05-01 beach day.jpg", "x")]);
    let r = fx.preview(json!("*.jpg"), r"^(?P<y>\d{4})-(?P<m>\d\d)-\d\d ", "${m}-${y}_").await;
    assert!(!r.is_error, "{}", r.text_content());
    fx.apply().await;
    fx.preview(json!("*.jpg"), " ", "_").await;
    fx.apply().await;
    assert_eq!(fx.listing(), vec!["05-2023_beach_day.jpg"], "captures inserted, every space replaced");
}

#[tokio::test]
async fn invalid_regex_is_refused_with_a_message_naming_it() {
    let fx = fixture(&[("a.txt", "a")]);
    let r = fx.preview(json!("*.txt"), "(unclosed", "x").await;
    let before = fx.listing();
    crate::assert_refused(&fx, &r, "`find` is not a valid regular expression: `(unclosed`", &before);
    assert_eq!(r.error_code.as_deref(), Some("invalid_params"));
}

#[tokio::test]
async fn reference_to_a_missing_capture_group_is_refused() {
    let fx = fixture(&[("IMG_1.jpg", "1")]);
    let before = fx.listing();
    let r = fx.preview(json!("*.jpg"), r"^IMG_(\d+)", "$1_x").await;
    crate::assert_refused(&fx, &r, "write `${1}_x`", &before);
}

#[tokio::test]
async fn malformed_parameters_are_refused_by_the_schema() {
    let fx = fixture(&[("a.txt", "a")]);
    let r = fx.session.call(resolve_engine::Actor::Agent, TOOL, json!({"files": "*.txt", "find": "a"})).await;
    assert!(r.is_error && r.text_content().contains("replace"), "missing `replace`: {}", r.text_content());
    let r =
        fx.session.call(resolve_engine::Actor::Agent, TOOL, json!({"files": [], "find": "a", "replace": "b"})).await;
    assert!(r.is_error, "an empty file list is refused: {}", r.text_content());
    assert!(fx.actions().is_empty());
}

#[tokio::test]
async fn example_script_runs_as_written() {
    let fx = fixture(&[("photos/IMG_0001.jpg", "1"), ("photos/IMG_0002.jpg", "2"), ("photos/notes.jpg", "n")]);
    let script = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/examples/rename-photos.jsonl")).unwrap();
    let mut texts = Vec::new();
    for line in script.lines().filter(|l| !l.trim().is_empty()) {
        let call: serde_json::Value = serde_json::from_str(line).expect("each line is one JSON object");
        let r = fx
            .session
            .call(resolve_engine::Actor::Script, call["tool"].as_str().unwrap(), call["params"].clone())
            .await;
        assert!(!r.is_error, "{line}: {}", r.text_content());
        texts.push(r.text_content());
    }
    assert_eq!(texts[1], "Renamed 2 files.");
    assert!(texts[3].starts_with("Discarded batch rename of 3 files. Reason: "), "{}", texts[3]);
    assert_eq!(fx.listing(), vec!["photos/", "photos/holiday-0001.jpg", "photos/holiday-0002.jpg", "photos/notes.jpg"]);
}

#[tokio::test]
async fn the_engine_sees_the_change_set_and_the_typed_table() {
    // Before: the tool applied its renames in a closure of its own, so the engine saw no
    // change set (kind and counts were guessed later from the JSON details).
    let fx = fixture(&[("IMG_1.jpg", "1"), ("IMG_2.jpg", "2"), ("notes.jpg", "n")]);
    fx.preview(json!("*.jpg"), "^IMG_", "photo-").await;
    let info = &fx.actions()[0];
    assert!(info.has_change_set, "the renames reach the engine as a change set");
    assert_eq!(info.kind, resolve_engine::ActionKind::Rename);
    assert_eq!(info.counts, resolve_engine::ActionCounts { files: 2, added: 0, removed: 0, renames: 2 });
    let action = fx.session.store().get(&info.id).unwrap();
    let cs = action.change_set.as_ref().unwrap();
    let changed: Vec<_> = cs.files().iter().map(|f| (f.old_path.clone().unwrap(), f.path.clone(), f.change)).collect();
    assert_eq!(
        changed,
        vec![
            ("IMG_1.jpg".to_string(), "photo-1.jpg".to_string(), resolve_engine::FileChange::Renamed),
            ("IMG_2.jpg".to_string(), "photo-2.jpg".to_string(), resolve_engine::FileChange::Renamed),
        ]
    );
    let rows = action.renames.as_deref().unwrap();
    assert_eq!(rows.len(), 3, "the table keeps the unchanged row");
    assert_eq!(rows[2].status, resolve_engine::RenameStatus::Unchanged);
    assert_eq!(fx.apply().await.text_content(), "Renamed 2 files.");
}

#[tokio::test]
async fn unknown_key_is_refused_naming_it_and_listing_known_keys() {
    let fx = fixture(&[("a.txt", "a")]);
    let r = fx
        .session
        .call(resolve_engine::Actor::Agent, TOOL, json!({"file": "a.txt", "find": "a", "replace": "b"}))
        .await;
    assert_eq!(
        r.text_content(),
        "Unknown parameter `file` for `batch_rename_preview`: known parameters are `files`, `find`, `replace`. Did you mean `files`?"
    );
    assert_eq!(r.error_code.as_deref(), Some("invalid_params"));
    assert!(fx.actions().is_empty());
}

#[tokio::test]
async fn parameter_messages_name_the_field_and_the_bad_value() {
    let fx = fixture(&[("a.txt", "a")]);
    let cases = [
        (
            json!({"find": "a", "replace": "b"}),
            "`files` is required: one path or glob relative to the workspace (`photos/*.jpg`), or a list of them.",
        ),
        (json!({"files": 3, "find": "a", "replace": "b"}), "`files` must be a path or glob, or a list of them, got 3."),
        (json!({"files": [], "find": "a", "replace": "b"}), "`files` must name at least one path or glob, got []."),
        (
            json!({"files": ["a.txt", ""], "find": "a", "replace": "b"}),
            "`files[1]` must be a non-empty path or glob, got \"\".",
        ),
        (
            json!({"files": "a.txt", "replace": "b"}),
            "`find` is required: a regular expression matched against each file name, e.g. `^IMG_(\\d+)`.",
        ),
        (
            json!({"files": "a.txt", "find": "", "replace": "b"}),
            "`find` must be a non-empty regular expression, got \"\".",
        ),
        (
            json!({"files": "a.txt", "find": false, "replace": "b"}),
            "`find` must be a string (a regular expression), got false.",
        ),
        (
            json!({"files": "a.txt", "find": "a"}),
            "`replace` is required: the replacement for every match (may be empty; `$1` inserts a capture group).",
        ),
        (
            json!({"files": "a.txt", "find": "a", "replace": null}),
            "`replace` must be a string (it may be empty), got null.",
        ),
    ];
    for (params, want) in cases {
        let r = fx.session.call(resolve_engine::Actor::Agent, TOOL, params.clone()).await;
        assert_eq!(r.text_content(), want, "message for {params}");
        assert_eq!(r.error_code.as_deref(), Some("invalid_params"), "{params}");
    }
    assert!(fx.actions().is_empty());
}

#[tokio::test]
async fn reject_reports_the_reason_byte_for_byte() {
    let fx = fixture(&[("a.txt", "a")]);
    fx.preview(json!("a.txt"), "a", "b").await;
    let reason = "  not now \n\tlater\n";
    let r = fx.discard(reason).await;
    assert_eq!(r.text_content(), format!("Discarded batch rename of 1 file. Reason: {reason}"));
}

#[tokio::test]
async fn the_pending_action_records_the_call_and_the_client_that_made_it() {
    let f = fixture(&[("IMG_1.jpg", "a")]);
    let params = json!({"files": ["IMG_1.jpg"], "find": "IMG_", "replace": "photo-"});
    let ctx = resolve_engine::ToolContext::new("c-3").with_client("claude-code");
    let r = f.session.call_traced(resolve_engine::Actor::Agent, ctx, TOOL, params.clone()).await;
    assert!(!r.result.is_error, "{}", r.result.text_content());
    let top = f.session.store().peek().expect("a pending action");
    assert_eq!(r.pushed, vec![top.id.clone()], "the call's record names the action it pushed");
    let info = f.session.store().info(&top.id).unwrap();
    assert_eq!(info.origin, Some(resolve_engine::ToolCall { tool: TOOL.into(), params }), "for Run again");
    assert_eq!(info.pushed_by.as_deref(), Some("claude-code"));
}
