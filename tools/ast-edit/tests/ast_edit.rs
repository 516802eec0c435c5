//! `ast_edit` driven through a real `resolve_engine::Session` on real temp dirs.
//! One test binary for the crate: add new behaviour tests here.

use std::fs;
use std::path::Path;

use resolve_engine::{Actor, CancellationToken, PendingActionStore, ResolvePolicy, Session, ToolResult, Workspace};
use resolve_tool_ast_edit::{preview, preview_cached, AstEditParams, PreviewCache, RewriteOp, ScanOptions};
use serde_json::{json, Value};

fn write(root: &Path, rel: &str, text: &str) {
    let p = root.join(rel);
    fs::create_dir_all(p.parent().unwrap()).unwrap();
    fs::write(p, text).unwrap();
}

fn read(root: &Path, rel: &str) -> String {
    fs::read_to_string(root.join(rel)).unwrap()
}

fn session(root: &Path) -> Session {
    let s = Session::with_store(root, ResolvePolicy::Agent, PendingActionStore::new()).unwrap();
    s.load(resolve_tool_ast_edit::factory()).unwrap();
    s
}

async fn edit(s: &Session, params: Value) -> ToolResult {
    s.call(Actor::Agent, "ast_edit", params).await
}

async fn apply(s: &Session) -> ToolResult {
    s.call(Actor::Agent, "resolve", json!({"action": "apply", "reason": "looks right"})).await
}

fn op(pat: &str, out: &str) -> Value {
    json!([{"pat": pat, "out": out}])
}

fn tmp() -> tempfile::TempDir {
    tempfile::tempdir().unwrap()
}

#[tokio::test]
async fn validation_errors_use_the_spec_messages() {
    let d = tmp();
    write(d.path(), "a.ts", "foo(1);\n");
    let s = session(d.path());
    let cases = [
        (json!({"ops": []}), "`ops` must include at least one op entry"),
        (json!({"ops": [{"pat": "", "out": "x"}]}), "`ops[0].pat` must be a non-empty pattern"),
        (json!({"ops": [{"pat": "a", "out": "b"}, {"pat": "a", "out": "c"}]}), "Duplicate rewrite pattern: a"),
        (json!({"ops": [{"pat": "a", "out": "b"}], "limit": 0}), "limit must be a positive number"),
        (json!({"ops": [{"pat": "a", "out": "b"}], "limit": -3}), "limit must be a positive number"),
        (json!({"ops": [{"pat": "a", "out": "b"}], "path": "missing/dir"}), "Path not found: missing/dir"),
        (json!({"ops": [{"pat": "a", "out": "b"}], "path": "../x"}), "Path is outside the workspace: ../x"),
    ];
    for (params, want) in cases {
        let r = edit(&s, params.clone()).await;
        assert!(r.is_error, "{params} must fail");
        assert_eq!(r.text_content(), want, "message for {params}");
    }
    let r = edit(&s, json!({"ops": op("a", "b"), "lang": "klingon"})).await;
    assert!(
        r.is_error && r.text_content().starts_with("Unknown language `klingon`. Supported languages:"),
        "{}",
        r.text_content()
    );
    assert!(r.text_content().contains("typescript"), "the error lists the supported languages");
    assert!(!s.store().has_pending(), "no error pushes an action");
}

#[tokio::test]
async fn directory_preview_reports_per_file_counts_and_writes_nothing() {
    let d = tmp();
    write(d.path(), "src/a.ts", "foo(1);\nfoo(2);\n");
    write(d.path(), "src/b.ts", "foo(3);\n");
    write(d.path(), "src/c.ts", "bar(4);\n");
    let s = session(d.path());
    let r = edit(&s, json!({"ops": op("foo($A)", "bar($A)"), "path": "src"})).await;
    assert!(!r.is_error, "{}", r.text_content());
    let text = r.text_content();
    assert!(text.contains("src/a.ts: 2 replacements") && text.contains("src/b.ts: 1 replacement"), "{text}");
    assert!(text.contains("-foo(1);") && text.contains("+bar(1);"), "the text carries unified diffs: {text}");
    assert_eq!(read(d.path(), "src/a.ts"), "foo(1);\nfoo(2);\n", "a preview writes nothing");
    let details = r.details.unwrap();
    assert_eq!(details["files"][0]["path"], "src/a.ts");
    assert_eq!(details["files"][0]["replacements"], 2);
    assert_eq!(details["files"][0]["lang"], "TypeScript");
    assert_eq!((details["files"][0]["added"].as_u64(), details["files"][0]["removed"].as_u64()), (Some(2), Some(2)));
    assert_eq!(details["files"][0]["lines"], 2);
    assert_eq!(details["action_id"], s.store().peek().unwrap().id, "the details name the pushed action");
    let top = s.store().peek().unwrap();
    assert_eq!(top.label, "AST Edit: 3 replacements in 2 files");
    assert_eq!(top.source_tool_name, "ast_edit");
    assert_eq!(top.details.as_ref().unwrap()["files"][1]["path"], "src/b.ts");
    let r = apply(&s).await;
    assert_eq!(r.text_content(), "Applied 3 replacements in 2 files.");
    assert_eq!(read(d.path(), "src/a.ts"), "bar(1);\nbar(2);\n");
}

#[tokio::test]
async fn singular_label_and_apply_text() {
    let d = tmp();
    write(d.path(), "a.ts", "foo(1);\n");
    let s = session(d.path());
    let r = edit(&s, json!({"ops": op("foo($A)", "bar($A)")})).await;
    assert!(!r.is_error, "{}", r.text_content());
    assert_eq!(s.store().peek().unwrap().label, "AST Edit: 1 replacement in 1 file");
    assert_eq!(apply(&s).await.text_content(), "Applied 1 replacement in 1 file.");
}

