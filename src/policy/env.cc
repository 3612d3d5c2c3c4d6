// The RL environment: state, legal actions, steps with the DESIGN §4 reward.
// Decision-only actions keep the graph's stats (shapes and counts do not
// change), so a step re-prices without recomputing them.
#include "cagr/env.h"

#include <cmath>

namespace cagr {

bool decisionOnly(const Action& a) {
  switch (a.kind) {
    case ActionKind::kFuse:
    case ActionKind::kFuseInteraction:
    case ActionKind::kSetKernel:
    case ActionKind::kSetLayout:
    case ActionKind::kSetPrecision:
    case ActionKind::kAssignStream:
    case ActionKind::kStop: return true;
    case ActionKind::kEliminateConcat: return a.choice == "in_place";
    default: return false;
  }
}

Env::Env() = default;

Status Env::reset(const Graph& g, const Target& t, const EnvConfig& cfg) {
  g_ = g;
  target_ = std::make_shared<const Target>(t);
  model_ = std::make_shared<const RooflineCostModel>(t.hw);
  cfg_ = cfg;
  bindings_ = defaultBindings(g_, cfg.batch, cfg.pooling);
  decisions_.clear();
  return_ = 0;
  steps_ = 0;
  done_ = false;
  CAGR_RETURN_IF_ERROR(refresh(true));
  l0_ = est_.latencyS;
  m0_ = est_.peakMemoryBytes;
  v0_ = est_.variance;
  if (l0_ <= 0) return invalidArgument("the graph has no modelled latency (no nodes?)");
  return Status::ok();
}

Status Env::refresh(bool structureChanged) {
  if (structureChanged) {
    CAGR_ASSIGN_OR_RETURN(stats_, computeStats(g_, bindings_));
  }
  CAGR_ASSIGN_OR_RETURN(est_, model_->graphWithStats(g_, stats_, bindings_));
  legal_ = enumerateActions(g_, *target_, false);
  return Status::ok();
}

double Env::rewardFor(const GraphEstimate& before, const GraphEstimate& after) const {
  double dl = (after.latencyS - before.latencyS) / l0_;
  double dm = m0_ > 0 ? static_cast<double>(after.peakMemoryBytes - before.peakMemoryBytes) / static_cast<double>(m0_) : 0;
  double dv = after.variance - before.variance;
  return -dl - cfg_.lambdaM * dm - cfg_.lambdaC * dv;
}

StatusOr<Env::StepResult> Env::step(size_t index) {
  if (index >= legal_.size()) return invalidArgument("action index " + std::to_string(index) + " out of range");
  Action a = legal_[index].action;
  return step(a);
}

StatusOr<Env::StepResult> Env::step(const Action& a) {
  if (done_) return invalidArgument("the episode is over; reset first");
  StepResult r;
  if (a.kind == ActionKind::kStop) {
    done_ = true;
    r.done = true;
    return r;
  }
  Decision d;
  d.action = a;
  d.label = a.label(g_);
  d.latencyBeforeS = est_.latencyS;
  d.memoryBefore = est_.peakMemoryBytes;
  GraphEstimate before = est_;
  if (cfg_.verify) {
    CAGR_RETURN_IF_ERROR(applyAction(g_, *target_, a));
  } else {
    const Rewrite* rw = rewriteFor(a.kind);
    if (rw == nullptr) return invalidArgument(std::string("no rewrite for ") + actionKindName(a.kind));
    CAGR_RETURN_IF_ERROR(rw->apply(g_, *target_, a).withContext(d.label));
  }
  CAGR_RETURN_IF_ERROR(refresh(!decisionOnly(a)));
  r.reward = rewardFor(before, est_);
  d.latencyAfterS = est_.latencyS;
  d.memoryAfter = est_.peakMemoryBytes;
  d.reward = r.reward;
  decisions_.push_back(std::move(d));
  return_ += r.reward;
  ++steps_;
  done_ = steps_ >= cfg_.maxSteps;
  r.done = done_;
  return r;
}

StatusOr<double> Env::peek(size_t index) const {
  Env probe = clone();
  CAGR_ASSIGN_OR_RETURN(StepResult r, probe.step(index));
  return r.reward;
}

}  // namespace cagr
