// The fallback step: runs any group node by node with the reference kernels
// (correct, not fast). Constants with a reduced storage precision are
// converted once at compile time; values with one are rounded when written,
// as the reference executor does.
#include <algorithm>
#include <map>

#include "backends/cpu/step.h"
#include "runtime/reference/kernels.h"
#include "runtime/reference/precision.h"

namespace cagr::cpu {
namespace {

class ReferenceStep : public Step {
 public:
  ReferenceStep(const StepRequest& r) : g_(r.g), members_(r.members) {
    for (NodeId m : members_) {
      for (ValueId v : g_.node(m).outputs) writes_.push_back(v);
    }
  }

  Status convertConstants() {
    for (NodeId m : members_) {
      for (ValueId v : g_.node(m).inputs) {
        if (v == kNoValue || !g_.isConstant(v) || g_.value(v).mir.storage == Precision::kF32) continue;
        CAGR_ASSIGN_OR_RETURN(Tensor t, ref::storedAs(*g_.constant(v), g_.value(v).mir.storage));
        stored_.emplace(v, std::move(t));
      }
    }
    return Status::ok();
  }

  std::string kernelName() const override {
    std::string s = "reference:";
    for (size_t i = 0; i < members_.size(); ++i) s += (i ? "+" : "") + std::string(opInfo(g_.node(members_[i]).op).name);
    return s;
  }
  std::vector<ValueId> writes() const override { return writes_; }

  Status run(const RunContext& ctx) const override {
    std::vector<Tensor> operands;
    std::vector<const Tensor*> ptrs;
    std::vector<Tensor> results;
    for (NodeId m : members_) {
      const Node& n = g_.node(m);
      operands.clear();
      ptrs.clear();
      for (ValueId v : n.inputs) operands.push_back(v == kNoValue ? Tensor() : view(ctx, v));
      for (size_t i = 0; i < n.inputs.size(); ++i) ptrs.push_back(n.inputs[i] == kNoValue ? nullptr : &operands[i]);
      results.clear();
      for (ValueId v : n.outputs) results.emplace_back(ctx.buffer(v).dtype, ctx.buffer(v).shape);
      CAGR_RETURN_IF_ERROR(ref::runKernel(n, ptrs, results).withContext(nodeWhere(n)));
      for (size_t i = 0; i < results.size(); ++i) {
        const Buffer& out = ctx.buffer(n.outputs[i]);
        Precision p = g_.value(n.outputs[i]).mir.storage;
        Tensor stored = results[i];
        if (p != Precision::kF32) {
          CAGR_ASSIGN_OR_RETURN(stored, ref::storedAs(results[i], p));
        }
        std::copy_n(stored.rawData(), stored.byteSize(), out.data);
      }
    }
    return Status::ok();
  }

 private:
  static std::string nodeWhere(const Node& n) { return "node '" + n.name + "' (" + opInfo(n.op).name + ")"; }

  Tensor view(const RunContext& ctx, ValueId v) const {
    auto it = stored_.find(v);
    if (it != stored_.end()) return it->second;
    const Buffer& b = ctx.buffer(v);
    return Tensor::wrap(b.dtype, b.shape, b.data);
  }

  const Graph& g_;
  std::vector<NodeId> members_;
  std::vector<ValueId> writes_;
  std::map<ValueId, Tensor> stored_;
};

}  // namespace

StatusOr<std::unique_ptr<Step>> makeReferenceStep(const StepRequest& r) {
  auto s = std::make_unique<ReferenceStep>(r);
  CAGR_RETURN_IF_ERROR(s->convertConstants());
  return std::unique_ptr<Step>(std::move(s));
}

}  // namespace cagr::cpu
