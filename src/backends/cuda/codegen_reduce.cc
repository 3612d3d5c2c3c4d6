// Reductions with an elementwise prologue (Pattern::kReduce, kernel
// nvrtc.reduce): ReduceSum / ReduceMean / ReduceMax over contiguous axes,
// Softmax and LayerNorm. The input is seen as [outer, R, inner]. With
// inner == 1 a group of L lanes (a power of two <= 32) reduces one row with
// coalesced loads and shuffles; otherwise one thread walks each (outer,
// inner) column. The prologue is recomputed in registers in every pass
// (max / sum / write for Softmax, mean / variance / write for LayerNorm).
#include <algorithm>
#include <functional>

#include "backends/cuda/codegen_kernel.h"
#include "ir/dims.h"
#include "ir/op_table.h"
#include "ir/shape_util.h"
#include "lower/op_sets.h"

namespace cagr::cuda::gen {
namespace {

struct ReduceShape {
  size_t ra = 0, rb = 0;  // reduced dims [ra, rb) of the input
  int lanes = 1;          // > 1: lanes per row (inner == 1)
};

StatusOr<ReduceShape> reduceShape(const Graph& g, NodeId a) {
  const Node& n = g.node(a);
  const auto& xs = g.type(n.inputs[0]).dims;
  int64_t rank = static_cast<int64_t>(xs.size());
  ReduceShape s;
  if (n.op == OpKind::kSoftmax || n.op == OpKind::kLayerNorm) {
    auto ax = normAxis(n.attrs.getInt("axis", -1), rank);
    if (!ax) return unsupportedAt(g, a, "axis out of range");
    s.ra = static_cast<size_t>(*ax);
    s.rb = n.op == OpKind::kSoftmax ? s.ra + 1 : xs.size();
  } else {
    CAGR_ASSIGN_OR_RETURN(auto axes, reduceAxes(n.attrs.getInts("axes"), rank));
    if (axes.empty()) {
      s.rb = xs.size();
    } else {
      for (size_t i = 1; i < axes.size(); ++i) {
        if (axes[i] != axes[i - 1] + 1) return unsupportedAt(g, a, "reduces over axes that are not contiguous");
      }
      s.ra = static_cast<size_t>(axes.front());
      s.rb = static_cast<size_t>(axes.back()) + 1;
    }
  }
  bool innerOne = std::all_of(xs.begin() + static_cast<std::ptrdiff_t>(s.rb), xs.end(), [](Dim d) { return d == 1; });
  if (innerOne) {
    auto r = productOf(xs, s.ra, s.rb);
    int64_t rs = r && r->sym == 0 ? r->coef : 32;
    s.lanes = 1;
    while (s.lanes * 2 <= std::min<int64_t>(rs, 32)) s.lanes *= 2;
  } else {
    s.lanes = 0;
  }
  return s;
}

// Emits the passes over one row (lanes > 0) or one column (lanes == 0).
class Passes {
 public:
  Passes(KernelBuilder& k, NodeId anchor, const ReduceShape& s, std::string rowIdx, std::string R)
      : k_(k), a_(anchor), s_(s), rowIdx_(std::move(rowIdx)), R_(std::move(R)) {}

  // for (r ...) { x = prologue at the input index; stmt(x) }; the first pass
  // also stores the prologue values the group writes.
  Status pass(std::string& code, bool first, const std::function<std::string(const std::string&)>& stmt) {
    const Graph& g = k_.g();
    std::string inner = "        const long long xi = " + rowIdx_ + ";\n";
    ValueEmitter e(k_, inner, "        ");
    CAGR_ASSIGN_OR_RETURN(std::string xv, e.at(g.node(a_).inputs[0], "xi"));
    for (ValueId u : k_.req().outputs) {
      if (!first || u == g.node(a_).outputs[0]) continue;
      CAGR_ASSIGN_OR_RETURN(std::string uv, e.at(u, "xi"));
      e.store(u, "xi", uv);
    }
    inner += "        " + stmt(xv) + "\n";
    std::string start = s_.lanes > 0 ? "lane" : "0", step = std::to_string(std::max(s_.lanes, 1));
    code += "      for (long long r = " + start + "; " + (s_.lanes > 0 ? "ok && " : "") + "r < " + R_ +
            "; r += " + step + ") {\n" + inner + "      }\n";
    return Status::ok();
  }

