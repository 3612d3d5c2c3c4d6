// Steps for the recommendation ops: Interaction and FM (alone or fused with
// their lookups and concats, rec_fused.cc) and one CIN layer, run as a
// oneDNN sgemm over per-tile outer products (rec_kernels.cc) so the
// [B,H,F,D] tensor is never written. Preconditions: f32 math (the CPU target
// has no other), static field / channel / embedding sizes.
#include <omp.h>

#include <algorithm>
#include <atomic>

#include "backends/cpu/rec_fused.h"
#include "backends/cpu/rec_kernels.h"
#include "backends/cpu/rec_tail.h"
#include "runtime/reference/precision.h"

namespace cagr::cpu {
namespace {

// A weight read as f32: a constant as the plan stores it, or a run-time buffer.
struct Operand {
  ValueId value = kNoValue;
  Tensor stored;  // constants: the values the reference reads
  bool present() const { return value != kNoValue; }
  const float* data(const RunContext& ctx) const {
    return stored.rawData() != nullptr ? stored.data<float>() : ctx.buffer(value).as<float>();
  }
};

StatusOr<Operand> operandOf(const Graph& g, ValueId v) {
  Operand op;
  op.value = v;
  if (v == kNoValue) return op;
  if (g.type(v).dtype != DType::kF32) return unsupported("CIN operand '" + g.value(v).name + "' is not f32");
  if (const Tensor* c = g.constant(v)) {
    CAGR_ASSIGN_OR_RETURN(op.stored, ref::storedAs(*c, g.value(v).mir.storage));
  }
  return op;
}

class CinStep : public Step {
 public:
  CinStep(const Node& n, CinShape s, Operand w, Operand bias, Precision round)
      : name_(n.name),
        xk_(n.inputs[0]),
        x0_(n.inputs[1]),
        out_(n.outputs[0]),
        s_(s),
        w_(std::move(w)),
        bias_(std::move(bias)),
        round_(round) {}

  std::string kernelName() const override { return "own.cin"; }
  std::vector<ValueId> writes() const override { return {out_}; }

  Status run(const RunContext& ctx) const override {
    const Buffer& xk = ctx.buffer(xk_);
    const Buffer& x0 = ctx.buffer(x0_);
    const Buffer& out = ctx.buffer(out_);
    int64_t batch = xk.shape.at(0);
    if (x0.shape.at(0) != batch || xk.numel() != batch * s_.hk * s_.dim || x0.numel() != batch * s_.fields * s_.dim) {
      return invalidArgument("node '" + name_ + "' (CIN): xk and x0 disagree on the batch or their shapes");
    }
    const float* w = w_.data(ctx);
    const float* bias = bias_.present() ? bias_.data(ctx) : nullptr;
    const int64_t per = cinTileSamples(s_), tiles = (batch + per - 1) / per;
    std::atomic<bool> failed{false};
    auto tile = [&](int64_t k, std::vector<float>& scratch) {
      int64_t b0 = k * per;
      if (!cinTile(s_, xk.as<float>(), x0.as<float>(), w, bias, b0, std::min(batch, b0 + per), out.as<float>(),
                   scratch.data())) {
        failed = true;
      }
    };
    if (ctx.threads() > 1 && tiles >= ctx.threads()) {
      // Enough tiles for every thread: each runs a single-threaded sgemm (a
      // team of one would not count as parallel and sgemm would nest teams).
#pragma omp parallel num_threads(ctx.threads())
      {
        std::vector<float> scratch(static_cast<size_t>(cinScratchFloats(s_)));
#pragma omp for schedule(dynamic)
        for (int64_t k = 0; k < tiles; ++k) tile(k, scratch);
      }
    } else {
      std::vector<float> scratch(static_cast<size_t>(cinScratchFloats(s_)));
      for (int64_t k = 0; k < tiles; ++k) tile(k, scratch);  // sgemm spreads over the threads
    }
    if (failed) return internalError("node '" + name_ + "' (CIN): oneDNN sgemm failed");
    roundInPlace(out.as<float>(), out.numel(), round_);
    return Status::ok();
  }

 private:
  std::string name_;
  ValueId xk_, x0_, out_;
  CinShape s_;
  Operand w_, bias_;
  Precision round_;
};

StatusOr<std::unique_ptr<Step>> makeCinStep(const StepRequest& r) {
  const Node& n = r.g.node(r.shape.anchor);
  if (r.members.size() != 1 || n.op != OpKind::kCIN) return unsupported("a CIN kernel runs one CIN node");
  if (r.kernel != 0 && std::string(kernelInfo(r.kernel).name) != "own.cin") {
    return unsupported(std::string("the plan names ") + kernelInfo(r.kernel).name);
  }
  if (n.mir.math != Precision::kF32) return unsupported("CIN with reduced math");
  const TensorType& xk = r.g.type(n.inputs[0]);
  const TensorType& x0 = r.g.type(n.inputs[1]);
  const TensorType& w = r.g.type(n.inputs[2]);
  bool ok = xk.rank() == 3 && x0.rank() == 3 && w.rank() == 2 && xk.dtype == DType::kF32 && x0.dtype == DType::kF32;
  for (const TensorType* t : {&xk, &x0}) ok = ok && !isSymbolic(t->dims[1]) && !isSymbolic(t->dims[2]);
  ok = ok && !isSymbolic(w.dims[0]) && xk.dims[2] == x0.dims[2] && w.dims[1] == xk.dims[1] * x0.dims[1];
  if (!ok) return unsupported("CIN operands are not f32 [B,H,D], [B,F,D], [O,H*F] with static sizes");
  CinShape s{xk.dims[1], x0.dims[1], xk.dims[2], w.dims[0]};
  CAGR_ASSIGN_OR_RETURN(Operand weights, operandOf(r.g, n.inputs[2]));
  CAGR_ASSIGN_OR_RETURN(Operand bias, operandOf(r.g, n.inputs.size() > 3 ? n.inputs[3] : kNoValue));
  Precision round = r.g.value(n.outputs[0]).mir.storage;
  return std::unique_ptr<Step>(std::make_unique<CinStep>(n, s, std::move(weights), std::move(bias), round));
}

}  // namespace

StatusOr<std::unique_ptr<Step>> makeRecStep(const StepRequest& r) {
  switch (r.shape.pattern) {
    case Pattern::kInteraction:
    case Pattern::kFM:
      return makeInteractionStep(r);
    case Pattern::kCin:
      return makeCinStep(r);
    default:
      return unsupported("not an interaction, FM or CIN kernel");
  }
}

}  // namespace cagr::cpu
