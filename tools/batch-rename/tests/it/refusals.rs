use std::os::unix::fs::symlink;

use serde_json::json;

use crate::{assert_refused, fixture};

#[tokio::test]
async fn two_files_mapped_to_one_name_are_refused() {
    let fx = fixture(&[("IMG_1.jpg", "1"), ("DSC_1.jpg", "2")]);
    let before = fx.listing();
    let r = fx.preview(json!("*.jpg"), r"^[A-Z]+_", "photo-").await;
    assert_refused(&fx, &r, "Two files would get the same name `photo-1.jpg`: `DSC_1.jpg`, `IMG_1.jpg`", &before);
}

#[tokio::test]
async fn existing_target_that_is_not_renamed_away_is_refused() {
    let fx = fixture(&[("a.txt", "a"), ("b.txt", "b")]);
    let before = fx.listing();
    let r = fx.preview(json!("a.txt"), "^a", "b").await;
    assert_refused(
        &fx,
        &r,
        "`a.txt` would be renamed to `b.txt`, which already exists and is not renamed away",
        &before,
    );
}

#[tokio::test]
async fn existing_target_that_stays_unchanged_is_refused() {
    // b.txt is selected too but its name does not change, so it is not renamed away.
    let fx = fixture(&[("a.txt", "a"), ("b.txt", "b")]);
    let before = fx.listing();
    let r = fx.preview(json!("*.txt"), "^a", "b").await;
    assert_refused(&fx, &r, "which already exists and is not renamed away", &before);
}

#[tokio::test]
async fn existing_folder_as_target_is_refused() {
    let fx = fixture(&[("a", "a"), ("b/inner", "i")]);
    let before = fx.listing();
    let r = fx.preview(json!("a"), "a", "b").await;
    assert_refused(&fx, &r, "`a` would be renamed to `b`, which already exists", &before);
}

#[tokio::test]
async fn empty_new_name_is_refused() {
    let fx = fixture(&[("a.txt", "a")]);
    let before = fx.listing();
    let r = fx.preview(json!("a.txt"), ".*", "").await;
    assert_refused(&fx, &r, "The new name of `a.txt` would be empty", &before);
}

#[tokio::test]
async fn dot_and_dot_dot_names_are_refused() {
    let fx = fixture(&[("a.txt", "a")]);
    let before = fx.listing();
    let r = fx.preview(json!("a.txt"), ".*", ".").await;
    assert_refused(&fx, &r, "The new name of `a.txt` would be `.`, which is not a file name", &before);
    let r = fx.preview(json!("a.txt"), ".*", "..").await;
    assert_refused(&fx, &r, "would be `..`, which is not a file name", &before);
}

#[tokio::test]
async fn name_with_a_path_separator_is_refused() {
    let fx = fixture(&[("a.txt", "a")]);
    let before = fx.listing();
    let r = fx.preview(json!("a.txt"), "^", "sub/").await;
    assert_refused(&fx, &r, "would be `sub/a.txt`, which contains a path separator `/`", &before);
}

#[tokio::test]
async fn name_with_a_nul_is_refused() {
    let fx = fixture(&[("a.txt", "a")]);
    let before = fx.listing();
    let r = fx.preview(json!("a.txt"), "^a", "a\u{0}").await;
    assert_refused(&fx, &r, "would be `a\\0.txt`, which contains a NUL character", &before);
}

#[tokio::test]
async fn name_over_255_bytes_is_refused() {
    let fx = fixture(&[("a.txt", "a")]);
    let before = fx.listing();
    let r = fx.preview(json!("a.txt"), "^a", &"x".repeat(252)).await;
    assert_refused(&fx, &r, "would be 256 bytes long", &before);
    let r = fx.preview(json!("a.txt"), "^a", &"x".repeat(251)).await;
    assert!(!r.is_error, "255 bytes is allowed: {}", r.text_content());
}

