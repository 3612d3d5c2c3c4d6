// The anchor of a GEMM group (Gemm, MatMul, Conv1x1, a two-operand Einsum
// contraction) as one strided batched product Y_b = A_b * B_b plus what the
// anchor adds after it (Gemm's alpha and beta * C, Conv1x1's bias), so every
// engine runs the same description. No data is moved: transposes, batch
// broadcasting and Einsum letter orders become strides.
#pragma once

#include <string>

#include "backends/cpu/gemm_kernel.h"
#include "cagr/graph.h"
#include "cagr/status.h"

namespace cagr::cpu {

struct GemmAnchor {
  NodeId node = -1;
  OpKind op = OpKind::kGemm;
  ValueId a = kNoValue, b = kNoValue;   // product operands (Conv1x1: a = weight, b = x)
  ValueId c = kNoValue;                 // Gemm C or Conv1x1 bias, added after the product
  double alpha = 1.0, beta = 1.0;       // Gemm: Y = alpha * A B + beta * C
  bool cOnChannels = false;             // the bias is [Cout] along axis 1 of the output
  bool transA = false, transB = false;  // Gemm
  int64_t bRank = 2;
  // Einsum: letters of A, B and the output, and the groups the product merges.
  std::string termA, termB, batchLetters, mLetters, nLetters, kLetters;

  /// The product for concrete operand shapes (simplified: batch folded
  /// into M where B is shared).
  StatusOr<GemmShape> shape(const std::vector<int64_t>& aShape, const std::vector<int64_t>& bShape) const;
  /// True when B is one matrix shared by every batch and read row-major or
  /// transposed (a weight oneDNN or own.gemm can hold in its own layout).
  bool sharedB() const;
};

/// The anchor of a kGemm group, or kUnsupported naming why it is not one
/// this backend runs (non-f32 math or types, an Einsum that is no plain
/// contraction). `anyMath`: accept tf32/bf16/f16 math too (the CUDA
/// backend's library GEMMs run those modes on f32 operands).
StatusOr<GemmAnchor> analyzeAnchor(const Graph& g, NodeId id, bool anyMath = false);

}  // namespace cagr::cpu
