#!/usr/bin/env python3
"""Runs a Python tool file: ``python3 run.py tool.py`` (no install needed)."""
import os
import sys

sys.dont_write_bytecode = True  # nothing written into the (watched) tool folder
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from resolve_desk_tool import run_file  # noqa: E402

if len(sys.argv) != 2:
    print("usage: run.py <tool.py>", file=sys.stderr)
    sys.exit(2)
run_file(sys.argv[1])
