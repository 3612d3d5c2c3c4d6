// The core's forward pass (no LibTorch) against the LibTorch network on the
// same weights: action probabilities within 1e-5 and values within 1e-4 on
// zoo graphs and platforms, at the start and mid-episode, for fresh random
// weights, for the no-FiLM variant and for the committed default policy.
#include <gtest/gtest.h>

#include <filesystem>

#include "cagr/policy.h"
#include "rewrite/rewrite_test_util.h"
#include "train/model.h"
#include "train/trainer.h"

namespace cagr::train {
namespace {

// Observations of `model` on `platform`: the first state and one after a
// few steps (so decision features are set).
std::vector<Observation> observations(const std::string& model, const std::string& platform) {
  Env env;
  EnvConfig cfg;
  cfg.batch = 1024;
  cfg.precision = unrestrictedPrecision();  // the states training sees
  EXPECT_TRUE(env.reset(rwtest::zoo(model), rwtest::target(platform), cfg).isOk());
  std::vector<Observation> out{rl::observe(env)};
  for (int i = 0; i < 4 && env.legalActions().size() > 1; ++i) {
    EXPECT_TRUE(env.step(env.legalActions().size() / 2).isOk());
  }
  out.push_back(rl::observe(env));
  return out;
}

// Random weights, perturbed by `noise` so the outputs are far from uniform.
PolicyNet randomNet(const rl::ModelConfig& c, uint64_t seed, double noise) {
  torch::manual_seed(seed);
  std::vector<std::vector<float>> contexts;
  for (const char* p : {"v100", "mi100", "tpu-v3", "x86-64"}) {
    std::vector<float> v;
    for (double x : contextVector(rwtest::target(p).hw)) v.push_back(static_cast<float>(x));
    contexts.push_back(v);
  }
  std::vector<float> mean, scale;
  hwNormalisation(contexts, mean, scale);
  PolicyNet net(c, mean, scale);
  torch::NoGradGuard guard;
  for (auto& p : net->parameters()) p.add_(torch::randn(p.sizes()) * noise);
  return net;
}

// Compares the two forward passes on a batch of observations of several
// models and platforms, LibTorch computing in `dtype`; returns the largest
// probability difference.
double compare(PolicyNet& net, const rl::PolicyModel& core, torch::ScalarType dtype = torch::kFloat) {
  std::vector<Observation> all;
  for (const char* model : {"dlrm_criteo", "deepfm", "xdeepfm", "wide_deep"}) {
    for (const char* platform : {"h200", "mi250x", "tpu-v4", "x86-64"}) {
      for (Observation& o : observations(model, platform)) all.push_back(std::move(o));
    }
  }
  std::vector<const Observation*> ptrs;
  for (const Observation& o : all) ptrs.push_back(&o);
  torch::NoGradGuard guard;
  Batch batch = makeBatch(ptrs);
  for (torch::Tensor* t :
       {&batch.nodeFeatures, &batch.nodeCount, &batch.hw, &batch.actionFeatures, &batch.touchCount}) {
    *t = t->to(dtype);
  }
  net->to(dtype);
  NetOutput out = net->forward(batch);
  net->to(torch::kFloat);
  torch::Tensor probs = out.logProbs.exp();
  double worst = 0, spread = 0;
  int64_t row = 0;
  for (size_t g = 0; g < all.size(); ++g) {
    auto c = core.forward(all[g]);
    EXPECT_TRUE(c.isOk()) << c.status().message();
    if (!c.isOk()) return 1;
    for (size_t k = 0; k < c->probs.size(); ++k, ++row) {
      worst = std::max(worst, std::abs(static_cast<double>(c->probs[k]) - probs[row].item<double>()));
    }
    spread = std::max(spread, static_cast<double>(*std::max_element(c->probs.begin(), c->probs.end())));
    double v = out.value[static_cast<int64_t>(g)].item<double>();
    EXPECT_NEAR(c->value, v, 1e-4 * std::max(1.0, std::abs(v))) << "value of observation " << g;
  }
  EXPECT_EQ(row, probs.size(0));
  // The check means something only if the distributions are far from
  // uniform (1/300 on the larger graphs).
  EXPECT_GT(spread, 0.02);
  std::printf("largest probability difference %.3g (largest probability %.3f)\n", worst, spread);
  return worst;
}

// A batch whose only legal actions touch no node (stop alone): the touched-node
// sums have no rows. LibTorch aborted the trainer on it ("cannot reshape
// tensor of 0 elements into shape [0, -1]") 186 PPO updates into a run.
TEST(TorchParity, ABatchWhereNoActionTouchesANode) {
  rl::ModelConfig c;
  PolicyNet net = randomNet(c, 7, 0.05);
  auto core = net->toModel();
  ASSERT_TRUE(core.isOk()) << core.status().message();
  std::vector<Observation> all = observations("wide_deep", "h200");
  for (Observation& o : all) {  // keep stop, the last action
    const size_t n = o.actionNodes.size(), w = rl::kActionRow;
    ASSERT_GE(n, 1u);
    o.actionFeatures.erase(o.actionFeatures.begin(), o.actionFeatures.end() - static_cast<std::ptrdiff_t>(w));
    o.actionNodes.erase(o.actionNodes.begin(), o.actionNodes.end() - 1);
    ASSERT_TRUE(o.actionNodes[0].empty());
  }
  std::vector<const Observation*> ptrs;
  for (const Observation& o : all) ptrs.push_back(&o);
  torch::NoGradGuard guard;
  NetOutput out = net->forward(makeBatch(ptrs));
  ASSERT_EQ(out.logProbs.size(0), static_cast<int64_t>(all.size()));
  for (size_t g = 0; g < all.size(); ++g) {
    EXPECT_NEAR(out.logProbs[static_cast<int64_t>(g)].item<double>(), 0.0, 1e-6);  // one choice: probability 1
    auto r = core->forward(all[g]);
    ASSERT_TRUE(r.isOk()) << r.status().message();
    EXPECT_NEAR(r->value, out.value[static_cast<int64_t>(g)].item<double>(), 1e-4);
  }
}

TEST(TorchParity, RandomWeightsGiveTheSameProbabilities) {
  rl::ModelConfig c;
  PolicyNet net = randomNet(c, 11, 0.2);
  auto model = net->toModel();
  ASSERT_TRUE(model.isOk()) << model.status().message();
  // Through the file bytes, as `cagr optimize --policy rl:FILE` reads them.
  auto loaded = rl::PolicyModel::parse(model->serialize(), "<memory>");
  ASSERT_TRUE(loaded.isOk()) << loaded.status().message();
  EXPECT_LE(compare(net, *loaded), 1e-5);
}

TEST(TorchParity, SameFunctionAsDoublePrecisionLibTorch) {
  // Larger weights (peaked distributions): against LibTorch in double
  // precision the only difference left is the core's float storage.
  rl::ModelConfig c;
  PolicyNet net = randomNet(c, 13, 0.3);
  auto model = net->toModel();
  ASSERT_TRUE(model.isOk()) << model.status().message();
  EXPECT_LE(compare(net, *model, torch::kDouble), 2e-6);
}

TEST(TorchParity, WithoutFilmToo) {
  rl::ModelConfig c;
  c.film = false;
  c.layers = 2;
  c.heads = 2;
  PolicyNet net = randomNet(c, 12, 0.2);
  auto model = net->toModel();
  ASSERT_TRUE(model.isOk()) << model.status().message();
  EXPECT_LE(compare(net, *model), 1e-5);
}

TEST(TorchParity, TheCommittedDefaultPolicy) {
  std::string path = rwtest::repoPath("policies/default.rlp");
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "no committed default policy at " << path;
  auto model = rl::PolicyModel::load(path);
  ASSERT_TRUE(model.isOk()) << model.status().message();
  const std::vector<float>* mean = model->find("hw.mean");
  const std::vector<float>* scale = model->find("hw.scale");
  PolicyNet net(model->config(), *mean, *scale);
  ASSERT_TRUE(net->loadFrom(*model).isOk());
  EXPECT_LE(compare(net, *model), 1e-5);
}

}  // namespace
}  // namespace cagr::train
