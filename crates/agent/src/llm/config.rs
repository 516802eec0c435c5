//! The provider settings: where the model is, which model, and the *name* of the environment
//! variable that holds the API key. Stored as `<config dir>/resolve-desk/agent.json`; the key
//! itself is never stored, logged, or put in an error message.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// The file name under `<config dir>/resolve-desk/`.
pub const CONFIG_FILE: &str = "agent.json";
/// The environment variable read for the API key unless the settings name another.
pub const DEFAULT_API_KEY_ENV: &str = "OPENAI_API_KEY";

/// Settings of an OpenAI-compatible provider. Missing fields in the file take their default.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct ProviderConfig {
    /// Up to and including the version, e.g. `https://api.openai.com/v1` or
    /// `http://127.0.0.1:11434/v1` (Ollama); requests go to `{base_url}/chat/completions`.
    pub base_url: String,
    pub model: String,
    /// The name of the environment variable holding the API key (not the key).
    pub api_key_env: String,
    /// Seconds to wait for the TCP/TLS connection.
    pub connect_timeout_secs: u64,
    /// Seconds without a byte from the server (headers or stream) before giving up.
    pub idle_timeout_secs: u64,
    /// Attempts per request, the first included, for 429 and 5xx answers (at least 1).
    pub max_attempts: u32,
    /// Seconds each `resolve` waits for the person before the wait is renewed (under the
    /// `human` policy; see `AgentLoop::with_resolve_wait`). At least 1.
    pub resolve_wait_secs: u64,
}

impl Default for ProviderConfig {
    fn default() -> Self {
        ProviderConfig {
            base_url: "https://api.openai.com/v1".into(),
            model: "gpt-4o-mini".into(),
            api_key_env: DEFAULT_API_KEY_ENV.into(),
            connect_timeout_secs: 10,
            idle_timeout_secs: 120,
            max_attempts: 4,
            resolve_wait_secs: resolve_engine::DEFAULT_RESOLVE_WAIT.as_secs(),
        }
    }
}

/// Why the settings could not be read, checked or written.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// Reading, locking or writing the file failed, or it is not valid JSON (path and line).
    #[error(transparent)]
    File(#[from] resolve_userfile::UserFileError),
    #[error("the agent settings {path} are not valid JSON settings: {message}. Fix or delete the file.")]
    Parse { path: PathBuf, message: String },
    #[error("base URL {0:?} must start with http:// or https:// (e.g. https://api.openai.com/v1)")]
    BaseUrl(String),
    #[error("the model name is empty: set one (e.g. gpt-4o-mini, or llama3.1 for Ollama)")]
    EmptyModel,
    #[error(
        "the resolve wait {0} s is out of range: set 1 to 86400 seconds (45 keeps each wait under the 60 s time-out common to clients)"
    )]
    ResolveWait(u64),
    #[error(
        "API key variable name {0:?} is not an environment variable name (letters, digits and _, e.g. OPENAI_API_KEY)"
    )]
    KeyEnvName(String),
}

impl ProviderConfig {
    /// A config for `base_url` and `model` with the other settings at their defaults.
    pub fn new(base_url: impl Into<String>, model: impl Into<String>) -> Self {
        ProviderConfig { base_url: base_url.into(), model: model.into(), ..Self::default() }
    }

    /// `$XDG_CONFIG_HOME`, else `~/.config`; `None` when neither can be found.
    pub fn user_config_dir() -> Option<PathBuf> {
        match std::env::var_os("XDG_CONFIG_HOME") {
            Some(dir) if !dir.is_empty() && Path::new(&dir).is_absolute() => Some(PathBuf::from(dir)),
            _ => std::env::var_os("HOME").filter(|h| !h.is_empty()).map(|h| PathBuf::from(h).join(".config")),
        }
    }

    /// `<config_dir>/resolve-desk/agent.json`.
    pub fn path_in(config_dir: &Path) -> PathBuf {
        config_dir.join("resolve-desk").join(CONFIG_FILE)
    }

    /// Loads the settings from `config_dir`; the defaults when there is no file yet. A file
    /// that is not valid JSON is an error naming its path and line.
    pub fn load(config_dir: &Path) -> Result<Self, ConfigError> {
        let path = Self::path_in(config_dir);
        let config = Self::parse(&path, resolve_userfile::read_bytes(&path)?.as_deref())?;
        config.validate()?;
        Ok(config)
    }

    /// The settings in `bytes` read from `path` (`None` or blank: the defaults).
    fn parse(path: &Path, bytes: Option<&[u8]>) -> Result<Self, ConfigError> {
        match bytes.map(|b| resolve_userfile::parse(path, b)).transpose()?.flatten() {
            None => Ok(Self::default()),
            Some(v) => serde_json::from_value(v)
                .map_err(|e| ConfigError::Parse { path: path.to_path_buf(), message: e.to_string() }),
        }
    }

