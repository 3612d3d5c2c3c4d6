// The sparse-dense product step (one SpMM node, kernel own.spmm): CSR
// row_ptr / col_idx / values times a dense [cols, K] operand, fp32, rows
// split over OpenMP threads, each output row accumulated in registers-sized
// chunks of K straight from the dense rows it names. The CSR arrays are
// checked on every run (monotone row_ptr, col_idx in range), as the
// reference kernel checks them, so a bad graph input is an error naming the
// node, never a wild read. Declines other dtypes and reduced-precision
// storage (the reference fallback runs those).
#include <omp.h>

#include <algorithm>
#include <string>
#include <vector>

#include "backends/cpu/eltwise_kernels.h"
#include "backends/cpu/step.h"
#include "ir/graph_queries.h"

namespace cagr::cpu {
namespace {

// Below this many multiply-adds one thread does the whole product.
constexpr int64_t kParallelWork = int64_t{1} << 16;

template <typename I>
Status checkCsr(const I* rowPtr, int64_t rows, const I* col, int64_t nnz, int64_t cols, const std::string& where) {
  int64_t prev = 0;
  for (int64_t r = 0; r <= rows; ++r) {
    const int64_t p = static_cast<int64_t>(rowPtr[r]);
    if (p < prev || p > nnz) {
      return invalidArgument(where + ": row_ptr[" + std::to_string(r) + "] = " + std::to_string(p) +
                             " must be non-decreasing, >= 0 and <= nnz = " + std::to_string(nnz));
    }
    prev = p;
  }
  for (int64_t p = 0; p < nnz; ++p) {
    const int64_t c = static_cast<int64_t>(col[p]);
    if (c < 0 || c >= cols) {
      return invalidArgument(where + ": col_idx[" + std::to_string(p) + "] = " + std::to_string(c) +
                             " is out of range [0, " + std::to_string(cols) + ")");
    }
  }
  return Status::ok();
}

// y[0, w) = sum over p < entries of vals[p] * dense[cols[p], 0, w).
[[gnu::always_inline]] inline void rowAnyWidth(const float* vals, const int64_t* cols, int64_t entries,
                                               const float* dense, int64_t kk, int64_t w, float* y) {
  float acc[64];
  std::fill(acc, acc + w, 0.f);
  for (int64_t p = 0; p < entries; ++p) {
    const float v = vals[p];
    const float* drow = dense + cols[p] * kk;
#pragma omp simd
    for (int64_t j = 0; j < w; ++j) acc[j] += v * drow[j];
  }
  std::copy(acc, acc + w, y);
}

// The same for w = 64 with the accumulators as eight explicit 8-float
// vectors (GCC vector extensions: registers on AVX2, pairs of SSE ones on
// the baseline), so the compiler cannot trade them for a scalar
// unroll-and-jam over the entries (which it did for the plain loop).
using Vec8 = float __attribute__((vector_size(32), aligned(4)));

[[gnu::always_inline]] inline void row64(const float* vals, const int64_t* cols, int64_t entries, const float* dense,
                                         int64_t kk, float* y) {
  Vec8 acc[8] = {};
  for (int64_t p = 0; p < entries; ++p) {
    const float v = vals[p];
    const Vec8* drow = reinterpret_cast<const Vec8*>(dense + cols[p] * kk);
#pragma GCC unroll 8
    for (int i = 0; i < 8; ++i) acc[i] += v * drow[i];
  }
  Vec8* out = reinterpret_cast<Vec8*>(y);
#pragma GCC unroll 8
  for (int i = 0; i < 8; ++i) out[i] = acc[i];
}

static_assert(sizeof(float) * 64 == 8 * sizeof(Vec8));

// y[r, :] = sum over p in row r of vals[p] * dense[col[p], :], in chunks
// of 64 columns (NGCF's width: one chunk of eight AVX2 registers).
template <typename I>
CAGR_CPU_CLONES void spmmRows(const I* rowPtr, const I* col, const float* vals, const float* dense, int64_t kk,
                              int64_t r0, int64_t r1, float* y) {
  constexpr int64_t kChunk = 64;
  std::vector<int64_t> cols;  // this row's column offsets, widened once
  for (int64_t r = r0; r < r1; ++r) {
    const int64_t p0 = static_cast<int64_t>(rowPtr[r]), p1 = static_cast<int64_t>(rowPtr[r + 1]);
    cols.resize(static_cast<size_t>(p1 - p0));
    for (int64_t p = p0; p < p1; ++p) cols[static_cast<size_t>(p - p0)] = static_cast<int64_t>(col[p]);
    for (int64_t j0 = 0; j0 < kk; j0 += kChunk) {
      const int64_t w = std::min(kChunk, kk - j0);
      if (w == kChunk) {
        row64(vals + p0, cols.data(), p1 - p0, dense + j0, kk, y + r * kk + j0);
      } else {
        rowAnyWidth(vals + p0, cols.data(), p1 - p0, dense + j0, kk, w, y + r * kk + j0);
      }
    }
  }
}

class SpmmStep : public Step {
 public:
  SpmmStep(const Graph& g, NodeId id) : g_(g), node_(g.node(id)), where_(nodeWhere(g, id)) {}

