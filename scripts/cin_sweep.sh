#!/usr/bin/env bash
# Times xDeepFM's cublaslt.cin variants on the GPU machine (issue 6): tf32
# and bf16 at batch 4096, without a pipeline (256 MiB chunks) and with 2 and
# 4 lanes of L2-sized chunks (CAGR_CIN_PIPELINE), and bf16 once with the
# cuBLASLt candidates untimed (CAGR_CIN_TUNE=0), and with 2 lanes of 128 MiB
# chunks. Each line: measured median
# CUDA-graph replay latency and peak memory of the optimized plan, JSON kept
# under OUTDIR. Build the binaries here first (bash scripts/device_bundle.sh),
# then on the GPU machine: bash scripts/cin_sweep.sh "$OUT"
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p /work && ln -sfn "$PWD" /work/main
export LD_LIBRARY_PATH=$PWD/.devbundle:${LD_LIBRARY_PATH:-}
OUTDIR=${1:-${OUT:-/tmp}}
mkdir -p "$OUTDIR"
run() {  # precision lanes tune [chunk KiB per lane; default: the policy's]
  local f="$OUTDIR/xdeepfm_$1_lanes$2_tune$3_chunk${4:-auto}.json"
  CAGR_CUDA_CIN=cublaslt CAGR_CIN_PIPELINE=$2 CAGR_CIN_TUNE=$3 CAGR_CIN_CHUNK_KB=${4:-} \
    .devbundle/cagr bench zoo/onnx/xdeepfm.dynamo.onnx \
    --target cuda --precision "$1" --batch 4096 --json >"$f"
  local ms mb
  ms=$(grep -m1 -o '"latency_ms": [0-9.e+-]*' "$f" | awk '{print $2}')
  mb=$(grep -m1 -o '"peak_memory_bytes": [0-9]*' "$f" | awk '{printf "%.0f", $2 / 1e6}')
  echo "$1 lanes=$2 tune=$3 chunk=${4:-auto}: $ms ms, peak $mb MB (measured)"
}
for p in tf32 bf16; do
  for lanes in 0 2 4; do run "$p" "$lanes" 1; done
done
run bf16 0 0
# Two lanes of big chunks: one lane's outer product overlaps the other's GEMM (Z through HBM).
for p in tf32 bf16; do run "$p" 2 1 131072; done
