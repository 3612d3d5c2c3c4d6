// The search policies: none, random, greedy (best immediate modelled
// reward), beam (width k over cumulative reward) and exhaustive (every set of
// actions on small graphs). They read only legal actions and rewards.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <map>
#include <random>
#include <set>

#include "cagr/analysis.h"
#include "cagr/policy.h"
#include "policy/precision_budget.h"

namespace cagr {
namespace {

class NonePolicy : public Policy {
 public:
  std::string name() const override { return "none"; }
  Status run(Env& env) override { return env.step(env.legalActions().size() - 1).status(); }
};

class RandomPolicy : public Policy {
 public:
  explicit RandomPolicy(uint64_t seed) : rng_(seed) {}
  std::string name() const override { return "random"; }
  Status run(Env& env) override {
    // Each step: stop with probability 1/8, else a uniformly drawn action.
    while (!env.done()) {
      size_t n = env.legalActions().size() - 1;  // without stop
      bool stop = n == 0 || std::uniform_int_distribution<int>(0, 7)(rng_) == 0;
      size_t pick = stop ? n : std::uniform_int_distribution<size_t>(0, n - 1)(rng_);
      auto r = env.step(pick);
      if (!r.isOk()) return r.status();
    }
    return Status::ok();
  }

 private:
  std::mt19937_64 rng_;
};

}  // namespace

size_t bestImmediateAction(Env& env, double minGain) {
  const size_t stop = env.legalActions().size() - 1;
  size_t best = stop;
  double bestReward = minGain;
  for (size_t i = 0; i < stop; ++i) {
    auto r = env.peek(i);
    if (r.isOk() && *r > bestReward) bestReward = *r, best = i;
  }
  return best;
}

namespace {

class GreedyPolicy : public Policy {
 public:
  explicit GreedyPolicy(double minGain) : minGain_(minGain) {}
  std::string name() const override { return "greedy"; }
  Status run(Env& env) override {
    while (!env.done()) CAGR_RETURN_IF_ERROR(env.step(bestImmediateAction(env, minGain_)).status());
    return Status::ok();
  }

