// Padding of misaligned GEMM widths (pad_gemm_dims.h): grows the closed set
// of tensors that carry one Concat's features, then rewrites a copy of the
// plan with those tensors wider and zero rows / columns in the weights.
#include "lower/pad_gemm_dims.h"

#include <algorithm>
#include <cstring>
#include <map>

#include "ir/dims.h"
#include "ir/graph_queries.h"
#include "lower/op_sets.h"

namespace cagr {
namespace {

// Elementwise ops that keep padded columns finite when their operands there
// are finite (zeros from the Concat, zeros from zero-padded GEMM weights).
constexpr uint64_t kFinite = ops::bit(OpKind::kRelu) | ops::bit(OpKind::kLeakyRelu) | ops::bit(OpKind::kSigmoid) |
                             ops::bit(OpKind::kTanh) | ops::bit(OpKind::kGelu) | ops::bit(OpKind::kNeg) |
                             ops::bit(OpKind::kAbs) | ops::bit(OpKind::kIdentity) | ops::bit(OpKind::kClip) |
                             ops::bit(OpKind::kAdd) | ops::bit(OpKind::kSub) | ops::bit(OpKind::kMul) |
                             ops::bit(OpKind::kMax) | ops::bit(OpKind::kMin);

// Zero rows inserted into a weight's K before old row `at`.
struct Insert {
  int64_t at = 0, count = 0;
};

// How one GEMM's constant weight B (logical [K, N]) changes.
struct WeightPad {
  std::vector<Insert> rows;  // zero rows of K
  int64_t cols = 0;          // zero columns appended to N
  bool bias = false;         // its constant C gets `cols` zeros too
};

// The set of tensors one root Concat's features flow through.
class Closure {
 public:
  Closure(const Graph& g, const ValueUses& uses, NodeId root, int64_t from, int64_t to)
      : g_(g), uses_(uses), root_(root), from_(from), to_(to), inSet_(g.numValues(), 0) {}

  /// "" when the set is closed under the rules of pad_gemm_dims.h.
  std::string grow() {
    add(g_.node(root_).outputs[0]);
    for (size_t q = 0; q < queue_.size() && why_.empty(); ++q) visit(queue_[q]);
    for (auto& [c, inserts] : concats_) {
      if (!why_.empty()) break;
      widenConcat(c, inserts);
    }
    if (why_.empty() && !reduced_) why_ = "no GEMM on the features runs reduced math";
    return why_;
  }

  Graph apply(const Graph& plan, PaddedWidth& report) const {
    Graph h = plan;
    h.mutableNodes()[static_cast<size_t>(root_)].attrs.set("pad", to_ - from_);
    for (size_t v = 0; v < inSet_.size(); ++v) {
      if (inSet_[v]) h.mutableValue(static_cast<ValueId>(v)).type.dims[1] = to_;
    }
    for (const auto& [c, inserts] : concats_) {
      ValueId out = h.node(c).outputs[0];
      for (const Insert& i : inserts) h.mutableValue(out).type.dims[1] += i.count;
    }
    for (const auto& [n, pad] : gemms_) {
      padWeight(h, n, pad);
      if (pad.bias) replaceOperand(h, n, 2, padLast(*h.constant(h.node(n).inputs[2]), pad.cols));
    }
    for (auto [n, i] : constants_) replaceOperand(h, n, i, padLast(*h.constant(h.node(n).inputs[i]), to_ - from_));
    report.concat = root_;
    report.from = from_;
    report.to = to_;
    report.gemms = static_cast<int>(gemms_.size());
    for (char s : inSet_) report.values += s;
    return h;
  }

 private:
  bool isFeature(ValueId v) const {
    const auto& d = g_.type(v).dims;
    return d.size() == 2 && d[1] == from_;
  }

  void fail(std::string why) {
    if (why_.empty()) why_ = std::move(why);
  }

  void add(ValueId v) {
    if (inSet_[static_cast<size_t>(v)]) return;
    if (!isFeature(v)) return fail("%" + g_.value(v).name + " is not [B, " + std::to_string(from_) + "]");
    inSet_[static_cast<size_t>(v)] = 1;
    queue_.push_back(v);
  }

  void visit(ValueId v) {
    if (uses_.isOutput[static_cast<size_t>(v)]) return fail("%" + g_.value(v).name + " is a graph output");
    NodeId p = g_.value(v).producer;
    if (p < 0) return fail("%" + g_.value(v).name + " is an input or a constant");
    if (p != root_) producer(p, v);
    for (NodeId c : uses_.consumers[static_cast<size_t>(v)]) consumer(c, v);
  }

  void producer(NodeId p, ValueId v) {
    const Node& n = g_.node(p);
    if (ops::in(kFinite, n.op)) return eltwise(p);
    if ((n.op == OpKind::kGemm || n.op == OpKind::kMatMul) && n.outputs[0] == v) return gemmOut(p);
    fail(nodeWhere(g_, p) + " makes %" + g_.value(v).name);
  }

