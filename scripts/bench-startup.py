#!/usr/bin/env python3
"""Start-up and footprint of the app against WebKitGTK's floor (a benchmark, not a test).

For each program — WebKitGTK's own MiniBrowser on a static page (the floor; once with WebKit's
defaults and once with the renderer the app picks on a machine without a GPU, see
src-tauri/src/renderer.rs) and Resolve Desk —
it starts the program on its own Xvfb screen, with fresh XDG folders, and takes a screenshot
every 20 ms (the same method for both) until the screen has not changed for 1.5 s:

- first change: the first screenshot that differs from the empty screen by >= 1% of its pixels
  (the window is mapped);
- painted: the first screenshot in which >= 99% of the pixels that differ between the empty
  screen and the settled screen already have their settled value (the first screen a person
  sees, complete);
- the app's own marker: the app writes its start-up profile (RESOLVE_DESK_STARTUP_MARK) when the
  page has painted the queue; its "painted" time is read on the launcher's clock.

Then the resident memory (VmRSS) of the program's process and the sum over its descendants
(WebKit's web and network processes). The app is measured twice: on the demo (start-up) and on a
workspace with a 5,000-replacement / 1,000-file ast_edit action open (tests/e2e/bigfiles.js).

  pip install mss numpy
  python3 scripts/bench-startup.py --app $CARGO_TARGET_DIR/release/resolve-desk --runs 5

Needs Xvfb, node (for the big workspace), MiniBrowser from libwebkit2gtk-4.1-0.
"""

import argparse
import json
import os
import shutil
import signal
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

import mss
import numpy as np

from xvfb_app import HEIGHT, ROOT, WIDTH, big_workspace, start_xvfb

MINIBROWSER = "/usr/lib/x86_64-linux-gnu/webkit2gtk-4.1/MiniBrowser"
TICK = 0.020
SETTLE = 1.5
TIMEOUT = 60.0


def descendants(pid):
    children = {}
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            stat = (d / "stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(ppid, []).append(int(d.name))
    out, todo = [], [pid]
    while todo:
        for c in children.get(todo.pop(), []):
            out.append(c)
            todo.append(c)
    return out


def rss_kib(pid):
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def names(pids):
    out = []
    for p in pids:
        try:
            out.append(Path(f"/proc/{p}/comm").read_text().strip())
        except OSError:
            pass
    return out


def run_one(cmd, display, mark_file=None, extra_env=None):
    """Starts cmd, screenshots until settled; returns timings (s) and memory (KiB)."""
    home = tempfile.mkdtemp(prefix="rd-bench-startup-")
    env = dict(os.environ, DISPLAY=display, XDG_DATA_HOME=f"{home}/data", XDG_CONFIG_HOME=f"{home}/config",
               XDG_CACHE_HOME=f"{home}/cache", XDG_STATE_HOME=f"{home}/state", **(extra_env or {}))
    env.pop("WAYLAND_DISPLAY", None)
    # WebKit's defaults unless extra_env says otherwise; the app makes its own choice (renderer.rs).
    env.pop("WEBKIT_DISABLE_DMABUF_RENDERER", None)
    env.pop("WEBKIT_DISABLE_COMPOSITING_MODE", None)
    env.update(extra_env or {})
    if mark_file:
        env["RESOLVE_DESK_STARTUP_MARK"] = mark_file
    with mss.mss(display=display) as sct:
        mon = sct.monitors[0]

        def grab():
            raw = np.frombuffer(sct.grab(mon).raw, np.uint8).reshape(mon["height"], mon["width"], 4)
            return raw[::2, ::2, :3].copy()

        empty = grab()
        wall0 = time.time()
        t0 = time.monotonic()
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                start_new_session=True)
        shots = []
        last_change = None
        try:
            while True:
                t = time.monotonic() - t0
                shot = grab()
                if shots and not np.array_equal(shot, shots[-1][1]):
                    last_change = t
                elif not shots and not np.array_equal(shot, empty):
                    last_change = t
                shots.append((t, shot))
                marked = mark_file is None or Path(mark_file).exists()
                if last_change is not None and marked and t - last_change >= SETTLE:
                    break
                if t > TIMEOUT:
                    raise RuntimeError(f"{cmd[0]} did not settle in {TIMEOUT} s")
                if proc.poll() is not None:
                    raise RuntimeError(f"{cmd[0]} exited ({proc.returncode}): {proc.stderr.read().decode()[-2000:]}")
                time.sleep(max(0.0, TICK - (time.monotonic() - t0 - t)))
            pids = descendants(proc.pid)
            mem = {"process": rss_kib(proc.pid), "children": sum(rss_kib(p) for p in pids), "names": names(pids)}
        finally:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            shutil.rmtree(home, ignore_errors=True)
    final = shots[-1][1]
    moved = np.any(final != empty, axis=2)
    n_moved = int(moved.sum())
    first_change = next((t for t, s in shots if np.any(s != empty, axis=2).mean() >= 0.01), None)
    painted = next(
        (t for t, s in shots if n_moved and np.all(s == final, axis=2)[moved].mean() >= 0.99), None)
    out = {"first_change": first_change, "painted": painted, "mem": mem}
    if mark_file:
        profile = json.loads(Path(mark_file).read_text())
        os.unlink(mark_file)
        out["marker"] = profile["painted_epoch_ms"] / 1000.0 - wall0
        out["profile"] = profile
    return out


