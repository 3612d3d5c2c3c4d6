// Execution backends (DESIGN §1): each compiles a MIR plan (verifyPlan is
// the contract) for its platform and runs it. All backends pass the same
// conformance suite (test/backends/conformance_test.cc): every zoo model at
// batch 1, 256 and 4096 matches the reference executor.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "cagr/graph.h"
#include "cagr/mir.h"
#include "cagr/status.h"
#include "cagr/tensor.h"

namespace cagr {

/// What a backend can run.
struct BackendCapabilities {
  std::string name;                   // "cpu", "reference", "cuda"
  Backend family = Backend::kCpu;     // whose catalog kernels its plans use
  std::vector<std::string> kernels;   // catalog kernels it implements natively
  std::vector<Precision> storage, math;
  int threads = 1;                    // worker threads a run uses
  bool available = true;              // false e.g. without a GPU
  std::string note;                   // why unavailable, or what it runs on
};

struct CompileOptions {
  int threads = 0;  // 0: all hardware threads
  // How device memory weighs against time where a backend chooses between
  // variants of a compiled plan by measuring them (the CUDA backend's
  // library workspaces): the reward's lambda_m (EnvConfig::lambdaM), the
  // relative memory change worth the same as a relative latency change.
  double memoryWeight = 0.1;
  // The reward's L0 and M0 (DESIGN §4: the unoptimized plan's latency in ms
  // and peak memory in bytes, e.g. as measured just before) those relative
  // changes are taken against; 0: against the best variant's own.
  double baselineLatencyMs = 0;
  double baselineBytes = 0;
};

/// Measured time of one kernel of a compiled plan (one fusion group).
struct KernelTiming {
  std::string kernel;          // the implementation, as kernelReport() names it
  std::vector<NodeId> nodes;   // the plan's nodes it runs (graph order; none a lowering step added)
  double medianMs = 0;         // wall time per run: median over the repeats (measured)
  double minMs = 0;            // wall time per run: fastest repeat (measured)
  double cpuMs = 0;            // CPU time of the calling thread per run, median (measured)
};

/// A compiled plan, ready to run many times (at any batch size).
///
/// Thread safety: run(), profile() and peakMemoryBytes() may be called from
/// any number of threads at once on one Executable. Runs of one Executable
/// do not overlap: each holds the executable's activation memory (the CPU
/// arena, the CUDA batch state) for its whole duration and the others wait,
/// so every call returns exactly what a single-threaded call would. For
/// concurrent runs, compile the plan once per worker (weights are copied per
/// executable). test/backends/concurrency_test.cc holds them to it.
class Executable {
 public:
  virtual ~Executable() = default;
  /// Runs on `inputs` keyed by the graph's input names; outputs in graph
  /// order. Errors name the input, node or kernel.
  virtual StatusOr<std::vector<Tensor>> run(const std::vector<std::pair<std::string, Tensor>>& inputs) = 0;
  /// Peak bytes of the last run: its activation arena plus the weights as
  /// the backend stores them (0 before the first run).
  virtual int64_t peakMemoryBytes() const = 0;
  /// One line per kernel: which implementation runs each group of the plan.
  virtual std::vector<std::string> kernelReport() const = 0;
  /// Runs the plan `repeats` times on `inputs` and times each kernel apart,
  /// in run order. Backends that cannot time kernels one by one say so.
  virtual StatusOr<std::vector<KernelTiming>> profile(const std::vector<std::pair<std::string, Tensor>>& inputs,
                                                      int repeats) {
    (void)inputs;
    (void)repeats;
    return unsupported("this backend does not time kernels one by one");
  }
};

class ExecutionBackend {
 public:
  virtual ~ExecutionBackend() = default;
  virtual BackendCapabilities capabilities() const = 0;
  /// Compiles `plan` (HIR or MIR for this backend's family).
  virtual StatusOr<std::unique_ptr<Executable>> compile(const Graph& plan, const CompileOptions& opts = {}) = 0;
};

/// "reference" (the oracle, runs anything) or "cpu".
StatusOr<std::unique_ptr<ExecutionBackend>> makeBackend(const std::string& name);
/// Names of the backends this build has.
std::vector<std::string> backendNames();

}  // namespace cagr
