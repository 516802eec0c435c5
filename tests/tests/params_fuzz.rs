//! Property tests (proptest) of the parameter parsing of `ast_edit`, `batch_rename_preview`
//! and `resolve`, through the real door (`Session::call`: the tool's own check, unknown keys,
//! the schema backstop, then `execute`) on a real temp workspace.
//!
//! Inputs: arbitrary JSON values (objects, arrays, strings with any Unicode and NUL, numbers
//! up to the extremes, booleans, null) and mutations of valid parameters (a key dropped, a
//! value of the wrong type, an unknown key added). Properties: no panic, every error carries
//! a code, and every error names the offending key or quotes the offending value: which key
//! or value that is, is worked out from the parameters by the rules of each tool
//! (`offending`), so an error that names some other key, or a key the caller never gave,
//! fails.
//!
//! Each property runs [`CASES`] cases from a fixed seed (the same cases on every run, so CI
//! is repeatable); `cargo test -p resolve-scenarios --test params_fuzz` runs them all.

use std::fs;

use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestCaseError, TestRng, TestRunner};
use resolve_engine::params::{quote, shown};
use resolve_engine::{Actor, PendingActionStore, ResolvePolicy, Session, ToolResult};
use serde_json::{json, Map, Value};

/// Cases per property (fixed; each property takes a few seconds in a debug build).
const CASES: u32 = 2000;

const AST_KEYS: [&str; 6] = ["ops", "lang", "path", "glob", "sel", "limit"];
const OP_KEYS: [&str; 2] = ["pat", "out"];
const BATCH_KEYS: [&str; 3] = ["files", "find", "replace"];
const RESOLVE_KEYS: [&str; 4] = ["action", "reason", "expected_id", "leave_out"];

fn known_keys(tool: &str) -> &'static [&'static str] {
    match tool {
        "ast_edit" => &AST_KEYS,
        "batch_rename_preview" => &BATCH_KEYS,
        _ => &RESOLVE_KEYS,
    }
}

/// A session on a small workspace with both tools loaded, and a runtime to drive it.
struct Desk {
    _dir: tempfile::TempDir,
    session: Session,
    rt: tokio::runtime::Runtime,
}

impl Desk {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir_all(dir.path().join("src")).unwrap();
        fs::write(dir.path().join("src/a.ts"), "foo(1);\nbar(2);\n").unwrap();
        fs::write(dir.path().join("IMG_1.jpg"), "1").unwrap();
        let session =
            Session::with_store(dir.path(), ResolvePolicy::Agent, PendingActionStore::with_id_prefix("pa-")).unwrap();
        session.load(resolve_tool_ast_edit::factory()).unwrap();
        session.load(resolve_tool_batch_rename::factory()).unwrap();
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        Desk { _dir: dir, session, rt }
    }

    fn call(&self, tool: &str, params: Value) -> ToolResult {
        // Previews pile up unresolved; stay below the stack's bound (RESOLVE_DESK_MAX_PENDING).
        if self.session.store().len() >= 100 {
            self.session.store().clear();
        }
        self.rt.block_on(self.session.call(Actor::Agent, tool, params))
    }
}

/// Runs `test` on `CASES` values of `strategy`, from a fixed seed.
fn check<S: Strategy>(strategy: S, test: impl Fn(S::Value) -> Result<(), TestCaseError>)
where
    S::Value: std::fmt::Debug,
{
    let config = Config { cases: CASES, failure_persistence: None, ..Config::default() };
    let mut runner = TestRunner::new_with_rng(config, TestRng::deterministic_rng(RngAlgorithm::ChaCha));
    if let Err(e) = runner.run(&strategy, test) {
        panic!("{e}");
    }
}

// ---- Strategies ----

/// Strings that stress a parser: any Unicode (NUL included), blanks, paths, huge ones.
fn any_string() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => prop::collection::vec(any::<char>(), 0..12).prop_map(|c| c.into_iter().collect::<String>()),
        3 => "[a-zA-Z0-9_./*$()-]{0,10}",
        1 => Just(String::new()),
        1 => prop::sample::select(vec![" ", "\n\t ", "\0", "a\0b", "../x", "/etc", "é\u{202e}", "**/*.ts"]).prop_map(String::from),
        1 => (1usize..3000).prop_map(|n| "x".repeat(n)),
    ]
}

