//! IPC contract tests: every committed JSON fixture in `fixtures/` must
//! deserialize into its wire type and serialize back to the same JSON.
//!
//! The UI's vitest suite (`ui/src/ipc/contract.test.ts`) reads the same files,
//! so a change on either side that breaks the other fails here or there.
//! A new fixture goes in `FIXTURES` below (the last test refuses strays).

use std::path::{Path, PathBuf};

use resolve_protocol::*;
use serde::de::DeserializeOwned;
use serde::Serialize;

fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures")
}

fn round_trip<T: DeserializeOwned + Serialize>(name: &str) -> T {
    let path = fixtures_dir().join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("read fixture {}: {e}", path.display()));
    let original: serde_json::Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{name} is not JSON: {e}"));
    let typed: T = serde_json::from_value(original.clone())
        .unwrap_or_else(|e| panic!("{name} does not match {}: {e}", std::any::type_name::<T>()));
    let again = serde_json::to_value(&typed).expect("serialize back");
    assert_eq!(
        again,
        original,
        "{name} must serialize back identically as {} (a field renamed, dropped or added?)",
        std::any::type_name::<T>()
    );
    typed
}

const FIXTURES: &[&str] = &[
    "folder_list.json",
    "inbox.json",
    "session_info.json",
    "resolve_outcome_review.json",
    "queue_snapshot.json",
    "queue_changed.json",
    "file_entries.json",
    "file_diff.json",
    "file_diff_binary.json",
    "file_texts.json",
    "rename_rows.json",
    "resolve_outcome.json",
    "resolve_outcome_stale.json",
    "history.json",
    "tools.json",
    "tool_run_outcome.json",
    "tool_progress.json",
    "script_steps.json",
    "ipc_error.json",
    "agent_updates.json",
    "conversation_view.json",
    "agent_settings.json",
    "new_conversation_outcome.json",
    "queue_snapshot_restored.json",
    "since_preview.json",
    "file_replacements.json",
    "queue_snapshot_hidden.json",
    "file_entries_hidden.json",
    "file_diff_hidden.json",
    "file_texts_hidden.json",
    "rename_rows_hidden.json",
];

/// The UTF-16 slice `[start, end)` of `text`, as the UI reads it.
fn utf16_slice(text: &str, h: &HiddenChar) -> String {
    let units: Vec<u16> = text.encode_utf16().collect();
    String::from_utf16(&units[h.start as usize..h.end as usize]).expect("a range on character boundaries")
}

#[test]
fn hidden_character_fixtures_round_trip_and_their_ranges_point_at_the_characters() {
    // Written by the shell's test from examples/hidden-unicode (a Trojan Source edit and a
    // look-alike rename), so these are what the shell really serves.
    let diff: FileDiff = round_trip("file_diff_hidden.json");
    let mut seen = 0;
    for line in diff.hunks.iter().flat_map(|h| &h.lines) {
        for h in &line.hidden {
            let ch = utf16_slice(&line.text, h);
            assert_eq!(ch.chars().count(), 1, "one character per finding");
            assert_eq!(ch.chars().next().map(|c| c as u32), Some(h.code_point), "{h:?} points at its character");
            assert!(h.name.starts_with(&format!("U+{:04X} ", h.code_point)), "{h:?}");
            assert_eq!(h.marker, format!("⟨U+{:04X}⟩", h.code_point));
            seen += 1;
        }
    }
    assert!(seen >= 4, "the Trojan Source line's bidi controls are in the diff");
    assert!(diff.hunks.iter().flat_map(|h| &h.lines).any(|l| l.hidden.iter().any(|h| h.kind == HiddenKind::Bidi)));
    let texts: FileTexts = round_trip("file_texts_hidden.json");
    let new = texts.new.as_deref().expect("the new side");
    for l in &texts.new_hidden {
        let line = new.split('\n').nth(l.line as usize - 1).expect("the line exists");
        assert!(l.chars.iter().all(|h| utf16_slice(line, h).chars().next().map(|c| c as u32) == Some(h.code_point)));
    }
    assert!(!texts.new_hidden.is_empty() && texts.old_hidden.is_empty(), "only the new side has them");
    let files: Vec<FileEntry> = round_trip("file_entries_hidden.json");
    assert!(files.iter().all(|f| f.hidden_count.is_some() && f.hidden_note.is_some()), "both files are marked");
    let renames: Vec<RenameRow> = round_trip("rename_rows_hidden.json");
    for r in &renames {
        assert!(r.from_hidden.is_empty(), "old names are clean");
        let h = r.to_hidden.first().expect("the new name's look-alike");
        assert_eq!((h.kind, utf16_slice(&r.to, h)), (HiddenKind::Confusable, "\u{435}".to_string()));
    }
    let q: QueueSnapshot = round_trip("queue_snapshot_hidden.json");
    assert!(q.actions.iter().all(|a| a.hidden_warning.is_some()), "both cards warn");
}

