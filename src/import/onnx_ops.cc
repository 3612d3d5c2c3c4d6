// ONNX -> HIR handlers for compute ops (elementwise, linear algebra,
// normalisation, reductions) and the handler table.
#include <cmath>
#include <map>

#include "import/context.h"
#include "import/handlers.h"

namespace cagr::import {

StatusOr<ValueId> input(Context& ctx, const onnx::NodeProto& n, int i) {
  if (i >= n.input_size() || n.input(i).empty()) {
    return invalidArgument("missing input " + std::to_string(i));
  }
  return ctx.value(n.input(i));
}

bool hasInput(const onnx::NodeProto& n, int i) { return i < n.input_size() && !n.input(i).empty(); }

StatusOr<std::vector<ValueId>> presentInputs(Context& ctx, const onnx::NodeProto& n) {
  std::vector<ValueId> ins;
  for (int i = 0; i < n.input_size(); ++i) {
    if (!hasInput(n, i)) continue;
    CAGR_ASSIGN_OR_RETURN(ValueId v, input(ctx, n, i));
    ins.push_back(v);
  }
  return ins;
}

Status bindOutput(Context& ctx, const onnx::NodeProto& n, ValueId v) {
  ctx.setValue(n.output(0), v);
  return Status::ok();
}

namespace {

// One ONNX op that maps to one HIR op with the same operands and no attributes.
Status direct(Context& ctx, const onnx::NodeProto& n, OpKind op) {
  CAGR_ASSIGN_OR_RETURN(std::vector<ValueId> ins, presentInputs(ctx, n));
  CAGR_ASSIGN_OR_RETURN(ValueId out, ctx.add1(op, std::move(ins)));
  return bindOutput(ctx, n, out);
}

#define CAGR_DIRECT(OnnxName, Kind) \
  Status import##OnnxName(Context& ctx, const onnx::NodeProto& n) { return direct(ctx, n, OpKind::Kind); }
CAGR_DIRECT(Relu, kRelu)
CAGR_DIRECT(Sigmoid, kSigmoid)
CAGR_DIRECT(Tanh, kTanh)
CAGR_DIRECT(Exp, kExp)
CAGR_DIRECT(Log, kLog)
CAGR_DIRECT(Neg, kNeg)
CAGR_DIRECT(Abs, kAbs)
CAGR_DIRECT(Sqrt, kSqrt)
CAGR_DIRECT(Reciprocal, kReciprocal)
CAGR_DIRECT(Erf, kErf)
CAGR_DIRECT(Softplus, kSoftplus)
CAGR_DIRECT(Identity, kIdentity)
CAGR_DIRECT(Pow, kPow)
CAGR_DIRECT(MatMul, kMatMul)
CAGR_DIRECT(Where, kWhere)
#undef CAGR_DIRECT

// Add / Mul also serve shape arithmetic (e.g. li * F + lj index math).
Status importArith(Context& ctx, const onnx::NodeProto& n, OpKind op) {
  auto a = ctx.ints(n.input(0)), b = ctx.ints(n.input(1));
  if (a && b && !(a->isStatic() && b->isStatic())) return symbolicArith(ctx, n, *a, *b);
  return direct(ctx, n, op);
}
Status importAdd(Context& ctx, const onnx::NodeProto& n) { return importArith(ctx, n, OpKind::kAdd); }
Status importMul(Context& ctx, const onnx::NodeProto& n) { return importArith(ctx, n, OpKind::kMul); }
Status importSub(Context& ctx, const onnx::NodeProto& n) { return importArith(ctx, n, OpKind::kSub); }
Status importDiv(Context& ctx, const onnx::NodeProto& n) { return importArith(ctx, n, OpKind::kDiv); }

// Max / Min are variadic in ONNX: fold into a chain of binary ops.
Status importVariadic(Context& ctx, const onnx::NodeProto& n, OpKind op) {
  CAGR_ASSIGN_OR_RETURN(ValueId acc, input(ctx, n, 0));
  for (int i = 1; i < n.input_size(); ++i) {
    CAGR_ASSIGN_OR_RETURN(ValueId v, input(ctx, n, i));
    CAGR_ASSIGN_OR_RETURN(acc, ctx.add1(op, {acc, v}));
  }
  return bindOutput(ctx, n, acc);
}
Status importMax(Context& ctx, const onnx::NodeProto& n) { return importVariadic(ctx, n, OpKind::kMax); }
Status importMin(Context& ctx, const onnx::NodeProto& n) { return importVariadic(ctx, n, OpKind::kMin); }

Status importLeakyRelu(Context& ctx, const onnx::NodeProto& n) {
  CAGR_ASSIGN_OR_RETURN(ValueId x, input(ctx, n, 0));
  Attrs a;
  a.set("alpha", static_cast<double>(attrFloat(n, "alpha", 0.01f)));
  CAGR_ASSIGN_OR_RETURN(ValueId out, ctx.add1(OpKind::kLeakyRelu, {x}, a));
  return bindOutput(ctx, n, out);
}

Status importGelu(Context& ctx, const onnx::NodeProto& n) {
  CAGR_ASSIGN_OR_RETURN(ValueId x, input(ctx, n, 0));
  Attrs a;
  a.set("approximate", attrString(n, "approximate", "none"));
  CAGR_ASSIGN_OR_RETURN(ValueId out, ctx.add1(OpKind::kGelu, {x}, a));
  return bindOutput(ctx, n, out);
}

Status importDropout(Context& ctx, const onnx::NodeProto& n) {
  if (n.output_size() > 1 && !n.output(1).empty()) ctx.setDeferred(n.output(1), unsupported("Dropout mask output"));
  CAGR_ASSIGN_OR_RETURN(ValueId x, input(ctx, n, 0));
  return bindOutput(ctx, n, x);  // inference: identity
}

Status importClip(Context& ctx, const onnx::NodeProto& n) {
  CAGR_ASSIGN_OR_RETURN(ValueId x, input(ctx, n, 0));
  Attrs a;
  double lo = attrFloat(n, "min", -INFINITY), hi = attrFloat(n, "max", INFINITY);
  for (int i = 1; i <= 2; ++i) {
    if (!hasInput(n, i)) continue;
    auto c = ctx.constant(n.input(i));
    if (!c || c->numel() != 1) return unsupported("Clip bounds must be constant scalars");
    (i == 1 ? lo : hi) = c->getF64(0);
  }
  a.set("min", lo);
  a.set("max", hi);
  CAGR_ASSIGN_OR_RETURN(ValueId out, ctx.add1(OpKind::kClip, {x}, a));
  return bindOutput(ctx, n, out);
}

Status castTo(Context& ctx, const onnx::NodeProto& n, DType to) {
  auto s = ctx.ints(n.input(0));
  if (s && !s->isStatic() && (to == DType::kI64 || to == DType::kI32)) {
    ctx.setInts(n.output(0), *s);
    return Status::ok();
  }
  CAGR_ASSIGN_OR_RETURN(ValueId x, input(ctx, n, 0));
  if (ctx.graph().type(x).dtype == to) return bindOutput(ctx, n, x);
  Attrs a;
  a.set("to", std::string(dtypeName(to)));
  CAGR_ASSIGN_OR_RETURN(ValueId out, ctx.add1(OpKind::kCast, {x}, a));
  return bindOutput(ctx, n, out);
}

Status importCast(Context& ctx, const onnx::NodeProto& n) {
  CAGR_ASSIGN_OR_RETURN(DType to, dtypeFromOnnx(static_cast<int32_t>(attrInt(n, "to", 1))));
  return castTo(ctx, n, to);
}

Status importCastLike(Context& ctx, const onnx::NodeProto& n) {
  auto like = ctx.ints(n.input(1));
  if (like) return castTo(ctx, n, DType::kI64);
  CAGR_ASSIGN_OR_RETURN(TensorType t, ctx.typeOf(n.input(1)));
  return castTo(ctx, n, t.dtype);
}

Status importGemm(Context& ctx, const onnx::NodeProto& n) {
  CAGR_ASSIGN_OR_RETURN(std::vector<ValueId> ins, presentInputs(ctx, n));
  Attrs a;
  if (attrInt(n, "transA", 0) != 0) a.set("transA", int64_t{1});
  if (attrInt(n, "transB", 0) != 0) a.set("transB", int64_t{1});
  if (attrFloat(n, "alpha", 1.f) != 1.f) a.set("alpha", static_cast<double>(attrFloat(n, "alpha", 1.f)));
  if (attrFloat(n, "beta", 1.f) != 1.f) a.set("beta", static_cast<double>(attrFloat(n, "beta", 1.f)));
  CAGR_ASSIGN_OR_RETURN(ValueId out, ctx.add1(OpKind::kGemm, std::move(ins), a));
  return bindOutput(ctx, n, out);
}

Status importEinsum(Context& ctx, const onnx::NodeProto& n) {
  CAGR_ASSIGN_OR_RETURN(std::vector<ValueId> ins, presentInputs(ctx, n));
  Attrs a;
  a.set("equation", attrString(n, "equation", ""));
  CAGR_ASSIGN_OR_RETURN(ValueId out, ctx.add1(OpKind::kEinsum, std::move(ins), a));
  return bindOutput(ctx, n, out);
}

// Conv attributes of an ONNX 1-D (rank 3) or 2-D (rank 4) convolution, as the
// 2-D Conv op takes them (a 1-D one runs as 2-D with height 1).
StatusOr<Attrs> convAttrs(const onnx::NodeProto& n, int64_t rank) {
  if (attrString(n, "auto_pad", "NOTSET") != "NOTSET") return unsupported("Conv with auto_pad");
  if (rank != 3 && rank != 4) return unsupported("only 1-D and 2-D convolutions are supported");
  auto get = [&](const char* name, std::vector<int64_t> dflt) { return attrInts(n, name).value_or(dflt); };
  std::vector<int64_t> strides = get("strides", {}), dil = get("dilations", {}), pads = get("pads", {});
  if (rank == 3) {  // widths only: prepend the unit height
    if (!strides.empty()) strides.insert(strides.begin(), 1);
    if (!dil.empty()) dil.insert(dil.begin(), 1);
    if (pads.size() == 2) pads = {0, pads[0], 0, pads[1]};
  }
  Attrs a;
  if (!strides.empty()) a.set("strides", strides);
  if (!dil.empty()) a.set("dilations", dil);
  if (!pads.empty()) a.set("pads", pads);
  a.set("group", attrInt(n, "group", 1));
  return a;
}

Status importConv(Context& ctx, const onnx::NodeProto& n) {
  CAGR_ASSIGN_OR_RETURN(ValueId x, input(ctx, n, 0));
  CAGR_ASSIGN_OR_RETURN(ValueId w, input(ctx, n, 1));
  const TensorType& wt = ctx.graph().type(w);
  auto ones = [](const std::optional<std::vector<int64_t>>& v) {
    return !v || std::all_of(v->begin(), v->end(), [](int64_t d) { return d == 1; });
  };
  auto zeros = [](const std::optional<std::vector<int64_t>>& v) {
    return !v || std::all_of(v->begin(), v->end(), [](int64_t d) { return d == 0; });
  };
  bool pointwise1d = wt.rank() == 3 && wt.dims[2] == 1 && attrInt(n, "group", 1) == 1 && ones(attrInts(n, "strides")) &&
                     ones(attrInts(n, "dilations")) && zeros(attrInts(n, "pads")) &&
                     attrString(n, "auto_pad", "NOTSET") == "NOTSET";
  std::vector<ValueId> ins{x, w};
  if (hasInput(n, 2)) {
    CAGR_ASSIGN_OR_RETURN(ValueId b, input(ctx, n, 2));
    ins.push_back(b);
  }
  if (pointwise1d) {
    CAGR_ASSIGN_OR_RETURN(ValueId out, ctx.add1(OpKind::kConv1x1, std::move(ins)));
    return bindOutput(ctx, n, out);
  }
  CAGR_ASSIGN_OR_RETURN(Attrs a, convAttrs(n, wt.rank()));
  Attrs height;
  height.set("axes", std::vector<int64_t>{2});
  bool oneD = wt.rank() == 3;
  for (size_t i = 0; oneD && i < 2; ++i) {
    CAGR_ASSIGN_OR_RETURN(ins[i], ctx.add1(OpKind::kUnsqueeze, {ins[i]}, height));
  }
  CAGR_ASSIGN_OR_RETURN(ValueId out, ctx.add1(OpKind::kConv, std::move(ins), a));
  if (oneD) {
    CAGR_ASSIGN_OR_RETURN(out, ctx.add1(OpKind::kSqueeze, {out}, height));
  }
  return bindOutput(ctx, n, out);
}

// Reduce axes come from an attribute (older opsets) or the second input.
StatusOr<std::vector<int64_t>> reduceAxesOf(Context& ctx, const onnx::NodeProto& n) {
  if (hasInput(n, 1)) return ctx.staticInts(n.input(1), "reduction axes");
  return attrInts(n, "axes").value_or(std::vector<int64_t>{});
}

Status importReduce(Context& ctx, const onnx::NodeProto& n, OpKind op) {
  CAGR_ASSIGN_OR_RETURN(ValueId x, input(ctx, n, 0));
  CAGR_ASSIGN_OR_RETURN(auto axes, reduceAxesOf(ctx, n));
  if (axes.empty() && attrInt(n, "noop_with_empty_axes", 0) != 0) return bindOutput(ctx, n, x);
  Attrs a;
  a.set("axes", axes);
  a.set("keepdims", attrInt(n, "keepdims", 1));
  CAGR_ASSIGN_OR_RETURN(ValueId out, ctx.add1(op, {x}, a));
  return bindOutput(ctx, n, out);
}
Status importReduceSum(Context& ctx, const onnx::NodeProto& n) { return importReduce(ctx, n, OpKind::kReduceSum); }
Status importReduceMean(Context& ctx, const onnx::NodeProto& n) { return importReduce(ctx, n, OpKind::kReduceMean); }
Status importReduceMax(Context& ctx, const onnx::NodeProto& n) { return importReduce(ctx, n, OpKind::kReduceMax); }

Status importBatchNorm(Context& ctx, const onnx::NodeProto& n) {
  if (attrInt(n, "training_mode", 0) != 0) return unsupported("BatchNormalization in training mode");
  std::vector<ValueId> ins;
  for (int i = 0; i < 5; ++i) {
    CAGR_ASSIGN_OR_RETURN(ValueId v, input(ctx, n, i));
    ins.push_back(v);
  }
  Attrs a;
  a.set("epsilon", static_cast<double>(attrFloat(n, "epsilon", 1e-5f)));
  CAGR_ASSIGN_OR_RETURN(ValueId out, ctx.add1(OpKind::kBatchNorm, std::move(ins), a));
  return bindOutput(ctx, n, out);
}

Status importLayerNorm(Context& ctx, const onnx::NodeProto& n) {
  for (int i = 1; i < n.output_size(); ++i) {
    if (!n.output(i).empty()) ctx.setDeferred(n.output(i), unsupported("LayerNormalization mean/inv-std outputs"));
  }
  CAGR_ASSIGN_OR_RETURN(std::vector<ValueId> ins, presentInputs(ctx, n));
  Attrs a;
  a.set("axis", attrInt(n, "axis", -1));
  a.set("epsilon", static_cast<double>(attrFloat(n, "epsilon", 1e-5f)));
  CAGR_ASSIGN_OR_RETURN(ValueId out, ctx.add1(OpKind::kLayerNorm, std::move(ins), a));
  return bindOutput(ctx, n, out);
}

Status importSoftmax(Context& ctx, const onnx::NodeProto& n) {
  CAGR_ASSIGN_OR_RETURN(ValueId x, input(ctx, n, 0));
  int64_t rank = ctx.graph().type(x).rank();
  int64_t axis = attrInt(n, "axis", ctx.opset() >= 13 ? -1 : 1);
  if (ctx.opset() < 13 && axis != -1 && axis != rank - 1) {
    return unsupported("Softmax before opset 13 over a non-last axis (2-D coercion semantics)");
  }
  Attrs a;
  a.set("axis", axis);
  CAGR_ASSIGN_OR_RETURN(ValueId out, ctx.add1(OpKind::kSoftmax, {x}, a));
  return bindOutput(ctx, n, out);
}

}  // namespace

Handler findHandler(const std::string& opType) {
  static const std::map<std::string, Handler> kHandlers = {
      {"Relu", importRelu}, {"Sigmoid", importSigmoid}, {"Tanh", importTanh}, {"Exp", importExp},
      {"Log", importLog}, {"Neg", importNeg}, {"Abs", importAbs}, {"Sqrt", importSqrt},
      {"Reciprocal", importReciprocal}, {"Erf", importErf}, {"Softplus", importSoftplus},
      {"Identity", importIdentity}, {"Add", importAdd}, {"Sub", importSub}, {"Mul", importMul},
      {"Div", importDiv}, {"Pow", importPow}, {"Max", importMax}, {"Min", importMin}, {"Where", importWhere},
      {"MatMul", importMatMul}, {"LeakyRelu", importLeakyRelu}, {"Gelu", importGelu},
      {"Dropout", importDropout}, {"Clip", importClip}, {"Cast", importCast}, {"CastLike", importCastLike},
      {"Gemm", importGemm}, {"Einsum", importEinsum}, {"Conv", importConv}, {"ReduceSum", importReduceSum},
      {"ReduceMean", importReduceMean}, {"ReduceMax", importReduceMax},
      {"BatchNormalization", importBatchNorm}, {"LayerNormalization", importLayerNorm},
      {"Softmax", importSoftmax},
  };
  auto it = kHandlers.find(opType);
  if (it != kHandlers.end()) return it->second;
  return findShapeHandler(opType);
}

}  // namespace cagr::import
