use std::fs;
use std::os::unix::fs::{symlink, PermissionsExt};

use resolve_engine::ActionStatus;
use serde_json::json;

use crate::fixture;

#[tokio::test]
async fn apply_renames_and_answers_exact_text() {
    let fx = fixture(&[("IMG_1.jpg", "1"), ("IMG_2.jpg", "2")]);
    fx.preview(json!("*.jpg"), "^IMG_", "photo-").await;
    let r = fx.apply().await;
    assert!(!r.is_error, "{}", r.text_content());
    assert_eq!(r.text_content(), "Renamed 2 files.");
    assert_eq!(fx.listing(), vec!["photo-1.jpg", "photo-2.jpg"]);
    assert_eq!(fx.read("photo-2.jpg"), "2", "contents follow their names");
    assert!(fx.actions().is_empty(), "an applied action leaves the stack");
}

#[tokio::test]
async fn apply_of_one_file_answers_singular_text() {
    let fx = fixture(&[("a.txt", "a")]);
    fx.preview(json!("a.txt"), "a", "b").await;
    assert_eq!(fx.apply().await.text_content(), "Renamed 1 file.");
}

#[tokio::test]
async fn discard_answers_exact_text_and_renames_nothing() {
    let fx = fixture(&[("a.txt", "a"), ("b.txt", "b")]);
    let before = fx.listing();
    fx.preview(json!("*.txt"), "^", "old-").await;
    let r = fx.discard("not today").await;
    assert_eq!(r.text_content(), "Discarded batch rename of 2 files. Reason: not today");
    assert_eq!(fx.listing(), before);
    assert!(fx.actions().is_empty());
    fx.preview(json!("a.txt"), "^", "old-").await;
    assert_eq!(fx.discard("no").await.text_content(), "Discarded batch rename of 1 file. Reason: no");
}

#[tokio::test]
async fn chain_is_applied_through_temporary_names() {
    let fx = fixture(&[("a", "A"), ("a.a", "AA")]);
    let r = fx.preview(json!(["a", "a.a"]), "^(.*)$", "$1.a").await;
    assert!(!r.is_error, "a chain is legal: {}", r.text_content());
    assert_eq!(fx.apply().await.text_content(), "Renamed 2 files.");
    assert_eq!(fx.listing(), vec!["a.a", "a.a.a"], "no temporaries left");
    assert_eq!((fx.read("a.a"), fx.read("a.a.a")), ("A".into(), "AA".into()));
}

#[tokio::test]
async fn swap_is_applied() {
    let fx = fixture(&[("x_1", "X"), ("1_x", "ONE")]);
    let r = fx.preview(json!("*"), "^([^_]+)_([^_]+)$", "${2}_${1}").await;
    assert!(!r.is_error, "a swap is legal: {}", r.text_content());
    assert_eq!(fx.apply().await.text_content(), "Renamed 2 files.");
    assert_eq!(fx.listing(), vec!["1_x", "x_1"]);
    assert_eq!((fx.read("1_x"), fx.read("x_1")), ("X".into(), "ONE".into()), "the two files traded names");
}

#[tokio::test]
async fn three_file_cycle_is_applied() {
    // Rotating the parts of each name maps 1_2_3 → 3_1_2 → 2_3_1 → 1_2_3: every target is
    // another file's current name.
    let fx = fixture(&[("1_2_3", "A"), ("3_1_2", "B"), ("2_3_1", "C")]);
    let r = fx.preview(json!("*"), r"^(\d)_(\d)_(\d)$", "${3}_${1}_${2}").await;
    assert!(!r.is_error, "a cycle is legal: {}", r.text_content());
    assert_eq!(fx.apply().await.text_content(), "Renamed 3 files.");
    assert_eq!(fx.listing(), vec!["1_2_3", "2_3_1", "3_1_2"], "same names, no temporaries left");
    assert_eq!((fx.read("3_1_2"), fx.read("2_3_1"), fx.read("1_2_3")), ("A".into(), "B".into(), "C".into()));
}

