#!/usr/bin/env python3
"""Resident memory of `rdesk run` over many previews of the 5,000-replacement demo rewrite.

Usage:
  python3 scripts/bench-memory-run.py [--rdesk PATH] [--rounds N] [--shape many|big] [--keep]

Makes the workspace of tests/e2e/bigfiles.js through node (`many`: 1,000 TypeScript files with
5 `console.log` calls each; `big`: one 20,000-line file with 5,000), starts
`rdesk run - --workspace WS` and feeds it one step at a time on standard input: an `ast_edit`
preview (`console.log($$$A)` -> `logger.debug($$$A)`), then a discard of it (unless --keep).
After each round it waits for the steps' output lines, then reads the process's VmRSS from
/proc/PID/status, so every sample is taken between rounds, with nothing running. Prints RSS
after round 1 and after round N and their ratio. Linux only.

Default rdesk: $CARGO_TARGET_DIR/release/rdesk (build it with
`cargo build --release -p resolve-cli`).
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import time

DISCARD = {"tool": "resolve", "params": {"action": "discard", "reason": "memory bench"}}
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def workspace(shape):
    """The workspace of tests/e2e/bigfiles.js (`manyFiles` or `bigFile`) and its ast_edit step."""
    fn = "manyFiles" if shape == "many" else "bigFile"
    code = f"import('./tests/e2e/bigfiles.js').then((m) => console.log(JSON.stringify(m.{fn}())))"
    made = json.loads(subprocess.check_output(["node", "--input-type=module", "-e", code], cwd=ROOT))
    with open(made["script"]) as fh:
        edit = json.loads(fh.readline())
    return made["ws"], made["script"], edit


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    target = os.environ.get("CARGO_TARGET_DIR", "target")
    ap.add_argument("--rdesk", default=os.path.join(target, "release", "rdesk"))
    ap.add_argument("--rounds", type=int, default=100)
    ap.add_argument("--shape", choices=["many", "big"], default="many")
    ap.add_argument("--keep", action="store_true", help="keep every preview on the stack (no discard)")
    args = ap.parse_args()
    if not os.path.exists(args.rdesk):
        sys.exit(f"bench-memory-run: no rdesk at {args.rdesk}; build it with `cargo build --release -p resolve-cli` or pass --rdesk")
    if args.rounds < 1:
        sys.exit(f"bench-memory-run: --rounds must be at least 1, got {args.rounds}")

    ws, script, edit = workspace(args.shape)
    try:
        proc = subprocess.Popen([args.rdesk, "run", "-", "--workspace", ws], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, text=True, bufsize=1)
        start = rss_kib(proc.pid)
        first = last = 0
        label = ""
        t0 = time.monotonic()
        for r in range(1, args.rounds + 1):
            steps = [edit] if args.keep else [edit, DISCARD]
            for step in steps:
                proc.stdin.write(json.dumps(step) + "\n")
                proc.stdin.flush()
                out = proc.stdout.readline()
                if not out:
                    sys.exit(f"bench-memory-run: rdesk ended early (exit {proc.wait()})")
                report = json.loads(out)
                if report["is_error"]:
                    sys.exit(f"bench-memory-run: step {report['step']} failed: {report['text'][:300]}")
                if r == 1 and step is edit:
                    label = report["pending"][0]["label"]
            if r == 1:
                first = rss_kib(proc.pid)
            last = rss_kib(proc.pid)
        secs = time.monotonic() - t0
        proc.stdin.close()
        proc.wait()
        mode = "kept on the stack (--keep)" if args.keep else "each discarded"
        print(f"rdesk run, shape {args.shape} ({label}), {args.rounds} previews {mode}, {secs:.1f} s")
        print(f"RSS at start: {start / 1024:.1f} MiB")
        print(f"RSS after preview 1: {first / 1024:.1f} MiB")
        print(f"RSS after preview {args.rounds}: {last / 1024:.1f} MiB")
        print(f"ratio: {last / max(first, 1):.2f}x")
    finally:
        shutil.rmtree(ws, ignore_errors=True)
        os.unlink(script)


if __name__ == "__main__":
    main()
