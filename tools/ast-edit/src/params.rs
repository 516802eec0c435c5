//! The parameters of `ast_edit`: their JSON Schema, and the validation that gives the exact
//! messages of SPEC §5. The session runs this validation (the tool's `check_params`) before
//! the schema, so these messages win; the schema only types the fields and closes the
//! objects (`additionalProperties: false`).

use std::str::FromStr;

use ast_grep_language::SupportLang;
use resolve_engine::params::{check_known_keys, quote};
use resolve_engine::ToolError;
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

use crate::TOOL_NAME;

/// One rewrite: every match of `pat` becomes `out` (`out` may be empty: the match is deleted).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RewriteOp {
    pub pat: String,
    #[serde(default)]
    pub out: String,
}

/// What a caller asks for. Build it from JSON with [`AstEditParams::from_json`] or by hand
/// (the command line does), then [`validate`](AstEditParams::validate) it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AstEditParams {
    /// Ordered rewrites; an earlier op wins where two ops' matches overlap.
    pub ops: Vec<RewriteOp>,
    /// A language name or alias (`ts`, `rs`, `py`…), case-insensitive. None: by extension.
    pub lang: Option<String>,
    /// A file, directory, glob or comma-separated list of them, workspace-relative.
    pub path: Option<String>,
    /// An extra filter relative to each `path` entry (`*` does not cross `/`; `**` does).
    pub glob: Option<String>,
    /// A node kind: each pattern is parsed as context and the rewrite applies to this node.
    pub sel: Option<String>,
    /// Maximum number of replacements.
    pub limit: Option<usize>,
}

/// Parameters after validation: the language is resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValidParams {
    pub ops: Vec<RewriteOp>,
    pub lang: Option<SupportLang>,
    pub path: Option<String>,
    pub glob: Option<String>,
    pub sel: Option<String>,
    pub limit: Option<usize>,
}

fn invalid(msg: impl Into<String>) -> ToolError {
    ToolError::InvalidParams(msg.into())
}

/// Op `i` of `ops`: an object with a string `pat` (missing or blank is refused later, with
/// SPEC §5's `` `ops[<i>].pat` must be a non-empty pattern ``) and an optional string `out`.
fn op_from_json(i: usize, item: &Value) -> Result<RewriteOp, ToolError> {
    let Value::Object(op) = item else {
        return Err(invalid(format!("`ops[{i}]` must be an object {{pat, out}}, got {}", quote(item))));
    };
    check_known_keys(TOOL_NAME, &format!("ops[{i}]"), op, &OP_KEYS)?;
    let pat = match op.get("pat") {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(other) => {
            return Err(invalid(format!("`ops[{i}].pat` must be a non-empty pattern, got {}", quote(other))))
        }
    };
    let out = match op.get("out") {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(other) => return Err(invalid(format!("`ops[{i}].out` must be a string, got {}", quote(other)))),
    };
    Ok(RewriteOp { pat, out })
}

/// The parameters `ast_edit` takes, in the order the schema lists them.
pub const PARAM_KEYS: [&str; 6] = ["ops", "lang", "path", "glob", "sel", "limit"];
/// The keys of one op.
pub const OP_KEYS: [&str; 2] = ["pat", "out"];

fn opt_string(v: &Map<String, Value>, key: &str) -> Result<Option<String>, ToolError> {
    match v.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) if s.trim().is_empty() => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(other) => Err(invalid(format!("`{key}` must be a string, got {}", quote(other)))),
    }
}

impl AstEditParams {
    /// Reads the tool's JSON parameters with the exact messages of SPEC §5. Unknown keys (of
    /// the parameters and of each op) are refused by name; a value of the wrong type is quoted.
    pub fn from_json(v: &Value) -> Result<Self, ToolError> {
        let Value::Object(obj) = v else {
            return Err(invalid(format!("ast_edit parameters must be an object, got {}", quote(v))));
        };
        check_known_keys(TOOL_NAME, "", obj, &PARAM_KEYS)?;
        let ops = match obj.get("ops") {
            Some(Value::Array(items)) => {
                items.iter().enumerate().map(|(i, item)| op_from_json(i, item)).collect::<Result<Vec<_>, _>>()?
            }
            None | Some(Value::Null) => Vec::new(),
            Some(other) => {
                return Err(invalid(format!("`ops` must be an array of {{pat, out}} entries, got {}", quote(other))))
            }
        };
        let limit = match obj.get("limit") {
            None | Some(Value::Null) => None,
            Some(Value::Number(n)) => match n.as_u64() {
                Some(n) if n > 0 => Some(usize::try_from(n).unwrap_or(usize::MAX)),
                _ => match n.as_f64() {
                    Some(f) if f > 0.0 && f.fract() == 0.0 => Some(f as usize),
                    _ => return Err(invalid("limit must be a positive number")),
                },
            },
            Some(_) => return Err(invalid("limit must be a positive number")),
        };
        Ok(Self {
            ops,
            lang: opt_string(obj, "lang")?,
            path: opt_string(obj, "path")?,
            glob: opt_string(obj, "glob")?,
            sel: opt_string(obj, "sel")?,
            limit,
        })
    }

