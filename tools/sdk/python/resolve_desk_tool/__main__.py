import sys

from . import run_file

if len(sys.argv) != 2:
    print("usage: python3 -m resolve_desk_tool <tool.py>", file=sys.stderr)
    sys.exit(2)
run_file(sys.argv[1])
