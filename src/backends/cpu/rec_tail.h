// The elementwise tail of a lookup kernel group (Pattern::kGather): views,
// unary maps (Relu, LeakyRelu, Sigmoid, Tanh, Exp, Neg, Abs, Clip), BatchNorm
// and Add / Sub / Mul / Div / Max / Min with a broadcast constant, applied to
// each block of rows right after it is looked up, while it is still in cache.
// Preconditions: the tail is a chain (each op reads the previous value and
// constants only) and no op broadcasts the chain to a larger shape.
#pragma once

#include <string>
#include <vector>

#include "backends/cpu/step.h"

namespace cagr::cpu {

class ElementwiseTail {
 public:
  /// The members after `anchor` as a chain over the anchor's output;
  /// `writes` are the group's outputs. kUnsupported for other tails.
  static StatusOr<ElementwiseTail> compile(const Graph& g, const std::vector<NodeId>& members, NodeId anchor,
                                           const std::vector<ValueId>& writes);

  /// The value whose buffer the rows are computed in (the last one written).
  ValueId target() const { return target_; }
  /// "+relu+mul" for kernel names ("" without a tail).
  std::string suffix() const;

  /// Per-run destinations of the intermediate values the group writes.
  std::vector<float*> destinations(const RunContext& ctx) const;
  /// Runs the chain in place on x = elements [begin, begin + n) (flat
  /// index into the anchor's output), copying each written intermediate
  /// value into its destination and rounding values stored in bf16 / f16.
  void apply(float* x, int64_t begin, int64_t n, const std::vector<float*>& dst) const;

 private:
  enum class Kind : uint8_t { kView, kRelu, kLeakyRelu, kSigmoid, kTanh, kExp, kNeg, kAbs, kClip, kAffine, kBinary };
  struct Stage {
    Kind kind = Kind::kView;
    OpKind op = OpKind::kIdentity;  // kBinary: the op
    bool constFirst = false;        // kBinary: c op x instead of x op c
    float p0 = 0, p1 = 0;           // alpha, clip bounds
    std::vector<float> a, b;        // coefficients (kAffine: y = x * a + b; kBinary: a)
    int64_t period = 1;             // element i uses a[i % period]
    Precision round = Precision::kF32;
    ValueId value = kNoValue;
    bool written = false;
    std::string name;
  };
  static StatusOr<Stage> stageFor(const Graph& g, const Node& n, ValueId chain);

  void applyStage(const Stage& s, float* x, int64_t begin, int64_t n) const;

  std::vector<Stage> stages_;  // only up to the last written value
  ValueId anchorOut_ = kNoValue, target_ = kNoValue;
  bool anchorWritten_ = false;
  Precision anchorRound_ = Precision::kF32;
};

/// Rounds x[0, n) to `p` (bf16 / f16) in place; no-op for f32.
void roundInPlace(float* x, int64_t n, Precision p);

}  // namespace cagr::cpu