#[tokio::test]
async fn zero_matches_say_no_replacements_made_and_push_nothing() {
    let d = tmp();
    write(d.path(), "a.ts", "bar(1);\n");
    let s = session(d.path());
    let r = edit(&s, json!({"ops": op("foo($A)", "x")})).await;
    assert!(!r.is_error);
    assert_eq!(r.text_content(), "No replacements made");
    assert!(!s.store().has_pending());
}

#[tokio::test]
async fn glob_and_comma_list_scope_the_files() {
    let d = tmp();
    for f in ["src/a.ts", "src/deep/b.ts", "lib/c.ts", "test/d.ts"] {
        write(d.path(), f, "foo(1);\n");
    }
    let s = session(d.path());
    let r = edit(&s, json!({"ops": op("foo($A)", "bar($A)"), "path": "src", "glob": "*.ts"})).await;
    assert_eq!(
        s.store().peek().unwrap().label,
        "AST Edit: 1 replacement in 1 file",
        "`*` does not cross `/`: {}",
        r.text_content()
    );
    s.call(Actor::Agent, "resolve", json!({"action": "discard", "reason": "next"})).await;
    let r = edit(&s, json!({"ops": op("foo($A)", "bar($A)"), "path": "src", "glob": "**/*.ts"})).await;
    assert!(r.text_content().contains("src/deep/b.ts"), "`**` crosses `/`");
    s.call(Actor::Agent, "resolve", json!({"action": "discard", "reason": "next"})).await;
    let r = edit(&s, json!({"ops": op("foo($A)", "bar($A)"), "path": "lib, test/d.ts"})).await;
    let text = r.text_content();
    assert!(text.contains("lib/c.ts") && text.contains("test/d.ts") && !text.contains("src/a.ts"), "{text}");
    s.call(Actor::Agent, "resolve", json!({"action": "discard", "reason": "next"})).await;
    let r = edit(&s, json!({"ops": op("foo($A)", "bar($A)"), "path": "src/**/*.ts"})).await;
    assert_eq!(s.store().peek().unwrap().label, "AST Edit: 2 replacements in 2 files", "{}", r.text_content());
}

#[tokio::test]
async fn contextual_pattern_with_sel_rewrites_a_class_method() {
    let d = tmp();
    write(d.path(), "a.ts", "class A {\n  run() { return 1; }\n}\nfunction run() { return 2; }\n");
    let s = session(d.path());
    let r = edit(
        &s,
        json!({"ops": op("class $_ { run() { $$$B } }", "execute() { $$$B }"), "sel": "method_definition", "lang": "ts"}),
    )
    .await;
    assert!(!r.is_error, "{}", r.text_content());
    apply(&s).await;
    assert_eq!(read(d.path(), "a.ts"), "class A {\n  execute() { return 1; }\n}\nfunction run() { return 2; }\n");
}

#[tokio::test]
async fn metavariables_single_and_multi_are_substituted() {
    let d = tmp();
    write(d.path(), "a.ts", "console.log(a, b + 1, 'c');\nassertEq(x, y);\n");
    let s = session(d.path());
    let ops = json!([{"pat": "console.log($$$ARGS)", "out": "logger.debug($$$ARGS)"}, {"pat": "assertEq($A, $B)", "out": "expect($A).toBe($B)"}]);
    let r = edit(&s, json!({"ops": ops})).await;
    assert!(!r.is_error, "{}", r.text_content());
    apply(&s).await;
    assert_eq!(read(d.path(), "a.ts"), "logger.debug(a, b + 1, 'c');\nexpect(x).toBe(y);\n");
}

#[tokio::test]
async fn empty_out_deletes_the_match() {
    let d = tmp();
    write(d.path(), "a.ts", "debugger;\nlet x = 1;\n");
    let s = session(d.path());
    edit(&s, json!({"ops": [{"pat": "debugger;", "out": ""}]})).await;
    apply(&s).await;
    assert_eq!(read(d.path(), "a.ts"), "\nlet x = 1;\n");
}

#[tokio::test]
async fn limit_caps_the_replacements_and_says_so() {
    let d = tmp();
    write(d.path(), "a.ts", "foo(1);\nfoo(2);\nfoo(3);\n");
    write(d.path(), "b.ts", "foo(4);\n");
    let s = session(d.path());
    let r = edit(&s, json!({"ops": op("foo($A)", "bar($A)"), "limit": 2})).await;
    assert_eq!(s.store().peek().unwrap().label, "AST Edit: 2 replacements in 1 file");
    assert!(r.text_content().contains("limit"), "the stop is said: {}", r.text_content());
    apply(&s).await;
    assert_eq!(read(d.path(), "a.ts"), "bar(1);\nbar(2);\nfoo(3);\n", "the first matches in path order");
    assert_eq!(read(d.path(), "b.ts"), "foo(4);\n");
}

fn mixed_tree(root: &Path) {
    write(root, "a.ts", "foo(1);\n");
    write(root, "b.tsx", "const x = <div>{foo(2)}</div>;\n");
    write(root, "c.js", "foo(3);\n");
    write(root, "d.py", "foo(4)\n");
    write(root, "README.md", "foo(5)\n");
}

#[tokio::test]
async fn mixed_tree_without_lang_parses_each_file_by_extension() {
    let d = tmp();
    mixed_tree(d.path());
    let s = session(d.path());
    let r = edit(&s, json!({"ops": op("foo($A)", "bar($A)"), "path": "a.ts,b.tsx,c.js,d.py"})).await;
    assert!(!r.is_error, "{}", r.text_content());
    apply(&s).await;
    assert_eq!(read(d.path(), "a.ts"), "bar(1);\n");
    assert_eq!(read(d.path(), "b.tsx"), "const x = <div>{bar(2)}</div>;\n");
    assert_eq!(read(d.path(), "c.js"), "bar(3);\n");
    assert_eq!(read(d.path(), "d.py"), "bar(4)\n");
}

