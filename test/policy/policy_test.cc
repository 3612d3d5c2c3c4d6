// The environment and the search policies: rewards add up to the modelled
// improvement, clones are independent, better searches never do worse than
// weaker ones on the same state, and every policy's plan runs on the
// reference executor with the original model's outputs.
#include <gtest/gtest.h>

#include "../rewrite/rewrite_test_util.h"
#include "cagr/policy.h"

namespace cagr {
namespace {

EnvConfig config(int64_t batch) {
  EnvConfig c;
  c.batch = batch;
  c.verify = true;  // verifyPlan after every step
  return c;
}

TEST(Env, RewardsSumToTheModelledImprovement) {
  Graph g = rwtest::zoo("dlrm_criteo");
  Env env;
  ASSERT_TRUE(env.reset(g, rwtest::target("h200"), config(4096)).isOk());
  ASSERT_GT(env.legalActions().size(), 1u);
  EXPECT_EQ(env.legalActions().back().action.kind, ActionKind::kStop);
  for (int i = 0; i < 5 && env.legalActions().size() > 1; ++i) ASSERT_TRUE(env.step(size_t{0}).isOk());
  const EnvConfig& c = env.config();
  double want = -(env.estimate().latencyS - env.initialLatencyS()) / env.initialLatencyS() -
                c.lambdaM * static_cast<double>(env.estimate().peakMemoryBytes - env.initialMemory()) /
                    static_cast<double>(env.initialMemory()) -
                c.lambdaC * (env.estimate().variance - env.initialVariance());
  EXPECT_NEAR(env.episodeReturn(), want, 1e-9);
}

TEST(Env, ClonesAreIndependentAndPeekChangesNothing) {
  Graph g = rwtest::zoo("deepfm");
  Env env;
  ASSERT_TRUE(env.reset(g, rwtest::target("x86-64"), config(256)).isOk());
  ASSERT_GT(env.legalActions().size(), 1u);
  double before = env.estimate().latencyS;
  auto peeked = env.peek(0);
  ASSERT_TRUE(peeked.isOk()) << peeked.status().message();
  EXPECT_EQ(env.estimate().latencyS, before);
  Env copy = env.clone();
  auto r = copy.step(size_t{0});
  ASSERT_TRUE(r.isOk()) << r.status().message();
  EXPECT_NEAR(r->reward, *peeked, 1e-12);
  EXPECT_EQ(env.steps(), 0);
  EXPECT_EQ(copy.steps(), 1);
}

TEST(Env, ObservationHasOneRowPerNodeAndAction) {
  Graph g = rwtest::zoo("dlrm_criteo");
  Env env;
  ASSERT_TRUE(env.reset(g, rwtest::target("mi250x"), config(256)).isOk());
  Observation o = env.observe();
  EXPECT_EQ(o.numNodes, static_cast<int>(env.graph().nodes().size()));
  EXPECT_EQ(o.nodeFeatures.size(), static_cast<size_t>(o.numNodes) * Observation::kNodeFeatures);
  EXPECT_EQ(o.actionFeatures.size(), env.legalActions().size() * Observation::kActionFeatures);
  EXPECT_EQ(o.hw.size(), contextVectorSize());
  EXPECT_FALSE(o.edges.empty());
}

OptimizeResult run(const Graph& g, const std::string& platform, const std::string& policy, int64_t batch) {
  auto p = makePolicy(policy);
  EXPECT_TRUE(p.isOk());
  auto r = optimize(g, rwtest::target(platform), **p, config(batch));
  EXPECT_TRUE(r.isOk()) << policy << ": " << r.status().message();
  return r.isOk() ? std::move(*r) : OptimizeResult{};
}

TEST(Policies, SearchesRankAsExpectedAndPlansMatchTheModel) {
  for (const char* model : {"dlrm_criteo", "deepfm", "xdeepfm"}) {
    Graph g = rwtest::zoo(model);
    auto inputs = rwtest::zooInputs(model);
    for (const char* platform : {"x86-64", "h200"}) {
      SCOPED_TRACE(std::string(model) + " on " + platform);
      OptimizeResult none = run(g, platform, "none", 4096);
      OptimizeResult greedy = run(g, platform, "greedy", 4096);
      OptimizeResult beam = run(g, platform, "beam:4", 4096);
      EXPECT_TRUE(none.decisions.empty());
      EXPECT_LT(greedy.final.latencyS, none.final.latencyS);
      EXPECT_GE(beam.baseline.latencyS, beam.final.latencyS);
      for (const OptimizeResult* r : {&greedy, &beam}) {
        // Default plans are f32: they change how the model runs, not what it computes.
        rwtest::expectSameOutputs(g, r->plan, inputs, 1e-5, 1e-4);
      }
    }
  }
}

TEST(Policies, ExhaustiveIsAtLeastAsGoodAsBeamOnASmallGraph) {
  Graph g = rwtest::parse(R"(
"builtin.module"() ({
  "cagr.graph"() ({
  ^bb0(%arg0: tensor<?x64xf32>):
    %0 = "cagr.constant"() {elided, name = "w1"} : () -> tensor<64x64xf32>
    %1 = "cagr.constant"() {elided, name = "b1"} : () -> tensor<64xf32>
    %2 = "cagr.gemm"(%arg0, %0, %1) {name = "fc1", transB = 1 : i64} : (tensor<?x64xf32>, tensor<64x64xf32>, tensor<64xf32>) -> tensor<?x64xf32>
    %3 = "cagr.relu"(%2) {name = "relu1"} : (tensor<?x64xf32>) -> tensor<?x64xf32>
    %4 = "cagr.constant"() {elided, name = "w2"} : () -> tensor<1x64xf32>
    %5 = "cagr.gemm"(%3, %4) {name = "fc2", transB = 1 : i64} : (tensor<?x64xf32>, tensor<1x64xf32>) -> tensor<?x1xf32>
    %6 = "cagr.sigmoid"(%5) {name = "out"} : (tensor<?x1xf32>) -> tensor<?x1xf32>
    "cagr.return"(%6) : (tensor<?x1xf32>) -> ()
  }) {sym_name = "main", input_names = ["x"], input_dims = ["N,64"], output_names = ["y"], symbols = ["N"]} : () -> ()
}) : () -> ()
)");
  for (const char* platform : {"x86-64", "h200", "tpu-v4"}) {
    SCOPED_TRACE(platform);
    OptimizeResult beam = run(g, platform, "beam:2", 512);
    OptimizeResult exhaustive = run(g, platform, "exhaustive", 512);
    OptimizeResult greedy = run(g, platform, "greedy", 512);
    // Every policy's plan computes what the model computes.
    for (const OptimizeResult* r : {&exhaustive, &beam, &greedy}) {
      rwtest::expectSameOutputs(g, r->plan, rwtest::randomInputs(g, 5, 1), 1e-2, 1e-2);
    }
    EXPECT_GE(exhaustive.episodeReturn, beam.episodeReturn - 1e-12);
    EXPECT_GE(exhaustive.episodeReturn, greedy.episodeReturn - 1e-12);
    EXPECT_GE(beam.episodeReturn, 0.0);
  }
}

TEST(Policies, RandomIsReproducibleUnderASeed) {
  Graph g = rwtest::zoo("dlrm_avazu");
  PolicyOptions o;
  o.seed = 42;
  auto a = makePolicy("random", o), b = makePolicy("random", o);
  auto ra = optimize(g, rwtest::target("v100"), **a, config(256));
  auto rb = optimize(g, rwtest::target("v100"), **b, config(256));
  ASSERT_TRUE(ra.isOk() && rb.isOk());
  ASSERT_EQ(ra->decisions.size(), rb->decisions.size());
  for (size_t i = 0; i < ra->decisions.size(); ++i) EXPECT_EQ(ra->decisions[i].label, rb->decisions[i].label);
}

TEST(Policies, UnknownPolicyAndTooLargeExhaustiveAreClearErrors) {
  EXPECT_FALSE(makePolicy("simulated-annealing").isOk());
  EXPECT_FALSE(makePolicy("beam:0").isOk());
  auto p = makePolicy("exhaustive");
  auto r = optimize(rwtest::zoo("dlrm_criteo"), rwtest::target("h200"), **p, config(256));
  ASSERT_FALSE(r.isOk());
  EXPECT_NE(r.status().message().find("use greedy or beam"), std::string::npos);
}

}  // namespace
}  // namespace cagr

