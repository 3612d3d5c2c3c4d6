// Softmax over the last axis of f32 rows with AVX2: rows of any length, the
// short ones (AutoInt's 22) included. The portable loops in eltwise_reduce.cc
// spend most of a short row in its scalar tail and its double-precision sum;
// here a row's max, shift, sum and scale are whole-vector operations (the
// tail a masked or overlapping vector) and e^x is fastExp's exact sequence of
// operations, eight lanes at a time. The sum is accumulated in f32 (eight
// lanes), so results are within f32 rounding of the reference's double sum.
#pragma once

#include <cstdint>

namespace cagr::cpu {

/// y[o, k] = softmax over k of x[o, 0..K) for o < rows (x, y: [rows, K],
/// contiguous, not overlapping). False, writing nothing, on a host without
/// AVX2 (the caller runs its portable loops).
bool softmaxRowsAvx2(const float* x, int64_t rows, int64_t K, float* y);

}  // namespace cagr::cpu
