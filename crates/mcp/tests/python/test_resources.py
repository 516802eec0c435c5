"""Pending actions as MCP resources, through the official Python SDK: a client that shows
resources can show the person what waits (label, status, who pushed it, the diff) and is told
when an action is pushed, gets a proposal, turns stale or is decided."""

from __future__ import annotations

import pytest
import mcp_types as types
from mcp import MCPError

from desk import EDIT, SOURCE, client, joined

pytestmark = [
    pytest.mark.anyio,
    # The desk speaks the 2025-11-25 revision, where resources/subscribe is the way to subscribe.
    pytest.mark.filterwarnings("ignore:resources/subscribe is removed"),
]

LABEL = "AST Edit: 2 replacements in 1 file"


def text_of_resource(result) -> str:
    return "\n".join(c.text for c in result.contents)


async def test_each_pending_action_is_a_resource_with_its_diff_and_subscribers_hear_of_changes(workspace, human_desk):
    async with client(joined(workspace, "--resolve-wait", "1"), "res-agent", human_desk.env) as (session, notes, init):
        assert init.capabilities.resources is not None
        assert init.capabilities.resources.subscribe is True
        assert init.capabilities.resources.list_changed is True
        assert (await session.list_resources()).resources == []

        pushed = await session.call_tool("ast_edit", EDIT)
        action_id = pushed.structured_content["action_id"]
        uri = f"resolve-desk://pending/{action_id}"
        await notes.wait_for(types.ResourceListChangedNotification, 1)
        [resource] = (await session.list_resources()).resources
        assert str(resource.uri) == uri
        assert resource.title == LABEL
        assert "pending" in resource.description and "pushed by res-agent" in resource.description, resource

        text = text_of_resource(await session.read_resource(uri))
        assert text.startswith(f"{LABEL}\nid: {action_id}\nstatus: pending\nsource: ast_edit\npushed by: res-agent\n"), text
        assert "-console.log(1);" in text and "+logger.debug(1);" in text, text

        await session.subscribe_resource(uri)
        # A proposal (the agent's bounded wait) updates it.
        waited = await session.call_tool("resolve", {"action": "apply", "reason": "looks fine"})
        assert waited.is_error is False
        await notes.wait_for(types.ResourceUpdatedNotification, 1)
        text = text_of_resource(await session.read_resource(uri))
        assert "proposal: res-agent proposes apply: looks fine" in text, text

        # A file edited behind the desk's back: the person's Apply finds it stale.
        (workspace / "a.ts").write_text(SOURCE + "console.log(3);\n")
        refused = await human_desk.person({"tool": "resolve", "params": {"action": "apply", "reason": "ok"}})
        assert refused["is_error"] is True, refused
        # Updates so far: the proposal made, the proposal no longer waiting, the stale status.
        await notes.wait_for(types.ResourceUpdatedNotification, 3)
        text = text_of_resource(await session.read_resource(uri))
        assert "status: stale" in text, text

        # Decided: updated, and the list changes.
        await human_desk.decide("discard", "stale now")
        await notes.wait_for(types.ResourceListChangedNotification, 2)
        await notes.wait_for(types.ResourceUpdatedNotification, 4)
        assert (await session.list_resources()).resources == []
        with pytest.raises(MCPError, match="No pending action at"):
            await session.read_resource(uri)