def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--app", required=True, help="the resolve-desk binary (a release build)")
    ap.add_argument("--minibrowser", default=MINIBROWSER)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--json", help="also write every run here")
    args = ap.parse_args()
    xvfb, display = start_xvfb("bench-startup", range(90, 140))
    page = (ROOT / "scripts/bench/static-page.html").as_uri()
    programs = {
        "MiniBrowser (static page)": lambda: run_one([args.minibrowser, f"--geometry={WIDTH}x{HEIGHT}", page], display),
        # The same floor with the renderer the app picks on a machine without a GPU (renderer.rs).
        "MiniBrowser (static page), WEBKIT_DISABLE_DMABUF_RENDERER=1": lambda: run_one(
            [args.minibrowser, f"--geometry={WIDTH}x{HEIGHT}", page], display,
            extra_env={"WEBKIT_DISABLE_DMABUF_RENDERER": "1"}),
        "Resolve Desk (demo)": lambda: run_one(
            [args.app, "--data-dir", tempfile.mkdtemp(prefix="rd-bench-data-")], display,
            mark_file=tempfile.mktemp(prefix="rd-startup-", suffix=".json")),
    }
    results = {k: [] for k in programs}
    big = []
    try:
        for name, fn in programs.items():
            fn()  # warm-up: the binaries and libraries in the page cache
        for _ in range(args.runs):
            for name, fn in programs.items():
                results[name].append(fn())
        ws = big_workspace()
        for _ in range(max(1, args.runs // 2)):
            big.append(run_one([args.app, ws["ws"], "--script", ws["script"], "--data-dir",
                                tempfile.mkdtemp(prefix="rd-bench-data-")], display,
                               mark_file=tempfile.mktemp(prefix="rd-startup-", suffix=".json")))
    finally:
        xvfb.kill()
    ms = lambda s: "—" if s is None else f"{s * 1000:.0f} ms"
    mib = lambda k: f"{k / 1024:.0f} MiB"
    print(f"app: {args.app}; runs: {args.runs} (medians); screen {WIDTH}x{HEIGHT}; "
          f"load average before: {os.getloadavg()[0]:.2f}\n")
    print("| program | window mapped (screenshots) | first screen painted (screenshots) | app's own marker: queue painted | process RSS | WebKit processes RSS |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, rs in list(results.items()) + [("Resolve Desk, 5,000-replacement action open", big)]:
        print(f"| {name} | {ms(med([r['first_change'] for r in rs]))} | {ms(med([r['painted'] for r in rs]))} | "
              f"{ms(med([r.get('marker') for r in rs]))} | {mib(med([r['mem']['process'] for r in rs]))} | "
              f"{mib(med([r['mem']['children'] for r in rs]))} ({', '.join(sorted(set(rs[0]['mem']['names'])))}) |")
    demo = results["Resolve Desk (demo)"]
    print(f"\nThe app's WEBKIT_DISABLE_DMABUF_RENDERER: {demo[0]['profile'].get('webkit_disable_dmabuf_renderer')}")
    print("\nThe app's start-up profile (median ms since the process started):")
    phases = {}
    for r in demo:
        p = r["profile"]
        base = p["before_main_ms"]
        phases.setdefault("exec → main", []).append(base)
        for k, v in p["shell_ms_since_main"].items():
            phases.setdefault(f"shell: {k}", []).append(base + v)
        for k, v in p["page_ms_since_main"].items():
            phases.setdefault(f"page: {k}", []).append(base + v)
    for k, v in sorted(phases.items(), key=lambda kv: statistics.median(kv[1])):
        print(f"  {statistics.median(v):8.1f}  {k}")
    if args.json:
        Path(args.json).write_text(json.dumps({"programs": results, "big": big}, default=str, indent=1))


if __name__ == "__main__":
    main()
