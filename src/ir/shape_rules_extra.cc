// Shape rules for the general ops third-party models bring: comparisons and
// logic (i1 results), GatherElements, Tile, Pad, Range (possibly symbolic
// length), TopK and the 2-D Conv.
#include <algorithm>

#include "ir/dims.h"
#include "ir/op_table.h"
#include "ir/shape_util.h"

namespace cagr {

Status shapeCompare(const Graph& g, const Node& n, std::vector<TensorType>& outs) {
  const TensorType& a = g.type(n.inputs[0]);
  const TensorType& b = g.type(n.inputs[1]);
  if (a.dtype != b.dtype) {
    return invalidArgument(std::string("operand types differ: ") + dtypeName(a.dtype) + " vs " + dtypeName(b.dtype));
  }
  std::string cmp = stringAttr(n, "cmp");
  if (cmp != "eq" && cmp != "lt" && cmp != "le" && cmp != "gt" && cmp != "ge") {
    return invalidArgument("cmp must be eq, lt, le, gt or ge, not '" + cmp + "'");
  }
  CAGR_ASSIGN_OR_RETURN(auto dims, broadcastDims(g, a.dims, b.dims));
  outs = {TensorType{DType::kBool, std::move(dims)}};
  return Status::ok();
}

Status shapeLogic(const Graph& g, const Node& n, std::vector<TensorType>& outs) {
  std::string fn = stringAttr(n, "fn");
  size_t want = fn == "not" ? 1 : 2;
  if (fn != "not" && fn != "and" && fn != "or" && fn != "xor") {
    return invalidArgument("fn must be and, or, xor or not, not '" + fn + "'");
  }
  if (n.inputs.size() != want) return invalidArgument("'" + fn + "' takes " + std::to_string(want) + " operands");
  std::vector<Dim> dims;
  for (ValueId v : n.inputs) {
    if (g.type(v).dtype != DType::kBool) return invalidArgument("logic operands must be i1");
    CAGR_ASSIGN_OR_RETURN(dims, broadcastDims(g, dims, g.type(v).dims));
  }
  outs = {TensorType{DType::kBool, std::move(dims)}};
  return Status::ok();
}

Status shapeGatherElements(const Graph& g, const Node& n, std::vector<TensorType>& outs) {
  const TensorType& data = g.type(n.inputs[0]);
  const TensorType& idx = g.type(n.inputs[1]);
  if (idx.dtype != DType::kI64 && idx.dtype != DType::kI32) return invalidArgument("indices must be i64 or i32");
  if (idx.rank() != data.rank()) return invalidArgument("data and indices must have the same rank");
  if (!normAxis(intAttr(n, "axis"), data.rank())) return invalidArgument("axis out of range");
  outs = {TensorType{data.dtype, idx.dims}};
  return Status::ok();
}

Status shapeTile(const Graph& g, const Node& n, std::vector<TensorType>& outs) {
  TensorType t = g.type(n.inputs[0]);
  auto reps = intsAttr(n, "repeats");
  if (static_cast<int64_t>(reps.size()) != t.rank()) return invalidArgument("repeats must have one entry per axis");
  for (size_t i = 0; i < reps.size(); ++i) {
    if (reps[i] < 0) return invalidArgument("repeats must be >= 0");
    t.dims[i] = mulSize(sizeOf(t.dims[i]), SymSize{reps[i], 0})->toDim();
  }
  outs = {std::move(t)};
  return Status::ok();
}

Status shapePad(const Graph& g, const Node& n, std::vector<TensorType>& outs) {
  TensorType t = g.type(n.inputs[0]);
  auto pads = intsAttr(n, "pads");
  size_t r = t.dims.size();
  if (pads.size() != 2 * r) return invalidArgument("pads must have 2 entries per axis");
  for (size_t i = 0; i < r; ++i) {
    if (pads[i] < 0 || pads[r + i] < 0) return invalidArgument("negative pads are not supported");
    int64_t add = pads[i] + pads[r + i];
    if (add == 0) continue;
    if (isSymbolic(t.dims[i])) return invalidArgument("padding a symbolic dimension");
    t.dims[i] += add;
  }
  outs = {std::move(t)};
  return Status::ok();
}

Status shapeRange(const Graph& g, const Node& n, std::vector<TensorType>& outs) {
  CAGR_ASSIGN_OR_RETURN(DType t, parseDType(stringAttr(n, "dtype")));
  Dim count = intAttr(n, "count");
  if (count < 0 && count > -kSymStride) return invalidArgument("count must be >= 0 or a symbolic size");
  outs = {TensorType{t, {count}}};
  return Status::ok();
}

Status shapeTopK(const Graph& g, const Node& n, std::vector<TensorType>& outs) {
  TensorType t = g.type(n.inputs[0]);
  auto axis = normAxis(intAttr(n, "axis"), t.rank());
  if (!axis) return invalidArgument("axis out of range");
  int64_t k = intAttr(n, "k");
  Dim d = t.dims[static_cast<size_t>(*axis)];
  if (k < 0 || (!isSymbolic(d) && k > d)) {
    return invalidArgument("k = " + std::to_string(k) + " does not fit axis size " + g.dimString(d));
  }
  t.dims[static_cast<size_t>(*axis)] = k;
  outs = {t, TensorType{DType::kI64, t.dims}};
  return Status::ok();
}

StatusOr<ConvParams> convParams(const Node& n) {
  ConvParams p;
  auto fill = [](std::vector<int64_t> v, size_t len, int64_t dflt) {
    if (v.empty()) v.assign(len, dflt);
    return v;
  };
  p.strides = fill(intsAttr(n, "strides"), 2, 1);
  p.dilations = fill(intsAttr(n, "dilations"), 2, 1);
  p.pads = fill(intsAttr(n, "pads"), 4, 0);
  p.group = intAttr(n, "group");
  if (p.strides.size() != 2 || p.dilations.size() != 2 || p.pads.size() != 4 || p.group < 1) {
    return invalidArgument("conv takes 2 strides, 2 dilations, 4 pads and group >= 1");
  }
  return p;
}

Status shapeConv(const Graph& g, const Node& n, std::vector<TensorType>& outs) {
  const TensorType& x = g.type(n.inputs[0]);
  const TensorType& w = g.type(n.inputs[1]);
  if (x.rank() != 4 || w.rank() != 4) return invalidArgument("conv takes x [N,C,H,W] and w [O,C/group,KH,KW]");
  CAGR_ASSIGN_OR_RETURN(ConvParams p, convParams(n));
  for (size_t i = 1; i < 4; ++i) {
    if (isSymbolic(x.dims[i]) || isSymbolic(w.dims[i])) return invalidArgument("conv over a symbolic channel or spatial dim");
  }
  if (x.dims[1] != w.dims[1] * p.group || w.dims[0] % p.group != 0) {
    return invalidArgument("channels " + dimsString(g, x.dims) + " do not match weight " + dimsString(g, w.dims));
  }
  if (n.inputs.size() > 2 && n.inputs[2] != kNoValue && g.type(n.inputs[2]).dims != std::vector<Dim>{w.dims[0]}) {
    return invalidArgument("bias must be [O]");
  }
  std::vector<Dim> dims{x.dims[0], w.dims[0]};
  for (size_t i = 0; i < 2; ++i) {
    int64_t span = p.dilations[i] * (w.dims[2 + i] - 1) + 1;
    int64_t in = x.dims[2 + i] + p.pads[i] + p.pads[2 + i];
    if (in < span) return invalidArgument("conv window larger than its padded input");
    dims.push_back((in - span) / p.strides[i] + 1);
  }
  outs = {TensorType{x.dtype, std::move(dims)}};
  return Status::ok();
}

}  // namespace cagr
