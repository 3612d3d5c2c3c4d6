// The CPU reduce step: an elementwise prologue fused into ReduceSum / Mean /
// Max, Softmax or LayerNorm. The reduction's input is viewed as
// [outer, reduced, inner]; blocks of outer rows are produced by the prologue
// program into an L2-sized slab (never the whole tensor) and reduced at once,
// blocks spread over threads. Sums accumulate in double like the reference;
// e^x in f32 uses the vectorised fastExp. Reductions over non-adjacent axes
// permute the input first. Preconditions: the group classifies as kReduce.
// GCC keeps float selects (clamps, NaN checks, max) as branches under
// -ftrapping-math and then does not vectorise the loops; CAGR never reads
// floating-point exception flags, so this file's loops drop that guarantee.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("no-trapping-math")
#endif
#include <algorithm>
#include <cmath>
#include <limits>

#include "backends/cpu/eltwise_program.h"
#include "backends/cpu/eltwise_softmax_rows.h"
#include "backends/cpu/eltwise_steps.h"
#include "ir/dims.h"
#include "ir/op_table.h"
#include "ir/shape_util.h"
#include "runtime/reference/kernel_util.h"

namespace cagr::cpu {
namespace {

// Elements of the reduction's input one block covers.
constexpr int64_t kBlockElements = 1 << 14;

enum class Kind { kSum, kMean, kMax, kSoftmax, kLayerNorm };

// The input's flat index as [outer, reduced, inner].
struct Split3 {
  int64_t outer = 1, reduced = 1, inner = 1;
};

// The sum in double of x[0, n): 16 independent partial sums (four AVX2
// vectors of doubles, so the adds do not wait on one another; one chain
// ran at about an element a cycle), then the tail.
template <typename T>
[[gnu::always_inline]] inline double sumRun(const T* x, int64_t n) {
  constexpr int kLanes = 16;
  double part[kLanes] = {};
  int64_t k = 0;
  for (; k + kLanes <= n; k += kLanes) {
    for (int j = 0; j < kLanes; ++j) part[j] += static_cast<double>(x[k + j]);
  }
  double s = 0;
  for (; k < n; ++k) s += static_cast<double>(x[k]);
  for (int j = 0; j < kLanes; ++j) s += part[j];
  return s;
}

// The sum in double of the f32 products a[k] * b[k] (each rounded to f32
// as the unfused Mul stores it), in 16 partial sums like sumRun.
[[gnu::always_inline]] inline double dotRun(const float* a, const float* b, int64_t n) {
  constexpr int kLanes = 16;
  double part[kLanes] = {};
  int64_t k = 0;
  for (; k + kLanes <= n; k += kLanes) {
    for (int j = 0; j < kLanes; ++j) part[j] += static_cast<double>(a[k + j] * b[k + j]);
  }
  double s = 0;
  for (; k < n; ++k) s += static_cast<double>(a[k] * b[k]);
  for (int j = 0; j < kLanes; ++j) s += part[j];
  return s;
}

// Rows [o0, o1) of a Sum / Mean over the last axis of the product a * b
// ([rows, K] each): NGCF's mul+reduce_sum scores, read straight from the
// operands instead of through a slab of products.
CAGR_CPU_CLONES void dotRows(const float* a, const float* b, int64_t o0, int64_t o1, int64_t K, double count,
                             bool mean, float* y) {
  for (int64_t o = o0; o < o1; ++o) {
    double s = dotRun(a + o * K, b + o * K, K);
    y[o] = static_cast<float>(mean ? s / count : s);
  }
}

template <typename T>
double maxRun(const T* x, int64_t n) {
  double m = -std::numeric_limits<double>::infinity();
  for (int64_t k = 0; k < n; ++k) {
    double v = static_cast<double>(x[k]);
    if (v > m || v != v) m = v;  // NaN propagates
  }
  return m;
}

// Sum / Mean / Max of rows [0, rows) of x [rows, K, I] into y [rows, I].
template <typename T>
CAGR_CPU_CLONES void reduceRows(Kind kind, const T* x, int64_t rows, Split3 s, double count, T* y) {
  auto finish = [&](double a) { return static_cast<T>(kind == Kind::kMean ? a / count : a); };
  int64_t K = s.reduced, I = s.inner;
  std::vector<double> acc(static_cast<size_t>(I));
  for (int64_t o = 0; o < rows; ++o) {
    const T* xo = x + o * K * I;
    if (I == 1) {
      y[o] = finish(kind == Kind::kMax ? maxRun(xo, K) : sumRun(xo, K));
      continue;
    }
    std::fill(acc.begin(), acc.end(), kind == Kind::kMax ? -std::numeric_limits<double>::infinity() : 0.0);
    for (int64_t k = 0; k < K; ++k) {
      const T* row = xo + k * I;
      if (kind == Kind::kMax) {
        for (int64_t i = 0; i < I; ++i) {
          double v = static_cast<double>(row[i]);
          if (v > acc[static_cast<size_t>(i)] || v != v) acc[static_cast<size_t>(i)] = v;
        }
      } else {
        for (int64_t i = 0; i < I; ++i) acc[static_cast<size_t>(i)] += static_cast<double>(row[i]);
      }
    }
    for (int64_t i = 0; i < I; ++i) y[o * I + i] = finish(acc[static_cast<size_t>(i)]);
  }
}

// max over x[0, n) as std::max folds it, in 8 independent lanes so short
// rows vectorise too (a NaN makes the softmax row NaN whichever lane sees it).
template <typename T>
[[gnu::always_inline]] inline T rowMax(const T* x, int64_t n) {
  constexpr int kLanes = 8;
  T m[kLanes];
  std::fill_n(m, kLanes, -std::numeric_limits<T>::infinity());
  int64_t k = 0;
  for (; k + kLanes <= n; k += kLanes) {
    for (int j = 0; j < kLanes; ++j) m[j] = m[j] < x[k + j] ? x[k + j] : m[j];
  }
  for (; k < n; ++k) m[0] = m[0] < x[k] ? x[k] : m[0];
  for (int j = 1; j < kLanes; ++j) m[0] = m[0] < m[j] ? m[j] : m[0];
  return m[0];
}

template <typename T>
T expOf(T x) {
  if constexpr (std::is_same_v<T, float>) {
    return fastExp(x);
  } else {
    return std::exp(x);
  }
}

// Softmax over K of rows [0, rows) of x [rows, K, I]. For I == 1 (the last
// axis) in f32 the AVX2 rows (eltwise_softmax_rows.h) where the host has
// them; else the shifted block is exponentiated in one long loop, so short
// rows still vectorise; otherwise each line along K is gathered first.
template <typename T>
CAGR_CPU_CLONES void softmaxRows(const T* x, int64_t rows, Split3 s, T* y) {
  int64_t K = s.reduced, I = s.inner;
  if constexpr (std::is_same_v<T, float>) {
    if (I == 1 && softmaxRowsAvx2(x, rows, K, y)) return;
  }
  if (I == 1) {
    for (int64_t o = 0; o < rows; ++o) {
      const T* xo = x + o * K;
      T mx = rowMax(xo, K);
      for (int64_t k = 0; k < K; ++k) y[o * K + k] = xo[k] - mx;
    }
    for (int64_t i = 0; i < rows * K; ++i) y[i] = expOf(y[i]);
    for (int64_t o = 0; o < rows; ++o) {
      T inv = static_cast<T>(1.0 / sumRun(y + o * K, K));
      for (int64_t k = 0; k < K; ++k) y[o * K + k] *= inv;
    }
    return;
  }
  std::vector<T> line(static_cast<size_t>(K));
  for (int64_t o = 0; o < rows; ++o) {
    for (int64_t i = 0; i < I; ++i) {
      T* yo = y + o * K * I + i;
      T mx = -std::numeric_limits<T>::infinity();
      for (int64_t k = 0; k < K; ++k) mx = std::max(mx, x[o * K * I + k * I + i]);
      for (int64_t k = 0; k < K; ++k) line[static_cast<size_t>(k)] = expOf(x[o * K * I + k * I + i] - mx);
      T inv = static_cast<T>(1.0 / sumRun(line.data(), K));
      for (int64_t k = 0; k < K; ++k) yo[k * I] = line[static_cast<size_t>(k)] * inv;
    }
  }
}

template <typename T>
CAGR_CPU_CLONES void layerNormRows(const T* x, int64_t rows, int64_t K, const double* scale, const double* bias,
                                   double eps, T* y) {
  for (int64_t o = 0; o < rows; ++o) {
    const T* xo = x + o * K;
    T* yo = y + o * K;
    double mean = sumRun(xo, K) / static_cast<double>(K), var = 0;
#pragma omp simd reduction(+ : var)
    for (int64_t k = 0; k < K; ++k) var += (xo[k] - mean) * (xo[k] - mean);
    double inv = 1.0 / std::sqrt(var / static_cast<double>(K) + eps);
    for (int64_t k = 0; k < K; ++k)
      yo[k] = static_cast<T>((static_cast<double>(xo[k]) - mean) * inv * scale[k] + bias[k]);
  }
}

template <typename F>
void visitReduceType(DType t, F&& f) {
  switch (t) {
    case DType::kF64:
      return f(double{});
    case DType::kI64:
      return f(int64_t{});
    case DType::kI32:
      return f(int32_t{});
    default:
      return f(float{});
  }
}

class ReduceStep : public Step {
 public:
  std::string kernelName() const override { return name_; }
  std::vector<ValueId> writes() const override { return outputs_; }
  Status run(const RunContext& ctx) const override;