#[tokio::test]
async fn lang_in_a_mixed_tree_skips_other_languages_silently() {
    let d = tmp();
    mixed_tree(d.path());
    let s = session(d.path());
    let r = edit(&s, json!({"ops": op("foo($A)", "bar($A)"), "lang": "PY"})).await;
    let text = r.text_content();
    assert!(!r.is_error, "{text}");
    assert_eq!(s.store().peek().unwrap().label, "AST Edit: 1 replacement in 1 file");
    assert!(!text.contains("a.ts") && !text.contains("Skipped files"), "other languages are not reported: {text}");
}

#[tokio::test]
async fn matches_touching_a_syntax_error_are_skipped_and_reported() {
    let d = tmp();
    write(d.path(), "a.ts", "foo(1);\nfoo(2 +);\n");
    let s = session(d.path());
    let r = edit(&s, json!({"ops": op("foo($A)", "bar($A)")})).await;
    let text = r.text_content();
    assert!(text.contains("Parse issues") && text.contains("a.ts: 1 match skipped at line 2"), "{text}");
    apply(&s).await;
    assert_eq!(read(d.path(), "a.ts"), "bar(1);\nfoo(2 +);\n", "the match outside the error is rewritten");
}

#[tokio::test]
async fn crlf_and_bom_are_preserved() {
    let d = tmp();
    fs::write(d.path().join("a.ts"), b"\xEF\xBB\xBFlet a = 1;\r\nfoo(x);\r\n").unwrap();
    let s = session(d.path());
    edit(&s, json!({"ops": op("foo($A)", "bar(\n  $A,\n)")})).await;
    apply(&s).await;
    assert_eq!(fs::read(d.path().join("a.ts")).unwrap(), b"\xEF\xBB\xBFlet a = 1;\r\nbar(\r\n  x,\r\n);\r\n".to_vec());
}

#[tokio::test]
async fn nested_matches_preview_count_equals_what_apply_writes() {
    let d = tmp();
    write(d.path(), "a.ts", "foo(foo(x));\n");
    let ws = Workspace::open(d.path()).unwrap();
    let params =
        AstEditParams { ops: vec![RewriteOp { pat: "foo($A)".into(), out: "bar($A)".into() }], ..Default::default() };
    let p = preview(&ws, &params, &ScanOptions::default(), &CancellationToken::new(), None).unwrap();
    assert_eq!(p.replacements, 1, "outermost wins");
    assert_eq!(p.nested_skipped, 1);
    assert!(p.summary_text().contains("Skipped 1 match nested"), "{}", p.summary_text());
    let previewed = p.change_set.changes()[0].clone();
    let s = session(d.path());
    edit(&s, json!({"ops": op("foo($A)", "bar($A)")})).await;
    assert_eq!(s.store().peek().unwrap().label, "AST Edit: 1 replacement in 1 file");
    apply(&s).await;
    let written = fs::read(d.path().join("a.ts")).unwrap();
    match previewed {
        resolve_engine::Change::Edit { after, .. } => {
            assert_eq!(&written[..], &after[..], "apply writes the previewed bytes")
        }
        other => panic!("unexpected change {other:?}"),
    }
    assert_eq!(read(d.path(), "a.ts"), "bar(foo(x));\n");
}

#[tokio::test]
async fn apply_refuses_when_file_changed_since_preview() {
    let d = tmp();
    write(d.path(), "a.ts", "foo(1);\n");
    let s = session(d.path());
    edit(&s, json!({"ops": op("foo($A)", "bar($A)")})).await;
    write(d.path(), "a.ts", "foo(1);\nfoo(2);\n");
    let r = apply(&s).await;
    assert!(r.is_error && r.text_content().contains("stale"), "{}", r.text_content());
    assert_eq!(s.store().peek().unwrap().status.as_str(), "stale", "the action stays, marked stale");
    assert_eq!(read(d.path(), "a.ts"), "foo(1);\nfoo(2);\n", "nothing written");
}

#[tokio::test]
async fn second_preview_of_the_same_file_goes_stale_after_the_first_is_applied() {
    let d = tmp();
    write(d.path(), "a.ts", "foo(1);\nbaz(2);\n");
    let s = session(d.path());
    edit(&s, json!({"ops": op("foo($A)", "bar($A)")})).await;
    edit(&s, json!({"ops": op("baz($A)", "qux($A)")})).await;
    assert_eq!(s.store().len(), 2);
    let r = apply(&s).await;
    assert!(!r.is_error, "{}", r.text_content());
    assert_eq!(read(d.path(), "a.ts"), "foo(1);\nqux(2);\n");
    let r = apply(&s).await;
    assert!(r.is_error, "the older preview read other bytes: {}", r.text_content());
    assert_eq!(s.store().peek().unwrap().status.as_str(), "stale");
    assert_eq!(read(d.path(), "a.ts"), "foo(1);\nqux(2);\n");
}

#[tokio::test]
async fn escaping_paths_are_refused() {
    let d = tmp();
    let outside = tmp();
    write(outside.path(), "x.ts", "foo(1);\n");
    write(d.path(), "a.ts", "foo(1);\n");
    std::os::unix::fs::symlink(outside.path(), d.path().join("link")).unwrap();
    let s = session(d.path());
    let abs = outside.path().join("x.ts").display().to_string();
    for path in ["../x.ts", abs.as_str(), "link/x.ts", "link"] {
        let r = edit(&s, json!({"ops": op("foo($A)", "bar($A)"), "path": path})).await;
        assert!(r.is_error, "{path} must be refused");
        assert_eq!(r.text_content(), format!("Path is outside the workspace: {path}"));
    }
    // A walk from the root never follows the link.
    let r = edit(&s, json!({"ops": op("foo($A)", "bar($A)")})).await;
    assert_eq!(s.store().peek().unwrap().label, "AST Edit: 1 replacement in 1 file", "{}", r.text_content());
    apply(&s).await;
    assert_eq!(read(outside.path(), "x.ts"), "foo(1);\n", "the file outside is untouched");
}

