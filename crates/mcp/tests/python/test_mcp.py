"""Resolve Desk's MCP server, driven by a client nobody here wrote: the official MCP SDK
for Python (`mcp`, pinned in requirements.txt), spawning the real `rdesk` over stdio.

Run through `cargo test -p resolve-cli --test mcp_python` (which builds rdesk and passes
RDESK_BIN), or directly: RDESK_BIN=target/debug/rdesk .venv/bin/pytest crates/mcp/tests/python
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
import mcp_types as types

from desk import (
    EDIT,
    EDITED,
    EMPTY,
    RDESK,
    REMINDER,
    SOURCE,
    client,
    headless,
    joined,
    short_runtime_dir,
    text_of,
    tool_names,
)

pytestmark = pytest.mark.anyio


async def test_initialize_names_the_server_and_offers_tools_with_list_changed(workspace):
    async with client(headless(workspace)) as (session, _, init):
        assert init.server_info.name == "resolve-desk"
        assert init.capabilities.tools is not None
        assert init.capabilities.tools.list_changed is True
        await session.send_ping()


async def test_tools_are_listed_with_resolve_from_the_start_and_previews_are_read_only(workspace):
    async with client(headless(workspace)) as (session, _, _init):
        tools = {t.name: t for t in (await session.list_tools()).tools}
        assert "resolve" in tools, "listed whatever the stack holds: many clients read the list once"
        assert tools["resolve"].annotations.destructive_hint is True
        assert tools["resolve"].annotations.read_only_hint is False
        assert EMPTY in tools["resolve"].description, tools["resolve"].description
        assert {"ast_edit", "batch_rename_preview"} <= set(tools)
        edit = tools["ast_edit"]
        assert edit.input_schema["type"] == "object"
        assert "ops" in edit.input_schema["properties"]
        assert edit.annotations.read_only_hint is True
        assert edit.annotations.destructive_hint is False
        rename = tools["batch_rename_preview"]
        assert rename.annotations.read_only_hint is True
        assert rename.annotations.destructive_hint is False
        for preview in (edit, rename):
            assert "(Writes nothing:" in preview.description, preview.description


async def test_preview_writes_nothing_ends_with_the_reminder_and_the_list_does_not_change(workspace):
    async with client(headless(workspace)) as (session, notes, _init):
        before = await tool_names(session)
        result = await session.call_tool("ast_edit", EDIT)
        assert result.is_error is False
        text = text_of(result)
        assert "logger.debug(1)" in text, text
        assert text.rstrip().endswith(REMINDER), text
        assert isinstance(result.structured_content, dict)
        assert (workspace / "a.ts").read_text() == SOURCE, "a preview writes nothing"
        await session.send_ping()  # anything the server sent before the pong has arrived
        assert notes.count(types.ToolListChangedNotification) == 0, "a push does not change the list"
        assert await tool_names(session) == before


async def test_resolve_passes_the_reason_byte_for_byte(workspace):
    reason = "  keep the spaces \n\tand the newlines\n"
    async with client(headless(workspace)) as (session, _notes, _init):
        await session.call_tool("ast_edit", EDIT)
        blank = await session.call_tool("resolve", {"action": "discard", "reason": " \n\t"})
        assert blank.is_error is True
        assert text_of(blank) == "`reason` must be a non-empty string: say why you apply or discard this action."
        result = await session.call_tool("resolve", {"action": "discard", "reason": reason})
        assert result.is_error is False, text_of(result)
        assert text_of(result) == "Discarded: AST Edit: 2 replacements in 1 file. Reason: " + reason
        assert result.structured_content["reason"] == reason
        assert (workspace / "a.ts").read_text() == SOURCE


async def test_resolve_under_policy_agent_applies_and_then_answers_the_empty_stack_message(workspace):
    async with client(headless(workspace)) as (session, _notes, _init):
        await session.call_tool("ast_edit", EDIT)
        result = await session.call_tool("resolve", {"action": "apply", "reason": "tests pass"})
        assert result.is_error is False, text_of(result)
        assert text_of(result) == "Applied 2 replacements in 1 file."
        assert REMINDER not in text_of(result)
        assert result.structured_content["action"] == "apply"
        assert result.structured_content["reason"] == "tests pass"
        assert (workspace / "a.ts").read_text() == EDITED
        again = await session.call_tool("resolve", {"action": "apply", "reason": "again"})
        assert again.is_error is True
        assert text_of(again) == EMPTY
        assert "resolve" in await tool_names(session)


async def test_bad_parameters_are_tool_errors_with_the_spec_messages(workspace):
    async with client(headless(workspace)) as (session, _, _init):
        empty = await session.call_tool("resolve", {"action": "apply", "reason": "x"})
        assert empty.is_error is True
        assert text_of(empty) == EMPTY

        no_ops = await session.call_tool("ast_edit", {"ops": []})
        assert no_ops.is_error is True
        assert text_of(no_ops) == "`ops` must include at least one op entry"

        # SPEC §5's messages win over the JSON Schema's wording.
        nothing = await session.call_tool("ast_edit", {})
        assert nothing.is_error is True
        assert text_of(nothing) == "`ops` must include at least one op entry"
        no_pat = await session.call_tool("ast_edit", {"ops": [{"out": "x"}]})
        assert text_of(no_pat) == "`ops[0].pat` must be a non-empty pattern"
        string_limit = await session.call_tool("ast_edit", {"ops": [{"pat": "a", "out": "b"}], "limit": "3"})
        assert text_of(string_limit) == "limit must be a positive number"

        # An unknown key is refused by name, with the known ones; it never widens the call.
        misspelled = await session.call_tool("ast_edit", {**EDIT, "paths": "src"})
        assert misspelled.is_error is True
        assert text_of(misspelled) == (
            "Unknown parameter `paths` for `ast_edit`: known parameters are "
            "`ops`, `lang`, `path`, `glob`, `sel`, `limit`. Did you mean `path`?"
        )

        outside = await session.call_tool("ast_edit", {"ops": [{"pat": "a", "out": "b"}], "path": "../x"})
        assert outside.is_error is True
        assert "outside the workspace" in text_of(outside) or "Path not found" in text_of(outside), text_of(outside)

        dup = await session.call_tool(
            "ast_edit", {"ops": [{"pat": "f($A)", "out": "g($A)"}, {"pat": "f($A)", "out": "h($A)"}]}
        )
        assert dup.is_error is True
        assert "Duplicate rewrite pattern: f($A)" in text_of(dup)

        wrong_type = await session.call_tool("ast_edit", {"ops": "not a list"})
        assert wrong_type.is_error is True
        assert text_of(wrong_type) == '`ops` must be an array of {pat, out} entries, got "not a list"'

        unknown = await session.call_tool("no_such_tool", {})
        assert unknown.is_error is True
        assert "Unknown tool `no_such_tool`" in text_of(unknown)

        # The connection is still fine after all of that.
        await session.send_ping()
        assert (workspace / "a.ts").read_text() == SOURCE


def test_malformed_json_rpc_is_answered_and_the_server_stays_up(workspace):
    proc = subprocess.Popen(
        [RDESK, *headless(workspace)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    try:

        def send(obj) -> None:
            line = obj if isinstance(obj, str) else json.dumps(obj)
            proc.stdin.write((line + "\n").encode())
            proc.stdin.flush()

        def receive() -> dict:
            line = proc.stdout.readline()
            assert line, f"the server closed its output; stderr: {proc.stderr.read().decode()}"
            return json.loads(line)

        send(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}},
            }
        )
        assert receive()["result"]["serverInfo"]["name"] == "resolve-desk"
        send({"jsonrpc": "2.0", "method": "notifications/initialized"})

        send("{this is not json")
        parse_error = receive()
        assert parse_error["error"]["code"] == -32700
        assert parse_error["id"] is None

        send({"jsonrpc": "2.0", "id": 2, "params": {}})  # JSON, but not a JSON-RPC message
        invalid = receive()
        assert invalid["error"]["code"] == -32600

        send({"jsonrpc": "2.0", "id": 3, "method": "no/such/method"})
        unknown = receive()
        assert unknown["id"] == 3 and unknown["error"]["code"] == -32601

        send({"jsonrpc": "2.0", "id": 4, "method": "ping"})
        assert receive() == {"jsonrpc": "2.0", "id": 4, "result": {}}

        send({"jsonrpc": "2.0", "id": 5, "method": "tools/list"})
        names = [t["name"] for t in receive()["result"]["tools"]]
        assert "ast_edit" in names
        assert proc.poll() is None, "the server is still running"
    finally:
        proc.stdin.close()
        assert proc.wait(timeout=20) == 0


class Raw:
    """A client writing JSON-RPC lines itself (what no SDK would send)."""

    def __init__(self, args: list[str], env: dict[str, str]) -> None:
        self.proc = subprocess.Popen(
            [RDESK, *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env
        )

    def send_bytes(self, line: bytes) -> None:
        self.proc.stdin.write(line + b"\n")
        self.proc.stdin.flush()

    def send(self, obj) -> None:
        self.send_bytes(json.dumps(obj).encode())

    def receive(self) -> dict:
        line = self.proc.stdout.readline()
        assert line, f"the server closed its output; stderr: {self.proc.stderr.read().decode()}"
        return json.loads(line)

    def initialize(self) -> None:
        self.send(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}},
            }
        )
        assert self.receive()["result"]["serverInfo"]["name"] == "resolve-desk"
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def close(self) -> int:
        self.proc.stdin.close()
        return self.proc.wait(timeout=20)


def assert_a_long_line_is_refused_and_the_next_is_served(raw: Raw, limit: int) -> None:
    raw.initialize()
    padding = "x" * (limit * 3)
    line = json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {"pad": padding}}).encode()
    raw.send_bytes(line)
    refused = raw.receive()
    assert refused["id"] is None
    assert refused["error"]["code"] == -32600
    message = refused["error"]["message"]
    assert f"{len(line)} bytes" in message and f"limit of {limit} bytes" in message, message
    assert "RESOLVE_DESK_MCP_MAX_LINE_BYTES" in message, message
    raw.send({"jsonrpc": "2.0", "id": 3, "method": "ping"})
    assert raw.receive() == {"jsonrpc": "2.0", "id": 3, "result": {}}


def test_a_line_over_the_limit_is_refused_by_size_and_the_server_keeps_serving(workspace):
    env = {**os.environ, "RESOLVE_DESK_MCP_MAX_LINE_BYTES": "4096"}
    raw = Raw(headless(workspace), env)
    try:
        assert_a_long_line_is_refused_and_the_next_is_served(raw, 4096)
    finally:
        assert raw.close() == 0


def test_a_line_over_the_default_limit_of_16_mib_is_refused(workspace):
    env = {k: v for k, v in os.environ.items() if k != "RESOLVE_DESK_MCP_MAX_LINE_BYTES"}
    raw = Raw(headless(workspace), env)
    try:
        raw.initialize()
        raw.send_bytes(b'{"jsonrpc":"2.0","id":2,"method":"ping","params":{"pad":"' + b"x" * (17 << 20) + b'"}}')
        refused = raw.receive()
        assert refused["error"]["code"] == -32600
        assert "limit of 16777216 bytes" in refused["error"]["message"], refused
        raw.send({"jsonrpc": "2.0", "id": 3, "method": "ping"})
        assert raw.receive() == {"jsonrpc": "2.0", "id": 3, "result": {}}
    finally:
        assert raw.close() == 0


def test_headless_human_policy_is_refused_with_an_explanation(workspace):
    out = subprocess.run(
        [RDESK, "mcp", "--workspace", str(workspace), "--headless"], capture_output=True, text=True, timeout=30
    )
    assert out.returncode == 2
    assert "--policy agent" in out.stderr
    assert "no window" in out.stderr


# ---- two clients, one desk: the socket the app serves, without the app -------------------


def test_the_socket_is_private(agent_desk):
    sock = agent_desk.socket
    assert (sock.stat().st_mode & 0o777) == 0o600
    assert (sock.parent.stat().st_mode & 0o777) == 0o700


async def test_two_clients_share_one_stack_lifo_with_expected_id(workspace, agent_desk):
    (workspace / "IMG_1.JPG").write_text("x")
    env = agent_desk.env
    async with client(joined(workspace), "agent-one", env) as (one, one_notes, _):
        async with client(joined(workspace), "agent-two", env) as (two, two_notes, _):
            first = await one.call_tool("ast_edit", EDIT)
            assert text_of(first).rstrip().endswith(REMINDER)

            second = await two.call_tool(
                "batch_rename_preview", {"files": ["*.JPG"], "find": "^IMG_(\\d)\\.JPG$", "replace": "photo-$1.jpg"}
            )
            assert second.is_error is False, text_of(second)
            assert text_of(second).rstrip().endswith(REMINDER)

            # `expected_id` of the first client's action: the top is the second's, so nothing happens.
            wrong = await one.call_tool(
                "resolve", {"action": "apply", "reason": "mine", "expected_id": "pa-nope"}
            )
            assert wrong.is_error is True
            assert "not pa-nope" in text_of(wrong)
            assert (workspace / "IMG_1.JPG").exists()

            # LIFO across both: client one's resolve takes client two's rename (on top).
            top = await one.call_tool("resolve", {"action": "discard", "reason": "keep the names"})
            assert text_of(top) == "Discarded batch rename of 1 file. Reason: keep the names"
            assert top.structured_content["source_tool_name"] == "batch_rename_preview"

            below = await two.call_tool("resolve", {"action": "apply", "reason": "ok"})
            assert below.is_error is False, text_of(below)
            assert below.structured_content["source_tool_name"] == "ast_edit"
            assert (workspace / "a.ts").read_text() == EDITED
            assert (workspace / "IMG_1.JPG").exists()
            await one.send_ping()
            await two.send_ping()
            assert one_notes.count(types.ToolListChangedNotification) == 0
            assert two_notes.count(types.ToolListChangedNotification) == 0


def test_the_bridge_refuses_a_line_over_the_limit_and_keeps_serving(workspace, agent_desk):
    """The limit is checked in `rdesk mcp` itself: the line never reaches the desk."""
    env = {**agent_desk.env, "RESOLVE_DESK_MCP_MAX_LINE_BYTES": "4096"}
    raw = Raw(joined(workspace), env)
    try:
        assert_a_long_line_is_refused_and_the_next_is_served(raw, 4096)
    finally:
        assert raw.close() == 0


async def test_a_closed_desk_says_how_to_reopen_it(workspace, agent_desk):
    async with client(joined(workspace), "agent-one", agent_desk.env) as (session, _, _init):
        await session.send_ping()
        assert agent_desk.stop() == 0
        assert not agent_desk.socket.exists(), "the socket is removed on close"
        result = await session.call_tool("ast_edit", EDIT)
        assert result.is_error is True
        assert f"resolve-desk {workspace}" in text_of(result), text_of(result)
        assert (workspace / "a.ts").read_text() == SOURCE


def test_mcp_starts_the_desk_when_none_is_open(workspace, tmp_path):
    """Without a window on the workspace, `rdesk mcp` starts one (here RESOLVE_DESK_BIN points
    to a stand-in that serves the socket without a GUI) and joins it."""
    runtime = short_runtime_dir()
    stand_in = tmp_path / "fake-desk"
    pidfile = tmp_path / "desk.pid"
    stand_in.write_text(
        f"#!/bin/sh\necho $$ > {pidfile}\nexec {RDESK} serve-socket --workspace \"$1\" --policy agent\n"
    )
    stand_in.chmod(0o755)
    env = {**os.environ, "XDG_RUNTIME_DIR": str(runtime), "RESOLVE_DESK_BIN": str(stand_in)}

    async def run() -> None:
        async with client(joined(workspace), "starter", env) as (session, _, _init):
            assert "ast_edit" in await tool_names(session)

    try:
        anyio.run(run)
    finally:
        if pidfile.exists():
            os.kill(int(pidfile.read_text()), signal.SIGTERM)


# ---- human policy: the agent proposes, the person decides ---------------------------------


async def test_under_human_policy_resolve_waits_and_returns_the_persons_decision(workspace, human_desk):
    person = human_desk.person
    async with client(joined(workspace), "agent-one", human_desk.env) as (session, _, _init):
        await session.call_tool("ast_edit", EDIT)
        answer: dict = {}

        async def agent() -> None:
            answer["result"] = await session.call_tool("resolve", {"action": "discard", "reason": "agent unsure"})

        async with anyio.create_task_group() as tg:
            tg.start_soon(agent)
            proposal = (await person({"wait_for_proposal": True}))["proposal"]
            assert proposal["choice"] == "discard"
            assert proposal["reason"] == "agent unsure"
            assert proposal["client"] == "agent-one"
            assert (workspace / "a.ts").read_text() == SOURCE, "nothing written while the person decides"
            decided = await person({"tool": "resolve", "params": {"action": "apply", "reason": "looks right"}})
            assert decided["is_error"] is False, decided

        result = answer["result"]
        assert result.is_error is False, text_of(result)
        assert "Decided by the person: applied. Reason: looks right" in text_of(result)
        assert result.structured_content["decided_by"] == "person"
        assert (workspace / "a.ts").read_text() == EDITED


async def test_a_cancelled_resolve_leaves_the_action_pending(workspace, human_desk):
    person = human_desk.person
    async with client(joined(workspace), "agent-one", human_desk.env) as (session, _, _init):
        await session.call_tool("ast_edit", EDIT)
        async with anyio.create_task_group() as tg:
            tg.start_soon(session.call_tool, "resolve", {"action": "apply", "reason": "go"})
            await person({"wait_for_proposal": True})
            tg.cancel_scope.cancel()  # the SDK sends notifications/cancelled
        # The desk saw the cancel: the proposal stays, no longer waiting.
        proposal = await human_desk.proposal(waiting=False)
        assert proposal["reason"] == "go"
        assert (workspace / "a.ts").read_text() == SOURCE
        # The person can still decide it: it was never applied nor lost.
        discarded = await person({"tool": "resolve", "params": {"action": "discard", "reason": "not now"}})
        assert discarded["is_error"] is False, discarded
        assert discarded["details"]["source_tool_name"] == "ast_edit"


PYTHON_SDK = Path(__file__).resolve().parents[4] / "tools" / "sdk" / "python" / "run.py"
GREET_TOOL = """
def factory(pi):
    def execute(call_id, params):
        pi.push_pending_action({'label': 'Greet ' + params['who'], 'apply': lambda reason: 'greeted ' + params['who'] + ': ' + reason})
        return 'previewed a greeting'
    return {'name': 'greet', 'label': 'Greet', 'description': 'd', 'parameters': {}, 'execute': execute}
