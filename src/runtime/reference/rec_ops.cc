// Reference kernels of the recommendation ops: EmbeddingBag (fixed pooling
// and offsets forms, sum/mean/max, per-sample weights), DLRM Interaction, FM
// and one CIN layer, written straight from their ops.def definitions.
#include <limits>

#include "ir/op_table.h"
#include "runtime/reference/kernel_util.h"
#include "runtime/reference/kernels.h"

namespace cagr::ref {
namespace {

// Bag b covers indices [bounds[b], bounds[b+1]). Offsets follow PyTorch:
// non-decreasing and within [0, L]; offsets[0] need not be 0 (ids before it
// belong to no bag) and with include_last_offset ids after the last are unused.
StatusOr<std::vector<int64_t>> bagBounds(const Node& n, const Tensor& idx, const Tensor* offsets, int64_t bags) {
  std::vector<int64_t> bounds(static_cast<size_t>(bags) + 1);
  if (offsets == nullptr) {
    int64_t pooling = idx.rank() == 2 ? idx.dim(1) : 1;
    for (int64_t b = 0; b <= bags; ++b) bounds[static_cast<size_t>(b)] = b * pooling;
    return bounds;
  }
  CAGR_RETURN_IF_ERROR(requireIndexType(*offsets, "offsets"));
  bool includeLast = intAttr(n, "include_last_offset") != 0;
  int64_t count = offsets->numel(), len = idx.numel();
  if (count != bags + (includeLast ? 1 : 0)) {
    return invalidArgument("offsets has " + std::to_string(count) + " entries for " + std::to_string(bags) + " bags");
  }
  for (int64_t i = 0; i < count; ++i) {
    int64_t v = offsets->getI64(i);
    int64_t prev = i > 0 ? bounds[static_cast<size_t>(i - 1)] : 0;
    if (v < prev || v > len) {
      return invalidArgument("offsets[" + std::to_string(i) + "] = " + std::to_string(v) +
                             ": offsets must be non-decreasing and within [0, " + std::to_string(len) +
                             "] (the number of indices)");
    }
    bounds[static_cast<size_t>(i)] = v;
  }
  if (!includeLast) bounds[static_cast<size_t>(bags)] = len;
  return bounds;
}

// Pools table rows into out row by row: sum (optionally weighted), mean, max.
template <typename T>
Status poolBags(const Tensor& table, const Tensor& idx, const Tensor* weights, const std::vector<int64_t>& bounds,
                const std::string& mode, Tensor& out) {
  int64_t rows = table.dim(0), dim = table.dim(1);
  bool isMax = mode == "max";
  std::vector<double> acc(static_cast<size_t>(dim));
  for (size_t b = 0; b + 1 < bounds.size(); ++b) {
    std::fill(acc.begin(), acc.end(), isMax ? -std::numeric_limits<double>::infinity() : 0.0);
    for (int64_t p = bounds[b]; p < bounds[b + 1]; ++p) {
      int64_t id = idx.getI64(p);
      if (id < 0 || id >= rows) {
        return invalidArgument("indices[" + std::to_string(p) + "] = " + std::to_string(id) + " (bag " +
                               std::to_string(b) + ") is out of range [0, " + std::to_string(rows - 1) +
                               "] for a table of " + std::to_string(rows) + " rows");
      }
      const T* row = table.data<T>() + id * dim;
      double w = weights ? weights->getF64(p) : 1.0;
      for (size_t d = 0; d < acc.size(); ++d) {
        double v = static_cast<double>(row[d]);
        acc[d] = isMax ? std::max(acc[d], v) : acc[d] + w * v;
      }
    }
    int64_t count = bounds[b + 1] - bounds[b];
    double scale = mode == "mean" && count > 0 ? 1.0 / static_cast<double>(count) : 1.0;
    T* y = out.data<T>() + static_cast<int64_t>(b) * dim;
    for (size_t d = 0; d < acc.size(); ++d) y[d] = count == 0 ? T{0} : static_cast<T>(acc[d] * scale);
  }
  return Status::ok();
}

double dot(const float* a, const float* b, int64_t d) {
  double s = 0;
  for (int64_t i = 0; i < d; ++i) s += static_cast<double>(a[i]) * static_cast<double>(b[i]);
  return s;
}

double dot(const double* a, const double* b, int64_t d) {
  double s = 0;
  for (int64_t i = 0; i < d; ++i) s += a[i] * b[i];
  return s;
}

}  // namespace

CAGR_REF_KERNEL(EmbeddingBag) {
  const Tensor& table = *in[0];
  const Tensor& idx = *in[1];
  const Tensor* offsets = in.size() > 2 ? in[2] : nullptr;
  const Tensor* weights = in.size() > 3 ? in[3] : nullptr;
  CAGR_RETURN_IF_ERROR(requireIndexType(idx, "indices"));
  std::string mode = stringAttr(n, "mode");
  if (mode != "sum" && mode != "mean" && mode != "max") return invalidArgument("mode must be sum, mean or max");
  if (weights != nullptr && mode != "sum") return invalidArgument("per-sample weights need mode sum");
  if (weights != nullptr && weights->shape() != idx.shape()) {
    return invalidArgument("per-sample weights " + shapeString(weights->shape()) + " must match indices " +
                           shapeString(idx.shape()));
  }
  CAGR_ASSIGN_OR_RETURN(auto bounds, bagBounds(n, idx, offsets, out[0].dim(0)));
  return visitFloat(table.dtype(), [&](auto tag) -> Status {
    return poolBags<decltype(tag)>(table, idx, weights, bounds, mode, out[0]);
  });
}

// Table-batched bags: each table pools the ids of its slot into its column
// block, through the same bagBounds / poolBags as EmbeddingBag.
CAGR_REF_KERNEL(EmbeddingBags) {
  size_t tables = static_cast<size_t>(intAttr(n, "num_tables"));
  const Tensor& idx = *in[tables];
  const Tensor* offsets = in.size() > tables + 1 ? in[tables + 1] : nullptr;
  CAGR_RETURN_IF_ERROR(requireIndexType(idx, "indices"));
  std::string mode = stringAttr(n, "mode");
  std::vector<int64_t> slots = intsAttr(n, "slots");
  int64_t bags = out[0].dim(0), width = out[0].dim(1);
  int64_t col = 0;
  for (size_t t = 0; t < tables; ++t) {
    int64_t slot = slots.empty() ? static_cast<int64_t>(t) : slots[t];
    // The slot's ids (and offsets) as the EmbeddingBag kernel expects them.
    Tensor ids, off;
    if (offsets != nullptr) {
      int64_t len = idx.dim(1), count = offsets->dim(1);
      ids = Tensor(DType::kI64, {len});
      off = Tensor(DType::kI64, {count});
      for (int64_t i = 0; i < len; ++i) ids.data<int64_t>()[i] = idx.getI64(slot * len + i);
      for (int64_t i = 0; i < count; ++i) off.data<int64_t>()[i] = offsets->getI64(slot * count + i);
    } else {
      int64_t numSlots = idx.dim(1), pooling = idx.rank() == 3 ? idx.dim(2) : 1;
      ids = Tensor(DType::kI64, {bags, pooling});
      for (int64_t b = 0; b < bags; ++b) {
        for (int64_t p = 0; p < pooling; ++p) {
          ids.data<int64_t>()[b * pooling + p] = idx.getI64((b * numSlots + slot) * pooling + p);
        }
      }
    }
    const Tensor& table = *in[t];
    int64_t dim = table.dim(1);
    Tensor pooled(table.dtype(), {bags, dim});
    auto bounds = bagBounds(n, ids, offsets != nullptr ? &off : nullptr, bags);
    if (!bounds.isOk()) return bounds.status().withContext("slot " + std::to_string(slot));
    Status st = visitFloat(table.dtype(), [&](auto tag) -> Status {
      using T = decltype(tag);
      CAGR_RETURN_IF_ERROR(poolBags<T>(table, ids, nullptr, *bounds, mode, pooled));
      for (int64_t b = 0; b < bags; ++b) {
        std::copy_n(pooled.data<T>() + b * dim, dim, out[0].data<T>() + b * width + col);
      }
      return Status::ok();
    });
    CAGR_RETURN_IF_ERROR(st.withContext("table " + std::to_string(t)));
    col += dim;
  }
  return Status::ok();
}

CAGR_REF_KERNEL(Interaction) {
  const Tensor& x = *in[0];
  int64_t batch = x.dim(0), fields = x.dim(1), dim = x.dim(2);
  bool self = intAttr(n, "self_interaction") != 0;
  return visitFloat(x.dtype(), [&](auto tag) -> Status {
    using T = decltype(tag);
    T* y = out[0].data<T>();
    for (int64_t b = 0; b < batch; ++b) {
      const T* xb = x.data<T>() + b * fields * dim;
      // DLRM order: i ascending, then j ascending over j < i (j <= i with self).
      for (int64_t i = 0; i < fields; ++i) {
        for (int64_t j = 0; j < (self ? i + 1 : i); ++j) *y++ = static_cast<T>(dot(xb + i * dim, xb + j * dim, dim));
      }
    }
    return Status::ok();
  });
}

CAGR_REF_KERNEL(FM) {
  const Tensor& x = *in[0];
  int64_t batch = x.dim(0), fields = x.dim(1), dim = x.dim(2);
  bool reduceD = intAttr(n, "reduce") != 0;
  return visitFloat(x.dtype(), [&](auto tag) -> Status {
    using T = decltype(tag);
    T* y = out[0].data<T>();
    for (int64_t b = 0; b < batch; ++b) {
      const T* xb = x.data<T>() + b * fields * dim;
      double total = 0;
      for (int64_t d = 0; d < dim; ++d) {
        double sum = 0, sumSq = 0;
        for (int64_t f = 0; f < fields; ++f) {
          double v = static_cast<double>(xb[f * dim + d]);
          sum += v;
          sumSq += v * v;
        }
        double term = 0.5 * (sum * sum - sumSq);
        total += term;
        if (!reduceD) y[b * dim + d] = static_cast<T>(term);
      }
      if (reduceD) y[b] = static_cast<T>(total);
    }
    return Status::ok();
  });
}

CAGR_REF_KERNEL(CIN) {
  const Tensor& xk = *in[0];
  const Tensor& x0 = *in[1];
  const Tensor& w = *in[2];
  const Tensor* bias = in.size() > 3 ? in[3] : nullptr;
  CAGR_RETURN_IF_ERROR(requireSameType(xk, x0, "cin xk and x0"));
  CAGR_RETURN_IF_ERROR(requireSameType(xk, w, "cin xk and w"));
  int64_t batch = xk.dim(0), h = xk.dim(1), f = x0.dim(1), dim = xk.dim(2), outCh = w.dim(0);
  return visitFloat(xk.dtype(), [&](auto tag) -> Status {
    using T = decltype(tag);
    // Per sample: z[h*F + f, d] = xk[h, d] * x0[f, d] (exact in double), then out = w z + bias.
    std::vector<double> z(static_cast<size_t>(h * f * dim));
    for (int64_t b = 0; b < batch; ++b) {
      const T* pk = xk.data<T>() + b * h * dim;
      const T* p0 = x0.data<T>() + b * f * dim;
      for (int64_t i = 0; i < h; ++i) {
        for (int64_t j = 0; j < f; ++j) {
          for (int64_t d = 0; d < dim; ++d) {
            z[static_cast<size_t>((i * f + j) * dim + d)] =
                static_cast<double>(pk[i * dim + d]) * static_cast<double>(p0[j * dim + d]);
          }
        }
      }
      T* y = out[0].data<T>() + b * outCh * dim;
      matmulRows(w.data<T>(), h * f, 1, z.data(), outCh, h * f, dim, [&](int64_t o, const double* acc) {
        double bo = bias ? bias->getF64(o) : 0.0;
        for (int64_t d = 0; d < dim; ++d) y[o * dim + d] = static_cast<T>(acc[d] + bo);
      });
    }
    return Status::ok();
  });
}

}  // namespace cagr::ref
