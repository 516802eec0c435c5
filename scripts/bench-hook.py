#!/usr/bin/env python3
"""What Claude Code's edit hook costs (a benchmark, not a test): wall time of the real
`rdesk hook claude-code --policy agent` from its start to its answer (process start, desk
opened with the journal, the preview, the decision, the journal flushed), run as Claude Code
runs it (hook JSON on stdin), for:

- one Edit in a 200-line file (the common case);
- one Edit in a 20,000-line file (the preview of a big file);
- and, through `rdesk run` (one process, its start subtracted), the `edit_file` preview of one
  edit in the 20,000-line file and one `apply_patch` preview touching 200 files.

  cargo build --release -p resolve-cli
  python3 scripts/bench-hook.py --rdesk $CARGO_TARGET_DIR/release/rdesk --runs 30
"""

import argparse
import json
import os
import statistics
import subprocess
import tempfile
import time
from pathlib import Path


def timed(cmd, stdin, env, cwd=None):
    t = time.perf_counter()
    out = subprocess.run(cmd, input=stdin, env=env, cwd=cwd, capture_output=True, text=True)
    ms = (time.perf_counter() - t) * 1000
    return ms, out


def summary(name, xs):
    xs = sorted(xs)
    p90 = xs[int(len(xs) * 0.9) - 1] if len(xs) >= 10 else xs[-1]
    print(f"{name:<48} median {statistics.median(xs):7.1f} ms   p90 {p90:7.1f} ms   (n={len(xs)})")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rdesk", required=True)
    ap.add_argument("--runs", type=int, default=30)
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="rd-bench-hook-"))
    ws = tmp / "ws"
    (ws / "src").mkdir(parents=True)
    (ws / "src/small.ts").write_text("".join(f"export const v{i} = {i};\n" for i in range(200)))
    (ws / "src/big.ts").write_text("".join(f"export const v{i} = {i}; // line {i}\n" for i in range(20_000)))
    for i in range(200):
        (ws / f"src/m{i}.ts").write_text(f"export const name{i} = 'old';\nexport const n{i} = {i};\n")
    env = {**os.environ, "XDG_DATA_HOME": str(tmp / "data"), "XDG_RUNTIME_DIR": str(tmp / "run"),
           "XDG_CONFIG_HOME": str(tmp / "config"), "CLAUDE_PROJECT_DIR": str(ws)}
    (tmp / "run").mkdir(mode=0o700)

    def hook_input(file, old, new, k):
        return json.dumps({"session_id": "bench", "cwd": str(ws), "hook_event_name": "PreToolUse", "tool_name": "Edit",
                           "tool_input": {"file_path": str(ws / file), "old_string": old, "new_string": new},
                           "tool_use_id": f"toolu_bench_{k}"})

    for label, file, old, new in [
        ("hook, agent policy, Edit in a 200-line file", "src/small.ts", "export const v100 = 100;", "export const v100 = 101;"),
        ("hook, agent policy, Edit in a 20,000-line file", "src/big.ts", "export const v10000 = 10000;", "export const v10000 = 1;"),
    ]:
        xs = []
        for k in range(args.runs + 2):
            ms, out = timed([args.rdesk, "hook", "claude-code", "--policy", "agent"], hook_input(file, old, new, k), env)
            answer = json.loads(out.stdout)["hookSpecificOutput"]
            assert answer["permissionDecision"] == "allow", answer
            if k >= 2:  # the first runs warm the page cache and create the journal
                xs.append(ms)
        summary(label, xs)

    patch = "*** Begin Patch\n" + "".join(
        f"*** Update File: src/m{i}.ts\n@@\n-export const name{i} = 'old';\n+export const name{i} = 'new';\n" for i in range(200)
    ) + "*** End Patch\n"
    script = json.dumps({"tool": "apply_patch", "params": {"patch": patch}}) + "\n"
    base, patched = [], []
    for k in range(max(5, args.runs // 3)):
        ms, _ = timed([args.rdesk, "run", "-", "--workspace", str(ws)], "", env)
        base.append(ms)
        ms, out = timed([args.rdesk, "run", "-", "--workspace", str(ws)], script, env)
        step = json.loads(out.stdout.splitlines()[0])
        assert not step["is_error"] and "Edit: 200 files" in step["text"], step["text"][:300]
        patched.append(ms)
    big = json.dumps({"tool": "edit_file", "params": {"path": "src/big.ts", "edits": [{"oldText": "export const v10000 = 10000;", "newText": "export const v10000 = 1;"}]}}) + "\n"
    bigs = []
    for k in range(max(5, args.runs // 3)):
        ms, out = timed([args.rdesk, "run", "-", "--workspace", str(ws)], big, env)
        step = json.loads(out.stdout.splitlines()[0])
        assert not step["is_error"], step["text"][:300]
        bigs.append(ms)
    summary("rdesk run, empty script (process start)", base)
    summary("rdesk run, edit_file preview, 20,000-line file", bigs)
    print(f"{'edit_file in a 20,000-line file, start subtracted':<48} median {statistics.median(bigs) - statistics.median(base):7.1f} ms")
    summary("rdesk run, apply_patch preview of 200 files", patched)
    print(f"{'apply_patch of 200 files, start subtracted':<48} median {statistics.median(patched) - statistics.median(base):7.1f} ms")


if __name__ == "__main__":
    main()
