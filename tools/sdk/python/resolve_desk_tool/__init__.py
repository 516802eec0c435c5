"""resolve_desk_tool: write Resolve Desk tools in Python (stdlib only).

A factory receives the API (``pi.typebox``, ``pi.push_pending_action`` / ``pi.pushPendingAction``,
``pi.progress``) and returns ``{"name", "label", "description", "parameters", "execute"}``
(or a list of them). ``serve(factory)`` speaks JSON-RPC 2.0 over stdin/stdout, one message
per line (see docs/TOOLS.md). ``execute``, ``apply`` and ``reject`` may be plain functions or
coroutines.
"""

import asyncio
import hashlib
import inspect
import json
import os
import sys
from types import SimpleNamespace

from .typebox import Type

__all__ = [
    "serve",
    "run_file",
    "Type",
    "typebox",
    "sha256",
    "STORE_UNAVAILABLE",
    "PushError",
    "PROTOCOL",
    "protocol_mismatch",
]

# The tool protocol this SDK speaks (docs/TOOLS.md); the desk says its own in
# RESOLVE_DESK_PROTOCOL.
PROTOCOL = 1

STORE_UNAVAILABLE = "Pending action store unavailable for custom tools in this runtime."

typebox = SimpleNamespace(Type=Type)


class PushError(Exception):
    """The host refused a pushPendingAction (its message, e.g. STORE_UNAVAILABLE)."""


def sha256(data):
    if isinstance(data, str):
        data = data.encode("utf-8")
    return hashlib.sha256(data).hexdigest()


def workspace_root():
    return os.environ.get("RESOLVE_DESK_WORKSPACE") or os.getcwd()


def read_workspace_file(path):
    """Reads a workspace file for a change set: ``{"path", "text", "sha256"}``."""
    abs_path = path if os.path.isabs(path) else os.path.join(workspace_root(), path)
    with open(abs_path, "rb") as f:
        data = f.read()
    return {"path": path, "text": data.decode("utf-8", errors="replace"), "sha256": sha256(data)}


def protocol_mismatch(desk=None):
    """Why this SDK cannot serve the desk that started it (another protocol), or None."""
    if desk is None:
        desk = os.environ.get("RESOLVE_DESK_PROTOCOL")
    if desk in (None, "") or str(desk) == str(PROTOCOL):
        return None
    try:
        newer = int(desk) > PROTOCOL
    except ValueError:
        newer = False
    fix = (
        "Update the tool's SDK: point its manifest at the SDK that came with the desk (`rdesk sdk-path`)."
        if newer
        else "Update Resolve Desk, or use the SDK that came with it (`rdesk sdk-path`)."
    )
    return (
        f"this tool's SDK (resolve_desk_tool) speaks tool protocol {PROTOCOL}, "
        f"but this Resolve Desk speaks protocol {desk}. {fix}"
    )


def _await(value):
    if inspect.isawaitable(value):
        return asyncio.run(_wrap(value))
    return value


async def _wrap(awaitable):
    return await awaitable


def _result(value):
    if value is None:
        return None
    if isinstance(value, str):
        return {"content": [{"type": "text", "text": value}]}
    return value


def _get(action, key, default=None):
    if isinstance(action, dict):
        return action.get(key, default)
    return getattr(action, key, default)


class _Host:
    def __init__(self, stdin, stdout):
        self.stdin = stdin
        self.stdout = stdout
        self.next_id = 1
        self.actions = {}
        self.backlog = []

    def send(self, message):
        message = {"jsonrpc": "2.0", **message}
        self.stdout.write(json.dumps(message) + "\n")
        self.stdout.flush()

    def read(self):
        if self.backlog:
            return self.backlog.pop(0)
        while True:
            line = self.stdin.readline()
            if not line:
                return None
            line = line.strip()
            if not line:
                continue
            try:
                return json.loads(line)
            except ValueError:
                print(f"resolve_desk_tool: ignoring a line that is not JSON: {line[:120]}", file=sys.stderr)

    def request(self, method, params):
        rid = f"t{self.next_id}"
        self.next_id += 1
        self.send({"id": rid, "method": method, "params": params})
        while True:
            message = self.read()
            if message is None:
                raise PushError("the host closed the connection")
            if message.get("id") == rid and "method" not in message:
                if "error" in message:
                    raise PushError(message["error"].get("message", "error"))
                return message.get("result")
            self.backlog.append(message)


