// Training the RL policy (issue 7): imitation of a search policy's
// trajectories, then PPO, across platforms, under a curriculum. The public
// face of src/train (no LibTorch in this header): options and one call.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "cagr/env.h"
#include "policy/rl_model.h"

namespace cagr::train {

struct TrainOptions {
  std::vector<std::string> platforms;  // built-in names or profile JSON paths
  std::vector<std::string> models;     // zoo models (zoo/onnx/<m>.dynamo.onnx)
  std::string repoDir = ".";           // where zoo/ is
  std::string output = "policy.rlp";
  std::string checkpointDir;      // a checkpoint per evaluation, when set
  std::string init;               // start from these weights (fine-tuning)
  std::string expert = "beam:8";  // the search policy imitated
  uint64_t seed = 1;
  int threads = 2;            // rollouts, expert runs, evaluation (LibTorch: 1)
  int syntheticPerStage = 8;  // synthetic curriculum graphs per stage
  // The evaluation that picks the kept weights also runs the synthetic graphs
  // (default: the zoo models only, when there are any).
  bool evalSynthetic = false;
  bool imitation = true, curriculum = true;
  int bcEpochs = 24;
  // Fine-tuning (--init) changes two defaults: imitation takes smaller
  // steps (a starting policy's confident, wrong choices on a new platform
  // give large first gradients, and at 1e-3 and above they killed the
  // network in 1 of 5 seeds; bench/rl/README.md).
  int bcMinibatch = 0;          // 0: 64, or 16 when fine-tuning
  double bcLr = 0;              // 0: 2e-3, or 5e-4 when fine-tuning
  int updates = 150;            // PPO updates
  int episodesPerPlatform = 4;  // per update: the batch is balanced across platforms
  int maxEpisodes = 0;  // episodes in all, expert rollouts included (0: no cap); the update reaching it is cut short
  int ppoEpochs = 3, ppoMinibatch = 64;
  double lr = 3e-4, clip = 0.2, gamma = 1.0, lambda = 0.95, entropyCoef = 0.01, valueCoef = 0.5;
  // Epochs fitting the value head alone on the expert's returns before
  // imitation (an experiment: it did not help few-shot fine-tuning).
  int valueWarmup = 0;
  double valueWarmupLr = 1e-3;
  int evalEvery = 10;  // greedy evaluation (and checkpoint) every N updates
  double minutes = 0;  // wall-clock budget (0: none); a timed-out run is not byte-reproducible
  rl::ModelConfig model;
  // batch, lambda_m, lambda_c (0.2), maxSteps; every precision, as the
  // policy must learn when a reduced one pays (users' plans are lossless
  // unless they ask, and then optimize() measures the budget).
  EnvConfig env{.maxSteps = 64, .precision = unrestrictedPrecision()};
  std::string command;  // the command line, recorded in the policy file
};

/// What a run produced (the policy file is written to options.output).
struct TrainReport {
  double bestEvalReturn = 0;  // mean greedy return on the zoo training cells (modelled)
  double expertReturn = 0;    // the expert's mean return on the same cells (0 without imitation)
  int updatesDone = 0, bcEpochsDone = 0;
  int episodesDone = 0;  // episodes run on the training platforms: expert rollouts (imitation) and PPO's
  std::vector<double> bcLoss, bcAccuracy;  // per imitation epoch
  std::string selected;                    // which evaluation the written policy comes from
};

/// Trains and writes the policy; progress lines go to `log`.
StatusOr<TrainReport> train(const TrainOptions& o, std::ostream& log);

/// Hardware normalisation from the training platforms' context vectors:
/// mean and max(std, 0.25) per feature.
void hwNormalisation(const std::vector<std::vector<float>>& contexts, std::vector<float>& mean,
                     std::vector<float>& scale);

}  // namespace cagr::train
