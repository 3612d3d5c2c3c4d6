// Reference kernels of the data-movement ops. They move raw elements by dtype
// size, so every element type works; index operands may be i64 or i32.
#include <cstring>

#include "ir/dims.h"
#include "ir/op_table.h"
#include "ir/shape_util.h"
#include "runtime/reference/kernel_util.h"
#include "runtime/reference/kernels.h"

namespace cagr::ref {
namespace {

// Copies `rows` blocks of `chunk` bytes from src (rows `srcPitch` bytes apart)
// to dst (rows `dstPitch` bytes apart): the shape of Concat and Split.
void copyRows(const std::byte* src, int64_t srcPitch, std::byte* dst, int64_t dstPitch, int64_t rows, int64_t chunk) {
  if (chunk == 0) return;
  for (int64_t r = 0; r < rows; ++r) {
    std::memcpy(dst + r * dstPitch, src + r * srcPitch, static_cast<size_t>(chunk));
  }
}

}  // namespace

CAGR_REF_KERNEL(Concat) {
  CAGR_ASSIGN_OR_RETURN(int64_t axis, axisOf(n, out[0].rank()));
  int64_t es = static_cast<int64_t>(dtypeSize(out[0].dtype()));
  int64_t outer = product(out[0].shape(), 0, static_cast<size_t>(axis));
  int64_t inner = product(out[0].shape(), static_cast<size_t>(axis) + 1) * es;
  int64_t outPitch = out[0].dim(axis) * inner, pos = 0;
  for (const Tensor* t : in) {
    CAGR_RETURN_IF_ERROR(requireSameType(*t, out[0], "concat operands"));
    int64_t chunk = t->dim(axis) * inner;
    copyRows(t->rawData(), chunk, out[0].rawData() + pos, outPitch, outer, chunk);
    pos += chunk;
  }
  // An output wider than its operands (a width padded for matrix units,
  // lower/pad_gemm_dims.h): zeros after the last operand.
  for (int64_t r = 0; pos < outPitch && r < outer; ++r) {
    std::memset(out[0].rawData() + r * outPitch + pos, 0, static_cast<size_t>(outPitch - pos));
  }
  return Status::ok();
}

// Reshape, Flatten, Squeeze and Unsqueeze keep the row-major element order.
CAGR_REF_KERNEL(Reshape) {
  copyBytes(*in[0], out[0]);
  return Status::ok();
}
CAGR_REF_KERNEL(Flatten) {
  copyBytes(*in[0], out[0]);
  return Status::ok();
}
CAGR_REF_KERNEL(Squeeze) {
  copyBytes(*in[0], out[0]);
  return Status::ok();
}
CAGR_REF_KERNEL(Unsqueeze) {
  copyBytes(*in[0], out[0]);
  return Status::ok();
}

CAGR_REF_KERNEL(Transpose) {
  const Tensor& x = *in[0];
  std::vector<int64_t> perm = intsAttr(n, "perm");
  if (perm.empty()) {
    for (int64_t i = x.rank() - 1; i >= 0; --i) perm.push_back(i);
  }
  std::vector<int64_t> own = contiguousStrides(x.shape()), strides;
  for (int64_t p : perm) {
    auto ax = normAxis(p, x.rank());
    if (!ax) return invalidArgument("perm entry " + std::to_string(p) + " is out of range");
    strides.push_back(own[static_cast<size_t>(*ax)]);
  }
  stridedCopy(x, 0, strides, out[0]);
  return Status::ok();
}

CAGR_REF_KERNEL(Slice) {
  const Tensor& x = *in[0];
  CAGR_ASSIGN_OR_RETURN(SliceParams sp, sliceParams(n));
  auto &starts = sp.starts, &ends = sp.ends, &axes = sp.axes, &steps = sp.steps;
  std::vector<int64_t> strides = contiguousStrides(x.shape());
  std::vector<bool> seen(static_cast<size_t>(x.rank()), false);
  int64_t start = 0;
  for (size_t i = 0; i < axes.size(); ++i) {
    auto ax = normAxis(axes[i], x.rank());
    if (!ax || seen[static_cast<size_t>(*ax)])
      return invalidArgument("slice axis " + std::to_string(axes[i]) + " is invalid or repeated");
    if (steps[i] == 0) return invalidArgument("slice step is 0");
    seen[static_cast<size_t>(*ax)] = true;
    int64_t dim = x.dim(*ax);
    if (dim == 0) continue;  // nothing to select; the output dim is 0 as well
    SliceRange r = normalizeSlice(starts[i], ends[i], steps[i], dim);
    if (r.count != out[0].dim(*ax)) {
      return internalError("slice of axis " + std::to_string(*ax) + " selects " + std::to_string(r.count) +
                           " elements but the output has " + std::to_string(out[0].dim(*ax)));
    }
    int64_t& s = strides[static_cast<size_t>(*ax)];
    start += r.start * s;
    s *= r.step;
  }
  stridedCopy(x, start, strides, out[0]);
  return Status::ok();
}

CAGR_REF_KERNEL(Expand) {
  stridedCopy(*in[0], 0, broadcastStrides(in[0]->shape(), out[0].shape()), out[0]);
  return Status::ok();
}

CAGR_REF_KERNEL(Split) {
  const Tensor& x = *in[0];
  CAGR_ASSIGN_OR_RETURN(int64_t axis, axisOf(n, x.rank()));
  int64_t es = static_cast<int64_t>(dtypeSize(x.dtype()));
  int64_t outer = product(x.shape(), 0, static_cast<size_t>(axis));
  int64_t inner = product(x.shape(), static_cast<size_t>(axis) + 1) * es;
  int64_t inPitch = x.dim(axis) * inner, pos = 0;
  for (Tensor& piece : out) {
    int64_t chunk = piece.dim(axis) * inner;
    if (pos + chunk > inPitch)
      return invalidArgument("split sizes exceed the axis size " + std::to_string(x.dim(axis)));
    copyRows(x.rawData() + pos, inPitch, piece.rawData(), chunk, outer, chunk);
    pos += chunk;
  }
  return Status::ok();
}

CAGR_REF_KERNEL(Gather) {
  const Tensor& data = *in[0];
  const Tensor& idx = *in[1];
  CAGR_RETURN_IF_ERROR(requireIndexType(idx, "indices"));
  CAGR_ASSIGN_OR_RETURN(int64_t axis, axisOf(n, data.rank()));
  int64_t es = static_cast<int64_t>(dtypeSize(data.dtype()));
  int64_t outer = product(data.shape(), 0, static_cast<size_t>(axis)), dim = data.dim(axis);
  int64_t inner = product(data.shape(), static_cast<size_t>(axis) + 1) * es;
  int64_t count = idx.numel();
  std::vector<int64_t> rows(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) {
    CAGR_ASSIGN_OR_RETURN(rows[static_cast<size_t>(i)], wrapIndex(idx.getI64(i), dim, i, axis));
  }
  std::byte* y = out[0].rawData();
  for (int64_t o = 0; o < outer; ++o) {
    const std::byte* src = data.rawData() + o * dim * inner;
    for (int64_t i = 0; i < count; ++i) {
      std::memcpy(y + (o * count + i) * inner, src + rows[static_cast<size_t>(i)] * inner, static_cast<size_t>(inner));
    }
  }
  return Status::ok();
}

CAGR_REF_KERNEL(GatherND) {
  const Tensor& data = *in[0];
  const Tensor& idx = *in[1];
  CAGR_RETURN_IF_ERROR(requireIndexType(idx, "indices"));
  int64_t b = intAttr(n, "batch_dims"), q = idx.rank(), depth = idx.dim(q - 1);
  size_t ub = static_cast<size_t>(b);
  if (!std::equal(data.shape().begin(), data.shape().begin() + b, idx.shape().begin())) {
    return invalidArgument("the first " + std::to_string(b) + " (batch) dims of data " + shapeString(data.shape()) +
                           " and indices " + shapeString(idx.shape()) + " differ");
  }
  int64_t batches = product(idx.shape(), 0, ub);
  int64_t tuples = product(idx.shape(), ub, static_cast<size_t>(q - 1));
  int64_t es = static_cast<int64_t>(dtypeSize(data.dtype()));
  int64_t block = product(data.shape(), ub + static_cast<size_t>(depth)) * es;
  int64_t batchPitch = product(data.shape(), ub) * es;
  std::vector<int64_t> strides = contiguousStrides(data.shape());
  std::byte* y = out[0].rawData();
  for (int64_t bi = 0; bi < batches; ++bi) {
    for (int64_t t = 0; t < tuples; ++t) {
      int64_t row = bi * tuples + t, offset = 0;
      for (int64_t j = 0; j < depth; ++j) {
        int64_t pos = row * depth + j;
        CAGR_ASSIGN_OR_RETURN(int64_t v, wrapIndex(idx.getI64(pos), data.dim(b + j), pos, b + j));
        offset += v * strides[ub + static_cast<size_t>(j)] * es;
      }
      std::memcpy(y + row * block, data.rawData() + bi * batchPitch + offset, static_cast<size_t>(block));
    }
  }
  return Status::ok();
}

}  // namespace cagr::ref
