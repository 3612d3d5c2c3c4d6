// Per-kernel timing of a compiled CPU plan (Executable::profile): runs the
// steps of one bound run context repeatedly and times each step apart.
#pragma once

#include <memory>
#include <vector>

#include "backends/cpu/step.h"
#include "cagr/backend.h"

namespace cagr::cpu {

/// One untimed warm-up pass, then `repeats` passes over `steps` in order;
/// per step the median and fastest wall time and the median CPU time of the
/// calling thread (robust to preemption when the plan runs on one thread).
StatusOr<std::vector<KernelTiming>> timeSteps(const std::vector<std::unique_ptr<Step>>& steps,
                                              const std::vector<std::vector<NodeId>>& members, const RunContext& ctx,
                                              int repeats);

}  // namespace cagr::cpu
