//! A tool folder's manifest (`tool.json`): what the tool is called, what it takes, how to
//! start it. Every problem names the file and the field at fault; nothing here panics.

use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Map, Value};

/// The version of the tool protocol (docs/TOOLS.md) this desk speaks: given to every tool
/// process as `RESOLVE_DESK_PROTOCOL`, checked by the SDKs, and against a manifest's
/// optional `protocol`.
pub const PROTOCOL_VERSION: u32 = 1;

/// The variable that tells a tool process [`PROTOCOL_VERSION`].
pub const PROTOCOL_ENV: &str = "RESOLVE_DESK_PROTOCOL";

/// The manifest's file name in a tool folder.
pub const MANIFEST_FILE: &str = "tool.json";

/// Default time-outs (seconds) when the manifest gives none.
pub const DEFAULT_EXECUTE_SECS: f64 = 120.0;
pub const DEFAULT_APPLY_SECS: f64 = 120.0;
pub const DEFAULT_REJECT_SECS: f64 = 30.0;
/// A tool process unused this long (and with no pending action of its own) is stopped.
pub const DEFAULT_IDLE_SECS: f64 = 300.0;

/// How long the host waits for each answer before stopping the tool.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Timeouts {
    pub execute: Duration,
    pub apply: Duration,
    pub reject: Duration,
    /// Idle time after which the process is stopped.
    pub idle: Duration,
}

impl Default for Timeouts {
    fn default() -> Self {
        Self {
            execute: Duration::from_secs_f64(DEFAULT_EXECUTE_SECS),
            apply: Duration::from_secs_f64(DEFAULT_APPLY_SECS),
            reject: Duration::from_secs_f64(DEFAULT_REJECT_SECS),
            idle: Duration::from_secs_f64(DEFAULT_IDLE_SECS),
        }
    }
}

/// Who put a tool where it was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ToolSource {
    /// The user's own tools folder (`<config>/resolve-desk/tools`): the user's code.
    #[default]
    User,
    /// The workspace's `.resolve/tools`: whoever wrote the repository. Its tools run only
    /// once the person trusts the folder.
    Workspace,
}

/// One external tool, as its manifest describes it.
#[derive(Debug, Clone, PartialEq)]
pub struct Manifest {
    pub name: String,
    pub label: String,
    pub description: String,
    /// JSON Schema of the parameters object.
    pub parameters: Value,
    /// The program to start: a name looked up in `PATH` (`node`, `python3`) or a path
    /// relative to the tool's folder (`./run.sh`).
    pub command: String,
    pub args: Vec<String>,
    /// Names of environment variables the process gets from the desk's environment, besides
    /// the allow-list of [`crate::environment`] (a never-passed one is still withheld).
    pub env: Vec<String>,
    pub timeouts: Timeouts,
    /// The tool's folder (the process runs there).
    pub dir: PathBuf,
    /// The manifest file itself.
    pub file: PathBuf,
    /// Where it was found ([`discover`](crate::discover) sets it; [`ToolSource::User`] otherwise).
    pub source: ToolSource,
}

/// A tool that could not be loaded: the file at fault and why (shown by the app and by
/// `rdesk tools`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadProblem {
    pub file: PathBuf,
    pub message: String,
}

impl fmt::Display for LoadProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.file.display(), self.message)
    }
}

const KNOWN_KEYS: [&str; 10] =
    ["name", "label", "description", "parameters", "command", "args", "env", "timeouts", "protocol", "$schema"];
const TIMEOUT_KEYS: [&str; 4] = ["execute", "apply", "reject", "idle"];

fn problem(file: &Path, message: impl Into<String>) -> LoadProblem {
    LoadProblem { file: file.to_path_buf(), message: message.into() }
}

fn shown(v: &Value) -> String {
    let s = v.to_string();
    if s.chars().count() > 60 {
        format!("{}…", s.chars().take(60).collect::<String>())
    } else {
        s
    }
}

