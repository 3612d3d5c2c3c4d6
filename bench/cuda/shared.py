"""What bench/cuda/ borrows from bench/cpu/ (by import, not by copy): host
facts and versions (hostinfo.py) and run.py's quantile rule, number
formatting, geometric mean and `cagr bench --help` probe."""
import importlib.util
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
CPU_DIR = os.path.join(ROOT, "bench", "cpu")
ZOO = os.path.join(ROOT, "zoo")
for d in (CPU_DIR, ZOO):
    if d not in sys.path:
        sys.path.append(d)

import hostinfo  # noqa: E402  (bench/cpu/hostinfo.py)


def _load_cpu_bench():
    spec = importlib.util.spec_from_file_location("cpu_side_by_side", os.path.join(CPU_DIR, "run.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


_cpu = _load_cpu_bench()
quantile, fmt, geomean, cagr_options = _cpu.quantile, _cpu.fmt, _cpu.geomean, _cpu.cagr_options
host_info, versions = hostinfo.host_info, hostinfo.versions