    /// Changes the settings in `config_dir` under the file's lock (see `resolve_userfile`):
    /// `change` gets what the file holds now (the defaults when there is none), the result is
    /// checked and written atomically, and returned. A file that is not valid JSON is an error
    /// and stays as it is.
    pub fn update(config_dir: &Path, change: impl FnOnce(&mut ProviderConfig)) -> Result<Self, ConfigError> {
        let path = Self::path_in(config_dir);
        resolve_userfile::update(&path, 0o600, |bytes| {
            let mut config = Self::parse(&path, bytes)?;
            change(&mut config);
            config.validate()?;
            Ok(resolve_userfile::Change::Write(resolve_userfile::to_bytes(&config)?, config))
        })
    }

    /// Checks and writes these settings to `config_dir` whole (under the file's lock,
    /// atomically), creating the folder when needed.
    pub fn save(&self, config_dir: &Path) -> Result<(), ConfigError> {
        self.validate()?;
        Self::update(config_dir, |c| *c = self.clone()).map(|_| ())
    }

    /// Checks the values (not the key: it is read when a request is made).
    pub fn validate(&self) -> Result<(), ConfigError> {
        let url = self.base_url.trim();
        if !(url.starts_with("http://") || url.starts_with("https://")) || url.len() <= "https://".len() {
            return Err(ConfigError::BaseUrl(self.base_url.clone()));
        }
        if self.model.trim().is_empty() {
            return Err(ConfigError::EmptyModel);
        }
        let name = &self.api_key_env;
        if name.is_empty()
            || name.starts_with(|c: char| c.is_ascii_digit())
            || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        {
            return Err(ConfigError::KeyEnvName(name.clone()));
        }
        if !(1..=86_400).contains(&self.resolve_wait_secs) {
            return Err(ConfigError::ResolveWait(self.resolve_wait_secs));
        }
        Ok(())
    }

    /// `{base_url}/chat/completions` (one slash between them).
    pub fn endpoint(&self) -> String {
        format!("{}/chat/completions", self.base_url.trim().trim_end_matches('/'))
    }

    /// Whether the key variable is set (for a settings panel; the key is never returned).
    pub fn api_key_is_set(&self) -> bool {
        std::env::var_os(&self.api_key_env).is_some_and(|v| !v.is_empty())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_file_gives_defaults_and_save_then_load_round_trips() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(ProviderConfig::load(dir.path()).unwrap(), ProviderConfig::default());
        let c = ProviderConfig {
            api_key_env: "MY_KEY".into(),
            ..ProviderConfig::new("http://127.0.0.1:11434/v1", "llama3.1")
        };
        c.save(dir.path()).unwrap();
        let path = dir.path().join("resolve-desk/agent.json");
        assert!(path.is_file(), "saved where documented");
        assert_eq!(ProviderConfig::load(dir.path()).unwrap(), c);
        let names: Vec<String> = std::fs::read_dir(path.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        // The lock file stays (a lock is only safe on a file that is never removed).
        assert_eq!(names.len(), 2, "no temporary file left behind: {names:?}");
        assert!(names.contains(&"agent.json.lock".to_string()), "{names:?}");
    }

    #[test]
    fn partial_file_takes_defaults_and_bad_values_are_named() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("resolve-desk")).unwrap();
        std::fs::write(dir.path().join("resolve-desk/agent.json"), r#"{"model":"m"}"#).unwrap();
        let c = ProviderConfig::load(dir.path()).unwrap();
        assert_eq!((c.model.as_str(), c.api_key_env.as_str()), ("m", "OPENAI_API_KEY"));
        let bad = ProviderConfig::new("localhost:8080", "m");
        assert!(bad.save(dir.path()).unwrap_err().to_string().contains("\"localhost:8080\""));
        let bad = ProviderConfig { api_key_env: "MY KEY".into(), ..ProviderConfig::default() };
        assert!(bad.validate().unwrap_err().to_string().contains("\"MY KEY\""));
        std::fs::write(dir.path().join("resolve-desk/agent.json"), "{").unwrap();
        let err = ProviderConfig::load(dir.path()).unwrap_err().to_string();
        assert!(err.contains("agent.json") && err.contains("not valid JSON"), "{err}");
        let update = ProviderConfig::update(dir.path(), |c| c.model = "n".into()).unwrap_err().to_string();
        assert!(update.contains("agent.json") && update.contains("line 1"), "{update}");
        assert_eq!(std::fs::read_to_string(dir.path().join("resolve-desk/agent.json")).unwrap(), "{", "kept as it was");
    }

    #[test]
    fn update_changes_what_the_file_holds_now() {
        let dir = tempfile::tempdir().unwrap();
        ProviderConfig { max_attempts: 7, ..ProviderConfig::default() }.save(dir.path()).unwrap();
        let c = ProviderConfig::update(dir.path(), |c| c.model = "llama3.1".into()).unwrap();
        assert_eq!((c.model.as_str(), c.max_attempts), ("llama3.1", 7));
        assert_eq!(ProviderConfig::load(dir.path()).unwrap(), c);
    }

    #[test]
    fn endpoint_joins_with_one_slash() {
        assert_eq!(ProviderConfig::new("http://h/v1/", "m").endpoint(), "http://h/v1/chat/completions");
        assert_eq!(ProviderConfig::new("http://h/v1", "m").endpoint(), "http://h/v1/chat/completions");
    }
}
