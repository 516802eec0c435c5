//! Hostile intent records: `.rdesk-apply.log` written by someone other than the desk (a
//! file committed to a cloned repository, a record edited since) must never make recovery
//! touch anything. Every case lays out `base/ws` (the workspace) beside `base/other` (a
//! folder outside it, with sentinel files placed where the record's names point), writes
//! the record, opens the workspace as every program does (`resolve_engine::recover`, then an
//! Apply), and checks that `other` and the workspace are byte for byte as before (the
//! record included: it is not even marked), that the outcome is a refusal naming the
//! record, and that an Apply is refused with a message naming the record and what to do.
//!
//! Cases: every op kind (edit, create, delete, move) × every phase (prepared, staged, parked,
//! committed) × every name of the op made hostile (`..`, absolute, a name the desk does not
//! generate, through a symlinked folder), plus the record itself: owned by another user
//! (root only: reported ignored otherwise), mode 0644 (what git checks out), a symlink, an
//! unknown version, garbage, a torn start that is not the desk's, out-of-order marks.
//!
//! The harness is libtest-mimic's, so each case is its own named test and a case whose
//! condition is not met is reported as ignored, never passed.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use libtest_mimic::{Arguments, Failed, Trial};
use resolve_engine::{ApplyError, ChangeSet, ContentHash, RecoveryOutcome, RefusalReason, Workspace};
use serde_json::{json, Value};

const RECORD: &str = ".rdesk-apply.log";
const TOKEN: &str = "5eed";
const SECRET: &[u8] = b"a secret outside the workspace\n";
const MINE: &[u8] = b"the person's file in the workspace\n";

/// Every entry under `dir` (not following links): path -> bytes, link target or folder.
fn snapshot(dir: &Path) -> Vec<(String, String)> {
    let mut out = Vec::new();
    fn walk(root: &Path, dir: &Path, out: &mut Vec<(String, String)>) {
        let mut entries: Vec<_> = fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
        entries.sort();
        for p in entries {
            let rel = p.strip_prefix(root).unwrap().display().to_string();
            let meta = fs::symlink_metadata(&p).unwrap();
            if meta.file_type().is_symlink() {
                out.push((rel, format!("link -> {}", fs::read_link(&p).unwrap().display())));
            } else if meta.is_dir() {
                out.push((rel.clone(), "dir".into()));
                walk(root, &p, out);
            } else {
                out.push((rel, format!("{:?} mode {:o}", fs::read(&p).unwrap(), meta.permissions().mode())));
            }
        }
    }
    walk(dir, dir, &mut out);
    out
}

fn hash(bytes: &[u8]) -> String {
    ContentHash::of(bytes).to_string()
}

/// A workspace beside a folder of sentinels.
struct Layout {
    _base: tempfile::TempDir,
    ws: PathBuf,
    other: PathBuf,
}

impl Layout {
    fn new() -> Self {
        let base = tempfile::tempdir().unwrap();
        let root = base.path().canonicalize().unwrap();
        let (ws, other) = (root.join("ws"), root.join("other"));
        fs::create_dir_all(ws.join("src")).unwrap();
        fs::create_dir_all(&other).unwrap();
        // Sentinels at every name a hostile record may point to outside.
        for name in ["secret.txt", "planted.txt"] {
            fs::write(other.join(name), SECRET).unwrap();
        }
        for i in 0..2 {
            for suffix in ["tmp", "bak", "mv"] {
                fs::write(other.join(format!(".rdesk-{TOKEN}-{i}.{suffix}")), SECRET).unwrap();
            }
        }
        // The workspace's own files, some at the names a record may wrongly call its own.
        fs::write(ws.join("src/a.txt"), MINE).unwrap();
        fs::write(ws.join("secret.txt"), MINE).unwrap();
        fs::write(ws.join("src/b.txt"), MINE).unwrap();
        std::os::unix::fs::symlink("../other", ws.join("link")).unwrap();
        Self { _base: base, ws, other }
    }

