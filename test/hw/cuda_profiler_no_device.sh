#!/bin/sh
# ctest cuda_profiler_no_device: `cagr-profile-cuda --self-test` (the fit on
# synthetic timings) must pass; then, on a machine without a GPU,
# cagr-profile-cuda must exit non-zero and say "no CUDA device" on stderr.
# That part is skipped (exit 77) where nvidia-smi lists a GPU: there the
# binary would really profile.
bin="$1"
if [ -z "$bin" ] || [ ! -x "$bin" ]; then
  echo "usage: $0 path/to/cagr-profile-cuda" >&2
  exit 2
fi
# The profile fit on synthetic timings needs no GPU: it runs everywhere.
selftest=$("$bin" --self-test 2>&1)
if [ $? -ne 0 ]; then
  echo "FAIL: --self-test: $selftest" >&2
  exit 1
fi
echo "$selftest"
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>/dev/null | grep -q '^GPU'; then
  echo "skipped: nvidia-smi lists a GPU"
  exit 77
fi
err=$("$bin" --quick --quiet -o /dev/null 2>&1 >/dev/null)
rc=$?
if [ "$rc" -eq 0 ]; then
  echo "FAIL: cagr-profile-cuda exited 0 without a GPU" >&2
  exit 1
fi
case "$err" in
  *"no CUDA device"*) echo "ok: exit $rc, '$err'"; exit 0 ;;
  *) echo "FAIL: exit $rc but stderr does not say 'no CUDA device': $err" >&2; exit 1 ;;
esac
