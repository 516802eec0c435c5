//! The tool registry: unique names, and parameters checked before `execute` runs: first the
//! tool's own [`Tool::check_params`] (its exact messages win), then unknown keys wherever its
//! schema says `additionalProperties: false` (named, with the known ones listed), then the
//! JSON Schema itself as a backstop.

use std::sync::Arc;

use serde::Serialize;
use serde_json::Value;

use crate::tool::{Tool, ToolError};

/// Why a tool could not be registered.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RegistryError {
    #[error("Tool name \"{0}\" conflicts with existing tool")]
    Conflict(String),
    #[error("Tool \"{name}\" has an invalid parameters schema: {message}")]
    InvalidSchema { name: String, message: String },
    #[error("Tool names must be non-empty letters, digits, '_' or '-'; got \"{0}\"")]
    InvalidName(String),
}

/// What a model (or the app's tool picker) is told about a tool.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolSpec {
    pub name: String,
    pub label: String,
    pub description: String,
    pub parameters: Value,
    pub hidden: bool,
    /// [`Tool::preview_only`]: the desk guarantees that a call writes nothing.
    pub preview_only: bool,
}

struct Entry {
    tool: Arc<dyn Tool>,
    schema: Value,
    validator: jsonschema::Validator,
}

/// Tools by name, in registration order.
#[derive(Default)]
pub struct ToolRegistry {
    entries: Vec<Entry>,
}

impl ToolRegistry {
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a tool. Refuses a name already taken and a schema that does not compile.
    pub fn register(&mut self, tool: Arc<dyn Tool>) -> Result<(), RegistryError> {
        let name = tool.name().to_string();
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') {
            return Err(RegistryError::InvalidName(name));
        }
        if self.get(&name).is_some() {
            return Err(RegistryError::Conflict(name));
        }
        let schema = tool.parameters();
        let validator = jsonschema::validator_for(&schema)
            .map_err(|e| RegistryError::InvalidSchema { name: name.clone(), message: e.to_string() })?;
        self.entries.push(Entry { tool, schema, validator });
        Ok(())
    }

    /// Removes the tool named `name` (a tool unloaded at runtime, e.g. an external tool whose
    /// folder was removed); false when no tool has that name.
    pub fn unregister(&mut self, name: &str) -> bool {
        let before = self.entries.len();
        self.entries.retain(|e| e.tool.name() != name);
        self.entries.len() != before
    }

    pub fn get(&self, name: &str) -> Option<Arc<dyn Tool>> {
        self.entries.iter().find(|e| e.tool.name() == name).map(|e| e.tool.clone())
    }

    /// Names in registration order.
    pub fn names(&self) -> Vec<String> {
        self.entries.iter().map(|e| e.tool.name().to_string()).collect()
    }

    pub fn specs(&self) -> Vec<ToolSpec> {
        self.entries
            .iter()
            .map(|e| ToolSpec {
                name: e.tool.name().to_string(),
                label: e.tool.label().to_string(),
                description: e.tool.description().to_string(),
                parameters: e.tool.parameters(),
                hidden: e.tool.hidden(),
                preview_only: e.tool.preview_only(),
            })
            .collect()
    }

    /// Checks `params`: the tool's own check first (its messages win), then unknown keys of
    /// every object the schema closes, then the schema. A schema error names the tool, every
    /// bad field (as `ops[0].pat`) and what is wrong with it.
    pub fn validate(&self, name: &str, params: &Value) -> Result<(), ToolError> {
        let entry = self
            .entries
            .iter()
            .find(|e| e.tool.name() == name)
            .ok_or_else(|| ToolError::UnknownTool { name: name.to_string(), known: self.names().join(", ") })?;
        entry.tool.check_params(params)?;
        crate::params::check_keys_by_schema(name, &entry.schema, params)?;
        let problems: Vec<String> = entry
            .validator
            .iter_errors(params)
            .map(|err| {
                let field = field_name(&err.instance_path().to_string());
                // The schema's words quote the whole bad value: keep messages readable.
                let what = crate::params::shown(&err.to_string());
                if field.is_empty() {
                    what
                } else {
                    format!("`{field}`: {what}")
                }
            })
            .collect();
        if problems.is_empty() {
            Ok(())
        } else {
            Err(ToolError::InvalidParams(format!(
                "Invalid parameters for `{name}`: {}. Fix the parameters and call again.",
                problems.join("; ")
            )))
        }
    }
}