impl Manifest {
    /// Reads and checks `<dir>/tool.json`.
    pub fn load(dir: &Path) -> Result<Manifest, LoadProblem> {
        let file = dir.join(MANIFEST_FILE);
        let text = std::fs::read_to_string(&file).map_err(|e| {
            problem(&file, format!("cannot read the manifest: {e}. Every tool folder needs a {MANIFEST_FILE}."))
        })?;
        Self::parse(&text, dir, &file)
    }

    /// Checks a manifest's text (`dir` is the tool's folder, `file` names it in problems).
    pub fn parse(text: &str, dir: &Path, file: &Path) -> Result<Manifest, LoadProblem> {
        let value: Value = serde_json::from_str(text)
            .map_err(|e| problem(file, format!("is not valid JSON ({e}). Fix the manifest and save it again.")))?;
        let Value::Object(obj) = value else {
            return Err(problem(file, format!("must be a JSON object; got {}", shown(&value))));
        };
        for key in obj.keys() {
            if !KNOWN_KEYS.contains(&key.as_str()) {
                return Err(problem(
                    file,
                    format!("unknown field `{key}`; the known fields are {}.", KNOWN_KEYS[..9].join(", ")),
                ));
            }
        }
        check_protocol(&obj, file)?;
        let name = required_string(&obj, "name", file)?;
        if !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') {
            return Err(problem(
                file,
                format!("field `name` must be letters, digits, '_' or '-' (what an agent calls); got \"{name}\""),
            ));
        }
        let label = required_string(&obj, "label", file)?;
        let description = required_string(&obj, "description", file)?;
        let command = required_string(&obj, "command", file)?;
        let parameters = match obj.get("parameters") {
            None => {
                return Err(problem(
                    file,
                    "missing field `parameters` (the JSON Schema of the parameters object, e.g. {\"type\": \"object\", \"properties\": {}})",
                ))
            }
            Some(Value::Object(schema)) => {
                if let Some(t) = schema.get("type") {
                    if t != "object" {
                        return Err(problem(
                            file,
                            format!("field `parameters.type` must be \"object\" (tools take an object); got {}", shown(t)),
                        ));
                    }
                }
                if let Err(e) = jsonschema_check(&Value::Object(schema.clone())) {
                    return Err(problem(file, format!("field `parameters` is not a valid JSON Schema: {e}")));
                }
                Value::Object(schema.clone())
            }
            Some(other) => {
                return Err(problem(file, format!("field `parameters` must be a JSON Schema object; got {}", shown(other))))
            }
        };
        let args = match obj.get("args") {
            None => Vec::new(),
            Some(Value::Array(items)) => {
                let mut args = Vec::new();
                for (i, item) in items.iter().enumerate() {
                    match item {
                        Value::String(s) => args.push(s.clone()),
                        other => {
                            return Err(problem(
                                file,
                                format!("field `args[{i}]` must be a string; got {}", shown(other)),
                            ))
                        }
                    }
                }
                args
            }
            Some(other) => {
                return Err(problem(file, format!("field `args` must be an array of strings; got {}", shown(other))))
            }
        };
        let env = match obj.get("env") {
            None => Vec::new(),
            Some(Value::Array(items)) => {
                let mut names = Vec::new();
                for (i, item) in items.iter().enumerate() {
                    match item {
                        Value::String(s) if crate::environment::is_variable_name(s) => {
                            if !names.contains(s) {
                                names.push(s.clone());
                            }
                        }
                        other => {
                            return Err(problem(
                                file,
                                format!(
                                    "field `env[{i}]` must be the name of an environment variable (letters, digits and \
                                     '_', not starting with a digit), e.g. \"GITHUB_TOKEN\"; got {}",
                                    shown(other)
                                ),
                            ))
                        }
                    }
                }
                names
            }
            Some(other) => {
                return Err(problem(
                    file,
                    format!(
                        "field `env` must be an array of environment variable names, e.g. [\"GITHUB_TOKEN\"]; got {}",
                        shown(other)
                    ),
                ))
            }
        };
        let mut timeouts = Timeouts::default();
        match obj.get("timeouts") {
            None => {}
            Some(Value::Object(t)) => {
                for (key, value) in t {
                    let secs = value.as_f64().filter(|s| s.is_finite() && *s > 0.0 && *s <= 86_400.0);
                    let Some(secs) = secs else {
                        return Err(problem(
                            file,
                            format!(
                                "field `timeouts.{key}` must be a number of seconds between 0 and 86400; got {}",
                                shown(value)
                            ),
                        ));
                    };
                    let d = Duration::from_secs_f64(secs);
                    match key.as_str() {
                        "execute" => timeouts.execute = d,
                        "apply" => timeouts.apply = d,
                        "reject" => timeouts.reject = d,
                        "idle" => timeouts.idle = d,
                        _ => {
                            return Err(problem(
                                file,
                                format!(
                                    "unknown field `timeouts.{key}`; the known ones are {}.",
                                    TIMEOUT_KEYS.join(", ")
                                ),
                            ))
                        }
                    }
                }
            }
            Some(other) => {
                return Err(problem(
                    file,
                    format!(
                        "field `timeouts` must be an object of seconds, e.g. {{\"execute\": 60}}; got {}",
                        shown(other)
                    ),
                ))
            }
        }
        Ok(Manifest {
            name,
            label,
            description,
            parameters,
            command,
            args,
            env,
            timeouts,
            dir: dir.to_path_buf(),
            file: file.to_path_buf(),
            source: ToolSource::User,
        })
    }
}

