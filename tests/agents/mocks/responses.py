#!/usr/bin/env python3
"""Minimal scripted OpenAI Responses API mock (POST /v1/responses, SSE) for Codex CLI.

Usage: mock_responses.py PORT SCENARIO.json LOG.jsonl

SCENARIO.json: {"turns": [ [item, item, ...], [item, ...], ... ]}
Each item is a Responses output item exactly as Codex parses it (codex_protocol ResponseItem):
  {"type":"message","role":"assistant","content":[{"type":"output_text","text":"..."}]}
  {"type":"function_call","name":"shell","arguments":"{...json string...}","call_id":"call_1"}
  {"type":"custom_tool_call","name":"apply_patch","input":"*** Begin Patch\n...","call_id":"call_1"}
Turn selection: turn index = number of tool-output items (function_call_output /
custom_tool_call_output / ...) already present in the request's `input`. So turn 0 is served
for the first user prompt, turn 1 after the first tool result, etc. Past the end -> last turn.
Every request (method, path, headers, body) is appended to LOG.jsonl.
Event sequence follows codex-rs/codex-api/src/sse/responses.rs: response.created,
response.output_item.added/done per item, output_text.delta for messages, response.completed
(response.id + usage).
"""
import json
import sys
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PORT = int(sys.argv[1])
SCENARIO = sys.argv[2]
LOG = sys.argv[3]

OUTPUT_TYPES = {"function_call_output", "custom_tool_call_output", "local_shell_call_output",
                "tool_search_output", "mcp_tool_call_output"}


def log(entry):
    with open(LOG, "a") as f:
        f.write(json.dumps(entry) + "\n")


class H(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def _body(self):
        n = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(n) if n else b""
        if self.headers.get("content-encoding") == "zstd":
            return {"_raw_zstd_len": len(raw)}
        try:
            return json.loads(raw or b"null")
        except Exception:
            return {"_raw": raw.decode("utf-8", "replace")}

    def do_GET(self):
        log({"t": time.time(), "method": "GET", "path": self.path, "headers": dict(self.headers)})
        if self.path.startswith("/v1/models"):
            body = json.dumps({"models": [], "data": [], "object": "list"}).encode()
            self.send_response(200)
        else:
            body = b'{"error":"not found"}'
            self.send_response(404)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self):
        body = self._body()
        log({"t": time.time(), "method": "POST", "path": self.path, "headers": dict(self.headers),
             "body": body})
        if not self.path.rstrip("/").endswith("/responses"):
            b = b'{"error":"not found"}'
            self.send_response(404)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(b)))
            self.end_headers()
            self.wfile.write(b)
            return
        turns = json.load(open(SCENARIO))["turns"]
        inp = body.get("input") if isinstance(body, dict) else None
        n_out = sum(1 for it in (inp or []) if isinstance(it, dict) and it.get("type") in OUTPUT_TYPES)
        items = turns[min(n_out, len(turns) - 1)]
        rid = "resp_" + uuid.uuid4().hex[:16]
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("connection", "close")
        self.end_headers()
        seq = [0]

        def ev(kind, **fields):
            data = {"type": kind, "sequence_number": seq[0], **fields}
            seq[0] += 1
            self.wfile.write(f"event: {kind}\ndata: {json.dumps(data)}\n\n".encode())
            self.wfile.flush()

        ev("response.created", response={"id": rid, "object": "response", "status": "in_progress",
                                          "output": []})
        for idx, item in enumerate(items):
            item = dict(item)
            item.setdefault("id", ("msg_" if item["type"] == "message" else "fc_") + uuid.uuid4().hex[:16])
            if item["type"] == "message":
                item.setdefault("status", "completed")
                ev("response.output_item.added", output_index=idx,
                   item={**item, "content": [], "status": "in_progress"})
                text = "".join(c.get("text", "") for c in item["content"])
                ev("response.output_text.delta", item_id=item["id"], output_index=idx,
                   content_index=0, delta=text)
            else:
                item.setdefault("status", "completed")
                ev("response.output_item.added", output_index=idx, item=item)
            ev("response.output_item.done", output_index=idx, item=item)
        ev("response.completed", response={
            "id": rid, "object": "response", "status": "completed",
            "usage": {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0},
                      "output_tokens": 5, "output_tokens_details": {"reasoning_tokens": 0},
                      "total_tokens": 15}})
        self.close_connection = True


if __name__ == "__main__":
    srv = ThreadingHTTPServer(("127.0.0.1", PORT), H)
    print(f"mock listening on 127.0.0.1:{PORT}", flush=True)
    srv.serve_forever()
