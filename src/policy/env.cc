// The RL environment: state, legal actions, steps with the DESIGN §4 reward.
// Decision-only actions keep the graph's stats (shapes and counts do not
// change), so a step re-prices without recomputing them.
#include "cagr/env.h"

#include <algorithm>
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
  if (cfg_.maxSteps <= 0) cfg_.maxSteps = std::max<int>(64, 2 * static_cast<int>(g.nodes().size()));
  bindings_ = defaultBindings(g_, cfg.batch, cfg.pooling);
  decisions_.clear();
  return_ = 0;
  steps_ = 0;
  done_ = stopped_ = false;
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
    CAGR_ASSIGN_OR_RETURN(pricing_, model_->prepare(g_, stats_, bindings_, true));
  }
  CAGR_ASSIGN_OR_RETURN(est_, model_->graphWithStats(g_, stats_, bindings_, {}, pricing_.get()));
  legalValid_ = false;
  return Status::ok();
}

const std::vector<Candidate>& Env::legalActions() const {
  if (!legalValid_) {
    legal_ = enumerateActions(g_, *target_, false);
    std::erase_if(legal_, [&](const Candidate& c) {
      return std::find(cfg_.disabled.begin(), cfg_.disabled.end(), c.action.kind) != cfg_.disabled.end() ||
             !cfg_.precision.allows(g_, c.action);
    });
    legalValid_ = true;
  }
  return legal_;
}

Status Env::apply(const Action& a, const std::string& label) {
  if (cfg_.verify) return applyAction(g_, *target_, a);
  const Rewrite* rw = rewriteFor(a.kind);
  if (rw == nullptr) return invalidArgument(std::string("no rewrite for ") + actionKindName(a.kind));
  return rw->apply(g_, *target_, a).withContext(label);
}

double Env::rewardFor(const GraphEstimate& before, const GraphEstimate& after) const {
  double dl = (after.latencyS - before.latencyS) / l0_;
  double dm = m0_ > 0 ? static_cast<double>(after.peakMemoryBytes - before.peakMemoryBytes) / static_cast<double>(m0_) : 0;
  double dv = after.variance - before.variance;
  return -dl - cfg_.lambdaM * dm - cfg_.lambdaC * dv;
}

StatusOr<Env::StepResult> Env::step(size_t index) {
  const auto& legal = legalActions();
  if (index >= legal.size()) return invalidArgument("action index " + std::to_string(index) + " out of range");
  Action a = legal[index].action;
  return step(a);
}

StatusOr<Env::StepResult> Env::step(const Action& a) {
  if (done_) return invalidArgument("the episode is over; reset first");
  StepResult r;
  if (a.kind == ActionKind::kStop) {
    done_ = stopped_ = true;
    r.done = true;
    return r;
  }
  Decision d;
  d.action = a;
  d.label = a.label(g_);
  d.latencyBeforeS = est_.latencyS;
  d.memoryBefore = est_.peakMemoryBytes;
  GraphEstimate before = est_;
  CAGR_RETURN_IF_ERROR(apply(a, d.label));
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

void Env::extendEpisode(int more) {
  if (stopped_ || more <= 0) return;
  cfg_.maxSteps = std::max(cfg_.maxSteps, steps_ + more);
  done_ = false;
}

StatusOr<double> Env::peek(size_t index) {
  const auto& legal = legalActions();
  if (index >= legal.size()) return invalidArgument("action index " + std::to_string(index) + " out of range");
  const Action& a = legal[index].action;
  if (a.kind == ActionKind::kStop) return 0.0;
  if (!decisionOnly(a)) {
    Env probe = clone();
    CAGR_ASSIGN_OR_RETURN(StepResult r, probe.step(a));
    return r.reward;
  }
  // Decisions live on nodes and values: save them, apply, price, restore.
  std::vector<NodeDecision> nodes;
  std::vector<ValueDecision> values;
  for (const Node& n : g_.nodes()) nodes.push_back(n.mir);
  for (size_t v = 0; v < g_.numValues(); ++v) values.push_back(g_.value(static_cast<ValueId>(v)).mir);
  Status applied = apply(a, "");
  StatusOr<GraphEstimate> after = applied.isOk() ? model_->graphWithStats(g_, stats_, bindings_, {}, pricing_.get())
                                                 : StatusOr<GraphEstimate>(applied);
  for (size_t i = 0; i < nodes.size(); ++i) g_.mutableNodes()[i].mir = nodes[i];
  for (size_t v = 0; v < values.size(); ++v) g_.mutableValue(static_cast<ValueId>(v)).mir = values[v];
  if (!after.isOk()) return after.status();
  return rewardFor(est_, *after);
}

}  // namespace cagr
