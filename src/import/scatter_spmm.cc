// Recognises graph propagation written as a scatter-add of gathered rows
// (NGCF's `zeros.index_add(0, dst, X[src] * w)`): ScatterND / ScatterElements
// with reduction=add into a zero tensor, constant dst/src/w. Produces
// SpMM(CSR(dst, src, w), X) — the only form of scatter CAGR imports.
#include <algorithm>
#include <numeric>

#include "import/context.h"
#include "import/handlers.h"

namespace cagr::import {
namespace {

bool allZero(const Tensor& t) {
  for (int64_t i = 0; i < t.numel(); ++i) {
    if (t.getF64(i) != 0.0) return false;
  }
  return true;
}

// Destination row of each update row.
StatusOr<std::vector<int64_t>> destinations(const Tensor& idx, bool elements) {
  if (idx.rank() != 2 || (!elements && idx.dim(1) != 1)) return unsupported("scatter indices are not one row index per update");
  std::vector<int64_t> dst(static_cast<size_t>(idx.dim(0)));
  for (int64_t e = 0; e < idx.dim(0); ++e) {
    dst[static_cast<size_t>(e)] = idx.getI64(e * idx.dim(1));
    for (int64_t k = 1; elements && k < idx.dim(1); ++k) {
      if (idx.getI64(e * idx.dim(1) + k) != dst[static_cast<size_t>(e)]) {
        return unsupported("ScatterElements indices differ across a row");
      }
    }
  }
  return dst;
}

// The scatter indices as a constant: directly, or the [E,1] column that an
// Expand broadcasts across the row (the TorchScript scatter_add form).
StatusOr<const Tensor*> rowIndices(Context& ctx, const std::string& name) {
  CAGR_ASSIGN_OR_RETURN(ValueId v, ctx.value(name));
  const Graph& g = ctx.graph();
  if (g.isConstant(v)) return g.constant(v);
  const Value& val = g.value(v);
  if (val.producer >= 0 && g.node(val.producer).op == OpKind::kExpand && g.isConstant(g.node(val.producer).inputs[0])) {
    return g.constant(g.node(val.producer).inputs[0]);
  }
  return unsupported("scatter indices are not constant");
}

struct GatheredRows {
  ValueId source = kNoValue;  // X
  std::vector<int64_t> src;
  std::vector<double> weight;
};

// updates = Gather(X, src) or GatherND(X, src[:,None]), optionally * w[:,None].
StatusOr<GatheredRows> gatheredRows(const Graph& g, ValueId updates) {
  GatheredRows r;
  ValueId rows = updates;
  const Tensor* w = nullptr;
  const Value& u = g.value(updates);
  if (u.producer >= 0 && g.node(u.producer).op == OpKind::kMul) {
    const Node& mul = g.node(u.producer);
    int wi = g.isConstant(mul.inputs[1]) ? 1 : (g.isConstant(mul.inputs[0]) ? 0 : -1);
    if (wi < 0) return unsupported("scatter updates are scaled by a non-constant");
    w = g.constant(mul.inputs[static_cast<size_t>(wi)]);
    rows = mul.inputs[static_cast<size_t>(1 - wi)];
  }
  const Value& rv = g.value(rows);
  if (rv.producer < 0) return unsupported("scatter updates are not gathered rows");
  const Node& gather = g.node(rv.producer);
  bool ok = (gather.op == OpKind::kGather && gather.attrs.getInt("axis") == 0) ||
            (gather.op == OpKind::kGatherND && gather.attrs.getInt("batch_dims") == 0);
  const Tensor* src = ok ? g.constant(gather.inputs[1]) : nullptr;
  if (src == nullptr || g.type(gather.inputs[0]).rank() != 2) return unsupported("scatter updates are not rows gathered by constant ids");
  r.source = gather.inputs[0];
  for (int64_t i = 0; i < src->numel(); ++i) r.src.push_back(src->getI64(i));
  if (w != nullptr && w->numel() != static_cast<int64_t>(r.src.size())) return unsupported("scatter weights are not one per row");
  for (size_t i = 0; i < r.src.size(); ++i) r.weight.push_back(w != nullptr ? w->getF64(static_cast<int64_t>(i)) : 1.0);
  return r;
}

Status importScatterAdd(Context& ctx, const onnx::NodeProto& n, bool elements) {
  if (attrString(n, "reduction", "none") != "add" || (elements && attrInt(n, "axis", 0) != 0)) {
    return unsupported("unsupported op '" + n.op_type() + "': only scatter-add of rows along axis 0 (graph propagation) is supported");
  }
  auto data = ctx.constant(n.input(0));
  if (!data || data->rank() != 2 || !allZero(*data)) {
    return unsupported(n.op_type() + " into a non-constant or non-zero tensor");
  }
  CAGR_ASSIGN_OR_RETURN(const Tensor* idx, rowIndices(ctx, n.input(1)));
  CAGR_ASSIGN_OR_RETURN(auto dst, destinations(*idx, elements));
  CAGR_ASSIGN_OR_RETURN(ValueId updates, ctx.value(n.input(2)));
  Graph& g = ctx.graph();
  CAGR_ASSIGN_OR_RETURN(GatheredRows rows, gatheredRows(g, updates));
  if (rows.src.size() != dst.size()) return unsupported("scatter has a different number of ids and rows");
  int64_t nRows = data->dim(0), nCols = g.type(rows.source).dims[0];
  if (isSymbolic(nCols)) return unsupported("graph propagation over a symbolic number of nodes");
  std::vector<size_t> order(dst.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return dst[a] < dst[b]; });
  Tensor rowPtr(DType::kI64, {nRows + 1}), col(DType::kI64, {static_cast<int64_t>(dst.size())});
  Tensor val(g.type(rows.source).dtype, {static_cast<int64_t>(dst.size())});
  for (size_t k = 0; k < order.size(); ++k) {
    size_t e = order[k];
    if (dst[e] < 0 || dst[e] >= nRows || rows.src[e] < 0 || rows.src[e] >= nCols) {
      return invalidArgument("edge " + std::to_string(e) + " has an out-of-range node id");
    }
    ++rowPtr.data<int64_t>()[dst[e] + 1];
    col.data<int64_t>()[k] = rows.src[e];
    val.setF64(static_cast<int64_t>(k), rows.weight[e]);
  }
  for (int64_t r = 0; r < nRows; ++r) rowPtr.data<int64_t>()[r + 1] += rowPtr.data<int64_t>()[r];
  std::string base = n.name();
  std::vector<ValueId> ins{g.addConstant(base + ".row_ptr", std::move(rowPtr)), g.addConstant(base + ".col_idx", std::move(col)),
                           g.addConstant(base + ".values", std::move(val)), rows.source};
  Attrs a;
  a.set("rows", nRows);
  a.set("cols", nCols);
  CAGR_ASSIGN_OR_RETURN(ValueId out, ctx.add1(OpKind::kSpMM, ins, a));
  ctx.report().recognized.push_back("SpMM (" + std::to_string(dst.size()) + " edges) from " + n.op_type() + " '" + n.name() + "'");
  return bindOutput(ctx, n, out);
}

}  // namespace

Status importScatterND(Context& ctx, const onnx::NodeProto& n) { return importScatterAdd(ctx, n, false); }
Status importScatterElements(Context& ctx, const onnx::NodeProto& n) { return importScatterAdd(ctx, n, true); }

}  // namespace cagr::import
