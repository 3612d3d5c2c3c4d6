// set_layout: constant GEMM weights (operand B of Gemm / MatMul / Conv1x1, read only
// as such) get Value::mir.layout: `packed` on CPU (oneDNN / own.gemm reorder once,
// not per call), `padded` on CUDA/HIP when N or K misses the matrix unit's alignment
// and the GEMM runs tf32/bf16/f16 (tensor cores stay on their fast path), or
// `row_major` back. Never changes values.
#include <algorithm>

#include "ir/graph_queries.h"
#include "lower/op_sets.h"
#include "rewrite/actions.h"

namespace cagr::rewrites {
namespace {

// GEMMs whose operand B is a weight a library can hold in its own layout.
constexpr uint64_t kWeightOps = ops::bit(OpKind::kGemm) | ops::bit(OpKind::kMatMul) | ops::bit(OpKind::kConv1x1);
constexpr Layout kLayouts[] = {Layout::kRowMajor, Layout::kPacked, Layout::kPadded};
constexpr const char* kXlaLayouts = "XLA lays out and pads dot operands to the MXU tile by itself";

std::string valueName(const Graph& g, ValueId v) {
  return "%" + g.value(v).name;
}

// The layout a backend offers for weights (shown on near misses).
Layout backendLayout(const Target& t) {
  return t.backend == Backend::kCpu ? Layout::kPacked : Layout::kPadded;
}

struct GemmDims {
  int64_t n = 0, k = 0;
};

// N and K of GEMM `n`, read from its weight (operand 1).
GemmDims weightDims(const Graph& g, const Node& n) {
  const std::vector<Dim>& d = g.type(n.inputs[1]).dims;
  bool nFirst = n.op == OpKind::kConv1x1 || (n.op == OpKind::kGemm && n.attrs.getInt("transB") != 0);
  return nFirst ? GemmDims{d[0], d[1]} : GemmDims{d[1], d[0]};
}

// Why `w` is not a weight whose layout can be chosen; "" when it is: a
// constant read only as operand B of Gemm / MatMul (2-D) / Conv1x1.
std::string weightProblem(const Graph& g, const ValueUses& uses, ValueId w) {
  const Value& val = g.value(w);
  const auto& readers = uses.consumers[static_cast<size_t>(w)];
  if (val.constant < 0) {
    return valueName(g, w) + (readers.empty() ? "" : " (read by " + nodeWhere(g, readers.front()) + ")") +
           " is not a constant: layouts are chosen for weights";
  }
  if (uses.isOutput[static_cast<size_t>(w)]) return valueName(g, w) + " is a graph output";
  if (readers.empty()) return valueName(g, w) + " is read by no GEMM";
  for (NodeId c : readers) {
    const Node& n = g.node(c);
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      if (n.inputs[i] != w) continue;
      if (!ops::in(kWeightOps, n.op) || i != 1) {
        return valueName(g, w) + " is operand #" + std::to_string(i) + " of " + nodeWhere(g, c) + ", not a GEMM weight";
      }
      if (n.op == OpKind::kMatMul && val.type.rank() != 2) {
        return valueName(g, w) + " is a " + std::to_string(val.type.rank()) + "-D operand of " + nodeWhere(g, c) +
               ": only 2-D weights have a blocked layout";
      }
    }
  }
  return "";
}

// The element multiple a matrix unit wants for GEMM dims at `math`: the
// profile gives it for 2-byte types; tf32 elements are twice as wide.
int64_t alignFor(const Target& t, Precision math) {
  int64_t align = t.hw.matrixUnit.alignElements;
  return math == Precision::kTF32 ? std::max<int64_t>(1, align / 2) : align;
}

// Why `padded` does not apply to weight `w` on `t`; "" when it does: every
// reader runs on the matrix units and one of them misses the alignment.
std::string paddedProblem(const Graph& g, const Target& t, const ValueUses& uses, ValueId w) {
  if (t.backend == Backend::kTpu) return kXlaLayouts;
  if (t.backend == Backend::kCpu) return "the cpu backend has no padded layout (packed is its blocked format)";
  std::string aligned;
  for (NodeId c : uses.consumers[static_cast<size_t>(w)]) {
    const Node& n = g.node(c);
    if (n.mir.math == Precision::kF32) return nodeWhere(g, c) + " runs f32 math, not on the matrix units";
    GemmDims d = weightDims(g, n);
    int64_t align = alignFor(t, n.mir.math);
    if (d.n % align != 0 || d.k % align != 0) return "";
    if (aligned.empty()) {
      aligned = valueName(g, w) + " is already aligned: N = " + std::to_string(d.n) +
                " and K = " + std::to_string(d.k) + " are multiples of " + std::to_string(align) + " for " +
                precisionName(n.mir.math) + " on " + t.hw.name;
    }
  }
  return aligned;
}

// Why weight `w` cannot take layout `l` on `t`; "" when it can. `bad` is
// weightProblem(w): going back to row_major is always allowed.
std::string layoutProblem(const Graph& g, const Target& t, const ValueUses& uses, ValueId w, Layout l,
                          const std::string& bad) {
  if (g.value(w).mir.layout == l) return valueName(g, w) + " is already " + layoutName(l);
  if (l == Layout::kRowMajor) return "";
  if (!bad.empty()) return bad;
  if (l == Layout::kPacked) {
    if (t.backend == Backend::kCpu) return "";
    if (t.backend == Backend::kTpu) return kXlaLayouts;
    return std::string("the ") + backendName(t.backend) +
           " backend has no packed weight layout (its BLAS reads row-major or padded weights)";
  }
  return paddedProblem(g, t, uses, w);
}

class SetLayout : public Rewrite {
 public:
  ActionKind kind() const override { return ActionKind::kSetLayout; }

