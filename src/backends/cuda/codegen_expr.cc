// Scalar code shared by every generator: the C expression of each
// elementwise op (matching the reference kernels of
// runtime/reference/eltwise.cc), NumPy broadcasting as index arithmetic,
// the on-demand value emitter of elementwise groups and the tail chain that
// follows a GEMM or lookup anchor (elementwise ops, views, concats).
#include <algorithm>
#include <cmath>
#include <optional>

#include "backends/cuda/codegen_kernel.h"
#include "ir/dims.h"
#include "ir/op_table.h"
#include "lower/op_sets.h"

namespace cagr::cuda::gen {
namespace {

bool isView(OpKind k) {
  return ops::in(ops::kViews, k);
}

std::optional<int64_t> staticProduct(const std::vector<Dim>& d, size_t b, size_t e) {
  int64_t p = 1;
  for (size_t i = b; i < std::min(e, d.size()); ++i) {
    if (isSymbolic(d[i])) return std::nullopt;
    p *= d[i];
  }
  return p;
}

std::string unaryExpr(const Node& n, const std::string& x, DType t) {
  bool f = computeType(t) == "float";
  auto fn = [&](const std::string& name) { return name + (f ? "f(" : "(") + x + ")"; };
  std::string one = literal(1, t), half = literal(0.5, t);
  switch (n.op) {
    case OpKind::kRelu:
      // x < 0 ? 0 : x keeps NaN (ONNX Relu propagates it; x > 0 ? x : 0 made it 0).
      return "(" + x + " < " + literal(0, t) + " ? " + literal(0, t) + " : " + x + ")";
    case OpKind::kLeakyRelu:
      return "(" + x + " >= " + literal(0, t) + " ? " + x + " : " + literal(n.attrs.getFloat("alpha", 0.01), t) +
             " * " + x + ")";
    case OpKind::kSigmoid:
      return "cagr_sigmoid(" + x + ")";
    case OpKind::kTanh:
      return fn("tanh");
    case OpKind::kGelu:
      if (n.attrs.getString("approximate", "none") == "tanh") {
        return half + " * " + x + " * (" + one + " + " + (f ? "tanhf(" : "tanh(") + literal(0.7978845608028654, t) +
               " * (" + x + " + " + literal(0.044715, t) + " * " + x + " * " + x + " * " + x + ")))";
      }
      return half + " * " + x + " * (" + one + " + " + (f ? "erff(" : "erf(") + x + " * " +
             literal(0.70710678118654752, t) + "))";
    case OpKind::kExp:
      return fn("exp");
    case OpKind::kLog:
      return fn("log");
    case OpKind::kNeg:
      return "(-" + x + ")";
    case OpKind::kAbs:
      return "(" + x + " < " + literal(0, t) + " ? -" + x + " : " + x + ")";
    case OpKind::kSqrt:
      return fn("sqrt");
    case OpKind::kReciprocal:
      return "(" + one + " / " + x + ")";
    case OpKind::kErf:
      return fn("erf");
    case OpKind::kSoftplus: {
      std::string l1 = f ? "log1pf(" : "log1p(", ex = f ? "expf(" : "exp(";
      return "(" + x + " > " + literal(0, t) + " ? " + x + " + " + l1 + ex + "-" + x + ")) : " + l1 + ex + x + ")))";
    }
    case OpKind::kIdentity:
      return x;
    case OpKind::kClip: {
      std::string c = computeType(t);
      double lo = n.attrs.getFloat("min", -INFINITY), hi = n.attrs.getFloat("max", INFINITY);
      std::string wide = c == "float" ? x : "(double)" + x;
      DType lt = c == "float" ? DType::kF32 : DType::kF64;
      return "(" + wide + " < " + literal(lo, lt) + " ? (" + c + ")" + literal(lo, lt) + " : " + wide + " > " +
             literal(hi, lt) + " ? (" + c + ")" + literal(hi, lt) + " : " + x + ")";
    }
    default:
      return "";
  }
}

}  // namespace

bool sameSize(const std::vector<Dim>& a, const std::vector<Dim>& b) {
  auto pa = productOf(a), pb = productOf(b);
  return pa && pb && pa->coef == pb->coef && pa->sym == pb->sym;
}

bool broadcastsInto(const std::vector<Dim>& in, const std::vector<Dim>& out) {
  if (in.size() > out.size()) return false;
  size_t off = out.size() - in.size();
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i] != 1 && in[i] != out[i + off]) return false;
  }
  return true;
}

