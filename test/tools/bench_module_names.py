#!/usr/bin/env python3
"""The benchmark folders share one sys.path: bench/cuda/shared.py appends
bench/cpu (and zoo), and bench/rl imports its siblings. A module name found in
two of those folders makes `import <name>` resolve to whichever folder comes
first, which broke bench/cuda/run.py once (bench/cpu's report.py). Fails,
naming both files, when two folders define the same module. The entry points
(run.py) are never imported by name (shared.py loads bench/cpu/run.py from its
path), so they may share a name."""
import os
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
FOLDERS = ["bench/cuda", "bench/cpu", "zoo"]

seen = {}
clashes = []
for folder in FOLDERS:
    for name in sorted(os.listdir(os.path.join(ROOT, folder))):
        if not name.endswith(".py") or name == "run.py":
            continue
        module = name[:-3]
        here = os.path.join(folder, name)
        if module in seen:
            clashes.append(f"{seen[module]} and {here} are both module '{module}'")
        else:
            seen[module] = here
for c in clashes:
    print(c)
sys.exit(1 if clashes else 0)
