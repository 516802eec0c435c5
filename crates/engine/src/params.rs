//! Shared checks for tool parameters, so every tool (built-in or custom) refuses the same
//! things in the same words: an unknown key is named with the known ones listed (a
//! misspelled `paths` must not silently widen a call), and a bad value is quoted.
//!
//! The registry runs, in order: the tool's own [`Tool::check_params`](crate::Tool::check_params)
//! (a tool's exact messages win), then [`check_keys_by_schema`] (every object its JSON
//! Schema closes with `additionalProperties: false`), then the JSON Schema itself as a
//! backstop.

use serde_json::{Map, Value};

use crate::tool::ToolError;

/// The longest rendering of a key or a value quoted in a message, in characters; a longer
/// one is cut and ends with `…`.
pub const MAX_SHOWN: usize = 120;

/// `text` as quoted in messages: whole up to [`MAX_SHOWN`] characters, else cut with `…`.
pub fn shown(text: &str) -> String {
    match text.char_indices().nth(MAX_SHOWN) {
        None => text.to_string(),
        Some((cut, _)) => format!("{}…", &text[..cut]),
    }
}

/// `value` as quoted in messages: its JSON text (strings with their quotes), cut like [`shown`].
pub fn quote(value: &Value) -> String {
    shown(&value.to_string())
}

/// How many unknown keys a message names; more are counted.
const MAX_NAMED: usize = 10;

fn invalid(message: String) -> ToolError {
    ToolError::InvalidParams(message)
}

/// The parameters as an object, or an error quoting what they are instead.
pub fn as_object<'a>(tool: &str, params: &'a Value) -> Result<&'a Map<String, Value>, ToolError> {
    params.as_object().ok_or_else(|| {
        invalid(format!(
            "The parameters of `{tool}` must be a JSON object like {{\"key\": value}}, got {}.",
            quote(params)
        ))
    })
}

/// Refuses the keys of `obj` that are not in `known`. `at` is where the object sits: empty
/// for the parameters themselves, a field path like `ops[0]` for a nested object.
pub fn check_known_keys(tool: &str, at: &str, obj: &Map<String, Value>, known: &[&str]) -> Result<(), ToolError> {
    let unknown: Vec<&str> = obj.keys().map(String::as_str).filter(|k| !known.contains(k)).collect();
    if unknown.is_empty() {
        Ok(())
    } else {
        Err(unknown_keys_error(tool, at, &unknown, known))
    }
}

/// The message for keys a tool does not take, e.g.
/// ``Unknown parameter `paths` for `ast_edit`: known parameters are `ops`, `lang`, `path`, `glob`, `sel`, `limit`. Did you mean `path`?``
pub fn unknown_keys_error(tool: &str, at: &str, unknown: &[&str], known: &[&str]) -> ToolError {
    let (one, many) = if at.is_empty() { ("parameter", "parameters") } else { ("key", "keys") };
    let list = |keys: &[&str]| keys.iter().map(|k| format!("`{}`", shown(k))).collect::<Vec<_>>().join(", ");
    let place = if at.is_empty() { format!("for `{tool}`") } else { format!("in `{at}` of `{tool}`") };
    let what = if unknown.len() == 1 { one } else { many };
    let known_text =
        if known.is_empty() { format!("it takes no {many}") } else { format!("known {many} are {}", list(known)) };
    // A flood of keys (a wrong object passed whole) is named by its first few.
    let named = if unknown.len() > MAX_NAMED {
        format!("{} and {} more", list(&unknown[..MAX_NAMED]), unknown.len() - MAX_NAMED)
    } else {
        list(unknown)
    };
    let mut message = format!("Unknown {what} {named} {place}: {known_text}.");
    let hints: Vec<String> = unknown
        .iter()
        .take(MAX_NAMED)
        .filter_map(|u| {
            did_you_mean(u, known).map(|k| {
                if unknown.len() == 1 {
                    format!("`{k}`")
                } else {
                    format!("`{k}` for `{}`", shown(u))
                }
            })
        })
        .collect();
    if hints.is_empty() {
        message.push_str(if unknown.len() == 1 {
            " Remove it and call again."
        } else {
            " Remove them and call again."
        });
    } else {
        message.push_str(&format!(" Did you mean {}?", hints.join(", ")));
    }
    invalid(message)
}

/// The known key a caller probably meant: same letters in another case, one a prefix of the
/// other (`paths` → `path`, `pattern` → `pat`), or at most two edits away.
pub fn did_you_mean<'a>(unknown: &str, known: &[&'a str]) -> Option<&'a str> {
    if unknown.chars().count() > 64 {
        return None;
    }
    let lower = unknown.to_lowercase();
    // Two edits of a long key are a typo; of a short one, another word.
    let max_edits = match lower.chars().count() {
        0..=1 => 0,
        2..=4 => 1,
        _ => 2,
    };
    known.iter().copied().find(|k| {
        let k_lower = k.to_lowercase();
        let (short, long) = if k_lower.len() <= lower.len() { (&k_lower, &lower) } else { (&lower, &k_lower) };
        k_lower == lower
            || (short.chars().count() >= 3 && long.starts_with(short.as_str()))
            || edit_distance(&lower, &k_lower) <= max_edits
    })
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let here = row[j + 1];
            row[j + 1] = if ca == *cb { prev } else { 1 + prev.min(row[j]).min(here) };
            prev = here;
        }
    }
    row[b.len()]
}