#[tokio::test]
async fn case_only_rename_is_applied() {
    let fx = fixture(&[("a.TXT", "a"), ("B.JPG", "b")]);
    let r = fx.preview(json!("*"), r"\.(TXT|JPG)$", ".lower").await;
    assert!(!r.is_error, "{}", r.text_content());
    fx.discard("wrong").await;
    fx.preview(json!("a.TXT"), "TXT$", "txt").await;
    assert_eq!(fx.apply().await.text_content(), "Renamed 1 file.");
    assert_eq!(fx.listing(), vec!["B.JPG", "a.txt"]);
    assert_eq!(fx.read("a.txt"), "a");
}

#[tokio::test]
async fn apply_refuses_when_a_source_was_edited_since_the_preview() {
    let fx = fixture(&[("a.txt", "a"), ("b.txt", "b")]);
    fx.preview(json!("*.txt"), "^", "new-").await;
    fx.write("b.txt", "edited behind our back");
    let r = fx.apply().await;
    assert!(r.is_error, "a stale preview is refused");
    assert_eq!(r.error_code.as_deref(), Some("stale"));
    assert!(r.text_content().contains("b.txt (content changed)"), "names the file: {}", r.text_content());
    assert_eq!(fx.listing(), vec!["a.txt", "b.txt"], "nothing was renamed, not even the unchanged a.txt");
    let actions = fx.actions();
    assert_eq!(actions.len(), 1, "the action stays on the stack");
    assert!(matches!(&actions[0].status, ActionStatus::Stale { files, .. } if files == &vec!["b.txt".to_string()]));
}

#[tokio::test]
async fn apply_refuses_when_a_source_was_deleted_since_the_preview() {
    let fx = fixture(&[("a.txt", "a"), ("b.txt", "b")]);
    fx.preview(json!("*.txt"), "^", "new-").await;
    fs::remove_file(fx.abs("a.txt")).unwrap();
    let r = fx.apply().await;
    assert_eq!(r.error_code.as_deref(), Some("stale"), "{}", r.text_content());
    assert!(r.text_content().contains("a.txt (missing)"), "{}", r.text_content());
    assert_eq!(fx.listing(), vec!["b.txt"], "b.txt was not renamed");
    assert_eq!(fx.actions()[0].status.as_str(), "stale");
}

#[tokio::test]
async fn apply_refuses_when_a_source_became_another_type() {
    let fx = fixture(&[("a.txt", "a"), ("other", "o")]);
    fx.preview(json!("a.txt"), "^", "new-").await;
    fs::remove_file(fx.abs("a.txt")).unwrap();
    symlink("other", fx.abs("a.txt")).unwrap();
    let r = fx.apply().await;
    assert_eq!(r.error_code.as_deref(), Some("stale"), "{}", r.text_content());
    assert!(r.text_content().contains("a.txt (file type changed)"), "{}", r.text_content());
}

#[tokio::test]
async fn apply_refuses_when_a_target_appeared_since_the_preview() {
    let fx = fixture(&[("a.txt", "a")]);
    fx.preview(json!("a.txt"), "^a", "b").await;
    fx.write("b.txt", "someone else's");
    let r = fx.apply().await;
    assert_eq!(r.error_code.as_deref(), Some("stale"), "{}", r.text_content());
    assert_eq!(fx.read("b.txt"), "someone else's", "an existing file is never overwritten");
    assert_eq!(fx.read("a.txt"), "a");
}

#[tokio::test]
async fn applying_another_preview_of_the_same_file_first_makes_this_one_stale() {
    let fx = fixture(&[("a.txt", "a")]);
    fx.preview(json!("a.txt"), "^a", "b").await;
    fx.preview(json!("a.txt"), "^a", "c").await;
    assert_eq!(fx.apply().await.text_content(), "Renamed 1 file.", "the top (a → c) applies");
    let r = fx.apply().await;
    assert_eq!(r.error_code.as_deref(), Some("stale"), "a → b no longer holds: {}", r.text_content());
    assert_eq!(fx.listing(), vec!["c.txt"]);
    assert_eq!(fx.actions().len(), 1);
    assert_eq!(fx.actions()[0].status.as_str(), "stale");
}

