// After recognition: lists the regions that stayed generic, so `cagr
// inspect` shows why a model may be slow before it runs: embedding tables
// read by plain Gathers (no pooling recognised), products of two activations
// no recogniser lifted (attention, pairwise products outside Interaction / FM
// / CIN), and ops that only have reference kernels.
#include <map>

#include "import/context.h"

namespace cagr::import {
namespace {

bool isWeightTable(const Graph& g, ValueId v) { return g.isConstant(v) && g.type(v).rank() == 2; }

// Ops the backends run through the reference kernels only.
bool referenceOnly(OpKind op) {
  switch (op) {
    case OpKind::kTopK:
    case OpKind::kConv:
    case OpKind::kRange:
    case OpKind::kCumSum:
    case OpKind::kGatherElements:
    case OpKind::kTile:
    case OpKind::kPad:
    case OpKind::kCompare:
    case OpKind::kLogic:
    case OpKind::kMod: return true;
    default: return false;
  }
}

// The category a generic node falls in, or "" when it is not one.
std::string categoryOf(const Graph& g, const Node& n) {
  if (n.op == OpKind::kGather && isWeightTable(g, n.inputs[0])) {
    return "embedding lookup by a plain Gather (no bag pooling recognised)";
  }
  if ((n.op == OpKind::kMatMul || n.op == OpKind::kEinsum) && n.inputs.size() == 2 && !g.isConstant(n.inputs[0]) &&
      !g.isConstant(n.inputs[1])) {
    return std::string(opInfo(n.op).name) + " of two activations (not lifted to Interaction / FM / CIN)";
  }
  if (referenceOnly(n.op)) return std::string(opInfo(n.op).name) + " (reference kernel only)";
  return "";
}

}  // namespace

void summarizeGenericRegions(const Graph& g, ImportReport& report) {
  std::map<std::string, std::vector<std::string>> byCategory;
  for (const Node& n : g.nodes()) {
    std::string c = categoryOf(g, n);
    if (!c.empty()) byCategory[c].push_back(n.name);
  }
  constexpr size_t kNamesShown = 3;
  for (const auto& [category, names] : byCategory) {
    std::string s = std::to_string(names.size()) + " x " + category + ": ";
    for (size_t i = 0; i < names.size() && i < kNamesShown; ++i) s += (i ? ", '" : "'") + names[i] + "'";
    if (names.size() > kNamesShown) s += ", ...";
    report.generic.push_back(std::move(s));
  }
}

}  // namespace cagr::import
