// Episodes for the trainer: sampled from the policy with the core's forward
// pass, replayed from a search policy's decisions, or run greedily for
// evaluation; plus GAE and a small deterministic thread pool.
#include "train/episodes.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <random>
#include <thread>

namespace cagr::train {
namespace {

constexpr size_t kTargetHorizon = 16;  // later expert decisions counted as targets

Sample observed(const Env& env, int platform, int stage) {
  Sample s;
  s.obs = rl::observe(env);
  s.platform = platform;
  s.stage = stage;
  return s;
}

// Rewards to go of an episode's samples (the value target of imitation).
void fillReturnsToGo(Episode& e) {
  double acc = 0;
  for (size_t i = e.samples.size(); i-- > 0;) {
    acc += e.samples[i].reward;
    e.samples[i].ret = static_cast<float>(acc);
  }
}

}  // namespace

StatusOr<Episode> sampleEpisode(const rl::PolicyModel& model, const Task& task, int taskIndex, const Platform& platform,
                                int platformIndex, const EnvConfig& cfg, uint64_t seed) {
  std::mt19937_64 rng(seed);
  Env env;
  CAGR_RETURN_IF_ERROR(env.reset(task.graph, platform.target, cfg));
  Episode e{taskIndex, platformIndex, {}, 0};
  while (!env.done()) {
    Sample s = observed(env, platformIndex, task.stage);
    CAGR_ASSIGN_OR_RETURN(rl::ModelOutput out, model.forward(s.obs));
    std::vector<double> weights(out.probs.begin(), out.probs.end());
    // An action whose rewrite fails is dropped and the draw repeated.
    StatusOr<Env::StepResult> r = invalidArgument("no action");
    for (size_t attempt = 0; attempt < weights.size() && !r.isOk(); ++attempt) {
      s.action = std::discrete_distribution<int>(weights.begin(), weights.end())(rng);
      r = env.step(static_cast<size_t>(s.action));
      weights[static_cast<size_t>(s.action)] = 0;
    }
    if (!r.isOk()) return r.status().withContext(task.name + " on " + platform.name);
    s.logProb = std::log(std::max(out.probs[static_cast<size_t>(s.action)], 1e-30f));
    s.value = out.value;
    s.reward = static_cast<float>(r->reward);
    e.samples.push_back(std::move(s));
  }
  e.episodeReturn = env.episodeReturn();
  return e;
}

StatusOr<Episode> expertEpisode(const std::string& expert, const Task& task, int taskIndex, const Platform& platform,
                                int platformIndex, const EnvConfig& cfg) {
  CAGR_ASSIGN_OR_RETURN(std::unique_ptr<Policy> policy, makePolicy(expert));
  CAGR_ASSIGN_OR_RETURN(OptimizeResult result, optimize(task.graph, platform.target, *policy, cfg));
  Env env;
  CAGR_RETURN_IF_ERROR(env.reset(task.graph, platform.target, cfg));
  std::vector<Action> actions;
  for (const Decision& d : result.decisions) actions.push_back(d.action);
  Episode e{taskIndex, platformIndex, {}, 0};
  auto indexOf = [&](const Action& a) {
    const auto& legal = env.legalActions();
    for (size_t i = 0; i < legal.size(); ++i) {
      if (legal[i].action == a) return static_cast<int>(i);
    }
    return -1;
  };
  for (size_t t = 0; t <= actions.size() && !env.done(); ++t) {
    Sample s = observed(env, platformIndex, task.stage);
    s.action = indexOf(t < actions.size() ? actions[t] : Action{});  // stop after the last decision
    if (s.action < 0) return internalError("replaying " + expert + " on " + task.name + ": a decision is not legal");
    s.targets.push_back(s.action);
    // Node ids hold until a structural action, so later decisions up to and
    // including the first structural one are recognisable here.
    for (size_t u = t + 1; u < actions.size() && u <= t + kTargetHorizon && decisionOnly(actions[u - 1]); ++u) {
      int k = indexOf(actions[u]);
      if (k >= 0 && std::find(s.targets.begin(), s.targets.end(), k) == s.targets.end()) s.targets.push_back(k);
    }
    CAGR_ASSIGN_OR_RETURN(Env::StepResult r, env.step(static_cast<size_t>(s.action)));
    s.reward = static_cast<float>(r.reward);
    e.samples.push_back(std::move(s));
  }
  e.episodeReturn = env.episodeReturn();
  fillReturnsToGo(e);
  return e;
}

StatusOr<double> greedyReturn(const rl::PolicyModel& model, const Task& task, const Platform& platform,
                              const EnvConfig& cfg) {
  std::unique_ptr<Policy> policy = rl::makePolicy(model);
  CAGR_ASSIGN_OR_RETURN(OptimizeResult r, optimize(task.graph, platform.target, *policy, cfg));
  return r.episodeReturn;
}

void computeGae(Episode& e, double gamma, double lambda) {
  double next = 0, gae = 0;
  for (size_t i = e.samples.size(); i-- > 0;) {
    Sample& s = e.samples[i];
    double delta = s.reward + gamma * next - s.value;
    gae = delta + gamma * lambda * gae;
    s.advantage = static_cast<float>(gae);
    s.ret = static_cast<float>(gae + s.value);
    next = s.value;
  }
}

Status parallelFor(size_t n, int threads, const std::function<Status(size_t)>& fn) {
  std::vector<Status> results(n);
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i = next++; i < n; i = next++) results[i] = fn(i);
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < threads && static_cast<size_t>(t) < n; ++t) pool.emplace_back(worker);
  worker();
  for (auto& t : pool) t.join();
  for (const Status& s : results) CAGR_RETURN_IF_ERROR(s);
  return Status::ok();
}

}  // namespace cagr::train