#[tokio::test]
async fn target_outside_the_workspace_is_refused() {
    let fx = fixture(&[("a.txt", "a")]);
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret.txt"), "s").unwrap();
    symlink(outside.path(), fx.abs("elsewhere")).unwrap();
    let before = fx.listing();
    let r = fx.preview(json!("a.txt"), "^", "../").await;
    assert_refused(&fx, &r, "contains a path separator", &before);
    let r = fx.preview(json!("../a.txt"), "a", "b").await;
    assert_refused(&fx, &r, "Path is outside the workspace: ../a.txt", &before);
    let r = fx.preview(json!("elsewhere/secret.txt"), "secret", "public").await;
    assert_refused(&fx, &r, "Path is outside the workspace: elsewhere/secret.txt", &before);
    let r = fx.preview(json!("elsewhere/*.txt"), "secret", "public").await;
    assert_refused(&fx, &r, "Path is outside the workspace: elsewhere", &before);
    let abs = outside.path().join("secret.txt");
    let r = fx.preview(json!(abs.to_str().unwrap()), "secret", "public").await;
    assert_refused(&fx, &r, "Path is outside the workspace", &before);
    assert!(outside.path().join("secret.txt").exists(), "nothing outside was touched");
}

#[tokio::test]
async fn no_matching_file_is_refused() {
    let fx = fixture(&[("a.txt", "a")]);
    let before = fx.listing();
    let r = fx.preview(json!("*.jpg"), "a", "b").await;
    assert_refused(&fx, &r, "No file matches `files` (*.jpg)", &before);
}

#[tokio::test]
async fn selection_of_only_folders_is_refused_and_says_why() {
    let fx = fixture(&[("album/a.jpg", "a")]);
    let before = fx.listing();
    let r = fx.preview(json!("album"), "album", "photos").await;
    assert_refused(&fx, &r, "only folders matched, and batch rename renames files, never folders", &before);
}

#[tokio::test]
async fn missing_literal_path_is_refused() {
    let fx = fixture(&[("a.txt", "a")]);
    let before = fx.listing();
    let r = fx.preview(json!(["a.txt", "missing.txt"]), "a", "b").await;
    assert_refused(&fx, &r, "Path not found: missing.txt", &before);
}

#[tokio::test]
async fn a_new_name_with_a_bidi_control_is_refused_naming_the_file_position_and_code_point() {
    // `invoice<U+202E>fdp.exe` shows as `invoiceexe.pdf`: the classic extension spoof.
    let fx = fixture(&[("invoice.exe", "MZ")]);
    let before = fx.listing();
    let r = fx.preview(json!("invoice.exe"), r"^invoice\.exe$", "invoice\u{202E}fdp.exe").await;
    assert_refused(
        &fx,
        &r,
        "The new name of `invoice.exe` would be `invoice\\u{202e}fdp.exe`, which contains U+202E RIGHT-TO-LEFT OVERRIDE (a bidirectional control) at character 8",
        &before,
    );
    assert!(!r.text_content().contains('\u{202E}'), "the message itself shows the character escaped");
    assert!(r.text_content().contains("change `find` or `replace`"), "the message says what to do");
}

#[tokio::test]
async fn a_new_name_with_a_control_or_invisible_character_is_refused() {
    let fx = fixture(&[("a.txt", "a")]);
    let before = fx.listing();
    let r = fx.preview(json!("a.txt"), "^a", "\u{1b}[31ma").await;
    assert_refused(
        &fx,
        &r,
        "would be `\\x1b[31ma.txt`, which contains U+001B ESCAPE (a control character) at character 1",
        &before,
    );
    let r = fx.preview(json!("a.txt"), "^a", "a\u{200B}").await;
    assert_refused(&fx, &r, "U+200B ZERO WIDTH SPACE (an invisible character) at character 2", &before);
}

#[tokio::test]
async fn a_new_name_with_an_accent_or_a_non_breaking_space_is_still_a_name() {
    let fx = fixture(&[("cafe.txt", "a")]);
    let r = fx.preview(json!("cafe.txt"), "^cafe", "caf\u{e9}\u{A0}menu").await;
    assert!(
        !r.is_error,
        "visible characters (and an unusual space the window marks) are allowed: {}",
        r.text_content()
    );
}