/// `/ops/0/pat` → `ops[0].pat`.
fn field_name(pointer: &str) -> String {
    let mut out = String::new();
    for seg in pointer.split('/').filter(|s| !s.is_empty()) {
        let seg = seg.replace("~1", "/").replace("~0", "~");
        if seg.chars().all(|c| c.is_ascii_digit()) {
            out.push_str(&format!("[{seg}]"));
        } else {
            if !out.is_empty() {
                out.push('.');
            }
            out.push_str(&seg);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tool::{ToolContext, ToolResult};
    use async_trait::async_trait;
    use serde_json::json;

    struct Echo(&'static str);

    #[async_trait]
    impl Tool for Echo {
        fn name(&self) -> &str {
            self.0
        }
        fn label(&self) -> &str {
            "Echo"
        }
        fn description(&self) -> &str {
            "echoes"
        }
        fn parameters(&self) -> Value {
            json!({"type": "object", "properties": {"ops": {"type": "array", "items": {"type": "object",
                "properties": {"pat": {"type": "string", "minLength": 1}}, "required": ["pat"]}}},
                "required": ["ops"], "additionalProperties": false})
        }
        async fn execute(&self, _ctx: ToolContext, _params: Value) -> Result<ToolResult, ToolError> {
            Ok(ToolResult::text("ok"))
        }
    }

    #[test]
    fn duplicate_name_is_refused_with_the_spec_message() {
        let mut reg = ToolRegistry::new();
        reg.register(Arc::new(Echo("echo"))).unwrap();
        let err = reg.register(Arc::new(Echo("echo"))).unwrap_err();
        assert_eq!(err.to_string(), "Tool name \"echo\" conflicts with existing tool");
        assert_eq!(reg.names(), vec!["echo"], "the first registration must survive");
    }

    #[test]
    fn validation_names_the_bad_field() {
        let mut reg = ToolRegistry::new();
        reg.register(Arc::new(Echo("echo"))).unwrap();
        let err = reg.validate("echo", &json!({"ops": [{"pat": ""}]})).unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains("`ops[0].pat`"), "message should name the field: {msg}");
        assert_eq!(err.code(), "invalid_params");
        let err = reg.validate("echo", &json!({"ops": [], "extra": 1})).unwrap_err();
        assert!(err.to_string().contains("extra"), "unexpected property should be named: {err}");
        assert!(reg.validate("echo", &json!({"ops": [{"pat": "x"}]})).is_ok());
    }

    #[test]
    fn the_schema_backstop_names_the_field_and_cuts_long_values() {
        let mut reg = ToolRegistry::new();
        reg.register(Arc::new(Echo("echo"))).unwrap();
        let long = "x".repeat(5000);
        let err = reg.validate("echo", &json!({"ops": long})).unwrap_err().to_string();
        assert!(err.starts_with("Invalid parameters for `echo`: `ops`: \"xxx"), "{err}");
        assert!(err.contains("…") && err.len() < 400, "a 5000-byte value is not repeated whole: {err}");
        let err = reg.validate("echo", &json!({})).unwrap_err().to_string();
        assert_eq!(
            err,
            "Invalid parameters for `echo`: \"ops\" is a required property. Fix the parameters and call again."
        );
    }

    #[test]
    fn unknown_tool_lists_known_ones() {
        let mut reg = ToolRegistry::new();
        reg.register(Arc::new(Echo("echo"))).unwrap();
        let err = reg.validate("nope", &json!({})).unwrap_err();
        assert_eq!(err.to_string(), "Unknown tool `nope`. Known tools: echo.");
    }

    #[test]
    fn a_tool_can_be_removed_and_its_name_reused() {
        let mut reg = ToolRegistry::new();
        reg.register(Arc::new(Echo("a"))).unwrap();
        reg.register(Arc::new(Echo("b"))).unwrap();
        assert!(reg.unregister("a"));
        assert!(!reg.unregister("a"), "a second removal finds nothing");
        assert_eq!(reg.names(), vec!["b"]);
        assert!(reg.validate("a", &json!({})).is_err(), "a removed tool is unknown");
        reg.register(Arc::new(Echo("a"))).unwrap();
        assert_eq!(reg.names(), vec!["b", "a"]);
    }

    struct Preview;

    #[async_trait]
    impl Tool for Preview {
        fn name(&self) -> &str {
            "preview"
        }
        fn label(&self) -> &str {
            "Preview"
        }
        fn description(&self) -> &str {
            "previews"
        }
        fn parameters(&self) -> Value {
            json!({"type": "object"})
        }
        fn preview_only(&self) -> bool {
            true
        }
        async fn execute(&self, _ctx: ToolContext, _params: Value) -> Result<ToolResult, ToolError> {
            Ok(ToolResult::text("ok"))
        }
    }

    #[test]
    fn a_spec_is_preview_only_only_when_its_tool_says_so() {
        let mut reg = ToolRegistry::new();
        reg.register(Arc::new(Echo("echo"))).unwrap();
        reg.register(Arc::new(Preview)).unwrap();
        let specs: Vec<(String, bool)> = reg.specs().into_iter().map(|s| (s.name, s.preview_only)).collect();
        assert_eq!(
            specs,
            vec![("echo".to_string(), false), ("preview".to_string(), true)],
            "a tool that does not claim it is not preview-only (the default)"
        );
    }

    #[test]
    fn invalid_names_are_refused() {
        let mut reg = ToolRegistry::new();
        assert!(matches!(reg.register(Arc::new(Echo("a b"))), Err(RegistryError::InvalidName(_))));
    }
}
