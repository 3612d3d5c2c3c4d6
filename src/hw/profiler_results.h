// Raw results of one `cagr profile --target cpu` run, and their assembly into
// a HardwareProfile (profiler_assemble.cc).
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "cagr/hw.h"
#include "hw/backend_probes.h"
#include "hw/microbench.h"
#include "hw/profiler.h"

namespace cagr::hw {

struct ProfileResults {
  MachineInfo machine;
  int threads = 1;
  bool quick = false;
  double seconds = 0;
  double loadAtStart = -1, loadAtEnd = -1;  // /proc/loadavg (1 min); -1 unknown
  int64_t bufferBytes = 0;                  // memory-benchmark buffer

  std::vector<GemmResult> gemm;
  std::map<std::string, Timing> probes;  // gemm kernel name -> 1x1x1 call
  Timing ompRegion;                      // empty OpenMP parallel region
  std::vector<std::pair<GatherConfig, MemResult>> gathers;
  std::vector<std::pair<CacheLevel, MemResult>> caches;
  MemResult stream, copy, triad, reduce;
  BackendProbes backend;  // CAGR's CPU backend on generated plans
};

/// Fits efficiencies, memory levels, peaks, launch latency and traits.
StatusOr<HardwareProfile> assembleProfile(const ProfileResults& r, ProfilerRunInfo* info);
/// The backend probes as efficiency entries (own.eltwise replaces the
/// streaming loop's entry) and the fitted fuse_alpha (assemble_probes.cc).
void fillBackendProbes(HardwareProfile& p, const ProfileResults& r);

}  // namespace cagr::hw
