// Backend probes of `cagr profile --target cuda`: small generated plans run
// on CAGR's own CUDA backend and timed step by step (Executable::profile:
// CUDA events around each step, steps issued one by one), so the profile
// prices the kernels CAGR's plans really run on the GPU — the NVRTC-generated
// elementwise, reduction, movement, embedding-bag (one-hot and multi-hot,
// cached and large tables; table-batched over 26 / 52 tables), CSR SpMM
// (uniform and skewed rows), interaction, FM and CIN kernels (xDeepFM's layer
// sizes on nvrtc.cin and cublaslt.cin, fp32 / tf32 / bf16 math), and f32
// cuBLASLt layers over a Linear's weight as the backend runs them (tuned on
// the first run; on sm_90 maybe on its wgmma tile: kTunedGemmClass) —
// instead of cuBLAS curves or the profiler's streaming loops; and a
// chain of tiny kernels replayed as one CUDA graph gives the per-kernel floor
// inside a replay, next to the floor of one step issued alone.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "cagr/hw.h"
#include "cagr/status.h"
#include "hw/backend_probes.h"
#include "hw/backend_probes_text.h"

namespace cagr::hw {

/// One generated plan and the batch sizes it is timed at.
struct CudaProbeSpec {
  std::string kernel;      // profile entry: "nvrtc.cin", "nvrtc.embedding", ...
  std::string shapeClass;  // "gemm.cin", "gather.cached", "eltwise.stream", ...
  std::string label;       // "cin [N,200,16] x [N,22,16] -> 200"
  std::vector<probe::Input> inputs;
  std::string body, outType;
  std::vector<int64_t> rows;  // batch sizes N
  std::string text() const { return probe::graphText(inputs, body, outType); }
};

/// The probe plans (quick: fewer batch sizes, for tests).
std::vector<CudaProbeSpec> cudaProbeSpecs(bool quick);

/// `kernels` tiny elementwise kernels in a chain (the launch-floor probe).
CudaProbeSpec launchChainSpec(int kernels);

/// The per-kernel floor of the CUDA backend (measured).
struct LaunchFloor {
  int chainKernels = 0;
  double graphPerKernelS = 0;  // (replay of the chain - replay of one kernel) / (chain - 1), plain launches
  double graphOneKernelS = 0;  // one replay of a one-kernel graph (graph launch included)
  double singleStepS = 0;      // median event-timed step of a tiny kernel issued alone (no graph)
  // graphPerKernelS with each kernel a programmatic dependent of the one
  // before it (as the CUDA backend launches its generated kernels on sm_90+;
  // 0: the GPU has no programmatic launches, or CAGR_CUDA_PDL=0).
  double graphPerKernelPdlS = 0;
};

struct CudaProbes {
  BackendProbes probes;  // points only (no fusion probe)
  LaunchFloor floor;
  std::string device;  // "NVIDIA H200 (sm_90)"
  int repeats = 0;     // per probe point, at least
};

using ProbeProgress = std::function<void(double fraction, const std::string& what)>;

/// Runs the probes on the CUDA backend; kUnsupported (with the backend's
/// reason) when this build has no CUDA backend or there is no GPU.
StatusOr<CudaProbes> runCudaProbes(bool quick, double secondsEach, const ProbeProgress& progress = {});

/// Kernel and class of the CUDA-graph per-kernel floor entry, and of the
/// single-step floor entry (overhead_s holds the value).
inline constexpr const char* kGraphStepKernel = "cagr.graph_step";
inline constexpr const char* kGraphStepClass = "launch.graph";
inline constexpr const char* kGraphStepPdlClass = "launch.graph.pdl";
inline constexpr const char* kSingleStepClass = "launch.single";
/// Class of the one-kernel graph replay entry (the replay's fixed cost).
inline constexpr const char* kGraphReplayClass = "launch.replay";

/// `base` (a cagr-profile-cuda profile: GEMM curves, memory, launch) with the
/// probes' entries added (an entry of the same kernel and class replaced),
/// the floors as kGraphStepKernel entries, and the notes saying what was
/// added. Fails when `base` is not a GPU profile.
StatusOr<HardwareProfile> mergeCudaProbes(HardwareProfile base, const CudaProbes& probes);

}  // namespace cagr::hw