namespace {

// Calls fn(b, e, broadcast) for the maximal runs [b, e) of `out`'s dims, from
// the innermost out, that `in` (right-aligned) either keeps or broadcasts.
template <typename Fn>
void forEachRun(const std::vector<Dim>& out, const std::vector<Dim>& aligned, Fn fn) {
  auto broadcast = [&](size_t i) { return aligned[i] == 1 && out[i] != 1; };
  size_t end = out.size();
  while (end > 0) {
    bool bc = broadcast(end - 1);
    size_t b = end;
    while (b > 0 && broadcast(b - 1) == bc) --b;
    fn(b, end, bc);
    end = b;
  }
}

std::vector<Dim> rightAligned(const std::vector<Dim>& in, size_t rank) {
  std::vector<Dim> aligned(rank - std::min(rank, in.size()), 1);
  aligned.insert(aligned.end(), in.begin(), in.end());
  return aligned;
}

// Coordinate of `idx` over out dims [b, e) as one mixed-radix number.
std::string runCoordinate(KernelBuilder& k, const std::vector<Dim>& out, const std::string& idx, size_t b, size_t e) {
  std::string term = "(" + idx + ")";
  auto after = staticProduct(out, e, out.size());
  if (!after || *after != 1) term = "(" + term + " / " + k.size(out, e) + ")";
  if (b > 0) term = "(" + term + " % " + k.size(out, b, e) + ")";
  return term;
}

}  // namespace

std::string broadcastIndex(KernelBuilder& k, const std::vector<Dim>& out, const std::string& idx,
                           const std::vector<Dim>& in) {
  if (sameSize(in, out)) return idx;
  if (std::all_of(in.begin(), in.end(), [](Dim d) { return d == 1; })) return "0LL";
  std::vector<Dim> aligned = rightAligned(in, out.size());
  std::string sum;
  forEachRun(out, aligned, [&](size_t b, size_t e, bool bc) {
    if (bc) return;
    std::string term = runCoordinate(k, out, idx, b, e);
    auto inAfter = staticProduct(aligned, e, aligned.size());
    if (!inAfter || *inAfter != 1) term += " * " + k.size(aligned, e);
    sum += (sum.empty() ? "" : " + ") + term;
  });
  return sum.empty() ? "0LL" : "(" + sum + ")";
}

std::string broadcastGuard(KernelBuilder& k, const std::vector<Dim>& out, const std::string& idx,
                           const std::vector<Dim>& in) {
  std::vector<Dim> aligned = rightAligned(in, out.size());
  std::string cond;
  forEachRun(out, aligned, [&](size_t b, size_t e, bool bc) {
    if (bc) cond += (cond.empty() ? "" : " && ") + runCoordinate(k, out, idx, b, e) + " == 0";
  });
  return cond.empty() ? "true" : cond;
}

std::string operandIndex(KernelBuilder& k, NodeId id, size_t i, const std::string& idx) {
  const Graph& g = k.g();
  const Node& n = g.node(id);
  const auto& out = g.type(n.outputs[0]).dims;
  if (isView(n.op)) return idx;
  std::vector<Dim> in = g.type(n.inputs[i]).dims;
  if (n.op == OpKind::kBatchNorm && i > 0) {
    in.resize(std::max<size_t>(out.size(), 2) - 1, 1);  // [C] at axis 1: [C, 1, ..., 1]
  }
  return broadcastIndex(k, out, idx, in);
}