fn any_number() -> impl Strategy<Value = Value> {
    prop_oneof![
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>()
            .prop_filter_map("JSON has no NaN or infinity", |f| serde_json::Number::from_f64(f).map(Value::Number)),
        prop::sample::select(vec![0.0, -0.0, 1.5, 1e300, -1e300, 9007199254740993.0]).prop_map(|f| json!(f)),
        Just(json!(u64::MAX)),
        Just(json!(i64::MIN)),
    ]
}

/// Keys: mostly the tools' own (to reach deep into the parsers), some anything.
fn any_key() -> impl Strategy<Value = String> {
    let known: Vec<&str> = AST_KEYS.iter().chain(&OP_KEYS).chain(&BATCH_KEYS).chain(&RESOLVE_KEYS).copied().collect();
    prop_oneof![
        2 => prop::sample::select(known).prop_map(String::from),
        1 => any_string(),
    ]
}

/// Any JSON value, nested up to 4 levels.
fn any_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any_number(),
        any_string().prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::vec((any_key(), inner), 0..6).prop_map(|kv| Value::Object(kv.into_iter().collect())),
        ]
    })
}

/// Any JSON value that is not of the JSON type `kind` (and not null, which optional fields
/// take as "absent").
fn not_of(kind: &'static str) -> impl Strategy<Value = Value> {
    any_json().prop_filter("another type", move |v| {
        let k = match v {
            Value::Null => "null",
            Value::Bool(_) => "boolean",
            Value::Number(_) => "number",
            Value::String(_) => "string",
            Value::Array(_) => "array",
            Value::Object(_) => "object",
        };
        k != kind && k != "null"
    })
}

fn valid_ast_edit() -> impl Strategy<Value = Value> {
    (
        prop::sample::select(vec!["foo($A)", "bar($A)", "$X", "console.log($A)"]),
        any_string(),
        prop::option::of(prop::sample::select(vec!["ts", "TypeScript", "rs", "py"])),
        prop::option::of(prop::sample::select(vec!["src", "src/a.ts", "."])),
        prop::option::of(prop_oneof![1u64..10, Just(u64::MAX)]),
    )
        .prop_map(|(pat, out, lang, path, limit)| {
            let mut p = json!({"ops": [{"pat": pat, "out": out}]});
            for (k, v) in
                [("lang", lang.map(Value::from)), ("path", path.map(Value::from)), ("limit", limit.map(Value::from))]
            {
                if let Some(v) = v {
                    p[k] = v;
                }
            }
            p
        })
}

fn valid_batch_rename() -> impl Strategy<Value = Value> {
    (any::<bool>(), prop::sample::select(vec!["^IMG_", "(\\d+)", "jpg$"]), any_string()).prop_map(
        |(list, find, replace)| {
            let files = if list { json!(["*.jpg"]) } else { json!("*.jpg") };
            json!({"files": files, "find": find, "replace": replace})
        },
    )
}

fn valid_resolve() -> impl Strategy<Value = Value> {
    (
        prop::sample::select(vec!["apply", "discard"]),
        any_string().prop_filter("non-blank", |s| !s.trim().is_empty()),
        prop::option::of(any_string()),
    )
        .prop_map(|(action, reason, expected_id)| {
            let mut p = json!({"action": action, "reason": reason});
            if let Some(id) = expected_id {
                p["expected_id"] = json!(id);
            }
            p
        })
}

fn valid(tool: &'static str) -> BoxedStrategy<Value> {
    match tool {
        "ast_edit" => valid_ast_edit().boxed(),
        "batch_rename_preview" => valid_batch_rename().boxed(),
        _ => valid_resolve().boxed(),
    }
}

const TOOLS: [&str; 3] = ["ast_edit", "batch_rename_preview", "resolve"];

// ---- Checks ----

