// Backend probes of `cagr profile --target cpu`: small generated plans run
// on CAGR's own CPU backend and timed kernel by kernel
// (Executable::profile), so the profile prices the kernels plans really run
// (elementwise, softmax, row reductions, data movement, gathers from cached
// tables, batched GEMMs, CSR SpMM with uniform and skewed rows, per-step
// dispatch)
// instead of the profiler's hand-written streaming loops, and so that fused
// and unfused runs of one elementwise chain fit the fusion coefficient alpha.
#pragma once

#include <string>
#include <vector>

#include "cagr/hw.h"
#include "cagr/status.h"

namespace cagr::hw {

/// One probe kernel: its profile entry and what one call moved / computed.
struct ProbePoint {
  std::string kernel;           // profile kernel: "own.eltwise", "own.softmax", "own.movement", "own.reduce", ...
  std::string shapeClass;       // "eltwise.stream", "softmax.rows", "movement.strided", "movement.inner",
                                // "reduce.rows", "gather.cached", "gemm.batched", "spmm.csr", "spmm.skewed"
  std::string what;             // "add [4096,32]", for sources
  double bytes = 0, flops = 0;  // per call, counted as src/ir/cost_rules.cc counts them
  double seconds = 0;           // per call, median (measured): CPU time of the calling thread when the
                                // profile times by CPU time (one thread), else wall time
  double wallMinS = 0;          // per call: fastest wall time (measured)
};

/// An elementwise chain of `members` ops run as `members` kernels and as one
/// fused kernel (measured), with the bytes the fusion keeps inside.
struct FusionProbe {
  std::string what;
  int members = 0;
  double externalBytes = 0, internalBytes = 0;  // written+read outside / inside the fused kernel
  double unfusedS = 0, fusedS = 0;              // per call, sums of kernel times as ProbePoint::seconds
};

struct BackendProbes {
  std::vector<ProbePoint> points;
  std::vector<FusionProbe> fusion;
  std::string note;  // why the probes are missing ("" when they ran)
};

/// Runs the probes on the CPU backend with `threads` worker threads.
/// quick: fewer sizes (tests). Each probe repeats until about `secondsEach`.
StatusOr<BackendProbes> runBackendProbes(int threads, bool quick, double secondsEach);

/// The profile entry of one (kernel, class)'s probe points (assemble_probes.cc):
/// overhead_s the smallest call, a curve of (work per call, rate net of
/// overhead_s) — FLOPs for "gemm.*" classes, bytes otherwise — and the rate of
/// the largest call; the source starts with `how` and lists every point.
KernelEfficiency probeEntry(const std::vector<const ProbePoint*>& pts, const std::string& how);

}  // namespace cagr::hw
