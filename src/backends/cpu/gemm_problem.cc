// GEMM-like anchors as strided batched products (see gemm_problem.h).
#include "backends/cpu/gemm_problem.h"

#include <algorithm>

#include "ir/graph_queries.h"
#include "runtime/reference/kernel_util.h"

namespace cagr::cpu {
namespace {

// The batch dims of A and B, padded with leading 1s to one rank.
void padBatch(std::vector<int64_t>& a, std::vector<int64_t>& b) {
  size_t r = std::max(a.size(), b.size());
  a.insert(a.begin(), r - a.size(), 1);
  b.insert(b.begin(), r - b.size(), 1);
}

GemmShape matmulShape(std::vector<int64_t> as, std::vector<int64_t> bs) {
  if (as.size() == 1) as.insert(as.begin(), 1);  // 1-D promotion
  if (bs.size() == 1) bs.push_back(1);
  GemmShape s;
  s.m = as[as.size() - 2];
  s.k = as.back();
  s.n = bs.back();
  s.ars = s.k;
  s.brs = s.n;
  std::vector<int64_t> ab(as.begin(), as.end() - 2), bb(bs.begin(), bs.end() - 2);
  padBatch(ab, bb);
  std::vector<int64_t> batch(ab.size());
  for (size_t d = 0; d < batch.size(); ++d) batch[d] = ab[d] == 1 ? bb[d] : ab[d];  // NumPy broadcast
  std::vector<int64_t> sa = ref::broadcastStrides(ab, batch), sb = ref::broadcastStrides(bb, batch);
  for (size_t d = 0; d < batch.size(); ++d) s.batch.push_back({batch[d], sa[d] * s.m * s.k, sb[d] * s.k * s.n});
  return s;
}

// Strides of letters in a row-major operand with axis letters `term`.
int64_t letterStride(const std::string& term, const std::vector<int64_t>& shape, char c) {
  std::vector<int64_t> st = ref::contiguousStrides(shape);
  return st[term.find(c)];
}

int64_t letterSize(const std::string& term, const std::vector<int64_t>& shape, const std::string& letters) {
  int64_t n = 1;
  for (char c : letters) n *= shape[term.find(c)];
  return n;
}

// True when `letters` sit in `term` as consecutive axes, in that order.
bool consecutive(const std::string& term, const std::string& letters) {
  return letters.empty() || term.find(letters) != std::string::npos;
}

Status requireF32(const Graph& g, NodeId id, bool anyMath) {
  const Node& n = g.node(id);
  if (!anyMath && n.mir.math != Precision::kF32) return unsupported(nodeWhere(g, id) + " runs reduced-precision math");
  for (ValueId v : n.inputs) {
    if (v != kNoValue && g.type(v).dtype != DType::kF32) return unsupported(nodeWhere(g, id) + " has non-f32 operands");
  }
  return Status::ok();
}

// Classifies Einsum letters: batch (A, B, out), M (A, out), N (B, out), K
// (A, B); the output must be batch + M + N and every group consecutive and
// in the same order wherever it appears, so each merges into one stride.
Status classifyEinsum(const Graph& g, const Node& n, GemmAnchor& a) {
  std::string eq = n.attrs.getString("equation");
  size_t comma = eq.find(','), arrow = eq.find("->");
  if (n.inputs.size() != 2 || comma == std::string::npos || arrow == std::string::npos) {
    return unsupported("einsum '" + eq + "' is not a two-operand contraction");
  }
  a.termA = eq.substr(0, comma);
  a.termB = eq.substr(comma + 1, arrow - comma - 1);
  std::string out = eq.substr(arrow + 2);
  for (char c : out + a.termA + a.termB) {
    bool inA = a.termA.find(c) != std::string::npos, inB = a.termB.find(c) != std::string::npos;
    bool inOut = out.find(c) != std::string::npos;
    std::string* group = inA && inB ? (inOut ? &a.batchLetters : &a.kLetters)
                         : inOut    ? (inA ? &a.mLetters : &a.nLetters)
                                    : nullptr;
    if (group == nullptr) return unsupported("einsum '" + eq + "' sums a letter of one operand only");
    if (group->find(c) == std::string::npos) group->push_back(c);
  }
  // Groups take the letter order of the output (batch, M, N) or of A (K).
  bool ok = !a.kLetters.empty() && out == a.batchLetters + a.mLetters + a.nLetters &&
            consecutive(a.termA, a.mLetters) && consecutive(a.termA, a.kLetters) && consecutive(a.termB, a.kLetters) &&
            consecutive(a.termB, a.nLetters);
  if (!ok) return unsupported("einsum '" + eq + "' needs a transpose to become a batched matmul");
  const auto& da = g.type(n.inputs[0]).dims;
  const auto& db = g.type(n.inputs[1]).dims;
  for (char c : a.batchLetters + a.kLetters) {
    if (da[a.termA.find(c)] != db[a.termB.find(c)]) return unsupported("einsum '" + eq + "' broadcasts a letter");
  }
  return Status::ok();
}

StatusOr<GemmShape> einsumShape(const GemmAnchor& a, const std::vector<int64_t>& as, const std::vector<int64_t>& bs) {
  if (as.size() != a.termA.size() || bs.size() != a.termB.size()) return internalError("einsum operand ranks changed");
  GemmShape s;
  s.m = letterSize(a.termA, as, a.mLetters);
  s.k = letterSize(a.termA, as, a.kLetters);
  s.n = letterSize(a.termB, bs, a.nLetters);
  s.ars = a.mLetters.empty() ? 0 : letterStride(a.termA, as, a.mLetters.back());
  s.acs = letterStride(a.termA, as, a.kLetters.back());
  s.brs = letterStride(a.termB, bs, a.kLetters.back());
  s.bcs = a.nLetters.empty() ? 0 : letterStride(a.termB, bs, a.nLetters.back());
  for (char c : a.batchLetters) {
    s.batch.push_back({as[a.termA.find(c)], letterStride(a.termA, as, c), letterStride(a.termB, bs, c)});
  }
  return s;
}

}  // namespace

StatusOr<GemmShape> GemmAnchor::shape(const std::vector<int64_t>& aShape, const std::vector<int64_t>& bShape) const {
  GemmShape s;
  switch (op) {
    case OpKind::kGemm:
      s.m = aShape[transA ? 1 : 0];
      s.k = aShape[transA ? 0 : 1];
      s.n = bShape[transB ? 0 : 1];
      s.ars = transA ? 1 : s.k;
      s.acs = transA ? s.m : 1;
      s.brs = transB ? 1 : s.n;
      s.bcs = transB ? s.k : 1;
      break;
    case OpKind::kMatMul:
      s = matmulShape(aShape, bShape);
      break;
    case OpKind::kConv1x1:  // Y[b] = W[Cout, Cin] * X[b][Cin, L]
      s.m = aShape[0];
      s.k = aShape[1];
      s.n = bShape[2];
      s.ars = s.k;
      s.brs = s.n;
      s.batch.push_back({bShape[0], 0, s.k * s.n});
      break;
    case OpKind::kEinsum: {
      CAGR_ASSIGN_OR_RETURN(s, einsumShape(*this, aShape, bShape));
      break;
    }
    default:
      return internalError("not a GEMM anchor");
  }
  s.simplify();
  return s;
}

bool GemmAnchor::sharedB() const {
  switch (op) {
    case OpKind::kGemm:
      return true;
    case OpKind::kMatMul:
      return bRank <= 2;
    case OpKind::kEinsum:
      return batchLetters.empty();
    default:
      return false;
  }
}

StatusOr<GemmAnchor> analyzeAnchor(const Graph& g, NodeId id, bool anyMath) {
  const Node& n = g.node(id);
  CAGR_RETURN_IF_ERROR(requireF32(g, id, anyMath));
  GemmAnchor a;
  a.node = id;
  a.op = n.op;
  a.a = n.inputs[0];
  a.b = n.inputs[1];
  a.c = n.inputs.size() > 2 ? n.inputs[2] : kNoValue;
  switch (n.op) {
    case OpKind::kGemm:
      a.transA = n.attrs.getInt("transA") != 0;
      a.transB = n.attrs.getInt("transB") != 0;
      a.alpha = n.attrs.getFloat("alpha", 1.0);
      a.beta = n.attrs.getFloat("beta", 1.0);
      break;
    case OpKind::kMatMul:
      a.bRank = g.type(a.b).rank();
      break;
    case OpKind::kConv1x1:
      std::swap(a.a, a.b);
      a.cOnChannels = true;
      break;
    case OpKind::kEinsum:
      CAGR_RETURN_IF_ERROR(classifyEinsum(g, n, a));
      break;
    default:
      return unsupported(nodeWhere(g, id) + " is not a GEMM-like op");
  }
  return a;
}

}  // namespace cagr::cpu
