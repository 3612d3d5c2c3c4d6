// Precision emulation for the reference executor: rounding to tf32 / bf16 /
// f16 (round to nearest, ties to even) and int8 row-wise quantisation, so a
// plan's MIR precision decisions (Node::mir.math, Value::mir.storage) change
// the reference results the way the hardware would and a plan's error is
// measurable against the all-f32 run.
#pragma once

#include <map>
#include <utility>
#include <vector>

#include "cagr/graph.h"
#include "cagr/status.h"
#include "cagr/tensor.h"

namespace cagr::ref {

/// `x` rounded to the nearest tf32 value: f32's exponent range with 10
/// explicit mantissa bits (ties to even; NaN and infinities pass through).
float roundToTF32(float x);
/// `x` rounded to the nearest bfloat16 value (8 significant bits, ties to even).
float roundToBF16(float x);
/// `x` rounded to the nearest IEEE half value (ties to even): beyond 65504
/// it overflows to infinity, below 2^-14 it keeps half's subnormal steps.
float roundToF16(float x);
/// roundTo* for an elementwise precision; f32 and int8_rowwise return `x`.
float roundTo(float x, Precision p);

/// Row-wise int8 quantisation round trip of a floating tensor (a row is the
/// last dimension): per row scale = (max - min) / 255, bias = min,
/// q = round((x - bias) / scale) (ties to even, clamped to [0, 255]), and the
/// result holds q * scale + bias. A constant row comes back exactly.
Tensor quantizeRowwiseInt8(const Tensor& t);

/// A private copy of floating tensor `t` holding the values it has when
/// stored in precision `p` (same dtype; f64 goes through f32 first); for f32,
/// `t` itself (shared). Fails for a non-floating tensor unless `p` is f32.
StatusOr<Tensor> storedAs(const Tensor& t, Precision p);

/// True when any node of `g` has reduced math or any value reduced storage.
bool hasPrecisionDecisions(const Graph& g);

/// Applies the precision decisions of one graph during one reference run:
/// constants are converted once (not per use), produced values are rounded
/// as they are stored, and a reduced-math node sees rounded multiplicands.
class PrecisionEmulator {
 public:
  explicit PrecisionEmulator(const Graph& g) : g_(g) {}

  /// Replaces the slots of graph inputs and constants that carry a storage
  /// decision with their stored copies (slots index = ValueId).
  Status storeSources(std::vector<Tensor>& slots) const;
  /// Rounds `t`, just produced for value `v`, to v's storage precision.
  Status store(ValueId v, Tensor& t) const;
  /// For a node with reduced math: points its floating multiplicand operands
  /// (all operands except a Gemm C, a Conv1x1 bias or a CIN bias, which the
  /// epilogue adds in f32) at copies rounded to the math precision. The
  /// copies stay valid until the next call; those of constants for the run.
  Status roundOperands(const Node& n, std::vector<const Tensor*>& operands);

 private:
  const Graph& g_;
  std::vector<Tensor> scratch_;
  std::map<std::pair<ValueId, Precision>, Tensor> roundedConstants_;
};

}  // namespace cagr::ref