    fn write_record(&self, text: &str, mode: u32) {
        let p = self.ws.join(RECORD);
        fs::write(&p, text).unwrap();
        fs::set_permissions(&p, fs::Permissions::from_mode(mode)).unwrap();
    }
}

/// How a case spoils a record.
#[derive(Clone, Copy, Debug)]
enum Hostile {
    DotDot,
    Absolute,
    NotGenerated,
    SymlinkedFolder,
}

const KINDS: [&str; 4] = ["edit", "create", "delete", "move"];
const PHASES: [&str; 4] = ["prepared", "staged", "parked", "committed"];

/// The names of a valid op of `kind` at index 0 on `src/a.txt`.
fn valid_op(kind: &str) -> Value {
    let g = |dir: &str, suffix: &str| format!("{dir}.rdesk-{TOKEN}-0.{suffix}");
    let (h_secret, h_mine) = (hash(SECRET), hash(MINE));
    match kind {
        "edit" => {
            json!({"op": "edit", "path": "src/a.txt", "tmp": g("src/", "tmp"), "backup": g("src/", "bak"), "before": h_secret, "after": h_mine})
        }
        "create" => json!({"op": "create", "path": "src/new.txt", "tmp": g("src/", "tmp"), "after": h_secret}),
        "delete" => json!({"op": "delete", "path": "src/a.txt", "backup": g("src/", "bak"), "before": h_secret}),
        "move" => {
            json!({"op": "move", "from": "src/a.txt", "to": "src/moved.txt", "parked": g("src/", "mv"), "kind": "file", "before": h_secret})
        }
        other => panic!("unknown kind {other}"),
    }
}

/// The name fields of an op of `kind`.
fn fields(kind: &str) -> &'static [&'static str] {
    match kind {
        "edit" => &["path", "tmp", "backup"],
        "create" => &["path", "tmp"],
        "delete" => &["path", "backup"],
        _ => &["from", "to", "parked"],
    }
}

/// `field` of a valid op of `kind`, spoiled the `hostile` way; every hash is the sentinel's
/// so a careless recovery would find "its" files where the names point.
fn spoil(layout: &Layout, kind: &str, field: &str, hostile: Hostile) -> Value {
    let mut op = valid_op(kind);
    let generated = matches!(field, "tmp" | "backup" | "parked");
    let suffix = match field {
        "tmp" => "tmp",
        "backup" => "bak",
        _ => "mv",
    };
    let outside_name = if generated { format!(".rdesk-{TOKEN}-0.{suffix}") } else { "secret.txt".into() };
    let name = match hostile {
        Hostile::DotDot => format!("../other/{outside_name}"),
        Hostile::Absolute => layout.other.join(&outside_name).display().to_string(),
        // A workspace file the desk did not make, under a name it would use for its own.
        Hostile::NotGenerated => "secret.txt".into(),
        Hostile::SymlinkedFolder => format!("link/{outside_name}"),
    };
    if let Hostile::SymlinkedFolder = hostile {
        // Every name of the op moves under `link/`, generated ones exactly as the desk
        // makes them there: only the folder being a link is wrong.
        for f in fields(kind) {
            let old = op[f].as_str().unwrap().to_string();
            let file = old.rsplit('/').next().unwrap();
            let file = if matches!(*f, "path" | "from") && !generated { "secret.txt" } else { file };
            op[f] = json!(format!("link/{file}"));
        }
    } else {
        op[field] = json!(name);
    }
    for h in ["before", "after"] {
        if op.get(h).is_some() {
            op[h] = json!(hash(SECRET));
        }
    }
    op
}

fn record_text(ops: &[Value], dirs: &[&str], phase: &str, version: u32) -> String {
    let intent = json!({
        "version": version, "pid": 4242, "started_at": "2024-05-01T10:00:00Z",
        "context": {"action_id": "pa-9", "label": "Hostile", "source_tool_name": "ast_edit", "actor": null, "client": null},
        "dirs": dirs, "ops": ops,
    });
    let mut text = format!("{intent}\n");
    for p in PHASES.iter().skip(1).take(PHASES.iter().position(|x| *x == phase).unwrap()) {
        text.push_str(&format!("{{\"phase\":\"{p}\"}}\n"));
    }
    text
}

