// Policies (DESIGN §4): what to do, given the legal actions the rewrite
// engine offers and the rewards the cost model gives. All behind one
// interface: none, random, greedy, beam (width k), exhaustive (small graphs),
// and rl, the learned GAT+FiLM policy (issue 7, src/policy/rl_*).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "cagr/env.h"

namespace cagr {

struct PolicyOptions {
  int beamWidth = 8;
  uint64_t seed = 1;
  int exhaustiveMaxNodes = 40;   // exhaustive refuses larger graphs
  int exhaustiveMaxStates = 200000;
  double minGain = 1e-6;         // greedy / beam stop below this reward
};

class Policy {
 public:
  virtual ~Policy() = default;
  virtual std::string name() const = 0;
  /// Drives `env` (just reset) until it is done or the policy stops. On
  /// return `env` holds the chosen plan.
  virtual Status run(Env& env) = 0;
};

/// "none", "random", "greedy", "beam" (width from options), "beam:K", "exhaustive",
/// "rl" (the default trained policy) or "rl:PATH" (an .rlp weights file),
/// "rl+greedy" / "rl+greedy:PATH" (rl's plan refined by greedy steps).
StatusOr<std::unique_ptr<Policy>> makePolicy(const std::string& name, const PolicyOptions& opts = {});

/// Greedy's choice in `env`: the index of the non-stop legal action of the
/// largest modelled reward above `minGain` (one whose rewrite fails is
/// passed over), else the stop action's.
size_t bestImmediateAction(Env& env, double minGain);

/// The learned GAT+FiLM policy (issue 7), run greedily by the core's own
/// forward pass; weights from `path`, or the default policy when empty.
/// `refineGreedily`: then greedy steps from its plan while one gains more
/// than `minGain` ("rl+greedy").
StatusOr<std::unique_ptr<Policy>> makeRlPolicy(const std::string& path = "", bool refineGreedily = false,
                                               double minGain = 1e-6);
/// Where the default policy file is: $CAGR_RL_POLICY, else
/// policies/default.rlp next to or one above the running binary, else in the
/// working directory.
StatusOr<std::string> defaultRlPolicyPath();

/// What optimize() measured of a plan's reduced precision (DESIGN §7).
struct PrecisionReport {
  /// max over outputs of max|y' - y| / max|y|, plan against the f32 model on
  /// the calibration batch (reference executor, precision emulated); < 0
  /// when nothing was measured (a lossless plan, or an unmeasured budget).
  double measuredError = -1;
  std::string calibration;            // where the calibration batch came from
  std::vector<std::string> keptF32;   // tables / nodes whose reduced precision measured over budget
  bool fellBackToF32 = false;         // no plan within budget in a few rounds: the lossless plan
};

/// The result of optimizing one graph for one target.
struct OptimizeResult {
  Graph plan;                       // MIR with decisions and metadata
  std::vector<Decision> decisions;  // applied actions, in order
  GraphEstimate baseline, final;    // modelled, on the target's profile
  double optimizeSeconds = 0;       // measured wall time of the search
  double episodeReturn = 0;         // sum of rewards (modelled)
  std::string policy;
  PrecisionReport precision;
  bool truncated = false;  // the episode's step limit, not the policy, ended the search
};

/// Resets an environment on `g`, runs `policy`, and returns the plan with
/// metadata (cagr.target, cagr.policy, cagr.batch, modelled latencies, the
/// precision options and, when they allow reduced precision under a finite
/// budget, the measured error). Lossless unless cfg.precision allows more:
/// then the plan is run against `g` on a calibration batch (cfg.calibration,
/// else synthesized) and only precision decisions that keep the measured
/// error within cfg.precision.maxError survive.
StatusOr<OptimizeResult> optimize(const Graph& g, const Target& t, Policy& policy, const EnvConfig& cfg = {});

}  // namespace cagr
