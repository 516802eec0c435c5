#!/usr/bin/env python3
"""Deletes the test and binary executables of earlier builds from a cargo `deps` folder.

`prune-target.py DEPS_DIR [KEEP]`: every build of a changed crate leaves a new
`<name>-<hash>` executable beside the old ones (the desktop shell's are 0.7 GB each), so a
cache shared by many CI runs fills the disk. Per name, the KEEP newest (default 2) stay;
libraries (`.rlib`, `.rmeta`, `.so`) are never touched. Cargo relinks a deleted one if needed.
"""
import collections
import os
import re
import sys

deps = sys.argv[1]
keep = int(sys.argv[2]) if len(sys.argv) > 2 else 2
groups = collections.defaultdict(list)
for name in os.listdir(deps):
    path = os.path.join(deps, name)
    m = re.fullmatch(r"(.+)-[0-9a-f]{16}", name)
    if m and os.path.isfile(path) and os.access(path, os.X_OK):
        groups[m.group(1)].append(path)
freed = 0
for paths in groups.values():
    paths.sort(key=os.path.getmtime, reverse=True)
    for path in paths[keep:]:
        freed += os.path.getsize(path)
        os.remove(path)
        if os.path.exists(path + ".d"):
            os.remove(path + ".d")
print(f"prune-target: freed {freed / 2**30:.1f} GiB of old executables in {deps}")
