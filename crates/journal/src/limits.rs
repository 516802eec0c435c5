//! The journal's bounds, read from the environment in one place.
//!
//! - [`QUEUE_MIB_ENV`]: how much the [`Writer`](crate::Writer)'s queue may hold (the bytes
//!   of the pushes, decisions and jobs waiting to be written; default
//!   [`DEFAULT_QUEUE_BYTES`]). A caller that would pass it waits until the writer has made
//!   room (back-pressure): nothing is dropped, and nothing is copied without bound.
//! - [`PUSH_HISTORY_ENV`]: how many rows of `pushes` each workspace keeps (default
//!   [`DEFAULT_PUSH_HISTORY`]); older rows are pruned when a push is recorded.

use std::sync::OnceLock;

/// The most MiB the journal's write queue holds before a caller waits.
pub const QUEUE_MIB_ENV: &str = "RESOLVE_DESK_JOURNAL_QUEUE_MIB";
/// The most rows of push history (`pushes`) kept per workspace.
pub const PUSH_HISTORY_ENV: &str = "RESOLVE_DESK_PUSH_HISTORY_KEEP";
/// Default of [`QUEUE_MIB_ENV`]: 256 MiB.
pub const DEFAULT_QUEUE_BYTES: u64 = 256 * 1024 * 1024;
/// Default of [`PUSH_HISTORY_ENV`]: 10,000 pushes per workspace.
pub const DEFAULT_PUSH_HISTORY: usize = 10_000;

/// The journal's bounds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JournalLimits {
    /// The most bytes the writer's queue holds (a single job larger than this is still
    /// taken, alone).
    pub queue_bytes: u64,
    /// The most `pushes` rows kept per workspace (the newest).
    pub push_history: usize,
}

impl Default for JournalLimits {
    fn default() -> Self {
        JournalLimits { queue_bytes: DEFAULT_QUEUE_BYTES, push_history: DEFAULT_PUSH_HISTORY }
    }
}

impl JournalLimits {
    /// The bounds the environment sets (the defaults where it sets none), or an error naming
    /// the first bad value and what to set instead.
    pub fn from_env() -> Result<JournalLimits, String> {
        Self::from_vars(|name| std::env::var_os(name))
    }

    /// [`from_env`](Self::from_env) read once per process; a bad value is reported on stderr
    /// (once) and the defaults are used.
    pub fn from_env_or_default() -> JournalLimits {
        static READ: OnceLock<JournalLimits> = OnceLock::new();
        *READ.get_or_init(|| {
            Self::from_env().unwrap_or_else(|message| {
                eprintln!("resolve-desk: {message}; using the defaults");
                JournalLimits::default()
            })
        })
    }

    fn from_vars(var: impl Fn(&str) -> Option<std::ffi::OsString>) -> Result<JournalLimits, String> {
        let mut limits = JournalLimits::default();
        if let Some(v) = var(QUEUE_MIB_ENV) {
            limits.queue_bytes = positive(QUEUE_MIB_ENV, &v, "a number of MiB such as 256")?.saturating_mul(1 << 20);
        }
        if let Some(v) = var(PUSH_HISTORY_ENV) {
            limits.push_history = positive(PUSH_HISTORY_ENV, &v, "a number of pushes such as 10000")? as usize;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_settings_override_the_defaults_and_a_bad_value_is_named() {
        let none = |_: &str| None;
        assert_eq!(JournalLimits::from_vars(none).unwrap(), JournalLimits::default());
        let set = JournalLimits::from_vars(|n| match n {
            QUEUE_MIB_ENV => Some("8".into()),
            PUSH_HISTORY_ENV => Some("50".into()),
            _ => None,
        })
        .unwrap();
        assert_eq!(set, JournalLimits { queue_bytes: 8 << 20, push_history: 50 });
        let err = JournalLimits::from_vars(|n| (n == PUSH_HISTORY_ENV).then(|| "0".into())).unwrap_err();
        assert!(err.contains("RESOLVE_DESK_PUSH_HISTORY_KEEP=\"0\"") && err.contains("10000"), "{err}");
        let err = JournalLimits::from_vars(|n| (n == QUEUE_MIB_ENV).then(|| "big".into())).unwrap_err();
        assert!(err.contains("RESOLVE_DESK_JOURNAL_QUEUE_MIB=\"big\""), "{err}");
    }
}
