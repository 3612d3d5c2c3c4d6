// cagr-train (also run as `cagr train`): trains the RL policy and writes an
// .rlp weights file that `cagr optimize --policy rl:FILE` runs.
#include <iostream>

#include <CLI/CLI.hpp>

#include "train/tasks.h"
#include "train/trainer.h"

using namespace cagr;

namespace {

struct Args {
  std::string platforms = "v100,a100,h100,h200,mi100,mi250x,tpu-v3,x86-64";
  std::string models = "dlrm_criteo,dlrm_avazu,deepfm,xdeepfm,dcnv2,wide_deep";
  bool noImitation = false, noCurriculum = false, noFilm = false;
};

void addOptions(CLI::App& app, train::TrainOptions& o, Args& a) {
  app.add_option("--platforms,--platform", a.platforms,
                 "training platforms: built-in names or profile JSON files, comma-separated");
  app.add_option("--models", a.models, "zoo models, comma-separated (empty: synthetic graphs only)");
  app.add_option("-o,--output", o.output, "policy file to write (.rlp): the best greedy-evaluated weights");
  app.add_option("--checkpoint-dir", o.checkpointDir, "write a checkpoint (.rlp) at every evaluation into this folder");
  app.add_option("--init,--finetune", o.init,
                 "start from this policy's weights and hardware normalisation (.rlp); with --synthetic 0, few "
                 "--updates and --episodes this fine-tunes to new platforms (imitating the expert there first, "
                 "unless --no-imitation)");
  app.add_option("--repo", o.repoDir, "repository root holding zoo/ (default .)");
  app.add_option("--expert", o.expert, "search policy imitated before PPO (default beam:8)");
  app.add_option("--seed", o.seed, "seed of everything random (same seed, one thread: same file bytes)");
  app.add_option("--threads", o.threads,
                 "threads for rollouts, expert runs and evaluation (default 2; LibTorch uses one)");
  app.add_option("--synthetic", o.syntheticPerStage, "synthetic curriculum graphs per stage (default 8)");
  app.add_flag("--eval-synthetic", o.evalSynthetic,
               "the evaluation that picks the kept weights runs the synthetic graphs too "
               "(default: the zoo models only)");
  app.add_option("--bc-epochs", o.bcEpochs, "behaviour-cloning epochs (default 24)");
  app.add_option("--bc-lr", o.bcLr, "behaviour-cloning learning rate (default 2e-3; 5e-4 with --finetune)");
  app.add_option("--bc-minibatch", o.bcMinibatch,
                 "decisions per behaviour-cloning step (default 64; 16 with --finetune)");
  app.add_option("--updates", o.updates, "PPO updates (default 150)");
  app.add_option("--episodes-per-platform", o.episodesPerPlatform, "episodes per platform in each update (default 4)");
  app.add_option("--episodes", o.maxEpisodes,
                 "cap on the episodes run in all, the expert's rollouts (one per graph and platform) included "
                 "(0: none; few-shot fine-tuning); the PPO update that reaches it draws only what is left, platform "
                 "by platform")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--ppo-epochs", o.ppoEpochs, "passes over each update's batch (default 3)");
  app.add_option("--lr", o.lr, "PPO learning rate (default 3e-4)");
  app.add_option("--value-warmup", o.valueWarmup,
                 "epochs fitting the value head alone on the expert's returns before imitation (default 0)");
  app.add_option("--value-warmup-lr", o.valueWarmupLr, "learning rate of the value warm-up (default 1e-3)");
  app.add_option("--clip", o.clip, "PPO clip range (default 0.2)");
  app.add_option("--entropy", o.entropyCoef, "entropy bonus (default 0.01)");
  app.add_option("--gamma", o.gamma, "discount (default 1)");
  app.add_option("--gae-lambda", o.lambda, "GAE lambda (default 0.95)");
  app.add_option("--eval-every", o.evalEvery, "greedy evaluation every N updates (default 10)");
  app.add_option("--minutes", o.minutes, "wall-clock budget in minutes (0: none; a timed-out run is not reproducible)");
  app.add_option("--batch", o.env.batch, "batch size plans are priced at (default 256)");
  app.add_option("--lambda-m", o.env.lambdaM, "weight of peak memory in the reward (default 0.1)");
  app.add_option("--lambda-c", o.env.lambdaC, "weight of run-to-run variance in the reward (default 0.2)");
  app.add_option("--max-steps", o.env.maxSteps, "episode length limit (default 64)");
  app.add_option("--hidden", o.model.hidden, "embedding width (default 64)");
  app.add_option("--heads", o.model.heads, "attention heads (default 4)");
  app.add_option("--layers", o.model.layers, "graph attention layers (default 3)");
  app.add_flag("--no-imitation", a.noImitation, "skip imitation pre-training (ablation)");
  app.add_flag("--no-curriculum", a.noCurriculum, "all graphs from the start (ablation)");
  app.add_flag("--no-film", a.noFilm, "no FiLM: the hardware context only reaches the value head (ablation)");
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"cagr-train: trains the GAT+FiLM RL policy (imitation of a search policy, then PPO)"};
  train::TrainOptions o;
  Args a;
  addOptions(app, o, a);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  o.platforms = train::splitList(a.platforms);
  o.models = train::splitList(a.models);
  o.imitation = !a.noImitation;
  o.curriculum = !a.noCurriculum;
  o.model.film = !a.noFilm;
  // The recorded command leaves out where files go, so the same training
  // writes the same bytes wherever it writes them.
  o.command = "cagr train";
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    bool location = arg == "-o" || arg == "--output" || arg == "--checkpoint-dir";
    if (location) ++i;
    if (!location && arg.rfind("--output=", 0) != 0 && arg.rfind("--checkpoint-dir=", 0) != 0) o.command += " " + arg;
  }
  auto r = train::train(o, std::cout);
  if (!r.isOk()) {
    std::cerr << "cagr train: error: " << r.status().message() << "\n";
    return 1;
  }
  return 0;
}
