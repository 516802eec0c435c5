"""Fixtures of the MCP client tests (helpers in desk.py)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from desk import SOURCE, StandInDesk, short_runtime_dir


@pytest.fixture
def anyio_backend():
    return "asyncio"


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.ts").write_text(SOURCE)
    return ws


def _stand_in(workspace: Path, policy: str, data_dir: Path | None = None):
    env = {**os.environ, "XDG_RUNTIME_DIR": str(short_runtime_dir())}
    desk = StandInDesk(workspace, policy, env, data_dir).start()
    yield desk
    desk.stop()


@pytest.fixture
def agent_desk(workspace):
    """`rdesk serve-socket --policy agent`: the agent's own `resolve` decides."""
    yield from _stand_in(workspace, "agent")


@pytest.fixture
def human_desk(workspace):
    """`rdesk serve-socket --policy human`: the person decides (through `StandInDesk.person`)."""
    yield from _stand_in(workspace, "human")


@pytest.fixture
def journalled_desk(workspace, tmp_path):
    """Like `human_desk`, with a journal in a data folder of its own, so it can be restarted."""
    yield from _stand_in(workspace, "human", tmp_path / "data")