/// Refuses unknown keys wherever the tool's JSON Schema closes an object with
/// `additionalProperties: false` (at the top, under `properties`, under `items`), with the
/// message of [`check_known_keys`]. A custom tool gets it by writing its schema so; objects
/// with `patternProperties` are left to the schema check.
pub fn check_keys_by_schema(tool: &str, schema: &Value, params: &Value) -> Result<(), ToolError> {
    walk(tool, schema, params, "")
}

fn walk(tool: &str, schema: &Value, value: &Value, at: &str) -> Result<(), ToolError> {
    match value {
        Value::Object(obj) => {
            let props = schema.get("properties").and_then(Value::as_object);
            let closed = schema.get("additionalProperties") == Some(&Value::Bool(false))
                && schema.get("patternProperties").is_none();
            if closed {
                let known: Vec<&str> = props.map(|p| p.keys().map(String::as_str).collect()).unwrap_or_default();
                check_known_keys(tool, at, obj, &known)?;
            }
            if let Some(props) = props {
                for (key, sub) in obj {
                    if let Some(sub_schema) = props.get(key) {
                        let path = if at.is_empty() { key.clone() } else { format!("{at}.{key}") };
                        walk(tool, sub_schema, sub, &path)?;
                    }
                }
            }
            Ok(())
        }
        Value::Array(items) => match schema.get("items") {
            Some(item_schema) if item_schema.is_object() => {
                for (i, item) in items.iter().enumerate() {
                    walk(tool, item_schema, item, &format!("{at}[{i}]"))?;
                }
                Ok(())
            }
            _ => Ok(()),
        },
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn unknown_key_is_named_with_the_known_ones_and_a_suggestion() {
        let params = json!({"ops": [], "paths": "src"});
        let err = check_known_keys("ast_edit", "", params.as_object().unwrap(), &["ops", "path"]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "Unknown parameter `paths` for `ast_edit`: known parameters are `ops`, `path`. Did you mean `path`?"
        );
        let err =
            check_known_keys("t", "ops[2]", json!({"x": 1, "y": 2}).as_object().unwrap(), &["pat", "out"]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "Unknown keys `x`, `y` in `ops[2]` of `t`: known keys are `pat`, `out`. Remove them and call again."
        );
    }

    #[test]
    fn a_flood_of_unknown_keys_is_named_by_the_first_ten() {
        let obj: Map<String, Value> = (0..25).map(|i| (format!("k{i:02}"), json!(i))).collect();
        let err = check_known_keys("t", "", &obj, &["a"]).unwrap_err().to_string();
        assert!(err.starts_with("Unknown parameters `k00`, `k01`, `k02`"), "{err}");
        assert!(err.contains("`k09` and 15 more for `t`: known parameters are `a`."), "{err}");
        assert!(!err.contains("k10"), "{err}");
    }

    #[test]
    fn suggestions_need_a_close_known_key() {
        assert_eq!(did_you_mean("pattern", &["pat", "out"]), Some("pat"));
        assert_eq!(did_you_mean("Reason", &["action", "reason"]), Some("reason"));
        assert_eq!(did_you_mean("reasn", &["action", "reason"]), Some("reason"));
        assert_eq!(did_you_mean("zzz", &["action", "reason"]), None);
        assert_eq!(did_you_mean("a", &["action"]), None, "one letter is no evidence");
        assert_eq!(did_you_mean("op", &["ops", "lang"]), Some("ops"));
        assert_eq!(did_you_mean("xyz", &["sel"]), None);
    }

    #[test]
    fn schema_closed_objects_are_checked_down_to_array_items() {
        let schema = json!({"type": "object", "additionalProperties": false, "properties": {
            "ops": {"type": "array", "items": {"type": "object", "additionalProperties": false,
                "properties": {"pat": {}, "out": {}}}},
            "open": {"type": "object"}}});
        assert!(check_keys_by_schema("t", &schema, &json!({"ops": [{"pat": "a"}], "open": {"any": 1}})).is_ok());
        let err = check_keys_by_schema("t", &schema, &json!({"ops": [{"pat": "a"}, {"pattern": "b"}]})).unwrap_err();
        assert_eq!(
            err.to_string(),
            "Unknown key `pattern` in `ops[1]` of `t`: known keys are `pat`, `out`. Did you mean `pat`?"
        );
    }

    #[test]
    fn long_values_are_cut_where_they_are_quoted() {
        let long = "é".repeat(500);
        let q = quote(&json!(long));
        assert_eq!(q.chars().count(), MAX_SHOWN + 1);
        assert!(q.starts_with("\"éé") && q.ends_with('…'), "{q}");
        assert_eq!(shown("short"), "short");
    }
}
