// Recognises the factorisation-machine second-order term over x [B,F,D]:
// 0.5 * sum_d((sum_f x)^2 - sum_f x^2), however the exporter spelled it
// (ReduceSum/Pow/Mul/Sub chains), anchored at a ReduceSum over the field
// axis. Produces FM(x) (reduce=1 for [B,1], reduce=0 for [B,D]) when the
// closed region computes exactly that on random probes.
#include "import/context.h"
#include "import/patterns/region.h"

namespace cagr::import {
namespace {

StatusOr<bool> tryAt(Graph& g, const Node& sum, ImportReport& report) {
  ValueId x = sum.inputs[0];
  const TensorType& xt = g.type(x);
  if (xt.rank() != 3 || sum.attrs.getInts("axes") != std::vector<int64_t>{1}) return false;
  for (ValueId v : downstreamValues(g, sum.outputs[0], 12)) {
    const auto& dims = g.type(v).dims;
    if (dims.size() != 2 || dims[0] != xt.dims[0] || (dims[1] != 1 && dims[1] != xt.dims[2])) continue;
    Attrs a;
    if (dims[1] != 1) a.set("reduce", int64_t{0});
    auto region = regionBetween(g, {x}, v);
    if (!region || region->nodes.size() < 3 || !sameFunction(g, *region, OpKind::kFM, {x}, a)) continue;
    CAGR_RETURN_IF_ERROR(replaceRegion(g, *region, OpKind::kFM, {x}, a, sum.name + ".fm"));
    report.recognized.push_back("FM from " + std::to_string(region->nodes.size()) + " ops at '" + sum.name + "'");
    return true;
  }
  return false;
}

}  // namespace

Status recognizeFM(Graph& g, ImportReport& report) {
  bool changed = true;
  while (changed) {
    changed = false;
    for (size_t i = 0; i < g.nodes().size(); ++i) {
      Node n = g.nodes()[i];
      if (n.op != OpKind::kReduceSum) continue;
      CAGR_ASSIGN_OR_RETURN(changed, tryAt(g, n, report));
      if (changed) break;
    }
  }
  return Status::ok();
}

}  // namespace cagr::import