  void consumer(NodeId c, ValueId v) {
    const Node& n = g_.node(c);
    if (ops::in(kFinite, n.op)) return eltwise(c);
    if (n.op == OpKind::kGemm || n.op == OpKind::kMatMul) {
      for (size_t i = 0; i < n.inputs.size(); ++i) {
        if (n.inputs[i] != v) continue;
        if (i == 0) gemmA(c);
        else if (i == 2) gemmOut(c);
        else fail(nodeWhere(g_, c) + " reads %" + g_.value(v).name + " as its weight");
      }
      return;
    }
    if (n.op == OpKind::kConcat && g_.type(n.outputs[0]).rank() == 2 &&
        normAxis(n.attrs.getInt("axis", 0), 2) == std::optional<int64_t>(1)) {
      concats_[c];
      return;
    }
    fail(nodeWhere(g_, c) + " reads %" + g_.value(v).name);
  }

  // An elementwise op over the features: its output and its [B, F] operands
  // are in the set; an operand broadcast along the features must be a constant.
  void eltwise(NodeId id) {
    const Node& n = g_.node(id);
    add(n.outputs[0]);
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      ValueId u = n.inputs[i];
      if (u == kNoValue || isFeature(u)) {
        if (u != kNoValue) add(u);
        continue;
      }
      const auto& d = g_.type(u).dims;
      if (d.empty() || d.back() == 1) continue;  // broadcast over the features
      if (d.back() != from_ || d.size() > 2 || (d.size() == 2 && d[0] != 1)) {
        return fail(nodeWhere(g_, id) + " mixes the features with %" + g_.value(u).name);
      }
      if (!constantF32(u)) return fail(nodeWhere(g_, id) + ": %" + g_.value(u).name + " is not an f32 constant");
      if (std::find(constants_.begin(), constants_.end(), std::pair{id, i}) == constants_.end()) {
        constants_.push_back({id, i});
      }
    }
  }

  bool constantF32(ValueId v) const { return g_.isConstant(v) && g_.constant(v)->dtype() == DType::kF32; }

  // The GEMM's weight as a logical [K, N] must be a 2-D f32 constant.
  bool weightOk(NodeId id) {
    const Node& n = g_.node(id);
    if (n.op == OpKind::kGemm && n.attrs.getInt("transA") != 0) {
      fail(nodeWhere(g_, id) + " transposes operand A");
      return false;
    }
    if (n.inputs.size() < 2 || !constantF32(n.inputs[1]) || g_.type(n.inputs[1]).rank() != 2 ||
        g_.type(n.inputs[0]).rank() != 2) {
      fail(nodeWhere(g_, id) + " has no 2-D f32 constant weight");
      return false;
    }
    if (n.mir.math != Precision::kF32) reduced_ = true;
    return true;
  }

  void gemmA(NodeId id) {
    if (!weightOk(id)) return;
    WeightPad& w = gemms_[id];
    if (w.rows.empty()) w.rows.push_back({from_, to_ - from_});
  }

  // A GEMM whose output is in the set: N = F gets zero columns, and its C
  // (bias) too when it is a constant along the features.
  void gemmOut(NodeId id) {
    if (!weightOk(id)) return;
    const Node& n = g_.node(id);
    add(n.outputs[0]);
    WeightPad& w = gemms_[id];
    w.cols = to_ - from_;
    if (n.op != OpKind::kGemm || n.inputs.size() < 3 || n.inputs[2] == kNoValue) return;
    ValueId c = n.inputs[2];
    const auto& d = g_.type(c).dims;
    if (isFeature(c)) return add(c);
    if (d.empty() || d.back() == 1) return;
    if (d.back() == from_ && constantF32(c) && (d.size() == 1 || (d.size() == 2 && d[0] == 1))) {
      w.bias = true;
      return;
    }
    fail(nodeWhere(g_, id) + ": its C %" + g_.value(c).name + " is no constant along the features");
  }

  // A Concat of set members grows by the padding at each one's end; it may
  // only feed GEMMs as operand A, whose weights get zero rows there.
  void widenConcat(NodeId c, std::vector<Insert>& inserts) {
    const Node& n = g_.node(c);
    int64_t at = 0;
    for (ValueId u : n.inputs) {
      at += g_.type(u).dims[1];
      if (inSet_[static_cast<size_t>(u)]) inserts.push_back({at, to_ - from_});
    }
    ValueId out = n.outputs[0];
    if (uses_.isOutput[static_cast<size_t>(out)]) return fail(nodeWhere(g_, c) + " is a graph output");
    for (NodeId r : uses_.consumers[static_cast<size_t>(out)]) {
      const Node& m = g_.node(r);
      bool onlyA = (m.op == OpKind::kGemm || m.op == OpKind::kMatMul) && m.inputs[0] == out &&
                   std::count(m.inputs.begin(), m.inputs.end(), out) == 1;
      if (!onlyA) return fail(nodeWhere(g_, r) + " reads the widened " + nodeWhere(g_, c));
      if (!weightOk(r)) return;
      WeightPad& w = gemms_[r];
      if (!w.rows.empty()) return fail(nodeWhere(g_, r) + " is padded twice");
      w.rows = inserts;
    }
  }

