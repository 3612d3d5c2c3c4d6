// What the CUDA backend offers beyond the Executable interface, for
// `cagr bench --target cuda`: replays of the captured CUDA graph timed with
// CUDA events while inputs and outputs stay on the device, the copies to
// and from the host timed apart, and what compiling the plan cost. Plain
// C++ (no CUDA headers), so tools include it in every build; without CUDA
// makeCudaBackend says the build has no CUDA backend.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "cagr/backend.h"

namespace cagr::cuda {

/// Where one compiled plan's device bytes go at one batch size: the sizes
/// of its device allocations (exact, not sampled; host staging excluded).
struct MemoryBreakdown {
  int64_t arenaBytes = 0;      // one allocation: inputs, activations, outputs, library workspaces
  int64_t inputBytes = 0;      // of the arena: the graph inputs (uploaded once, never shared)
  int64_t workspaceBytes = 0;  // of the arena: what the library calls' workspaces add to it
  int64_t weightBytes = 0;     // the constants in their device formats
  int64_t scratchBytes = 0;    // cublaslt.cin outer-product chunks (with their GEMMs' workspace)
  int64_t total() const { return arenaBytes + weightBytes + scratchBytes; }
};

/// Device timings of one compiled plan at one batch size (all measured).
struct ReplayTiming {
  std::vector<double> replayMs;  // one per replay: CUDA events around cudaGraphLaunch
  double uploadMs = 0;           // median over the transfer runs: inputs host (pinned) -> device
  double downloadMs = 0;         // median: outputs device -> host (pinned)
  int64_t peakBytes = 0;         // memory.total(): arena (with the workspaces) + weights + CIN scratch
  MemoryBreakdown memory;        // where peakBytes goes
  std::string device;            // "NVIDIA H200 (sm_90)"
};

/// What compile() did and what it cost (wall time, measured).
struct CompileStats {
  double lowerSeconds = 0;  // verify, plan -> steps, CUDA source generated
  double nvrtcSeconds = 0;  // compileModule: NVRTC, or the cache lookup when it hit
  double loadSeconds = 0;   // module load, weight upload, library handles
  double totalSeconds = 0;
  bool fromCache = false;  // the module came from NVRTC's disk cache
  int generatedKernels = 0;
  int libraryCalls = 0;
  size_t moduleSourceBytes = 0;
};

/// Implemented by the CUDA backend's executables (dynamic_cast to it).
class DeviceTimed {
 public:
  virtual ~DeviceTimed() = default;
  /// Runs the plan once on `inputs` (capturing its graph at this batch
  /// size if needed), then replays the graph `replays` times and copies the
  /// inputs in and the outputs out `transfers` times, each timed apart.
  virtual StatusOr<ReplayTiming> timeReplays(const std::vector<std::pair<std::string, Tensor>>& inputs, int replays,
                                             int transfers) = 0;
  virtual const CompileStats& compileStats() const = 0;
};

struct CudaBackendOptions {
  bool useCache = true;  // NVRTC's disk cache (cold compiles are timed with it off)
};

/// The "cuda" backend with `opts` (makeBackend("cuda") gives the defaults).
StatusOr<std::unique_ptr<ExecutionBackend>> makeCudaBackend(const CudaBackendOptions& opts = {});

}  // namespace cagr::cuda
