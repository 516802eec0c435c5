#!/usr/bin/env python3
"""Adds N synthetic decisions for WORKSPACE to the app's real journal (SQLite, WAL), the way
months of use would: tools, outcomes and actors in turn, one minute apart, newest = now.
Row i has the label "Seeded decision i"; row 4242 (when N > 4242) the reason "needle in the
haystack". Usage: seed-journal.py JOURNAL WORKSPACE N
"""
import sqlite3
import sys
import time

journal, workspace, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
conn = sqlite3.connect(journal, timeout=10)
now = int(time.time() * 1000)
tools = ["ast_edit", "batch_rename_preview", "custom_tool"]
rows = []
for i in range(n):
    action, is_error = [("apply", 0), ("discard", 0), ("apply", 1), ("apply", 0)][i % 4]
    rows.append((
        workspace,
        now - (n - i) * 60_000,
        ["person", "agent", "script"][i % 3],
        action,
        f"seed-{i}",
        f"Seeded decision {i}",
        tools[i % 3],
        "needle in the haystack" if i == 4242 else f"reason {i}",
        is_error,
        f"result {i}",
        "claude-code" if i % 3 == 1 else None,
    ))
with conn:
    conn.executemany(
        "INSERT INTO decisions (workspace, at_ms, actor, action, action_id, label, source_tool_name, reason, is_error, text, client)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        rows,
    )
print(f"seed-journal: {n} decisions for {workspace}")