  void candidates(const Graph& g, const Target& t, bool explain, std::vector<Candidate>& out) const override {
    ValueUses uses = valueUses(g);
    std::vector<char> seen(g.numValues(), 0);
    for (const Node& n : g.nodes()) {
      if (!ops::in(kWeightOps, n.op)) continue;
      for (size_t i = 0; i < n.inputs.size(); ++i) {
        ValueId v = n.inputs[i];
        if (v == kNoValue || seen[static_cast<size_t>(v)] || (i != 1 && !g.isConstant(v))) continue;
        seen[static_cast<size_t>(v)] = 1;
        consider(g, t, uses, v, explain, out);
      }
    }
  }

  Status apply(Graph& g, const Target& t, const Action& a) const override {
    if (a.value < 0 || static_cast<size_t>(a.value) >= g.numValues()) return invalidArgument("no such value");
    CAGR_ASSIGN_OR_RETURN(Layout l, parseLayout(a.choice));
    ValueUses uses = valueUses(g);
    std::string why = layoutProblem(g, t, uses, a.value, l, weightProblem(g, uses, a.value));
    if (!why.empty()) return invalidArgument(why);
    g.mutableValue(a.value).mir.layout = l;
    return Status::ok();
  }

 private:
  // Candidates for weight `v`: each other layout, or one near miss when `v`
  // is no weight at all.
  static void consider(const Graph& g, const Target& t, const ValueUses& uses, ValueId v, bool explain,
                       std::vector<Candidate>& out) {
    Action a;
    a.kind = ActionKind::kSetLayout;
    a.value = v;
    std::string bad = weightProblem(g, uses, v);
    for (Layout l : kLayouts) {
      if (l == g.value(v).mir.layout) continue;
      std::string why = layoutProblem(g, t, uses, v, l, bad);
      if (!why.empty() && (!explain || (!bad.empty() && l != backendLayout(t)))) continue;
      a.choice = layoutName(l);
      out.push_back(Candidate{a, why});
    }
  }
};

}  // namespace

const Rewrite* setLayout() {
  static const SetLayout r;
  return &r;
}

}  // namespace cagr::rewrites
