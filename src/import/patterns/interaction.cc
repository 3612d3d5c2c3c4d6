// Recognises DLRM's dot interaction: Z = T @ T^T over T [B,F,D] followed by
// any indexing that extracts the strict lower triangle in DLRM order
// (Transpose/Flatten/Gather or GatherND chains, as both exporters emit).
// Produces Interaction(T). The region must be closed and compute exactly
// Interaction on random probes; otherwise the original ops stay.
#include "import/context.h"
#include "import/patterns/region.h"

namespace cagr::import {
namespace {

bool isBatchedTranspose(const Graph& g, ValueId v, ValueId of) {
  const Value& val = g.value(v);
  if (val.producer < 0) return false;
  const Node& t = g.node(val.producer);
  return t.op == OpKind::kTranspose && t.inputs[0] == of && t.attrs.getInts("perm") == std::vector<int64_t>{0, 2, 1};
}

// Tries one MatMul(T, Transpose(T)); returns true if it replaced something.
StatusOr<bool> tryAt(Graph& g, const Node& mm, ImportReport& report) {
  ValueId t = mm.inputs[0];
  const TensorType& tt = g.type(t);
  if (tt.rank() != 3 || isSymbolic(tt.dims[1]) || !isBatchedTranspose(g, mm.inputs[1], t)) return false;
  int64_t f = tt.dims[1];
  for (int self = 0; self <= 1; ++self) {
    int64_t pairs = f * (f - 1) / 2 + (self != 0 ? f : 0);
    for (ValueId v : downstreamValues(g, mm.outputs[0], 16)) {
      if (g.type(v).dims != std::vector<Dim>{tt.dims[0], pairs}) continue;
      auto region = regionBetween(g, {t}, v);
      Attrs a;
      if (self != 0) a.set("self_interaction", int64_t{1});
      if (!region || !sameFunction(g, *region, OpKind::kInteraction, {t}, a)) continue;
      std::string name = mm.name + ".interaction";
      CAGR_RETURN_IF_ERROR(replaceRegion(g, *region, OpKind::kInteraction, {t}, a, name));
      report.recognized.push_back("Interaction from " + std::to_string(region->nodes.size()) + " ops at '" + mm.name + "'");
      return true;
    }
  }
  return false;
}

}  // namespace

Status recognizeInteraction(Graph& g, ImportReport& report) {
  bool changed = true;
  while (changed) {
    changed = false;
    for (size_t i = 0; i < g.nodes().size(); ++i) {
      Node mm = g.nodes()[i];
      if (mm.op != OpKind::kMatMul) continue;
      CAGR_ASSIGN_OR_RETURN(changed, tryAt(g, mm, report));
      if (changed) break;
    }
  }
  return Status::ok();
}

}  // namespace cagr::import
