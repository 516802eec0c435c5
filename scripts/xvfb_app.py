"""What scripts/bench-startup.py and scripts/trace-hot-functions.py share: a screen of their own
and the 5,000-replacement workspace of tests/e2e/bigfiles.js."""

import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WIDTH, HEIGHT = 1400, 900


def start_xvfb(who, displays=range(90, 190)):
    """Starts Xvfb on the first free display; returns (process, ":N")."""
    for n in displays:
        if Path(f"/tmp/.X11-unix/X{n}").exists() or Path(f"/tmp/.X{n}-lock").exists():
            continue
        p = subprocess.Popen(
            ["Xvfb", f":{n}", "-screen", "0", f"{WIDTH}x{HEIGHT}x24", "-nolisten", "tcp"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if Path(f"/tmp/.X11-unix/X{n}").exists():
                return p, f":{n}"
            if p.poll() is not None:
                break
            time.sleep(0.01)
        p.kill()
    sys.exit(f"{who}: cannot start Xvfb (is the xvfb package installed?)")


def big_workspace():
    """A fresh 1,000-file workspace and the script that pushes its 5,000-replacement ast_edit
    action: {"ws": folder, "script": file}."""
    code = "import('./tests/e2e/bigfiles.js').then((m) => console.log(JSON.stringify(m.manyFiles())))"
    return json.loads(subprocess.check_output(["node", "--input-type=module", "-e", code], cwd=ROOT))
