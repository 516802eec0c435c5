"""Waiting for the person with real clients (issue 29): `resolve` is listed from the first
`tools/list`; a `resolve` waits at most its bound (`rdesk mcp --resolve-wait`), then says the
person has not decided yet; a decision made while no call of the agent waits is kept for it and
given once — to its next `resolve`, or at the start of its next call of another tool — even
across a restart of the desk. Every client here is the official Python SDK through `rdesk mcp`
joined to a stand-in window (`rdesk serve-socket`, the window's socket without the window).

The waits are short (1-2 s) so the suite stays fast; the order is the one of real life: the
bound is below the client's time-out, and the person decides after the bound. Nothing here
sleeps: each step waits for a condition (a call's answer, a proposal on the card).
"""

from __future__ import annotations

import anyio
import pytest
import mcp_types as types
from mcp import MCPError

from desk import EDIT, EDITED, EMPTY, RENAME, REMINDER, SOURCE, client, joined, text_of

pytestmark = pytest.mark.anyio

NOT_YET = "The person has not decided yet"
PREFACE = "Decisions made on your earlier previews while you were not waiting:"


async def test_a_client_that_reads_the_tool_list_once_pushes_resolves_and_learns_the_decision(
    workspace, human_desk
):
    async with client(joined(workspace, "--resolve-wait", "1"), "once", human_desk.env) as (session, notes, _):
        # The only tools/list this client ever sends, on an empty desk.
        tools = {t.name: t for t in (await session.list_tools()).tools}
        assert "resolve" in tools, "listed whatever the stack holds"
        description = tools["resolve"].description
        assert "waits up to 1 s" in description, description
        assert EMPTY in description, description

        pushed = await session.call_tool("ast_edit", EDIT)
        assert text_of(pushed).rstrip().endswith(REMINDER)
        action_id = pushed.structured_content["action_id"]

        # The desk's own bound is 45 s: this answer after 1 s is `rdesk mcp --resolve-wait 1`
        # carried through the socket.
        with anyio.fail_after(30):
            first = await session.call_tool("resolve", {"action": "apply", "reason": "tests pass"})
        assert first.is_error is False, text_of(first)
        assert text_of(first).startswith(f"{NOT_YET} in 1 s on {action_id} (\"AST Edit: 2 replacements in 1 file\")")
        assert "nothing was written" in text_of(first) and "Call `resolve` again" in text_of(first), text_of(first)
        assert first.structured_content == {
            "waiting": True, "action_id": action_id, "label": "AST Edit: 2 replacements in 1 file"
        }
        assert (workspace / "a.ts").read_text() == SOURCE

        # The proposal stays on the card, shown as no longer waiting; the person applies.
        proposal = await human_desk.proposal(waiting=False)
        assert (proposal["choice"], proposal["reason"], proposal["client"]) == ("apply", "tests pass", "once")
        await human_desk.decide("apply", "looks right")

        second = await session.call_tool("resolve", {"action": "apply", "reason": "tests pass"})
        assert second.is_error is False, text_of(second)
        assert text_of(second).endswith("Decided by the person: applied. Reason: looks right"), text_of(second)
        assert second.structured_content["decided_by"] == "person"
        assert second.structured_content["action_id"] == action_id
        assert (workspace / "a.ts").read_text() == EDITED

        # Delivered once: the next `resolve` finds nothing.
        third = await session.call_tool("resolve", {"action": "apply", "reason": "again"})
        assert third.is_error is True and text_of(third) == EMPTY
        await session.send_ping()
        assert notes.count(types.ToolListChangedNotification) == 0, "the list never changed"


async def test_a_client_with_a_short_read_time_out_gets_an_answer_before_it(workspace, human_desk):
    """The SDK's per-session read time-out (here 5 s) is above the bound (1 s): the wait ends
    first with a normal answer, never a time-out error."""
    args = joined(workspace, "--resolve-wait", "1")
    async with client(args, "short", human_desk.env, read_timeout_seconds=5) as (session, _, _):
        await session.call_tool("ast_edit", EDIT)
        for _ in range(2):
            waited = await session.call_tool("resolve", {"action": "discard", "reason": "unsure"})
            assert waited.is_error is False and text_of(waited).startswith(NOT_YET), text_of(waited)
        await human_desk.proposal(waiting=False)
        await human_desk.decide("discard", "not this way")
        decided = await session.call_tool("resolve", {"action": "discard", "reason": "unsure"})
        assert text_of(decided).endswith("Decided by the person: discarded. Reason: not this way"), text_of(decided)
        assert (workspace / "a.ts").read_text() == SOURCE


async def test_a_decision_after_the_clients_time_out_reaches_its_next_resolve(workspace, human_desk):
    """A client whose time-out (1 s) is below the bound (60 s) gives up on its call: the SDK
    cancels it, the proposal stays, and the person's later decision is kept for the agent."""
    args = joined(workspace, "--resolve-wait", "60")
    async with client(args, "impatient", human_desk.env) as (session, _, _):
        await session.call_tool("ast_edit", EDIT)
        with pytest.raises(MCPError, match="timed out"):
            await session.call_tool("resolve", {"action": "apply", "reason": "go"}, read_timeout_seconds=1)
        # The desk saw the cancel: nobody waits on the card any more.
        proposal = await human_desk.proposal(waiting=False)
        assert proposal["client"] == "impatient"
        await human_desk.decide("apply", "checked by hand")
        later = await session.call_tool("resolve", {"action": "apply", "reason": "go"})
        assert text_of(later).endswith("Decided by the person: applied. Reason: checked by hand"), text_of(later)
        assert (workspace / "a.ts").read_text() == EDITED