  // Combines the lanes' partial results (a no-op for one lane per row).
  std::string combine(const std::string& v, bool max) const {
    if (s_.lanes <= 1) return "";
    return "      " + v + " = " + (max ? "cagr_wmax<" : "cagr_wsum<") + std::to_string(s_.lanes) + ">(" + v + ");\n";
  }

 private:
  KernelBuilder& k_;
  NodeId a_;
  ReduceShape s_;
  std::string rowIdx_, R_;
};

// The passes of the anchor's op over one row; `outIdx` indexes a reduction's output.
Status emitPasses(KernelBuilder& k, NodeId a, const ReduceShape& s, Passes& p, const std::string& outIdx,
                  const std::string& R, std::string& code) {
  const Graph& g = k.g();
  const Node& n = g.node(a);
  DType t = g.type(n.inputs[0]).dtype;
  std::string T = computeType(t), out = k.out(n.outputs[0]);
  if (T != "float" && T != "double") return unsupportedAt(g, a, "reduces a non-floating tensor");
  bool f = T == "float";
  std::string ex = f ? "expf" : "exp", sq = f ? "sqrtf" : "sqrt", inf = f ? "CAGR_INF" : "CAGR_INF_D";
  std::string cnt = "(" + T + ")" + R;
  if (n.op == OpKind::kSoftmax) {
    code += "      " + T + " mx = -" + inf + ";\n";
    CAGR_RETURN_IF_ERROR(p.pass(code, true, [&](const std::string& x) { return "mx = cagr_max(mx, " + x + ");"; }));
    code += p.combine("mx", true) + "      " + T + " sm = 0;\n";
    CAGR_RETURN_IF_ERROR(
        p.pass(code, false, [&](const std::string& x) { return "sm += " + ex + "(" + x + " - mx);"; }));
    code += p.combine("sm", false);
    return p.pass(code, false,
                  [&](const std::string& x) { return "cagr_st(" + out + ", xi, " + ex + "(" + x + " - mx) / sm);"; });
  }
  if (n.op == OpKind::kLayerNorm) {
    code += "      " + T + " s1 = 0;\n";
    CAGR_RETURN_IF_ERROR(p.pass(code, true, [&](const std::string& x) { return "s1 += " + x + ";"; }));
    code += p.combine("s1", false) + "      const " + T + " mean = s1 / " + cnt + ";\n      " + T + " s2 = 0;\n";
    CAGR_RETURN_IF_ERROR(p.pass(
        code, false, [&](const std::string& x) { return "{ const " + T + " d = " + x + " - mean; s2 += d * d; }"; }));
    code += p.combine("s2", false) + "      const " + T + " rstd = " + literal(1, t) + " / " + sq + "(s2 / " + cnt +
            " + " + literal(n.attrs.getFloat("epsilon", 1e-5), t) + ");\n";
    std::vector<Dim> norm(g.type(n.inputs[0]).dims.begin() + static_cast<std::ptrdiff_t>(s.ra),
                          g.type(n.inputs[0]).dims.end());
    std::string scale =
        "cagr_ld(" + k.in(n.inputs[1]) + ", " + broadcastIndex(k, norm, "r", g.type(n.inputs[1]).dims) + ")";
    std::string bias = literal(0, t);
    if (n.inputs.size() > 2 && n.inputs[2] != kNoValue) {
      bias = "cagr_ld(" + k.in(n.inputs[2]) + ", " + broadcastIndex(k, norm, "r", g.type(n.inputs[2]).dims) + ")";
    }
    return p.pass(code, false, [&](const std::string& x) {
      return "cagr_st(" + out + ", xi, (" + x + " - mean) * rstd * " + scale + " + " + bias + ");";
    });
  }
  bool max = n.op == OpKind::kReduceMax;
  code += "      " + T + " acc = " + (max ? "-" + inf : std::string("0")) + ";\n";
  CAGR_RETURN_IF_ERROR(p.pass(
      code, true, [&](const std::string& x) { return max ? "acc = cagr_max(acc, " + x + ");" : "acc += " + x + ";"; }));
  code += p.combine("acc", max);
  std::string v = n.op == OpKind::kReduceMean ? "acc / " + cnt : "acc";
  std::string guard = s.lanes > 0 ? "if (ok && lane == 0) " : "";
  code += "      " + guard + "cagr_st(" + out + ", " + outIdx + ", " + v + ");\n";
  return Status::ok();
}

std::string opList(const Graph& g, const std::vector<NodeId>& members) {
  std::string s;
  for (NodeId m : members) {
    if (!ops::in(ops::kViews, g.node(m).op)) s += (s.empty() ? "" : "+") + std::string(opInfo(g.node(m).op).mnemonic);
  }
  return s;
}

}  // namespace

StatusOr<GeneratedKernel> generateReduce(const CodegenRequest& r, std::string& src) {
  const Graph& g = r.g;
  NodeId a = r.shape.anchor;
  if (a < 0 || !ops::in(ops::kReductions, g.node(a).op))
    return unsupportedAt(g, r.members.front(), "no reduction anchor");
  for (NodeId m : r.members) {
    if (m != a && !ops::in(ops::kEltwise | ops::kViews, g.node(m).op))
      return unsupportedAt(g, m, "cannot precede a reduction");
  }
  CAGR_ASSIGN_OR_RETURN(ReduceShape s, reduceShape(g, a));
  ValueId x = g.node(a).inputs[0];
  for (ValueId u : r.outputs) {
    const auto& d = g.type(u).dims;
    if (u != g.node(a).outputs[0] && !(sameSize(d, g.type(x).dims) && broadcastsInto(d, g.type(x).dims))) {
      return unsupportedAt(g, g.value(u).producer, "its output has another layout than the reduction's input");
    }
  }
  KernelBuilder k(r, "reduce", src);
  const auto& xs = g.type(x).dims;
  std::string outer = k.size(xs, 0, s.ra), R = k.size(xs, s.ra, s.rb), inner = k.size(xs, s.rb);
  std::string code;
  LaunchRule rule;
  rule.work.assign(xs.begin(), xs.begin() + static_cast<std::ptrdiff_t>(s.ra));
  rule.maxBlocks = 4096;
  if (s.lanes > 0) {
    std::string L = std::to_string(s.lanes), G = std::to_string(32 / s.lanes);
    Passes p(k, a, s, "row * " + R + " + r", R);
    CAGR_RETURN_IF_ERROR(emitPasses(k, a, s, p, "row", R, code));
    k.body += "  const int lane = threadIdx.x % " + L + ";\n  const long long rows = " + outer + ";\n" +
              "  for (long long base = ((long long)blockIdx.x * blockDim.x + threadIdx.x) / 32 * " + G +
              "; base < rows; base += (long long)gridDim.x * blockDim.x / 32 * " + G + ") {\n" +
              "      const long long row = base + (threadIdx.x % 32) / " + L +
              ";\n      const bool ok = row < rows;\n" + code + "  }\n";
    rule.perBlock = 256 / s.lanes;
  } else {
    Passes p(k, a, s, "(o * " + R + " + r) * " + inner + " + ii", R);
    CAGR_RETURN_IF_ERROR(emitPasses(k, a, s, p, "col", R, code));
    k.body += gridStride("col", outer + " * " + inner,
                         "      const long long o = col / " + inner + ", ii = col % " + inner + ";\n" + code);
    rule.work.insert(rule.work.end(), xs.begin() + static_cast<std::ptrdiff_t>(s.rb), xs.end());
  }
  return k.finish(src, rule, "nvrtc.reduce[" + opList(g, r.members) + "]");
}

}  // namespace cagr::cuda::gen