#[tokio::test]
async fn gitignored_git_and_node_modules_files_are_untouched() {
    let d = tmp();
    write(d.path(), ".gitignore", "gen/\n");
    write(d.path(), ".ignore", "vendor.ts\n");
    write(d.path(), "vendor.ts", "foo(1);\n");
    write(d.path(), "gen/a.ts", "foo(1);\n");
    write(d.path(), ".git/hooks/x.ts", "foo(1);\n");
    write(d.path(), "node_modules/m/i.ts", "foo(1);\n");
    write(d.path(), "src/a.ts", "foo(1);\n");
    let s = session(d.path());
    let r = edit(&s, json!({"ops": op("foo($A)", "bar($A)")})).await;
    assert_eq!(s.store().peek().unwrap().label, "AST Edit: 1 replacement in 1 file", "{}", r.text_content());
    s.call(Actor::Agent, "resolve", json!({"action": "discard", "reason": "next"})).await;
    let r = edit(&s, json!({"ops": op("foo($A)", "bar($A)"), "glob": "node_modules/**/*.ts"})).await;
    assert!(
        r.text_content().contains("node_modules/m/i.ts"),
        "a glob naming node_modules opens it: {}",
        r.text_content()
    );
}

#[tokio::test]
async fn binary_and_non_utf8_files_are_skipped_and_reported() {
    let d = tmp();
    fs::write(d.path().join("bin.ts"), b"foo(1);\0\0").unwrap();
    fs::write(d.path().join("latin.ts"), b"foo(\xE9);\n").unwrap();
    write(d.path(), "ok.ts", "foo(1);\n");
    let s = session(d.path());
    let r = edit(&s, json!({"ops": op("foo($A)", "bar($A)")})).await;
    let text = r.text_content();
    assert!(text.contains("bin.ts: binary file") && text.contains("latin.ts: not UTF-8"), "{text}");
    assert_eq!(s.store().peek().unwrap().label, "AST Edit: 1 replacement in 1 file");
}

#[tokio::test]
async fn overlapping_ops_earlier_op_wins_and_is_reported() {
    let d = tmp();
    write(d.path(), "a.ts", "foo(x);\n");
    let s = session(d.path());
    let ops = json!([{"pat": "foo($A)", "out": "one($A)"}, {"pat": "$F(x)", "out": "two(x)"}]);
    let r = edit(&s, json!({"ops": ops})).await;
    assert!(r.text_content().contains("overlapping a match of an earlier op"), "{}", r.text_content());
    apply(&s).await;
    assert_eq!(read(d.path(), "a.ts"), "one(x);\n");
}

#[tokio::test]
async fn file_cap_stops_the_scan_and_says_so() {
    let d = tmp();
    for i in 0..5 {
        write(d.path(), &format!("f{i}.ts"), "foo(1);\n");
    }
    let ws = Workspace::open(d.path()).unwrap();
    let params =
        AstEditParams { ops: vec![RewriteOp { pat: "foo($A)".into(), out: "bar($A)".into() }], ..Default::default() };
    let opts = ScanOptions { max_changed_files: 2, threads: Some(1), ..ScanOptions::default() };
    let p = preview(&ws, &params, &opts, &CancellationToken::new(), None).unwrap();
    assert_eq!(p.files.len(), 2);
    assert!(p.summary_text().contains("cap of 2 changed files"), "{}", p.summary_text());
}

#[tokio::test]
async fn cancelled_scan_changes_nothing() {
    let d = tmp();
    write(d.path(), "a.ts", "foo(1);\n");
    let ws = Workspace::open(d.path()).unwrap();
    let params =
        AstEditParams { ops: vec![RewriteOp { pat: "foo($A)".into(), out: "bar($A)".into() }], ..Default::default() };
    let cancel = CancellationToken::new();
    cancel.cancel();
    let e = preview(&ws, &params, &ScanOptions::default(), &cancel, None).unwrap_err();
    assert_eq!(e.code(), "cancelled");
}

#[tokio::test]
async fn json_form_is_compact_with_match_positions() {
    let d = tmp();
    write(d.path(), "a.ts", "let a;\n  foo(1);\n");
    let ws = Workspace::open(d.path()).unwrap();
    let params =
        AstEditParams { ops: vec![RewriteOp { pat: "foo($A)".into(), out: "bar($A)".into() }], ..Default::default() };
    let p = preview(&ws, &params, &ScanOptions::default(), &CancellationToken::new(), None).unwrap();
    let j = p.to_json();
    assert_eq!(j["summary"]["replacements"], 1);
    assert_eq!(j["files"][0]["matches"][0], json!({"line": 2, "column": 2, "op": 0}));
}

#[tokio::test]
async fn a_pattern_that_fails_for_one_language_is_reported_and_the_others_proceed() {
    let d = tmp();
    write(d.path(), "a.ts", "let x = 1;\n");
    write(d.path(), "b.py", "y = 2\n");
    let s = session(d.path());
    let r = edit(&s, json!({"ops": op("let $A = $B;", "const $A = $B;")})).await;
    let text = r.text_content();
    assert!(!r.is_error, "{text}");
    assert!(text.contains("Pattern issues:") && text.contains("for Python"), "the Python failure is reported: {text}");
    apply(&s).await;
    assert_eq!(read(d.path(), "a.ts"), "const x = 1;\n");
}

#[tokio::test]
async fn an_invalid_pattern_for_the_given_lang_is_a_clear_error() {
    let d = tmp();
    write(d.path(), "a.ts", "foo(1);\n");
    let s = session(d.path());
    let r = edit(&s, json!({"ops": op("foo(", "bar("), "lang": "ts"})).await;
    assert!(r.is_error);
    assert!(r.text_content().starts_with("Invalid pattern in `ops[0].pat` for TypeScript"), "{}", r.text_content());
}

