// Lossless unless asked (DESIGN §7): every policy's default plan, on every
// kind of target, keeps f32 math and f32 tables and matches the model within
// 1e-5 of its outputs' magnitude (on the CPU backend too, for the CPU
// target); with reduced precision allowed, optimize() measures the budget on
// the calibration batch and the plan stays within it.
#include <gtest/gtest.h>

#include "../rewrite/rewrite_test_util.h"
#include "cagr/backend.h"
#include "cagr/policy.h"

namespace cagr {
namespace {

constexpr const char* kModels[] = {"dlrm_criteo", "dlrm_avazu", "deepfm",    "xdeepfm",
                                   "dcnv2",       "wide_deep",  "autoint",   "ngcf"};

int reducedDecisions(const Graph& plan) {
  int n = 0;
  for (const Node& node : plan.nodes()) n += node.mir.math != Precision::kF32;
  for (size_t v = 0; v < plan.numValues(); ++v) n += plan.value(static_cast<ValueId>(v)).mir.storage != Precision::kF32;
  return n;
}

double errorOf(const Graph& model, const Graph& plan, const std::vector<std::pair<std::string, Tensor>>& inputs) {
  auto want = runReference(model, inputs);
  auto got = runReference(plan, inputs);
  EXPECT_TRUE(want.isOk() && got.isOk());
  if (!want.isOk() || !got.isOk()) return INFINITY;
  auto e = relativeOutputError(*got, *want);
  EXPECT_TRUE(e.isOk()) << e.status().message();
  return e.isOk() ? *e : INFINITY;
}

TEST(LosslessDefault, EveryPolicyOnEveryTargetKeepsF32) {
  auto cpu = makeBackend("cpu");
  ASSERT_TRUE(cpu.isOk());
  for (const char* model : kModels) {
    Graph g = rwtest::zoo(model, "ts");
    auto inputs = rwtest::zooInputs(model, 7);
    for (const char* platform : {"x86-64", "h200", "mi250x", "tpu-v4"}) {
      for (const char* policy : {"greedy", "beam:2", "random", "rl", "rl+greedy"}) {
        SCOPED_TRACE(std::string(model) + " on " + platform + ", " + policy);
        auto p = makePolicy(policy);
        ASSERT_TRUE(p.isOk()) << p.status().message();
        auto r = optimize(g, rwtest::target(platform), **p, EnvConfig{});
        ASSERT_TRUE(r.isOk()) << r.status().message();
        EXPECT_EQ(reducedDecisions(r->plan), 0);
        EXPECT_LE(errorOf(g, r->plan, inputs), 1e-5);
        EXPECT_EQ(r->plan.meta().getString("precision"), "fp32");
        if (std::string(platform) != "x86-64") continue;
        auto exe = (*cpu)->compile(r->plan, CompileOptions{});
        ASSERT_TRUE(exe.isOk()) << exe.status().message();
        auto got = (*exe)->run(inputs);
        auto want = runReference(g, inputs);
        ASSERT_TRUE(got.isOk() && want.isOk());
        auto e = relativeOutputError(*got, *want);
        ASSERT_TRUE(e.isOk());
        EXPECT_LE(*e, 1e-5);
      }
    }
  }
}

// The budget is measured, not stated: on the calibration batch, the plan's
// error against the f32 model (recomputed here) is the recorded one and
// within the budget, and a budget that reduced precision breaks pins tables
// and nodes to f32.
TEST(PrecisionBudget, PlansStayWithinTheMeasuredBudget) {
  for (const char* model : {"dlrm_criteo", "deepfm", "xdeepfm", "dcnv2"}) {
    Graph g = rwtest::zoo(model, "ts");
    auto calibration = rwtest::zooInputs(model, 7);
    for (const char* platform : {"x86-64", "h200"}) {
      Target t = rwtest::target(platform);
      for (double budget : {1e-2, 1e-12}) {
        SCOPED_TRACE(std::string(model) + " on " + platform + ", budget " + std::to_string(budget));
        auto spec = std::string(platform) == "h200" ? "tf32,bf16,fp16,int8-tables" : "bf16,fp16,int8-tables";
        auto po = parsePrecisionOptions(spec, budget, t);
        ASSERT_TRUE(po.isOk()) << po.status().message();
        EnvConfig cfg;
        cfg.precision = *po;
        cfg.calibration = calibration;
        auto p = makePolicy("greedy");
        ASSERT_TRUE(p.isOk());
        auto r = optimize(g, t, **p, cfg);
        ASSERT_TRUE(r.isOk()) << r.status().message();
        double measured = errorOf(g, r->plan, calibration);
        EXPECT_DOUBLE_EQ(r->precision.measuredError, measured);
        EXPECT_LE(measured, budget);
        EXPECT_DOUBLE_EQ(r->plan.meta().getFloat("measured_error"), measured);
        // A budget below what quantising any wide table costs pins some to
        // f32 (one-wide rows, as the linear parts' tables, quantise exactly).
        if (budget < 1e-9) EXPECT_FALSE(r->precision.keptF32.empty());
      }
    }
  }
}

TEST(PrecisionBudget, LooseBudgetsKeepReducedPrecision) {
  // The measurement keeps what is within budget: DeepFM's int8 tables on the
  // CPU measure ~1e-3 of its output, well inside 5e-2.
  Graph g = rwtest::zoo("deepfm", "ts");
  auto po = parsePrecisionOptions("int8-tables", 5e-2, rwtest::target("x86-64"));
  ASSERT_TRUE(po.isOk());
  EnvConfig cfg;
  cfg.precision = *po;
  auto p = makePolicy("greedy");
  auto r = optimize(g, rwtest::target("x86-64"), **p, cfg);
  ASSERT_TRUE(r.isOk()) << r.status().message();
  EXPECT_GT(reducedDecisions(r->plan), 0);
  EXPECT_LE(r->precision.measuredError, 5e-2);
  EXPECT_GT(r->precision.measuredError, 0);
  EXPECT_EQ(r->precision.calibration.rfind("synthesized", 0), 0u);
}

TEST(PrecisionOptions, ParsesWhatTheCliTakes) {
  Target cpu = rwtest::target("x86-64"), gpu = rwtest::target("h200");
  auto fp32 = parsePrecisionOptions("fp32", -1, cpu);
  ASSERT_TRUE(fp32.isOk());
  EXPECT_TRUE(fp32->lossless());
  auto bf16 = parsePrecisionOptions("bf16", -1, cpu);  // the CPU runs bf16 tables, not bf16 math
  ASSERT_TRUE(bf16.isOk());
  EXPECT_TRUE(bf16->math.empty());
  EXPECT_EQ(bf16->storage, std::vector<Precision>{Precision::kBF16});
  EXPECT_DOUBLE_EQ(bf16->maxError, statedErrorBound(Precision::kBF16, true));
  auto gbf16 = parsePrecisionOptions("tf32,bf16", -1, gpu);
  ASSERT_TRUE(gbf16.isOk());
  EXPECT_EQ(gbf16->math.size(), 2u);
  EXPECT_DOUBLE_EQ(gbf16->maxError, statedErrorBound(Precision::kBF16, false));
  EXPECT_FALSE(parsePrecisionOptions("tf32", -1, cpu).isOk());
  EXPECT_FALSE(parsePrecisionOptions("fp8", -1, gpu).isOk());
  EXPECT_FALSE(parsePrecisionOptions("bf16", NAN, gpu).isOk());
  EXPECT_FALSE(parsePrecisionOptions("bf16", INFINITY, gpu).isOk());
}

}  // namespace
}  // namespace cagr
