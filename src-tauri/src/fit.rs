//! The window fits the screen it opens on. The window-state plugin brings back the last size
//! and position (saved on exit); then, and on a first start, the window is clamped to the work
//! area of its monitor: a 1366×768 or 1280×800 laptop, or a display without a window manager,
//! sees the whole window (the decision panel and Discard included), never a 1400×900 window cut
//! off. A position left on a monitor that is gone comes back onto this one.

use tauri::{PhysicalPosition, PhysicalSize, Runtime, WebviewWindow};

/// The size to open at (physical pixels): `wanted` clamped to `area`, and never below `min`
/// unless the area itself is smaller (then the area wins: everything stays on screen).
pub fn fitted(wanted: (u32, u32), min: (u32, u32), area: (u32, u32)) -> (u32, u32) {
    let one = |want: u32, min: u32, area: u32| want.max(min).min(area);
    (one(wanted.0, min.0, area.0), one(wanted.1, min.1, area.1))
}

/// The position keeping a `size` window inside `area` (origin `area_at`), moved as little as possible.
pub fn placed(at: (i32, i32), size: (u32, u32), area_at: (i32, i32), area: (u32, u32)) -> (i32, i32) {
    let one = |at: i32, size: u32, origin: i32, area: u32| {
        let max = origin + area.saturating_sub(size) as i32;
        at.clamp(origin, max.max(origin))
    };
    (one(at.0, size.0, area_at.0, area.0), one(at.1, size.1, area_at.1, area.1))
}

/// Clamps `window` to its monitor's work area (see the module comment).
///
/// `default_logical` is the size to start from while the window has none yet (before it is
/// first mapped its size reads 0×0).
pub fn fit_to_monitor<R: Runtime>(
    window: &WebviewWindow<R>,
    min_logical: (f64, f64),
    default_logical: (f64, f64),
) -> tauri::Result<()> {
    let monitor = match window.current_monitor()? {
        Some(m) => m,
        None => match window.primary_monitor()? {
            Some(m) => m,
            None => return Ok(()),
        },
    };
    if window.is_maximized()? || window.is_fullscreen()? {
        return Ok(());
    }
    // Without a window manager there is no work area (X11 `_NET_WORKAREA`): the whole screen is.
    let whole = tauri::PhysicalRect { position: *monitor.position(), size: *monitor.size() };
    let area = match monitor.work_area() {
        a if a.size.width == 0 || a.size.height == 0 => &whole,
        a => a,
    };
    let scale = monitor.scale_factor();
    let min = ((min_logical.0 * scale) as u32, (min_logical.1 * scale) as u32);
    let mut size = window.outer_size()?;
    if size.width < min.0 || size.height < min.1 {
        size = PhysicalSize::new((default_logical.0 * scale) as u32, (default_logical.1 * scale) as u32);
    }
    let (w, h) = fitted((size.width, size.height), min, (area.size.width, area.size.height));
    if (w, h) != (size.width, size.height) {
        // Inner size: the outer size includes decorations the window manager adds.
        let (outer, inner) = (window.outer_size()?, window.inner_size()?);
        let (dw, dh) = (outer.width.saturating_sub(inner.width), outer.height.saturating_sub(inner.height));
        window.set_size(PhysicalSize::new(w.saturating_sub(dw), h.saturating_sub(dh)))?;
    }
    let pos = window.outer_position()?;
    let (x, y) =
        placed((pos.x, pos.y), (w, h), (area.position.x, area.position.y), (area.size.width, area.size.height));
    if (x, y) != (pos.x, pos.y) {
        window.set_position(PhysicalPosition::new(x, y))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_window_larger_than_the_screen_is_made_to_fit() {
        assert_eq!(fitted((1400, 900), (900, 600), (1366, 768)), (1366, 768));
        assert_eq!(fitted((1400, 900), (900, 600), (1280, 800)), (1280, 800));
        assert_eq!(fitted((1400, 900), (900, 600), (2560, 1440)), (1400, 900), "a big screen keeps the size");
        assert_eq!(fitted((500, 400), (900, 600), (1920, 1080)), (900, 600), "never below the minimum size");
        assert_eq!(fitted((1400, 900), (900, 600), (800, 500)), (800, 500), "a tiny screen still sees it all");
    }

    #[test]
    fn a_window_off_screen_comes_back_onto_the_work_area() {
        assert_eq!(placed((3000, 100), (1280, 800), (0, 0), (1366, 768)), (86, 0));
        assert_eq!(placed((-500, -20), (1000, 700), (0, 27), (1366, 741)), (0, 27), "below a top panel");
        assert_eq!(placed((100, 50), (1000, 600), (0, 0), (1920, 1080)), (100, 50), "inside: unchanged");
        assert_eq!(placed((1920 + 40, 10), (800, 600), (1920, 0), (1280, 1024)), (1960, 10), "a second monitor");
    }
}
