// Experience for the trainer, collected with the core's forward pass (no
// LibTorch): episodes sampled from the current policy (PPO), expert
// trajectories replayed from a search policy (imitation), greedy
// evaluation, and GAE.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "cagr/env.h"
#include "policy/rl_model.h"
#include "train/tasks.h"

namespace cagr::train {

/// One decision: what the policy saw and did.
struct Sample {
  Observation obs;
  int action = 0;  // index into the observation's legal actions
  /// Imitation: every action the expert endorses here — its own, plus the
  /// later decisions it took that are already legal and reachable without
  /// a structural change in between (their order is the expert's whim).
  std::vector<int> targets;
  float logProb = 0;    // under the behaviour policy (PPO)
  float value = 0;      // the behaviour policy's value estimate
  float reward = 0;     // modelled, from Env
  float advantage = 0;  // GAE (PPO)
  float ret = 0;        // return to go (value target)
  int platform = 0;     // index into the training platforms
  int stage = 0;        // the task's curriculum stage
};

struct Episode {
  int task = 0, platform = 0;
  std::vector<Sample> samples;
  double episodeReturn = 0;  // sum of rewards (modelled)
};

/// Runs one episode of `task` on `platform`, sampling each action from the
/// model's probabilities with a generator seeded by `seed`.
StatusOr<Episode> sampleEpisode(const rl::PolicyModel& model, const Task& task, int taskIndex, const Platform& platform,
                                int platformIndex, const EnvConfig& cfg, uint64_t seed);

/// Runs the search policy `expert` ("beam:8", "greedy") on the task and
/// replays its decisions to record (observation, action, targets), stop
/// included; returns are the expert's rewards to go.
StatusOr<Episode> expertEpisode(const std::string& expert, const Task& task, int taskIndex, const Platform& platform,
                                int platformIndex, const EnvConfig& cfg);

/// The modelled return of the greedy `rl` policy with `model` on the task.
StatusOr<double> greedyReturn(const rl::PolicyModel& model, const Task& task, const Platform& platform,
                              const EnvConfig& cfg);

/// Fills advantage (GAE(gamma, lambda)) and ret (advantage + value) of every
/// sample; the episode ends after its last sample (value 0 beyond).
void computeGae(Episode& e, double gamma, double lambda);

/// Calls fn(i) for i in [0, n) on `threads` threads; every call writes only
/// its own slot, so results do not depend on the thread count. Returns the
/// first error by index.
Status parallelFor(size_t n, int threads, const std::function<Status(size_t)>& fn);

}  // namespace cagr::train