#[tokio::test]
async fn failure_midway_rolls_back_every_rename() {
    let fx = fixture(&[("a.txt", "a"), ("b.txt", "b"), ("c.txt", "c")]);
    let before = fx.listing();
    fx.preview(json!("*.txt"), "^", "new-").await;
    // Renames commit in order a, b, c; the last one fails after the first two were done.
    resolve_engine::fault::fail_once_at(fx.abs("new-c.txt"));
    let r = fx.apply().await;
    assert!(r.is_error, "the injected failure is reported");
    assert_eq!(r.error_code.as_deref(), Some("apply_failed"));
    assert!(r.text_content().contains("injected fault"), "{}", r.text_content());
    assert!(r.text_content().contains("Every file was restored"), "{}", r.text_content());
    assert_eq!(fx.listing(), before, "every name is as it was, no temporary left");
    assert_eq!((fx.read("a.txt"), fx.read("b.txt"), fx.read("c.txt")), ("a".into(), "b".into(), "c".into()));
    assert_eq!(fx.actions()[0].status.as_str(), "failed", "the action stays, marked failed");
    assert_eq!(fx.apply().await.text_content(), "Renamed 3 files.", "applying again works once the fault is gone");
}

#[tokio::test]
async fn read_only_folder_is_all_or_nothing() {
    let fx = fixture(&[("docs/a.txt", "a"), ("docs/b.txt", "b")]);
    fx.preview(json!("docs/*.txt"), "^", "new-").await;
    fs::set_permissions(fx.abs("docs"), fs::Permissions::from_mode(0o555)).unwrap();
    let r = fx.apply().await;
    fs::set_permissions(fx.abs("docs"), fs::Permissions::from_mode(0o755)).unwrap();
    let listing = fx.listing();
    if r.is_error {
        assert_eq!(listing, vec!["docs/", "docs/a.txt", "docs/b.txt"], "a refused apply renames nothing");
        assert_eq!(fx.actions().len(), 1, "and keeps the action");
    } else {
        // As root the folder's mode does not stop a rename.
        assert_eq!(listing, vec!["docs/", "docs/new-a.txt", "docs/new-b.txt"], "a successful apply renames all");
        assert_eq!(r.text_content(), "Renamed 2 files.");
    }
}

#[tokio::test]
async fn symlinks_are_renamed_as_links_never_followed() {
    let fx = fixture(&[("target.txt", "t"), ("dir/inner.txt", "i")]);
    symlink("target.txt", fx.abs("link-file")).unwrap();
    symlink("dir", fx.abs("link-dir")).unwrap();
    let r = fx.preview(json!("link-*"), "^link-", "renamed-").await;
    assert!(!r.is_error, "{}", r.text_content());
    assert_eq!(fx.actions()[0].label, "Batch rename: 2 files", "a link to a folder is a link, not a folder");
    assert_eq!(fx.apply().await.text_content(), "Renamed 2 files.");
    assert_eq!(
        fx.listing(),
        vec!["dir/", "dir/inner.txt", "renamed-dir", "renamed-file", "target.txt"],
        "links renamed, their targets untouched"
    );
    assert_eq!(fs::read_link(fx.abs("renamed-file")).unwrap().to_str(), Some("target.txt"), "still a link");
    assert_eq!(fs::read_link(fx.abs("renamed-dir")).unwrap().to_str(), Some("dir"));
    assert_eq!(fx.read("target.txt"), "t");
}

#[tokio::test]
async fn link_retargeted_since_the_preview_is_stale() {
    let fx = fixture(&[("one", "1"), ("two", "2")]);
    symlink("one", fx.abs("link")).unwrap();
    fx.preview(json!("link"), "link", "alias").await;
    fs::remove_file(fx.abs("link")).unwrap();
    symlink("two", fx.abs("link")).unwrap();
    let r = fx.apply().await;
    assert_eq!(r.error_code.as_deref(), Some("stale"), "{}", r.text_content());
}

#[tokio::test]
async fn glob_does_not_walk_into_a_linked_folder() {
    let fx = fixture(&[("real/a.txt", "a")]);
    symlink("real", fx.abs("linked")).unwrap();
    fx.preview(json!("**/*.txt"), "^a", "b").await;
    assert_eq!(fx.actions()[0].label, "Batch rename: 1 file", "real/a.txt once, not again through the link");
    fx.apply().await;
    assert_eq!(fx.listing(), vec!["linked", "real/", "real/b.txt"]);
}
