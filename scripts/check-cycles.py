#!/usr/bin/env python3
"""Fails when two modules of a crate import each other, directly or around a circle.

`check-cycles.py SRC_DIR...`: for each crate's source folder, every top-level module (a file
`x.rs` or a folder `x/`) and the `crate::<module>` paths its code names (comments and
`#[cfg(test)]` blocks aside). A circle is printed with each module's imports inside it.
"""
import os
import re
import sys


def modules(root):
    mods = {}
    for dirpath, _, files in os.walk(root):
        for f in files:
            if not f.endswith(".rs"):
                continue
            path = os.path.join(dirpath, f)
            top = os.path.relpath(path, root).split(os.sep)[0].removesuffix(".rs")
            if top not in ("lib", "main"):
                mods.setdefault(top, []).append(path)
    return mods


def imports(mods):
    edges = {m: set() for m in mods}
    for m, files in mods.items():
        for path in files:
            for line in open(path, encoding="utf-8"):
                text = line.strip()
                if text.startswith("#[cfg(test)]"):
                    break  # test modules sit at the end of a file
                if text.startswith("//"):
                    continue
                for target in re.findall(r"\bcrate::([a-z_0-9]+)", line):
                    if target in mods and target != m:
                        edges[m].add(target)
    return edges


def circles(edges):
    index, low, stack, on, found, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


status = 0
for root in sys.argv[1:]:
    edges = imports(modules(root))
    for comp in circles(edges):
        status = 1
        print(f"check-deps: modules of {root} import each other in a circle:", file=sys.stderr)
        for m in comp:
            print(f"  {m} -> {', '.join(sorted(edges[m] & set(comp)))}", file=sys.stderr)
sys.exit(status)
