//! The database's layout as numbered migrations, and how a file is brought up to date.

use std::time::Duration;

use rusqlite::Connection;

use crate::JournalError;

/// How long a write (or the opening) waits for another connection that holds the database.
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// The page cache of the journal's connection, in KiB (SQLite's `cache_size`, given negative).
pub const JOURNAL_CACHE_KIB: i64 = 256;

/// The schema, as numbered steps: step `n` takes the database from version `n - 1` to `n`.
/// Never edit a released step; add a new one. Step 1 is the layout of the journal before it
/// had a version, written so that it is a no-op on such a database (which is at version 0).
pub const MIGRATIONS: &[&str] = &[
    // 1: the decisions table.
    "CREATE TABLE IF NOT EXISTS decisions (
        id INTEGER PRIMARY KEY,
        workspace TEXT NOT NULL,
        at_ms INTEGER NOT NULL,
        actor TEXT NOT NULL,
        action TEXT NOT NULL,
        action_id TEXT NOT NULL,
        label TEXT NOT NULL,
        source_tool_name TEXT NOT NULL,
        reason TEXT NOT NULL,
        is_error INTEGER NOT NULL,
        text TEXT NOT NULL
    );
    CREATE INDEX IF NOT EXISTS decisions_by_workspace ON decisions (workspace, at_ms);",
    // 2: who asked (the agent or MCP client of the deciding call).
    "ALTER TABLE decisions ADD COLUMN client TEXT;",
    // 3: pending actions kept across restarts (in push order, with their change sets' bytes),
    // and every push (see `pending`).
    "CREATE TABLE pending_actions (
        seq INTEGER PRIMARY KEY,
        workspace TEXT NOT NULL,
        action_id TEXT NOT NULL,
        label TEXT NOT NULL,
        source_tool_name TEXT NOT NULL,
        details TEXT,
        created_at_ms INTEGER NOT NULL,
        origin TEXT,
        pushed_by TEXT,
        body TEXT NOT NULL,
        applied_text TEXT,
        discard_text TEXT,
        renames TEXT,
        UNIQUE (workspace, action_id)
    );
    CREATE TABLE pending_changes (
        action_seq INTEGER NOT NULL,
        idx INTEGER NOT NULL,
        kind TEXT NOT NULL,
        path TEXT NOT NULL,
        to_path TEXT,
        entry_kind TEXT,
        before BLOB,
        before_hash BLOB,
        after BLOB,
        PRIMARY KEY (action_seq, idx)
    );
    CREATE TABLE pushes (
        id INTEGER PRIMARY KEY,
        workspace TEXT NOT NULL,
        at_ms INTEGER NOT NULL,
        action_id TEXT NOT NULL,
        tool_call TEXT,
        label TEXT NOT NULL,
        source_tool_name TEXT NOT NULL,
        client TEXT,
        files TEXT NOT NULL
    );
    CREATE INDEX pushes_by_workspace ON pushes (workspace, at_ms);",
    // undo: what reverts each applied change set (see `undo`), one row per decision.
    "CREATE TABLE undo (
        id INTEGER PRIMARY KEY,
        workspace TEXT NOT NULL,
        action_id TEXT NOT NULL,
        label TEXT NOT NULL,
        source_tool_name TEXT NOT NULL,
        at_ms INTEGER NOT NULL,
        state TEXT NOT NULL,
        data BLOB,
        size INTEGER NOT NULL,
        note TEXT,
        UNIQUE (workspace, action_id)
    );
    CREATE INDEX undo_by_age ON undo (at_ms, id);",
    // partial apply: what an apply applied and left out (JSON of `PartialApply`), else NULL.
    // (and the single replacements of a pending `ast_edit` edit, so they survive a restart).
    "ALTER TABLE decisions ADD COLUMN partial TEXT;
    ALTER TABLE pending_changes ADD COLUMN replacements BLOB;",
    // deliveries: decisions kept for agents that were not waiting (see `deliveries`).
    "CREATE TABLE deliveries (
        id TEXT NOT NULL,
        workspace TEXT NOT NULL,
        client TEXT NOT NULL,
        action_id TEXT NOT NULL,
        label TEXT NOT NULL,
        result TEXT NOT NULL,
        call_id TEXT NOT NULL,
        decided_at_ms INTEGER NOT NULL,
        PRIMARY KEY (workspace, id)
    );",
    // reviews (issue 27): the comments kept with a pending action (JSON list, in file order),
    // and the review that went with a decision (JSON of `Review`), else NULL.
    "ALTER TABLE pending_actions ADD COLUMN comments TEXT;
    ALTER TABLE decisions ADD COLUMN review TEXT;",
    // review rounds (issue 27): a pending action's round (its earlier comments, the previous
    // round's proposals) and viewed marks (JSON of `ReviewState`), else NULL.
    "ALTER TABLE pending_actions ADD COLUMN review TEXT;",
    // a review's prior round kept across a restart: a preview discarded with Request changes
    // stays in pending_actions (its changes are the previous proposal) with its round (JSON of
    // `StoredRound`) until its agent answers; NULL for every pending action.
    "ALTER TABLE pending_actions ADD COLUMN prior_round TEXT;",
    // an outside agent's gated edit (issue 39): the agent that writes the change itself once
    // the person approves it; NULL for the desk's own changes.
    "ALTER TABLE pending_actions ADD COLUMN written_by TEXT;",
];

/// The schema version this build writes.
pub const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;

/// Brings `conn` to [`SCHEMA_VERSION`] in one transaction; refuses a newer database.
pub(crate) fn migrate(conn: &mut Connection, path: &str) -> Result<(), JournalError> {
    let open_err = |source| JournalError::Open { path: path.to_string(), source };
    // IMMEDIATE: two programs opening an old journal at once migrate it once, one after the other.
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate).map_err(open_err)?;
    let found: i64 = tx.pragma_query_value(None, "user_version", |r| r.get(0)).map_err(open_err)?;
    if found > SCHEMA_VERSION {
        return Err(JournalError::TooNew { path: path.to_string(), found, known: SCHEMA_VERSION });
    }
    for (i, step) in MIGRATIONS.iter().enumerate().skip(found.max(0) as usize) {
        let version = i as i64 + 1;
        let mig_err = |source| JournalError::Migrate { path: path.to_string(), version, source };
        tx.execute_batch(step).map_err(mig_err)?;
        tx.pragma_update(None, "user_version", version).map_err(mig_err)?;
    }
    tx.commit().map_err(open_err)
}