#[test]
fn restored_queue_fixture_round_trips_with_an_orphaned_top() {
    let q: QueueSnapshot = round_trip("queue_snapshot_restored.json");
    match &q.actions[0].status {
        ActionStatus::Orphaned { message } => assert!(message.starts_with("Orphaned: can only be discarded")),
        other => panic!("the top action of the restored queue is orphaned, got {other:?}"),
    }
    assert_eq!(q.actions[1].status, ActionStatus::Pending, "a restored change set is pending again");
}

#[test]
fn session_info_fixture_round_trips() {
    let s: SessionInfo = round_trip("session_info.json");
    assert_eq!(s.policy, Policy::Human);
}

#[test]
fn queue_snapshot_fixture_round_trips_top_first() {
    let q: QueueSnapshot = round_trip("queue_snapshot.json");
    assert!(q.actions[0].is_top, "the first action is the top of the stack");
    assert!(q.actions[1..].iter().all(|a| !a.is_top), "only one action is on top");
    assert!(matches!(q.actions[1].status, ActionStatus::Stale { .. }));
    assert!(matches!(q.actions[2].status, ActionStatus::Failed { .. }));
    assert_eq!(q.actions[2].origin, None, "origin null stays null");
    let proposal = q.actions[0].proposal.as_ref().expect("the top action carries the agent's proposal");
    assert_eq!(proposal.choice, ResolveChoice::Apply);
    assert!(q.actions[1..].iter().all(|a| a.proposal.is_none()), "only the top action can have a proposal");
    for a in &q.actions {
        let joined = match &a.badge {
            Some(badge) => format!("{badge}: {}", a.summary),
            None => a.summary.clone(),
        };
        assert_eq!(joined, a.label, "badge and summary are the label split once");
    }
    assert!(q.actions.iter().any(|a| a.badge.is_none()), "a label without `Source: ` has no badge");
}

#[test]
fn event_payload_fixtures_round_trip() {
    let _: QueueChanged = round_trip("queue_changed.json");
    let p: ToolProgress = round_trip("tool_progress.json");
    assert_eq!(p.total, Some(480));
}

#[test]
fn diff_fixtures_round_trip() {
    let files: Vec<FileEntry> = round_trip("file_entries.json");
    assert!(files.iter().any(|f| f.change == FileChange::Renamed && f.old_path.is_some()));
    let diff: FileDiff = round_trip("file_diff.json");
    let removed = &diff.hunks[0].lines[2];
    assert_eq!(removed.kind, DiffLineKind::Removed);
    assert_eq!(removed.new_no, None, "removed lines have no new line number");
    assert_eq!(&removed.text[2..13], "console.log", "emphasis range points at the changed word");
    let binary: FileDiff = round_trip("file_diff_binary.json");
    assert!(binary.summary.is_some() && binary.hunks.is_empty(), "binary files carry a summary, not hunks");
    let png = files.iter().find(|f| f.binary).expect("a binary entry");
    assert!(png.old_hash.is_some() && png.new_size.is_some(), "binary files are listed with sizes and hashes");
    let texts: FileTexts = round_trip("file_texts.json");
    assert!(texts.old.as_deref().is_some_and(|t| t.contains("Multi-line")), "texts carry whole files");
    let renames: Vec<RenameRow> = round_trip("rename_rows.json");
    assert!(renames.iter().any(|r| r.status == RenameStatus::DirectorySkipped));
}

#[test]
fn resolve_and_history_fixtures_round_trip() {
    let ok: ResolveOutcome = round_trip("resolve_outcome.json");
    assert!(!ok.is_error && ok.status.is_none());
    let stale: ResolveOutcome = round_trip("resolve_outcome_stale.json");
    assert!(stale.is_error);
    assert!(matches!(stale.status, Some(ActionStatus::Stale { .. })), "a stale apply reports the new status");
    let history: Vec<HistoryEntry> = round_trip("history.json");
    assert!(history.windows(2).all(|w| w[0].at_ms >= w[1].at_ms), "history is newest first");
    assert_eq!(history[0].decided_by, Actor::Person);
    assert!(history[0].proposal.is_some(), "a person's decision after an agent asked keeps the proposal");
    assert_eq!(history[1].decided_by, Actor::Agent);
}