  // `t` [.., L] with `count` zeros appended to its last axis.
  static Tensor padLast(const Tensor& t, int64_t count) {
    std::vector<int64_t> shape = t.shape();
    int64_t last = shape.back(), rows = t.numel() / std::max<int64_t>(last, 1);
    shape.back() += count;
    Tensor p(t.dtype(), shape);
    for (int64_t r = 0; r < rows; ++r) {
      std::memcpy(p.data<float>() + r * shape.back(), t.data<float>() + r * last, static_cast<size_t>(last) * 4);
    }
    return p;
  }

  static void replaceOperand(Graph& h, NodeId n, size_t i, Tensor t) {
    ValueId old = h.node(n).inputs[i];
    ValueDecision mir = h.value(old).mir;
    std::string name = h.value(old).name + ".padded";
    ValueId v = h.addConstant(std::move(name), std::move(t));
    h.mutableValue(v).mir = mir;
    h.mutableNodes()[static_cast<size_t>(n)].inputs[i] = v;
  }

  // The weight of GEMM `n` with zero rows inserted into K and zero columns
  // appended to N (stored [N, K] under transB, else [K, N]).
  static void padWeight(Graph& h, NodeId n, const WeightPad& pad) {
    const Node& node = h.node(n);
    bool nk = node.op == OpKind::kGemm && node.attrs.getInt("transB") != 0;
    const Tensor& w = *h.constant(node.inputs[1]);
    int64_t K = nk ? w.dim(1) : w.dim(0), N = nk ? w.dim(0) : w.dim(1);
    int64_t K2 = K, N2 = N + pad.cols;
    for (const Insert& i : pad.rows) K2 += i.count;
    Tensor p(DType::kF32, nk ? std::vector<int64_t>{N2, K2} : std::vector<int64_t>{K2, N2});
    const float* src = w.data<float>();
    float* dst = p.data<float>();
    for (int64_t k = 0; k < K; ++k) {
      int64_t k2 = k;
      for (const Insert& i : pad.rows) k2 += k >= i.at ? i.count : 0;
      for (int64_t c = 0; c < N; ++c) {
        if (nk) dst[c * K2 + k2] = src[c * K + k];
        else dst[k2 * N2 + c] = src[k * N + c];
      }
    }
    replaceOperand(h, n, 1, std::move(p));
  }

  const Graph& g_;
  const ValueUses& uses_;
  NodeId root_;
  int64_t from_, to_;
  std::vector<char> inSet_;
  std::vector<ValueId> queue_;
  std::map<NodeId, WeightPad> gemms_;
  std::map<NodeId, std::vector<Insert>> concats_;
  std::vector<std::pair<NodeId, size_t>> constants_;
  bool reduced_ = false;
  std::string why_;
};

// Concats that may start a set: rank 2, along the features, a static
// misaligned width, and a kernel of their own or the output of a fused
// interaction / FM (those kernels write the zero columns; a Concat fused
// into a GEMM's or an elementwise tail cannot).
std::vector<NodeId> roots(const Graph& g, int64_t align) {
  std::map<int32_t, int> groupSize;
  std::map<int32_t, bool> recGroup;
  for (const Node& n : g.nodes()) {
    if (n.mir.group < 0) continue;
    ++groupSize[n.mir.group];
    if (n.op == OpKind::kInteraction || n.op == OpKind::kFM) recGroup[n.mir.group] = true;
  }
  std::vector<NodeId> out;
  for (size_t i = 0; i < g.nodes().size(); ++i) {
    const Node& n = g.nodes()[i];
    if (n.op != OpKind::kConcat) continue;
    if (n.mir.group >= 0 && groupSize[n.mir.group] > 1 && !recGroup[n.mir.group]) continue;
    const auto& d = g.type(n.outputs[0]).dims;
    if (d.size() != 2 || normAxis(n.attrs.getInt("axis", 0), 2) != std::optional<int64_t>(1)) continue;
    if (isSymbolic(d[1]) || d[1] % align == 0) continue;
    out.push_back(static_cast<NodeId>(i));
  }
  return out;
}

}  // namespace

StatusOr<Graph> padGemmDims(const Graph& plan, int64_t align, std::vector<PaddedWidth>* out) {
  if (align <= 1) return plan;
  Graph g = plan;
  for (NodeId root : roots(plan, align)) {
    ValueUses uses = valueUses(g);
    int64_t from = g.type(g.node(root).outputs[0]).dims[1];
    if (from % align == 0) continue;  // widened by an earlier set
    Closure set(g, uses, root, from, (from + align - 1) / align * align);
    if (!set.grow().empty()) continue;
    PaddedWidth report;
    g = set.apply(g, report);
    if (out) out->push_back(report);
  }
  return g;
}

}  // namespace cagr