#[tokio::test]
async fn progress_reports_files_scanned_out_of_total() {
    let d = tmp();
    for i in 0..3 {
        write(d.path(), &format!("f{i}.ts"), "foo(1);\n");
    }
    let ws = Workspace::open(d.path()).unwrap();
    let params =
        AstEditParams { ops: vec![RewriteOp { pat: "foo($A)".into(), out: "bar($A)".into() }], ..Default::default() };
    let seen = std::sync::Mutex::new(Vec::new());
    let report = |p: resolve_engine::Progress| seen.lock().unwrap().push((p.done, p.total));
    preview(&ws, &params, &ScanOptions::default(), &CancellationToken::new(), Some(&report)).unwrap();
    assert_eq!(seen.lock().unwrap().last(), Some(&(3, Some(3))), "the last report says all files were scanned");
}

#[tokio::test]
async fn huge_files_are_skipped_with_a_note_and_the_size_is_configurable() {
    let d = tmp();
    write(d.path(), "big.ts", &"foo(1);\n".repeat(100));
    write(d.path(), "small.ts", "foo(1);\n");
    let s = Session::with_store(d.path(), ResolvePolicy::Agent, PendingActionStore::new()).unwrap();
    s.load(resolve_tool_ast_edit::factory_with(ScanOptions { max_file_bytes: 100, ..ScanOptions::default() })).unwrap();
    let r = edit(&s, json!({"ops": op("foo($A)", "bar($A)")})).await;
    let text = r.text_content();
    assert!(text.contains("big.ts: too large (800 bytes"), "{text}");
    assert_eq!(s.store().peek().unwrap().label, "AST Edit: 1 replacement in 1 file");
}

#[tokio::test]
async fn a_symlink_loop_named_as_path_is_a_clear_error() {
    let d = tmp();
    std::os::unix::fs::symlink("loop-b", d.path().join("loop-a")).unwrap();
    std::os::unix::fs::symlink("loop-a", d.path().join("loop-b")).unwrap();
    write(d.path(), "a.ts", "foo(1);\n");
    let s = session(d.path());
    let r = edit(&s, json!({"ops": op("foo($A)", "bar($A)"), "path": "loop-a"})).await;
    assert!(r.is_error && r.text_content().contains("Symlink loop"), "{}", r.text_content());
    let r = edit(&s, json!({"ops": op("foo($A)", "bar($A)")})).await;
    assert!(!r.is_error, "a walk skips the loop: {}", r.text_content());
}

// ---- Exact errors (issue 11): SPEC §5 messages win over the schema, unknown keys are named ----

#[tokio::test]
async fn ast_edit_with_empty_params_says_ops_must_include_an_op() {
    let d = tmp();
    write(d.path(), "a.ts", "foo(1);\n");
    let s = session(d.path());
    let r = edit(&s, json!({})).await;
    assert_eq!(r.text_content(), "`ops` must include at least one op entry");
    assert_eq!(r.error_code.as_deref(), Some("invalid_params"));
}

#[tokio::test]
async fn ast_edit_spec_messages_win_over_the_schema() {
    let d = tmp();
    write(d.path(), "a.ts", "foo(1);\n");
    let s = session(d.path());
    let cases = [
        (json!({"ops": [{"out": "x"}]}), "`ops[0].pat` must be a non-empty pattern"),
        (json!({"ops": [{"pat": "a", "out": "b"}, {}]}), "`ops[1].pat` must be a non-empty pattern"),
        (json!({"ops": [{"pat": "a", "out": "b"}], "limit": "3"}), "limit must be a positive number"),
        (json!({"ops": [{"pat": "a", "out": "b"}], "limit": true}), "limit must be a positive number"),
        (json!({"ops": "not a list"}), "`ops` must be an array of {pat, out} entries, got \"not a list\""),
        (json!({"ops": [7]}), "`ops[0]` must be an object {pat, out}, got 7"),
        (json!({"ops": [{"pat": 5}]}), "`ops[0].pat` must be a non-empty pattern, got 5"),
        (json!({"ops": [{"pat": "a", "out": 1}]}), "`ops[0].out` must be a string, got 1"),
        (json!({"ops": [{"pat": "a"}], "lang": ["ts"]}), "`lang` must be a string, got [\"ts\"]"),
    ];
    for (params, want) in cases {
        let r = edit(&s, params.clone()).await;
        assert_eq!(r.text_content(), want, "message for {params}");
        assert_eq!(r.error_code.as_deref(), Some("invalid_params"), "{params}");
    }
    assert!(s.store().list().is_empty());
}

#[tokio::test]
async fn unknown_key_paths_is_refused_naming_it_and_listing_known_keys() {
    let d = tmp();
    write(d.path(), "src/a.ts", "foo(1);\n");
    write(d.path(), "other/b.ts", "foo(2);\n");
    let s = session(d.path());
    let r = edit(&s, json!({"ops": op("foo($A)", "bar($A)"), "paths": "src"})).await;
    assert_eq!(
        r.text_content(),
        "Unknown parameter `paths` for `ast_edit`: known parameters are `ops`, `lang`, `path`, `glob`, `sel`, `limit`. Did you mean `path`?"
    );
    assert_eq!(r.error_code.as_deref(), Some("invalid_params"));
    assert!(s.store().list().is_empty(), "the whole workspace was not scanned and nothing was queued");
}

#[tokio::test]
async fn unknown_key_in_an_op_is_refused_naming_it() {
    let d = tmp();
    write(d.path(), "a.ts", "foo(1);\n");
    let s = session(d.path());
    let r = edit(&s, json!({"ops": [{"pat": "foo($A)", "out": "bar($A)"}, {"pat": "x", "replacement": "y"}]})).await;
    assert_eq!(
        r.text_content(),
        "Unknown key `replacement` in `ops[1]` of `ast_edit`: known keys are `pat`, `out`. Remove it and call again."
    );
    assert!(s.store().list().is_empty());
}

// Partial apply: every edited file knows its replacements, so single ones can be left out.

