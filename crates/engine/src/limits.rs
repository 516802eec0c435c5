//! How much a session's pending-action stack may hold, read from the environment in one
//! place.
//!
//! Two bounds per workspace (one store per session): how many actions wait
//! ([`MAX_PENDING_ENV`], default [`DEFAULT_MAX_PENDING`]) and how many bytes their change sets
//! hold together ([`MAX_PENDING_MIB_ENV`], default [`DEFAULT_MAX_PENDING_BYTES`]). A push past
//! either is refused with a message naming the bound, its setting and what to do; nothing
//! on the stack is dropped. Actions restored from an earlier session are never refused by
//! them (restore may exceed; only new pushes are refused).

use std::sync::OnceLock;

/// The most actions that may wait in one workspace's stack.
pub const MAX_PENDING_ENV: &str = "RESOLVE_DESK_MAX_PENDING";
/// The most MiB the change sets of one workspace's pending actions may hold together.
pub const MAX_PENDING_MIB_ENV: &str = "RESOLVE_DESK_MAX_PENDING_MIB";
/// Default of [`MAX_PENDING_ENV`]: 200 actions.
pub const DEFAULT_MAX_PENDING: usize = 200;
/// Default of [`MAX_PENDING_MIB_ENV`]: 2 GiB.
pub const DEFAULT_MAX_PENDING_BYTES: u64 = 2 * 1024 * 1024 * 1024;

const MIB: u64 = 1024 * 1024;

/// The bounds of one pending-action stack.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PendingLimits {
    /// The most actions that may wait at once.
    pub max_actions: usize,
    /// The most bytes their change sets may hold together (the previewed bytes and the bytes
    /// to write, see [`crate::ChangeSet::held_bytes`]).
    pub max_bytes: u64,
}

impl Default for PendingLimits {
    fn default() -> Self {
        PendingLimits { max_actions: DEFAULT_MAX_PENDING, max_bytes: DEFAULT_MAX_PENDING_BYTES }
    }
}

impl PendingLimits {
    /// The bounds the environment sets (the defaults where it sets none), or an error naming
    /// the first bad value and what to set instead.
    pub fn from_env() -> Result<PendingLimits, String> {
        Self::from_vars(|name| std::env::var_os(name))
    }

    /// [`from_env`](Self::from_env) read once per process; a bad value is reported on stderr
    /// (once) and the defaults are used.
    pub fn from_env_or_default() -> PendingLimits {
        static READ: OnceLock<PendingLimits> = OnceLock::new();
        *READ.get_or_init(|| {
            Self::from_env().unwrap_or_else(|message| {
                eprintln!("resolve-desk: {message}; using the defaults");
                PendingLimits::default()
            })
        })
    }

    fn from_vars(var: impl Fn(&str) -> Option<std::ffi::OsString>) -> Result<PendingLimits, String> {
        let mut limits = PendingLimits::default();
        if let Some(v) = var(MAX_PENDING_ENV) {
            limits.max_actions = positive(MAX_PENDING_ENV, &v, "a number of actions such as 200")? as usize;
        }
        if let Some(v) = var(MAX_PENDING_MIB_ENV) {
            let mib = positive(MAX_PENDING_MIB_ENV, &v, "a number of MiB such as 2048")?;
            limits.max_bytes = mib.saturating_mul(MIB);
        }
        Ok(limits)
    }

