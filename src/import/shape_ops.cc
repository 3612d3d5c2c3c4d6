// ONNX -> HIR handlers for data movement and shape arithmetic. Shape, Size,
// Gather/Concat/Slice/Unsqueeze over shapes, and arithmetic on them are
// evaluated at import time over symbolic dims, so Reshape/Expand/Slice get
// static attributes (0 / -1 / 1 stand in for the symbolic batch).
#include <climits>
#include <cmath>
#include <filesystem>
#include <map>

#include "import/context.h"
#include "import/handlers.h"
#include "ir/dims.h"
#include "support/sizes.h"

namespace cagr::import {
namespace {

Status importConstant(Context& ctx, const onnx::NodeProto& n) {
  const onnx::AttributeProto* a = n.attribute_size() > 0 ? &n.attribute(0) : nullptr;
  if (a == nullptr) return corrupt("Constant without a value");
  if (a->name() == "value") {
    std::string dir = std::filesystem::path(ctx.path()).parent_path().string();
    CAGR_ASSIGN_OR_RETURN(Tensor t, tensorFromOnnx(a->t(), dir));
    ctx.setConstant(n.output(0), std::move(t));
    return Status::ok();
  }
  Tensor t;
  if (a->name() == "value_float") {
    t = Tensor(DType::kF32, {});
    t.data<float>()[0] = a->f();
  } else if (a->name() == "value_int") {
    t = Tensor(DType::kI64, {});
    t.data<int64_t>()[0] = a->i();
  } else if (a->name() == "value_floats") {
    t = Tensor(DType::kF32, {a->floats_size()});
    for (int i = 0; i < a->floats_size(); ++i) t.data<float>()[i] = a->floats(i);
  } else if (a->name() == "value_ints") {
    t = Tensor(DType::kI64, {a->ints_size()});
    for (int i = 0; i < a->ints_size(); ++i) t.data<int64_t>()[i] = a->ints(i);
  } else {
    return unsupported("Constant with attribute '" + a->name() + "'");
  }
  ctx.setConstant(n.output(0), std::move(t));
  return Status::ok();
}

Status importShape(Context& ctx, const onnx::NodeProto& n) {
  TensorType t;
  const Entry* e = ctx.entry(n.input(0));
  if (e != nullptr && e->value == kNoValue && e->ints) {
    // The shape of shape arithmetic (DIN's attention: ConstantOfShape(Shape(
    // Concat(N, D))) as an Expand target) is its static length, even where
    // its entries are symbolic and could not be materialised.
    t.dtype = DType::kI64;
    if (!e->ints->scalar) t.dims = {static_cast<Dim>(e->ints->dims.size())};
  } else {
    CAGR_ASSIGN_OR_RETURN(t, ctx.typeOf(n.input(0)));
  }
  int64_t r = t.rank();
  int64_t start = attrInt(n, "start", 0), end = attrInt(n, "end", r);
  if (start < 0) start += r;
  if (end < 0) end += r;
  start = std::clamp<int64_t>(start, 0, r);
  end = std::clamp<int64_t>(end, start, r);
  ctx.setInts(n.output(0), SymInts::fromDims(t.dims, static_cast<size_t>(start), static_cast<size_t>(end)));
  return Status::ok();
}

// ReduceProd of a shape (the element count of a slice: TorchScript's
// nn.EmbeddingBag on 2-D ids) is shape arithmetic; on tensors it is not supported.
Status importReduceProd(Context& ctx, const onnx::NodeProto& n) {
  auto s = ctx.ints(n.input(0));
  if (!s || s->scalar) return unsupported("unsupported op 'ReduceProd': only products of shapes are supported");
  SymSize p{1, 0};
  for (size_t i = 0; i < s->dims.size(); ++i) {
    auto next = mulSize(p, s->isSym(i) ? sizeOf(s->dims[i]) : SymSize{s->dims[i], 0});
    if (!next) return unsupported("ReduceProd of a shape that multiplies two symbols");
    p = *next;
  }
  SymInts out;
  out.push(p.toDim(), p.sym != 0);
  out.scalar = attrInt(n, "keepdims", 1) == 0;
  ctx.setInts(n.output(0), out);
  return Status::ok();
}

Status importSize(Context& ctx, const onnx::NodeProto& n) {
  CAGR_ASSIGN_OR_RETURN(TensorType t, ctx.typeOf(n.input(0)));
  auto p = productOf(t.dims);
  if (!p) return unsupported("Size of a tensor whose size mixes two symbols");
  SymInts s;
  s.push(p->toDim(), p->sym != 0);
  s.scalar = true;
  ctx.setInts(n.output(0), s);
  return Status::ok();
}

// Gather over shape arithmetic: picks entries by constant indices.
Status importGather(Context& ctx, const onnx::NodeProto& n) {
  auto data = ctx.ints(n.input(0));
  auto idx = ctx.ints(n.input(1));
  if (data && !data->isStatic() && idx && idx->isStatic() && !data->scalar) {
    SymInts out;
    out.scalar = idx->scalar;
    for (Dim i : idx->dims) {
      int64_t k = i < 0 ? i + static_cast<int64_t>(data->dims.size()) : i;
      if (k < 0 || k >= static_cast<int64_t>(data->dims.size())) return invalidArgument("shape index out of range");
      out.push(data->dims[static_cast<size_t>(k)], data->isSym(static_cast<size_t>(k)));
    }
    ctx.setInts(n.output(0), out);
    return Status::ok();
  }
  CAGR_ASSIGN_OR_RETURN(ValueId d, input(ctx, n, 0));
  CAGR_ASSIGN_OR_RETURN(ValueId i, input(ctx, n, 1));
  Attrs a;
  a.set("axis", attrInt(n, "axis", 0));
  CAGR_ASSIGN_OR_RETURN(ValueId out, ctx.add1(OpKind::kGather, {d, i}, a));
  return bindOutput(ctx, n, out);
}

Status importConcat(Context& ctx, const onnx::NodeProto& n) {
  SymInts joined;
  bool allInts = true, anySymbolic = false;
  for (const auto& name : n.input()) {
    auto s = ctx.ints(name);
    if (!s) {
      allInts = false;
      break;
    }
    anySymbolic = anySymbolic || !s->isStatic();
    for (size_t i = 0; i < s->dims.size(); ++i) joined.push(s->dims[i], s->isSym(i));
  }
  if (allInts && anySymbolic) {
    ctx.setInts(n.output(0), joined);
    return Status::ok();
  }
  std::vector<ValueId> ins;
  for (int i = 0; i < n.input_size(); ++i) {
    CAGR_ASSIGN_OR_RETURN(ValueId v, input(ctx, n, i));
    ins.push_back(v);
  }
  Attrs a;
  a.set("axis", attrInt(n, "axis", 0));
  CAGR_ASSIGN_OR_RETURN(ValueId out, ctx.add1(OpKind::kConcat, std::move(ins), a));
  return bindOutput(ctx, n, out);
}

StatusOr<std::vector<int64_t>> axesOf(Context& ctx, const onnx::NodeProto& n) {
  if (hasInput(n, 1)) return ctx.staticInts(n.input(1), "axes");
  return attrInts(n, "axes").value_or(std::vector<int64_t>{});
}

Status importUnsqueeze(Context& ctx, const onnx::NodeProto& n) {
  CAGR_ASSIGN_OR_RETURN(auto axes, axesOf(ctx, n));
  auto s = ctx.ints(n.input(0));
  if (s && !s->isStatic() && s->scalar && axes == std::vector<int64_t>{0}) {
    SymInts v = *s;
    v.scalar = false;
    ctx.setInts(n.output(0), v);
    return Status::ok();
  }
  CAGR_ASSIGN_OR_RETURN(ValueId x, input(ctx, n, 0));
  Attrs a;
  a.set("axes", axes);
  CAGR_ASSIGN_OR_RETURN(ValueId out, ctx.add1(OpKind::kUnsqueeze, {x}, a));
  return bindOutput(ctx, n, out);
}

Status importSqueeze(Context& ctx, const onnx::NodeProto& n) {
  CAGR_ASSIGN_OR_RETURN(auto axes, axesOf(ctx, n));
  auto s = ctx.ints(n.input(0));
  if (s && !s->isStatic() && !s->scalar && s->dims.size() == 1) {
    SymInts v = *s;
    v.scalar = true;
    ctx.setInts(n.output(0), v);
    return Status::ok();
  }
  CAGR_ASSIGN_OR_RETURN(ValueId x, input(ctx, n, 0));
  Attrs a;
  a.set("axes", axes);
  CAGR_ASSIGN_OR_RETURN(ValueId out, ctx.add1(OpKind::kSqueeze, {x}, a));
  return bindOutput(ctx, n, out);
}

// Converts a (possibly symbolic) target shape into Reshape's attribute: a
// symbolic entry equal to the input's dim at the same position becomes 0 (so
// the text stays readable), any other symbolic entry stays a symbolic Dim.
StatusOr<std::vector<int64_t>> reshapeTarget(const TensorType& in, const SymInts& target, bool allowZero) {
  std::vector<int64_t> out;
  for (size_t i = 0; i < target.dims.size(); ++i) {
    Dim d = target.dims[i];
    if (!target.isSym(i)) {
      if (d == 0 && allowZero) return unsupported("Reshape to a zero-sized dimension (allowzero=1)");
      out.push_back(d);
    } else {
      out.push_back(i < in.dims.size() && in.dims[i] == d ? 0 : d);
    }
  }
  return out;
}

Status importReshape(Context& ctx, const onnx::NodeProto& n) {
  CAGR_ASSIGN_OR_RETURN(ValueId x, input(ctx, n, 0));
  auto target = ctx.ints(n.input(1));
  if (!target) return unsupported("Reshape target shape is not known at import time");
  CAGR_ASSIGN_OR_RETURN(auto shape, reshapeTarget(ctx.graph().type(x), *target, attrInt(n, "allowzero", 0) != 0));
  Attrs a;
  a.set("shape", shape);
  CAGR_ASSIGN_OR_RETURN(ValueId out, ctx.add1(OpKind::kReshape, {x}, a));
  return bindOutput(ctx, n, out);
}

// Expand: symbolic target entries stay symbolic Dims in the attribute; the
// shape rule broadcasts them against the input (a 1 becomes N).
Status importExpand(Context& ctx, const onnx::NodeProto& n) {
  CAGR_ASSIGN_OR_RETURN(ValueId x, input(ctx, n, 0));
  auto target = ctx.ints(n.input(1));
  if (!target) return unsupported("Expand shape is not known at import time");
  Attrs a;
  a.set("shape", std::vector<int64_t>(target->dims.begin(), target->dims.end()));
  CAGR_ASSIGN_OR_RETURN(ValueId out, ctx.add1(OpKind::kExpand, {x}, a));
  return bindOutput(ctx, n, out);
}

Status sliceInts(Context& ctx, const onnx::NodeProto& n, const SymInts& data) {
  CAGR_ASSIGN_OR_RETURN(auto starts, ctx.staticInts(n.input(1), "Slice starts"));
  CAGR_ASSIGN_OR_RETURN(auto ends, ctx.staticInts(n.input(2), "Slice ends"));
  std::vector<int64_t> steps{1};
  if (hasInput(n, 4)) {
    CAGR_ASSIGN_OR_RETURN(steps, ctx.staticInts(n.input(4), "Slice steps"));
  }
  if (starts.size() != 1 || ends.size() != 1 || steps.size() != 1 || steps[0] != 1) {
    return unsupported("Slice of a shape with more than one axis or a step");
  }
  auto len = static_cast<int64_t>(data.dims.size());
  int64_t s = std::clamp<int64_t>(starts[0] < 0 ? starts[0] + len : starts[0], 0, len);
  int64_t e = std::clamp<int64_t>(ends[0] < 0 ? ends[0] + len : ends[0], s, len);
  ctx.setInts(n.output(0), data.slice(static_cast<size_t>(s), static_cast<size_t>(e)));
  return Status::ok();
}

Status importSlice(Context& ctx, const onnx::NodeProto& n) {
  auto data = ctx.ints(n.input(0));
  if (data && !data->isStatic()) return sliceInts(ctx, n, *data);
  CAGR_ASSIGN_OR_RETURN(ValueId x, input(ctx, n, 0));
  const TensorType& t = ctx.graph().type(x);
  auto starts = ctx.ints(n.input(1)), ends = ctx.ints(n.input(2));
  if (!starts || !ends) return unsupported("Slice bounds must be known at import time");
  std::vector<int64_t> axes, steps;
  if (hasInput(n, 3)) {
    CAGR_ASSIGN_OR_RETURN(axes, ctx.staticInts(n.input(3), "Slice axes"));
  }
  if (hasInput(n, 4)) {
    CAGR_ASSIGN_OR_RETURN(steps, ctx.staticInts(n.input(4), "Slice steps"));
  }
  if (axes.empty()) {
    for (size_t i = 0; i < starts->dims.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  }
  std::vector<int64_t> s, e;
  for (size_t i = 0; i < starts->dims.size() && i < ends->dims.size() && i < axes.size(); ++i) {
    auto ax = normAxis(axes[i], t.rank());
    if (!ax) return invalidArgument("Slice axis out of range");
    Dim full = t.dims[static_cast<size_t>(*ax)];
    if (starts->isSym(i)) return unsupported("Slice start depends on the symbolic batch size");
    s.push_back(starts->dims[i]);
    Dim end = ends->dims[i];
    if (ends->isSym(i) && end != full) return unsupported("Slice end depends on the symbolic batch size");
    e.push_back(ends->isSym(i) ? INT64_MAX : end);
  }
  Attrs a;
  a.set("starts", s);
  a.set("ends", e);
  a.set("axes", axes);
  a.set("steps", steps.empty() ? std::vector<int64_t>(s.size(), 1) : steps);
  CAGR_ASSIGN_OR_RETURN(ValueId out, ctx.add1(OpKind::kSlice, {x}, a));
  return bindOutput(ctx, n, out);
}

Status importFlatten(Context& ctx, const onnx::NodeProto& n) {
  CAGR_ASSIGN_OR_RETURN(ValueId x, input(ctx, n, 0));
  Attrs a;
  a.set("axis", attrInt(n, "axis", 1));
  CAGR_ASSIGN_OR_RETURN(ValueId out, ctx.add1(OpKind::kFlatten, {x}, a));
  return bindOutput(ctx, n, out);
}

Status importTranspose(Context& ctx, const onnx::NodeProto& n) {
  CAGR_ASSIGN_OR_RETURN(ValueId x, input(ctx, n, 0));
  Attrs a;
  if (auto perm = attrInts(n, "perm")) a.set("perm", *perm);
  CAGR_ASSIGN_OR_RETURN(ValueId out, ctx.add1(OpKind::kTranspose, {x}, a));
  return bindOutput(ctx, n, out);
}

Status importSplit(Context& ctx, const onnx::NodeProto& n) {
  CAGR_ASSIGN_OR_RETURN(ValueId x, input(ctx, n, 0));
  const TensorType& t = ctx.graph().type(x);
  int64_t axis = attrInt(n, "axis", 0);
  auto ax = normAxis(axis, t.rank());
  if (!ax) return invalidArgument("Split axis out of range");
  std::vector<int64_t> split;
  if (hasInput(n, 1)) {
    CAGR_ASSIGN_OR_RETURN(split, ctx.staticInts(n.input(1), "Split sizes"));
  } else if (auto sp = attrInts(n, "split")) {
    split = *sp;
  } else {
    Dim d = t.dims[static_cast<size_t>(*ax)];
    int64_t parts = n.output_size();
    if (isSymbolic(d)) return unsupported("Split of a symbolic dimension");
    int64_t chunk = (d + parts - 1) / parts;
    for (int64_t i = 0; i < parts; ++i) split.push_back(std::min(chunk, d - i * chunk));
  }
  Attrs a;
  a.set("axis", axis);
  a.set("split", split);
  CAGR_ASSIGN_OR_RETURN(auto outs, ctx.add(OpKind::kSplit, {x}, a, static_cast<int>(split.size())));
  for (int i = 0; i < n.output_size() && i < static_cast<int>(outs.size()); ++i) ctx.setValue(n.output(i), outs[i]);
  return Status::ok();
}

Status importGatherND(Context& ctx, const onnx::NodeProto& n) {
  CAGR_ASSIGN_OR_RETURN(ValueId d, input(ctx, n, 0));
  CAGR_ASSIGN_OR_RETURN(ValueId i, input(ctx, n, 1));
  Attrs a;
  if (attrInt(n, "batch_dims", 0) != 0) a.set("batch_dims", attrInt(n, "batch_dims", 0));
  CAGR_ASSIGN_OR_RETURN(ValueId out, ctx.add1(OpKind::kGatherND, {d, i}, a));
  return bindOutput(ctx, n, out);
}

// A static shape folds to a constant; one with symbolic entries ([N, 1] from
// X.new_zeros((X.shape[0], 1))) becomes the Expand of the scalar fill value.
Status importConstantOfShape(Context& ctx, const onnx::NodeProto& n) {
  auto shape = ctx.ints(n.input(0));
  if (!shape) return ctx.staticInts(n.input(0), "ConstantOfShape shape").status();
  Tensor fill(DType::kF32, {});
  if (const auto* a = findAttr(n, "value")) {
    CAGR_ASSIGN_OR_RETURN(Tensor given, tensorFromOnnx(a->t(), ""));
    if (given.numel() != 1) return invalidArgument("ConstantOfShape value must hold one element");
    fill = Tensor(given.dtype(), {});
    fill.setF64(0, given.getF64(0));
  }
  // Fold only what is small; a large static shape stays an Expand of the fill value.
  constexpr size_t kFoldBytes = size_t{16} << 20;
  std::vector<int64_t> dims(shape->dims.begin(), shape->dims.end());
  bool fold = false;
  if (shape->isStatic()) {
    CAGR_ASSIGN_OR_RETURN(size_t bytes, checkedTensorBytes(fill.dtype(), dims, "ConstantOfShape shape"));
    fold = bytes <= kFoldBytes;
  }
  if (fold) {
    Tensor t(fill.dtype(), std::move(dims));
    for (int64_t i = 0; i < t.numel(); ++i) t.setF64(i, fill.getF64(0));
    ctx.setConstant(n.output(0), std::move(t));
    return Status::ok();
  }
  ValueId scalar = ctx.graph().addConstant(n.output(0) + ":fill", std::move(fill));
  Attrs a;
  a.set("shape", std::move(dims));
  CAGR_ASSIGN_OR_RETURN(ValueId out, ctx.add1(OpKind::kExpand, {scalar}, a));
  return bindOutput(ctx, n, out);
}

// Range over constants folds; Range(0, k*N, k) over a symbolic N becomes a
// Range op of N elements (nn.EmbeddingBag's implicit offsets on 2-D ids).
Status importRange(Context& ctx, const onnx::NodeProto& n) {
  auto start = ctx.constant(n.input(0)), delta = ctx.constant(n.input(2));
  auto limit = ctx.ints(n.input(1));
  auto limitC = ctx.constant(n.input(1));
  if (!start || !delta || (!limitC && (!limit || limit->dims.size() != 1))) {
    return unsupported("Range with bounds unknown at import time");
  }
  double s = start->getF64(0), d = delta->getF64(0);
  if (d == 0) return invalidArgument("Range delta is 0");
  if (limitC) {
    double elems = std::max(0.0, std::ceil((limitC->getF64(0) - s) / d));
    if (!(elems <= double{1 << 26})) {
      return invalidArgument("Range(" + std::to_string(s) + ", " + std::to_string(limitC->getF64(0)) + ", " +
                             std::to_string(d) + ") has " + std::to_string(elems) + " elements; at most 2^26 are supported");
    }
    auto count = static_cast<int64_t>(elems);
    Tensor t(start->dtype(), std::vector<int64_t>{count});
    for (int64_t i = 0; i < count; ++i) t.setF64(i, s + static_cast<double>(i) * d);
    ctx.setConstant(n.output(0), std::move(t));
    return Status::ok();
  }
  std::optional<SymSize> count;
  if (s == 0 && d >= 1 && d == std::floor(d)) count = divSize(sizeOf(limit->dims[0]), SymSize{static_cast<int64_t>(d), 0});
  if (!count) return unsupported("Range from 0 to a symbolic limit that is not a multiple of its step");
  Attrs a;
  a.set("count", count->toDim());
  a.set("start", s);
  a.set("delta", d);
  a.set("dtype", std::string(dtypeName(start->dtype())));
  CAGR_ASSIGN_OR_RETURN(ValueId out, ctx.add1(OpKind::kRange, {}, a));
  return bindOutput(ctx, n, out);
}

}  // namespace

Status symbolicArith(Context& ctx, const onnx::NodeProto& n, const SymInts& a, const SymInts& b) {
  size_t len = std::max(a.dims.size(), b.dims.size());
  if ((a.dims.size() != len && a.dims.size() != 1) || (b.dims.size() != len && b.dims.size() != 1)) {
    return invalidArgument("shape arithmetic operands do not broadcast");
  }
  SymInts out;
  out.scalar = a.scalar && b.scalar;
  auto sizeAt = [](const SymInts& s, size_t i) {
    size_t k = s.dims.size() == 1 ? 0 : i;
    return s.isSym(k) ? sizeOf(s.dims[k]) : SymSize{s.dims[k], 0};
  };
  for (size_t i = 0; i < len; ++i) {
    SymSize x = sizeAt(a, i), y = sizeAt(b, i);
    std::optional<SymSize> r;
    if (n.op_type() == "Mul") {
      r = mulSize(x, y);
    } else if (n.op_type() == "Div") {
      r = divSize(x, y);
    } else if (x.sym == y.sym) {
      r = SymSize{n.op_type() == "Add" ? x.coef + y.coef : x.coef - y.coef, x.sym};
      if (r->coef == 0) r->sym = 0;
    }
    if (!r) return unsupported("shape arithmetic " + n.op_type() + " on symbolic sizes does not stay a multiple of one symbol");
    out.push(r->toDim(), r->sym != 0);
  }
  ctx.setInts(n.output(0), out);
  return Status::ok();
}

Handler findShapeHandler(const std::string& opType) {
  static const std::map<std::string, Handler> kHandlers = {
      {"Constant", importConstant}, {"Shape", importShape}, {"Size", importSize}, {"Gather", importGather},
      {"Concat", importConcat}, {"Unsqueeze", importUnsqueeze}, {"Squeeze", importSqueeze},
      {"Reshape", importReshape}, {"Expand", importExpand}, {"Slice", importSlice}, {"Flatten", importFlatten},
      {"Transpose", importTranspose}, {"Split", importSplit}, {"GatherND", importGatherND},
      {"ConstantOfShape", importConstantOfShape}, {"Range", importRange}, {"ScatterND", importScatterND},
      {"ScatterElements", importScatterElements}, {"ReduceProd", importReduceProd},
  };
  auto it = kHandlers.find(opType);
  return it == kHandlers.end() ? findGeneralHandler(opType) : it->second;
}

}  // namespace cagr::import