  Status init(const StepRequest& r);

 private:
  struct Plan {
    Split3 split;
    std::vector<int64_t> perm;  // non-empty: reduced axes are not adjacent; read x permuted
    std::vector<double> scale, bias;
  };
  Plan plan(const EltwiseProgram::Frame& f) const;
  StatusOr<const std::byte*> inputRows(const EltwiseProgram::Frame& f, int64_t i0, int64_t i1,
                                       EltwiseProgram::Scratch& s, std::byte* slab) const;
  void reduceBlock(const Plan& p, const std::byte* x, int64_t o0, int64_t rows, std::byte* y) const;
  Status runPermuted(const RunContext& ctx, const EltwiseProgram::Frame& f, const Plan& p) const;
  int64_t work(const EltwiseProgram::Frame& f) const;

  std::unique_ptr<EltwiseProgram> prog_;
  Kind kind_ = Kind::kSum;
  ValueId x_ = kNoValue, y_ = kNoValue, scale_ = kNoValue, bias_ = kNoValue;
  std::vector<int64_t> axes_;  // reductions: normalised, sorted
  int64_t axis_ = 0;           // Softmax / LayerNorm
  double eps_ = 0;
  DType dtype_ = DType::kF32, scaleType_ = DType::kF32, biasType_ = DType::kF32;
  Precision storage_ = Precision::kF32;
  std::vector<ValueId> outputs_;
  std::string name_;
};

StatusOr<Kind> kindOf(OpKind op) {
  switch (op) {
    case OpKind::kReduceSum:
      return Kind::kSum;
    case OpKind::kReduceMean:
      return Kind::kMean;
    case OpKind::kReduceMax:
      return Kind::kMax;
    case OpKind::kSoftmax:
      return Kind::kSoftmax;
    case OpKind::kLayerNorm:
      return Kind::kLayerNorm;
    default:
      return unsupported(std::string(opInfo(op).name) + " is not a reduction");
  }
}

// Every prologue member must feed the reduction: the blocks cover the
// reduction input's index space only.
bool allFeed(const Graph& g, const std::vector<NodeId>& members) {
  std::vector<ValueId> needed = g.node(members.back()).inputs;
  for (size_t i = members.size() - 1; i-- > 0;) {
    const Node& n = g.node(members[i]);
    if (std::find(needed.begin(), needed.end(), n.outputs[0]) == needed.end()) return false;
    needed.insert(needed.end(), n.inputs.begin(), n.inputs.end());
  }
  return true;
}

Status ReduceStep::init(const StepRequest& r) {
  const Node& red = r.g.node(r.members.back());
  CAGR_ASSIGN_OR_RETURN(kind_, kindOf(red.op));
  CAGR_RETURN_IF_ERROR(checkStorableOutputs(r.g, red));
  x_ = red.inputs[0];
  y_ = red.outputs[0];
  dtype_ = r.g.type(x_).dtype;
  storage_ = r.g.value(y_).mir.storage;
  bool floating = dtype_ == DType::kF32 || dtype_ == DType::kF64;
  bool numeric = floating || dtype_ == DType::kI64 || dtype_ == DType::kI32;
  if (!(kind_ == Kind::kSoftmax || kind_ == Kind::kLayerNorm ? floating : numeric) || r.g.type(y_).dtype != dtype_) {
    return unsupported(std::string(opInfo(red.op).name) + " on " + dtypeName(dtype_));
  }
  if (std::find(r.outputs.begin(), r.outputs.end(), y_) == r.outputs.end()) return unsupported("unused result");
  if (!allFeed(r.g, r.members)) return unsupported("a prologue member does not feed the reduction");
  int64_t rank = r.g.type(x_).rank();
  if (kind_ == Kind::kSoftmax || kind_ == Kind::kLayerNorm) {
    auto ax = normAxis(intAttr(red, "axis"), rank);
    if (!ax) return unsupported("axis out of range");
    axis_ = *ax;
  } else {
    CAGR_ASSIGN_OR_RETURN(axes_, reduceAxes(intsAttr(red, "axes"), rank));
  }
  std::vector<ValueId> leaves{x_};
  if (kind_ == Kind::kLayerNorm) {
    eps_ = floatAttr(red, "epsilon");
    scale_ = red.inputs[1];
    bias_ = red.inputs.size() > 2 ? red.inputs[2] : kNoValue;
    scaleType_ = r.g.type(scale_).dtype;
    if (bias_ != kNoValue) biasType_ = r.g.type(bias_).dtype;
    for (ValueId v : {scale_, bias_}) {
      if (v == kNoValue) continue;
      if (r.g.value(v).producer >= 0 &&
          std::find(r.members.begin(), r.members.end(), r.g.value(v).producer) != r.members.end()) {
        return unsupported("layer_norm parameters computed in the group");
      }
      leaves.push_back(v);
    }
  }
  outputs_ = r.outputs;
  std::vector<ValueId> sinks;
  for (ValueId v : r.outputs) {
    if (v != y_) sinks.push_back(v);
  }
  std::vector<NodeId> prologue(r.members.begin(), r.members.end() - 1);
  CAGR_ASSIGN_OR_RETURN(prog_, EltwiseProgram::build(r.g, prologue, sinks, leaves));
  name_ = "own.reduce:" + prog_->opNames() + (prologue.empty() ? "" : "+") + opInfo(red.op).mnemonic;
  return Status::ok();
}

ReduceStep::Plan ReduceStep::plan(const EltwiseProgram::Frame& f) const {
  const std::vector<int64_t>& xs = prog_->shapeOf(f, x_);
  Plan p;
  size_t rank = xs.size();
  if (kind_ == Kind::kSoftmax || kind_ == Kind::kLayerNorm) {
    size_t a = static_cast<size_t>(axis_);
    p.split = {ref::product(xs, 0, a), kind_ == Kind::kSoftmax ? xs[a] : ref::product(xs, a),
               kind_ == Kind::kSoftmax ? ref::product(xs, a + 1) : 1};
  } else {
    // Size-1 dims aside, adjacent reduced axes make [kept..., reduced..., kept...];
    // otherwise read the input permuted to [kept..., reduced...].
    int state = 0;  // 0: before the reduced axes, 1: in them, 2: after them
    int64_t kept = 1;
    bool adjacent = true;
    std::vector<int64_t> keptAxes, reducedAxes;
    for (size_t d = 0; d < rank; ++d) {
      bool r = std::binary_search(axes_.begin(), axes_.end(), static_cast<int64_t>(d));
      (r ? reducedAxes : keptAxes).push_back(static_cast<int64_t>(d));
      if (r) p.split.reduced *= xs[d];
      if (xs[d] == 1) continue;
      if (r) {
        adjacent = adjacent && state != 2;
        state = 1;
      } else {
        kept *= xs[d];
        (state == 0 ? p.split.outer : p.split.inner) *= xs[d];
        if (state == 1) state = 2;
      }
    }
    if (!adjacent) {
      p.perm = keptAxes;
      p.perm.insert(p.perm.end(), reducedAxes.begin(), reducedAxes.end());
      p.split.outer = kept;
      p.split.inner = 1;
    }
  }
  if (kind_ == Kind::kLayerNorm) {
    std::vector<int64_t> normShape(xs.begin() + axis_, xs.end());
    const std::vector<int64_t>& ss = prog_->shapeOf(f, scale_);
    p.scale = broadcastToDoubles(prog_->dataOf(f, scale_), scaleType_, ss, normShape);
    p.bias.assign(static_cast<size_t>(ref::product(normShape)), 0.0);
    if (bias_ != kNoValue) {
      p.bias = broadcastToDoubles(prog_->dataOf(f, bias_), biasType_, prog_->shapeOf(f, bias_), normShape);
    }
  }
  return p;
}

StatusOr<const std::byte*> ReduceStep::inputRows(const EltwiseProgram::Frame& f, int64_t i0, int64_t i1,
                                                 EltwiseProgram::Scratch& s, std::byte* slab) const {
  const std::byte* home = prog_->dataOf(f, x_);
  if (home == nullptr) {
    CAGR_RETURN_IF_ERROR(prog_->evalRange(f, i0, i1, s, x_, slab));
    return static_cast<const std::byte*>(slab);
  }
  if (prog_->computesInRange(f)) CAGR_RETURN_IF_ERROR(prog_->evalRange(f, i0, i1, s));
  return home + static_cast<size_t>(i0) * dtypeSize(dtype_);
}

void ReduceStep::reduceBlock(const Plan& p, const std::byte* x, int64_t o0, int64_t rows, std::byte* y) const {
  const Split3& s = p.split;
  visitReduceType(dtype_, [&](auto tag) {
    using T = decltype(tag);
    const T* px = reinterpret_cast<const T*>(x);
    T* py = reinterpret_cast<T*>(y);
    if constexpr (std::is_floating_point_v<T>) {
      if (kind_ == Kind::kSoftmax) return softmaxRows(px, rows, s, py + o0 * s.reduced * s.inner);
      if (kind_ == Kind::kLayerNorm) {
        return layerNormRows(px, rows, s.reduced, p.scale.data(), p.bias.data(), eps_, py + o0 * s.reduced);
      }
    }
    reduceRows(kind_, px, rows, s, static_cast<double>(s.reduced), py + o0 * s.inner);
  });
}

Status ReduceStep::runPermuted(const RunContext& ctx, const EltwiseProgram::Frame& f, const Plan& p) const {
  int64_t total = prog_->spaceSize(f);
  size_t es = dtypeSize(dtype_);
  std::vector<uint64_t> whole(static_cast<size_t>(total) * es / 8 + 1), moved(whole.size());
  EltwiseProgram::Scratch s = prog_->makeScratch(f);
  CAGR_ASSIGN_OR_RETURN(const std::byte* x, inputRows(f, 0, total, s, reinterpret_cast<std::byte*>(whole.data())));
  const std::vector<int64_t>& xs = prog_->shapeOf(f, x_);
  std::vector<int64_t> own = ref::contiguousStrides(xs), shape, strides;
  for (int64_t d : p.perm) {
    shape.push_back(xs[static_cast<size_t>(d)]);
    strides.push_back(own[static_cast<size_t>(d)]);
  }
  auto* dst = reinterpret_cast<std::byte*>(moved.data());
  copyStridedAll(x, es, coalesce(shape, strides), total, dst, ctx.threads());
  Plan flat = p;
  flat.split = {p.split.outer, p.split.reduced, 1};
  reduceBlock(flat, dst, 0, flat.split.outer, ctx.buffer(y_).data);
  return Status::ok();
}

// Element operations of one run: the prologue's passes plus the reduction's
// (Softmax and LayerNorm make several passes and evaluate e^x or sqrt).
int64_t ReduceStep::work(const EltwiseProgram::Frame& f) const {
  int64_t passes =
      std::count(f.full.begin(), f.full.end(), 1) + (kind_ == Kind::kSoftmax || kind_ == Kind::kLayerNorm ? 8 : 1);
  return prog_->spaceSize(f) * passes;
}

Status ReduceStep::run(const RunContext& ctx) const {
  CAGR_ASSIGN_OR_RETURN(std::unique_ptr<EltwiseProgram::Frame> f, prog_->prepare(ctx, x_));
  Plan p = plan(*f);
  const Buffer& y = ctx.buffer(y_);
  const float *a = nullptr, *b = nullptr;
  if (!p.perm.empty()) {
    CAGR_RETURN_IF_ERROR(runPermuted(ctx, *f, p));
  } else if ((kind_ == Kind::kSum || kind_ == Kind::kMean) && p.split.inner == 1 && dtype_ == DType::kF32 &&
             y.numel() > 0 && prog_->productOfStored(*f, x_, a, b)) {
    const int64_t K = p.split.reduced;
    float* out = y.as<float>();
    CAGR_RETURN_IF_ERROR(
        parallelChunks(p.split.outer, threadsFor(work(*f), ctx.threads()), [&](int64_t lo, int64_t hi) -> Status {
          dotRows(a, b, lo, hi, K, static_cast<double>(K), kind_ == Kind::kMean, out);
          return Status::ok();
        }));
  } else if (y.numel() > 0) {  // an empty reduced axis still writes sums of nothing
    int64_t row = p.split.reduced * p.split.inner;
    int64_t rows = std::max<int64_t>(1, kBlockElements / std::max<int64_t>(row, 1));
    size_t es = dtypeSize(dtype_);
    CAGR_RETURN_IF_ERROR(
        parallelChunks(p.split.outer, threadsFor(work(*f), ctx.threads()), [&](int64_t lo, int64_t hi) -> Status {
          EltwiseProgram::Scratch s = prog_->makeScratch(*f);
          std::vector<uint64_t> slab(static_cast<size_t>(rows * row) * es / 8 + 1);
          for (int64_t o0 = lo; o0 < hi; o0 += rows) {
            int64_t n = std::min(rows, hi - o0);
            CAGR_ASSIGN_OR_RETURN(const std::byte* x, inputRows(*f, o0 * row, (o0 + n) * row, s,
                                                                reinterpret_cast<std::byte*>(slab.data())));
            reduceBlock(p, x, o0, n, y.data);
          }
          return Status::ok();
        }));
  }
  if (storage_ != Precision::kF32) roundTile(y.as<float>(), y.numel(), storage_);
  return Status::ok();
}

}  // namespace

StatusOr<std::unique_ptr<Step>> makeReduceGroupStep(const StepRequest& r) {
  auto s = std::make_unique<ReduceStep>();
  CAGR_RETURN_IF_ERROR(s->init(r));
  return std::unique_ptr<Step>(std::move(s));
}

}  // namespace cagr::cpu
