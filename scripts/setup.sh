#!/usr/bin/env bash
# Installs what CAGR needs on a fresh Debian 12 machine (apt + pip). Safe to
# re-run: it only installs what is missing. Set CAGR_SKIP_PIP=1 to skip the
# Python packages (the C++ build and tests need none of them).
set -euo pipefail

APT_PACKAGES=(build-essential cmake g++ pkg-config
  libonnx-dev libprotobuf-dev protobuf-compiler zlib1g-dev
  nlohmann-json3-dev libcli11-dev libgtest-dev libbenchmark-dev
  mlir-15-tools libdnnl-dev libopenblas-dev python3 python3-pip
  libtorch-dev)  # LibTorch: only cagr-train (issue 7) links it

missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# Python side: numpy for data/gen.py; torch/onnx/onnxruntime only for zoo/export.py.
if [ "${CAGR_SKIP_PIP:-0}" != "1" ]; then
  PY_PACKAGES=(numpy)
  if [ "${CAGR_ZOO:-0}" = "1" ]; then PY_PACKAGES+=(torch onnx onnxruntime onnxscript); fi
  for p in "${PY_PACKAGES[@]}"; do
    python3 -c "import $p" >/dev/null 2>&1 || pip install -q "$p" || pip install -q --break-system-packages "$p"
  done
fi
echo "setup: ok"
