// Reference kernels of the linear-algebra ops: MatMul, Gemm, a generic
// Einsum, Conv1x1 and CSR SpMM. Products accumulate in double (matmulRows).
#include <map>

#include "ir/op_table.h"
#include "ir/shape_util.h"
#include "runtime/reference/kernel_util.h"
#include "runtime/reference/kernels.h"

namespace cagr::ref {
namespace {

// NumPy broadcast of two concrete batch shapes (shape inference checked them).
std::vector<int64_t> broadcastShape(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  size_t r = std::max(a.size(), b.size());
  std::vector<int64_t> out(r);
  for (size_t i = 0; i < r; ++i) {
    int64_t da = i < r - a.size() ? 1 : a[i - (r - a.size())];
    int64_t db = i < r - b.size() ? 1 : b[i - (r - b.size())];
    out[i] = da == 1 ? db : da;
  }
  return out;
}

// Contiguous [rows, cols] copy of the transpose of a 2-D [cols, rows] tensor.
Tensor transposed2d(const Tensor& t) {
  Tensor r(t.dtype(), {t.dim(1), t.dim(0)});
  stridedCopy(t, 0, {1, t.dim(1)}, r);
  return r;
}

constexpr size_t kMaxEinsumOperands = 8;  // ops.def: Einsum takes 1..8 inputs

// Letter sizes of an einsum (a size-1 operand dim broadcasts) in loop order:
// output letters first, then the summed ones in order of appearance.
struct EinsumLoops {
  std::string letters;
  std::vector<int64_t> sizes;
};

StatusOr<EinsumLoops> einsumLoops(const EinsumSpec& spec, std::span<const Tensor* const> in) {
  std::map<char, int64_t> size;
  for (size_t i = 0; i < spec.inputs.size(); ++i) {
    if (in[i]->rank() != static_cast<int64_t>(spec.inputs[i].size())) {
      return invalidArgument("einsum operand " + std::to_string(i) + " has rank " + std::to_string(in[i]->rank()) +
                             ", equation term '" + spec.inputs[i] + "'");
    }
    for (size_t k = 0; k < spec.inputs[i].size(); ++k) {
      int64_t& s = size.try_emplace(spec.inputs[i][k], 1).first->second;
      s = std::max(s, in[i]->dim(static_cast<int64_t>(k)));
    }
  }
  EinsumLoops loops;
  for (char c : spec.output) {
    if (loops.letters.find(c) != std::string::npos) {
      return unsupported(std::string("einsum output index '") + c + "' is repeated");
    }
    loops.letters += c;
  }
  for (const std::string& term : spec.inputs) {
    for (char c : term) {
      if (loops.letters.find(c) == std::string::npos) loops.letters += c;
    }
  }
  for (char c : loops.letters) loops.sizes.push_back(size[c]);
  return loops;
}

// Strides of an operand over the loop letters (0 for absent or size-1 dims).
std::vector<int64_t> einsumStrides(const std::string& term, const std::vector<int64_t>& shape,
                                   const std::string& letters) {
  std::vector<int64_t> own = contiguousStrides(shape);
  std::vector<int64_t> s(letters.size(), 0);
  for (size_t k = 0; k < term.size(); ++k) {
    if (shape[k] != 1) s[letters.find(term[k])] = own[k];
  }
  return s;
}

}  // namespace

CAGR_REF_KERNEL(MatMul) {
  const Tensor& a = *in[0];
  const Tensor& b = *in[1];
  CAGR_RETURN_IF_ERROR(requireSameType(a, b, "matmul operands"));
  std::vector<int64_t> as = a.shape(), bs = b.shape();
  if (as.size() == 1) as.insert(as.begin(), 1);  // 1-D promotion
  if (bs.size() == 1) bs.push_back(1);
  int64_t m = as[as.size() - 2], k = as.back(), nn = bs.back();
  if (bs[bs.size() - 2] != k)
    return invalidArgument("contraction dims differ: " + shapeString(a.shape()) + " x " + shapeString(b.shape()));
  std::vector<int64_t> batch = broadcastShape({as.begin(), as.end() - 2}, {bs.begin(), bs.end() - 2});
  std::array<std::vector<int64_t>, 2> strides{broadcastStrides({as.begin(), as.end() - 2}, batch),
                                              broadcastStrides({bs.begin(), bs.end() - 2}, batch)};
  for (int64_t& s : strides[0]) s *= m * k;
  for (int64_t& s : strides[1]) s *= k * nn;
  return visitFloat(a.dtype(), [&](auto tag) -> Status {
    using T = decltype(tag);
    T* y = out[0].data<T>();
    forEachStrided<2>(batch, strides, {0, 0}, [&](int64_t bi, const std::array<int64_t, 2>& off) {
      T* yb = y + bi * m * nn;
      matmulRows(a.data<T>() + off[0], k, 1, b.data<T>() + off[1], m, k, nn, [&](int64_t i, const double* acc) {
        for (int64_t j = 0; j < nn; ++j) yb[i * nn + j] = static_cast<T>(acc[j]);
      });
    });
    return Status::ok();
  });
}

CAGR_REF_KERNEL(Gemm) {
  const Tensor& a = *in[0];
  const Tensor* c = in.size() > 2 ? in[2] : nullptr;
  CAGR_RETURN_IF_ERROR(requireSameType(a, *in[1], "gemm A and B"));
  if (c != nullptr) CAGR_RETURN_IF_ERROR(requireSameType(a, *c, "gemm A and C"));
  bool ta = intAttr(n, "transA") != 0, tb = intAttr(n, "transB") != 0;
  double alpha = floatAttr(n, "alpha"), beta = floatAttr(n, "beta");
  int64_t m = a.dim(ta ? 1 : 0), k = a.dim(ta ? 0 : 1);
  Tensor b = tb ? transposed2d(*in[1]) : *in[1];
  int64_t nn = b.dim(1);
  if (b.dim(0) != k) return invalidArgument("contraction dims differ");
  std::vector<int64_t> cStrides = c ? broadcastStrides(c->shape(), {m, nn}) : std::vector<int64_t>{0, 0};
  return visitFloat(a.dtype(), [&](auto tag) -> Status {
    using T = decltype(tag);
    T* y = out[0].data<T>();
    const T* pc = c ? c->data<T>() : nullptr;
    matmulRows(a.data<T>(), ta ? 1 : k, ta ? m : 1, b.data<T>(), m, k, nn, [&](int64_t i, const double* acc) {
      for (int64_t j = 0; j < nn; ++j) {
        double v = alpha * acc[j];
        if (pc) v += beta * static_cast<double>(pc[i * cStrides[0] + j * cStrides[1]]);
        y[i * nn + j] = static_cast<T>(v);
      }
    });
    return Status::ok();
  });
}

CAGR_REF_KERNEL(Einsum) {
  CAGR_ASSIGN_OR_RETURN(EinsumSpec spec, parseEinsum(stringAttr(n, "equation"), in.size()));
  if (in.size() > kMaxEinsumOperands) return unsupported("einsum with more than 8 operands");
  for (const Tensor* t : in) CAGR_RETURN_IF_ERROR(requireSameType(*in[0], *t, "einsum operands"));
  CAGR_ASSIGN_OR_RETURN(EinsumLoops loops, einsumLoops(spec, in));
  // Walk the whole index space; stride slot 0 is the output, 1.. the inputs.
  std::array<std::vector<int64_t>, kMaxEinsumOperands + 1> strides;
  strides.fill(std::vector<int64_t>(loops.letters.size(), 0));
  strides[0] = einsumStrides(spec.output, out[0].shape(), loops.letters);
  for (size_t i = 0; i < in.size(); ++i) strides[i + 1] = einsumStrides(spec.inputs[i], in[i]->shape(), loops.letters);
  std::vector<double> acc(static_cast<size_t>(out[0].numel()), 0.0);
  Status st = visitFloat(in[0]->dtype(), [&](auto tag) -> Status {
    using T = decltype(tag);
    std::array<const T*, kMaxEinsumOperands> ptr{};
    for (size_t i = 0; i < in.size(); ++i) ptr[i] = in[i]->data<T>();
    size_t numIn = in.size();
    forEachStrided<kMaxEinsumOperands + 1>(loops.sizes, strides, {}, [&](int64_t, const auto& off) {
      double p = 1.0;
      for (size_t i = 0; i < numIn; ++i) p *= static_cast<double>(ptr[i][off[i + 1]]);
      acc[static_cast<size_t>(off[0])] += p;
    });
    return Status::ok();
  });
  CAGR_RETURN_IF_ERROR(st);
  for (size_t i = 0; i < acc.size(); ++i) out[0].setF64(static_cast<int64_t>(i), acc[i]);
  return Status::ok();
}

CAGR_REF_KERNEL(Conv1x1) {
  const Tensor& x = *in[0];
  const Tensor& w = *in[1];
  const Tensor* bias = in.size() > 2 ? in[2] : nullptr;
  CAGR_RETURN_IF_ERROR(requireSameType(x, w, "conv1x1 x and w"));
  if (bias != nullptr) CAGR_RETURN_IF_ERROR(requireSameType(x, *bias, "conv1x1 x and bias"));
  int64_t batch = x.dim(0), cin = x.dim(1), len = x.dim(2), cout = w.dim(0);
  return visitFloat(x.dtype(), [&](auto tag) -> Status {
    using T = decltype(tag);
    for (int64_t b = 0; b < batch; ++b) {
      T* y = out[0].data<T>() + b * cout * len;
      matmulRows(w.data<T>(), cin, 1, x.data<T>() + b * cin * len, cout, cin, len, [&](int64_t o, const double* acc) {
        double bo = bias ? static_cast<double>(bias->data<T>()[o]) : 0.0;
        for (int64_t l = 0; l < len; ++l) y[o * len + l] = static_cast<T>(acc[l] + bo);
      });
    }
    return Status::ok();
  });
}

CAGR_REF_KERNEL(SpMM) {
  const Tensor& rowPtr = *in[0];
  const Tensor& colIdx = *in[1];
  const Tensor& vals = *in[2];
  const Tensor& dense = *in[3];
  CAGR_RETURN_IF_ERROR(requireIndexType(rowPtr, "row_ptr"));
  CAGR_RETURN_IF_ERROR(requireIndexType(colIdx, "col_idx"));
  CAGR_RETURN_IF_ERROR(requireSameType(vals, dense, "spmm values and dense operand"));
  int64_t rows = rowPtr.numel() - 1, nnz = colIdx.numel(), cols = dense.dim(0), kk = dense.dim(1);
  for (int64_t r = 0; r <= rows; ++r) {
    int64_t p = rowPtr.getI64(r), prev = r > 0 ? rowPtr.getI64(r - 1) : 0;
    if (p < prev || p > nnz) {
      return invalidArgument("row_ptr[" + std::to_string(r) + "] = " + std::to_string(p) +
                             " must be non-decreasing, >= 0 and <= nnz = " + std::to_string(nnz));
    }
  }
  for (int64_t p = 0; p < nnz; ++p) {
    int64_t c = colIdx.getI64(p);
    if (c < 0 || c >= cols) {
      return invalidArgument("col_idx[" + std::to_string(p) + "] = " + std::to_string(c) + " is out of range [0, " +
                             std::to_string(cols) + ")");
    }
  }
  return visitFloat(dense.dtype(), [&](auto tag) -> Status {
    using T = decltype(tag);
    std::vector<double> acc(static_cast<size_t>(kk));
    for (int64_t r = 0; r < rows; ++r) {
      std::fill(acc.begin(), acc.end(), 0.0);
      for (int64_t p = rowPtr.getI64(r); p < rowPtr.getI64(r + 1); ++p) {
        double v = static_cast<double>(vals.data<T>()[p]);
        const T* drow = dense.data<T>() + colIdx.getI64(p) * kk;
        for (int64_t j = 0; j < kk; ++j) acc[static_cast<size_t>(j)] += v * static_cast<double>(drow[j]);
      }
      T* y = out[0].data<T>() + r * kk;
      for (int64_t j = 0; j < kk; ++j) y[j] = static_cast<T>(acc[static_cast<size_t>(j)]);
    }
    return Status::ok();
  });
}

}  // namespace cagr::ref