    /// Why a push of an action holding `bytes` onto a stack of `count` actions holding `held`
    /// bytes is refused, or `None` when it fits.
    pub(crate) fn refusal(&self, count: usize, held: u64, bytes: u64) -> Option<String> {
        if count >= self.max_actions {
            return Some(format!(
                "Cannot add a pending action: {count} actions already wait for a decision in this workspace, the \
                 limit ({MAX_PENDING_ENV}={}). Nothing was added and nothing was dropped. Apply or discard some \
                 pending actions, or raise {MAX_PENDING_ENV}.",
                self.max_actions
            ));
        }
        if held.saturating_add(bytes) > self.max_bytes {
            return Some(format!(
                "Cannot add a pending action: its change set holds {} and the {count} pending actions of this \
                 workspace hold {}; together they would pass the limit of {} ({MAX_PENDING_MIB_ENV}={}). Nothing \
                 was added and nothing was dropped. Apply or discard some pending actions, or raise \
                 {MAX_PENDING_MIB_ENV}.",
                shown_bytes(bytes),
                shown_bytes(held),
                shown_bytes(self.max_bytes),
                self.max_bytes / MIB
            ));
        }
        None
    }
}

/// `v` as a whole number of at least 1, or an error naming the setting and the value.
fn positive(name: &str, v: &std::ffi::OsStr, example: &str) -> Result<u64, String> {
    v.to_str().and_then(|s| s.trim().parse::<u64>().ok()).filter(|n| *n >= 1).ok_or_else(|| {
        format!("{name}={v:?} is not a whole number of at least 1; set {example}, or unset it for the default")
    })
}

/// Bytes as a person reads them: `512 bytes`, `3.2 MiB`, `2.0 GiB`.
fn shown_bytes(n: u64) -> String {
    const GIB: u64 = 1024 * MIB;
    if n >= GIB {
        format!("{:.1} GiB", n as f64 / GIB as f64)
    } else if n >= MIB {
        format!("{:.1} MiB", n as f64 / MIB as f64)
    } else if n >= 1024 {
        format!("{:.1} KiB", n as f64 / 1024.0)
    } else {
        format!("{n} bytes")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<std::ffi::OsString> {
        let pairs: Vec<(String, String)> = pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        move |name| pairs.iter().find(|(k, _)| k == name).map(|(_, v)| v.into())
    }

    #[test]
    fn the_settings_override_the_defaults_and_a_bad_value_is_named() {
        assert_eq!(PendingLimits::from_vars(vars(&[])).unwrap(), PendingLimits::default());
        let set = PendingLimits::from_vars(vars(&[(MAX_PENDING_ENV, "3"), (MAX_PENDING_MIB_ENV, " 5 ")])).unwrap();
        assert_eq!(set, PendingLimits { max_actions: 3, max_bytes: 5 * MIB });
        for bad in ["0", "lots", "-1", ""] {
            let err = PendingLimits::from_vars(vars(&[(MAX_PENDING_ENV, bad)])).unwrap_err();
            assert!(err.contains(&format!("RESOLVE_DESK_MAX_PENDING={bad:?}")), "names the value: {err}");
            assert!(err.contains("unset it for the default"), "says what to do: {err}");
        }
        let err = PendingLimits::from_vars(vars(&[(MAX_PENDING_MIB_ENV, "2GB")])).unwrap_err();
        assert!(err.contains("RESOLVE_DESK_MAX_PENDING_MIB=\"2GB\"") && err.contains("2048"), "{err}");
    }

    #[test]
    fn a_refusal_names_the_limit_its_setting_and_what_to_do() {
        let limits = PendingLimits { max_actions: 2, max_bytes: 3 * MIB };
        assert_eq!(limits.refusal(1, 2 * MIB, MIB), None, "exactly at the bound fits");
        let count = limits.refusal(2, 0, 0).unwrap();
        assert!(count.contains("2 actions already wait") && count.contains("RESOLVE_DESK_MAX_PENDING=2"), "{count}");
        assert!(count.contains("Apply or discard some pending actions, or raise RESOLVE_DESK_MAX_PENDING."), "{count}");
        let bytes = limits.refusal(1, 2 * MIB, MIB + 1).unwrap();
        assert!(bytes.contains("limit of 3.0 MiB (RESOLVE_DESK_MAX_PENDING_MIB=3)"), "{bytes}");
        assert!(bytes.contains("or raise RESOLVE_DESK_MAX_PENDING_MIB."), "{bytes}");
    }
}