/// What an error about `params` must name: each field that is wrong by the tool's rules (an
/// unknown key, a required key missing, a value of the wrong type or out of range) as
/// `` `field` `` (or SPEC §5's bare `limit must`); when nothing is wrong by those rules (the
/// error comes from running: a path that does not exist, a pattern or a regular expression
/// that does not parse, a language it does not know), a field the caller gave, by name or by
/// value. An error naming only some other key, or a key the caller never gave, fails.
fn offending(tool: &str, params: &Value) -> Vec<String> {
    let Some(obj) = params.as_object() else { return vec![quote(params)] };
    let field = |f: &str| format!("`{f}`");
    let blank = |v: Option<&Value>| v.is_none_or(|v| v.is_null() || v.as_str().is_some_and(|s| s.trim().is_empty()));
    let not_string = |v: Option<&Value>| v.is_some_and(|v| !v.is_null() && !v.is_string());
    let mut wrong: Vec<String> =
        obj.keys().filter(|k| !known_keys(tool).contains(&k.as_str())).map(|k| field(&shown(k))).collect();
    let mut given: Vec<String> = Vec::new();
    let value = |v: &Value, name: String, given: &mut Vec<String>| {
        given.push(name);
        given.push(quote(v));
        if let Some(s) = v.as_str().map(str::trim).filter(|s| s.chars().count() >= 3) {
            given.push(head(s));
        }
    };
    match tool {
        "ast_edit" => {
            match obj.get("ops") {
                Some(Value::Array(items)) if !items.is_empty() => {
                    let mut pats: Vec<&str> = Vec::new();
                    for (i, item) in items.iter().enumerate() {
                        let Some(op) = item.as_object() else {
                            wrong.push(field(&format!("ops[{i}]")));
                            continue;
                        };
                        wrong.extend(op.keys().filter(|k| !OP_KEYS.contains(&k.as_str())).map(|k| field(&shown(k))));
                        if blank(op.get("pat")) || not_string(op.get("pat")) {
                            wrong.push(field(&format!("ops[{i}].pat")));
                        } else if let Some(pat) = op.get("pat") {
                            let trimmed = pat.as_str().unwrap_or_default().trim();
                            if pats.contains(&trimmed) {
                                wrong.push(format!("Duplicate rewrite pattern: {trimmed}"));
                            }
                            pats.push(trimmed);
                            value(pat, field(&format!("ops[{i}].pat")), &mut given);
                        }
                        if not_string(op.get("out")) {
                            wrong.push(field(&format!("ops[{i}].out")));
                        } else if let Some(out) = op.get("out") {
                            value(out, field(&format!("ops[{i}].out")), &mut given);
                        }
                    }
                }
                _ => wrong.push(field("ops")),
            }
            for key in ["lang", "path", "glob", "sel"] {
                if not_string(obj.get(key)) {
                    wrong.push(field(key));
                } else if let Some(v) = obj.get(key).filter(|v| !blank(Some(v))) {
                    value(v, field(key), &mut given);
                }
            }
            let positive = |v: &Value| {
                v.as_u64().is_some_and(|n| n > 0) || v.as_f64().is_some_and(|f| f > 0.0 && f.fract() == 0.0)
            };
            if obj.get("limit").is_some_and(|v| !v.is_null() && !positive(v)) {
                wrong.push("limit must".into());
            }
        }
        "batch_rename_preview" => {
            match obj.get("files") {
                Some(Value::String(s)) if !s.is_empty() => value(&obj["files"], field("files"), &mut given),
                Some(Value::Array(items)) if !items.is_empty() => {
                    for (i, item) in items.iter().enumerate() {
                        match item {
                            Value::String(s) if !s.is_empty() => value(item, field("files"), &mut given),
                            _ => wrong.push(field(&format!("files[{i}]"))),
                        }
                    }
                }
                _ => wrong.push(field("files")),
            }
            match obj.get("find") {
                Some(Value::String(s)) if !s.is_empty() => value(&obj["find"], field("find"), &mut given),
                _ => wrong.push(field("find")),
            }
            match obj.get("replace") {
                Some(v @ Value::String(_)) => value(v, field("replace"), &mut given),
                _ => wrong.push(field("replace")),
            }
        }
        _ => {
            match obj.get("action").and_then(Value::as_str) {
                Some("apply" | "discard") => {}
                _ => wrong.push(field("action")),
            }
            if blank(obj.get("reason")) || not_string(obj.get("reason")) {
                wrong.push(field("reason"));
            }
            if not_string(obj.get("expected_id")) {
                wrong.push(field("expected_id"));
            } else if let Some(id) = obj.get("expected_id").filter(|v| !v.is_null()) {
                value(id, field("expected_id"), &mut given);
            }
            if obj.get("leave_out").is_some_and(|v| !v.is_null()) {
                // Its shape is checked in depth (`leave_out.files`, `leave_out.replacements[…]`).
                wrong.push("`leave_out".into());
            }
        }
    }
    if wrong.is_empty() {
        given
    } else {
        wrong
    }
}

