#!/usr/bin/env bash
# Issue 40's safety net: an AddressSanitizer + UndefinedBehaviorSanitizer build
# (clang, libFuzzer-instrumented) of the code that reads untrusted input (the
# ONNX importer, IR / plan text, npz, profiles, and the reference executor
# they fold and run with: CMake target cagr_fuzz_core), its tests
# (cagr_san_tests) and the fuzz targets of fuzz/; runs the tests, then each
# fuzzer for a while from a seed corpus (the zoo's models, inputs, plans and
# profiles). A crash stops the script with the fuzzer's report and the input
# that caused it (build-san/fuzz-artifacts/).
#
#   bash scripts/sanitize.sh [--fuzz-seconds 60] [--fuzz-runs N] [--no-tests] [--jobs J]
set -euo pipefail
cd "$(dirname "$0")/.."
FUZZ_SECONDS=60 FUZZ_RUNS="" TESTS=1 JOBS=$(nproc)
while [ $# -gt 0 ]; do
  case "$1" in
    --fuzz-seconds) FUZZ_SECONDS=$2; shift 2 ;;
    --fuzz-runs) FUZZ_RUNS=$2; shift 2 ;;
    --no-tests) TESTS=0; shift ;;
    --jobs) JOBS=$2; shift 2 ;;
    *) echo "sanitize.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
BUILD=${BUILD:-build-san}
bash scripts/setup.sh >/dev/null
# clang with libFuzzer and the sanitizer runtimes, and clang's OpenMP.
missing=()
for p in clang libomp-dev libclang-rt-dev; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi
cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS_RELEASE="-O1" \
  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DCAGR_FUZZ=ON \
  -DCAGR_ENABLE_CUDA=OFF -DCAGR_WITH_ONEDNN=OFF -DCAGR_WITH_TORCH=OFF >/dev/null
FUZZERS=(onnx_import npz ir_text profile)
cmake --build "$BUILD" -j "$JOBS" --target cagr_san_tests "${FUZZERS[@]/#/cagr_fuzz_}" >/dev/null

export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
if [ "$TESTS" = 1 ]; then
  "$BUILD/cagr_san_tests" --gtest_brief=1
fi

# Seed corpora: small real inputs of each format.
SEEDS="$BUILD/fuzz-seeds" ART="$BUILD/fuzz-artifacts"
rm -rf "$SEEDS" && mkdir -p "$SEEDS"/{onnx_import,npz,ir_text,profile} "$ART"
for f in zoo/onnx/*.ts.onnx zoo/thirdparty/onnx/ebag_*ts17.dyn.onnx zoo/thirdparty/onnx/mha.ts17.dyn.onnx; do
  if [ "$(stat -c %s "$f")" -lt 400000 ]; then cp "$f" "$SEEDS/onnx_import/"; fi
done
cp zoo/ref/*.b7.inputs.npz "$SEEDS/npz/" 2>/dev/null || true
cp test/ir/golden/*.mlir "$SEEDS/ir_text/"
cp src/hw/profiles/*.json "$SEEDS/profile/"
for f in "${FUZZERS[@]}"; do
  limit=(-max_total_time="$FUZZ_SECONDS")
  [ -n "$FUZZ_RUNS" ] && limit=(-runs="$FUZZ_RUNS")
  echo "fuzz $f: ${limit[*]}"
  mkdir -p "$BUILD/fuzz-corpus/$f"
  "$BUILD/cagr_fuzz_$f" "${limit[@]}" -rss_limit_mb=3072 -timeout=20 -max_len=262144 \
    -artifact_prefix="$ART/$f-" -print_final_stats=1 "$BUILD/fuzz-corpus/$f" "$SEEDS/$f" 2>&1 |
    grep -E "^(stat::number_of_executed_units|stat::peak_rss_mb|#[0-9]+ *DONE)|ERROR|SUMMARY|artifact" || true
  if ls "$ART/$f-"* >/dev/null 2>&1; then echo "sanitize.sh: fuzzer $f found a failing input: $(ls "$ART/$f-"*)" >&2; exit 1; fi
done
echo "sanitize.sh: ok"