 private:
  double minGain_;
};

// A plan's identity for de-duplication: the same set of applied actions in
// another order is the same plan.
std::string signature(const Env& env) {
  std::vector<std::string> labels;
  for (const Decision& d : env.decisions()) labels.push_back(d.label);
  std::sort(labels.begin(), labels.end());
  std::string s;
  for (const auto& l : labels) s += l + "\n";
  return s;
}

// A hash of the plan itself (structure and decisions; group labels by their
// first member), so states reached by different action sequences — a kernel
// set and set back, a branch moved and moved back — count once.
uint64_t planHash(const Graph& g) {
  uint64_t h = 1469598103934665603ull;
  auto mix = [&h](uint64_t x) { h = (h ^ x) * 1099511628211ull; };
  std::vector<std::pair<int32_t, int32_t>> firstOfLabel;
  for (size_t i = 0; i < g.nodes().size(); ++i) {
    const Node& n = g.nodes()[i];
    mix(static_cast<uint64_t>(n.op));
    for (ValueId v : n.inputs) mix(static_cast<uint64_t>(v + 2));
    for (ValueId v : n.outputs) mix(static_cast<uint64_t>(v + 2) << 20);
    int32_t group = -1;
    if (n.mir.group >= 0) {
      auto it = std::find_if(firstOfLabel.begin(), firstOfLabel.end(), [&](auto& p) { return p.first == n.mir.group; });
      if (it == firstOfLabel.end()) it = firstOfLabel.insert(firstOfLabel.end(), {n.mir.group, static_cast<int32_t>(i)});
      group = it->second;
    }
    mix(static_cast<uint64_t>(group + 1));
    mix(n.mir.kernel | (static_cast<uint64_t>(n.mir.stream) << 16) | (static_cast<uint64_t>(n.mir.math) << 24));
  }
  for (size_t v = 0; v < g.numValues(); ++v) {
    const ValueDecision& d = g.value(static_cast<ValueId>(v)).mir;
    mix(static_cast<uint64_t>(d.storage) | (static_cast<uint64_t>(d.layout) << 8));
  }
  for (ValueId v : g.outputs()) mix(static_cast<uint64_t>(v));
  return h;
}

// Beam search over cumulative reward. Children are scored with Env::peek
// (decision-only actions are applied and undone in place); only the k kept
// are materialised as copies.
class BeamPolicy : public Policy {
 public:
  BeamPolicy(int width, double minGain) : width_(std::max(1, width)), minGain_(minGain) {}
  std::string name() const override { return "beam:" + std::to_string(width_); }
  Status run(Env& env) override {
    std::vector<Env> beam{env.clone()};
    Env best = env.clone();
    while (true) {
      struct Child {
        double score;
        size_t parent, action;
        std::string key;
      };
      std::vector<Child> children;
      std::set<std::string> seen;
      for (size_t b = 0; b < beam.size(); ++b) {
        Env& parent = beam[b];
        if (parent.done()) continue;
        std::string base = signature(parent);
        for (size_t i = 0; i + 1 < parent.legalActions().size(); ++i) {
          auto r = parent.peek(i);
          if (!r.isOk()) continue;
          std::string key = base + parent.legalActions()[i].action.label(parent.graph());
          if (!seen.insert(key).second) continue;
          children.push_back(Child{parent.episodeReturn() + *r, b, i, std::move(key)});
        }
      }
      if (children.empty()) break;
      size_t keep = std::min(children.size(), static_cast<size_t>(width_));
      std::sort(children.begin(), children.end(), [](const Child& a, const Child& b) { return a.score > b.score; });
      std::vector<Env> next;
      std::set<uint64_t> plans;
      for (size_t i = 0; i < children.size() && next.size() < keep; ++i) {
        Env c = beam[children[i].parent].clone();
        if (c.step(children[i].action).isOk() && plans.insert(planHash(c.graph())).second) next.push_back(std::move(c));
      }
      if (next.empty()) break;
      bool improved = next.front().episodeReturn() > best.episodeReturn() + minGain_;
      if (improved) best = next.front().clone();
      // A step without gain may enable a later one (batching before fusing),
      // so the search goes on while the beam is within reach of the best.
      if (!improved && next.front().episodeReturn() + minGain_ < best.episodeReturn()) break;
      if (!improved && next.front().steps() > best.steps() + 2) break;
      beam = std::move(next);
    }
    env = std::move(best);
    if (!env.done()) CAGR_RETURN_IF_ERROR(env.step(env.legalActions().size() - 1).status());
    return Status::ok();
  }

 private:
  int width_;
  double minGain_;
};

class ExhaustivePolicy : public Policy {
 public:
  explicit ExhaustivePolicy(const PolicyOptions& o) : opts_(o) {}
  std::string name() const override { return "exhaustive"; }
  Status run(Env& env) override {
    if (static_cast<int>(env.graph().nodes().size()) > opts_.exhaustiveMaxNodes) {
      return unsupported("exhaustive search is for graphs of at most " + std::to_string(opts_.exhaustiveMaxNodes) +
                         " nodes; this one has " + std::to_string(env.graph().nodes().size()) +
                         " (use greedy or beam)");
    }
    Env best = env.clone();
    std::set<uint64_t> visited{planHash(env.graph())};
    size_t states = 0;
    // Depth-first over action sets; a set reached in another order is skipped.
    std::function<Status(const Env&)> visit = [&](const Env& s) -> Status {
      if (++states > static_cast<size_t>(opts_.exhaustiveMaxStates)) {
        return unsupported("exhaustive search exceeded " + std::to_string(opts_.exhaustiveMaxStates) + " states");
      }
      if (s.episodeReturn() > best.episodeReturn()) best = s.clone();
      if (s.done()) return Status::ok();
      for (size_t i = 0; i + 1 < s.legalActions().size(); ++i) {
        Env c = s.clone();
        if (!c.step(i).isOk()) continue;
        if (!visited.insert(planHash(c.graph())).second) continue;
        CAGR_RETURN_IF_ERROR(visit(c));
      }
      return Status::ok();
    };
    CAGR_RETURN_IF_ERROR(visit(env));
    env = std::move(best);
    if (!env.done()) CAGR_RETURN_IF_ERROR(env.step(env.legalActions().size() - 1).status());
    return Status::ok();
  }

