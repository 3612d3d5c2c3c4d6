// Splitting a narrow GEMM over a concat (split_concat_gemm.h).
#include "lower/split_concat_gemm.h"

#include <algorithm>
#include <cstring>

#include "ir/dims.h"
#include "ir/graph_queries.h"

namespace cagr {
namespace {

// The Concat node that Gemm (or 2-D MatMul) `n` reads as A when `n` can be
// split, else -1: A is a last-axis concat of static widths that only `n`
// reads, B a 2-D constant, at most maxN static output columns, C absent or
// a bias.
NodeId splittableConcat(const Graph& g, const ValueUses& uses, NodeId n, int64_t maxN) {
  const Node& gemm = g.node(n);
  bool matmul = gemm.op == OpKind::kMatMul;
  if (!matmul && (gemm.op != OpKind::kGemm || gemm.attrs.getInt("transA") != 0)) return -1;
  if (gemm.inputs.size() < 2) return -1;
  ValueId a = gemm.inputs[0], b = gemm.inputs[1];
  NodeId c = g.value(a).producer;
  if (c < 0 || g.node(c).op != OpKind::kConcat || g.node(c).attrs.getInt("pad") != 0) return -1;
  if (uses.count(a) != 1 || g.type(a).rank() != 2) return -1;
  int64_t axis = g.node(c).attrs.getInt("axis", 0);
  if (axis != 1 && axis != -1) return -1;
  if (!g.isConstant(b) || g.type(b).rank() != 2 || g.type(b).dtype != DType::kF32) return -1;
  const auto& y = g.type(gemm.outputs[0]).dims;
  if (y.size() != 2 || isSymbolic(y[1]) || y[1] > maxN) return -1;
  if (gemm.inputs.size() > 2 && gemm.inputs[2] != kNoValue && g.type(gemm.inputs[2]).rank() > 1) return -1;
  if (g.node(c).inputs.size() > kSplitConcatGemmMaxParts) return -1;
  for (ValueId x : g.node(c).inputs) {
    if (g.type(x).rank() != 2 || isSymbolic(g.type(x).dims[1]) || g.type(x).dtype != DType::kF32) return -1;
  }
  return c;
}

// Rows [k0, k0 + k) of K of weight `w` (stored [N, K] under transB, else [K, N]).
Tensor weightRows(const Tensor& w, bool nk, int64_t k0, int64_t k) {
  const int64_t rows = w.dim(0), cols = w.dim(1);
  Tensor part(DType::kF32, nk ? std::vector<int64_t>{rows, k} : std::vector<int64_t>{k, cols});
  const float* src = w.data<float>();
  float* dst = part.data<float>();
  if (nk) {
    for (int64_t r = 0; r < rows; ++r) std::memcpy(dst + r * k, src + r * cols + k0, static_cast<size_t>(k) * 4);
  } else {
    std::memcpy(dst, src + k0 * cols, static_cast<size_t>(k * cols) * 4);
  }
  return part;
}

Status split(Graph& h, NodeId n, NodeId c) {
  Node gemm = h.node(n);
  if (gemm.op == OpKind::kMatMul) {  // 2-D A and B: a Gemm without C
    gemm.op = OpKind::kGemm;
    gemm.attrs = Attrs();
    h.mutableNodes()[static_cast<size_t>(n)].op = OpKind::kGemm;
  }
  // Operands with their first weight row; those made on the Gemm's own
  // stream go last, so the parts over the others run on their producers'
  // streams as soon as their operand is ready, and the Gemm's stream waits
  // only for its own operands before the last part.
  std::vector<std::pair<ValueId, int64_t>> xs;
  int64_t k0 = 0;
  for (ValueId x : h.node(c).inputs) {
    xs.emplace_back(x, k0);
    k0 += h.type(x).dims[1];
  }
  auto streamOf = [&](ValueId x) {
    NodeId p = h.value(x).producer;
    return p >= 0 ? h.node(p).mir.stream : gemm.mir.stream;
  };
  std::stable_partition(xs.begin(), xs.end(), [&](const auto& x) { return streamOf(x.first) != gemm.mir.stream; });
  const ValueId w = gemm.inputs[1];
  const bool nk = gemm.attrs.getInt("transB") != 0;
  const Tensor& wt = *h.constant(w);
  ValueId carry = gemm.inputs.size() > 2 ? gemm.inputs[2] : kNoValue;
  for (size_t i = 0; i < xs.size(); ++i) {
    const auto [x, first] = xs[i];
    const int64_t k = h.type(x).dims[1];
    ValueId wi = h.addConstant(h.value(w).name + ".k" + std::to_string(first), weightRows(wt, nk, first, k));
    h.mutableValue(wi).mir = h.value(w).mir;
    Attrs attrs = gemm.attrs;
    if (i > 0) attrs.set("beta", 1.0);
    std::vector<ValueId> in = {x, wi};
    if (carry != kNoValue) in.push_back(carry);
    if (carry == kNoValue) attrs.erase("beta");
    if (i + 1 == xs.size()) {  // the original node, in its group, writing its own output
      Node& last = h.mutableNodes()[static_cast<size_t>(n)];
      last.inputs = in;
      last.attrs = attrs;
      break;
    }
    CAGR_ASSIGN_OR_RETURN(ValueId part, h.add(OpKind::kGemm, in, attrs, gemm.name + ".part" + std::to_string(i)));
    Node& p = h.mutableNodes()[static_cast<size_t>(h.value(part).producer)];
    p.mir = gemm.mir;
    p.mir.group = -1;
    p.mir.stream = streamOf(x);
    carry = part;
  }
  return Status::ok();
}

}  // namespace

StatusOr<Graph> splitConcatGemms(const Graph& plan, int64_t maxN, std::vector<SplitGemm>* out) {
  ValueUses uses = valueUses(plan);
  std::vector<std::pair<NodeId, NodeId>> splits;
  for (size_t n = 0; n < plan.nodes().size(); ++n) {
    NodeId c = splittableConcat(plan, uses, static_cast<NodeId>(n), maxN);
    if (c >= 0) splits.emplace_back(static_cast<NodeId>(n), c);
  }
  if (splits.empty()) return plan;
  Graph h = plan;
  for (auto [n, c] : splits) {
    CAGR_RETURN_IF_ERROR(split(h, n, c).withContext("split_concat_gemm at " + nodeWhere(plan, n)));
    if (out != nullptr) out->push_back({n, static_cast<int>(plan.node(c).inputs.size())});
  }
  h.eraseDeadNodes();
  CAGR_RETURN_IF_ERROR(h.topoSort());
  CAGR_RETURN_IF_ERROR(h.verify().withContext("split_concat_gemm"));
  return h;
}

}  // namespace cagr
