// Elementwise tails of lookup kernels. Constants are expanded at compile
// time into a coefficient array that repeats along the flat output (a [D]
// bias repeats every D elements, a BatchNorm on [B,C,K] every C*K), so the
// stage is a plain loop over contiguous elements whatever the broadcast.
#include "backends/cpu/rec_tail.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "ir/op_table.h"
#include "lower/op_sets.h"
#include "runtime/reference/kernel_util.h"
#include "runtime/reference/precision.h"

namespace cagr::cpu {
namespace {

constexpr int64_t kMaxPeriod = int64_t{1} << 22;

// A constant operand as the reference reads it (rounded to its storage).
StatusOr<Tensor> constantOf(const Graph& g, ValueId v) {
  const Tensor* c = g.constant(v);
  if (c == nullptr) return unsupported("operand '" + g.value(v).name + "' is not a constant");
  if (c->dtype() != DType::kF32) return unsupported("operand '" + g.value(v).name + "' is not f32");
  return ref::storedAs(*c, g.value(v).mir.storage);
}

// `c` broadcast against a value of `dims`: element i reads coef[i % period].
// The period spans the axes from the first one where `c` is not 1.
StatusOr<std::vector<float>> periodic(const Tensor& c, const std::vector<Dim>& dims, int64_t& period) {
  size_t r = dims.size(), cr = static_cast<size_t>(c.rank());
  if (cr > r) return unsupported("a constant of higher rank than the value");
  size_t first = r;
  for (size_t k = 0; k < cr; ++k) {
    if (c.dim(static_cast<int64_t>(k)) != 1) first = std::min(first, r - cr + k);
  }
  std::vector<int64_t> sub, constSub;
  for (size_t k = first; k < r; ++k) {
    if (isSymbolic(dims[k])) return unsupported("a constant broadcast along a symbolic dim");
    sub.push_back(dims[k]);
    constSub.push_back(c.dim(static_cast<int64_t>(k - (r - cr))));
  }
  period = ref::product(sub);
  if (period > kMaxPeriod || period < 1) return unsupported("a constant broadcast over too many elements");
  std::vector<float> coef(static_cast<size_t>(period));
  const float* x = c.data<float>();
  ref::forEachStrided<1>(
      sub, {ref::broadcastStrides(constSub, sub)}, {0},
      [&](int64_t i, const std::array<int64_t, 1>& off) { coef[static_cast<size_t>(i)] = x[off[0]]; });
  return coef;
}

// Inference BatchNorm on a value of `dims` as y = x * a + b per channel (axis 1).
Status batchNormCoefficients(const Graph& g, const Node& n, const std::vector<Dim>& dims, std::vector<float>& a,
                             std::vector<float>& b, int64_t& period) {
  if (dims.size() < 2) return unsupported("BatchNorm of a value with rank < 2");
  std::vector<int64_t> tail;
  for (size_t k = 1; k < dims.size(); ++k) {
    if (isSymbolic(dims[k])) return unsupported("BatchNorm over a symbolic dim");
    tail.push_back(dims[k]);
  }
  int64_t channels = tail[0];
  period = ref::product(tail);
  if (period > kMaxPeriod) return unsupported("BatchNorm over too many elements");
  std::vector<Tensor> p;
  for (size_t i = 1; i < 5; ++i) {
    CAGR_ASSIGN_OR_RETURN(Tensor t, constantOf(g, n.inputs[i]));
    if (t.numel() != channels && t.numel() != 1) return unsupported("BatchNorm parameters are not per channel");
    p.push_back(std::move(t));
  }
  auto at = [&](size_t k, int64_t ch) { return static_cast<double>(p[k].data<float>()[p[k].numel() == 1 ? 0 : ch]); };
  double eps = floatAttr(n, "epsilon");
  int64_t inner = period / channels;
  a.resize(static_cast<size_t>(period));
  b.resize(static_cast<size_t>(period));
  for (int64_t i = 0; i < period; ++i) {
    int64_t ch = i / inner;
    double mul = at(0, ch) / std::sqrt(at(3, ch) + eps);
    a[static_cast<size_t>(i)] = static_cast<float>(mul);
    b[static_cast<size_t>(i)] = static_cast<float>(at(1, ch) - at(2, ch) * mul);
  }
  return Status::ok();
}

float binaryOp(OpKind op, float x, float y) {
  switch (op) {
    case OpKind::kAdd:
      return x + y;
    case OpKind::kSub:
      return x - y;
    case OpKind::kMul:
      return x * y;
    case OpKind::kDiv:
      return x / y;
    case OpKind::kMax:
      return (x > y || x != x) ? x : y;
    default:
      return (x < y || x != x) ? x : y;  // kMin
  }
}

float sigmoid(float x) {
  if (x >= 0) return 1.0f / (1.0f + std::exp(-x));
  float e = std::exp(x);
  return e / (1.0f + e);
}

}  // namespace

void roundInPlace(float* x, int64_t n, Precision p) {
  if (p != Precision::kBF16 && p != Precision::kF16) return;
  for (int64_t i = 0; i < n; ++i) x[i] = ref::roundTo(x[i], p);
}

StatusOr<ElementwiseTail::Stage> ElementwiseTail::stageFor(const Graph& g, const Node& n, ValueId chain) {
  Stage s;
  s.value = n.outputs[0];
  s.round = g.value(s.value).mir.storage;
  s.name = opInfo(n.op).mnemonic;
  if (g.type(s.value).dtype != DType::kF32) return unsupported(std::string(opInfo(n.op).name) + " changes the type");
  if (ops::in(ops::kViews, n.op)) return s;
  if (g.type(s.value).dims != g.type(chain).dims) {
    return unsupported("'" + n.name + "' broadcasts the lookup to a larger shape");
  }
  const std::vector<Dim>& dims = g.type(chain).dims;
  static const std::pair<OpKind, Kind> kMaps[] = {{OpKind::kRelu, Kind::kRelu}, {OpKind::kSigmoid, Kind::kSigmoid},
                                                  {OpKind::kTanh, Kind::kTanh}, {OpKind::kExp, Kind::kExp},
                                                  {OpKind::kNeg, Kind::kNeg},   {OpKind::kAbs, Kind::kAbs}};
  for (const auto& [op, kind] : kMaps) {
    if (n.op == op) {
      s.kind = kind;
      return s;
    }
  }
  switch (n.op) {
    case OpKind::kLeakyRelu:
      s.kind = Kind::kLeakyRelu;
      s.p0 = static_cast<float>(floatAttr(n, "alpha"));
      return s;
    case OpKind::kClip:
      s.kind = Kind::kClip;
      s.p0 = static_cast<float>(floatAttr(n, "min"));
      s.p1 = static_cast<float>(floatAttr(n, "max"));
      return s;
    case OpKind::kBatchNorm:
      s.kind = Kind::kAffine;
      if (n.inputs[0] != chain) return unsupported("BatchNorm of a constant");
      CAGR_RETURN_IF_ERROR(batchNormCoefficients(g, n, dims, s.a, s.b, s.period));
      return s;
    case OpKind::kAdd:
    case OpKind::kSub:
    case OpKind::kMul:
    case OpKind::kDiv:
    case OpKind::kMax:
    case OpKind::kMin: {
      s.kind = Kind::kBinary;
      s.op = n.op;
      s.constFirst = n.inputs[1] == chain;
      if (n.inputs[0] == n.inputs[1]) return unsupported("'" + n.name + "' reads the lookup twice");
      CAGR_ASSIGN_OR_RETURN(Tensor c, constantOf(g, n.inputs[s.constFirst ? 0 : 1]));
      CAGR_ASSIGN_OR_RETURN(s.a, periodic(c, dims, s.period));
      return s;
    }
    default:
      return unsupported(std::string(opInfo(n.op).name) + " is not an elementwise op a lookup kernel runs");
  }
}

StatusOr<ElementwiseTail> ElementwiseTail::compile(const Graph& g, const std::vector<NodeId>& members, NodeId anchor,
                                                   const std::vector<ValueId>& writes) {
  ElementwiseTail t;
  auto written = [&](ValueId v) { return std::find(writes.begin(), writes.end(), v) != writes.end(); };
  t.anchorOut_ = g.node(anchor).outputs[0];
  t.anchorRound_ = g.value(t.anchorOut_).mir.storage;
  t.anchorWritten_ = written(t.anchorOut_);
  if (t.anchorWritten_) t.target_ = t.anchorOut_;
  ValueId chain = t.anchorOut_;
  std::vector<Stage> stages;
  for (NodeId m : members) {
    if (m == anchor) continue;
    const Node& n = g.node(m);
    if (std::find(n.inputs.begin(), n.inputs.end(), chain) == n.inputs.end()) {
      return unsupported("the tail is not a chain: '" + n.name + "' does not read the previous value");
    }
    CAGR_ASSIGN_OR_RETURN(Stage s, stageFor(g, n, chain));
    s.written = written(s.value);
    if (s.written) t.target_ = s.value;
    chain = s.value;
    stages.push_back(std::move(s));
  }
  if (t.target_ == kNoValue) return unsupported("the group writes no value of the lookup chain");
  while (!stages.empty() && !stages.back().written) stages.pop_back();  // nothing reads them
  t.stages_ = std::move(stages);
  return t;
}

std::string ElementwiseTail::suffix() const {
  std::string out;
  for (const Stage& s : stages_) {
    if (s.kind != Kind::kView) out += "+" + s.name;
  }
  return out;
}

std::vector<float*> ElementwiseTail::destinations(const RunContext& ctx) const {
  std::vector<float*> dst(stages_.size() + 1, nullptr);
  if (anchorWritten_ && anchorOut_ != target_) dst[0] = ctx.buffer(anchorOut_).as<float>();
  for (size_t i = 0; i < stages_.size(); ++i) {
    if (stages_[i].written && stages_[i].value != target_) dst[i + 1] = ctx.buffer(stages_[i].value).as<float>();
  }
  return dst;
}

void ElementwiseTail::applyStage(const Stage& s, float* x, int64_t begin, int64_t n) const {
  switch (s.kind) {
    case Kind::kView:
      return;
    case Kind::kRelu:
      for (int64_t i = 0; i < n; ++i) x[i] = x[i] < 0 ? 0.0f : x[i];  // NaN stays NaN
      return;
    case Kind::kLeakyRelu:
      for (int64_t i = 0; i < n; ++i) x[i] = x[i] >= 0 ? x[i] : s.p0 * x[i];
      return;
    case Kind::kSigmoid:
      for (int64_t i = 0; i < n; ++i) x[i] = sigmoid(x[i]);
      return;
    case Kind::kTanh:
      for (int64_t i = 0; i < n; ++i) x[i] = std::tanh(x[i]);
      return;
    case Kind::kExp:
      for (int64_t i = 0; i < n; ++i) x[i] = std::exp(x[i]);
      return;
    case Kind::kNeg:
      for (int64_t i = 0; i < n; ++i) x[i] = -x[i];
      return;
    case Kind::kAbs:
      for (int64_t i = 0; i < n; ++i) x[i] = std::fabs(x[i]);
      return;
    case Kind::kClip:
      for (int64_t i = 0; i < n; ++i) x[i] = x[i] < s.p0 ? s.p0 : x[i] > s.p1 ? s.p1 : x[i];
      return;
    default:
      break;
  }
  // Coefficient stages: walk x in runs that are contiguous in the coefficients.
  int64_t j = begin % s.period;
  for (int64_t i = 0; i < n;) {
    int64_t len = std::min(n - i, s.period - j);
    const float* a = s.a.data() + j;
    float* y = x + i;
    if (s.kind == Kind::kAffine) {
      const float* b = s.b.data() + j;
      for (int64_t k = 0; k < len; ++k) y[k] = y[k] * a[k] + b[k];
    } else if (s.constFirst) {
      for (int64_t k = 0; k < len; ++k) y[k] = binaryOp(s.op, a[k], y[k]);
    } else {
      for (int64_t k = 0; k < len; ++k) y[k] = binaryOp(s.op, y[k], a[k]);
    }
    i += len;
    j = 0;
  }
}

void ElementwiseTail::apply(float* x, int64_t begin, int64_t n, const std::vector<float*>& dst) const {
  roundInPlace(x, n, anchorRound_);
  if (dst[0] != nullptr) std::memcpy(dst[0] + begin, x, static_cast<size_t>(n) * sizeof(float));
  for (size_t i = 0; i < stages_.size(); ++i) {
    applyStage(stages_[i], x, begin, n);
    roundInPlace(x, n, stages_[i].round);
    if (dst[i + 1] != nullptr) std::memcpy(dst[i + 1] + begin, x, static_cast<size_t>(n) * sizeof(float));
  }
}

}  // namespace cagr::cpu
