#!/usr/bin/env python3
"""Minimal, faithful mock of the Gemini API (v1beta generateContent / streamGenerateContent)
for driving the real Gemini CLI binary.

Usage: python3 mock_gemini.py --port 8931 --scenario scenario.json --log requests.jsonl

Point the CLI at it with GOOGLE_GEMINI_BASE_URL=http://127.0.0.1:8931 (the @google/genai SDK then
POSTs to /v1beta/models/<model>:streamGenerateContent?alt=sse).

scenario.json: {"turns": [ <turn>, <turn>, ... ]}
  A <turn> is a list of Gemini "parts" the model answers with, e.g.
    [{"functionCall": {"name": "replace", "args": {...}}}]   or   [{"text": "Done."}]
  The turn answered is chosen statelessly: index = number of role=="model" entries already in
  request.contents (turn 0 = first agent request, turn 1 = request carrying the tool result, ...).
  Past the end, the last turn is repeated.
Requests WITHOUT a `tools` field are utility calls (next-speaker check, classifier, loop
check, edit corrector...). They are answered with the JSON in scenario["utility"] (default
{"next_speaker":"user","reasoning":"mock"}) and are logged with kind="utility" so you can
see whether any happened.
Every request is appended to the log file as one JSON line {n, kind, method, path, headers, body}.
"""
import argparse
import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

LOCK = threading.Lock()
COUNTER = [0]


def make_handler(args):
    class H(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, fmt, *a):  # quiet
            sys.stderr.write("[mock] " + (fmt % a) + "\n")

        def _log(self, kind, body):
            with LOCK:
                COUNTER[0] += 1
                rec = {
                    "n": COUNTER[0],
                    "kind": kind,
                    "method": self.command,
                    "path": self.path,
                    "headers": {k: v for k, v in self.headers.items()
                                if k.lower() in ("user-agent", "x-goog-api-key", "content-type",
                                                 "x-goog-api-client", "authorization")},
                    "body": body,
                }
                with open(args.log, "a") as f:
                    f.write(json.dumps(rec) + "\n")
                return COUNTER[0]

        def _send_json(self, obj, status=200):
            data = json.dumps(obj).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json; charset=UTF-8")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self):
            self._log("get", None)
            if "/models" in self.path:
                self._send_json({"models": [{"name": "models/gemini-2.5-flash",
                                             "supportedGenerationMethods": ["generateContent"]}]})
            else:
                self._send_json({"error": {"code": 404, "message": "not found", "status": "NOT_FOUND"}}, 404)

        def do_POST(self):
            n = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(n) if n else b""
            try:
                body = json.loads(raw or b"{}")
            except Exception:
                body = {"_raw": raw.decode("utf-8", "replace")}
            path = self.path
            model = path.split("/models/")[-1].split(":")[0] if "/models/" in path else "unknown"
            scen = json.load(open(args.scenario))
            if path.split("?")[0].endswith(":countTokens"):
                self._log("countTokens", body)
                return self._send_json({"totalTokens": 100})
            is_main = bool(body.get("tools"))
            if is_main:
                turns = scen["turns"]
                idx = sum(1 for c in body.get("contents", []) if c.get("role") == "model")
                parts = turns[min(idx, len(turns) - 1)]
                kind = f"main(turn={idx})"
            else:
                util = scen.get("utility", {"next_speaker": "user", "reasoning": "mock"})
                parts = [{"text": json.dumps(util)}]
                kind = "utility"
            self._log(kind, body)
            resp = {
                "candidates": [{"content": {"role": "model", "parts": parts},
                                "finishReason": "STOP", "index": 0}],
                "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5,
                                  "totalTokenCount": 15},
                "modelVersion": model,
                "responseId": f"mock-{COUNTER[0]}",
            }
            if ":streamGenerateContent" in path:
                chunk = ("data: " + json.dumps(resp) + "\r\n\r\n").encode()
                self.send_response(200)
                if "alt=sse" in path:
                    self.send_header("Content-Type", "text/event-stream")
                    self.send_header("Content-Length", str(len(chunk)))
                    self.end_headers()
                    self.wfile.write(chunk)
                else:  # JSON array form
                    data = json.dumps([resp]).encode()
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
            else:
                self._send_json(resp)

    return H


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, default=8931)
    ap.add_argument("--scenario", required=True)
    ap.add_argument("--log", required=True)
    args = ap.parse_args()
    srv = ThreadingHTTPServer(("127.0.0.1", args.port), make_handler(args))
    sys.stderr.write(f"[mock] listening on 127.0.0.1:{args.port}\n")
    srv.serve_forever()


if __name__ == "__main__":
    main()
