// ONNX -> HIR handlers for the general ops third-party models bring:
// comparisons and logic, Mod, PRelu, TopK, GatherElements, Tile, CumSum, Pad,
// 2-D convolution, and If over a condition known at import time (the
// exporters' guard around torch.squeeze(x, dim)).
#include <map>

#include "import/context.h"
#include "import/handlers.h"

namespace cagr::import {
namespace {

Status importWithAttrs(Context& ctx, const onnx::NodeProto& n, OpKind op, Attrs a) {
  CAGR_ASSIGN_OR_RETURN(std::vector<ValueId> ins, presentInputs(ctx, n));
  CAGR_ASSIGN_OR_RETURN(ValueId out, ctx.add1(op, std::move(ins), std::move(a)));
  return bindOutput(ctx, n, out);
}

Status importCompare(Context& ctx, const onnx::NodeProto& n) {
  static const std::map<std::string, std::string> kCmp = {
      {"Equal", "eq"}, {"Less", "lt"}, {"LessOrEqual", "le"}, {"Greater", "gt"}, {"GreaterOrEqual", "ge"}};
  Attrs a;
  a.set("cmp", kCmp.at(n.op_type()));
  return importWithAttrs(ctx, n, OpKind::kCompare, std::move(a));
}

Status importLogic(Context& ctx, const onnx::NodeProto& n) {
  std::string fn = n.op_type() == "Not" ? "not" : n.op_type() == "And" ? "and" : n.op_type() == "Or" ? "or" : "xor";
  Attrs a;
  a.set("fn", fn);
  return importWithAttrs(ctx, n, OpKind::kLogic, std::move(a));
}

Status importMod(Context& ctx, const onnx::NodeProto& n) {
  Attrs a;
  if (attrInt(n, "fmod", 0) != 0) a.set("fmod", int64_t{1});
  return importWithAttrs(ctx, n, OpKind::kMod, std::move(a));
}

// PRelu(x, slope) = relu(x) + slope * min(x, 0): exact in floating point,
// since one of the two terms is always an exact zero.
Status importPRelu(Context& ctx, const onnx::NodeProto& n) {
  CAGR_ASSIGN_OR_RETURN(ValueId x, input(ctx, n, 0));
  CAGR_ASSIGN_OR_RETURN(ValueId slope, input(ctx, n, 1));
  Tensor zero(ctx.graph().type(x).dtype, {});
  ValueId z = ctx.graph().addConstant(n.output(0) + ":zero", std::move(zero));
  CAGR_ASSIGN_OR_RETURN(ValueId pos, ctx.add1(OpKind::kRelu, {x}));
  CAGR_ASSIGN_OR_RETURN(ValueId neg, ctx.add1(OpKind::kMin, {x, z}));
  CAGR_ASSIGN_OR_RETURN(ValueId scaled, ctx.add1(OpKind::kMul, {neg, slope}));
  CAGR_ASSIGN_OR_RETURN(ValueId out, ctx.add1(OpKind::kAdd, {pos, scaled}));
  return bindOutput(ctx, n, out);
}

// One static scalar from input `i` or attribute `attr`.
StatusOr<int64_t> staticScalar(Context& ctx, const onnx::NodeProto& n, int i, const char* attr, const std::string& what) {
  if (!hasInput(n, i)) return attrInt(n, attr, 0);
  CAGR_ASSIGN_OR_RETURN(auto v, ctx.staticInts(n.input(i), what));
  if (v.size() != 1) return invalidArgument(what + " must hold one value");
  return v[0];
}

Status importTopK(Context& ctx, const onnx::NodeProto& n) {
  CAGR_ASSIGN_OR_RETURN(ValueId x, input(ctx, n, 0));
  CAGR_ASSIGN_OR_RETURN(int64_t k, staticScalar(ctx, n, 1, "k", "TopK k"));
  Attrs a;
  a.set("k", k);
  a.set("axis", attrInt(n, "axis", -1));
  a.set("largest", attrInt(n, "largest", 1));
  // sorted=0 lets any order through, so the sorted result is always valid.
  CAGR_ASSIGN_OR_RETURN(auto outs, ctx.add(OpKind::kTopK, {x}, a, 2));
  for (int i = 0; i < n.output_size() && i < 2; ++i) {
    if (!n.output(i).empty()) ctx.setValue(n.output(i), outs[static_cast<size_t>(i)]);
  }
  return Status::ok();
}

Status importGatherElements(Context& ctx, const onnx::NodeProto& n) {
  Attrs a;
  a.set("axis", attrInt(n, "axis", 0));
  return importWithAttrs(ctx, n, OpKind::kGatherElements, std::move(a));
}

// Tile; a symbolic repeat (x.repeat(B, 1) over a batch of one row) tiles an
// axis of size 1, which is a broadcast: Expand to the symbolic size first.
Status importTile(Context& ctx, const onnx::NodeProto& n) {
  CAGR_ASSIGN_OR_RETURN(ValueId x, input(ctx, n, 0));
  auto reps = ctx.ints(n.input(1));
  if (!reps) return ctx.staticInts(n.input(1), "Tile repeats").status();
  const TensorType& t = ctx.graph().type(x);
  if (static_cast<int64_t>(reps->dims.size()) != t.rank()) return invalidArgument("Tile repeats must have one entry per axis");
  std::vector<int64_t> expand(reps->dims.size(), 1), tile(reps->dims.size(), 1);
  for (size_t i = 0; i < reps->dims.size(); ++i) {
    bool sym = reps->isSym(i);
    if (sym && t.dims[i] != 1) return unsupported("Tile by a symbolic repeat of an axis larger than 1");
    (sym ? expand : tile)[i] = reps->dims[i];
  }
  if (!reps->isStatic()) {
    Attrs a;
    a.set("shape", expand);
    CAGR_ASSIGN_OR_RETURN(x, ctx.add1(OpKind::kExpand, {x}, a));
  }
  Attrs a;
  a.set("repeats", tile);
  CAGR_ASSIGN_OR_RETURN(ValueId out, ctx.add1(OpKind::kTile, {x}, a));
  return bindOutput(ctx, n, out);
}

// OneHot(indices, depth, [off, on]) = Where(indices (wrapped if negative) ==
// Range(depth) along `axis`, on, off).
Status importOneHot(Context& ctx, const onnx::NodeProto& n) {
  CAGR_ASSIGN_OR_RETURN(ValueId idx, input(ctx, n, 0));
  CAGR_ASSIGN_OR_RETURN(int64_t depth, staticScalar(ctx, n, 1, "depth", "OneHot depth"));
  CAGR_ASSIGN_OR_RETURN(ValueId vals, input(ctx, n, 2));
  Graph& g = ctx.graph();
  int64_t rank = g.type(idx).rank();
  int64_t axis = attrInt(n, "axis", -1);
  if (axis < 0) axis += rank + 1;
  if (axis < 0 || axis > rank || g.type(vals).dims != std::vector<Dim>{2}) return invalidArgument("OneHot axis or values");
  DType it = g.type(idx).dtype;
  Tensor depthT(it, {});
  depthT.setF64(0, static_cast<double>(depth));
  Tensor classes(it, {depth});
  for (int64_t i = 0; i < depth; ++i) classes.setF64(i, static_cast<double>(i));
  std::vector<int64_t> classShape(static_cast<size_t>(rank - axis + 1), 1);
  classShape[0] = depth;
  classes = classes.reshaped(classShape);
  ValueId d = g.addConstant(n.output(0) + ":depth", std::move(depthT));
  ValueId zero = g.addConstant(n.output(0) + ":zero", Tensor(it, {}));
  Attrs lt, eq, at, pick0, pick1;
  lt.set("cmp", std::string("lt"));
  eq.set("cmp", std::string("eq"));
  at.set("axes", std::vector<int64_t>{axis});
  CAGR_ASSIGN_OR_RETURN(ValueId neg, ctx.add1(OpKind::kCompare, {idx, zero}, lt));
  CAGR_ASSIGN_OR_RETURN(ValueId wrapped, ctx.add1(OpKind::kAdd, {idx, d}));
  CAGR_ASSIGN_OR_RETURN(ValueId fixed, ctx.add1(OpKind::kWhere, {neg, wrapped, idx}));
  CAGR_ASSIGN_OR_RETURN(ValueId col, ctx.add1(OpKind::kUnsqueeze, {fixed}, at));
  ValueId cls = g.addConstant(n.output(0) + ":classes", std::move(classes));
  CAGR_ASSIGN_OR_RETURN(ValueId hit, ctx.add1(OpKind::kCompare, {col, cls}, eq));
  pick0.set("starts", std::vector<int64_t>{0});
  pick0.set("ends", std::vector<int64_t>{1});
  pick1.set("starts", std::vector<int64_t>{1});
  pick1.set("ends", std::vector<int64_t>{2});
  CAGR_ASSIGN_OR_RETURN(ValueId off, ctx.add1(OpKind::kSlice, {vals}, pick0));
  CAGR_ASSIGN_OR_RETURN(ValueId on, ctx.add1(OpKind::kSlice, {vals}, pick1));
  CAGR_ASSIGN_OR_RETURN(ValueId out, ctx.add1(OpKind::kWhere, {hit, on, off}));
  return bindOutput(ctx, n, out);
}

Status importCumSum(Context& ctx, const onnx::NodeProto& n) {
  CAGR_ASSIGN_OR_RETURN(ValueId x, input(ctx, n, 0));
  CAGR_ASSIGN_OR_RETURN(int64_t axis, staticScalar(ctx, n, 1, "axis", "CumSum axis"));
  Attrs a;
  a.set("axis", axis);
  a.set("exclusive", attrInt(n, "exclusive", 0));
  a.set("reverse", attrInt(n, "reverse", 0));
  CAGR_ASSIGN_OR_RETURN(ValueId out, ctx.add1(OpKind::kCumSum, {x}, a));
  return bindOutput(ctx, n, out);
}

// Pads from the input (opset >= 11, optionally over `axes`) or the attribute.
StatusOr<std::vector<int64_t>> padsOf(Context& ctx, const onnx::NodeProto& n, int64_t rank) {
  std::vector<int64_t> pads;
  if (hasInput(n, 1)) {
    CAGR_ASSIGN_OR_RETURN(pads, ctx.staticInts(n.input(1), "Pad pads"));
  } else {
    pads = attrInts(n, "pads").value_or(std::vector<int64_t>{});
  }
  if (!hasInput(n, 3)) return pads;
  CAGR_ASSIGN_OR_RETURN(auto axes, ctx.staticInts(n.input(3), "Pad axes"));
  if (pads.size() != 2 * axes.size()) return invalidArgument("Pad pads do not match its axes");
  std::vector<int64_t> full(static_cast<size_t>(2 * rank), 0);
  for (size_t i = 0; i < axes.size(); ++i) {
    int64_t ax = axes[i] < 0 ? axes[i] + rank : axes[i];
    if (ax < 0 || ax >= rank) return invalidArgument("Pad axis out of range");
    full[static_cast<size_t>(ax)] = pads[i];
    full[static_cast<size_t>(ax + rank)] = pads[i + axes.size()];
  }
  return full;
}

Status importPad(Context& ctx, const onnx::NodeProto& n) {
  if (attrString(n, "mode", "constant") != "constant") return unsupported("Pad mode '" + attrString(n, "mode", "") + "'");
  CAGR_ASSIGN_OR_RETURN(ValueId x, input(ctx, n, 0));
  CAGR_ASSIGN_OR_RETURN(auto pads, padsOf(ctx, n, ctx.graph().type(x).rank()));
  double value = attrFloat(n, "value", 0.f);
  if (hasInput(n, 2)) {
    auto c = ctx.constant(n.input(2));
    if (!c || c->numel() != 1) return unsupported("Pad value must be a constant scalar");
    value = c->getF64(0);
  }
  Attrs a;
  a.set("pads", pads);
  a.set("value", value);
  CAGR_ASSIGN_OR_RETURN(ValueId out, ctx.add1(OpKind::kPad, {x}, a));
  return bindOutput(ctx, n, out);
}

// If whose condition folds at import: the taken branch is imported in place.
Status importIf(Context& ctx, const onnx::NodeProto& n) {
  auto cond = ctx.constant(n.input(0));
  if (!cond || cond->numel() != 1) {
    CAGR_RETURN_IF_ERROR(ctx.value(n.input(0)).status());
    return unsupported("unsupported op 'If': only conditions known at import time are supported");
  }
  const auto* branch = findAttr(n, cond->getF64(0) != 0 ? "then_branch" : "else_branch");
  if (branch == nullptr || !branch->has_g()) return corrupt("If without its branches");
  const onnx::GraphProto& g = branch->g();
  if (g.output_size() != n.output_size()) return corrupt("If branch outputs do not match the node's");
  importGraphNodes(ctx, g);
  ctx.setCurrent(&n);
  for (int i = 0; i < n.output_size(); ++i) ctx.alias(n.output(i), g.output(i).name());
  return Status::ok();
}

}  // namespace

Handler findGeneralHandler(const std::string& opType) {
  static const std::map<std::string, Handler> kHandlers = {
      {"Equal", importCompare}, {"Less", importCompare}, {"LessOrEqual", importCompare},
      {"Greater", importCompare}, {"GreaterOrEqual", importCompare}, {"Not", importLogic}, {"And", importLogic},
      {"Or", importLogic}, {"Xor", importLogic}, {"Mod", importMod}, {"PRelu", importPRelu}, {"TopK", importTopK},
      {"GatherElements", importGatherElements}, {"Tile", importTile}, {"CumSum", importCumSum}, {"Pad", importPad},
      {"If", importIf}, {"OneHot", importOneHot},
  };
  auto it = kHandlers.find(opType);
  return it == kHandlers.end() ? nullptr : it->second;
}

}  // namespace cagr::import
