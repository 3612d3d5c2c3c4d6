// Measured precision budgets (DESIGN §7). A plan that uses reduced precision
// is run on a calibration batch beside the all-f32 model; its precision
// decisions are added back one at a time, in graph order, and each one that
// takes the measured output error over the budget is pinned to f32. The
// policy then plans again without the pinned ones, until a plan measures
// within the budget. The stated per-action bounds only guide the search.
#include <algorithm>
#include <cmath>

#include "cagr/reference.h"
#include "policy/precision_budget.h"

namespace cagr {
namespace {

// Re-plans at most this many times; then the plan falls back to f32.
constexpr int kMaxRounds = 4;
// Calibration batch when the caller gives none (the budget is a relative
// error, so a few dozen samples show a precision's effect).
constexpr int64_t kCalibrationBatch = 64;

// One reduced-precision decision of a plan: a table's storage or a node's math.
struct PrecisionChoice {
  std::string name;
  ValueId value = kNoValue;
  NodeId node = -1;
  Precision precision = Precision::kF32;
};

std::vector<PrecisionChoice> choicesOf(const Graph& plan) {
  std::vector<PrecisionChoice> out;
  for (size_t i = 0; i < plan.nodes().size(); ++i) {
    const Node& n = plan.nodes()[i];
    if (n.mir.math != Precision::kF32) out.push_back({n.name, kNoValue, static_cast<NodeId>(i), n.mir.math});
  }
  for (size_t v = 0; v < plan.numValues(); ++v) {
    const Value& val = plan.value(static_cast<ValueId>(v));
    if (val.mir.storage != Precision::kF32) out.push_back({val.name, static_cast<ValueId>(v), -1, val.mir.storage});
  }
  return out;
}

void setChoice(Graph& plan, const PrecisionChoice& c, Precision p) {
  if (c.value != kNoValue) {
    plan.mutableValue(c.value).mir.storage = p;
  } else {
    plan.mutableNodes()[static_cast<size_t>(c.node)].mir.math = p;
  }
}

}  // namespace

StatusOr<PrecisionReport> enforcePrecisionBudget(const Graph& model, const Target& t, Policy& policy,
                                                 const EnvConfig& cfg, OptimizeResult& result) {
  PrecisionReport report;
  std::vector<std::pair<std::string, Tensor>> inputs = cfg.calibration;
  report.calibration = "the caller's batch";
  if (inputs.empty()) {
    inputs = synthesizeInputs(model, std::min<int64_t>(cfg.batch, kCalibrationBatch));
    report.calibration = "synthesized batch of " + std::to_string(std::min<int64_t>(cfg.batch, kCalibrationBatch));
  }
  auto reference = runReference(model, inputs);
  if (!reference.isOk()) return reference.status().withContext("the f32 model on the calibration batch");
  std::vector<Tensor> want = std::move(*reference);
  auto measure = [&](const Graph& plan) -> StatusOr<double> {
    auto got = runReference(plan, inputs);
    if (!got.isOk()) return got.status().withContext("the plan on the calibration batch");
    return relativeOutputError(*got, want);
  };
  EnvConfig round = cfg;
  for (int r = 0; r < kMaxRounds; ++r) {
    std::vector<PrecisionChoice> choices = choicesOf(result.plan);
    Graph trial = result.plan;
    for (const PrecisionChoice& c : choices) setChoice(trial, c, Precision::kF32);
    size_t pinned = round.precision.keepF32.size();
    for (const PrecisionChoice& c : choices) {
      setChoice(trial, c, c.precision);
      CAGR_ASSIGN_OR_RETURN(double e, measure(trial));
      if (e <= cfg.precision.maxError) continue;
      setChoice(trial, c, Precision::kF32);
      round.precision.keepF32.push_back(c.name);
    }
    if (round.precision.keepF32.size() == pinned) {
      CAGR_ASSIGN_OR_RETURN(report.measuredError, measure(result.plan));  // == the last trial's
      report.keptF32 = round.precision.keepF32;
      return report;
    }
    CAGR_ASSIGN_OR_RETURN(result, optimizePlan(model, t, policy, round));
  }
  // Still over budget after kMaxRounds plans: the lossless plan.
  round.precision = PrecisionOptions{};
  CAGR_ASSIGN_OR_RETURN(result, optimizePlan(model, t, policy, round));
  CAGR_ASSIGN_OR_RETURN(report.measuredError, measure(result.plan));
  report.fellBackToF32 = true;
  return report;
}

}  // namespace cagr
