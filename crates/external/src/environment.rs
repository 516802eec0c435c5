//! The environment a tool process starts with: an empty one plus an allow-list, never the
//! desk's whole environment (which holds the LLM API key and whatever the coding agent that
//! started `rdesk mcp` had).
//!
//! Passed when the desk has them: [`PASSED`] (`PATH`, `HOME`, `LANG`, `TMPDIR`, `TZ`, the
//! XDG folder variables), every `LC_*`, the variables the manifest names in `env`, and the
//! desk's own `RESOLVE_DESK_TOOL` / `RESOLVE_DESK_WORKSPACE` / `RESOLVE_DESK_PROTOCOL`. Never passed, even when named:
//! the [`Config::never_pass`](crate::Config::never_pass) list (default
//! [`DEFAULT_NEVER_PASS`]; front ends add the configured LLM key variable).

use std::ffi::{OsStr, OsString};

/// Passed to every tool when the desk's environment has them (besides every `LC_*`).
pub const PASSED: &[&str] = &[
    "PATH",
    "HOME",
    "LANG",
    "TMPDIR",
    "TZ",
    "XDG_CONFIG_HOME",
    "XDG_DATA_HOME",
    "XDG_STATE_HOME",
    "XDG_CACHE_HOME",
    "XDG_RUNTIME_DIR",
    "XDG_DATA_DIRS",
    "XDG_CONFIG_DIRS",
];

/// What a program needs on Windows to run at all (passed there only).
#[cfg(windows)]
const PASSED_ON_WINDOWS: &[&str] = &[
    "SYSTEMROOT",
    "SYSTEMDRIVE",
    "WINDIR",
    "COMSPEC",
    "PATHEXT",
    "USERPROFILE",
    "APPDATA",
    "LOCALAPPDATA",
    "TEMP",
    "TMP",
];
#[cfg(not(windows))]
const PASSED_ON_WINDOWS: &[&str] = &[];

/// Never passed to a tool unless a front end says otherwise: the LLM key variable of the
/// default provider.
pub const DEFAULT_NEVER_PASS: &[&str] = &["OPENAI_API_KEY"];

/// Whether `name` is a valid name for the manifest's `env`: letters, digits and `_`, not
/// starting with a digit.
pub fn is_variable_name(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Variable names compare as the system does (case-insensitively on Windows).
fn same(a: &OsStr, b: &str) -> bool {
    if cfg!(windows) {
        a.to_str().is_some_and(|a| a.eq_ignore_ascii_case(b))
    } else {
        a == b
    }
}

/// The environment of a tool whose manifest names `named`, from the desk's `parent`
/// environment: the variables to set (in `parent`'s order), and the names the manifest asked
/// for that are never passed (for the tool's log).
pub(crate) fn tool_environment(
    named: &[String],
    never_pass: &[String],
    parent: impl IntoIterator<Item = (OsString, OsString)>,
) -> (Vec<(OsString, OsString)>, Vec<String>) {
    let never = |name: &OsStr| never_pass.iter().any(|n| same(name, n));
    let passed = |name: &OsStr| {
        PASSED.iter().chain(PASSED_ON_WINDOWS).any(|p| same(name, p))
            || name.to_str().is_some_and(|n| n.starts_with("LC_"))
            || named.iter().any(|n| same(name, n))
    };
    let vars = parent.into_iter().filter(|(name, _)| passed(name) && !never(name)).collect();
    let withheld = named.iter().filter(|n| never(OsStr::new(n))).cloned().collect();
    (vars, withheld)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> Vec<(OsString, OsString)> {
        pairs.iter().map(|(k, v)| (k.into(), v.into())).collect()
    }

    #[test]
    fn only_the_allow_list_and_the_named_variables_pass_and_never_the_key() {
        let parent = env(&[
            ("PATH", "/bin"),
            ("OPENAI_API_KEY", "sk-secret"),
            ("LC_ALL", "C.UTF-8"),
            ("AWS_SECRET_ACCESS_KEY", "x"),
            ("GITHUB_TOKEN", "gh"),
            ("MY_KEY", "k"),
            ("XDG_SESSION_ID", "3"),
        ]);
        let named = vec!["GITHUB_TOKEN".to_string(), "OPENAI_API_KEY".into(), "MY_KEY".into(), "UNSET".into()];
        let never = vec!["OPENAI_API_KEY".to_string(), "MY_KEY".into()];
        let (vars, withheld) = tool_environment(&named, &never, parent);
        let names: Vec<&str> = vars.iter().map(|(k, _)| k.to_str().unwrap()).collect();
        assert_eq!(names, vec!["PATH", "LC_ALL", "GITHUB_TOKEN"]);
        assert_eq!(withheld, vec!["OPENAI_API_KEY", "MY_KEY"], "named but never passed: said in the log");
    }

    #[test]
    fn variable_names_are_letters_digits_and_underscores() {
        for good in ["GITHUB_TOKEN", "_x", "a1"] {
            assert!(is_variable_name(good), "{good}");
        }
        for bad in ["", "1A", "A-B", "A B", "A=B", "É"] {
            assert!(!is_variable_name(bad), "{bad}");
        }
    }
}
