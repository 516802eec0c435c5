"""`resolve` as an MCP task (the `io.modelcontextprotocol/tasks` extension, SEP-2663) for a
client that declares it. The official Python SDK enables extension results only at protocol
revisions after the ones the desk speaks, so this client writes the extension's wire format
itself: JSON-RPC lines to `rdesk mcp` joined to a stand-in window (`rdesk serve-socket`)."""

from __future__ import annotations

import json
import subprocess
import time

import pytest

from desk import EDIT, EDITED, SOURCE, RDESK, joined

pytestmark = pytest.mark.anyio

TASKS = "io.modelcontextprotocol/tasks"
LABEL = "AST Edit: 2 replacements in 1 file"


class RawClient:
    """One MCP client over `rdesk mcp`'s stdio, one JSON-RPC message a line."""

    def __init__(self, args: list[str], env: dict[str, str], name: str, tasks: bool) -> None:
        self.proc = subprocess.Popen(
            [RDESK, *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env
        )
        self.next_id = 0
        capabilities = {"extensions": {TASKS: {}}} if tasks else {}
        init = self.request(
            "initialize",
            {"protocolVersion": "2025-11-25", "capabilities": capabilities, "clientInfo": {"name": name, "version": "0"}},
        )
        self.server_capabilities = init["result"]["capabilities"]
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, message: dict) -> None:
        self.proc.stdin.write((json.dumps(message) + "\n").encode())
        self.proc.stdin.flush()

    def request(self, method: str, params: dict) -> dict:
        """Sends a request and returns its answer (notifications before it are skipped)."""
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        while True:
            line = self.proc.stdout.readline()
            assert line, f"the server closed its output; stderr: {self.proc.stderr.read().decode()}"
            message = json.loads(line)
            if message.get("id") == self.next_id and "method" not in message:
                return message

    def call(self, name: str, arguments: dict) -> dict:
        return self.request("tools/call", {"name": name, "arguments": arguments})["result"]

    def task(self, task_id: str) -> dict:
        return self.request("tasks/get", {"taskId": task_id})["result"]

    def task_until(self, task_id: str, status: str, timeout: float = 20) -> dict:
        """Polls `tasks/get` (at the interval the task suggests, capped) until `status`."""
        deadline = time.monotonic() + timeout
        while True:
            task = self.task(task_id)
            if task["status"] == status:
                return task
            assert time.monotonic() < deadline, f"task {task_id} still {task['status']}, not {status}: {task}"
            time.sleep(min(task.get("pollIntervalMs") or 100, 100) / 1000)

    def close(self) -> int:
        self.proc.stdin.close()
        return self.proc.wait(timeout=20)


def text_of(result: dict) -> str:
    return "\n".join(c["text"] for c in result["content"] if c["type"] == "text")


async def test_resolve_is_a_task_for_a_client_that_declares_tasks_and_its_result_is_the_decision(
    workspace, human_desk
):
    client = RawClient(joined(workspace, "--resolve-wait", "1"), human_desk.env, "tasks-agent", tasks=True)
    try:
        assert TASKS in client.server_capabilities.get("extensions", {}), client.server_capabilities
        pushed = client.call("ast_edit", EDIT)
        action_id = pushed["structuredContent"]["action_id"]

        # Returned at once, before anyone decided; the person's review has no bound here.
        created = client.call("resolve", {"action": "apply", "reason": "tests pass"})
        assert created["resultType"] == "task", created
        assert created["status"] == "working", created
        status = f'waiting for the person\'s review of {action_id} ("{LABEL}") in the Resolve Desk window'
        assert created["statusMessage"] == status, created
        proposal = await human_desk.proposal(waiting=True)
        assert (proposal["client"], proposal["reason"]) == ("tasks-agent", "tests pass")

        # Polled (as the client would, at its own pace) for longer than the 1 s bound a plain
        # call gets: still working, and the card still shows the agent waiting.
        started = time.monotonic()
        while time.monotonic() - started < 1.5:
            task = client.task(created["taskId"])
            assert (task["status"], task["statusMessage"]) == ("working", status), task
            time.sleep(0.1)
        assert (await human_desk.proposal(waiting=True))["client"] == "tasks-agent"
        assert (workspace / "a.ts").read_text() == SOURCE

        await human_desk.decide("apply", "read it in the window")
        done = client.task_until(created["taskId"], "completed")
        result = done["result"]
        assert result.get("isError") is not True, result
        assert text_of(result).endswith("Decided by the person: applied. Reason: read it in the window"), result
        assert result["structuredContent"]["action_id"] == action_id
        assert (workspace / "a.ts").read_text() == EDITED
    finally:
        assert client.close() == 0


async def test_a_cancelled_resolve_task_leaves_the_action_pending_and_the_decision_is_kept(workspace, human_desk):
    client = RawClient(joined(workspace), human_desk.env, "tasks-agent", tasks=True)
    try:
        client.call("ast_edit", EDIT)
        created = client.call("resolve", {"action": "discard", "reason": "unsure"})
        assert created["resultType"] == "task", created
        await human_desk.proposal(waiting=True)
        assert client.request("tasks/cancel", {"taskId": created["taskId"]})["result"] is not None
        client.task_until(created["taskId"], "cancelled")
        proposal = await human_desk.proposal(waiting=False)
        assert proposal["reason"] == "unsure", "the proposal stays on the card"
        await human_desk.decide("discard", "not needed")
        # Nothing pending any more: the kept decision comes back at once, without a task.
        kept = client.call("resolve", {"action": "discard", "reason": "unsure"})
        assert kept.get("resultType", "complete") == "complete", kept
        assert text_of(kept).endswith("Decided by the person: discarded. Reason: not needed"), kept
        assert (workspace / "a.ts").read_text() == SOURCE
    finally:
        assert client.close() == 0


async def test_a_client_without_the_tasks_extension_gets_the_bounded_wait(workspace, human_desk):
    client = RawClient(joined(workspace, "--resolve-wait", "1"), human_desk.env, "plain-agent", tasks=False)
    try:
        client.call("ast_edit", EDIT)
        answer = client.call("resolve", {"action": "apply", "reason": "go"})
        assert "resultType" not in answer or answer["resultType"] == "complete", answer
        assert text_of(answer).startswith("The person has not decided yet in 1 s"), answer
        error = client.request("tasks/get", {"taskId": "nope"})
        assert "error" in error, "tasks/* need the client's tasks capability"
    finally:
        assert client.close() == 0