#[test]
fn agent_fixtures_round_trip() {
    let updates: Vec<AgentUpdate> = round_trip("agent_updates.json");
    let kinds: Vec<String> = updates
        .iter()
        .map(|u| serde_json::to_value(&u.event).expect("serialize")["kind"].as_str().unwrap_or_default().to_string())
        .collect();
    for kind in [
        "prompt",
        "textDelta",
        "retrying",
        "assistantMessage",
        "toolCallStarted",
        "waitingForPerson",
        "toolResult",
        "error",
        "turnDone",
    ] {
        assert!(
            kinds.iter().any(|k| k == kind),
            "agent_updates.json must show a {kind} event (the UI tests render each)"
        );
    }
    for turn in [1, 2] {
        let last = updates.iter().rev().find(|u| u.turn == turn).expect("every turn has events");
        assert!(matches!(last.event, AgentEvent::TurnDone { .. }), "turnDone is the last event of turn {turn}");
    }
    let view: ConversationView = round_trip("conversation_view.json");
    assert_eq!(view.running_turn, Some(3));
    let settings: AgentSettings = round_trip("agent_settings.json");
    assert!(!settings.api_key_is_set);
    assert_eq!(settings.api_key_source, resolve_protocol::ApiKeySource::Keyring, "a key typed into the dialog");
    let out: NewConversationOutcome = round_trip("new_conversation_outcome.json");
    assert_eq!(out.discarded.len(), 2);
}

#[test]
fn tool_fixtures_round_trip() {
    let tools: Vec<ToolInfo> = round_trip("tools.json");
    assert!(tools.iter().any(|t| t.name == "resolve" && t.hidden), "resolve is hidden");
    let _: ToolRunOutcome = round_trip("tool_run_outcome.json");
    let steps: Vec<ScriptStep> = round_trip("script_steps.json");
    assert!(steps.iter().any(|s| s.line != s.step), "a step's line is its place in the script, not its count");
    let err: IpcError = round_trip("ipc_error.json");
    assert_eq!(err.code, IpcErrorCode::IdMismatch);
}

#[test]
fn since_preview_fixture_round_trips() {
    let s: SincePreview = round_trip("since_preview.json");
    assert_eq!(s.why.as_deref(), Some("content changed"));
    assert_eq!(s.diff.path, s.path, "the diff is of the stale file itself");
}

#[test]
fn file_replacements_fixture_round_trips_and_history_says_a_partial_apply() {
    let r: FileReplacements = round_trip("file_replacements.json");
    assert_eq!(r.replacements.iter().map(|x| x.id).collect::<Vec<_>>(), vec![1, 2], "ids are 1-based, in order");
    assert!(r.note.is_none());
    let h: Vec<HistoryEntry> = round_trip("history.json");
    assert_eq!(h[0].partial_text.as_deref(), Some("applied 1 of 2 files"));
    let leave_out: LeaveOut =
        serde_json::from_value(serde_json::json!({"files": ["a.ts"], "replacements": {"src/x.ts": [3]}})).unwrap();
    assert_eq!(leave_out.replacements["src/x.ts"], vec![3]);
    let empty: LeaveOut = serde_json::from_value(serde_json::json!({})).unwrap();
    assert_eq!(empty, LeaveOut::default(), "absent lists are empty: a full apply");
}

#[test]
fn folder_list_and_inbox_fixtures_round_trip() {
    let list: FolderList = round_trip("folder_list.json");
    assert_eq!(list.folders.iter().filter(|f| f.active).count(), 1, "one folder is shown");
    assert_eq!(list.active, list.folders[0].root);
    let inbox: Vec<InboxItem> = round_trip("inbox.json");
    assert!(inbox[0].action.is_top && inbox[0].position == 1, "the top of a folder is position 1");
    assert!(inbox.iter().skip(1).all(|i| !i.action.is_top && i.position > 1));
}

#[test]
fn a_request_changes_outcome_carries_its_comments_in_file_order() {
    let o: ResolveOutcome = round_trip("resolve_outcome_review.json");
    let details = o.details.expect("details");
    assert_eq!(details.action, ResolveChoice::RequestChanges);
    let review = details.review.expect("the review");
    assert!(review.request_changes);
    let lines: Vec<&str> = review.comments.iter().map(|c| c.rendered.as_str()).collect();
    assert!(o.text.ends_with(&lines.join("\n")), "the text ends with each comment's line, in order");
    assert_eq!(review.comments[1].side, CommentSide::Old);
    assert_eq!(review.comments[0].replacement_id, Some(2));
}

#[test]
fn every_fixture_file_is_checked() {
    let mut on_disk: Vec<String> = std::fs::read_dir(fixtures_dir())
        .expect("list fixtures")
        .map(|e| e.expect("dir entry").file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".json"))
        .collect();
    on_disk.sort();
    let mut listed: Vec<String> = FIXTURES.iter().map(|s| s.to_string()).collect();
    listed.sort();
    assert_eq!(on_disk, listed, "every fixture must be listed in FIXTURES and round-tripped by a test");
}
