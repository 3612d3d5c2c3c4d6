// Greedy's bf16 plan for DLRM follows what the profile measured for bf16
// GEMMs as the CUDA backend runs them (f32 activations, cuBLASLt's
// FAST_16BF compute: the backend probes' cublaslt.matmul_bf16 entry), not
// the profiler's bf16-operand rate: measured slow, the layers keep f32
// math; measured fast, they take bf16. (On the H100, 2026-12-06, DLRM's
// bf16 plan priced by the bf16-operand rate measured 0.043 ms at batch 256
// against its tf32 plan's 0.030.) Modelled plans.
#include <gtest/gtest.h>

#include "../cost/cuda_pricing_util.h"
#include "cost/kernel_class.h"
#include "greedy_plan_util.h"

namespace cagr {
namespace {

// The GEMMs of greedy's DLRM plan at batch 256 with bf16 math allowed (as
// cagr optimize --precision bf16) on the H100's probed profile, with a
// cublaslt.matmul_bf16 curve at `rate` FLOP/s (none when 0) in place of the
// profile's: how many run in bf16 math.
int bf16Gemms(double rate) {
  auto hw = loadProfile(std::string(CAGR_SOURCE_DIR) + "/bench/results/hw/h100-probed.json");
  EXPECT_TRUE(hw.isOk()) << hw.status().message();
  if (!hw.isOk()) return -1;
  // (The committed profile's own measured entry is replaced.)
  std::erase_if(hw->efficiencies, [](const KernelEfficiency& e) { return e.kernel == "cublaslt.matmul_bf16"; });
  if (rate > 0) {
    hw->efficiencies.push_back(
        pricingtest::entry("cublaslt.matmul_bf16", kTunedGemmClass, 7e-6, {{1e6, rate}, {1e10, rate}}));
  }
  const std::optional<Graph> plan = greedytest::greedyPlan(*hw, "dlrm_criteo", 256, Precision::kBF16);
  if (!plan) return -1;
  int n = 0;
  for (const Node& node : plan->nodes()) n += node.op == OpKind::kGemm && node.mir.math == Precision::kBF16 ? 1 : 0;
  return n;
}

TEST(GreedyGemmPrecision, Bf16LayersFollowTheRateMeasuredAsTheBackendRunsThem) {
  const int unprobed = bf16Gemms(0), slow = bf16Gemms(1e12), fast = bf16Gemms(1e15);
  EXPECT_GT(unprobed, 0) << "priced by the bf16-operand rate, bf16 looks faster";
  EXPECT_EQ(slow, 0) << "measured slower than f32: every layer keeps f32 math";
  EXPECT_GT(fast, 0);
}

}  // namespace
}  // namespace cagr
