//! What a tool process may make the desk hold, read from the environment in one place.
//!
//! - [`LINE_MIB_ENV`]: the longest line a tool may write to stdout (one JSON-RPC message; a
//!   change set with every file's new contents travels in one line). Default
//!   [`DEFAULT_MAX_LINE_BYTES`]. A longer line stops the tool, naming the limit and this
//!   setting; the host never buffers more than the limit.
//! - [`LOG_KIB_ENV`]: the size at which a tool's stderr log `<name>.log` is rotated to
//!   `<name>.log.1` (one old file kept, so at most twice this on disk per tool). Default
//!   [`DEFAULT_LOG_BYTES`].

use std::sync::OnceLock;

/// The longest stdout line of a tool, in MiB.
pub const LINE_MIB_ENV: &str = "RESOLVE_DESK_TOOL_LINE_MIB";
/// The size of a tool's stderr log before it is rotated, in KiB.
pub const LOG_KIB_ENV: &str = "RESOLVE_DESK_TOOL_LOG_KIB";
/// Default of [`LINE_MIB_ENV`]: 256 MiB. A change set that large holds 256 MiB of new file
/// contents — far past anything a person reviews — while the line, its parsed JSON and the
/// change set built from it stay within about a GiB together; and its previewed plus new
/// bytes still fit the stack's own bound (`RESOLVE_DESK_MAX_PENDING_MIB`, default 2 GiB).
pub const DEFAULT_MAX_LINE_BYTES: u64 = 256 * 1024 * 1024;
/// Default of [`LOG_KIB_ENV`]: 1 MiB.
pub const DEFAULT_LOG_BYTES: u64 = 1024 * 1024;

/// The bounds of one tool process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ToolLimits {
    /// The longest stdout line, in bytes (without its `\n`).
    pub max_line_bytes: u64,
    /// The size at which the stderr log is rotated, in bytes.
    pub log_bytes: u64,
}

impl Default for ToolLimits {
    fn default() -> Self {
        ToolLimits { max_line_bytes: DEFAULT_MAX_LINE_BYTES, log_bytes: DEFAULT_LOG_BYTES }
    }
}

impl ToolLimits {
    /// The bounds the environment sets (the defaults where it sets none), or an error naming
    /// the first bad value and what to set instead.
    pub fn from_env() -> Result<ToolLimits, String> {
        Self::from_vars(|name| std::env::var_os(name))
    }

    /// [`from_env`](Self::from_env) read once per process; a bad value is reported on stderr
    /// (once) and the defaults are used.
    pub fn from_env_or_default() -> ToolLimits {
        static READ: OnceLock<ToolLimits> = OnceLock::new();
        *READ.get_or_init(|| {
            Self::from_env().unwrap_or_else(|message| {
                eprintln!("resolve-desk: {message}; using the defaults");
                ToolLimits::default()
            })
        })
    }

    fn from_vars(var: impl Fn(&str) -> Option<std::ffi::OsString>) -> Result<ToolLimits, String> {
        let mut limits = ToolLimits::default();
        if let Some(v) = var(LINE_MIB_ENV) {
            limits.max_line_bytes = positive(LINE_MIB_ENV, &v, "a number of MiB such as 256")?.saturating_mul(1 << 20);
        }
        if let Some(v) = var(LOG_KIB_ENV) {
            limits.log_bytes = positive(LOG_KIB_ENV, &v, "a number of KiB such as 1024")?.saturating_mul(1 << 10);
        }
        Ok(limits)
    }
}

/// `v` as a whole number of at least 1, or an error naming the setting and the value.
fn positive(name: &str, v: &std::ffi::OsStr, example: &str) -> Result<u64, String> {
    v.to_str().and_then(|s| s.trim().parse::<u64>().ok()).filter(|n| *n >= 1).ok_or_else(|| {
        format!("{name}={v:?} is not a whole number of at least 1; set {example}, or unset it for the default")
    })
}

/// Bytes as a person reads them: `512 bytes`, `64 KiB`, `256 MiB`.
pub(crate) fn shown_bytes(n: u64) -> String {
    if n >= 1 << 20 && n & ((1 << 20) - 1) == 0 {
        format!("{} MiB", n >> 20)
    } else if n >= 1 << 10 && n & ((1 << 10) - 1) == 0 {
        format!("{} KiB", n >> 10)
    } else {
        format!("{n} bytes")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_settings_override_the_defaults_and_a_bad_value_is_named() {
        assert_eq!(ToolLimits::from_vars(|_| None).unwrap(), ToolLimits::default());
        let set = ToolLimits::from_vars(|n| match n {
            LINE_MIB_ENV => Some("2".into()),
            LOG_KIB_ENV => Some("16".into()),
            _ => None,
        })
        .unwrap();
        assert_eq!(set, ToolLimits { max_line_bytes: 2 << 20, log_bytes: 16 << 10 });
        let err = ToolLimits::from_vars(|n| (n == LOG_KIB_ENV).then(|| "1M".into())).unwrap_err();
        assert!(err.contains("RESOLVE_DESK_TOOL_LOG_KIB=\"1M\"") && err.contains("1024"), "{err}");
        assert_eq!(shown_bytes(256 << 20), "256 MiB");
        assert_eq!(shown_bytes(64 << 10), "64 KiB");
        assert_eq!(shown_bytes(1000), "1000 bytes");
    }
}