namespace cagr {
namespace {

// Issue 39: wide models hit a fixed 64-step limit mid-plan (every DeepCTR
// plan ended at exactly 64 decisions). The default limit grows with the
// graph, and a plan the limit cut off says so.
TEST(Policies, WideModelsAreNotCutOffAtAFixedStepLimit) {
  auto g = importOnnx(rwtest::repoPath("zoo/thirdparty/onnx/fibinet.ts17.b64.onnx"));
  ASSERT_TRUE(g.isOk()) << g.status().message();
  auto policy = makePolicy("greedy");
  EnvConfig cfg;
  cfg.batch = 64;
  auto r = optimize(*g, rwtest::target("x86-64"), **policy, cfg);
  ASSERT_TRUE(r.isOk()) << r.status().message();
  EXPECT_FALSE(r->truncated) << r->decisions.size() << " decisions";
  EXPECT_GT(r->decisions.size(), 64u);  // FiBiNET's plan needs more than the old limit
  cfg.maxSteps = 8;
  auto cut = optimize(*g, rwtest::target("x86-64"), **policy, cfg);
  ASSERT_TRUE(cut.isOk());
  EXPECT_TRUE(cut->truncated);
  EXPECT_EQ(cut->decisions.size(), 8u);
}

}  // namespace
}  // namespace cagr