/// The error names what was wrong with `params` (see [`offending`]).
fn names_the_offender(message: &str, tool: &str, params: &Value) -> Result<(), Vec<String>> {
    let want = offending(tool, params);
    if want.iter().any(|w| !w.is_empty() && message.contains(w.as_str())) {
        Ok(())
    } else {
        Err(want)
    }
}

/// The start of a string (messages may cut a long one, or quote it inside a longer name).
fn head(s: &str) -> String {
    s.chars().take(40).collect()
}

fn check_result(tool: &str, params: &Value, r: &ToolResult) -> Result<(), TestCaseError> {
    if !r.is_error {
        return Ok(());
    }
    let text = r.text_content();
    prop_assert!(r.error_code.is_some(), "an error without a code for {params}: {text}");
    prop_assert!(!text.trim().is_empty(), "an empty error for {params}");
    if r.error_code.as_deref() != Some("no_pending_action") {
        if let Err(want) = names_the_offender(&text, tool, params) {
            return Err(TestCaseError::fail(format!("`{tool}` error for {params} names none of {want:?}: {text}")));
        }
    }
    Ok(())
}

// ---- Properties ----

#[test]
fn arbitrary_json_never_panics_and_every_error_names_what_was_wrong() {
    let desk = Desk::new();
    for tool in TOOLS {
        check(any_json(), |params| {
            let r = desk.call(tool, params.clone());
            check_result(tool, &params, &r)
        });
    }
}

#[test]
fn objects_with_the_tools_own_keys_never_panic_and_errors_name_what_was_wrong() {
    let desk = Desk::new();
    for tool in TOOLS {
        let keys: Vec<&str> = known_keys(tool).to_vec();
        let strategy = prop::collection::vec((prop::sample::select(keys), any_json()), 0..5)
            .prop_map(|kv| Value::Object(kv.into_iter().map(|(k, v)| (k.to_string(), v)).collect::<Map<_, _>>()));
        check(strategy, |params| {
            let r = desk.call(tool, params.clone());
            check_result(tool, &params, &r)
        });
    }
}

#[test]
fn valid_params_with_any_strings_never_panic() {
    let desk = Desk::new();
    for tool in TOOLS {
        check(valid(tool), |params| {
            let r = desk.call(tool, params.clone());
            check_result(tool, &params, &r)?;
            if tool == "resolve" {
                // Whatever the reason, it reaches the result untouched (or the stack was empty).
                if let Some(details) = &r.details {
                    prop_assert_eq!(&details["reason"], &params["reason"]);
                }
            }
            Ok(())
        });
        // Keep the stack small: previews pushed by valid calls are dropped unapplied.
        desk.session.store().clear();
    }
}

#[test]
fn unknown_keys_are_refused_naming_the_key_and_listing_the_known_ones() {
    let desk = Desk::new();
    for tool in TOOLS {
        let known = known_keys(tool);
        let extra = any_string().prop_filter("unknown", move |k| !known.contains(&k.as_str()));
        check((valid(tool), extra, any_json()), |(mut params, key, value)| {
            params[key.as_str()] = value;
            let r = desk.call(tool, params.clone());
            let text = r.text_content();
            prop_assert_eq!(r.error_code.as_deref(), Some("invalid_params"), "{}: {}", params, text);
            prop_assert!(text.contains(&format!("`{}`", shown(&key))), "the key is named: {}", text);
            for k in known {
                prop_assert!(text.contains(&format!("`{k}`")), "known key {} listed: {}", k, text);
            }
            Ok(())
        });
    }
}

