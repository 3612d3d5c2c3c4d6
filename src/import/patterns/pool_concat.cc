// Pushes a sum through the concat it reduces: ReduceSum(Concat(x1..xn, axis a), axes R), a not in R and the
// concat used by nothing else -> Concat(ReduceSum(x1, R), ..., ReduceSum(xn, R)) along a's place in the
// result. Same values (the sum of each block is the block of the sum); the large concat goes, and each
// part's pooling can fuse into the kernel that makes it (xDeepFM: every CIN layer's sum over the embedding
// dim joins the layer's kernel, fuse.cc / groups.cc), so the layers' [B,O,D] maps are never copied.
#include <algorithm>

#include "import/context.h"

namespace cagr::import {
namespace {

int64_t normalized(int64_t axis, int64_t rank) {
  return axis < 0 ? axis + rank : axis;
}

// Replaces the sum at node `id` when it reduces a concat along other axes; true when it did.
StatusOr<bool> pushAt(Graph& g, NodeId id, const std::vector<int>& uses) {
  const Node sum = g.node(id);  // a copy: adding nodes moves the node list
  if (sum.op != OpKind::kReduceSum || sum.inputs.size() != 1) return false;
  ValueId joined = sum.inputs[0];
  NodeId p = g.value(joined).producer;
  if (p < 0 || g.node(p).op != OpKind::kConcat || uses[static_cast<size_t>(joined)] != 1) return false;
  const Node cat = g.node(p);
  const auto rank = static_cast<int64_t>(g.type(joined).rank());
  const int64_t axis = normalized(cat.attrs.getInt("axis"), rank);
  std::vector<int64_t> axes = sum.attrs.getInts("axes");
  if (axes.empty()) return false;  // every axis, the concat's too
  for (int64_t& a : axes) a = normalized(a, rank);
  if (std::find(axes.begin(), axes.end(), axis) != axes.end()) return false;
  const bool keep = sum.attrs.getInt("keepdims", 1) != 0;
  const auto before = std::count_if(axes.begin(), axes.end(), [&](int64_t a) { return a < axis; });
  std::vector<ValueId> parts;
  for (size_t i = 0; i < cat.inputs.size(); ++i) {
    CAGR_ASSIGN_OR_RETURN(
        ValueId part, g.add(OpKind::kReduceSum, {cat.inputs[i]}, sum.attrs, sum.name + ".part" + std::to_string(i)));
    parts.push_back(part);
  }
  Attrs a;
  a.set("axis", keep ? axis : axis - before);
  CAGR_ASSIGN_OR_RETURN(ValueId pooled, g.add(OpKind::kConcat, parts, a, sum.name + ".concat"));
  if (g.type(pooled) != g.type(sum.outputs[0])) {
    return internalError("pushing '" + sum.name + "' through its concat changes the value's type");
  }
  std::string keepName = g.value(sum.outputs[0]).name;
  g.replaceAllUses(sum.outputs[0], pooled);
  g.mutableValue(pooled).name = keepName;
  return true;
}

}  // namespace

Status pushSumsThroughConcats(Graph& g, ImportReport& report) {
  const std::vector<int> uses = g.useCounts();
  const size_t count = g.nodes().size();
  int pushed = 0;
  for (size_t i = 0; i < count; ++i) {
    CAGR_ASSIGN_OR_RETURN(bool done, pushAt(g, static_cast<NodeId>(i), uses));
    if (!done) continue;
    ++pushed;
    report.recognized.push_back("ReduceSum pushed through its Concat at '" + g.node(static_cast<NodeId>(i)).name + "'");
  }
  if (pushed == 0) return Status::ok();
  g.eraseDeadNodes();
  return g.topoSort();
}

}  // namespace cagr::import
