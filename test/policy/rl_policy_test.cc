// The learned policy on the core side (no LibTorch): the .rlp loader's
// errors name the file and the field; the forward pass on a tiny hand-made
// network gives the hand-computed logits, probabilities and value; and
// `rl` with the committed default policy optimizes a zoo model into a plan
// that verifies and computes the original model's outputs; the CLI runs it
// (`cagr optimize --policy rl`) and hands `cagr train` to cagr-train.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "../rewrite/rewrite_test_util.h"
#include "cagr/policy.h"
#include "common/run_cli.h"
#include "policy/rl_model.h"

namespace cagr::rl {
namespace {

constexpr int kA = kActionRow;  // action row width (kind one-hot first)

// hidden 2, one head, one layer, every hidden width 1; all weights zero but
// the ones a test sets.
ModelConfig tinyConfig(bool film) {
  ModelConfig c;
  c.hidden = 2, c.heads = 1, c.layers = 1, c.filmHidden = 1, c.scorerHidden = 1, c.valueHidden = 1, c.film = film;
  return c;
}

struct Tiny {
  ModelConfig config;
  std::vector<TensorSpec> specs;
  std::vector<std::vector<float>> tensors;
  explicit Tiny(bool film) : config(tinyConfig(film)), specs(tensorSpecs(config)) {
    for (const TensorSpec& s : specs) tensors.emplace_back(static_cast<size_t>(s.numel()), 0.f);
    at("hw.scale").assign(16, 1.f);
  }
  std::vector<float>& at(const std::string& name) {
    for (size_t i = 0; i < specs.size(); ++i) {
      if (specs[i].name == name) return tensors[i];
    }
    ADD_FAILURE() << "no tensor " << name;
    return tensors[0];
  }
  PolicyModel model() {
    auto m = PolicyModel::create(config, tensors);
    EXPECT_TRUE(m.isOk()) << m.status().message();
    return m.isOk() ? std::move(*m) : PolicyModel();
  }
};

// Two nodes (feature 0 is 1 on node 0), one edge 0 -> 1, three actions:
// fuse(0, 1), set_kernel(1), stop.
Observation twoNodes() {
  Observation o;
  o.numNodes = 2;
  o.nodeFeatures.assign(2 * Observation::kNodeFeatures, 0.f);
  o.nodeFeatures[0] = 1.f;
  o.edges = {{0, 1}};
  o.hw.assign(16, 0.f);
  o.hw[0] = 3.f;
  o.actionFeatures.assign(3 * kA, 0.f);
  o.actionFeatures[0 * kA + static_cast<int>(ActionKind::kFuse)] = 1.f;
  o.actionFeatures[1 * kA + static_cast<int>(ActionKind::kSetKernel)] = 1.f;
  o.actionFeatures[2 * kA + static_cast<int>(ActionKind::kStop)] = 1.f;
  o.actionNodes = {{0, 1}, {1}, {}};
  return o;
}

// The weights every forward test shares: x0 = [1, 1], x1 = [0, 1] after the
// embedding; W = identity; score = 2 fuse + 1 set_kernel + 0.5 mean(x_touched)[0]
// + 0.25 g[1]; value = 2 * relu(3 g[0] + (hw0 - 1) / 2) + 1.
Tiny handMade(bool film) {
  Tiny t(film);
  t.at("embed.weight")[0 * 16 + 0] = 1.f;  // x[0] = feature 0
  t.at("embed.bias") = {0.f, 1.f};
  t.at("gat0.weight") = {1.f, 0.f, 0.f, 1.f};
  std::vector<float>& s0 = t.at("scorer.0.weight");
  s0[static_cast<int>(ActionKind::kFuse)] = 2.f;
  s0[static_cast<int>(ActionKind::kSetKernel)] = 1.f;
  s0[kA + 0] = 0.5f;       // mean of the touched nodes' embeddings, dim 0
  s0[kA + 2 + 1] = 0.25f;  // graph embedding, dim 1
  t.at("scorer.1.weight") = {1.f};
  t.at("hw.mean")[0] = 1.f;
  t.at("hw.scale")[0] = 2.f;
  std::vector<float>& v0 = t.at("value.0.weight");
  v0[0] = 3.f;      // g[0]
  v0[2 + 0] = 1.f;  // normalised hw[0] = (3 - 1) / 2 = 1
  t.at("value.1.weight") = {2.f};
  t.at("value.1.bias") = {1.f};
  return t;
}

void expectLogits(const ModelOutput& out, std::vector<double> want) {
  ASSERT_EQ(out.logits.size(), want.size());
  double sum = 0;
  for (double w : want) sum += std::exp(w);
  for (size_t k = 0; k < want.size(); ++k) {
    EXPECT_NEAR(out.logits[k], want[k], 1e-5) << "logit " << k;
    EXPECT_NEAR(out.probs[k], std::exp(want[k]) / sum, 1e-6) << "prob " << k;
  }
}

TEST(RlForward, UniformAttentionByHand) {
  // att = 0: each node averages itself and its neighbour, o = [0.5, 1] for
  // both; x0 = [1.5, 2], x1 = [0.5, 2], g = [1, 2].
  auto out = handMade(false).model().forward(twoNodes());
  ASSERT_TRUE(out.isOk()) << out.status().message();
  // fuse: 2 + 0.5 * 1 + 0.5; set_kernel: 1 + 0.5 * 0.5 + 0.5; stop: 0.5.
  expectLogits(*out, {3.0, 1.75, 0.5});
  EXPECT_NEAR(out->value, 2 * (3 * 1.0 + 1) + 1, 1e-5);
}

TEST(RlForward, AttentionWeightsByHand) {
  Tiny t = handMade(false);
  t.at("gat0.att_src") = {1.f, 0.f};  // score of neighbour j: leaky_relu(z_j[0])
  auto out = t.model().forward(twoNodes());
  ASSERT_TRUE(out.isOk()) << out.status().message();
  // Both nodes weigh node 0 (score 1) against node 1 (score 0): a = e / (e + 1).
  double a = std::exp(1.0) / (std::exp(1.0) + 1);
  double x00 = 1 + a, x10 = a;  // o[0] = a * 1 + (1 - a) * 0
  double g0 = (x00 + x10) / 2;
  expectLogits(*out, {2 + 0.5 * g0 + 0.5, 1 + 0.5 * x10 + 0.5, 0.5});
  EXPECT_NEAR(out->value, 2 * (3 * g0 + 1) + 1, 1e-5);
}

TEST(RlForward, FilmScalesAndShiftsByHand) {
  Tiny t = handMade(true);
  t.at("film.trunk.bias") = {1.f};               // trunk = 1
  t.at("film0.weight") = {1.f, 0.f, 0.f, -2.f};  // gamma = [2, 1], beta = [0, -2]
  auto out = t.model().forward(twoNodes());
  ASSERT_TRUE(out.isOk()) << out.status().message();
  // o = [0.5, 1] -> [1, -1] -> relu [1, 0]: x0 = [2, 1], x1 = [1, 1], g = [1.5, 1].
  expectLogits(*out, {2 + 0.5 * 1.5 + 0.25, 1 + 0.5 * 1 + 0.25, 0.25});
}

TEST(RlForward, MalformedObservationsAreErrors) {
  PolicyModel m = handMade(false).model();
  Observation o = twoNodes();
  o.edges = {{0, 5}};
  EXPECT_FALSE(m.forward(o).isOk());
  o = twoNodes();
  o.actionNodes[1] = {7};
  EXPECT_FALSE(m.forward(o).isOk());
  o = twoNodes();
  o.hw.pop_back();
  auto r = m.forward(o);
  ASSERT_FALSE(r.isOk());
  EXPECT_NE(r.status().message().find("hardware context"), std::string::npos);
}

// parse() on `bytes`: the error message (empty when it loads).
std::string parseError(const std::string& bytes) {
  auto m = PolicyModel::parse(bytes, "bad.rlp");
  return m.isOk() ? "" : m.status().message();
}

bool has(const std::string& msg, const std::string& part) {
  return msg.find(part) != std::string::npos;
}

TEST(RlFormat, RoundTripsAndRefusesBadFiles) {
  PolicyModel m = handMade(true).model();
  std::string bytes = m.serialize();
  auto back = PolicyModel::parse(bytes, "ok.rlp");
  ASSERT_TRUE(back.isOk()) << back.status().message();
  EXPECT_EQ(back->serialize(), bytes);
  EXPECT_EQ(back->config(), m.config());

  std::string e = parseError("not a policy at all");
  EXPECT_TRUE(has(e, "bad.rlp") && has(e, "bad magic")) << e;
  e = parseError(bytes.substr(0, bytes.size() - 3));
  EXPECT_TRUE(has(e, "bad.rlp") && has(e, "truncated") && has(e, "value.1.bias")) << e;
  e = parseError(bytes + "xx");
  EXPECT_TRUE(has(e, "unexpected bytes")) << e;
  std::string v2 = bytes;
  v2[8] = 2;
  e = parseError(v2);
  EXPECT_TRUE(has(e, "format version 2")) << e;
  std::string shape = bytes;
  size_t at = shape.find("\"hidden\":2");
  ASSERT_NE(at, std::string::npos);
  shape[at + 9] = '4';  // the config now says hidden 4: the tensors do not match
  e = parseError(shape);
  EXPECT_TRUE(has(e, "bad.rlp") && has(e, "embed.weight") && has(e, "expected [4,16]")) << e;
  std::string heads = bytes;
  at = heads.find("\"heads\":1");
  heads[at + 8] = '3';
  e = parseError(heads);
  EXPECT_TRUE(has(e, "config.hidden") && has(e, "config.heads")) << e;
  std::string nan = bytes;
  float bad = NAN;
  nan.replace(nan.size() - 4, 4, reinterpret_cast<const char*>(&bad), 4);
  e = parseError(nan);
  EXPECT_TRUE(has(e, "value.1.bias") && has(e, "not finite")) << e;

  auto missing = PolicyModel::load("/nonexistent/policy.rlp");
  ASSERT_FALSE(missing.isOk());
  EXPECT_TRUE(has(missing.status().message(), "/nonexistent/policy.rlp"));
  auto p = cagr::makePolicy("rl:/nonexistent/policy.rlp");
  ASSERT_FALSE(p.isOk());
  EXPECT_TRUE(has(p.status().message(), "/nonexistent/policy.rlp"));
}

TEST(RlPolicy, DefaultPolicyPlansVerifyAndComputeTheModel) {
  std::string path = rwtest::repoPath("policies/default.rlp");
  ASSERT_TRUE(std::filesystem::exists(path)) << "the default policy is committed at " << path;
  ::setenv("CAGR_RL_POLICY", path.c_str(), 1);
  auto found = defaultRlPolicyPath();
  ASSERT_TRUE(found.isOk()) << found.status().message();
  EXPECT_EQ(*found, path);
  for (const char* model : {"dlrm_criteo", "deepfm"}) {
    Graph g = rwtest::zoo(model);
    for (const char* platform : {"h200", "x86-64", "tpu-v4"}) {
      SCOPED_TRACE(std::string(model) + " on " + platform);
      auto policy = cagr::makePolicy("rl");
      ASSERT_TRUE(policy.isOk()) << policy.status().message();
      EnvConfig cfg;
      cfg.batch = 4096;
      cfg.verify = true;                                  // verifyPlan after every step
      cfg.disabled.push_back(ActionKind::kSetPrecision);  // fp32: outputs must match tightly
      auto r = optimize(g, rwtest::target(platform), **policy, cfg);
      ASSERT_TRUE(r.isOk()) << r.status().message();
      EXPECT_EQ(r->policy, "rl");
      EXPECT_FALSE(r->decisions.empty());
      EXPECT_LE(r->final.latencyS, r->baseline.latencyS);
      EXPECT_GE(r->episodeReturn, 0.0);
      rwtest::expectSameOutputs(g, r->plan, rwtest::zooInputs(model), 1e-5, 1e-4);
    }
  }
  ::unsetenv("CAGR_RL_POLICY");
}

// rl+greedy: the policy's plan, then greedy steps. On xDeepFM for V100 the
// policy spends its 64 steps (per-table precision first) and leaves the CIN
// kernels' gains: the refinement extends the episode and takes them. Its
// plan is never slower than rl's and verifies; "rl+greedy:PATH" names the
// weights, a bad path is an error naming it.
TEST(RlPolicy, GreedyRefinementStartsFromThePolicysPlan) {
  const std::string path = rwtest::repoPath("policies/default.rlp");
  Graph g = rwtest::zoo("xdeepfm");
  auto rl = cagr::makePolicy("rl:" + path);
  auto refined = cagr::makePolicy("rl+greedy:" + path);
  ASSERT_TRUE(rl.isOk()) << rl.status().message();
  ASSERT_TRUE(refined.isOk()) << refined.status().message();
  EXPECT_EQ((*refined)->name(), "rl+greedy");
  // A short episode, which the policy uses up: the refinement reopens it.
  EnvConfig cfg;
  cfg.maxSteps = 12;
  cfg.precision = unrestrictedPrecision();  // as the policy was trained
  auto a = optimize(g, rwtest::target("v100"), **rl, cfg);
  auto b = optimize(g, rwtest::target("v100"), **refined, cfg);
  ASSERT_TRUE(a.isOk()) << a.status().message();
  ASSERT_TRUE(b.isOk()) << b.status().message();
  EXPECT_EQ(static_cast<int>(a->decisions.size()), cfg.maxSteps) << "the policy uses up the episode";
  EXPECT_GT(b->decisions.size(), a->decisions.size());
  for (size_t i = 0; i < a->decisions.size(); ++i) EXPECT_EQ(b->decisions[i].label, a->decisions[i].label) << i;
  EXPECT_LT(b->final.latencyS, 0.5 * a->final.latencyS);
  EXPECT_GE(b->episodeReturn, a->episodeReturn);
  Graph plan = b->plan;
  plan.eraseDeadNodes();
  EXPECT_TRUE(verifyPlan(plan, rwtest::target("v100")).isOk());
  auto missing = cagr::makePolicy("rl+greedy:/nonexistent/policy.rlp");
  ASSERT_FALSE(missing.isOk());
  EXPECT_TRUE(has(missing.status().message(), "/nonexistent/policy.rlp"));
}

// The step limit ends an episode the way stop does, except that
// extendEpisode reopens the first kind.
TEST(RlPolicy, ExtendEpisodeReopensOnlyAnEpisodeTheLimitEnded) {
  EnvConfig cfg;
  cfg.maxSteps = 1;
  Env env;
  ASSERT_TRUE(env.reset(rwtest::zoo("dlrm_criteo"), rwtest::target("h200"), cfg).isOk());
  ASSERT_GT(env.legalActions().size(), 1u);
  ASSERT_TRUE(env.step(size_t{0}).isOk());
  EXPECT_TRUE(env.done());
  env.extendEpisode(2);
  EXPECT_FALSE(env.done());
  ASSERT_TRUE(env.step(env.legalActions().size() - 1).isOk());  // stop
  EXPECT_TRUE(env.done());
  env.extendEpisode(2);
  EXPECT_TRUE(env.done()) << "an episode ended by stop stays over";
}

TEST(RlPolicy, CommandLine) {
  std::string model = rwtest::repoPath("zoo/onnx/dlrm_criteo.dynamo.onnx");
  std::string policy = rwtest::repoPath("policies/default.rlp");
  auto r = cagr::testing::runCagr("optimize " + model + " --target a100 --policy rl:" + policy + " --json");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_TRUE(has(r.out, "\"policy\": \"rl\"")) << r.out;
  EXPECT_TRUE(has(r.out, "\"latency_kind\": \"modelled\"")) << r.out;
  EXPECT_TRUE(has(r.out, "\"kind\": \"fuse")) << r.out;
  r = cagr::testing::runCagr("optimize " + model + " --target a100 --policy rl:/nonexistent/p.rlp");
  EXPECT_NE(r.code, 0);
  EXPECT_TRUE(has(r.out, "cannot read policy file '/nonexistent/p.rlp': no such file")) << r.out;
  // cagr train runs cagr-train when it was built (LibTorch found), else says so.
  r = cagr::testing::runCagr("train --help");
  bool built = std::filesystem::exists(std::filesystem::path(CAGR_BINARY).parent_path() / "cagr-train");
  if (built) {
    EXPECT_EQ(r.code, 0) << r.out;
    EXPECT_TRUE(has(r.out, "--bc-epochs")) << r.out;
  } else {
    EXPECT_NE(r.code, 0);
    EXPECT_TRUE(has(r.out, "cagr-train binary, which was not built")) << r.out;
  }
}

}  // namespace
}  // namespace cagr::rl
