// The trainer: the same seed gives the same policy bytes (one thread), a
// different seed different ones; imitation raises the expert-action
// accuracy; checkpoints are written; expert replays reproduce the search
// policy's return; the curriculum classifies graphs by stage; fine-tuning
// starts from a policy's score; a mismatched --init file is a clear error;
// --episodes caps the episodes, the expert's rollouts included.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "cagr/policy.h"
#include "rewrite/rewrite_test_util.h"
#include "train/episodes.h"
#include "train/trainer.h"

namespace cagr::train {
namespace {

namespace fs = std::filesystem;

std::string tempDir(const std::string& name) {
  fs::path p = fs::temp_directory_path() / ("cagr_train_test_" + name + "_" + std::to_string(::getpid()));
  fs::create_directories(p);
  return p.string();
}

std::string bytesOf(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A small run: synthetic graphs only, two platforms, one thread.
TrainOptions tiny(const std::string& out, uint64_t seed) {
  TrainOptions o;
  o.platforms = {"h200", "x86-64"};
  o.models = {};
  o.output = out;
  o.seed = seed;
  o.threads = 1;
  o.syntheticPerStage = 2;
  o.expert = "beam:2";
  o.bcEpochs = 3;
  o.updates = 2;
  o.episodesPerPlatform = 1;
  o.evalEvery = 1;
  o.model.hidden = 32;
  o.model.layers = 2;
  o.command = "test";
  return o;
}

TEST(Trainer, SameSeedSameBytesAndCheckpoints) {
  std::string dir = tempDir("seed");
  std::ostringstream log;
  TrainOptions a = tiny(dir + "/a.rlp", 5);
  a.checkpointDir = dir;
  ASSERT_TRUE(train(a, log).isOk()) << log.str();
  ASSERT_TRUE(train(tiny(dir + "/b.rlp", 5), log).isOk()) << log.str();
  ASSERT_TRUE(train(tiny(dir + "/c.rlp", 6), log).isOk()) << log.str();
  std::string ba = bytesOf(dir + "/a.rlp");
  ASSERT_FALSE(ba.empty());
  EXPECT_EQ(ba, bytesOf(dir + "/b.rlp"));
  EXPECT_NE(ba, bytesOf(dir + "/c.rlp"));
  EXPECT_TRUE(fs::exists(dir + "/after_imitation.rlp"));
  EXPECT_TRUE(fs::exists(dir + "/after_update_2.rlp"));
  // The progress lines carry reward, entropy and per-platform returns.
  EXPECT_NE(log.str().find("mean return"), std::string::npos);
  EXPECT_NE(log.str().find("entropy"), std::string::npos);
  EXPECT_NE(log.str().find("return by platform: h200"), std::string::npos);
  // The written policy loads and runs as `--policy rl:FILE`.
  auto policy = makePolicy("rl:" + dir + "/a.rlp");
  ASSERT_TRUE(policy.isOk()) << policy.status().message();
  fs::remove_all(dir);
}

TEST(Trainer, ImitationRaisesExpertAccuracy) {
  std::string dir = tempDir("bc");
  TrainOptions o = tiny(dir + "/p.rlp", 3);
  o.curriculum = false;  // the same data every epoch
  o.bcEpochs = 8;
  o.bcMinibatch = 16;
  o.bcLr = 3e-3;
  o.updates = 0;
  std::ostringstream log;
  auto r = train(o, log);
  ASSERT_TRUE(r.isOk()) << r.status().message();
  ASSERT_EQ(r->bcAccuracy.size(), 8u);
  EXPECT_GT(r->bcAccuracy.back(), r->bcAccuracy.front() + 0.1) << log.str();
  EXPECT_LT(r->bcLoss.back(), r->bcLoss.front()) << log.str();
  fs::remove_all(dir);
}

TEST(Trainer, ExpertReplayReproducesTheSearch) {
  Task t{"deepfm", rwtest::zoo("deepfm"), 0, false};
  t.stage = curriculumStage(t.graph);
  EXPECT_EQ(t.stage, kStageInteractions);
  Platform p{"a100", rwtest::target("a100")};
  EnvConfig cfg = TrainOptions{}.env;
  auto e = expertEpisode("beam:2", t, 0, p, 0, cfg);
  ASSERT_TRUE(e.isOk()) << e.status().message();
  auto search = makePolicy("beam:2");
  auto r = optimize(t.graph, p.target, **search, cfg);
  ASSERT_TRUE(r.isOk());
  EXPECT_NEAR(e->episodeReturn, r->episodeReturn, 1e-9);
  ASSERT_FALSE(e->samples.empty());
  // Each decision's targets start with the expert's own action and name legal actions.
  for (const Sample& s : e->samples) {
    ASSERT_FALSE(s.targets.empty());
    EXPECT_EQ(s.targets.front(), s.action);
    for (int k : s.targets) EXPECT_LT(k, static_cast<int>(s.obs.actionNodes.size()));
  }
  // Returns to go: the first is the whole return.
  EXPECT_NEAR(e->samples.front().ret, e->episodeReturn, 1e-4);
  // The last recorded decision is stop (unless the step limit ended it).
  const Sample& last = e->samples.back();
  if (static_cast<int>(e->samples.size()) <= cfg.maxSteps) {
    EXPECT_EQ(last.action + 1, static_cast<int>(last.obs.actionNodes.size()));
  }
}

TEST(Trainer, CurriculumStagesAndSchedule) {
  auto tasks = syntheticTasks(2, 9);
  ASSERT_TRUE(tasks.isOk()) << tasks.status().message();
  ASSERT_EQ(tasks->size(), 6u);
  for (const Task& t : *tasks) EXPECT_EQ(curriculumStage(t.graph), t.stage) << t.name;
  EXPECT_EQ(curriculumStage(rwtest::zoo("dlrm_criteo")), kStageInteractions);
  EXPECT_EQ(allowedStage(0.0, true), kStageMlp);
  EXPECT_EQ(allowedStage(0.3, true), kStageEmbeddings);
  EXPECT_EQ(allowedStage(0.9, true), kStageInteractions);
  EXPECT_EQ(allowedStage(0.0, false), kStageInteractions);
}

// Some synthetic weights and tables are computed from constants (a factorized
// matrix, then a bias, scale or activation), so training meets
// fold_constants: on such a graph folding is legal, gains, and leaves a plan
// that verifies (EnvConfig::verify); on the others it is not offered.
TEST(Trainer, SyntheticGraphsHoldFoldableParameters) {
  auto tasks = syntheticTasks(8, 1);
  ASSERT_TRUE(tasks.isOk()) << tasks.status().message();
  auto t = resolveTarget("h100");
  ASSERT_TRUE(t.isOk());
  int withFolds = 0;
  for (const Task& task : *tasks) {
    bool computed = false;
    for (const Node& n : task.graph.nodes()) computed = computed || n.name.find("_factor") != std::string::npos;
    Env env;
    EnvConfig cfg;
    cfg.verify = true;
    ASSERT_TRUE(env.reset(task.graph, *t, cfg).isOk()) << task.name;
    int fold = -1;
    for (size_t i = 0; i + 1 < env.legalActions().size(); ++i) {
      if (env.legalActions()[i].action.kind != ActionKind::kFoldConstants) continue;
      fold = static_cast<int>(i);
      auto r = env.peek(i);
      ASSERT_TRUE(r.isOk()) << task.name << ": " << r.status().message();
      EXPECT_GT(*r, 0.0) << task.name << ": folding a computed parameter gains";
    }
    EXPECT_EQ(fold >= 0, computed) << task.name;
    if (fold >= 0) {
      auto r = env.step(static_cast<size_t>(fold));
      ASSERT_TRUE(r.isOk()) << task.name << ": " << r.status().message();
    }
    withFolds += fold >= 0 ? 1 : 0;
  }
  EXPECT_GE(withFolds, 4) << "of " << tasks->size() << " synthetic graphs";
}

// With zoo models the weights are picked on the zoo cells only, unless
// evalSynthetic adds the synthetic graphs' cells.
TEST(Trainer, EvaluationCellsWithAndWithoutSyntheticGraphs) {
  std::string dir = tempDir("evalcells");
  for (bool synthetic : {false, true}) {
    TrainOptions o = tiny(dir + "/p.rlp", 4);
    o.models = {"wide_deep"};
    o.repoDir = CAGR_SOURCE_DIR;
    o.platforms = {"h200"};
    o.syntheticPerStage = 1;
    o.bcEpochs = 0;
    o.updates = 0;
    o.imitation = false;
    o.evalSynthetic = synthetic;
    std::ostringstream log;
    auto r = train(o, log);
    ASSERT_TRUE(r.isOk()) << r.status().message() << "\n" << log.str();
    const std::string want = synthetic ? "4 graphs (1 zoo), 1 platforms, 4 evaluation cells"
                                       : "4 graphs (1 zoo), 1 platforms, 1 evaluation cells";
    EXPECT_NE(log.str().find(want), std::string::npos) << log.str();
  }
  fs::remove_all(dir);
}

// Trains dir/p.rlp (one imitation epoch, no PPO) and returns the options
// that fine-tune from it on tpu-v4 into dir/f.rlp.
TrainOptions fineTuningFromAStartingPolicy(const std::string& dir) {
  TrainOptions o = tiny(dir + "/p.rlp", 1);
  o.bcEpochs = 1;
  o.updates = 0;
  std::ostringstream log;
  EXPECT_TRUE(train(o, log).isOk()) << log.str();
  TrainOptions f = tiny(dir + "/f.rlp", 2);
  f.init = o.output;
  f.platforms = {"tpu-v4"};
  return f;
}

TEST(Trainer, FineTunesFromAPolicyAndRefusesAMismatch) {
  std::string dir = tempDir("init");
  // Fine-tuning: no imitation, a few PPO updates on one platform, starting
  // from p.rlp, whose own score is evaluated first and kept if nothing beats it.
  TrainOptions f = fineTuningFromAStartingPolicy(dir);
  f.imitation = false;
  f.updates = 2;
  std::ostringstream flog;
  auto ft = train(f, flog);
  ASSERT_TRUE(ft.isOk()) << ft.status().message();
  EXPECT_NE(flog.str().find("[eval initial weights]"), std::string::npos) << flog.str();
  EXPECT_EQ(ft->updatesDone, 2);
  EXPECT_FALSE(ft->selected.empty());
  // Another network shape is refused, naming the file.
  TrainOptions bad = tiny(dir + "/q.rlp", 1);
  bad.init = dir + "/p.rlp";
  bad.model.hidden = 64;
  std::ostringstream log;
  auto r = train(bad, log);
  ASSERT_FALSE(r.isOk());
  EXPECT_NE(r.status().message().find("--init " + dir + "/p.rlp"), std::string::npos) << r.status().message();
  fs::remove_all(dir);
}

TEST(Trainer, FineTuningImitatesWithinTheEpisodeCap) {
  std::string dir = tempDir("fewshot");
  // 6 graphs on one new platform: 6 expert rollouts, then PPO gets the 2
  // episodes left of 8 (one an update).
  TrainOptions f = fineTuningFromAStartingPolicy(dir);
  f.updates = 10;
  f.maxEpisodes = 8;
  f.evalEvery = 100;
  std::ostringstream flog;
  auto ft = train(f, flog);
  ASSERT_TRUE(ft.isOk()) << ft.status().message();
  EXPECT_EQ(ft->episodesDone, 8) << flog.str();
  EXPECT_EQ(ft->updatesDone, 2) << flog.str();
  EXPECT_EQ(ft->bcEpochsDone, 3) << flog.str();
  std::string text = flog.str();
  EXPECT_LT(text.find("[eval initial weights]"), text.find("[imitation]")) << text;
  EXPECT_NE(text.find("[eval after imitation]"), std::string::npos) << text;
  // A cap below the expert's rollouts is refused, naming the option.
  f.maxEpisodes = 5;
  auto r = train(f, flog);
  ASSERT_FALSE(r.isOk());
  EXPECT_NE(r.status().message().find("--episodes 5"), std::string::npos) << r.status().message();
  fs::remove_all(dir);
}

TEST(Trainer, EpisodeCapStopsPpo) {
  std::string dir = tempDir("episodes");
  TrainOptions o = tiny(dir + "/p.rlp", 4);
  o.imitation = false;
  o.updates = 10;
  o.episodesPerPlatform = 2;  // 4 episodes an update over the two platforms
  o.maxEpisodes = 7;          // the first update draws 4, the second the 3 left, then PPO stops
  o.evalEvery = 100;
  std::ostringstream log;
  auto r = train(o, log);
  ASSERT_TRUE(r.isOk()) << r.status().message();
  EXPECT_EQ(r->episodesDone, 7) << log.str();
  EXPECT_EQ(r->updatesDone, 2) << log.str();
  // The cut-short update still evaluates (it is the last).
  EXPECT_NE(log.str().find("[eval after update 2]"), std::string::npos) << log.str();
  fs::remove_all(dir);
}

}  // namespace
}  // namespace cagr::train