StatusOr<std::string> opExpr(const Graph& g, NodeId id, const std::vector<std::string>& a) {
  const Node& n = g.node(id);
  DType t = g.type(n.outputs[0]).dtype;
  if (isView(n.op) && n.op != OpKind::kIdentity) return a[0];
  std::string u = unaryExpr(n, a[0], t);
  if (!u.empty()) return u;
  switch (n.op) {
    case OpKind::kCast: {
      DType from = g.type(n.inputs[0]).dtype;
      if (t == DType::kBool) return "(" + a[0] + " != 0)";
      if (computeType(from) == computeType(t)) return a[0];
      return "(" + computeType(t) + ")(double)" + a[0];
    }
    case OpKind::kAdd:
      return "(" + a[0] + " + " + a[1] + ")";
    case OpKind::kSub:
      return "(" + a[0] + " - " + a[1] + ")";
    case OpKind::kMul:
      return "(" + a[0] + " * " + a[1] + ")";
    case OpKind::kDiv:
      return "(" + a[0] + " / " + a[1] + ")";
    case OpKind::kPow:
      return "(" + computeType(t) + ")pow((double)" + a[0] + ", (double)" + a[1] + ")";
    case OpKind::kMax:
      return "cagr_max(" + a[0] + ", " + a[1] + ")";
    case OpKind::kMin:
      return "cagr_min(" + a[0] + ", " + a[1] + ")";
    case OpKind::kWhere:
      return "(" + a[0] + " ? " + a[1] + " : " + a[2] + ")";
    case OpKind::kBatchNorm: {
      std::string eps = literal(n.attrs.getFloat("epsilon", 1e-5), t);
      std::string sq = computeType(t) == "float" ? "sqrtf(" : "sqrt(";
      return "((" + a[0] + " - " + a[3] + ") * (" + a[1] + " / " + sq + a[4] + " + " + eps + ")) + " + a[2] + ")";
    }
    default:
      return unsupportedAt(g, id, std::string("no elementwise expression for ") + opInfo(n.op).name);
  }
}

StatusOr<std::string> ValueEmitter::at(ValueId v, const std::string& idx) {
  auto hit = memo_.find({v, idx});
  if (hit != memo_.end()) return hit->second;
  const Graph& g = k_.g();
  const Value& val = g.value(v);
  std::string type = computeType(val.type.dtype), expr;
  if (!k_.isMemberValue(v)) {
    if (val.mir.storage == Precision::kInt8Rowwise) {
      return unsupportedAt(g, k_.req().members.front(), "value '" + val.name + "' is stored as int8 rows");
    }
    expr = "cagr_ld(" + k_.in(v) + ", " + idx + ")";
  } else {
    NodeId p = val.producer;
    const Node& n = g.node(p);
    if (!ops::in(ops::kEltwise | ops::kViews, n.op)) {
      return unsupportedAt(g, p, "its output is needed inside an elementwise kernel");
    }
    std::vector<std::string> args;
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      if (n.inputs[i] == kNoValue) return unsupportedAt(g, p, "absent operand");
      CAGR_ASSIGN_OR_RETURN(std::string a, at(n.inputs[i], operandIndex(k_, p, i, idx)));
      args.push_back(std::move(a));
    }
    CAGR_ASSIGN_OR_RETURN(expr, opExpr(g, p, args));
  }
  std::string var = k_.fresh("t");
  code_ += indent_ + "const " + type + " " + var + " = " + expr + ";\n";
  memo_[{v, idx}] = var;
  return var;
}

std::vector<ValueId> ValueEmitter::loadedAt(const std::string& idx) const {
  std::vector<ValueId> out;
  for (const auto& [key, var] : memo_) {
    if (key.second == idx && !k_.isMemberValue(key.first)) out.push_back(key.first);
  }
  return out;
}

void ValueEmitter::store(ValueId v, const std::string& idx, const std::string& var) {
  code_ += indent_ + "cagr_st(" + k_.out(v) + ", " + idx + ", " + var + ");\n";
}

// ---- concat index arithmetic ----

std::string blockIndex(KernelBuilder& k, const std::vector<Dim>& part, const std::vector<Dim>& whole, size_t axis,
                       const std::string& off, const std::string& idx) {
  if (axis == 0) return "(" + idx + off + ")";
  std::string chunkIn = k.size(part, axis), chunkOut = k.size(whole, axis);
  return "((" + idx + ") / " + chunkIn + " * " + chunkOut + off + " + (" + idx + ") % " + chunkIn + ")";
}