#[tokio::test]
async fn every_edited_file_knows_its_replacements_and_they_rebuild_the_preview() {
    let d = tmp();
    fs::write(d.path().join("bom.ts"), b"\xEF\xBB\xBFlet a = 1;\r\nfoo(x);\r\nfoo(y);\r\n").unwrap();
    write(d.path(), "b.ts", "foo(1);\nbar();\nfoo(foo(2));\n");
    write(d.path(), "c.ts", "// none here\n");
    let ws = Workspace::open(d.path()).unwrap();
    let params = AstEditParams {
        ops: vec![RewriteOp { pat: "foo($A)".into(), out: "bar(\n  $A,\n)".into() }],
        ..Default::default()
    };
    let p = preview(&ws, &params, &ScanOptions::default(), &CancellationToken::new(), None).unwrap();
    assert_eq!(p.change_set.len(), 2);
    for change in p.change_set.changes() {
        let resolve_engine::Change::Edit { path, before, after, .. } = change else { panic!("an edit") };
        let reps = p.change_set.replacements(path).unwrap_or_else(|| panic!("{path} knows its replacements"));
        let report = p.files.iter().find(|f| &f.path == path).unwrap();
        assert_eq!(reps.len(), report.replacements);
        assert_eq!(reps.rebuild(before, |_| true).unwrap(), after.to_vec(), "{path}: nothing left out = the preview");
        let lines: Vec<u32> = reps.iter().map(|r| r.line).collect();
        let want: Vec<u32> = report.matches.iter().map(|m| m.line as u32).collect();
        assert_eq!(lines, want, "{path}: ids follow the preview's matches, with their lines");
    }
}

#[tokio::test]
async fn leaving_out_one_replacement_writes_the_others_with_bom_and_crlf_kept() {
    let d = tmp();
    fs::write(d.path().join("a.ts"), b"\xEF\xBB\xBFlet a = 1;\r\nfoo(x);\r\nfoo(y);\r\nfoo(z);\r\n").unwrap();
    write(d.path(), "b.ts", "foo(1);\n");
    let s = session(d.path());
    edit(&s, json!({"ops": op("foo($A)", "bar($A)")})).await;
    let r = s
        .call(
            Actor::Agent,
            "resolve",
            json!({"action": "apply", "reason": "not y", "leave_out": {"replacements": {"a.ts": [2]}}}),
        )
        .await;
    assert!(!r.is_error, "{}", r.text_content());
    assert_eq!(r.text_content(), "Applied: AST Edit: 4 replacements in 2 files.\nLeft out 1 of 3 replacements in a.ts");
    assert_eq!(
        fs::read(d.path().join("a.ts")).unwrap(),
        b"\xEF\xBB\xBFlet a = 1;\r\nbar(x);\r\nfoo(y);\r\nbar(z);\r\n".to_vec()
    );
    assert_eq!(read(d.path(), "b.ts"), "bar(1);\n");
}

#[tokio::test]
async fn result_details_carry_per_file_numbers_and_no_diff_text() {
    let d = tmp();
    for i in 0..60 {
        write(d.path(), &format!("src/m{i:02}.ts"), &format!("foo({i});\nkeep();\nfoo({i} + 1);\n"));
    }
    let s = session(d.path());
    let r = edit(&s, json!({"ops": op("foo($A)", "bar($A)"), "path": "src"})).await;
    assert!(!r.is_error, "{}", r.text_content());
    let details = r.details.unwrap();
    let files = details["files"].as_array().unwrap();
    assert_eq!(files.len(), 60, "every file is listed");
    let before = fs::read(d.path().join("src/m00.ts")).unwrap();
    let f = &files[0];
    assert_eq!(f["path"], "src/m00.ts");
    assert_eq!(f["replacements"], 2);
    assert_eq!((f["added"].as_u64(), f["removed"].as_u64(), f["lines"].as_u64()), (Some(2), Some(2), Some(3)));
    assert_eq!(f["before_hash"], resolve_engine::ContentHash::of(&before).to_string(), "the hash of the bytes read");
    for f in files {
        let keys: Vec<&str> = f.as_object().unwrap().keys().map(String::as_str).collect();
        let mut keys = keys;
        keys.sort();
        assert_eq!(keys, ["added", "before_hash", "lang", "lines", "path", "removed", "replacements"]);
    }
    let all = details.to_string();
    assert!(!all.contains("foo(0)") && !all.contains("@@") && !all.contains("hunks"), "no diff text: {all}");
    assert!(details.get("diffs_truncated").is_none());
    let id = s.store().peek().unwrap().id;
    assert_eq!(details["action_id"], id);
    // Every file's diff is still there, in the pending action's change set.
    let api_diff = s.store().peek().unwrap();
    assert_eq!(api_diff.label, "AST Edit: 120 replacements in 60 files");
}

#[tokio::test]
async fn the_text_shows_diffs_up_to_its_budget_and_says_how_many() {
    let d = tmp();
    for i in 0..3 {
        write(d.path(), &format!("m{i}.ts"), &format!("foo({i});\n"));
    }
    let ws = Workspace::open(d.path()).unwrap();
    let params =
        AstEditParams { ops: vec![RewriteOp { pat: "foo($A)".into(), out: "bar($A)".into() }], ..Default::default() };
    let opts = ScanOptions { render_diffs: false, ..ScanOptions::default() };
    let p = preview(&ws, &params, &opts, &CancellationToken::new(), None).unwrap();
    assert!(p.diffs.iter().all(Option::is_none), "nothing rendered while scanning");
    let all = p.text(1_000_000);
    for i in 0..3 {
        assert!(all.contains(&format!("-foo({i});\n+bar({i});")), "rendered from the change set: {all}");
    }
    assert!(!all.contains("file diffs shown"), "{all}");
    let cut = p.text(1);
    assert!(cut.contains("-foo(0);") && !cut.contains("-foo(1);"), "at least one diff, then the budget: {cut}");
    assert!(
        cut.ends_with("(1 of 3 file diffs shown. The pending action holds every file's diff for the person's review; narrow `path` to see another file's diff here.)"),
        "{cut}"
    );
}