#[test]
fn unknown_keys_in_an_ast_edit_op_are_refused_naming_the_key() {
    let desk = Desk::new();
    let extra = any_string().prop_filter("unknown", |k| !OP_KEYS.contains(&k.as_str()));
    check((valid_ast_edit(), extra, any_json()), |(mut params, key, value)| {
        params["ops"][0][key.as_str()] = value;
        let r = desk.call("ast_edit", params.clone());
        let text = r.text_content();
        prop_assert_eq!(r.error_code.as_deref(), Some("invalid_params"), "{}: {}", params, text);
        prop_assert!(text.contains(&format!("`{}` in `ops[0]`", shown(&key))), "{}", text);
        prop_assert!(text.contains("`pat`, `out`"), "{}", text);
        Ok(())
    });
}

/// A valid call with one field broken: (path of the field, bad value).
fn broken(tool: &'static str) -> BoxedStrategy<(Vec<&'static str>, Value)> {
    match tool {
        "ast_edit" => prop_oneof![
            not_of("array").prop_map(|v| (vec!["ops"], v)),
            Just((vec!["ops"], json!([]))),
            not_of("object").prop_map(|v| (vec!["ops", "0"], v)),
            not_of("string").prop_map(|v| (vec!["ops", "0", "pat"], v)),
            prop::sample::select(vec!["", " ", "\n\t"]).prop_map(|v| (vec!["ops", "0", "pat"], json!(v))),
            not_of("string").prop_map(|v| (vec!["ops", "0", "out"], v)),
            (prop::sample::select(vec!["lang", "path", "glob", "sel"]), not_of("string"))
                .prop_map(|(k, v)| (vec![k], v)),
            not_of("number").prop_map(|v| (vec!["limit"], v)),
            prop_oneof![Just(json!(0)), Just(json!(-1)), Just(json!(1.5)), Just(json!(i64::MIN)), Just(json!(-1e300))]
                .prop_map(|v| (vec!["limit"], v)),
        ]
        .boxed(),
        "batch_rename_preview" => prop_oneof![
            any_json()
                .prop_filter("not a usable files value", |v| match v {
                    Value::String(s) => s.is_empty(),
                    Value::Array(items) =>
                        items.is_empty() || items.iter().any(|i| !matches!(i, Value::String(s) if !s.is_empty())),
                    _ => true,
                })
                .prop_map(|v| (vec!["files"], v)),
            not_of("string").prop_map(|v| (vec!["find"], v)),
            Just((vec!["find"], json!(""))),
            not_of("string").prop_map(|v| (vec!["replace"], v)),
        ]
        .boxed(),
        _ => prop_oneof![
            any_json()
                .prop_filter("not apply or discard", |v| v != &json!("apply") && v != &json!("discard"))
                .prop_map(|v| (vec!["action"], v)),
            not_of("string").prop_map(|v| (vec!["reason"], v)),
            prop::sample::select(vec!["", " ", "\n", "\t\r\n", "\u{a0}\u{2003}"])
                .prop_map(|v| (vec!["reason"], json!(v))),
            not_of("string").prop_map(|v| (vec!["expected_id"], v)),
        ]
        .boxed(),
    }
}

fn set_at(params: &mut Value, path: &[&str], value: Value) {
    let mut slot = params;
    for seg in path {
        slot = match seg.parse::<usize>() {
            Ok(i) => &mut slot[i],
            Err(_) => &mut slot[*seg],
        };
    }
    *slot = value;
}

/// How the field is written in messages: `ops[0].pat`.
fn field_name(path: &[&str]) -> String {
    let mut out = String::new();
    for seg in path {
        if seg.parse::<usize>().is_ok() {
            out.push_str(&format!("[{seg}]"));
        } else {
            if !out.is_empty() {
                out.push('.');
            }
            out.push_str(seg);
        }
    }
    out
}