std::string concatIndex(KernelBuilder& k, NodeId id, size_t operand, const std::string& idx) {
  const Graph& g = k.g();
  const Node& n = g.node(id);
  const auto& od = g.type(n.outputs[0]).dims;
  size_t a = static_cast<size_t>(*normAxis(n.attrs.getInt("axis", 0), static_cast<int64_t>(od.size())));
  std::string off;
  for (size_t i = 0; i < operand; ++i) off += " + " + k.size(g.type(n.inputs[i]).dims, a);
  return blockIndex(k, g.type(n.inputs[operand]).dims, od, a, off, idx);
}

Status emitConcatCopy(KernelBuilder& k, NodeId n, size_t operand, const std::string& dst, std::string& code) {
  ValueId src = k.g().node(n).inputs[operand];
  if (k.g().value(src).mir.storage == Precision::kInt8Rowwise) {
    return unsupportedAt(k.g(), n, "a concat operand stored as int8 rows");
  }
  std::string inner =
      "    cagr_st(" + dst + ", " + concatIndex(k, n, operand, "i") + ", cagr_ld(" + k.in(src) + ", i));\n";
  code += gridStride("i", k.dims(src), inner);
  return Status::ok();
}

// ---- tail chains ----

StatusOr<TailChain> TailChain::plan(const KernelBuilder& k, NodeId anchor) {
  const Graph& g = k.g();
  TailChain c;
  c.anchorOut_ = g.node(anchor).outputs[0];
  for (NodeId m : k.req().members) {
    OpKind op = g.node(m).op;
    if (m <= anchor) continue;
    if (op == OpKind::kConcat) c.chain_ = true;
    if (op != OpKind::kConcat && !ops::in(ops::kEltwise | ops::kViews, op)) {
      return unsupportedAt(g, m, "cannot follow the anchor");
    }
    c.steps_.push_back({m, -1});
  }
  if (!c.chain_) return c;
  ValueId chain = c.anchorOut_;
  for (Step& st : c.steps_) {
    const Node& n = g.node(st.node);
    int uses = 0;
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      ValueId v = n.inputs[i];
      if (v == chain) {
        ++uses;
        st.chainOperand = static_cast<int>(i);
      } else if (k.isMemberValue(v)) {
        return unsupportedAt(g, st.node, "reads two values of the group (a tail with a concat must be a chain)");
      }
    }
    if (uses == 0) return unsupportedAt(g, st.node, "does not read the previous value of the chain");
    if (n.op == OpKind::kConcat && uses > 1) return unsupportedAt(g, st.node, "concatenates the chain value twice");
    if (n.op != OpKind::kConcat && !sameSize(g.type(chain).dims, g.type(n.outputs[0]).dims)) {
      return unsupportedAt(g, st.node, "broadcasts the chain value to a larger shape");
    }
    chain = n.outputs[0];
  }
  return c;
}

// Every group output of an elementwise tail at the anchor element's index:
// outputs of the anchor's layout there, smaller broadcast ones by the first
// element that maps to theirs.
Status TailChain::emitGraph(KernelBuilder& k, const std::string& var, const std::string& idx, std::string& code,
                            const std::string& indent) const {
  const Graph& g = k.g();
  const auto& ad = g.type(anchorOut_).dims;
  ValueEmitter e(k, code, indent);
  e.bind(anchorOut_, idx, var);
  for (ValueId u : k.req().outputs) {
    if (u == anchorOut_) continue;
    const auto& d = g.type(u).dims;
    if (!broadcastsInto(d, ad)) return unsupportedAt(g, g.value(u).producer, "its output is larger than the anchor's");
    std::string at = broadcastIndex(k, ad, idx, d);
    CAGR_ASSIGN_OR_RETURN(std::string v, e.at(u, at));
    std::string guard = sameSize(d, ad) ? "" : "if (" + broadcastGuard(k, ad, idx, d) + ") ";
    code += indent + guard + "cagr_st(" + k.out(u) + ", " + at + ", " + v + ");\n";
  }
  return Status::ok();
}

