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
    #[error("cannot read the agent settings {path}: {source}")]
    Read { path: PathBuf, source: std::io::Error },
    #[error("the agent settings {path} are not valid JSON settings: {message}. Fix or delete the file.")]
    Parse { path: PathBuf, message: String },
    #[error("cannot write the agent settings {path}: {source}")]
    Write { path: PathBuf, source: std::io::Error },
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

    /// Loads the settings from `config_dir`; the defaults when there is no file yet.
    pub fn load(config_dir: &Path) -> Result<Self, ConfigError> {
        let path = Self::path_in(config_dir);
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Self::default()),
            Err(source) => return Err(ConfigError::Read { path, source }),
        };
        let config: Self = serde_json::from_str(&text)
            .map_err(|e| ConfigError::Parse { path: path.clone(), message: e.to_string() })?;
        config.validate()?;
        Ok(config)
    }

    /// Checks and writes the settings to `config_dir` atomically (a temporary file renamed
    /// over the old one), creating the folder when needed.
    pub fn save(&self, config_dir: &Path) -> Result<(), ConfigError> {
        self.validate()?;
        let path = Self::path_in(config_dir);
        let write = |source| ConfigError::Write { path: path.clone(), source };
        let dir = path.parent().unwrap_or(config_dir);
        std::fs::create_dir_all(dir).map_err(write)?;
        let mut text = serde_json::to_string_pretty(self).map_err(|e| write(std::io::Error::other(e)))?;
        text.push('\n');
        let tmp = dir.join(format!(".{CONFIG_FILE}.{}.tmp", std::process::id()));
        std::fs::write(&tmp, text).map_err(write)?;
        std::fs::rename(&tmp, &path).map_err(|e| {
            let _ = std::fs::remove_file(&tmp);
            write(e)
        })
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
        let leftovers: Vec<_> = std::fs::read_dir(path.parent().unwrap()).unwrap().collect();
        assert_eq!(leftovers.len(), 1, "no temporary file left behind");
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
    }

    #[test]
    fn endpoint_joins_with_one_slash() {
        assert_eq!(ProviderConfig::new("http://h/v1/", "m").endpoint(), "http://h/v1/chat/completions");
        assert_eq!(ProviderConfig::new("http://h/v1", "m").endpoint(), "http://h/v1/chat/completions");
    }
}