// The preview cache (issue 15: warm previews).

/// Everything a preview shows or would write: text, JSON, UI details, and per changed file
/// the bytes read, their hash, the bytes to write and the replacements.
fn fingerprint(p: &resolve_tool_ast_edit::Preview) -> (String, String, String, Vec<String>) {
    let changes = p
        .change_set
        .changes()
        .iter()
        .map(|c| match c {
            resolve_engine::Change::Edit { path, before, before_hash, after } => format!(
                "{path}\n{before_hash:?}\n{}\n=>\n{}\n{:?}",
                String::from_utf8_lossy(before),
                String::from_utf8_lossy(after),
                p.change_set.replacements(path).map(|r| r.to_bytes())
            ),
            other => format!("{other:?}"),
        })
        .collect();
    (p.text(usize::MAX), p.to_json().to_string(), p.details().to_string(), changes)
}

/// A workspace with matches in several files, a file that parses without a match, a
/// parse issue, a BOM + CRLF file, a file no literal can match and a binary file.
fn cache_fixture(root: &Path) {
    write(root, "a.ts", "foo(1);\nfoo(foo(2));\n");
    write(root, "b.ts", "let x = 1;\nfoo(x);\n");
    write(root, "c.ts", "const foo = 1; // no call\n");
    write(root, "d.ts", "foo(1);\nlet = ;\nfunction f( { foo(3) }\n");
    write(root, "e.ts", "\u{feff}let a = 1;\r\nfoo(a);\r\n");
    write(root, "f.ts", "nothing here\n");
    write(root, "sub/g.ts", "if (y) { foo(y); }\n");
    fs::write(root.join("bin.ts"), b"foo(\0)").unwrap();
}

fn foo_params() -> AstEditParams {
    AstEditParams { ops: vec![RewriteOp { pat: "foo($A)".into(), out: "bar($A)".into() }], ..Default::default() }
}

fn run_cached(
    ws: &Workspace,
    params: &AstEditParams,
    opts: &ScanOptions,
    cache: &PreviewCache,
) -> resolve_tool_ast_edit::Preview {
    preview_cached(ws, params, opts, &CancellationToken::new(), None, cache).unwrap()
}

fn run_cold(ws: &Workspace, params: &AstEditParams, opts: &ScanOptions) -> resolve_tool_ast_edit::Preview {
    preview(ws, params, opts, &CancellationToken::new(), None).unwrap()
}

#[test]
fn a_warm_preview_is_byte_identical_to_a_cold_one() {
    let d = tmp();
    cache_fixture(d.path());
    let ws = Workspace::open(d.path()).unwrap();
    let params = foo_params();
    for opts in [
        ScanOptions::default(),
        ScanOptions { threads: Some(1), ..ScanOptions::default() },
        ScanOptions { render_diffs: false, keep_change_set: false, ..ScanOptions::default() },
        ScanOptions { keep_change_set: false, ..ScanOptions::default() },
    ] {
        let cold = fingerprint(&run_cold(&ws, &params, &opts));
        let cache = PreviewCache::new(1 << 20);
        let first = fingerprint(&run_cached(&ws, &params, &opts, &cache));
        let parsed = cache.stats().misses;
        assert!(parsed >= 6, "every file that needs a parse is a miss the first time: {:?}", cache.stats());
        let warm = fingerprint(&run_cached(&ws, &params, &opts, &cache));
        let s = cache.stats();
        assert_eq!((s.hits, s.misses), (parsed, parsed), "the second run is served from the cache: {s:?}");
        assert_eq!(first, cold, "a cold run through the cache equals the run without ({opts:?})");
        assert_eq!(warm, cold, "a warm run equals the cold run ({opts:?})");
    }
}

#[test]
fn a_warm_preview_with_a_limit_is_byte_identical() {
    let d = tmp();
    cache_fixture(d.path());
    let ws = Workspace::open(d.path()).unwrap();
    let params = AstEditParams { limit: Some(3), ..foo_params() };
    let opts = ScanOptions { threads: Some(1), ..ScanOptions::default() };
    let cold = fingerprint(&run_cold(&ws, &params, &opts));
    let cache = PreviewCache::new(1 << 20);
    run_cached(&ws, &params, &opts, &cache);
    let warm = fingerprint(&run_cached(&ws, &params, &opts, &cache));
    assert!(cache.stats().hits > 0, "{:?}", cache.stats());
    assert_eq!(warm, cold, "the file cut by the limit is rendered from the cached edits exactly");
}

#[test]
fn an_edited_file_is_never_served_from_the_cache() {
    let d = tmp();
    cache_fixture(d.path());
    let ws = Workspace::open(d.path()).unwrap();
    let params = foo_params();
    let opts = ScanOptions::default();
    let cache = PreviewCache::new(1 << 20);
    run_cached(&ws, &params, &opts, &cache);
    let before = cache.stats();
    // Same length, same modification second, different content.
    let old = read(d.path(), "b.ts");
    let new = old.replace("foo(x)", "foo(y)");
    assert_eq!(old.len(), new.len());
    write(d.path(), "b.ts", &new);
    let warm = run_cached(&ws, &params, &opts, &cache);
    let after = cache.stats();
    assert_eq!(after.misses - before.misses, 1, "exactly the edited file is parsed again: {after:?}");
    assert_eq!(after.hits - before.hits, before.misses - 1, "every other file is a hit: {after:?}");
    assert_eq!(fingerprint(&warm), fingerprint(&run_cold(&ws, &params, &opts)), "the new content is used");
    let b = warm
        .change_set
        .changes()
        .iter()
        .find_map(|c| match c {
            resolve_engine::Change::Edit { path, before, after, .. } if path == "b.ts" => Some((before, after)),
            _ => None,
        })
        .expect("b.ts changes");
    assert_eq!(&b.0[..], new.as_bytes(), "the change set is pinned to the bytes read now");
    assert_eq!(&b.1[..], b"let x = 1;\nbar(y);\n", "the new bytes come from the new content");
}