namespace {

// Applies steps [from, end) to `var` (value `cur` at `idx`), storing outputs.
Status emitSteps(KernelBuilder& k, const std::vector<std::pair<NodeId, int>>& steps, size_t from, ValueId cur,
                 std::string var, std::string idx, std::string& code, const std::string& indent) {
  const Graph& g = k.g();
  for (size_t s = from; s < steps.size(); ++s) {
    NodeId id = steps[s].first;
    const Node& n = g.node(id);
    if (n.op == OpKind::kConcat) {
      std::string j = k.fresh("j");
      code += indent + "const long long " + j + " = " + concatIndex(k, id, static_cast<size_t>(steps[s].second), idx) +
              ";\n";
      idx = j;
    } else if (!isView(n.op)) {
      std::vector<std::string> args;
      for (size_t i = 0; i < n.inputs.size(); ++i) {
        ValueId v = n.inputs[i];
        if (v == cur) {
          args.push_back(var);
        } else if (g.value(v).mir.storage == Precision::kInt8Rowwise) {
          return unsupportedAt(g, id, "an operand stored as int8 rows");
        } else {
          args.push_back("cagr_ld(" + k.in(v) + ", " + operandIndex(k, id, i, idx) + ")");
        }
      }
      CAGR_ASSIGN_OR_RETURN(std::string expr, opExpr(g, id, args));
      std::string t = k.fresh("t");
      code += indent + "const " + computeType(g.type(n.outputs[0]).dtype) + " " + t + " = " + expr + ";\n";
      var = t;
    }
    cur = n.outputs[0];
    if (k.isOutput(cur)) code += indent + "cagr_st(" + k.out(cur) + ", " + idx + ", " + var + ");\n";
  }
  return Status::ok();
}

}  // namespace

Status TailChain::emit(KernelBuilder& k, const std::string& var, const std::string& idx, std::string& code,
                       const std::string& indent, bool anchorStored) const {
  if (k.isOutput(anchorOut_) && !anchorStored) {
    code += indent + "cagr_st(" + k.out(anchorOut_) + ", " + idx + ", " + var + ");\n";
  }
  if (!chain_) return emitGraph(k, var, idx, code, indent);
  std::vector<std::pair<NodeId, int>> steps;
  for (const Step& s : steps_) steps.emplace_back(s.node, s.chainOperand);
  return emitSteps(k, steps, 0, anchorOut_, var, idx, code, indent);
}

Status TailChain::emitSideCopies(KernelBuilder& k, std::string& code) const {
  if (!chain_) return Status::ok();
  const Graph& g = k.g();
  std::vector<std::pair<NodeId, int>> steps;
  for (const Step& s : steps_) steps.emplace_back(s.node, s.chainOperand);
  for (size_t s = 0; s < steps_.size(); ++s) {
    const Node& n = g.node(steps_[s].node);
    if (n.op != OpKind::kConcat) continue;
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      if (static_cast<int>(i) == steps_[s].chainOperand) continue;
      ValueId src = n.inputs[i];
      if (g.value(src).mir.storage == Precision::kInt8Rowwise) return unsupportedAt(g, steps_[s].node, "int8 operand");
      std::string inner, x = k.fresh("x");
      inner += "    const " + computeType(g.type(src).dtype) + " " + x + " = cagr_ld(" + k.in(src) + ", i);\n";
      std::string j = k.fresh("j");
      inner += "    const long long " + j + " = " + concatIndex(k, steps_[s].node, i, "i") + ";\n";
      ValueId out = n.outputs[0];
      if (k.isOutput(out)) inner += "    cagr_st(" + k.out(out) + ", " + j + ", " + x + ");\n";
      CAGR_RETURN_IF_ERROR(emitSteps(k, steps, s + 1, out, x, j, inner, "    "));
      code += gridStride("i", k.dims(src), inner);
    }
  }
  return Status::ok();
}

std::string TailChain::suffix(const Graph& g) const {
  std::string s;
  for (const Step& st : steps_) {
    OpKind op = g.node(st.node).op;
    if (!isView(op)) s += std::string("+") + opInfo(op).mnemonic;
  }
  return s;
}

}  // namespace cagr::cuda::gen
