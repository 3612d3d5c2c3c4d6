// fold_batch_norm: inference BatchNorm over a Gemm's (or constant-weight
// MatMul [+ constant bias Add]'s) output features -> one Gemm with
// W' = W * s per output feature, b' = (beta * b - mean) * s + bn_bias,
// s = gamma / sqrt(var + eps). Pays: a whole pass over the activation goes.
// Needs: constant weights, bias and BN parameters; the GEMM output used only by BN.
#include <algorithm>
#include <cmath>

#include "ir/graph_queries.h"
#include "rewrite/actions.h"

namespace cagr::rewrites {
namespace {

// The nodes folded and the operands the folded Gemm is built from.
struct Match {
  NodeId gemm = -1;  // Gemm or MatMul
  NodeId add = -1;   // the bias Add after a MatMul, or -1
  NodeId bn = -1;
  ValueId a = kNoValue, w = kNoValue, bias = kNoValue;  // bias may be absent
  bool transB = false;
  double alpha = 1, beta = 1;
  std::vector<NodeId> nodes() const {
    std::vector<NodeId> out{gemm};
    if (add >= 0) out.push_back(add);
    out.push_back(bn);
    return out;
  }
};

std::string valueName(const Graph& g, ValueId v) {
  return "'" + g.value(v).name + "'";
}

// OK when `v` (an output of `p`) is read only by `user`.
Status onlyUsedBy(const Graph& g, const ValueUses& uses, ValueId v, NodeId p, NodeId user) {
  if (uses.isOutput[static_cast<size_t>(v)])
    return invalidArgument("the output of " + nodeWhere(g, p) + " is a graph output");
  for (NodeId u : uses.consumers[static_cast<size_t>(v)]) {
    if (u != user) return invalidArgument("the output of " + nodeWhere(g, p) + " is also used by " + nodeWhere(g, u));
  }
  return Status::ok();
}

Status constantF32(const Graph& g, ValueId v, const std::string& what, NodeId owner) {
  if (!g.isConstant(v))
    return invalidArgument(nodeWhere(g, owner) + "'s " + what + " " + valueName(g, v) + " is not a constant");
  if (g.type(v).dtype != DType::kF32) return invalidArgument(nodeWhere(g, owner) + "'s " + what + " is not f32");
  return Status::ok();
}

// A bias that is the same for every row: one value or one per output feature.
Status perFeature(const Graph& g, ValueId b, int64_t features, NodeId owner) {
  CAGR_RETURN_IF_ERROR(constantF32(g, b, "bias", owner));
  const auto& d = g.type(b).dims;
  int64_t n = g.constant(b)->numel();
  bool ok = d.size() <= 2 && (n == 1 || (n == features && d.back() == features));
  if (!ok) return invalidArgument(nodeWhere(g, owner) + "'s bias " + g.typeString(g.type(b)) + " varies per row");
  return Status::ok();
}

// The MatMul (+ bias Add) feeding the BatchNorm through `x`, produced by `p`.
Status matchMatMul(const Graph& g, const ValueUses& uses, NodeId p, Match& m) {
  if (g.node(p).op == OpKind::kAdd) {
    const Node& add = g.node(p);
    int mm = -1;
    for (int i = 0; i < 2; ++i) {
      NodeId q = g.value(add.inputs[static_cast<size_t>(i)]).producer;
      if (q >= 0 && g.node(q).op == OpKind::kMatMul) mm = i;
    }
    if (mm < 0) return invalidArgument(nodeWhere(g, m.bn) + " does not follow a Gemm or MatMul");
    m.add = p;
    m.bias = add.inputs[static_cast<size_t>(1 - mm)];
    p = g.value(add.inputs[static_cast<size_t>(mm)]).producer;
    CAGR_RETURN_IF_ERROR(onlyUsedBy(g, uses, g.node(p).outputs[0], p, m.add));
    if (g.type(add.outputs[0]) != g.type(g.node(p).outputs[0])) {
      return invalidArgument(nodeWhere(g, m.add) + " broadcasts the GEMM output to another shape");
    }
  }
  m.gemm = p;
  const Node& n = g.node(p);
  m.a = n.inputs[0];
  m.w = n.inputs[1];
  if (g.type(m.a).rank() != 2 || g.type(m.w).rank() != 2) {
    return invalidArgument(nodeWhere(g, p) + " is not a 2-D matrix product");
  }
  return Status::ok();
}

Status matchGemm(const Graph& g, NodeId p, Match& m) {
  const Node& n = g.node(p);
  m.gemm = p;
  m.a = n.inputs[0];
  m.w = n.inputs[1];
  m.bias = n.inputs.size() > 2 ? n.inputs[2] : kNoValue;
  m.transB = n.attrs.getInt("transB") != 0;
  m.alpha = n.attrs.getFloat("alpha", 1);
  m.beta = n.attrs.getFloat("beta", 1);
  return Status::ok();
}

StatusOr<Match> match(const Graph& g, const ValueUses& uses, NodeId bnId) {
  Match m;
  m.bn = bnId;
  const Node& bn = g.node(bnId);
  static const char* kParams[] = {"scale", "bias", "mean", "variance"};
  for (size_t i = 1; i < 5; ++i) CAGR_RETURN_IF_ERROR(constantF32(g, bn.inputs[i], kParams[i - 1], bnId));
  ValueId x = bn.inputs[0];
  if (g.type(x).rank() != 2) {
    return invalidArgument(nodeWhere(g, bnId) + " normalises axis 1 of a rank-" + std::to_string(g.type(x).rank()) +
                           " tensor, not a GEMM's output features");
  }
  NodeId p = g.value(x).producer;
  OpKind k = p >= 0 ? g.node(p).op : OpKind::kIdentity;
  if (k != OpKind::kGemm && k != OpKind::kMatMul && k != OpKind::kAdd) {
    return invalidArgument(nodeWhere(g, bnId) + " does not follow a Gemm or MatMul");
  }
  CAGR_RETURN_IF_ERROR(onlyUsedBy(g, uses, x, p, bnId));
  CAGR_RETURN_IF_ERROR(k == OpKind::kGemm ? matchGemm(g, p, m) : matchMatMul(g, uses, p, m));
  CAGR_RETURN_IF_ERROR(constantF32(g, m.w, "weight", m.gemm));
  int64_t features = g.type(x).dims[1];
  if (m.bias != kNoValue) CAGR_RETURN_IF_ERROR(perFeature(g, m.bias, features, m.add >= 0 ? m.add : m.gemm));
  for (NodeId n : {m.add, m.bn}) {
    if (n >= 0 && g.node(n).mir.group != g.node(m.gemm).mir.group) {
      return invalidArgument(nodeWhere(g, n) + " is in another fusion group than " + nodeWhere(g, m.gemm));
    }
  }
  return m;
}

// Per-feature scale s and folded bias b' (features = BN channels).
void foldedAffine(const Graph& g, const Match& m, std::vector<double>& s, std::vector<double>& b) {
  const Node& bn = g.node(m.bn);
  const Tensor& gamma = *g.constant(bn.inputs[1]);
  const Tensor& beta = *g.constant(bn.inputs[2]);
  const Tensor& mean = *g.constant(bn.inputs[3]);
  const Tensor& var = *g.constant(bn.inputs[4]);
  double eps = bn.attrs.getFloat("epsilon", 1e-5);
  const Tensor* c = m.bias != kNoValue ? g.constant(m.bias) : nullptr;
  int64_t n = gamma.numel();
  s.assign(static_cast<size_t>(n), 0);
  b.assign(static_cast<size_t>(n), 0);
  for (int64_t f = 0; f < n; ++f) {
    double bias = c == nullptr ? 0 : m.beta * c->getF64(c->numel() == 1 ? 0 : f);
    double sf = gamma.getF64(f) / std::sqrt(var.getF64(f) + eps);
    s[static_cast<size_t>(f)] = sf;
    b[static_cast<size_t>(f)] = (bias - mean.getF64(f)) * sf + beta.getF64(f);
  }
}

// W scaled per output feature: rows of W [N,K] with transB, else columns of W [K,N].
Tensor scaledWeight(const Tensor& w, bool transB, const std::vector<double>& s) {
  Tensor out(DType::kF32, w.shape());
  int64_t rows = w.dim(0), cols = w.dim(1);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) {
      double sf = s[static_cast<size_t>(transB ? r : c)];
      out.data<float>()[r * cols + c] = static_cast<float>(w.getF64(r * cols + c) * sf);
    }
  }
  return out;
}

