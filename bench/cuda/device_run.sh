#!/usr/bin/env bash
# Issue 6's GPU run on one machine of the device tool, in two calls of under
# 10 minutes each. Here first: `bash scripts/device_bundle.sh` (.devbundle/:
# cagr, cagr_tests, libonnx_proto among others), then, as the working tree
# and what is carried must stay under 64 MiB, `mkdir -p .devpack && tar czf
# .devpack/bins.tgz -C .devbundle cagr cagr_tests libonnx_proto.so.1` (about
# 11 MB; list .devpack/ in .git/info/exclude) and carry [".devpack"]. There:
#   call 1: bash bench/cuda/device_run.sh 1   # re-probe CAGR's kernels into the GPU's profile,
#                                             # the GPU test suite, side by side at batch 256
#   call 2: bash bench/cuda/device_run.sh 2   # side by side at batch 4096 (all precisions), then
#                                             # torch.compile max-autotune in tf32 at 4096 beside CAGR
# Between them, copy call 1's $OUT/<gpu>-probed.json over
# bench/results/hw/<gpu>-probed.json here, so call 2 prices with it (a fresh
# machine keeps nothing). <gpu> is h200 on an H200, else h100 (its report is
# bench/results/cuda_side_by_side_h100.md). Then merge the runs' JSON into the
# report with `python3 bench/cuda/run.py --merge` (README.md beside this).
set -uo pipefail
phase=${1:-}
budget=${CAGR_DEVICE_SECONDS:-560}  # each call's seconds, under the device tool's 600
: "${OUT:?OUT (the folder whose files come back) is not set}"
case "$phase" in 1 | 2) ;; *) echo "usage: $0 1|2" >&2; exit 2 ;; esac
if [ ! -x .devbundle/cagr ] && [ -f .devpack/bins.tgz ]; then
  mkdir -p .devbundle && tar xzf .devpack/bins.tgz -C .devbundle || exit 1
fi
mkdir -p /work && ln -sfn "$PWD" /work/main  # the tests find the zoo at their build path
export LD_LIBRARY_PATH=$PWD/.devbundle:${LD_LIBRARY_PATH:-} CAGR_CACHE_DIR=/tmp/cagr-cache PYTHONUNBUFFERED=1
gpu_name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
gpu=h100
[[ $gpu_name == *H200* ]] && gpu=h200
echo "GPU: $gpu_name ($gpu), phase $phase, $(date -u +%FT%TZ)"
engines=eager,torchscript,compile,compile_ro,cudagraph,hand,cagr
profile=bench/results/hw/$gpu-probed.json
if [ "$phase" = 1 ]; then
  timeout 200 .devbundle/cagr profile --target cuda --merge "bench/results/hw/$gpu-measured.json" \
    -o "$OUT/$gpu-probed.json" >/tmp/probe.log 2>&1
  echo "probe rc=$? at ${SECONDS}s"; tail -3 /tmp/probe.log
  [ -s "$OUT/$gpu-probed.json" ] && profile=$OUT/$gpu-probed.json
  timeout 240 .devbundle/cagr_tests \
    --gtest_filter='Cuda*:WgmmaGemm*:Zoo/Conformance.*cuda_*:PadGemm*:SplitConcat*:FuseGemmChain*' \
    >"$OUT/gpu_tests.log" 2>&1
  echo "GPU tests rc=$? at ${SECONDS}s"
  grep -E '^\[  (PASSED|FAILED|SKIPPED)' "$OUT/gpu_tests.log" | head -20
  batches=256
else
  batches=4096
fi
left=$((budget - SECONDS))
[ "$left" -gt 90 ] || { echo "no time left for the side by side (${SECONDS}s gone)"; exit 1; }
timeout $((left + 20)) python3 bench/cuda/run.py --batches "$batches" --precisions fp32,tf32,bf16 --engines "$engines" \
  --cagr .devbundle/cagr --cagr-args "--hw $profile" --deadline $((left - 30)) --out "$OUT/b$batches" \
  >/tmp/sbs.log 2>&1
echo "side by side rc=$? at ${SECONDS}s"; tail -3 /tmp/sbs.log
grep -E '^\| [a-z]' "$OUT/b$batches/cuda_side_by_side.md" | head -14
left=$((budget - SECONDS))
if [ "$phase" = 2 ] && [ "$left" -gt 120 ]; then  # ~45 s of autotuning per model
  timeout $((left + 20)) python3 bench/cuda/run.py --batches 4096 --precisions tf32 --engines max_autotune,cagr \
    --cagr .devbundle/cagr --cagr-args "--hw $profile" --deadline $((left - 60)) --out "$OUT/ma" >/tmp/ma.log 2>&1
  echo "max-autotune rc=$? at ${SECONDS}s"; tail -3 /tmp/ma.log
fi
# At most a few files come back: each run's report (.md) and records (.json);
# the plot is redrawn by --merge, and a run that finished needs no .partial.jsonl.
rm -f "$OUT"/*/cuda_side_by_side.png
for d in "$OUT"/*/; do [ -f "$d/cuda_side_by_side.json" ] && rm -f "$d/cuda_side_by_side.partial.jsonl"; done
ls -R "$OUT"
