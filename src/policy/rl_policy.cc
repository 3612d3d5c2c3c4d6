// The `rl` policy: runs the trained network greedily (the most probable legal
// action each step, until stop is the most probable or the episode's step
// limit), and returns the best valid plan along that one trajectory by the
// environment's modelled return. Weights come from an .rlp file: the one
// named, else the default policy found next to the binary. `rl+greedy`
// then refines that plan with greedy steps (the action of the best modelled
// reward while one gains and the plan verifies): the policy's plan with
// the one-step gains it left, a hybrid reported beside `rl`, not as it.
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <numeric>

#include "cagr/policy.h"
#include "policy/rl_model.h"

namespace cagr {
namespace {

namespace fs = std::filesystem;

// Where the default policy is looked for, in order.
std::vector<std::string> defaultPolicyCandidates() {
  std::vector<std::string> out;
  if (const char* env = std::getenv("CAGR_RL_POLICY"); env != nullptr && *env != '\0') out.emplace_back(env);
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    fs::path dir = exe.parent_path();
    out.push_back((dir / "../policies/default.rlp").lexically_normal().string());
    out.push_back((dir / "policies/default.rlp").string());
    out.push_back((dir / "../share/cagr/policies/default.rlp").lexically_normal().string());
  }
  out.emplace_back("policies/default.rlp");
  return out;
}

class RlPolicy : public Policy {
 public:
  RlPolicy(rl::PolicyModel model, bool refine, double minGain)
      : model_(std::move(model)), refine_(refine), minGain_(minGain) {}
  std::string name() const override { return refine_ ? "rl+greedy" : "rl"; }
  Status run(Env& env) override {
    // Every state that improved on the best so far: the result is the last
    // of them whose plan verifies (a sequence of legal actions has been seen
    // to leave an invalid plan; the start state is the HIR, always valid).
    std::vector<Env> improving{env.clone()};
    while (!env.done()) {
      CAGR_RETURN_IF_ERROR(stepGreedily(env));
      if (env.episodeReturn() > improving.back().episodeReturn()) improving.push_back(env.clone());
    }
    while (improving.size() > 1 && !planVerifies(improving.back())) improving.pop_back();
    env = std::move(improving.back());
    if (refine_) refineGreedily(env);
    if (!env.done()) CAGR_RETURN_IF_ERROR(env.step(env.legalActions().size() - 1).status());
    return Status::ok();
  }

 private:
  // Applies the most probable action; one whose rewrite fails is skipped.
  Status stepGreedily(Env& env) const {
    CAGR_ASSIGN_OR_RETURN(rl::ModelOutput out, model_.forward(rl::observe(env)));
    std::vector<size_t> order(out.probs.size());
    std::iota(order.begin(), order.end(), size_t{0});
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return out.probs[a] > out.probs[b]; });
    Status last = Status::ok();
    for (size_t k = 0; k < order.size(); ++k) {
      auto r = env.step(order[k]);
      if (r.isOk()) return Status::ok();
      last = r.status();
    }
    return last.withContext("rl policy: no action could be applied");
  }

  // Greedy steps from the policy's plan: the non-stop action of the best
  // modelled reward while it is above minGain_ and its plan verifies.
  void refineGreedily(Env& env) const {
    env.extendEpisode(env.config().maxSteps);  // the policy's plan may have used up the episode's steps
    while (!env.done()) {
      const size_t best = bestImmediateAction(env, minGain_);
      if (best + 1 == env.legalActions().size()) return;  // stop: nothing gains
      Env next = env.clone();
      if (!next.step(best).isOk() || !planVerifies(next)) return;
      env = std::move(next);
    }
  }

  // What optimize() checks of the result.
  static bool planVerifies(const Env& e) {
    Graph plan = e.graph();
    plan.eraseDeadNodes();
    return verifyPlan(plan, e.target()).isOk();
  }

  rl::PolicyModel model_;
  bool refine_ = false;
  double minGain_ = 1e-6;
};

}  // namespace

StatusOr<std::string> defaultRlPolicyPath() {
  std::vector<std::string> tried = defaultPolicyCandidates();
  std::error_code ec;
  for (const std::string& p : tried) {
    if (fs::is_regular_file(p, ec)) return p;
  }
  std::string list;
  for (const std::string& p : tried) list += (list.empty() ? "" : ", ") + p;
  return notFound("no default RL policy found (tried " + list +
                  "); name one with --policy rl:PATH or set CAGR_RL_POLICY");
}

StatusOr<std::unique_ptr<Policy>> makeRlPolicy(const std::string& path, bool refineGreedily, double minGain) {
  std::string file = path;
  if (file.empty()) {
    CAGR_ASSIGN_OR_RETURN(file, defaultRlPolicyPath());
  }
  CAGR_ASSIGN_OR_RETURN(rl::PolicyModel model, rl::PolicyModel::load(file));
  if (static_cast<size_t>(model.config().hwFeatures) != contextVectorSize()) {
    return invalidArgument("policy file '" + file +
                           "': config.hw_features = " + std::to_string(model.config().hwFeatures) +
                           "; this build's hardware context has " + std::to_string(contextVectorSize()));
  }
  return std::unique_ptr<Policy>(new RlPolicy(std::move(model), refineGreedily, minGain));
}

std::unique_ptr<Policy> rl::makePolicy(PolicyModel model) {
  return std::make_unique<RlPolicy>(std::move(model), false, 1e-6);
}

}  // namespace cagr
