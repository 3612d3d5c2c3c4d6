// The step factories behind makeEltwiseStep (eltwise_step.cc), one per kind
// of group: each returns kUnsupported with the reason for what it does not
// run, so the engine falls back to the reference step.
#pragma once

#include <memory>

#include "backends/cpu/step.h"

namespace cagr::cpu {

/// Pattern::kReduce: an optional elementwise prologue ending in ReduceSum /
/// ReduceMean / ReduceMax, Softmax or LayerNorm (eltwise_reduce.cc).
StatusOr<std::unique_ptr<Step>> makeReduceGroupStep(const StepRequest& r);

/// One data-movement node: Concat, Split, Slice, Transpose, Expand, Gather,
/// GatherND (eltwise_movement.cc).
StatusOr<std::unique_ptr<Step>> makeMovementStep(const StepRequest& r);

}  // namespace cagr::cpu