    /// Checks the ops and the limit, and resolves the language.
    pub fn validate(&self) -> Result<ValidParams, ToolError> {
        if self.ops.is_empty() {
            return Err(invalid("`ops` must include at least one op entry"));
        }
        let mut seen: Vec<&str> = Vec::new();
        for (i, op) in self.ops.iter().enumerate() {
            let pat = op.pat.trim();
            if pat.is_empty() {
                return Err(invalid(format!("`ops[{i}].pat` must be a non-empty pattern")));
            }
            if seen.contains(&pat) {
                return Err(invalid(format!("Duplicate rewrite pattern: {pat}")));
            }
            seen.push(pat);
        }
        if self.limit == Some(0) {
            return Err(invalid("limit must be a positive number"));
        }
        let lang = self.lang.as_deref().map(str::trim).filter(|l| !l.is_empty()).map(parse_lang).transpose()?;
        Ok(ValidParams {
            ops: self.ops.iter().map(|o| RewriteOp { pat: o.pat.trim().to_string(), out: o.out.clone() }).collect(),
            lang,
            path: self.path.clone(),
            glob: self.glob.clone(),
            sel: self.sel.as_deref().map(str::trim).filter(|s| !s.is_empty()).map(str::to_string),
            limit: self.limit,
        })
    }
}

/// Every builtin language's name, lower case, in a stable order.
pub fn supported_languages() -> Vec<String> {
    SupportLang::all_langs().iter().map(|l| l.to_string().to_lowercase()).collect()
}

/// A language by name or alias (case-insensitive); unknown → an error listing the supported ones.
pub fn parse_lang(name: &str) -> Result<SupportLang, ToolError> {
    SupportLang::from_str(name.trim()).map_err(|_| {
        invalid(format!(
            "Unknown language `{}`. Supported languages: {} (aliases such as ts, rs, py, js, rb, kt, yml are accepted).",
            name.trim(),
            supported_languages().join(", ")
        ))
    })
}

/// The JSON Schema of the parameters. Loose on purpose (it types the fields and closes the
/// objects); the exact messages come from [`AstEditParams::from_json`] and
/// [`AstEditParams::validate`], which the session runs first.
pub fn parameters_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "ops": {
                "type": "array",
                "description": "Ordered rewrites. Each {pat, out}: `pat` an ast-grep pattern ($A matches one node, $$$A a list), `out` its replacement (metavariables allowed; empty deletes the match). Earlier ops win where matches overlap.",
                "items": {
                    "type": "object",
                    "properties": {
                        "pat": {"type": "string", "description": "ast-grep pattern"},
                        "out": {"type": "string", "description": "replacement template"}
                    },
                    "required": ["pat"],
                    "additionalProperties": false
                }
            },
            "lang": {"type": "string", "description": "Language (aliases like ts, rs, py accepted). Default: by each file's extension."},
            "path": {"type": "string", "description": "File, directory, glob or comma-separated list, relative to the workspace root (default: the root)."},
            "glob": {"type": "string", "description": "Extra filter relative to `path` (`*` does not cross `/`; `**` does)."},
            "sel": {"type": "string", "description": "Node kind for contextual patterns: `pat` is parsed as context and the rewrite applies to the selected node."},
            "limit": {"type": "number", "description": "Maximum number of replacements (positive integer)."}
        },
        "required": ["ops"],
        "additionalProperties": false
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(v: Value) -> String {
        AstEditParams::from_json(&v).and_then(|p| p.validate()).unwrap_err().to_string()
    }

    #[test]
    fn empty_ops_are_refused_with_the_spec_message() {
        assert_eq!(err(json!({"ops": []})), "`ops` must include at least one op entry");
        assert_eq!(err(json!({})), "`ops` must include at least one op entry");
    }

    #[test]
    fn blank_pattern_names_its_index() {
        assert_eq!(
            err(json!({"ops": [{"pat": "a", "out": ""}, {"pat": "  ", "out": "x"}]})),
            "`ops[1].pat` must be a non-empty pattern"
        );
    }

    #[test]
    fn duplicate_patterns_are_refused() {
        assert_eq!(
            err(json!({"ops": [{"pat": "f($A)", "out": "g($A)"}, {"pat": "f($A)", "out": "h($A)"}]})),
            "Duplicate rewrite pattern: f($A)"
        );
    }

    #[test]
    fn limit_must_be_positive() {
        for bad in [json!(0), json!(-1), json!(1.5), json!("3")] {
            assert_eq!(
                err(json!({"ops": [{"pat": "a"}], "limit": bad})),
                "limit must be a positive number",
                "limit {bad}"
            );
        }
        let ok = AstEditParams::from_json(&json!({"ops": [{"pat": "a"}], "limit": 2})).unwrap();
        assert_eq!(ok.limit, Some(2));
    }

    #[test]
    fn languages_accept_aliases_case_insensitively_and_unknown_lists_supported() {
        assert_eq!(parse_lang("TS").unwrap(), SupportLang::TypeScript);
        assert_eq!(parse_lang("rs").unwrap(), SupportLang::Rust);
        assert_eq!(parse_lang("Py").unwrap(), SupportLang::Python);
        let e = parse_lang("cobol").unwrap_err().to_string();
        assert!(e.starts_with("Unknown language `cobol`. Supported languages: bash, c, cpp"), "{e}");
        assert!(e.contains("typescript") && e.contains("rust"), "{e}");
    }
}