// Removes `dead` nodes (their outputs unused) and renumbers producers.
void eraseNodes(Graph& g, std::vector<NodeId> dead) {
  std::sort(dead.rbegin(), dead.rend());
  auto& nodes = g.mutableNodes();
  for (NodeId d : dead) {
    for (ValueId v : nodes[static_cast<size_t>(d)].outputs) g.mutableValue(v).producer = -1;
    nodes.erase(nodes.begin() + d);
  }
  for (size_t i = 0; i < nodes.size(); ++i) {
    for (ValueId v : nodes[i].outputs) g.mutableValue(v).producer = static_cast<NodeId>(i);
  }
}

Status fold(Graph& g, const Match& m) {
  std::vector<double> s, b;
  foldedAffine(g, m, s, b);
  Tensor bias(DType::kF32, {static_cast<int64_t>(b.size())});
  for (size_t f = 0; f < b.size(); ++f) bias.data<float>()[f] = static_cast<float>(b[f]);
  const Node& bn = g.node(m.bn);
  ValueId out = bn.outputs[0];
  ValueId w = g.addConstant(g.value(m.w).name + ".bn_folded", scaledWeight(*g.constant(m.w), m.transB, s));
  ValueId c = g.addConstant(bn.name + ".folded_bias", std::move(bias));
  Node& gemm = g.mutableNodes()[static_cast<size_t>(m.gemm)];
  ValueId old = gemm.outputs[0];
  Attrs attrs;
  if (gemm.attrs.getInt("transA") != 0) attrs.set("transA", int64_t{1});
  if (m.transB) attrs.set("transB", int64_t{1});
  if (m.alpha != 1) attrs.set("alpha", m.alpha);
  gemm.op = OpKind::kGemm;
  gemm.inputs = {m.a, w, c};
  gemm.attrs = std::move(attrs);
  gemm.outputs = {out};
  g.mutableValue(old).producer = -1;
  std::vector<NodeId> dead{m.bn};
  if (m.add >= 0) dead.push_back(m.add);
  eraseNodes(g, dead);
  g.compact();
  return g.verify();
}

