// Reference kernels of the reductions (Sum/Mean/Max over static axes) and the
// normalisations (BatchNorm, LayerNorm, Softmax); all accumulate in double.
#include <cmath>
#include <limits>

#include "ir/dims.h"
#include "ir/op_table.h"
#include "ir/shape_util.h"
#include "runtime/reference/kernel_util.h"
#include "runtime/reference/kernels.h"

namespace cagr::ref {
namespace {

enum class ReduceKind { kSum, kMean, kMax };

Status reduce(const Node& n, const Tensor& x, Tensor& y, ReduceKind kind) {
  CAGR_ASSIGN_OR_RETURN(auto axes, reduceAxes(intsAttr(n, "axes"), x.rank()));
  std::vector<int64_t> kept = x.shape();
  int64_t count = 1;
  for (int64_t a : axes) {
    count *= kept[static_cast<size_t>(a)];
    kept[static_cast<size_t>(a)] = 1;
  }
  // Each input element lands in the output slot with its reduced axes zeroed
  // (keepdims only changes the output's shape, not its layout).
  std::vector<int64_t> outStrides = contiguousStrides(kept);
  for (int64_t a : axes) outStrides[static_cast<size_t>(a)] = 0;
  double init = kind == ReduceKind::kMax ? -std::numeric_limits<double>::infinity() : 0.0;
  std::vector<double> acc(static_cast<size_t>(y.numel()), init);
  CAGR_RETURN_IF_ERROR(visitNumeric(x.dtype(), [&](auto tag) -> Status {
    using T = decltype(tag);
    const T* p = x.data<T>();
    forEachStrided<1>(x.shape(), {outStrides}, {0}, [&](int64_t i, const std::array<int64_t, 1>& off) {
      double v = static_cast<double>(p[i]);
      double& a = acc[static_cast<size_t>(off[0])];
      if (kind != ReduceKind::kMax) {
        a += v;
      } else if (v > a || v != v) {  // NaN propagates
        a = v;
      }
    });
    return Status::ok();
  }));
  for (size_t i = 0; i < acc.size(); ++i) {
    double v = kind == ReduceKind::kMean ? acc[i] / static_cast<double>(count) : acc[i];
    y.setF64(static_cast<int64_t>(i), v);
  }
  return Status::ok();
}

// A parameter read as doubles and broadcast to `shape` (all `dflt` if absent).
std::vector<double> expandParam(const Tensor* p, const std::vector<int64_t>& shape, double dflt) {
  std::vector<double> v(static_cast<size_t>(product(shape)), dflt);
  if (p == nullptr) return v;
  forEachStrided<1>(
      shape, {broadcastStrides(p->shape(), shape)}, {0},
      [&](int64_t i, const std::array<int64_t, 1>& off) { v[static_cast<size_t>(i)] = p->getF64(off[0]); });
  return v;
}

}  // namespace

CAGR_REF_KERNEL(ReduceSum) { return reduce(n, *in[0], out[0], ReduceKind::kSum); }
CAGR_REF_KERNEL(ReduceMean) { return reduce(n, *in[0], out[0], ReduceKind::kMean); }
CAGR_REF_KERNEL(ReduceMax) { return reduce(n, *in[0], out[0], ReduceKind::kMax); }

CAGR_REF_KERNEL(BatchNorm) {
  const Tensor& x = *in[0];
  int64_t batch = x.dim(0), channels = x.dim(1), inner = product(x.shape(), 2);
  double eps = floatAttr(n, "epsilon");
  std::vector<int64_t> cshape{channels};
  std::vector<double> scale = expandParam(in[1], cshape, 1), bias = expandParam(in[2], cshape, 0);
  std::vector<double> mean = expandParam(in[3], cshape, 0), var = expandParam(in[4], cshape, 1);
  return visitFloat(x.dtype(), [&](auto tag) -> Status {
    using T = decltype(tag);
    const T* px = x.data<T>();
    T* py = out[0].data<T>();
    for (int64_t b = 0; b < batch; ++b) {
      for (size_t c = 0; c < static_cast<size_t>(channels); ++c) {
        double mul = scale[c] / std::sqrt(var[c] + eps);
        int64_t base = (b * channels + static_cast<int64_t>(c)) * inner;
        for (int64_t i = base; i < base + inner; ++i) {
          py[i] = static_cast<T>((static_cast<double>(px[i]) - mean[c]) * mul + bias[c]);
        }
      }
    }
    return Status::ok();
  });
}

CAGR_REF_KERNEL(LayerNorm) {
  const Tensor& x = *in[0];
  auto axis = normAxis(intAttr(n, "axis"), x.rank());
  if (!axis) return invalidArgument("layer_norm axis out of range");
  double eps = floatAttr(n, "epsilon");
  std::vector<int64_t> normShape(x.shape().begin() + *axis, x.shape().end());
  int64_t inner = product(normShape), outer = product(x.shape(), 0, static_cast<size_t>(*axis));
  std::vector<double> scale = expandParam(in[1], normShape, 1);
  std::vector<double> bias = expandParam(in.size() > 2 ? in[2] : nullptr, normShape, 0);
  return visitFloat(x.dtype(), [&](auto tag) -> Status {
    using T = decltype(tag);
    for (int64_t o = 0; o < outer; ++o) {
      const T* px = x.data<T>() + o * inner;
      T* py = out[0].data<T>() + o * inner;
      double mean = 0, var = 0;
      for (int64_t i = 0; i < inner; ++i) mean += static_cast<double>(px[i]);
      mean /= static_cast<double>(inner);
      for (int64_t i = 0; i < inner; ++i) var += (px[i] - mean) * (px[i] - mean);
      double inv = 1.0 / std::sqrt(var / static_cast<double>(inner) + eps);
      for (size_t i = 0; i < static_cast<size_t>(inner); ++i) {
        py[i] = static_cast<T>((static_cast<double>(px[i]) - mean) * inv * scale[i] + bias[i]);
      }
    }
    return Status::ok();
  });
}

CAGR_REF_KERNEL(Softmax) {
  const Tensor& x = *in[0];
  auto axis = normAxis(intAttr(n, "axis"), x.rank());
  if (!axis) return invalidArgument("softmax axis out of range");
  size_t ax = static_cast<size_t>(*axis);
  int64_t outer = product(x.shape(), 0, ax), dim = x.dim(*axis), inner = product(x.shape(), ax + 1);
  return visitFloat(x.dtype(), [&](auto tag) -> Status {
    using T = decltype(tag);
    std::vector<double> e(static_cast<size_t>(dim));
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t i = 0; i < inner; ++i) {
        const T* px = x.data<T>() + o * dim * inner + i;
        T* py = out[0].data<T>() + o * dim * inner + i;
        double mx = -std::numeric_limits<double>::infinity(), sum = 0;
        for (int64_t k = 0; k < dim; ++k) mx = std::max(mx, static_cast<double>(px[k * inner]));
        for (int64_t k = 0; k < dim; ++k) sum += e[static_cast<size_t>(k)] = std::exp(px[k * inner] - mx);
        for (int64_t k = 0; k < dim; ++k) py[k * inner] = static_cast<T>(e[static_cast<size_t>(k)] / sum);
      }
    }
    return Status::ok();
  });
}

}  // namespace cagr::ref