/// Opens the workspace as a program does, then tries an Apply; checks that nothing changed
/// anywhere and both refusals name the record.
fn assert_refused(layout: &Layout, expect: impl Fn(&RefusalReason) -> bool) -> Result<(), Failed> {
    let outside_before = snapshot(&layout.other);
    let ws_before = snapshot(&layout.ws);
    let record = layout.ws.join(RECORD);
    let ws = Workspace::open(&layout.ws).map_err(|e| format!("the folder opens: {e}"))?;
    let recovery = resolve_engine::recover(&ws).ok_or("a record is there: recovery must say something")?;
    let refusal = match &recovery.outcome {
        RecoveryOutcome::Refused(r) => r,
        other => return Err(format!("refused expected, got {other:?}: {}", recovery.message()).into()),
    };
    if !expect(&refusal.reason) {
        return Err(format!("unexpected reason: {:?}", refusal.reason).into());
    }
    if !recovery.refused() || refusal.record != record {
        return Err(format!("the refusal names the record: {refusal:?}").into());
    }
    let message = recovery.message();
    let shown = record.display().to_string();
    for part in [shown.as_str(), "was refused", "nothing was done", "delete"] {
        if !message.contains(part) {
            return Err(format!("the message says {part:?}: {message}").into());
        }
    }
    // An Apply while it is there is refused too, naming it and what to do.
    let mut cs = ChangeSet::new();
    cs.edit("src/b.txt", MINE.to_vec(), b"changed\n".to_vec());
    match cs.apply(&ws) {
        Err(e @ ApplyError::RecordRefused { .. }) => {
            let text = e.to_string();
            if !text.contains(&record.display().to_string()) || !text.contains("Nothing was written") {
                return Err(format!("the apply error names the record and says nothing was written: {text}").into());
            }
        }
        other => return Err(format!("an apply must be refused while the record is there: {other:?}").into()),
    }
    if snapshot(&layout.other) != outside_before {
        return Err(format!("the folder outside changed: {:?}", snapshot(&layout.other)).into());
    }
    if snapshot(&layout.ws) != ws_before {
        return Err(format!("the workspace changed: {:?}", snapshot(&layout.ws)).into());
    }
    Ok(())
}

fn bad_name(r: &RefusalReason) -> bool {
    matches!(r, RefusalReason::BadName { .. })
}

fn name_case(kind: &'static str, phase: &'static str, field: &'static str, hostile: Hostile) -> Trial {
    let name = format!("{hostile:?}/{kind}/{field}/{phase}").to_lowercase();
    Trial::test(name, move || {
        let layout = Layout::new();
        let op = spoil(&layout, kind, field, hostile);
        layout.write_record(&record_text(&[op], &[], phase, 1), 0o600);
        match hostile {
            Hostile::SymlinkedFolder => {
                assert_refused(&layout, |r| matches!(r, RefusalReason::Folder { folder, .. } if folder == "link"))
            }
            _ => assert_refused(&layout, bad_name),
        }
    })
}

fn valid_record(phase: &str) -> String {
    record_text(&[valid_op("delete")], &[], phase, 1)
}

