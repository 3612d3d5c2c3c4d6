// Raw results of one cagr-profile-cuda run, the step runner both the
// profile and the validation run use, and the assembly of the results into
// a HardwareProfile (assemble_cuda.cc).
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "hw/cuda/gemm_cuda.h"
#include "hw/cuda/membench_cuda.h"
#include "hw/cuda/profiler_cuda.h"

namespace cagr::cuda {

struct GemmRun {
  GemmKind kind = GemmKind::kSgemm;
  GemmDims dims;
  hw::Timing t;
  double flopsPerS() const { return t.median > 0 ? dims.flops() / t.median : 0; }
};

struct CudaResults {
  DeviceFacts dev;
  bool quick = false;
  double seconds = 0;
  int64_t bufferBytes = 0;
  std::vector<std::pair<std::string, std::string>> libraries;

  std::vector<GemmRun> gemm;
  std::vector<std::string> gemmSkipped;  // "cublaslt.matmul m1 n512 k512: <why>"
  std::vector<std::pair<GatherSpec, MemRun>> gathers;
  MemRun stream, l2, copy, reduce;
  MemRun launch, launchSync, graph;
};

/// Fits efficiencies, memory levels, peaks, launch latency and traits.
StatusOr<HardwareProfile> assembleCudaProfile(const CudaResults& r, ProfilerRunInfo* info);

/// `--self-test` (self_test.cc): the fit above on synthetic timings, no GPU
/// needed; an error says which check failed.
Status assemblySelfTest();

/// One planned benchmark.
struct Step {
  std::string what;
  GpuTimingPlan plan;
  std::function<Status(const GpuTimingPlan&)> run;
};

/// A timing plan of `targetS` seconds (quick: fewer samples).
GpuTimingPlan planFor(bool quick, double targetS);

/// Runs the steps in order with progress reports; past 85% of the budget
/// each remaining step runs with the minimum sample count.
Status runSteps(std::vector<Step>& steps, double budgetS, double start, const ProfileProgress& progress);

/// Library versions of this run: CUDA runtime, driver, kernel compiler, cuBLAS.
std::vector<std::pair<std::string, std::string>> cudaLibraries(const DeviceFacts& dev, const GemmBench& gemm);

/// ISO 8601 UTC time now.
using hw::isoNow;

}  // namespace cagr::cuda