 private:
  PolicyOptions opts_;
};

}  // namespace

StatusOr<std::unique_ptr<Policy>> makePolicy(const std::string& name, const PolicyOptions& opts) {
  if (name == "none") return std::unique_ptr<Policy>(new NonePolicy());
  if (name == "random") return std::unique_ptr<Policy>(new RandomPolicy(opts.seed));
  if (name == "greedy") return std::unique_ptr<Policy>(new GreedyPolicy(opts.minGain));
  if (name == "exhaustive") return std::unique_ptr<Policy>(new ExhaustivePolicy(opts));
  if (name == "beam") return std::unique_ptr<Policy>(new BeamPolicy(opts.beamWidth, opts.minGain));
  if (name.rfind("beam:", 0) == 0) {
    // Each beam state is a graph copy priced per step: past a few hundred
    // the search runs for hours, so wider beams are refused.
    constexpr int kMaxBeam = 256;
    char* end = nullptr;
    long k = std::strtol(name.c_str() + 5, &end, 10);
    if (end == name.c_str() + 5 || *end != '\0' || k < 1 || k > kMaxBeam) {
      return invalidArgument("beam width in '" + name + "' must be an integer in 1.." + std::to_string(kMaxBeam));
    }
    return std::unique_ptr<Policy>(new BeamPolicy(static_cast<int>(k), opts.minGain));
  }
  if (name == "rl") return makeRlPolicy();
  if (name.rfind("rl:", 0) == 0) return makeRlPolicy(name.substr(3));
  if (name == "rl+greedy") return makeRlPolicy("", true, opts.minGain);
  if (name.rfind("rl+greedy:", 0) == 0) return makeRlPolicy(name.substr(10), true, opts.minGain);
  return invalidArgument("unknown policy '" + name +
                         "' (none, random, greedy, beam, beam:K, exhaustive, rl, rl:PATH, rl+greedy, rl+greedy:PATH)");
}

StatusOr<OptimizeResult> optimizePlan(const Graph& g, const Target& t, Policy& policy, const EnvConfig& cfg) {
  auto start = std::chrono::steady_clock::now();
  Env env;
  CAGR_RETURN_IF_ERROR(env.reset(g, t, cfg));
  OptimizeResult r;
  r.baseline = env.estimate();
  CAGR_RETURN_IF_ERROR(policy.run(env));
  r.optimizeSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  r.final = env.estimate();
  r.episodeReturn = env.episodeReturn();
  r.decisions = env.decisions();
  r.policy = policy.name();
  r.truncated = env.truncated();
  r.plan = env.graph();
  r.plan.eraseDeadNodes();
  Attrs& meta = r.plan.mutableMeta();
  meta.set("target", t.hw.name);
  meta.set("backend", std::string(backendName(t.backend)));
  meta.set("policy", r.policy);
  meta.set("batch", cfg.batch);
  meta.set("baseline_latency_ms_modelled", r.baseline.latencyS * 1e3);
  meta.set("latency_ms_modelled", r.final.latencyS * 1e3);
  meta.set("peak_memory_bytes_modelled", r.final.peakMemoryBytes);
  meta.set("precision", cfg.precision.spec);
  CAGR_RETURN_IF_ERROR(verifyPlan(r.plan, t).withContext("the plan " + r.policy + " produced"));
  return r;
}

StatusOr<OptimizeResult> optimize(const Graph& g, const Target& t, Policy& policy, const EnvConfig& cfg) {
  CAGR_RETURN_IF_ERROR(checkBatch(g, cfg.batch));
  CAGR_ASSIGN_OR_RETURN(OptimizeResult r, optimizePlan(g, t, policy, cfg));
  if (cfg.precision.lossless() || !std::isfinite(cfg.precision.maxError)) return r;
  double searchSeconds = r.optimizeSeconds;
  auto start = std::chrono::steady_clock::now();
  CAGR_ASSIGN_OR_RETURN(r.precision, enforcePrecisionBudget(g, t, policy, cfg, r));
  r.optimizeSeconds = searchSeconds + std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  Attrs& meta = r.plan.mutableMeta();
  meta.set("max_error", cfg.precision.maxError);
  meta.set("measured_error", r.precision.measuredError);
  meta.set("calibration", r.precision.calibration);
  if (r.precision.fellBackToF32) meta.set("precision", std::string("fp32 (no plan within the budget)"));
  return r;
}

}  // namespace cagr