fn record_cases() -> Vec<Trial> {
    let root = rustix::process::geteuid().is_root();
    let mut trials = vec![
        Trial::test("record/owned_by_another_user", || {
            let layout = Layout::new();
            layout.write_record(&valid_record("parked"), 0o600);
            std::os::unix::fs::chown(layout.ws.join(RECORD), Some(65534), Some(65534)).unwrap();
            assert_refused(&layout, |r| matches!(r, RefusalReason::Owner { owner: 65534, .. }))
        })
        .with_ignored_flag(!root)
        .with_kind(if root { "" } else { "needs root" }),
        Trial::test("record/mode_0644_as_git_checks_it_out", || {
            let layout = Layout::new();
            layout.write_record(&valid_record("committed"), 0o644);
            assert_refused(&layout, |r| matches!(r, RefusalReason::Mode { mode: 0o644 }))
        }),
        Trial::test("record/a_symlink_to_a_record", || {
            let layout = Layout::new();
            fs::write(layout.other.join("real.log"), valid_record("parked")).unwrap();
            fs::set_permissions(layout.other.join("real.log"), fs::Permissions::from_mode(0o600)).unwrap();
            std::os::unix::fs::symlink(layout.other.join("real.log"), layout.ws.join(RECORD)).unwrap();
            assert_refused(&layout, |r| matches!(r, RefusalReason::Symlink))
        }),
        Trial::test("record/a_folder", || {
            let layout = Layout::new();
            fs::create_dir(layout.ws.join(RECORD)).unwrap();
            assert_refused(&layout, |r| matches!(r, RefusalReason::NotAFile | RefusalReason::Unreadable { .. }))
        }),
        Trial::test("record/unknown_version", || {
            let layout = Layout::new();
            layout.write_record(&record_text(&[valid_op("delete")], &[], "parked", 2), 0o600);
            assert_refused(&layout, |r| matches!(r, RefusalReason::UnknownVersion { found: 2, known: 1 }))
        }),
        Trial::test("record/garbage", || {
            let layout = Layout::new();
            layout.write_record("\u{0}\u{1}garbage that is not JSON\n{\"phase\":\"committed\"}\n", 0o600);
            assert_refused(&layout, |r| matches!(r, RefusalReason::NotARecord { .. }))
        }),
        Trial::test("record/torn_but_not_the_desks_start", || {
            let layout = Layout::new();
            layout.write_record("{\"ops\":[{\"op\":\"delete\",\"path\":\"../other/secret.txt\"", 0o600);
            assert_refused(&layout, |r| matches!(r, RefusalReason::NotARecord { .. }))
        }),
        Trial::test("record/a_torn_start_with_mode_0644", || {
            let layout = Layout::new();
            layout.write_record("{\"version\":1,\"pid\"", 0o644);
            assert_refused(&layout, |r| matches!(r, RefusalReason::Mode { .. }))
        }),
        Trial::test("record/marks_out_of_order", || {
            let layout = Layout::new();
            let text = valid_record("prepared") + "{\"phase\":\"committed\"}\n{\"phase\":\"staged\"}\n";
            layout.write_record(&text, 0o600);
            assert_refused(&layout, |r| matches!(r, RefusalReason::NotARecord { .. }))
        }),
        Trial::test("record/a_line_that_is_not_a_mark", || {
            let layout = Layout::new();
            let text = valid_record("staged") + "{\"unlink\":\"../other/secret.txt\"}\n";
            layout.write_record(&text, 0o600);
            assert_refused(&layout, |r| matches!(r, RefusalReason::NotARecord { .. }))
        }),
        Trial::test("record/two_tokens", || {
            let layout = Layout::new();
            let mut second = valid_op("edit");
            second["path"] = json!("src/b.txt");
            second["tmp"] = json!("src/.rdesk-beef-1.tmp");
            second["backup"] = json!("src/.rdesk-beef-1.bak");
            layout.write_record(&record_text(&[valid_op("delete"), second], &[], "parked", 1), 0o600);
            assert_refused(&layout, bad_name)
        }),
        Trial::test("record/a_name_with_the_wrong_index", || {
            let layout = Layout::new();
            let mut op = valid_op("delete");
            op["backup"] = json!(format!("src/.rdesk-{TOKEN}-1.bak"));
            layout.write_record(&record_text(&[op], &[], "committed", 1), 0o600);
            assert_refused(&layout, bad_name)
        }),
        Trial::test("record/a_backup_in_another_folder_than_its_file", || {
            let layout = Layout::new();
            let mut op = valid_op("delete");
            op["backup"] = json!(format!(".rdesk-{TOKEN}-0.bak"));
            layout.write_record(&record_text(&[op], &[], "committed", 1), 0o600);
            assert_refused(&layout, bad_name)
        }),
        Trial::test("record/a_folder_that_is_not_one_of_its_files", || {
            let layout = Layout::new();
            layout.write_record(&record_text(&[valid_op("create")], &["src", "link"], "prepared", 1), 0o600);
            assert_refused(&layout, bad_name)
        }),
        Trial::test("record/the_record_itself_as_a_target", || {
            let layout = Layout::new();
            let op = json!({"op": "delete", "path": RECORD, "backup": format!(".rdesk-{TOKEN}-0.bak"), "before": hash(SECRET)});
            layout.write_record(&record_text(&[op], &[], "parked", 1), 0o600);
            assert_refused(&layout, bad_name)
        }),
        Trial::test("record/a_file_changed_twice", || {
            let layout = Layout::new();
            let mut second = valid_op("edit");
            second["tmp"] = json!(format!("src/.rdesk-{TOKEN}-1.tmp"));
            second["backup"] = json!(format!("src/.rdesk-{TOKEN}-1.bak"));
            layout.write_record(&record_text(&[valid_op("delete"), second], &[], "parked", 1), 0o600);
            assert_refused(&layout, bad_name)
        }),
        Trial::test("record/a_hash_that_is_not_one", || {
            let layout = Layout::new();
            let mut op = valid_op("delete");
            op["before"] = json!("../../etc");
            layout.write_record(&record_text(&[op], &[], "parked", 1), 0o600);
            assert_refused(&layout, bad_name)
        }),
    ];
    // A record too large to be one: refused before it is read.
    trials.push(Trial::test("record/too_large", || {
        let layout = Layout::new();
        let p = layout.ws.join(RECORD);
        let f = fs::File::create(&p).unwrap();
        f.set_len(resolve_engine::changeset::MAX_RECORD_BYTES + 1).unwrap();
        fs::set_permissions(&p, fs::Permissions::from_mode(0o600)).unwrap();
        assert_refused(&layout, |r| matches!(r, RefusalReason::TooLarge { .. }))
    }));
    trials
}