"""


async def test_an_external_tool_dropped_in_while_connected_is_announced_and_callable(workspace, tmp_path):
    # The user's own tools folder: a folder's own tools (.resolve/tools) would need trust first.
    env = {**os.environ, "XDG_CONFIG_HOME": str(tmp_path / "config"), "XDG_STATE_HOME": str(tmp_path / "state")}
    async with client(headless(workspace), env=env) as (session, notes, _init):
        assert "greet" not in await tool_names(session)
        tool = tmp_path / "config" / "resolve-desk" / "tools" / "greet"
        tool.mkdir(parents=True)
        (tool / "tool.py").write_text(GREET_TOOL)
        manifest = {
            "name": "greet", "label": "Greet", "description": "Greets after review",
            "parameters": {"type": "object", "properties": {"who": {"type": "string"}}, "required": ["who"]},
            "command": sys.executable, "args": [str(PYTHON_SDK), "tool.py"],
        }
        (tool / "tool.json").write_text(json.dumps(manifest))
        await notes.wait_for(types.ToolListChangedNotification, 1)
        with anyio.fail_after(20):
            while "greet" not in await tool_names(session):
                await notes.wait_for(types.ToolListChangedNotification, notes.count(types.ToolListChangedNotification) + 1)
        result = await session.call_tool("greet", {"who": "Ada"})
        assert text_of(result).startswith("previewed a greeting"), text_of(result)
        applied = await session.call_tool("resolve", {"action": "apply", "reason": "kind"})
        assert text_of(applied) == "greeted Ada: kind"


async def test_a_folders_own_tool_is_refused_until_the_person_trusts_the_folder(workspace, tmp_path):
    env = {**os.environ, "XDG_CONFIG_HOME": str(tmp_path / "config"), "XDG_STATE_HOME": str(tmp_path / "state")}
    marker = tmp_path / "ran"
    tool = workspace / ".resolve" / "tools" / "probe"
    tool.mkdir(parents=True)
    (tool / "tool.py").write_text(f"open({str(marker)!r}, 'w').write('ran')\n")
    manifest = {"name": "probe", "label": "Probe", "description": "d", "parameters": {"type": "object"},
                "command": sys.executable, "args": ["tool.py"]}
    (tool / "tool.json").write_text(json.dumps(manifest))
    async with client(headless(workspace), env=env) as (session, _notes, _init):
        assert "probe" in await tool_names(session), "listed, so the agent learns why it cannot run"
        result = await session.call_tool("probe", {})
        assert result.is_error is True, text_of(result)
        text = text_of(result)
        assert "nothing was run" in text and "rdesk trust" in text, text
        assert not marker.exists(), "the folder's tool never ran"


async def test_an_external_tool_is_announced_as_a_program_that_may_change_anything(workspace, tmp_path):
    """Whatever its manifest says, an external tool runs its own code: never `readOnlyHint`."""
    env = {**os.environ, "XDG_CONFIG_HOME": str(tmp_path / "config"), "XDG_STATE_HOME": str(tmp_path / "state")}
    tool = workspace / ".resolve" / "tools" / "greet"
    tool.mkdir(parents=True)
    (tool / "tool.py").write_text(GREET_TOOL)
    manifest = {
        "name": "greet", "label": "Greet", "description": "Only previews a greeting.",
        "parameters": {"type": "object", "properties": {"who": {"type": "string"}}},
        "command": sys.executable, "args": [str(PYTHON_SDK), "tool.py"],
    }
    (tool / "tool.json").write_text(json.dumps(manifest))
    async with client(headless(workspace), env=env) as (session, _notes, _init):
        tools = {t.name: t for t in (await session.list_tools()).tools}
        greet = tools["greet"]
        assert greet.annotations.read_only_hint is False
        assert greet.annotations.destructive_hint is True
        assert greet.annotations.open_world_hint is True
        assert "Writes nothing" not in greet.description, greet.description
        assert tools["ast_edit"].annotations.read_only_hint is True


async def test_a_tool_added_at_runtime_is_announced_in_the_next_result_to_a_client_that_never_relists(
    workspace, tmp_path
):
    env = {**os.environ, "XDG_CONFIG_HOME": str(tmp_path / "config"), "XDG_STATE_HOME": str(tmp_path / "state")}
    nothing = {"ops": [{"pat": "no_such_call($A)", "out": "x"}], "lang": "ts"}
    async with client(headless(workspace), env=env) as (session, notes, _init):
        assert "greet" not in await tool_names(session)  # the only tools/list it sends
        tool = tmp_path / "config" / "resolve-desk" / "tools" / "greet"
        tool.mkdir(parents=True)
        (tool / "tool.py").write_text(GREET_TOOL)
        manifest = {
            "name": "greet", "label": "Greet", "description": "Greets after review.",
            "parameters": {"type": "object", "properties": {"who": {"type": "string"}}, "required": ["who"]},
            "command": sys.executable, "args": [str(PYTHON_SDK), "tool.py"],
        }
        (tool / "tool.json").write_text(json.dumps(manifest))
        # Each load is a list_changed this client ignores; its next call's text says what changed.
        announced = None
        with anyio.fail_after(20):
            while announced is None:
                await notes.wait_for(types.ToolListChangedNotification, notes.count(types.ToolListChangedNotification) + 1)
                texts = [c.text for c in (await session.call_tool("ast_edit", nothing)).content if c.type == "text"]
                assert texts[0] == "No replacements made", texts
                announced = next((t for t in texts[1:] if "`greet`" in t), None)
        assert announced.startswith("The desk's tools changed since your tool list was read."), announced
        assert "`greet`: Greets after review." in announced and '"who"' in announced, announced
        quiet = await session.call_tool("ast_edit", nothing)
        assert text_of(quiet) == "No replacements made", "announced once"
        result = await session.call_tool("greet", {"who": "Ada"})
        assert text_of(result).startswith("previewed a greeting"), text_of(result)
