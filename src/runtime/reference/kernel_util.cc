// Shared helpers of the reference kernels (see kernel_util.h).
#include "runtime/reference/kernel_util.h"

#include <cstring>
#include <functional>
#include <numeric>

#include "ir/dims.h"
#include "ir/op_table.h"

namespace cagr::ref {

StatusOr<int64_t> axisOf(const Node& n, int64_t rank) {
  int64_t axis = intAttr(n, "axis");
  auto ax = normAxis(axis, rank);
  if (!ax) return invalidArgument("axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
  return *ax;
}

StatusOr<int64_t> wrapIndex(int64_t v, int64_t dim, int64_t pos, int64_t axis) {
  if (v >= -dim && v < dim) return v < 0 ? v + dim : v;
  return invalidArgument("indices[" + std::to_string(pos) + "] = " + std::to_string(v) + " is out of range [" +
                         std::to_string(-dim) + ", " + std::to_string(dim - 1) + "] for data axis " +
                         std::to_string(axis) + " of size " + std::to_string(dim));
}

int64_t product(const std::vector<int64_t>& shape, size_t begin, size_t end) {
  auto first = shape.begin() + static_cast<std::ptrdiff_t>(std::min(begin, shape.size()));
  auto last = shape.begin() + static_cast<std::ptrdiff_t>(std::min(end, shape.size()));
  return first < last ? std::accumulate(first, last, int64_t{1}, std::multiplies<>()) : 1;
}

std::vector<int64_t> contiguousStrides(const std::vector<int64_t>& shape) {
  std::vector<int64_t> s(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;) s[i - 1] = s[i] * shape[i];
  return s;
}

std::vector<int64_t> broadcastStrides(const std::vector<int64_t>& shape, const std::vector<int64_t>& outShape) {
  std::vector<int64_t> own = contiguousStrides(shape);
  std::vector<int64_t> s(outShape.size(), 0);
  size_t lead = outShape.size() - shape.size();
  for (size_t i = 0; i < shape.size(); ++i) s[lead + i] = shape[i] == 1 ? 0 : own[i];
  return s;
}

std::string shapeString(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? "," : "") + std::to_string(shape[i]);
  return s + "]";
}

void stridedCopy(const Tensor& src, int64_t start, const std::vector<int64_t>& srcStrides, Tensor& dst) {
  visitElementBytes(dtypeSize(src.dtype()), [&](auto tag) {
    using E = decltype(tag);
    const E* s = src.data<E>();
    E* d = dst.data<E>();
    forEachStrided<1>(dst.shape(), {srcStrides}, {start},
                      [&](int64_t o, const std::array<int64_t, 1>& off) { d[o] = s[off[0]]; });
  });
}

void copyBytes(const Tensor& src, Tensor& dst) {
  if (src.byteSize() > 0) std::memcpy(dst.rawData(), src.rawData(), src.byteSize());
}

Status requireIndexType(const Tensor& t, const char* what) {
  if (t.dtype() == DType::kI64 || t.dtype() == DType::kI32) return Status::ok();
  return invalidArgument(std::string(what) + " must be i64 or i32, got " + dtypeName(t.dtype()));
}

Status requireSameType(const Tensor& a, const Tensor& b, const char* what) {
  if (a.dtype() == b.dtype()) return Status::ok();
  return invalidArgument(std::string(what) + ": element types differ (" + dtypeName(a.dtype()) + " vs " +
                         dtypeName(b.dtype()) + ")");
}

}  // namespace cagr::ref
