//! WebKitGTK's renderer on a machine without a GPU.
//!
//! Since 2.42 WebKitGTK composites through its DMA-BUF renderer. Without a GPU (no DRM render
//! node in `/dev/dri`: virtual machines, containers, remote X sessions, Xvfb) that renderer
//! runs on Mesa's software rasteriser, and it is the slow path: measured here under Xvfb, the
//! page's first frame with the queue in it took about 1 s to come back, against about 60 ms
//! with `WEBKIT_DISABLE_DMABUF_RENDERER=1` (WebKit then paints with the CPU directly);
//! `docs/PERFORMANCE.md` has the start-up and scroll figures of both. So when no render node
//! exists, and only then, the app sets that variable before GTK starts. A machine with a GPU
//! keeps WebKit's default (its accelerated path), and a value the user set is never changed:
//! `WEBKIT_DISABLE_DMABUF_RENDERER=0` keeps the DMA-BUF renderer even without a GPU.
//!
//! Under WebDriver (`TAURI_WEBVIEW_AUTOMATION=true`, set by tauri-driver) WebKit's default is
//! kept too: with the DMA-BUF renderer off, WebKit takes a WebDriver screenshot only at the
//! page's next rendering update, which an idle page may not have for 30 s or more (measured:
//! 30–60 s per screenshot, against 70–260 ms). QA scripts that want the renderer people get
//! without a GPU set the variable themselves, and then make the page render (any change on
//! screen, an animation frame) around each screenshot.

use std::ffi::OsString;
use std::path::Path;

/// The variable WebKitGTK reads.
pub const VAR: &str = "WEBKIT_DISABLE_DMABUF_RENDERER";

/// The variable tauri-driver sets when a WebDriver session starts the app.
pub const AUTOMATION_VAR: &str = "TAURI_WEBVIEW_AUTOMATION";

/// The value to set, if any: `Some("1")` only when the user left `VAR` unset, the machine has
/// no GPU render node and WebDriver is not driving the app.
pub fn decide(user_value: Option<&OsString>, has_render_node: bool, under_webdriver: bool) -> Option<&'static str> {
    match (user_value, has_render_node, under_webdriver) {
        (None, false, false) => Some("1"),
        _ => None,
    }
}

/// Whether `dri` (normally `/dev/dri`) holds a render node (`renderD128`, …). A missing or
/// unreadable folder has none.
pub fn has_render_node(dri: &Path) -> bool {
    std::fs::read_dir(dri)
        .map(|entries| entries.flatten().any(|e| e.file_name().to_str().is_some_and(|n| n.starts_with("renderD"))))
        .unwrap_or(false)
}

/// Applies [`decide`] to this process. Call first in `main`, before any thread starts (the
/// environment is process-wide) and before GTK is initialised.
pub fn choose() {
    let under_webdriver = std::env::var_os(AUTOMATION_VAR).is_some_and(|v| v == "true");
    if let Some(value) = decide(std::env::var_os(VAR).as_ref(), has_render_node(Path::new("/dev/dri")), under_webdriver)
    {
        std::env::set_var(VAR, value);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_a_gpu_the_dmabuf_renderer_is_turned_off() {
        assert_eq!(decide(None, false, false), Some("1"));
    }

    #[test]
    fn with_a_gpu_webkit_keeps_its_default() {
        assert_eq!(decide(None, true, false), None);
    }

    #[test]
    fn under_webdriver_webkit_keeps_its_default() {
        assert_eq!(decide(None, false, true), None);
    }

    #[test]
    fn a_value_the_user_set_is_kept() {
        assert_eq!(decide(Some(&OsString::from("0")), false, false), None);
        assert_eq!(decide(Some(&OsString::from("1")), true, false), None);
    }

    #[test]
    fn a_render_node_is_found_by_its_name() {
        let dri = tempfile::tempdir().unwrap();
        assert!(!has_render_node(dri.path()), "an empty folder has no render node");
        std::fs::write(dri.path().join("card0"), b"").unwrap();
        assert!(!has_render_node(dri.path()), "a card node alone is not a render node");
        std::fs::write(dri.path().join("renderD128"), b"").unwrap();
        assert!(has_render_node(dri.path()));
        assert!(!has_render_node(&dri.path().join("missing")), "a missing folder has none");
    }
}
