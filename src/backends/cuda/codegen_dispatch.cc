// generateKernel: checks the request and hands it to the generator of its
// pattern (single nodes by op). Every refusal is kUnsupported naming the
// node, so the runtime can fall back to a library kernel or report it.
#include <algorithm>

#include "backends/cuda/codegen_kernel.h"
#include "ir/graph_queries.h"
#include "lower/op_sets.h"

namespace cagr::cuda {
namespace {

using Generator = StatusOr<GeneratedKernel> (*)(const CodegenRequest&, std::string&);

// The generator of a group's pattern (single nodes by their op).
Generator generatorFor(Pattern p, OpKind op) {
  switch (p) {
    case Pattern::kEltwise:
      return gen::generateEltwise;
    case Pattern::kReduce:
      return gen::generateReduce;
    case Pattern::kGather:
      return gen::generateLookup;
    case Pattern::kInteraction:
    case Pattern::kFM:
      return gen::generateRec;
    case Pattern::kCin:
      return gen::generateCin;
    case Pattern::kGemm:
      return gen::generateGemm;
    case Pattern::kConcatInPlace:
      return gen::generateMovement;
    case Pattern::kSingle:
      break;
  }
  if (op == OpKind::kSpMM) return gen::generateSpmm;
  if (ops::in(ops::kEltwise | ops::kViews, op)) return gen::generateEltwise;
  return gen::generateMovement;
}

}  // namespace

StatusOr<GeneratedKernel> generateKernel(const CodegenRequest& r, std::string& moduleSource) {
  const Graph& g = r.g;
  if (r.members.empty()) return invalidArgument("nvrtc codegen: an empty kernel group");
  for (size_t i = 0; i < r.members.size(); ++i) {
    NodeId m = r.members[i];
    if (m < 0 || static_cast<size_t>(m) >= g.nodes().size() || (i > 0 && m <= r.members[i - 1])) {
      return invalidArgument("nvrtc codegen: group members must be node ids in graph order");
    }
  }
  for (ValueId v : r.outputs) {
    if (v < 0 || static_cast<size_t>(v) >= g.numValues()) return invalidArgument("nvrtc codegen: bad output value id");
  }
  return generatorFor(r.shape.pattern, g.node(r.members.front()).op)(r, moduleSource);
}

}  // namespace cagr::cuda