class FoldBatchNorm : public Rewrite {
 public:
  ActionKind kind() const override { return ActionKind::kFoldBatchNorm; }

  void candidates(const Graph& g, const Target&, bool explain, std::vector<Candidate>& out) const override {
    ValueUses uses;
    for (NodeId n = 0; n < static_cast<NodeId>(g.nodes().size()); ++n) {
      if (g.node(n).op != OpKind::kBatchNorm) continue;
      if (uses.consumers.empty()) uses = valueUses(g);
      auto m = match(g, uses, n);
      if (!m.isOk() && !explain) continue;
      Candidate cand;
      cand.action.kind = ActionKind::kFoldBatchNorm;
      cand.action.nodes = m.isOk() ? m->nodes() : std::vector<NodeId>{n};
      if (!m.isOk()) cand.reason = m.status().message();
      out.push_back(std::move(cand));
    }
  }

  Status apply(Graph& g, const Target&, const Action& a) const override {
    NodeId bn = a.nodes.empty() ? -1 : a.nodes.back();
    if (bn < 0 || static_cast<size_t>(bn) >= g.nodes().size() || g.node(bn).op != OpKind::kBatchNorm) {
      return invalidArgument("fold_batch_norm: the last node must be a BatchNorm of this graph");
    }
    CAGR_ASSIGN_OR_RETURN(Match m, match(g, valueUses(g), bn));
    if (m.nodes() != a.nodes) return invalidArgument("fold_batch_norm: the nodes do not match " + nodeWhere(g, bn));
    Graph h = g;
    CAGR_RETURN_IF_ERROR(fold(h, m));
    g = std::move(h);
    return Status::ok();
  }
};

}  // namespace

const Rewrite* foldBatchNorm() {
  static const FoldBatchNorm r;
  return &r;
}

}  // namespace cagr::rewrites
