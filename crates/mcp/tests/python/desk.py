"""What the MCP client tests share: the `rdesk` under test, a client on the official Python SDK,
and a stand-in for the window (`rdesk serve-socket`, whose stdin plays the person's buttons)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import tempfile
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
import mcp_types as types

RDESK = os.environ.get("RDESK_BIN", "rdesk")
REMINDER = "This is a preview. Call the resolve tool to apply or discard these changes."
EMPTY = "No pending action to resolve. Nothing to apply or discard."
SOURCE = "console.log(1);\nconsole.log(2);\n"
EDITED = "logger.debug(1);\nlogger.debug(2);\n"
EDIT = {"ops": [{"pat": "console.log($A)", "out": "logger.debug($A)"}], "lang": "ts"}
RENAME = {"files": ["*.JPG"], "find": "^IMG_(\\d)\\.JPG$", "replace": "photo-$1.jpg"}


class Notifications:
    """Collects the server's notifications; lets a test wait for one (no sleeps)."""

    def __init__(self) -> None:
        self.seen: list[object] = []
        self._event = anyio.Event()

    async def __call__(self, message) -> None:
        self.seen.append(message)
        self._event.set()

    def count(self, kind) -> int:
        return sum(1 for m in self.seen if isinstance(m, kind))

    async def wait_for(self, kind, n: int = 1, timeout: float = 20) -> None:
        with anyio.fail_after(timeout):
            while self.count(kind) < n:
                self._event = anyio.Event()
                await self._event.wait()


@asynccontextmanager
async def client(
    args: list[str],
    name: str = "pytest-agent",
    env: dict[str, str] | None = None,
    read_timeout_seconds: float | None = None,
):
    notes = Notifications()
    params = StdioServerParameters(command=RDESK, args=args, env=env)
    async with stdio_client(params) as (read, write):
        async with ClientSession(
            read,
            write,
            message_handler=notes,
            client_info=types.Implementation(name=name, version="1.0"),
            read_timeout_seconds=read_timeout_seconds,
        ) as session:
            init = await session.initialize()
            yield session, notes, init


def headless(ws: Path) -> list[str]:
    return ["mcp", "--workspace", str(ws), "--headless", "--policy", "agent"]


def joined(ws: Path, *more: str) -> list[str]:
    return ["mcp", "--workspace", str(ws), *more]


def text_of(result) -> str:
    return "\n".join(c.text for c in result.content if c.type == "text")


async def tool_names(session) -> list[str]:
    return [t.name for t in (await session.list_tools()).tools]


def short_runtime_dir() -> Path:
    """A private runtime dir with a short path: a Unix socket path must fit in 107 bytes, and
    pytest's tmp_path (/tmp/pytest-of-USER/pytest-N/<test name>/) can exceed that."""
    runtime = Path(tempfile.mkdtemp(prefix="rd-run-"))
    runtime.chmod(0o700)
    return runtime


class StandInDesk:
    """`rdesk serve-socket` on a workspace: the window's socket without the window. Its stdin
    stands in for the person's buttons (see `person`)."""

    def __init__(self, workspace: Path, policy: str, env: dict[str, str], data_dir: Path | None = None) -> None:
        self.workspace, self.policy, self.env, self.data_dir = workspace, policy, env, data_dir
        self.proc: subprocess.Popen | None = None
        self.socket: Path | None = None

    def start(self) -> "StandInDesk":
        args = [RDESK, "serve-socket", "--workspace", str(self.workspace), "--policy", self.policy]
        if self.data_dir is not None:
            args += ["--data-dir", str(self.data_dir)]
        self.proc = subprocess.Popen(
            args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=self.env, text=True
        )
        self.socket = Path(self.proc.stdout.readline().strip())
        assert self.socket.exists(), self.proc.stderr.read()
        return self

    def stop(self) -> int:
        """Closes the desk as the window's exit does (SIGTERM) and waits for it."""
        if self.proc is None or self.proc.poll() is not None:
            return self.proc.returncode if self.proc else 0
        self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(timeout=20)

    async def person(self, obj) -> dict:
        """Sends one line to the stand-in window and waits (off the event loop) for its answer."""
        self.proc.stdin.write(json.dumps(obj) + "\n")
        self.proc.stdin.flush()
        line = await anyio.to_thread.run_sync(self.proc.stdout.readline)
        assert line, self.proc.stderr.read()
        return json.loads(line)

    async def decide(self, action: str, reason: str) -> dict:
        """The person's Apply or Discard of the top action, with a reason."""
        decided = await self.person({"tool": "resolve", "params": {"action": action, "reason": reason}})
        assert decided["is_error"] is False, decided
        return decided

    async def proposal(self, waiting: bool | None = None) -> dict:
        """The agent's proposal on the top action, once there is one (and, when `waiting` is
        given, once it shows the agent waiting, or no longer waiting)."""
        ask: dict = {"wait_for_proposal": True}
        if waiting is not None:
            ask["waiting"] = waiting
        return (await self.person(ask))["proposal"]