/// `protocol` (optional): the tool protocol the tool was written for. Another one than this
/// desk's is refused naming both, before anything is started.
fn check_protocol(obj: &Map<String, Value>, file: &Path) -> Result<(), LoadProblem> {
    let Some(value) = obj.get("protocol") else { return Ok(()) };
    match value.as_u64() {
        Some(v) if v == u64::from(PROTOCOL_VERSION) => Ok(()),
        Some(v) => Err(problem(
            file,
            format!(
                "this tool is written for tool protocol {v}, but this Resolve Desk speaks protocol {PROTOCOL_VERSION}. {}",
                if v > u64::from(PROTOCOL_VERSION) {
                    "Update Resolve Desk, or use a version of the tool written for this one."
                } else {
                    "Update the tool: `rdesk sdk-path` shows the SDK that comes with this desk, and docs/TOOLS.md what changed."
                }
            ),
        )),
        None => Err(problem(
            file,
            format!("field `protocol` must be a whole number (this desk speaks {PROTOCOL_VERSION}); got {}", shown(value)),
        )),
    }
}

fn required_string(obj: &Map<String, Value>, key: &str, file: &Path) -> Result<String, LoadProblem> {
    match obj.get(key) {
        None => Err(problem(file, format!("missing field `{key}` (a non-empty string)"))),
        Some(Value::String(s)) if !s.trim().is_empty() => Ok(s.clone()),
        Some(other) => Err(problem(file, format!("field `{key}` must be a non-empty string; got {}", shown(other)))),
    }
}

/// The registry compiles the schema again; this only turns its error into a manifest problem
/// before anything is registered.
fn jsonschema_check(schema: &Value) -> Result<(), String> {
    let mut reg = resolve_engine::ToolRegistry::new();
    reg.register(std::sync::Arc::new(SchemaProbe(schema.clone()))).map_err(|e| match e {
        resolve_engine::RegistryError::InvalidSchema { message, .. } => message,
        other => other.to_string(),
    })
}

struct SchemaProbe(Value);