/// The issue's two reproductions, exactly.
fn issue_cases() -> Vec<Trial> {
    vec![
        Trial::test("issue/committed_backup_named_dot_dot_other_secret_is_not_deleted", || {
            let layout = Layout::new();
            let op = json!({"op": "edit", "path": "src/a.txt", "tmp": "src/x.tmp", "backup": "../other/secret.txt", "before": hash(SECRET), "after": hash(MINE)});
            layout.write_record(&record_text(&[op], &[], "committed", 1), 0o600);
            assert_refused(&layout, bad_name)?;
            if fs::read(layout.other.join("secret.txt")).unwrap() != SECRET {
                return Err("../other/secret.txt must still be there".into());
            }
            Ok(())
        }),
        Trial::test("issue/parked_delete_of_dot_dot_other_planted_moves_nothing_out", || {
            let layout = Layout::new();
            fs::remove_file(layout.other.join("planted.txt")).unwrap();
            let op =
                json!({"op": "delete", "path": "../other/planted.txt", "backup": "src/a.txt", "before": hash(MINE)});
            layout.write_record(&record_text(&[op], &[], "parked", 1), 0o600);
            assert_refused(&layout, bad_name)?;
            if layout.other.join("planted.txt").exists() || fs::read(layout.ws.join("src/a.txt")).unwrap() != MINE {
                return Err("the workspace file must stay where it is".into());
            }
            Ok(())
        }),
    ]
}

fn main() {
    let args = Arguments::from_args();
    let mut trials = Vec::new();
    for hostile in [Hostile::DotDot, Hostile::Absolute, Hostile::NotGenerated, Hostile::SymlinkedFolder] {
        for kind in KINDS {
            for field in fields(kind) {
                if matches!(hostile, Hostile::SymlinkedFolder) && *field != fields(kind)[0] {
                    continue; // the whole op is under the link: one case per kind and phase
                }
                if matches!(hostile, Hostile::NotGenerated) && matches!(*field, "path" | "from" | "to") {
                    continue; // a target may be any workspace file; only generated names are checked
                }
                for phase in PHASES {
                    trials.push(name_case(kind, phase, field, hostile));
                }
            }
        }
    }
    trials.extend(record_cases());
    trials.extend(issue_cases());
    libtest_mimic::run(&args, trials).exit();
}
