// Loops and dtype dispatch shared by the reference kernels: one strided
// walker (broadcasting, transposes, slices and reductions are all "walk the
// output, keep one offset per operand"), dtype visitors and a row-wise matrix
// product that accumulates in double.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "cagr/graph.h"
#include "cagr/tensor.h"

namespace cagr::ref {

/// The node's `axis` attribute normalised against `rank`, or an error.
StatusOr<int64_t> axisOf(const Node& n, int64_t rank);
/// Wraps a negative index v = indices[pos] into data axis `axis` of size
/// `dim`, or reports it with the valid range.
StatusOr<int64_t> wrapIndex(int64_t v, int64_t dim, int64_t pos, int64_t axis);

/// Product of shape[begin, end).
int64_t product(const std::vector<int64_t>& shape, size_t begin = 0, size_t end = SIZE_MAX);
/// Row-major element strides of `shape`.
std::vector<int64_t> contiguousStrides(const std::vector<int64_t>& shape);
/// Strides of a tensor of `shape` broadcast (NumPy rules) to `outShape`:
/// 0 on broadcast and on leading missing axes.
std::vector<int64_t> broadcastStrides(const std::vector<int64_t>& shape, const std::vector<int64_t>& outShape);
/// "[2,3]".
std::string shapeString(const std::vector<int64_t>& shape);

/// Walks the row-major index space `shape`, calling f(linear, offsets) where
/// offsets[k] = start[k] + sum_d index[d] * strides[k][d].
template <size_t K, typename F>
void forEachStrided(const std::vector<int64_t>& shape, const std::array<std::vector<int64_t>, K>& strides,
                    const std::array<int64_t, K>& start, F&& f) {
  int64_t total = product(shape);
  if (total == 0) return;
  size_t r = shape.size();
  if (r == 0) {
    f(int64_t{0}, start);
    return;
  }
  int64_t inner = shape[r - 1];
  std::array<int64_t, K> innerStride{}, base = start;
  for (size_t k = 0; k < K; ++k) innerStride[k] = strides[k][r - 1];
  std::vector<int64_t> idx(r, 0);
  for (int64_t o = 0; o < total; o += inner) {
    std::array<int64_t, K> off = base;
    for (int64_t i = 0; i < inner; ++i) {
      f(o + i, off);
      for (size_t k = 0; k < K; ++k) off[k] += innerStride[k];
    }
    for (size_t d = r - 1; d-- > 0;) {  // advance the outer odometer
      for (size_t k = 0; k < K; ++k) base[k] += strides[k][d];
      if (++idx[d] < shape[d]) break;
      for (size_t k = 0; k < K; ++k) base[k] -= strides[k][d] * shape[d];
      idx[d] = 0;
    }
  }
}

/// Calls f(T{}) for T = float or double, else reports the dtype unsupported.
template <typename F>
Status visitFloat(DType t, F&& f) {
  switch (t) {
    case DType::kF32:
      return f(float{});
    case DType::kF64:
      return f(double{});
    default:
      return unsupported(std::string("element type ") + dtypeName(t) + " is not supported here (f32, f64)");
  }
}

/// Calls f(T{}) for T = float, double, int64_t or int32_t.
template <typename F>
Status visitNumeric(DType t, F&& f) {
  switch (t) {
    case DType::kF32:
      return f(float{});
    case DType::kF64:
      return f(double{});
    case DType::kI64:
      return f(int64_t{});
    case DType::kI32:
      return f(int32_t{});
    default:
      return unsupported(std::string("element type ") + dtypeName(t) + " is not supported here (f32, f64, i64, i32)");
  }
}

/// Calls f(E{}) with an unsigned integer type E of `bytes` size, so movement
/// kernels copy elements of any dtype without knowing what they hold.
template <typename F>
void visitElementBytes(size_t bytes, F&& f) {
  switch (bytes) {
    case 1:
      f(uint8_t{});
      break;
    case 2:
      f(uint16_t{});
      break;
    case 4:
      f(uint32_t{});
      break;
    default:
      f(uint64_t{});
      break;
  }
}

/// dst[o] = src[start + sum index * srcStrides] over dst's shape, any dtype.
void stridedCopy(const Tensor& src, int64_t start, const std::vector<int64_t>& srcStrides, Tensor& dst);
/// Copies all bytes of `src` into `dst` (same byte size: reshapes and views).
void copyBytes(const Tensor& src, Tensor& dst);

/// Fails unless `t` holds i64 or i32 indices; `what` names the operand.
Status requireIndexType(const Tensor& t, const char* what);
/// Fails unless both tensors have the same dtype.
Status requireSameType(const Tensor& a, const Tensor& b, const char* what);

/// Row-wise matrix product: for each row i of the M x K matrix A (element
/// (i, k) at a[i * aRow + k * aCol]) computes acc[j] = sum_k A(i,k) * B[k, j]
/// in double, B contiguous [K, N], and calls emit(i, acc).
template <typename TA, typename TB, typename Emit>
void matmulRows(const TA* a, int64_t aRow, int64_t aCol, const TB* b, int64_t m, int64_t k, int64_t n, Emit&& emit) {
  std::vector<double> acc(static_cast<size_t>(n));
  for (int64_t i = 0; i < m; ++i) {
    std::fill(acc.begin(), acc.end(), 0.0);
    for (int64_t p = 0; p < k; ++p) {
      double av = static_cast<double>(a[i * aRow + p * aCol]);
      const TB* br = b + p * n;
      for (int64_t j = 0; j < n; ++j) acc[static_cast<size_t>(j)] += av * static_cast<double>(br[j]);
    }
    emit(i, static_cast<const double*>(acc.data()));
  }
}

}  // namespace cagr::ref
