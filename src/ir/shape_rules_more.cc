// Shape rules for slicing, gathers, reductions, normalisation and the
// recommendation ops (EmbeddingBag, Interaction, FM, CIN, SpMM, Conv1x1).
#include <algorithm>
#include <climits>

#include "ir/dims.h"
#include "ir/op_table.h"
#include "ir/shape_util.h"

namespace cagr {

SliceRange normalizeSlice(int64_t start, int64_t end, int64_t step, int64_t dim) {
  SliceRange r;
  r.step = step;
  if (dim == 0) return r;
  if (start < 0) start += dim;
  if (end < 0) end += dim;
  if (step > 0) {
    start = std::clamp<int64_t>(start, 0, dim);
    end = std::clamp<int64_t>(end, 0, dim);
    r.count = end > start ? (end - start + step - 1) / step : 0;
  } else {
    start = std::clamp<int64_t>(start, 0, dim - 1);
    end = std::clamp<int64_t>(end, -1, dim - 1);
    r.count = start > end ? (start - end - step - 1) / (-step) : 0;
  }
  r.start = start;
  return r;
}

bool isFullSlice(int64_t start, int64_t end, int64_t step) { return start == 0 && step == 1 && end >= INT_MAX; }

StatusOr<std::vector<int64_t>> reduceAxes(const std::vector<int64_t>& axes, int64_t rank) {
  std::vector<int64_t> out;
  if (axes.empty()) {
    for (int64_t i = 0; i < rank; ++i) out.push_back(i);
    return out;
  }
  for (int64_t a : axes) {
    auto ax = normAxis(a, rank);
    if (!ax) return invalidArgument("reduction axis " + std::to_string(a) + " out of range");
    out.push_back(*ax);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

double numelOf(const std::vector<int64_t>& shape) {
  double n = 1;
  for (int64_t d : shape) n *= static_cast<double>(d);
  return n;
}

StatusOr<SliceParams> sliceParams(const Node& n) {
  SliceParams p{intsAttr(n, "starts"), intsAttr(n, "ends"), intsAttr(n, "axes"), intsAttr(n, "steps")};
  if (p.axes.empty()) {
    for (size_t i = 0; i < p.starts.size(); ++i) p.axes.push_back(static_cast<int64_t>(i));
  }
  if (p.steps.empty()) p.steps.assign(p.starts.size(), 1);
  if (p.ends.size() != p.starts.size() || p.axes.size() != p.starts.size() || p.steps.size() != p.starts.size()) {
    return invalidArgument("starts/ends/axes/steps lengths differ");
  }
  return p;
}

Status shapeSlice(const Graph& g, const Node& n, std::vector<TensorType>& outs) {
  const TensorType& in = g.type(n.inputs[0]);
  CAGR_ASSIGN_OR_RETURN(SliceParams sp, sliceParams(n));
  auto &starts = sp.starts, &ends = sp.ends, &axes = sp.axes, &steps = sp.steps;
  std::vector<Dim> dims = in.dims;
  std::vector<bool> seen(in.dims.size(), false);
  for (size_t i = 0; i < axes.size(); ++i) {
    auto ax = normAxis(axes[i], in.rank());
    if (!ax) return invalidArgument("slice axis out of range");
    if (seen[static_cast<size_t>(*ax)]) return invalidArgument("slice axis " + std::to_string(axes[i]) + " repeated");
    seen[static_cast<size_t>(*ax)] = true;
    if (steps[i] == 0) return invalidArgument("slice step is 0");
    Dim d = in.dims[static_cast<size_t>(*ax)];
    if (isSymbolic(d)) {
      if (!isFullSlice(starts[i], ends[i], steps[i])) {
        return unsupported("partial slice of symbolic dim " + g.dimString(d));
      }
      continue;
    }
    dims[static_cast<size_t>(*ax)] = normalizeSlice(starts[i], ends[i], steps[i], d).count;
  }
  outs = {TensorType{in.dtype, std::move(dims)}};
  return Status::ok();
}

Status shapeSqueeze(const Graph& g, const Node& n, std::vector<TensorType>& outs) {
  const TensorType& in = g.type(n.inputs[0]);
  auto axes = intsAttr(n, "axes");
  std::vector<bool> drop(in.dims.size(), false);
  if (axes.empty()) {
    for (size_t i = 0; i < in.dims.size(); ++i) drop[i] = in.dims[i] == 1;
  }
  for (int64_t a : axes) {
    auto ax = normAxis(a, in.rank());
    if (!ax) return invalidArgument("squeeze axis out of range");
    if (in.dims[static_cast<size_t>(*ax)] != 1) {
      return invalidArgument("squeeze axis " + std::to_string(a) + " has size " + g.dimString(in.dims[static_cast<size_t>(*ax)]));
    }
    drop[static_cast<size_t>(*ax)] = true;
  }
  std::vector<Dim> dims;
  for (size_t i = 0; i < in.dims.size(); ++i) {
    if (!drop[i]) dims.push_back(in.dims[i]);
  }
  outs = {TensorType{in.dtype, std::move(dims)}};
  return Status::ok();
}

Status shapeUnsqueeze(const Graph& g, const Node& n, std::vector<TensorType>& outs) {
  const TensorType& in = g.type(n.inputs[0]);
  auto axes = intsAttr(n, "axes");
  int64_t rank = in.rank() + static_cast<int64_t>(axes.size());
  std::vector<bool> isNew(static_cast<size_t>(rank), false);
  for (int64_t a : axes) {
    auto ax = normAxis(a, rank);
    if (!ax || isNew[static_cast<size_t>(*ax)]) return invalidArgument("unsqueeze axes invalid");
    isNew[static_cast<size_t>(*ax)] = true;
  }
  std::vector<Dim> dims;
  size_t k = 0;
  for (int64_t i = 0; i < rank; ++i) dims.push_back(isNew[static_cast<size_t>(i)] ? 1 : in.dims[k++]);
  outs = {TensorType{in.dtype, std::move(dims)}};
  return Status::ok();
}

Status shapeExpand(const Graph& g, const Node& n, std::vector<TensorType>& outs) {
  const TensorType& in = g.type(n.inputs[0]);
  auto shape = intsAttr(n, "shape");
  CAGR_ASSIGN_OR_RETURN(auto dims, broadcastDims(g, in.dims, std::vector<Dim>(shape.begin(), shape.end())));
  outs = {TensorType{in.dtype, std::move(dims)}};
  return Status::ok();
}

Status shapeSplit(const Graph& g, const Node& n, std::vector<TensorType>& outs) {
  const TensorType& in = g.type(n.inputs[0]);
  auto axis = normAxis(intAttr(n, "axis"), in.rank());
  if (!axis) return invalidArgument("split axis out of range");
  auto split = intsAttr(n, "split");
  Dim d = in.dims[static_cast<size_t>(*axis)];
  int64_t sum = 0;
  for (int64_t s : split) sum += s;
  if (isSymbolic(d) || sum != d) return invalidArgument("split sizes do not add up to the axis size " + g.dimString(d));
  outs.clear();
  for (int64_t s : split) {
    TensorType t = in;
    t.dims[static_cast<size_t>(*axis)] = s;
    outs.push_back(std::move(t));
  }
  return Status::ok();
}

static bool isIndexType(DType t) { return t == DType::kI64 || t == DType::kI32; }

Status shapeGather(const Graph& g, const Node& n, std::vector<TensorType>& outs) {
  const TensorType& data = g.type(n.inputs[0]);
  const TensorType& idx = g.type(n.inputs[1]);
  if (!isIndexType(idx.dtype)) return invalidArgument("indices must be i64 or i32");
  auto axis = normAxis(intAttr(n, "axis"), data.rank());
  if (!axis) return invalidArgument("gather axis out of range");
  std::vector<Dim> dims(data.dims.begin(), data.dims.begin() + *axis);
  dims.insert(dims.end(), idx.dims.begin(), idx.dims.end());
  dims.insert(dims.end(), data.dims.begin() + *axis + 1, data.dims.end());
  outs = {TensorType{data.dtype, std::move(dims)}};
  return Status::ok();
}

Status shapeGatherND(const Graph& g, const Node& n, std::vector<TensorType>& outs) {
  const TensorType& data = g.type(n.inputs[0]);
  const TensorType& idx = g.type(n.inputs[1]);
  int64_t b = intAttr(n, "batch_dims");
  if (!isIndexType(idx.dtype) || idx.rank() < 1) return invalidArgument("indices must be i64/i32 of rank >= 1");
  Dim last = idx.dims.back();
  if (isSymbolic(last) || b + last > data.rank() || b >= idx.rank()) {
    return invalidArgument("indices last dim " + g.dimString(last) + " does not fit data rank");
  }
  for (int64_t i = 0; i < b; ++i) {
    if (data.dims[static_cast<size_t>(i)] != idx.dims[static_cast<size_t>(i)]) {
      return invalidArgument("data and indices differ in batch dim " + std::to_string(i));
    }
  }
  std::vector<Dim> dims(idx.dims.begin(), idx.dims.end() - 1);
  dims.insert(dims.end(), data.dims.begin() + b + last, data.dims.end());
  outs = {TensorType{data.dtype, std::move(dims)}};
  return Status::ok();
}

Status shapeReduce(const Graph& g, const Node& n, std::vector<TensorType>& outs) {
  const TensorType& in = g.type(n.inputs[0]);
  CAGR_ASSIGN_OR_RETURN(auto axes, reduceAxes(intsAttr(n, "axes"), in.rank()));
  bool keep = intAttr(n, "keepdims") != 0;
  std::vector<Dim> dims;
  for (int64_t i = 0; i < in.rank(); ++i) {
    bool reduced = std::binary_search(axes.begin(), axes.end(), i);
    if (!reduced) {
      dims.push_back(in.dims[static_cast<size_t>(i)]);
    } else if (keep) {
      dims.push_back(1);
    }
  }
  outs = {TensorType{in.dtype, std::move(dims)}};
  return Status::ok();
}

Status shapeBatchNorm(const Graph& g, const Node& n, std::vector<TensorType>& outs) {
  const TensorType& x = g.type(n.inputs[0]);
  if (x.rank() < 2) return invalidArgument("batch_norm input must have rank >= 2");
  for (size_t i = 1; i < 5; ++i) {
    const TensorType& p = g.type(n.inputs[i]);
    if (p.dims != std::vector<Dim>{x.dims[1]}) return invalidArgument("parameter " + std::to_string(i) + " must be [C]");
  }
  outs = {x};
  return Status::ok();
}

Status shapeLayerNorm(const Graph& g, const Node& n, std::vector<TensorType>& outs) {
  const TensorType& x = g.type(n.inputs[0]);
  auto axis = normAxis(intAttr(n, "axis"), x.rank());
  if (!axis) return invalidArgument("layer_norm axis out of range");
  std::vector<Dim> normShape(x.dims.begin() + *axis, x.dims.end());
  for (size_t i = 1; i < n.inputs.size(); ++i) {
    if (n.inputs[i] == kNoValue) continue;
    CAGR_ASSIGN_OR_RETURN(auto bc, broadcastDims(g, normShape, g.type(n.inputs[i]).dims));
    if (bc != normShape) return invalidArgument("scale/bias do not match the normalised shape");
  }
  outs = {x};
  return Status::ok();
}

Status shapeConv1x1(const Graph& g, const Node& n, std::vector<TensorType>& outs) {
  const TensorType& x = g.type(n.inputs[0]);
  const TensorType& w = g.type(n.inputs[1]);
  if (x.rank() != 3 || w.rank() != 3 || w.dims[2] != 1) return invalidArgument("conv1x1 needs x [N,C,L] and w [O,C,1]");
  if (w.dims[1] != x.dims[1]) return invalidArgument("conv1x1 channel mismatch");
  if (n.inputs.size() > 2 && n.inputs[2] != kNoValue && g.type(n.inputs[2]).dims != std::vector<Dim>{w.dims[0]}) {
    return invalidArgument("conv1x1 bias must be [O]");
  }
  outs = {TensorType{x.dtype, {x.dims[0], w.dims[0], x.dims[2]}}};
  return Status::ok();
}

Status shapeSpMM(const Graph& g, const Node& n, std::vector<TensorType>& outs) {
  int64_t rows = intAttr(n, "rows"), cols = intAttr(n, "cols");
  const TensorType& rp = g.type(n.inputs[0]);
  const TensorType& ci = g.type(n.inputs[1]);
  const TensorType& vals = g.type(n.inputs[2]);
  const TensorType& dense = g.type(n.inputs[3]);
  if (rp.dims != std::vector<Dim>{rows + 1} || !isIndexType(rp.dtype)) return invalidArgument("row_ptr must be [rows+1] i64");
  if (ci.rank() != 1 || vals.dims != ci.dims || !isIndexType(ci.dtype)) {
    return invalidArgument("col_idx and values must be [nnz]");
  }
  if (dense.rank() != 2 || dense.dims[0] != cols) return invalidArgument("dense operand must be [cols, K]");
  outs = {TensorType{dense.dtype, {rows, dense.dims[1]}}};
  return Status::ok();
}

Status shapeEmbeddingBag(const Graph& g, const Node& n, std::vector<TensorType>& outs) {
  const TensorType& table = g.type(n.inputs[0]);
  const TensorType& idx = g.type(n.inputs[1]);
  bool hasOffsets = n.inputs.size() > 2 && n.inputs[2] != kNoValue;
  bool hasWeights = n.inputs.size() > 3 && n.inputs[3] != kNoValue;
  std::string mode = stringAttr(n, "mode");
  if (mode != "sum" && mode != "mean" && mode != "max") return invalidArgument("mode must be sum, mean or max");
  if (table.rank() != 2) return invalidArgument("table must be [rows, dim]");
  if (!isIndexType(idx.dtype)) return invalidArgument("indices must be i64 or i32");
  if (hasWeights && mode != "sum") return invalidArgument("per-sample weights need mode sum");
  if (hasWeights) {
    const auto& w = g.type(n.inputs[3]).dims;
    bool same = w.size() == idx.dims.size();
    for (size_t i = 0; same && i < w.size(); ++i) same = g.sameDim(w[i], idx.dims[i]);
    if (!same) {
      return invalidArgument("per-sample weights " + g.typeString(g.type(n.inputs[3])) + " must match indices " +
                             g.typeString(idx));
    }
  }
  Dim bags;
  if (hasOffsets) {
    const TensorType& off = g.type(n.inputs[2]);
    if (idx.rank() != 1 || off.rank() != 1) return invalidArgument("with offsets, indices and offsets must be 1-D");
    bags = off.dims[0];
    if (intAttr(n, "include_last_offset") != 0) {
      if (isSymbolic(bags)) return unsupported("include_last_offset with a symbolic number of bags");
      bags -= 1;
    }
  } else {
    if (idx.rank() != 2) return invalidArgument("without offsets, indices must be [bags, pooling]");
    bags = idx.dims[0];
  }
  outs = {TensorType{table.dtype, {bags, table.dims[1]}}};
  return Status::ok();
}

// Slot of each table (attr `slots`, default identity) and the slot count.
static StatusOr<std::vector<int64_t>> bagSlots(const Node& n, int64_t tables) {
  std::vector<int64_t> slots = intsAttr(n, "slots");
  if (slots.empty()) {
    for (int64_t t = 0; t < tables; ++t) slots.push_back(t);
  }
  if (static_cast<int64_t>(slots.size()) != tables) return invalidArgument("slots needs one entry per table");
  return slots;
}

Status shapeEmbeddingBags(const Graph& g, const Node& n, std::vector<TensorType>& outs) {
  int64_t tables = intAttr(n, "num_tables");
  int64_t rest = static_cast<int64_t>(n.inputs.size()) - tables;
  if (tables < 1 || rest < 1 || rest > 2) return invalidArgument("expects num_tables tables, indices and optional offsets");
  CAGR_ASSIGN_OR_RETURN(std::vector<int64_t> slots, bagSlots(n, tables));
  std::string mode = stringAttr(n, "mode");
  if (mode != "sum" && mode != "mean" && mode != "max") return invalidArgument("mode must be sum, mean or max");
  const TensorType& idx = g.type(n.inputs[static_cast<size_t>(tables)]);
  if (!isIndexType(idx.dtype)) return invalidArgument("indices must be i64 or i32");
  bool hasOffsets = rest == 2 && n.inputs[static_cast<size_t>(tables) + 1] != kNoValue;
  Dim bags;
  int64_t numSlots;
  if (hasOffsets) {
    const TensorType& off = g.type(n.inputs[static_cast<size_t>(tables) + 1]);
    if (idx.rank() != 2 || off.rank() != 2) return invalidArgument("with offsets, indices must be [S, L] and offsets [S, B]");
    if (!isIndexType(off.dtype)) return invalidArgument("offsets must be i64 or i32");
    if (off.dims[0] != idx.dims[0]) return invalidArgument("indices and offsets disagree on the number of slots");
    bags = off.dims[1];
    if (intAttr(n, "include_last_offset") != 0) {
      if (isSymbolic(bags)) return unsupported("include_last_offset with a symbolic number of bags");
      bags -= 1;
    }
    numSlots = idx.dims[0];
  } else {
    if (idx.rank() != 2 && idx.rank() != 3) return invalidArgument("without offsets, indices must be [B, S] or [B, S, P]");
    bags = idx.dims[0];
    numSlots = idx.dims[1];
  }
  if (isSymbolic(numSlots)) return unsupported("a symbolic number of id slots");
  Dim width = 0;
  DType dtype = g.type(n.inputs[0]).dtype;
  for (int64_t t = 0; t < tables; ++t) {
    const TensorType& table = g.type(n.inputs[static_cast<size_t>(t)]);
    if (table.rank() != 2 || isSymbolic(table.dims[1])) return invalidArgument("table " + std::to_string(t) + " must be [rows, dim]");
    if (table.dtype != dtype) return invalidArgument("tables must share one element type");
    int64_t s = slots[static_cast<size_t>(t)];
    if (s < 0 || s >= numSlots) {
      return invalidArgument("slot " + std::to_string(s) + " of table " + std::to_string(t) + " is out of range [0, " +
                             std::to_string(numSlots) + ")");
    }
    width += table.dims[1];
  }
  outs = {TensorType{dtype, {bags, width}}};
  return Status::ok();
}

static Status requireFieldTensor(const Graph& g, ValueId v, const char* what) {
  if (g.type(v).rank() != 3) return invalidArgument(std::string(what) + " must be [B, fields, dim]");
  return Status::ok();
}

Status shapeInteraction(const Graph& g, const Node& n, std::vector<TensorType>& outs) {
  CAGR_RETURN_IF_ERROR(requireFieldTensor(g, n.inputs[0], "input"));
  const TensorType& x = g.type(n.inputs[0]);
  if (isSymbolic(x.dims[1])) return unsupported("interaction over a symbolic number of fields");
  int64_t f = x.dims[1];
  int64_t pairs = f * (f - 1) / 2 + (intAttr(n, "self_interaction") != 0 ? f : 0);
  outs = {TensorType{x.dtype, {x.dims[0], pairs}}};
  return Status::ok();
}

Status shapeFM(const Graph& g, const Node& n, std::vector<TensorType>& outs) {
  CAGR_RETURN_IF_ERROR(requireFieldTensor(g, n.inputs[0], "input"));
  const TensorType& x = g.type(n.inputs[0]);
  Dim last = intAttr(n, "reduce") != 0 ? 1 : x.dims[2];
  outs = {TensorType{x.dtype, {x.dims[0], last}}};
  return Status::ok();
}

Status shapeCIN(const Graph& g, const Node& n, std::vector<TensorType>& outs) {
  CAGR_RETURN_IF_ERROR(requireFieldTensor(g, n.inputs[0], "xk"));
  CAGR_RETURN_IF_ERROR(requireFieldTensor(g, n.inputs[1], "x0"));
  const TensorType& xk = g.type(n.inputs[0]);
  const TensorType& x0 = g.type(n.inputs[1]);
  const TensorType& w = g.type(n.inputs[2]);
  if (xk.dims[0] != x0.dims[0] || xk.dims[2] != x0.dims[2]) return invalidArgument("xk and x0 batch/dim differ");
  auto hf = mulSize(sizeOf(xk.dims[1]), sizeOf(x0.dims[1]));
  if (w.rank() != 2 || !hf || w.dims[1] != hf->toDim()) return invalidArgument("w must be [out, H*F]");
  if (n.inputs.size() > 3 && n.inputs[3] != kNoValue && g.type(n.inputs[3]).dims != std::vector<Dim>{w.dims[0]}) {
    return invalidArgument("bias must be [out]");
  }
  outs = {TensorType{xk.dtype, {xk.dims[0], w.dims[0], xk.dims[2]}}};
  return Status::ok();
}

}  // namespace cagr
