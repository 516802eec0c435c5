//! Where the agent's API key comes from: the environment variable the settings name (it wins
//! when set: terminals, CI) or the system keyring (the Secret Service on Linux, through the
//! `keyring` crate), where the settings dialog stores a key typed into it. An app started
//! from the desktop menu has no shell start-up files, so the keyring is how it gets a key.
//!
//! The key is stored under the service [`SERVICE`] and, as the account, the provider's base
//! URL: a key saved for one provider is never sent to another. It is never written to a file,
//! logged, journaled, shown back (only whether one is stored), put in an error message, or
//! given to a tool process (tools get an allow-listed environment, and this key is not in
//! the environment at all).
//!
//! A missing or locked keyring is a [`KeyringError`] whose message says so and that the
//! environment variable still works.

use super::client::ApiKey;
use super::config::ProviderConfig;

/// The Secret Service "service" attribute of the stored key.
pub const SERVICE: &str = "resolve-desk";

/// Where the key a client would send comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeySource {
    /// The environment variable the settings name (it wins over the keyring).
    Environment,
    /// The system keyring.
    Keyring,
    /// No key: requests go without one (local servers accept that).
    None,
}

/// The system keyring could not be used. Never holds the key.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct KeyringError(String);

impl KeyringError {
    fn of(e: keyring::Error, env: &str) -> Self {
        let what = match e {
            keyring::Error::NoStorageAccess(inner) => format!(
                "the system keyring is not available or is locked ({inner}). Unlock it (or start a Secret Service such as GNOME Keyring or KWallet)"
            ),
            keyring::Error::PlatformFailure(inner) => {
                format!("the system keyring failed ({inner}). Check that a Secret Service (GNOME Keyring, KWallet) is running and unlocked")
            }
            other => format!("the system keyring refused the request ({other})"),
        };
        KeyringError(format!("{what}; the environment variable {env} still works when set."))
    }
}

/// The account of the key for `base_url` (trailing slashes do not make another provider).
fn account(base_url: &str) -> String {
    base_url.trim().trim_end_matches('/').to_string()
}

/// Whether a D-Bus session bus can be reached without starting one: the address in
/// `DBUS_SESSION_BUS_ADDRESS`, or the user bus `$XDG_RUNTIME_DIR/bus`. Without either,
/// libdbus would "autolaunch" a bus of its own (a stray daemon per call), so the keyring is
/// not asked at all.
fn session_bus_present() -> bool {
    let set = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
    set("DBUS_SESSION_BUS_ADDRESS").is_some()
        || set("XDG_RUNTIME_DIR").is_some_and(|dir| std::path::Path::new(&dir).join("bus").exists())
}

fn entry(config: &ProviderConfig) -> Result<keyring::Entry, KeyringError> {
    if !session_bus_present() {
        return Err(KeyringError(format!(
            "the system keyring is not available: there is no D-Bus session bus (DBUS_SESSION_BUS_ADDRESS is not set); the environment variable {} still works when set.",
            config.api_key_env
        )));
    }
    keyring::Entry::new(SERVICE, &account(&config.base_url)).map_err(|e| KeyringError::of(e, &config.api_key_env))
}

/// The key stored for `config`'s provider, if any.
pub fn stored_key(config: &ProviderConfig) -> Result<Option<ApiKey>, KeyringError> {
    match entry(config)?.get_password() {
        Ok(key) if !key.is_empty() => Ok(Some(ApiKey::new(key))),
        Ok(_) | Err(keyring::Error::NoEntry) => Ok(None),
        Err(e) => Err(KeyringError::of(e, &config.api_key_env)),
    }
}

/// Stores `key` for `config`'s provider (replacing one stored before). An empty key is
/// refused: use [`forget_key`].
pub fn store_key(config: &ProviderConfig, key: &str) -> Result<(), KeyringError> {
    let key = key.trim();
    if key.is_empty() {
        return Err(KeyringError("the API key is empty; type the key, or use Forget to remove the stored one.".into()));
    }
    entry(config)?.set_password(key).map_err(|e| KeyringError::of(e, &config.api_key_env))
}

/// Removes the key stored for `config`'s provider; `Ok(false)` when there was none.
pub fn forget_key(config: &ProviderConfig) -> Result<bool, KeyringError> {
    match entry(config)?.delete_credential() {
        Ok(()) => Ok(true),
        Err(keyring::Error::NoEntry) => Ok(false),
        Err(e) => Err(KeyringError::of(e, &config.api_key_env)),
    }
}

/// The key a client for `config` sends and where it comes from: the environment variable
/// when set and non-empty, else the keyring's. A keyring that cannot be read gives no key and
/// its error (the caller shows it; the variable still works).
pub fn api_key(config: &ProviderConfig) -> (Option<ApiKey>, KeySource, Option<KeyringError>) {
    if let Some(key) = std::env::var(&config.api_key_env).ok().filter(|k| !k.is_empty()) {
        return (Some(ApiKey::new(key)), KeySource::Environment, None);
    }
    match stored_key(config) {
        Ok(Some(key)) => (Some(key), KeySource::Keyring, None),
        Ok(None) => (None, KeySource::None, None),
        Err(e) => (None, KeySource::None, Some(e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_provider_is_one_account_whatever_its_trailing_slash() {
        assert_eq!(account("https://api.openai.com/v1/"), account(" https://api.openai.com/v1"));
        assert_ne!(account("https://api.openai.com/v1"), account("http://127.0.0.1:11434/v1"));
    }

    #[test]
    fn keyring_errors_say_the_variable_still_works_and_never_hold_a_key() {
        let e = KeyringError::of(keyring::Error::NoStorageAccess("no bus".into()), "OPENAI_API_KEY");
        let text = e.to_string();
        assert!(text.contains("not available or is locked"), "{text}");
        assert!(text.contains("OPENAI_API_KEY still works"), "{text}");
    }
}
