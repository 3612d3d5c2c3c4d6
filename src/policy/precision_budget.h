// Internal to src/policy: optimize() is one policy run (optimizePlan) and,
// when reduced precision is allowed under a measured budget, the
// enforcement loop of precision_budget.cc.
#pragma once

#include "cagr/policy.h"

namespace cagr {

/// One run of `policy` on a fresh environment; no budget measured.
StatusOr<OptimizeResult> optimizePlan(const Graph& g, const Target& t, Policy& policy, const EnvConfig& cfg);

/// Measures `result`'s plan against `model` on the calibration batch, pins
/// to f32 each precision decision that takes the error over
/// cfg.precision.maxError and re-plans (replacing `result`) until a plan
/// measures within it.
StatusOr<PrecisionReport> enforcePrecisionBudget(const Graph& model, const Target& t, Policy& policy,
                                                 const EnvConfig& cfg, OptimizeResult& result);

}  // namespace cagr
