#!/usr/bin/env bash
# Regenerates bench/results/cost_model_accuracy.md from the measurements in
# bench/results/hw/ (measure first: see bench/cost_model_accuracy/README.md).
set -euo pipefail
cd "$(dirname "$0")/../.."
R=bench/results/hw
OUT=bench/results/cost_model_accuracy.md
K=$(mktemp -d)
build/cagr_bench_kernel_accuracy $R/h200-measured.json $R/h200-validate.json --json > $K/h200.json
if [ -f $R/host-cpu-validate.json ]; then
  build/cagr_bench_kernel_accuracy $R/host-cpu.json $R/host-cpu-validate.json --json > $K/cpu.json
  CPUK="--kernels $K/cpu.json"
else
  CPUK=""
fi
python3 bench/cost_model_accuracy/report.py --profile $R/h200-measured.json --measured $R/h200-models.json \
  --kernels $K/h200.json --title "NVIDIA H200" -o $K/h200.md
python3 bench/cost_model_accuracy/report.py --profile $R/host-cpu.json --measured $R/host-cpu-models.json \
  $CPUK --title "Host CPU (2 vCPU AMD EPYC VM) vs PyTorch eager" -o $K/cpu.md
python3 bench/cost_model_accuracy/report.py --profile $R/host-cpu.json --measured $R/host-cpu-ort-models.json \
  --no-patterns --engine-label "ONNX Runtime (optimisations off)" \
  --title "Host CPU vs ONNX Runtime running the exported ops one by one" -o $K/cpu-ort.md
{
  cat bench/cost_model_accuracy/HEADER.md
  for f in h200 cpu cpu-ort; do sed 's/^# /## /; s/^## /### /' $K/$f.md; echo; done
} > $OUT
echo "wrote $OUT"