#[test]
fn a_wrong_value_is_refused_naming_the_field_and_quoting_the_value() {
    let desk = Desk::new();
    for tool in TOOLS {
        check((valid(tool), broken(tool)), |(mut params, (path, bad))| {
            set_at(&mut params, &path, bad.clone());
            let r = desk.call(tool, params.clone());
            let text = r.text_content();
            prop_assert_eq!(r.error_code.as_deref(), Some("invalid_params"), "{}: {}", params, text);
            let mut field = field_name(&path);
            let mut bad = bad;
            // In a list of files, the first entry that is not a path is the offending value.
            if let (true, Some(i), Some(item)) = (
                field == "files",
                bad.as_array()
                    .and_then(|items| items.iter().position(|i| !matches!(i, Value::String(s) if !s.is_empty()))),
                bad.as_array().and_then(|items| items.iter().find(|i| !matches!(i, Value::String(s) if !s.is_empty()))),
            ) {
                field = format!("{field}[{i}]");
                bad = item.clone();
            }
            prop_assert!(text.contains(&field), "the field {} is named: {}", field, text);
            // The value is quoted, except where SPEC §5 fixes the exact message
            // (`limit must be a positive number`, `` `ops` must include at least one op entry ``,
            // `` `ops[<i>].pat` must be a non-empty pattern ``), and for blanks and nulls,
            // which have nothing to show.
            let exact_spec = field == "limit"
                || (field == "ops" && bad == json!([]))
                || (field == "ops[0].pat" && bad.as_str().is_some());
            let blank = bad.is_null() || bad.as_str().is_some_and(|s| s.trim().is_empty() && field == "reason");
            if !exact_spec && !blank {
                prop_assert!(text.contains(&quote(&bad)), "the value {} is quoted: {}", quote(&bad), text);
            }
            Ok(())
        });
    }
}

#[test]
fn a_dropped_required_key_is_refused_naming_it() {
    let desk = Desk::new();
    let cases: [(&str, Vec<Vec<&str>>); 3] = [
        ("ast_edit", vec![vec!["ops"], vec!["ops", "0", "pat"]]),
        ("batch_rename_preview", vec![vec!["files"], vec!["find"], vec!["replace"]]),
        ("resolve", vec![vec!["action"], vec!["reason"]]),
    ];
    for (tool, required) in cases {
        check((valid(tool), prop::sample::select(required)), |(mut params, path)| {
            let (last, parents) = path.split_last().unwrap();
            let mut slot = &mut params;
            for seg in parents {
                slot = match seg.parse::<usize>() {
                    Ok(i) => &mut slot[i],
                    Err(_) => &mut slot[*seg],
                };
            }
            slot.as_object_mut().unwrap().remove(*last);
            let r = desk.call(tool, params.clone());
            let text = r.text_content();
            prop_assert_eq!(r.error_code.as_deref(), Some("invalid_params"), "{}: {}", params, text);
            let field = field_name(&path);
            prop_assert!(text.contains(&format!("`{field}`")), "the missing {} is named: {}", field, text);
            Ok(())
        });
    }
}

#[test]
fn the_check_wants_the_offending_field_not_any_known_key() {
    let empty_ops = json!({"ops": [], "lang": "ts"});
    assert!(names_the_offender("`ops` must include at least one op entry", "ast_edit", &empty_ops).is_ok());
    assert!(
        names_the_offender("`lang` must be a string", "ast_edit", &empty_ops).is_err(),
        "naming another key the caller gave is not enough"
    );
    let bad_limit = json!({"ops": [{"pat": "a($A)", "out": "b"}], "limit": 0});
    assert!(names_the_offender("limit must be a positive number", "ast_edit", &bad_limit).is_ok());
    assert!(
        names_the_offender(
            "Known parameters are `ops`, `lang`, `path`, `glob`, `sel`, `limit`.",
            "ast_edit",
            &bad_limit
        )
        .is_err(),
        "listing every known key is not naming the offender"
    );
    let fine = json!({"files": "*.jpg", "find": "^IMG_", "replace": "/"});
    assert!(
        names_the_offender("The new name of `IMG_1.jpg` would be `/1.jpg`.", "batch_rename_preview", &fine).is_err(),
        "a runtime error must name a field or value the caller gave"
    );
}