#[async_trait::async_trait]
impl resolve_engine::Tool for SchemaProbe {
    fn name(&self) -> &str {
        "probe"
    }
    fn label(&self) -> &str {
        "probe"
    }
    fn description(&self) -> &str {
        "probe"
    }
    fn parameters(&self) -> Value {
        self.0.clone()
    }
    async fn execute(
        &self,
        _ctx: resolve_engine::ToolContext,
        _params: Value,
    ) -> Result<resolve_engine::ToolResult, resolve_engine::ToolError> {
        Err(resolve_engine::ToolError::Failed("never run".into()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Manifest, LoadProblem> {
        Manifest::parse(text, Path::new("/t/x"), Path::new("/t/x/tool.json"))
    }

    const GOOD: &str = r#"{"name": "x", "label": "X", "description": "d", "parameters": {"type": "object"}, "command": "node", "args": ["a.js"], "timeouts": {"execute": 2.5}}"#;

    #[test]
    fn a_good_manifest_parses_with_defaults() {
        let m = parse(GOOD).unwrap();
        assert_eq!(m.name, "x");
        assert_eq!(m.args, vec!["a.js"]);
        assert_eq!(m.timeouts.execute, Duration::from_millis(2500));
        assert_eq!(m.timeouts.apply, Duration::from_secs(120));
        assert!(m.env.is_empty(), "no variables besides the allow-list unless named");
        let named =
            parse(&GOOD.replace("\"args\"", "\"env\": [\"GITHUB_TOKEN\", \"_X1\", \"GITHUB_TOKEN\"], \"args\""))
                .unwrap();
        assert_eq!(named.env, vec!["GITHUB_TOKEN", "_X1"], "named variables, each once");
    }

    #[test]
    fn problems_name_the_file_and_the_field() {
        let cases = [
            (r#"{"name": 3}"#.to_string(), "field `name` must be a non-empty string; got 3"),
            (r#"{"name": "x"}"#.to_string(), "missing field `label`"),
            (GOOD.replace("2.5", "-1"), "field `timeouts.execute` must be a number of seconds"),
            (GOOD.replace("\"a.js\"", "1"), "field `args[0]` must be a string; got 1"),
            (GOOD.replace("\"object\"", "\"array\""), "field `parameters.type` must be \"object\""),
            (GOOD.replace("\"command\"", "\"cmd\""), "unknown field `cmd`"),
            ("{".to_string(), "is not valid JSON"),
            (GOOD.replace("\"name\": \"x\"", "\"name\": \"a b\""), "field `name` must be letters"),
            (
                GOOD.replace("\"args\"", "\"env\": [\"OK\", \"NOT-OK\"], \"args\""),
                "field `env[1]` must be the name of an environment variable",
            ),
            (
                GOOD.replace("\"args\"", "\"env\": \"TOKEN\", \"args\""),
                "field `env` must be an array of environment variable names",
            ),
        ];
        for (text, expected) in cases {
            let p = parse(&text).unwrap_err();
            assert_eq!(p.file, Path::new("/t/x/tool.json"));
            assert!(p.message.contains(expected), "{text}: {}", p.message);
            assert!(p.to_string().starts_with("/t/x/tool.json: "), "{p}");
        }
    }

    #[test]
    fn a_manifest_for_another_protocol_is_refused_naming_both_versions() {
        let ours = GOOD.replace("\"args\"", &format!("\"protocol\": {PROTOCOL_VERSION}, \"args\""));
        assert!(parse(&ours).is_ok(), "this desk's protocol loads");
        let newer = parse(&GOOD.replace("\"args\"", "\"protocol\": 99, \"args\"")).unwrap_err();
        assert!(
            newer.message.contains("protocol 99")
                && newer.message.contains(&format!("speaks protocol {PROTOCOL_VERSION}")),
            "{newer}"
        );
        assert!(newer.message.contains("Update Resolve Desk"), "says what to do: {newer}");
        let odd = parse(&GOOD.replace("\"args\"", "\"protocol\": \"one\", \"args\"")).unwrap_err();
        assert!(odd.message.contains("field `protocol` must be a whole number"), "{odd}");
    }
}
