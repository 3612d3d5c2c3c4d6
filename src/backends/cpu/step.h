// The CPU backend's unit of execution: one Step per kernel of the plan (a
// fusion group or a single node), built at compile time by the first step
// factory that accepts the group (fast kernels first, the reference
// fallback last), run against buffers the engine's memory plan provides.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "cagr/graph.h"
#include "cagr/hw.h"
#include "cagr/mir.h"
#include "cagr/status.h"
#include "cagr/tensor.h"

namespace cagr::cpu {

/// A value's storage during one run: dense row-major, concrete shape.
struct Buffer {
  std::byte* data = nullptr;
  std::vector<int64_t> shape;
  DType dtype = DType::kF32;
  int64_t numel() const {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    return n;
  }
  template <typename T>
  T* as() const {
    return reinterpret_cast<T*>(data);
  }
};

/// The buffers of one run. Graph inputs, constants (weights as the plan
/// stores them) and every value a step declares in `writes()` have one;
/// values kept inside a fused kernel do not.
class RunContext {
 public:
  virtual ~RunContext() = default;
  virtual const Buffer& buffer(ValueId v) const = 0;
  virtual int threads() const = 0;
};

/// One kernel of the compiled plan.
class Step {
 public:
  virtual ~Step() = default;
  /// The implementation that runs ("onednn.matmul+relu", "own.embedding_bags", "reference:Gemm").
  virtual std::string kernelName() const = 0;
  /// Values this step writes into engine buffers (outputs used outside the
  /// kernel or graph outputs; a fallback step may list more).
  virtual std::vector<ValueId> writes() const = 0;
  virtual Status run(const RunContext& ctx) const = 0;

  // Concats along the last axis (in place or not): the engine asks each
  // producer of an input to write it straight into the concat's buffer, and
  // tells the concat step which inputs are already there.
  /// Writes `v` (one of writes()) as rows of `dst`: row r of v at element
  /// r * ld + offset of dst, instead of into v's own buffer. False (nothing
  /// changes) when this step cannot.
  virtual bool placeOutput(ValueId v, ValueId dst, int64_t offset, int64_t ld) { return false; }
  /// The concat step: extent[k] > 0 — input k (that many entries along the
  /// concat axis) was written in place by its producer; 0 — copy it. False
  /// when this step cannot skip inputs (then no producer may be placed).
  virtual bool skipInputs(const std::vector<int64_t>& extent) { return false; }
};

/// What a step factory gets: the plan, the group (graph order), its shape
/// (pattern and anchor), the values that leave it, and the host profile.
struct StepRequest {
  const Graph& g;
  std::vector<NodeId> members;
  GroupShape shape;
  KernelId kernel;                  // the plan's choice (0 = auto)
  std::vector<ValueId> outputs;     // member outputs used outside the group or graph outputs
  const HardwareProfile& hw;
};

/// A factory returns a step, or kUnsupported (with the reason) when it does
/// not handle this group — the engine then tries the next one. Any other
/// error fails the compile.
using StepFactory = StatusOr<std::unique_ptr<Step>> (*)(const StepRequest& r);

// Factories, tried in this order (engine.cc).
StatusOr<std::unique_ptr<Step>> makeGemmStep(const StepRequest& r);       // gemm_step.cc: oneDNN / OpenBLAS / own GEMM + epilogue
StatusOr<std::unique_ptr<Step>> makeEmbeddingStep(const StepRequest& r);  // embedding_step.cc: Gather / EmbeddingBag(s) + tail
StatusOr<std::unique_ptr<Step>> makeRecStep(const StepRequest& r);        // rec_step.cc: Interaction, FM, CIN (fused forms)
StatusOr<std::unique_ptr<Step>> makeEltwiseStep(const StepRequest& r);    // eltwise_step.cc: eltwise chains, reductions, movement
StatusOr<std::unique_ptr<Step>> makeSpmmStep(const StepRequest& r);       // spmm_step.cc: CSR SpMM, fp32
StatusOr<std::unique_ptr<Step>> makeReferenceStep(const StepRequest& r);  // reference_step.cc: any group, node by node

}  // namespace cagr::cpu
