// The environment policies act in (DESIGN §4): state s_t = (G_t, c_H), legal
// actions from the rewrite engine, transitions by applying one, and the
// reward R = -dL/L0 - lambda_m * dM/M0 - lambda_c * dV, where L is the
// modelled latency, M the modelled peak memory and V the modelled normalised
// run-to-run variance of the current plan (summed over an episode the reward
// is -(L_T - L0)/L0 - lambda_m (M_T - M0)/M0 - lambda_c (V_T - V0)). Every
// figure here is modelled by the cost model on the target's profile.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "cagr/cost.h"
#include "cagr/graph.h"
#include "cagr/mir.h"
#include "cagr/rewrite.h"

namespace cagr {

/// Which reduced precisions a plan may use and what output error they may
/// cost (DESIGN §7: lossless unless asked). The default allows none: every
/// plan keeps f32 math and f32 storage.
struct PrecisionOptions {
  std::vector<Precision> math;     // besides f32: tf32 / bf16 / f16 math of GEMM-like nodes and CIN
  std::vector<Precision> storage;  // besides f32: bf16 / f16 / int8_rowwise embedding tables
  /// Budget on max over outputs of max|y' - y| / max|y|, the plan against the
  /// all-f32 model on a calibration batch. optimize() measures it and keeps a
  /// precision decision only while the error stays within it. +inf: not
  /// measured (the stated bounds alone; policy training only).
  double maxError = 0;
  /// Tables and nodes, by name, kept f32 whatever the sets above allow (the
  /// measured error of their reduced precision was over the budget).
  std::vector<std::string> keepF32;
  /// The spec it was parsed from ("fp32", "bf16,int8-tables", ...).
  std::string spec = "fp32";
  bool lossless() const { return math.empty() && storage.empty(); }
  /// Whether a set_precision action of `g` stays within these options.
  bool allows(const Graph& g, const Action& a) const;
};
/// Parses "fp32" (lossless, the default) or a comma list of tf32 (tf32
/// math), bf16 (bf16 math and tables), fp16 (f16 math and tables) and
/// int8-tables (int8 row-wise tables). `maxError` < 0 picks the largest
/// stated bound of the precisions asked for (statedErrorBound). Fails with a
/// message naming `flag` on an unknown word, a bad budget, or a precision
/// `t` cannot run.
StatusOr<PrecisionOptions> parsePrecisionOptions(const std::string& spec, double maxError, const Target& t,
                                                 const std::string& flag = "--precision");

/// Every reduced precision (the target's legality still applies), unmeasured
/// (maxError +inf): what policy training and the precision rewrites' tests
/// explore. Never a user's default.
PrecisionOptions unrestrictedPrecision();

struct EnvConfig {
  int64_t batch = 256;     // binds N (and other symbols: batch * pooling)
  int64_t pooling = 1;
  double lambdaM = 0.1;    // weight of peak memory in the reward
  double lambdaC = 0.2;    // weight of run-to-run variance
  /// Episode length limit (then done); 0: max(64, 2 x the graph's nodes),
  /// so a search on a wide model is not cut off mid-plan (policy training
  /// sets it explicitly).
  int maxSteps = 0;
  bool verify = false;     // run verifyPlan after every step (tests)
  /// Action kinds never offered (e.g. kSetPrecision for an all-fp32 plan).
  std::vector<ActionKind> disabled;
  /// Reduced precisions the plan may use (none by default).
  PrecisionOptions precision;
  /// The batch optimize() measures a precision budget on, keyed by input
  /// name; empty: synthesized from the inputs' types (synthesizeInputs).
  std::vector<std::pair<std::string, Tensor>> calibration;
};

/// What a learned policy sees: node features, edges, the hardware context
/// vector c_H, and one feature row per legal action.
struct Observation {
  static constexpr int kNodeFeatures = 16;
  static constexpr int kActionFeatures = kNumActionKinds + 4;
  int numNodes = 0;
  std::vector<float> nodeFeatures;     // numNodes x kNodeFeatures, row-major
  std::vector<std::pair<int, int>> edges;  // producer node -> consumer node
  std::vector<float> hw;               // contextVector(profile)
  std::vector<float> actionFeatures;   // legal actions x kActionFeatures
  std::vector<std::vector<int>> actionNodes;  // nodes each legal action touches
};

/// One applied action and what it changed (modelled).
struct Decision {
  Action action;
  std::string label;
  double latencyBeforeS = 0, latencyAfterS = 0;
  int64_t memoryBefore = 0, memoryAfter = 0;
  double reward = 0;
};

class Env {
 public:
  Env();
  /// Starts an episode on `g` (HIR or a partial plan) for `t`.
  Status reset(const Graph& g, const Target& t, const EnvConfig& cfg = {});
  /// Legal candidates of the current state; stop is always last. Enumerated
  /// on first use after a step (peeking never enumerates).
  const std::vector<Candidate>& legalActions() const;
  struct StepResult {
    double reward = 0;
    bool done = false;
  };
  /// Applies legal action `index` (stop ends the episode).
  StatusOr<StepResult> step(size_t index);
  /// Applies `a` (must be legal in the current state).
  StatusOr<StepResult> step(const Action& a);
  /// Reward `index` would earn, without changing the state (decision-only
  /// actions are applied and undone in place; others on a copy).
  StatusOr<double> peek(size_t index);
  Observation observe() const;
  /// An independent copy (shares the immutable target and constant data).
  Env clone() const { return *this; }

  const Graph& graph() const { return g_; }
  const Target& target() const { return *target_; }
  const EnvConfig& config() const { return cfg_; }
  const GraphEstimate& estimate() const { return est_; }
  double initialLatencyS() const { return l0_; }
  int64_t initialMemory() const { return m0_; }
  double initialVariance() const { return v0_; }
  /// Sum of rewards so far.
  double episodeReturn() const { return return_; }
  const std::vector<Decision>& decisions() const { return decisions_; }
  bool done() const { return done_; }
  /// True when the step limit, not the policy, ended the episode.
  bool truncated() const { return done_ && !stopped_ && steps_ >= cfg_.maxSteps; }
  int steps() const { return steps_; }
  /// Room for at least `more` further steps, also in an episode the step
  /// limit ended (one ended by stop stays over): what `rl+greedy` refines a
  /// plan with.
  void extendEpisode(int more);

 private:
  Status refresh(bool structureChanged);
  /// Applies `a` to the graph (no pricing, no enumeration).
  Status apply(const Action& a, const std::string& label);
  double rewardFor(const GraphEstimate& before, const GraphEstimate& after) const;

  Graph g_;
  std::shared_ptr<const Target> target_;
  std::shared_ptr<const RooflineCostModel> model_;
  EnvConfig cfg_;
  SymbolBindings bindings_;
  GraphStats stats_;  // valid for the current graph structure
  std::shared_ptr<const PricingCache> pricing_;  // likewise
  GraphEstimate est_;
  mutable std::vector<Candidate> legal_;
  mutable bool legalValid_ = false;
  std::vector<Decision> decisions_;
  double l0_ = 0, v0_ = 0, return_ = 0;
  int64_t m0_ = 0;
  int steps_ = 0;
  bool done_ = false;
  bool stopped_ = false;  // ended by the stop action
};

/// True for actions that only change MIR decisions (not the HIR structure):
/// the graph's stats stay valid and the action can be undone by restoring
/// decisions.
bool decisionOnly(const Action& a);

}  // namespace cagr