async def test_a_decision_made_while_no_call_waits_goes_to_the_next_resolve_on_an_empty_stack(workspace, human_desk):
    async with client(joined(workspace, "--resolve-wait", "1"), "agent-a", human_desk.env) as (session, _, _):
        pushed = await session.call_tool("ast_edit", EDIT)
        # The agent never called `resolve`; the person decides on their own.
        await human_desk.decide("discard", "wrong logger")
        kept = await session.call_tool("resolve", {"action": "apply", "reason": "please"})
        assert kept.is_error is False, text_of(kept)
        assert text_of(kept) == (
            "Discarded: AST Edit: 2 replacements in 1 file. Reason: wrong logger\n"
            "Decided by the person: discarded. Reason: wrong logger"
        )
        assert kept.structured_content["action_id"] == pushed.structured_content["action_id"]
        assert kept.structured_content["decided_by"] == "person"
        again = await session.call_tool("resolve", {"action": "apply", "reason": "please"})
        assert again.is_error is True and text_of(again) == EMPTY, "delivered exactly once"
        assert (workspace / "a.ts").read_text() == SOURCE


async def test_a_decision_made_while_no_call_waits_opens_the_next_call_of_another_tool(workspace, human_desk):
    async with client(joined(workspace, "--resolve-wait", "1"), "agent-b", human_desk.env) as (session, _, _):
        pushed = await session.call_tool("ast_edit", EDIT)
        action_id = pushed.structured_content["action_id"]
        await human_desk.decide("apply", "ship it")
        nothing = {"ops": [{"pat": "no_such_call($A)", "out": "x"}], "lang": "ts"}
        moved_on = text_of(await session.call_tool("ast_edit", nothing))
        assert moved_on.startswith(PREFACE), moved_on
        assert action_id in moved_on and "Decided by the person: applied. Reason: ship it" in moved_on, moved_on
        assert moved_on.endswith("\nNo replacements made"), "then the call's own result"
        again = await session.call_tool("ast_edit", nothing)
        assert text_of(again) == "No replacements made", "delivered exactly once"
        empty = await session.call_tool("resolve", {"action": "apply", "reason": "x"})
        assert text_of(empty) == EMPTY
        assert (workspace / "a.ts").read_text() == EDITED


async def test_a_decision_kept_for_an_agent_survives_a_restart_of_the_desk(workspace, journalled_desk):
    desk = journalled_desk
    args = joined(workspace, "--resolve-wait", "1")
    async with client(args, "restarted", desk.env) as (session, _, _):
        await session.call_tool("ast_edit", EDIT)
        waited = await session.call_tool("resolve", {"action": "apply", "reason": "go"})
        assert text_of(waited).startswith(NOT_YET), text_of(waited)
        await desk.proposal(waiting=False)
        await desk.decide("apply", "reviewed it all")
    # The window closes and opens again before the agent comes back.
    assert desk.stop() == 0
    desk.start()
    async with client(args, "restarted", desk.env) as (session, _, _):
        kept = await session.call_tool("resolve", {"action": "apply", "reason": "go"})
        assert text_of(kept).endswith("Decided by the person: applied. Reason: reviewed it all"), text_of(kept)
        again = await session.call_tool("resolve", {"action": "apply", "reason": "go"})
        assert text_of(again) == EMPTY
    assert (workspace / "a.ts").read_text() == EDITED


async def test_two_clients_each_get_only_their_own_decisions(workspace, human_desk):
    (workspace / "IMG_1.JPG").write_text("x")
    env = human_desk.env
    async with client(joined(workspace, "--resolve-wait", "1"), "agent-one", env) as (one, _, _):
        async with client(joined(workspace, "--resolve-wait", "1"), "agent-two", env) as (two, _, _):
            edit = await one.call_tool("ast_edit", EDIT)
            rename = await two.call_tool("batch_rename_preview", RENAME)
            assert rename.is_error is False, text_of(rename)
            # LIFO: the person discards agent-two's rename (on top), then applies agent-one's edit.
            await human_desk.decide("discard", "keep the names")
            await human_desk.decide("apply", "good edit")

            mine_two = await two.call_tool("resolve", {"action": "apply", "reason": "?"})
            assert text_of(mine_two) == (
                "Discarded batch rename of 1 file. Reason: keep the names\n"
                "Decided by the person: discarded. Reason: keep the names"
            )
            assert mine_two.structured_content["action_id"] == rename.structured_content["action_id"]
            mine_one = await one.call_tool("resolve", {"action": "apply", "reason": "?"})
            assert text_of(mine_one).endswith("Decided by the person: applied. Reason: good edit"), text_of(mine_one)
            assert "keep the names" not in text_of(mine_one)
            assert mine_one.structured_content["action_id"] == edit.structured_content["action_id"]
            for session in (one, two):
                again = await session.call_tool("resolve", {"action": "apply", "reason": "?"})
                assert text_of(again) == EMPTY
    assert (workspace / "a.ts").read_text() == EDITED
    assert (workspace / "IMG_1.JPG").exists()
