"""The plain edit previews (write_file, edit_file, apply_patch) through the real `rdesk mcp`,
driven by the official MCP SDK for Python: each writes nothing and pushes one pending action
whose apply writes exactly the preview; partial apply by hunk; clear errors, nothing pushed."""

from __future__ import annotations

import pytest

from desk import EMPTY, REMINDER, client, headless, text_of

pytestmark = pytest.mark.anyio

NOTES = "".join(f"line {i}\n" for i in range(1, 31))


async def resolve(session, action="apply", reason="ok", **more):
    return await session.call_tool("resolve", {"action": action, "reason": reason, **more})


async def test_the_three_previews_are_listed_read_only_with_the_shapes_models_know(workspace):
    async with client(headless(workspace)) as (session, _, _init):
        tools = {t.name: t for t in (await session.list_tools()).tools}
        for name in ("write_file", "edit_file", "apply_patch"):
            assert name in tools, sorted(tools)
            assert tools[name].annotations.read_only_hint is True, name
        assert {"path", "edits"} <= set(tools["edit_file"].input_schema["properties"])
        item = tools["edit_file"].input_schema["properties"]["edits"]["items"]["properties"]
        assert {"oldText", "newText"} <= set(item)
        assert {"path", "content"} <= set(tools["write_file"].input_schema["properties"])
        assert "gate_edit" not in tools and "await_decision" not in tools, "the hooks' tools are never offered"


async def test_edit_file_writes_nothing_until_applied_then_exactly_the_preview(workspace):
    (workspace / "notes.md").write_text("hello world\r\nsecond\r\n")
    async with client(headless(workspace)) as (session, _, _init):
        preview = await session.call_tool("edit_file", {"path": "notes.md", "edits": [{"oldText": "hello world", "newText": "hello desk"}]})
        assert preview.is_error is False, text_of(preview)
        text = text_of(preview)
        assert "Edit: notes.md" in text and "-hello world" in text and "+hello desk" in text, text
        assert text.rstrip().endswith(REMINDER), text
        assert (workspace / "notes.md").read_bytes() == b"hello world\r\nsecond\r\n", "a preview writes nothing"
        applied = await resolve(session)
        assert applied.is_error is False, text_of(applied)
        assert (workspace / "notes.md").read_bytes() == b"hello desk\r\nsecond\r\n", "CRLF kept, exactly the preview"


async def test_write_file_creates_and_a_file_edited_meanwhile_makes_it_stale(workspace):
    async with client(headless(workspace)) as (session, _, _init):
        preview = await session.call_tool("write_file", {"path": "docs/new.md", "content": "# New\n"})
        assert preview.is_error is False, text_of(preview)
        assert "Write: docs/new.md" in text_of(preview)
        assert not (workspace / "docs/new.md").exists()
        assert (await resolve(session)).is_error is False
        assert (workspace / "docs/new.md").read_text() == "# New\n"

        replace = await session.call_tool("write_file", {"path": "a.ts", "content": "export {};\n"})
        assert replace.is_error is False, text_of(replace)
        (workspace / "a.ts").write_text("edited by hand\n")
        stale = await resolve(session)
        assert stale.is_error is True, text_of(stale)
        assert "a.ts" in text_of(stale), text_of(stale)
        assert (workspace / "a.ts").read_text() == "edited by hand\n", "the hand edit is kept"


async def test_a_codex_patch_with_two_hunks_applied_in_part(workspace):
    (workspace / "notes.md").write_text(NOTES)
    patch = (
        "*** Begin Patch\n*** Update File: notes.md\n@@\n-line 2\n+line two\n@@\n-line 25\n+line twenty-five\n"
        "*** Add File: added.txt\n+new file\n*** End Patch\n"
    )
    async with client(headless(workspace)) as (session, _, _init):
        preview = await session.call_tool("apply_patch", {"patch": patch})
        assert preview.is_error is False, text_of(preview)
        assert "Edit: 2 files" in text_of(preview), text_of(preview)
        applied = await resolve(session, leave_out={"hunks": {"notes.md": [2]}})
        assert applied.is_error is False, text_of(applied)
        assert "Left out 1 of 2 hunks in notes.md: hunk 2 (line 25)" in text_of(applied), text_of(applied)
        assert (workspace / "notes.md").read_text() == NOTES.replace("line 2\n", "line two\n", 1)
        assert (workspace / "added.txt").read_text() == "new file\n"


async def test_a_unified_diff_with_a_rename_a_new_and_a_deleted_file(workspace):
    (workspace / "old.txt").write_text("keep\nchange me\n")
    (workspace / "gone.txt").write_text("bye\n")
    diff = (
        "diff --git a/old.txt b/new.txt\nsimilarity index 50%\nrename from old.txt\nrename to new.txt\n"
        "--- a/old.txt\n+++ b/new.txt\n@@ -1,2 +1,2 @@\n keep\n-change me\n+changed\n"
        "diff --git a/gone.txt b/gone.txt\ndeleted file mode 100644\n--- a/gone.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-bye\n"
        "diff --git a/fresh.txt b/fresh.txt\nnew file mode 100644\n--- /dev/null\n+++ b/fresh.txt\n@@ -0,0 +1 @@\n+fresh\n\\ No newline at end of file\n"
    )
    async with client(headless(workspace)) as (session, _, _init):
        preview = await session.call_tool("apply_patch", {"patch": diff})
        assert preview.is_error is False, text_of(preview)
        assert (await resolve(session)).is_error is False
    assert not (workspace / "old.txt").exists() and not (workspace / "gone.txt").exists()
    assert (workspace / "new.txt").read_text() == "keep\nchanged\n"
    assert (workspace / "fresh.txt").read_bytes() == b"fresh"


async def test_errors_name_the_value_and_push_nothing(workspace):
    (workspace / "twice.txt").write_text("x\nx\n")
    outside = workspace.parent / "outside.txt"
    outside.write_text("secret\n")
    (workspace / "link.txt").symlink_to(outside)
    async with client(headless(workspace)) as (session, _, _init):
        cases = [
            ("edit_file", {"path": "a.ts", "edits": [{"oldText": "console.log(3);", "newText": "x"}]}, ["console.log(3);", "was not found in a.ts"]),
            ("edit_file", {"path": "twice.txt", "edits": [{"oldText": "x", "newText": "y"}]}, ["occurs 2 times in twice.txt"]),
            ("write_file", {"path": "../outside.txt", "content": "x"}, ["outside.txt"]),
            ("write_file", {"path": "link.txt", "content": "x"}, ["link.txt"]),
            ("apply_patch", {"patch": "*** Begin Patch\n*** Update File: a.ts\n@@\n-nothing like this\n+x\n*** End Patch\n"}, ["a.ts"]),
        ]
        for tool, args, words in cases:
            r = await session.call_tool(tool, args)
            assert r.is_error is True, (tool, args, text_of(r))
            for w in words:
                assert w in text_of(r), (w, text_of(r))
        empty = await resolve(session)
        assert EMPTY in text_of(empty), "nothing was pushed"
    assert outside.read_text() == "secret\n"