class _Api:
    def __init__(self, host):
        self._host = host
        self.typebox = typebox

    def push_pending_action(self, action):
        """Queues a pending action and returns its id (raises PushError if the host refuses)."""
        label = _get(action, "label")
        if not isinstance(label, str) or not label.strip():
            raise ValueError("push_pending_action: `label` must be a non-empty string")
        change_set = _get(action, "changeSet") or _get(action, "change_set")
        apply = _get(action, "apply")
        reject = _get(action, "reject")
        if apply is None and change_set is None:
            raise ValueError("push_pending_action: `apply(reason)` is required (or hand a `changeSet`)")
        params = {"label": label, "hasReject": reject is not None}
        source = _get(action, "sourceToolName") or _get(action, "source_tool_name")
        if source is not None:
            params["sourceToolName"] = source
        details = _get(action, "details")
        if details is not None:
            params["details"] = details
        if change_set is not None:
            params["changeSet"] = change_set
        result = self._host.request("pushPendingAction", params)
        action_id = result["actionId"]
        if change_set is None:
            self._host.actions[action_id] = (apply, reject)
        return action_id

    pushPendingAction = push_pending_action

    def progress(self, done, total=None, message=None):
        self._host.send({"method": "progress", "params": {"done": done, "total": total, "message": message}})

    sha256 = staticmethod(sha256)
    read_workspace_file = staticmethod(read_workspace_file)
    workspace_root = staticmethod(workspace_root)


def serve(factory, stdin=None, stdout=None, tool_name=None, desk_protocol=None):
    """Serves the tool a factory makes until the host closes stdin."""
    stdin = stdin or sys.stdin
    real_stdout = stdout or sys.stdout
    # stdout carries JSON-RPC only: print() goes to stderr (the tool's log).
    sys.stdout = sys.stderr
    host = _Host(stdin, real_stdout)
    api = _Api(host)
    mismatch = protocol_mismatch(desk_protocol)
    if mismatch:
        # A desk of another protocol: every call is answered with why, and nothing else runs.
        print(f"resolve_desk_tool: {mismatch}", file=sys.stderr)
        while True:
            message = host.read()
            if message is None:
                return
            if message.get("id") is not None and "method" in message:
                host.send({"id": message["id"], "error": {"code": -32002, "message": mismatch}})
    made = factory(api)
    tools = made if isinstance(made, list) else [made]
    wanted = tool_name or os.environ.get("RESOLVE_DESK_TOOL")
    tool = next((t for t in tools if _get(t, "name") == wanted), tools[0] if len(tools) == 1 else None)
    while True:
        message = host.read()
        if message is None:
            return
        if "method" not in message:
            continue
        mid = message.get("id")
        method = message["method"]
        params = message.get("params") or {}
        try:
            if method == "execute":
                if tool is None:
                    raise RuntimeError(f"this program does not serve {wanted}")
                result = _await(_get(tool, "execute")(params.get("toolCallId"), params.get("params") or {}))
                host.send({"id": mid, "result": _result(result) or {"content": []}})
            elif method in ("apply", "reject"):
                entry = host.actions.pop(params.get("actionId"), None)
                if entry is None:
                    raise RuntimeError(f"no action {params.get('actionId')} in this process")
                fn = entry[0] if method == "apply" else entry[1]
                result = _await(fn(params.get("reason", ""))) if fn else None
                host.send({"id": mid, "result": _result(result)})
            elif method == "cancel":
                pass
            elif mid is not None:
                host.send({"id": mid, "error": {"code": -32601, "message": f"unknown method {method}"}})
        except PushError as err:
            if mid is not None:
                host.send({"id": mid, "error": {"code": -32001, "message": str(err)}})
        except Exception as err:  # noqa: BLE001 - every failure is answered, never a crash
            if mid is not None:
                host.send({"id": mid, "error": {"code": -32000, "message": f"{type(err).__name__}: {err}"}})


def run_file(path):
    """Loads ``path`` and serves its ``factory`` (or ``default``)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("resolve_desk_user_tool", os.path.abspath(path))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    factory = getattr(module, "factory", None) or getattr(module, "default", None)
    if not callable(factory):
        print(f"{path}: define `factory(pi)` returning the tool", file=sys.stderr)
        sys.exit(2)
    serve(factory)