  std::string kernelName() const override { return "own.spmm"; }
  std::vector<ValueId> writes() const override { return {node_.outputs[0]}; }

  Status run(const RunContext& ctx) const override {
    const Buffer& rowPtr = ctx.buffer(node_.inputs[0]);
    const Buffer& col = ctx.buffer(node_.inputs[1]);
    const Buffer& vals = ctx.buffer(node_.inputs[2]);
    const Buffer& dense = ctx.buffer(node_.inputs[3]);
    const Buffer& out = ctx.buffer(node_.outputs[0]);
    if (dense.shape.size() != 2) return invalidArgument(where_ + ": the dense operand is not 2-D");
    const int64_t rows = rowPtr.numel() - 1, nnz = col.numel(), cols = dense.shape[0], kk = dense.shape[1];
    if (rows < 0) return invalidArgument(where_ + ": row_ptr is empty");
    if (vals.numel() != nnz) {
      return invalidArgument(where_ + ": " + std::to_string(vals.numel()) + " values for " + std::to_string(nnz) +
                             " column indices");
    }
    if (out.numel() != rows * kk) {
      return invalidArgument(where_ + ": output has " + std::to_string(out.numel()) + " elements, expected " +
                             std::to_string(rows * kk));
    }
    if (rowPtr.dtype == DType::kI64) return product<int64_t>(ctx, rowPtr, col, vals, dense, out, rows, nnz, cols, kk);
    return product<int32_t>(ctx, rowPtr, col, vals, dense, out, rows, nnz, cols, kk);
  }

 private:
  template <typename I>
  Status product(const RunContext& ctx, const Buffer& rowPtr, const Buffer& col, const Buffer& vals,
                 const Buffer& dense, const Buffer& out, int64_t rows, int64_t nnz, int64_t cols, int64_t kk) const {
    const I* rp = rowPtr.as<I>();
    const I* ci = col.as<I>();
    CAGR_RETURN_IF_ERROR(checkCsr(rp, rows, ci, nnz, cols, where_));
    const float* v = vals.as<float>();
    const float* d = dense.as<float>();
    float* y = out.as<float>();
    const int threads = std::max(1, ctx.threads());
    if (nnz * kk < kParallelWork || threads == 1 || rows < 2) {
      spmmRows(rp, ci, v, d, kk, 0, rows, y);
      return Status::ok();
    }
    // Blocks of rows with about equal entries each, so a skewed degree
    // distribution (graph adjacency) does not leave one thread the hubs.
    const int64_t blocks = std::min<int64_t>(rows, int64_t{8} * threads);
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1)
    for (int64_t b = 0; b < blocks; ++b) {
      const int64_t lo = nnz * b / blocks, hi = nnz * (b + 1) / blocks;
      const int64_t r0 = b == 0 ? 0 : std::upper_bound(rp, rp + rows + 1, static_cast<I>(lo)) - rp - 1;
      const int64_t r1 = b + 1 == blocks ? rows : std::upper_bound(rp, rp + rows + 1, static_cast<I>(hi)) - rp - 1;
      if (r1 > r0) spmmRows(rp, ci, v, d, kk, r0, r1, y);
    }
    return Status::ok();
  }

  const Graph& g_;
  const Node& node_;
  std::string where_;
};

bool isIndex(DType t) {
  return t == DType::kI64 || t == DType::kI32;
}

}  // namespace

StatusOr<std::unique_ptr<Step>> makeSpmmStep(const StepRequest& r) {
  if (r.members.size() != 1 || r.g.node(r.members[0]).op != OpKind::kSpMM) return unsupported("not one SpMM node");
  if (r.kernel != 0) return unsupported(std::string("the plan names ") + kernelInfo(r.kernel).name);
  const Node& n = r.g.node(r.members[0]);
  if (n.inputs.size() != 4) return unsupported("SpMM without its four operands");
  const DType idx = r.g.type(n.inputs[0]).dtype;
  if (!isIndex(idx) || r.g.type(n.inputs[1]).dtype != idx) return unsupported("SpMM indices are not both i32 or i64");
  for (int i : {2, 3}) {
    if (r.g.type(n.inputs[i]).dtype != DType::kF32 || r.g.value(n.inputs[i]).mir.storage != Precision::kF32) {
      return unsupported("SpMM operands are not stored in fp32");
    }
  }
  if (r.g.type(n.outputs[0]).dtype != DType::kF32 || r.g.value(n.outputs[0]).mir.storage != Precision::kF32) {
    return unsupported("SpMM output is not fp32");
  }
  return std::unique_ptr<Step>(std::make_unique<SpmmStep>(r.g, r.members[0]));
}

}  // namespace cagr::cpu
