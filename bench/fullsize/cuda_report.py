#!/usr/bin/env python3
"""The embedding stage of a full-size DLRM on the GPU (issue 39), from
`cagr bench --target cuda --breakdown --json` outputs.

On the GPU machine (see bench/fullsize/README.md):
  python3 bench/fullsize/make_full.py --out /tmp/full
  python3 data/gen.py --dataset criteo --format dlrm --batch B --seed 1 --ids zipf|uniform -o /tmp/full/<ids>B.npz
  cagr bench /tmp/full/dlrm_criteo.ts.full.onnx --target cuda --batch B --inputs /tmp/full/<ids>B.npz \\
      --seconds 1 --breakdown --json > bench_<ids>B.json
Here:
  python3 bench/fullsize/cuda_report.py bench/results/fullsize/bench_*.json [--profile hw.json] > report.md

For the kernel that reads the tables (the lookup, fused or not) it reports
time (measured, median CUDA-graph replay) and the bytes it must move (rows
read + ids + offsets + its output, as cost_rules.cc counts them), the
achieved bandwidth, and that as a fraction of the profile's measured
random-row gather bandwidth (own.gather, same row size and id skew).
"""
import argparse
import json
import re
import sys

# dlrm_criteo: 26 tables of d16, 13 dense features, bottom MLP to 16.
TABLES, DIM, PAIRS = 26, 16, 27 * 26 // 2


def gather_rate(profile, skew):
    for e in json.load(open(profile))["efficiencies"]:
        if e["kernel"] == "own.gather" and e["shape_class"] == f"gather.{skew}":
            m = re.search(rf"{skew} dim16 p1, [^:]*: ([0-9.]+) GB/s", e["source"])
            return float(m.group(1)) * 1e9 if m else e["bytes_per_s"]
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("json", nargs="+")
    ap.add_argument("--profile", default="bench/results/hw/h100-measured.json")
    a = ap.parse_args()
    rows = []
    for path in a.json:
        d = json.load(open(path))
        b = d["batch"]
        skew = "uniform" if "uniform" in path else "zipf"
        look = [k for k in d["breakdown"]["optimized"]["by_kernel"]
                if re.search(r"interaction|embedding|gather", k["kernel"])]
        k = max(look, key=lambda x: x["ms"])
        rows_b, ids_b, offs_b = b * TABLES * DIM * 4, b * TABLES * 8, b * TABLES * 8
        fused = "interaction" in k["kernel"]
        out_b = b * (DIM + PAIRS) * 4 if fused else b * TABLES * DIM * 4
        dense_b = b * DIM * 4 if fused else 0
        moved = rows_b + ids_b + offs_b + out_b + dense_b
        bw = moved / (k["ms"] * 1e-3)
        ref = gather_rate(a.profile, skew)
        rows.append((b, skew, d["device"], d["latency_ms"], d["baseline_latency_ms"], k["kernel"], k["ms"], moved, bw,
                     bw / ref if ref else None, ref))
    rows.sort(key=lambda r: (r[1] != "zipf", r[0]))
    print("| batch | ids | model latency ms (optimized / unoptimized) | lookup kernel | ms | MB moved | GB/s | "
          "of own.gather |")
    print("|---|---|---|---|---|---|---|---|")
    for b, skew, dev, lat, base, kern, ms, moved, bw, frac, ref in rows:
        print(f"| {b} | {skew} | {lat:.3f} / {base:.3f} | `{kern}` | {ms:.4f} | {moved / 1e6:.0f} | {bw / 1e9:.0f} | "
              f"{'%.0f %%' % (100 * frac) if frac else 'n/a'} (of {ref / 1e9:.0f} GB/s) |")
    print(f"\nDevice: {rows[0][2]}. All times measured; bytes counted, not measured.")


if __name__ == "__main__":
    sys.exit(main())