#[test]
fn different_ops_sel_lang_or_diff_options_never_share_entries() {
    let d = tmp();
    cache_fixture(d.path());
    // No extension: parsed as the `lang` given when named explicitly.
    write(d.path(), "script", "foo(1);\n");
    let ws = Workspace::open(d.path()).unwrap();
    let base = foo_params();
    let opts = ScanOptions::default();
    let op = |pat: &str, out: &str| vec![RewriteOp { pat: pat.into(), out: out.into() }];
    let script = |lang: &str| AstEditParams { lang: Some(lang.into()), path: Some("script".into()), ..foo_params() };
    let variants: Vec<(AstEditParams, AstEditParams, ScanOptions)> = vec![
        (base.clone(), AstEditParams { ops: op("foo($A)", "baz($A)"), ..base.clone() }, opts.clone()),
        (base.clone(), AstEditParams { ops: op("foo($B)", "bar($B)"), ..base.clone() }, opts.clone()),
        (base.clone(), AstEditParams { sel: Some("call_expression".into()), ..base.clone() }, opts.clone()),
        (script("typescript"), script("javascript"), opts.clone()),
        (base.clone(), base.clone(), ScanOptions { context: 1, ..opts.clone() }),
        (base.clone(), base.clone(), ScanOptions { render_diffs: false, ..opts.clone() }),
    ];
    for (first, params, o) in variants {
        let cache = PreviewCache::new(1 << 20);
        run_cached(&ws, &first, &opts, &cache);
        let before = cache.stats();
        assert!(before.entries > 0, "the first preview fills the cache: {before:?}");
        let p = run_cached(&ws, &params, &o, &cache);
        let s = cache.stats();
        assert_eq!(s.hits, 0, "no file of {params:?} / {o:?} is served from the entries of {first:?}");
        assert!(s.misses > before.misses, "{params:?} / {o:?} parses again: {s:?}");
        assert_eq!(fingerprint(&p), fingerprint(&run_cold(&ws, &params, &o)), "{params:?} / {o:?}");
    }
}

#[test]
fn capacity_zero_disables_the_cache() {
    let d = tmp();
    cache_fixture(d.path());
    let ws = Workspace::open(d.path()).unwrap();
    let cache = PreviewCache::new(0);
    let opts = ScanOptions::default();
    let cold = fingerprint(&run_cold(&ws, &foo_params(), &opts));
    for _ in 0..2 {
        assert_eq!(fingerprint(&run_cached(&ws, &foo_params(), &opts, &cache)), cold);
    }
    assert_eq!(
        cache.stats(),
        resolve_tool_ast_edit::CacheStats { hits: 0, misses: 0, entries: 0, bytes: 0, capacity: 0 },
        "nothing is looked up or kept"
    );
}

#[test]
fn a_small_cache_stays_under_its_bound_and_still_gives_the_same_preview() {
    let d = tmp();
    for i in 0..40 {
        write(d.path(), &format!("f{i:02}.ts"), &format!("foo({i});\n").repeat(20));
    }
    let ws = Workspace::open(d.path()).unwrap();
    let opts = ScanOptions::default();
    let cache = PreviewCache::new(8 * 1024);
    let cold = fingerprint(&run_cold(&ws, &foo_params(), &opts));
    for _ in 0..3 {
        assert_eq!(fingerprint(&run_cached(&ws, &foo_params(), &opts, &cache)), cold);
        let s = cache.stats();
        assert!(s.bytes <= s.capacity, "the estimate {} stays under the bound {}", s.bytes, s.capacity);
        assert!(s.entries > 0 && s.entries < 40, "some entries were evicted: {s:?}");
    }
}

#[tokio::test]
async fn the_tool_keeps_one_cache_per_session_and_reports_its_stats() {
    let d = tmp();
    cache_fixture(d.path());
    let cache = std::sync::Arc::new(PreviewCache::new(1 << 20));
    let s = Session::with_store(d.path(), ResolvePolicy::Agent, PendingActionStore::new()).unwrap();
    s.load(resolve_tool_ast_edit::factory_with_cache(ScanOptions::default(), cache.clone())).unwrap();
    let params = json!({"ops": [{"pat": "foo($A)", "out": "bar($A)"}]});
    let first = edit(&s, params.clone()).await;
    assert!(!first.is_error, "{}", first.text_content());
    let cold = cache.stats();
    assert!(cold.misses > 0 && cold.hits == 0 && cold.entries > 0, "{cold:?}");
    s.call(Actor::Agent, "resolve", json!({"action": "discard", "reason": "again"})).await;
    let second = edit(&s, params).await;
    let warm = cache.stats();
    assert_eq!(warm.hits, cold.misses, "the re-run is served from the session's cache: {warm:?}");
    assert_eq!(second.text_content(), first.text_content(), "same preview text");
    assert_eq!(
        second.details.as_ref().map(|v| v["files"].clone()),
        first.details.as_ref().map(|v| v["files"].clone()),
        "same details"
    );
}

#[tokio::test]
async fn the_pending_action_records_the_call_and_the_client_that_made_it() {
    let d = tmp();
    write(d.path(), "a.ts", "foo(1);\n");
    let s = session(d.path());
    let params = json!({"ops": op("foo($A)", "bar($A)")});
    let ctx = resolve_engine::ToolContext::new("c-7").with_client("claude-code");
    let r = s.call_traced(Actor::Agent, ctx, "ast_edit", params.clone()).await;
    assert!(!r.result.is_error, "{}", r.result.text_content());
    let top = s.store().peek().expect("a pending action");
    assert_eq!(r.pushed, vec![top.id.clone()], "the call's record names the action it pushed");
    let info = s.store().info(&top.id).unwrap();
    assert_eq!(info.origin, Some(resolve_engine::ToolCall { tool: "ast_edit".into(), params }), "for Run again");
    assert_eq!(info.pushed_by.as_deref(), Some("claude-code"));
}
