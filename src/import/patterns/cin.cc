// Recognises one xDeepFM CIN layer: the outer product of xk [B,H,D] and
// x0 [B,F,D] (Einsum 'bhd,bmd->bhmd' or broadcast Mul), reshaped to
// [B,H*F,D] and contracted by a 1x1 Conv1d with weight [O,H*F,1] (+ bias).
// Produces CIN(xk, x0, w[O,H*F], bias) — the fused form never materialises
// the [B,H*F,D] product. Verified on random probes like the other patterns.
#include "import/context.h"
#include "import/patterns/region.h"

namespace cagr::import {
namespace {

// The two operands of an outer-product node, or nullopt.
std::optional<std::pair<ValueId, ValueId>> outerProduct(const Graph& g, const Node& n) {
  if (n.op == OpKind::kEinsum && n.inputs.size() == 2) return std::make_pair(n.inputs[0], n.inputs[1]);
  if (n.op != OpKind::kMul) return std::nullopt;
  auto unsq = [&](ValueId v) -> ValueId {
    const Value& val = g.value(v);
    if (val.producer < 0 || g.node(val.producer).op != OpKind::kUnsqueeze) return kNoValue;
    return g.node(val.producer).inputs[0];
  };
  ValueId a = unsq(n.inputs[0]), b = unsq(n.inputs[1]);
  if (a == kNoValue || b == kNoValue) return std::nullopt;
  return std::make_pair(a, b);
}

StatusOr<bool> tryAt(Graph& g, const Node& outer, ImportReport& report) {
  auto ops = outerProduct(g, outer);
  if (!ops) return false;
  auto [xk, x0] = *ops;
  if (g.type(xk).rank() != 3 || g.type(x0).rank() != 3) return false;
  for (ValueId v : downstreamValues(g, outer.outputs[0], 6)) {
    const Value& val = g.value(v);
    const Node& conv = g.node(val.producer);
    if (conv.op != OpKind::kConv1x1 || !g.isConstant(conv.inputs[1])) continue;
    std::vector<ValueId> ins{xk};
    if (x0 != xk) ins.push_back(x0);
    auto region = regionBetween(g, ins, v);
    if (!region) continue;
    const Tensor* w = g.constant(conv.inputs[1]);
    ValueId w2 = g.addConstant(g.value(conv.inputs[1]).name + ".cin", w->reshaped({w->dim(0), w->dim(1)}));
    std::vector<ValueId> operands{xk, x0, w2};
    if (conv.inputs.size() > 2 && conv.inputs[2] != kNoValue) operands.push_back(conv.inputs[2]);
    if (!sameFunction(g, *region, OpKind::kCIN, operands, {})) continue;
    std::string name = conv.name + ".cin";
    CAGR_RETURN_IF_ERROR(replaceRegion(g, *region, OpKind::kCIN, operands, {}, name));
    report.recognized.push_back("CIN from " + std::to_string(region->nodes.size()) + " ops at '" + name + "'");
    return true;
  }
  return false;
}

}  // namespace

Status recognizeCIN(Graph& g, ImportReport& report) {
  bool changed = true;
  while (changed) {
    changed = false;
    for (size_t i = 0; i < g.nodes().size(); ++i) {
      Node n = g.nodes()[i];
      if (n.op != OpKind::kEinsum && n.op != OpKind::kMul) continue;
      CAGR_ASSIGN_OR_RETURN(changed, tryAt(g, n, report));
      if (changed) break;
    }
  }
  return Status::ok();
}

}  // namespace cagr::import
