#!/usr/bin/env python3
"""Writes src-tauri/link-order.txt: the app's functions that run while it starts and shows an action.

Release builds link these functions first, in the order they first ran (src-tauri/build.rs): code
is mapped in 64 KiB windows around each page that runs, so hot functions scattered over 18 MB of
code kept most of it resident (docs/PERFORMANCE.md, "App start and footprint").

It runs each release build given twice under Xvfb with scripts/trace-hot-functions.c preloaded
(an int3 on every function's entry, reported once): with a 5,000-replacement / 1,000-file
ast_edit action open (tests/e2e/bigfiles.js), then on the demo. Each run lasts until the page has
painted (the app's start-up mark) and no new function has run for 2 s.

Symbol names carry hashes of the toolchain, the profile, the dependencies' versions and their
features. `cargo build --release` (scripts/run.sh, the benchmarks) and the Tauri CLI's build
(scripts/package-deb.sh, what users install: it turns on `tauri/custom-protocol`) differ in
features, so about a fifth of the names differ: give both builds, the list holds the names of each.

  cargo build -p resolve-desk --release && cp $CARGO_TARGET_DIR/release/resolve-desk /tmp/rd-cargo
  scripts/package-deb.sh            # leaves the Tauri CLI's build in $CARGO_TARGET_DIR/release
  python3 scripts/trace-hot-functions.py --app /tmp/rd-cargo --app $CARGO_TARGET_DIR/release/resolve-desk
  python3 scripts/trace-hot-functions.py --app ... --check   # how many listed names each build has

After a change of the toolchain or the dependencies, run it again (and rebuild). A name a build
lacks is skipped by the linker, so a stale list costs memory, not correctness.
"""

import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from xvfb_app import ROOT, big_workspace, start_xvfb

ORDER = ROOT / "src-tauri" / "link-order.txt"
HEADER = ("# Functions the app runs while it starts and shows an action, in the order they first ran.\n"
          "# Made by scripts/trace-hot-functions.py from a release build; read by src-tauri/build.rs.\n")
QUIET = 2.0
TIMEOUT = 120.0


def text_symbols(app):
    """Function entry address -> names, from the binary's symbol table."""
    out = subprocess.run(["nm", "-S", "--defined-only", app], check=True, capture_output=True, text=True).stdout
    names = {}
    for line in out.splitlines():
        parts = line.split(None, 3)
        if len(parts) == 4 and parts[2] in "tTwW" and int(parts[1], 16) > 0:
            names.setdefault(int(parts[0], 16), []).append(parts[3])
    if not names:
        sys.exit(f"trace-hot-functions: {app} has no symbol table (was it fully stripped?)")
    return names


def trace(app, args, tracer, funcs, tmp):
    """Runs the app once under the tracer; returns the entries in the order they first ran."""
    xvfb, display = start_xvfb("trace-hot-functions", range(140, 190))
    home = Path(tempfile.mkdtemp(prefix="home-", dir=tmp))
    log, mark = home / "trace.txt", home / "mark.json"
    env = dict(os.environ, DISPLAY=display, XDG_DATA_HOME=f"{home}/data", XDG_CONFIG_HOME=f"{home}/config",
               XDG_CACHE_HOME=f"{home}/cache", XDG_STATE_HOME=f"{home}/state", LD_PRELOAD=tracer,
               TRACE_EXE_NAME=Path(app).name, TRACE_FUNCS=funcs, TRACE_OUT=str(log),
               RESOLVE_DESK_STARTUP_MARK=str(mark))
    env.pop("WAYLAND_DISPLAY", None)
    proc = subprocess.Popen([app, *args, "--data-dir", str(home / "app-data")], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
    try:
        start, size, grew = time.monotonic(), -1, time.monotonic()
        while True:
            now = time.monotonic()
            if proc.poll() is not None:
                sys.exit(f"trace-hot-functions: the app exited ({proc.returncode}): "
                         f"{proc.stderr.read().decode()[-2000:]}")
            current = log.stat().st_size if log.exists() else 0
            if current != size:
                size, grew = current, now
            if mark.exists() and now - grew >= QUIET:
                break
            if now - start > TIMEOUT:
                sys.exit(f"trace-hot-functions: the app did not paint and settle in {TIMEOUT:.0f} s")
            time.sleep(0.1)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        xvfb.kill()
        xvfb.wait()
    seen, order = set(), []
    for line in log.read_text().split():
        entry = int(line, 16)
        if entry not in seen:
            seen.add(entry)
            order.append(entry)
    return order


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--app", required=True, action="append",
                    help="a release build of resolve-desk with its symbol table (repeat for each kind of build)")
    ap.add_argument("--check", action="store_true", help="only say how many listed names each build has")
    args = ap.parse_args()
    apps = [str(Path(a).resolve()) for a in args.app]
    if args.check:
        listed = [l for l in ORDER.read_text().splitlines() if l and not l.startswith("#")]
        for app in apps:
            have = {n for ns in text_symbols(app).values() for n in ns}
            found = sum(1 for n in listed if n in have)
            print(f"{found} of {len(listed)} names in {ORDER.relative_to(ROOT)} are in {app}")
        return
    tmp = tempfile.mkdtemp(prefix="rd-trace-")
    try:
        tracer = f"{tmp}/trace.so"
        subprocess.run(["cc", "-O2", "-shared", "-fPIC", "-o", tracer, ROOT / "scripts" / "trace-hot-functions.c"],
                       check=True)
        ws = big_workspace()
        runs = [("5,000-replacement action", [ws["ws"], "--script", ws["script"]]), ("demo", [])]
        listed, order = set(), []
        for app in apps:
            names = text_symbols(app)
            funcs = f"{tmp}/funcs.txt"
            Path(funcs).write_text("".join(f"{a:x}\n" for a in sorted(names)))
            for label, run_args in runs:
                entries = trace(app, run_args, tracer, funcs, tmp)
                print(f"{app}, {label}: {len(entries)} functions ran")
                for e in entries:
                    for name in names[e]:
                        if name not in listed:
                            listed.add(name)
                            order.append(name)
        shutil.rmtree(ws["ws"], ignore_errors=True)
        ORDER.write_text(HEADER + "".join(n + "\n" for n in order))
        print(f"wrote {len(order)} names to {ORDER.relative_to(ROOT)}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
