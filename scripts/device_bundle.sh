#!/usr/bin/env bash
# Builds the binaries the GPU machine runs and puts them, with the one shared
# library it lacks (libonnx_proto), under .devbundle/ (git-ignored), to be
# carried there (`run` with carry [".devbundle"]). The GPU machine has no
# ONNX library and no oneDNN, so this build leaves oneDNN out
# (CAGR_WITH_ONEDNN=OFF; CPU GEMMs fall back to OpenBLAS there) and has no
# LibTorch. On the GPU machine, first:
#   mkdir -p /work && ln -sfn "$PWD" /work/main   # tests find the zoo at their build path
#   export LD_LIBRARY_PATH=$PWD/.devbundle:$LD_LIBRARY_PATH
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build-dev}
bash scripts/setup.sh >/dev/null
if ! command -v ccache >/dev/null; then  # rebuilds of the bundle reuse objects
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get install -y -qq ccache >/dev/null || { $SUDO apt-get update -qq && $SUDO apt-get install -y -qq ccache >/dev/null; }
fi
cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER_LAUNCHER=ccache \
  -DCAGR_WITH_ONEDNN=OFF -DCAGR_WITH_TORCH=OFF >/dev/null
make -C "$BUILD" -j"$(nproc)" cagr cagr_tests cagr-profile-cuda >/dev/null
rm -rf .devbundle && mkdir -p .devbundle
for b in cagr cagr_tests cagr-profile-cuda; do
  strip -o ".devbundle/$b" "$BUILD/$b"
done
cp -L /usr/lib/x86_64-linux-gnu/libonnx_proto.so.1 .devbundle/
du -sh .devbundle
