// Op categories as bit sets over OpKind, shared by the kernel catalog, group
// classification and the rewrites that build groups.
#pragma once

#include <cstdint>

#include "cagr/graph.h"

namespace cagr::ops {

static_assert(kNumOpKinds <= 64, "op sets are 64-bit masks");

constexpr uint64_t bit(OpKind k) { return uint64_t{1} << static_cast<int>(k); }
constexpr bool in(uint64_t set, OpKind k) { return (set & bit(k)) != 0; }

/// Metadata-only ops: no kernel, no traffic.
constexpr uint64_t kViews = bit(OpKind::kReshape) | bit(OpKind::kFlatten) | bit(OpKind::kSqueeze) |
                            bit(OpKind::kUnsqueeze) | bit(OpKind::kIdentity);

constexpr uint64_t kUnary = bit(OpKind::kRelu) | bit(OpKind::kLeakyRelu) | bit(OpKind::kSigmoid) |
                            bit(OpKind::kTanh) | bit(OpKind::kGelu) | bit(OpKind::kExp) | bit(OpKind::kLog) |
                            bit(OpKind::kNeg) | bit(OpKind::kAbs) | bit(OpKind::kSqrt) | bit(OpKind::kReciprocal) |
                            bit(OpKind::kErf) | bit(OpKind::kSoftplus) | bit(OpKind::kClip) | bit(OpKind::kCast);
constexpr uint64_t kBinary = bit(OpKind::kAdd) | bit(OpKind::kSub) | bit(OpKind::kMul) | bit(OpKind::kDiv) |
                             bit(OpKind::kPow) | bit(OpKind::kMax) | bit(OpKind::kMin) | bit(OpKind::kWhere);
/// Elementwise: one iteration space, any operand broadcast into it. Inference
/// BatchNorm is a per-channel affine map, so it is elementwise too.
constexpr uint64_t kEltwise = kUnary | kBinary | bit(OpKind::kBatchNorm);

/// oneDNN post-ops: eltwise algorithms and binary ops with a broadcast operand.
constexpr uint64_t kOneDnnPostOps = bit(OpKind::kRelu) | bit(OpKind::kLeakyRelu) | bit(OpKind::kSigmoid) |
                                    bit(OpKind::kTanh) | bit(OpKind::kGelu) | bit(OpKind::kExp) | bit(OpKind::kLog) |
                                    bit(OpKind::kAbs) | bit(OpKind::kSqrt) | bit(OpKind::kClip) |
                                    bit(OpKind::kSoftplus) | bit(OpKind::kAdd) | bit(OpKind::kSub) |
                                    bit(OpKind::kMul) | bit(OpKind::kDiv) | bit(OpKind::kMax) | bit(OpKind::kMin);

constexpr uint64_t kGemmLike =
    bit(OpKind::kGemm) | bit(OpKind::kMatMul) | bit(OpKind::kConv1x1) | bit(OpKind::kEinsum);
constexpr uint64_t kLookups = bit(OpKind::kGather) | bit(OpKind::kEmbeddingBag) | bit(OpKind::kEmbeddingBags);
constexpr uint64_t kReductions = bit(OpKind::kReduceSum) | bit(OpKind::kReduceMean) | bit(OpKind::kReduceMax) |
                                 bit(OpKind::kSoftmax) | bit(OpKind::kLayerNorm);

}  // namespace cagr::ops
