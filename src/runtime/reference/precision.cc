// Rounding functions, int8 row-wise quantisation and the emulator that
// applies a graph's MIR precision decisions during a reference run.
#include "runtime/reference/precision.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>

#include "cagr/mir.h"
#include "runtime/reference/kernel_util.h"

namespace cagr::ref {
namespace {

bool isFloating(DType t) {
  return t == DType::kF32 || t == DType::kF64;
}

template <typename T>
void quantizeRows(const T* x, T* y, int64_t rows, int64_t cols) {
  for (int64_t r = 0; r < rows; ++r) {
    const T* row = x + r * cols;
    float lo = std::numeric_limits<float>::infinity(), hi = -lo;
    for (int64_t c = 0; c < cols; ++c) {
      lo = std::min(lo, static_cast<float>(row[c]));
      hi = std::max(hi, static_cast<float>(row[c]));
    }
    float scale = (hi - lo) / 255.0f;
    for (int64_t c = 0; c < cols; ++c) {
      float q = scale > 0 ? std::nearbyint((static_cast<float>(row[c]) - lo) / scale) : 0.0f;
      q = std::clamp(q, 0.0f, 255.0f);
      y[r * cols + c] = static_cast<T>(q * scale + lo);
    }
  }
}

// Operands a reduced-math node multiplies; the rest (Gemm's C, a Conv1x1 or
// CIN bias) are added in f32 by the epilogue.
size_t multiplicands(const Node& n) {
  switch (n.op) {
    case OpKind::kGemm:
    case OpKind::kConv1x1:
      return 2;
    case OpKind::kCIN:
      return 3;
    default:
      return n.inputs.size();
  }
}

}  // namespace

float roundToTF32(float x) {
  auto b = std::bit_cast<uint32_t>(x);
  if ((b & 0x7f800000u) == 0x7f800000u) return x;  // infinity or NaN
  b += 0xfffu + ((b >> 13) & 1u);                  // ties to even on the 13 dropped bits
  return std::bit_cast<float>(b & ~0x1fffu);
}

float roundToBF16(float x) {
  return bf16ToFloat(floatToBf16(x));
}

float roundToF16(float x) {
  return halfToFloat(floatToHalf(x));
}

float roundTo(float x, Precision p) {
  switch (p) {
    case Precision::kTF32:
      return roundToTF32(x);
    case Precision::kBF16:
      return roundToBF16(x);
    case Precision::kF16:
      return roundToF16(x);
    default:
      return x;
  }
}

Tensor quantizeRowwiseInt8(const Tensor& t) {
  Tensor out(t.dtype(), t.shape());
  int64_t cols = t.rank() == 0 ? 1 : t.dim(t.rank() - 1);
  int64_t rows = cols == 0 ? 0 : t.numel() / cols;
  Status st = visitFloat(t.dtype(), [&](auto tag) {
    using T = decltype(tag);
    quantizeRows(t.data<T>(), out.data<T>(), rows, cols);
    return Status::ok();
  });
  return st.isOk() ? out : t;
}

StatusOr<Tensor> storedAs(const Tensor& t, Precision p) {
  if (p == Precision::kF32) return t;
  if (!isFloating(t.dtype())) {
    return invalidArgument(std::string("a ") + dtypeName(t.dtype()) + " tensor cannot be stored as " +
                           precisionName(p));
  }
  if (p == Precision::kInt8Rowwise) return quantizeRowwiseInt8(t);
  Tensor out(t.dtype(), t.shape());
  CAGR_RETURN_IF_ERROR(visitFloat(t.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* x = t.data<T>();
    T* y = out.data<T>();
    for (int64_t i = 0; i < t.numel(); ++i) y[i] = static_cast<T>(roundTo(static_cast<float>(x[i]), p));
    return Status::ok();
  }));
  return out;
}

bool hasPrecisionDecisions(const Graph& g) {
  for (const Node& n : g.nodes()) {
    if (n.mir.math != Precision::kF32) return true;
  }
  for (size_t v = 0; v < g.numValues(); ++v) {
    if (g.value(static_cast<ValueId>(v)).mir.storage != Precision::kF32) return true;
  }
  return false;
}

Status PrecisionEmulator::storeSources(std::vector<Tensor>& slots) const {
  for (size_t v = 0; v < g_.numValues(); ++v) {
    // Values nothing defines any more (left by erased nodes) have no slot.
    bool source = g_.value(static_cast<ValueId>(v)).producer < 0 && slots[v].rawData() != nullptr;
    if (source) CAGR_RETURN_IF_ERROR(store(static_cast<ValueId>(v), slots[v]));
  }
  return Status::ok();
}

Status PrecisionEmulator::store(ValueId v, Tensor& t) const {
  const Value& val = g_.value(v);
  if (val.mir.storage == Precision::kF32) return Status::ok();
  auto stored = storedAs(t, val.mir.storage);
  if (!stored.isOk()) return stored.status().withContext("value '" + val.name + "'");
  t = std::move(stored).value();
  return Status::ok();
}

Status PrecisionEmulator::roundOperands(const Node& n, std::vector<const Tensor*>& operands) {
  Precision p = n.mir.math;
  scratch_.clear();
  scratch_.reserve(operands.size());  // no reallocation: operands point into it
  size_t count = std::min(multiplicands(n), operands.size());
  for (size_t i = 0; i < count; ++i) {
    ValueId v = n.inputs[i];
    if (operands[i] == nullptr || !isFloating(operands[i]->dtype())) continue;
    auto earlier = std::find(n.inputs.begin(), n.inputs.begin() + static_cast<std::ptrdiff_t>(i), v);
    if (earlier != n.inputs.begin() + static_cast<std::ptrdiff_t>(i)) {  // same value twice: round it once
      operands[i] = operands[static_cast<size_t>(earlier - n.inputs.begin())];
      continue;
    }
    if (!g_.isConstant(v)) {
      CAGR_ASSIGN_OR_RETURN(Tensor r, storedAs(*operands[i], p));
      operands[i] = &scratch_.emplace_back(std::move(r));
      continue;
    }
    auto key = std::make_pair(v, p);
    auto it = roundedConstants_.find(key);
    if (it == roundedConstants_.end()) {
      CAGR_ASSIGN_OR_RETURN(Tensor r, storedAs(*operands[i], p));
      it = roundedConstants_.emplace(key, std::move(r)).first;
    }
    operands[i] = &it->second;
  }
  return Status::ok();
}

}  // namespace cagr::ref
