// Splitting a narrow GEMM over a concat (a lowering step of the CUDA
// backend, like pad_gemm_dims.h: not a policy decision, the graph computes
// the same values). A Gemm whose A is a last-axis Concat that nothing else
// reads, with a constant weight and few output columns (a model's head over
// [cross | deep] features, as DCN-v2's), is computed as a chain of Gemms,
// one per concat operand over that operand's rows of the weight, each
// adding the previous one's result through its C (beta 1; cuBLASLt adds it
// in the epilogue). The concat is then never written: on the H200 its copy
// took 10 us of DCN-v2's fp32 replay at batch 4096, and a GEMV reads the
// same bytes whether they come from one buffer or two.
//
// The first part keeps the Gemm's own C (bias) and beta, every part its
// alpha; the last part is the original node, so its output value, fusion
// group and tail stay as the plan made them. The other parts run as lone
// groups with the Gemm's kernel choice and math, each on the stream of its
// operand's producer; operands made on the Gemm's own stream come last, so
// that stream never waits for another one's work before its own (DCN-v2:
// the head's part over the cross tower runs on the cross tower's stream
// while the deep tower still runs on the other).
#pragma once

#include <cstdint>
#include <vector>

#include "cagr/graph.h"
#include "cagr/status.h"

namespace cagr {

struct SplitGemm {
  NodeId gemm = -1;  // in the plan given
  int parts = 0;     // concat operands, one Gemm each
};

/// `plan` with every Gemm over a lone last-axis Concat of at most `maxN`
/// output columns split (see above); `out` (optional) lists them.
StatusOr<Graph> splitConcatGemms(const Graph& plan, int64_t maxN, std::vector<SplitGemm>* out = nullptr);

/// Output columns up to which the CUDA backend splits: heads and narrow layers.
constexpr int64_t kSplitConcatGemmMaxN = 16;
/// Concat operands up to which it splits: two parts run as many kernels as
/// the concat and the GEMM did; each further part is one launch more, which
/// at small batches costs more than the copy it saves (xDeepFM's head over
/// three 200-wide CIN sums, batch 256: measured no faster split).
constexpr size_t kSplitConcatGemmMaxParts = 2;

}  // namespace cagr
