// `cagr profile`: measures the machine it runs on and returns a HardwareProfile
// with provenance "measured" (DESIGN §3). Every number's source names the
// micro-benchmark behind it; nothing modelled is labelled measured.
#pragma once

#include <functional>
#include <map>
#include <string>

#include "cagr/hw.h"
#include "cagr/status.h"
#include "hw/validation.h"

namespace cagr {

struct ProfilerOptions {
  double budgetSeconds = 90;  // wall-time budget the benchmark plan is scaled to
  bool quick = false;         // fewer shapes and samples (<= ~15 s; tests, smoke runs; validate: <= ~5 s)
  int threads = 0;            // 0: all online CPUs
};

/// Extra facts about a run for the CLI summary (not part of the profile).
struct ProfilerRunInfo {
  double seconds = 0;  // wall time of the whole run
  int threads = 0;
  std::map<std::string, double> bestFlopsPerKernel;       // kernel -> best per-shape median FLOP/s
  std::map<std::string, std::string> bestShapePerKernel;  // kernel -> "MxKxN"
  double theoreticalPeakFlops = 0;                        // from /proc/cpuinfo; 0 if unknown (never measured)
  std::string theoreticalPeakSource;
  double dramCopyBytesPerS = 0;  // STREAM copy (the profile's DRAM level holds triad)
};

/// fraction in [0, 1]; what: "gemm 1024x512x256 onednn.matmul".
using ProfileProgress = std::function<void(double fraction, const std::string& what)>;

/// Runs the CPU micro-benchmarks (GEMMs for openblas.sgemm, onednn.matmul,
/// onednn.matmul_relu and own.gemm; gathers; streaming; reductions; launch
/// probes) on all cores and fits the profile. `progress` may be empty.
/// Sets the OpenMP and OpenBLAS thread counts (process-wide) to the threads used.
StatusOr<HardwareProfile> profileCpu(const ProfilerOptions& opts, const ProfileProgress& progress,
                                     ProfilerRunInfo* info = nullptr);

/// `cagr profile --target cpu --validate`: times held-out GEMMs (every CPU
/// kernel), gathers, streaming elementwise and row reductions at shapes and
/// sizes that profileCpu's fit never uses, with the same timing harness and
/// thread settings; each record counts flops and bytes as cost_rules.cc does.
/// opts.quick: a few small shapes (tests). `progress` may be empty.
StatusOr<hw::ValidationRun> validateCpu(const ProfilerOptions& opts, const ProfileProgress& progress);

}  // namespace cagr
