// Greedy puts xDeepFM's CIN layers in tf32 math on the generated kernel
// where the profile measured that fastest, even when the f32 generated
// kernel beats cuBLASLt's tf32 CIN: an unassigned tf32 CIN layer runs on
// (and is priced as) nvrtc.cin's step kernels, so the precision step alone
// gains. Before, it was priced as cuBLASLt's, set_precision alone looked
// like a loss, and greedy kept f32 (the H100 profile re-probed on
// 2026-12-06: nvrtc.cin 142, cublaslt.cin_tf32 119, nvrtc.cin_tf32 191
// TFLOP/s; the tf32 plan then measured slower than fp32's). Modelled plans.
#include <gtest/gtest.h>

#include "../cost/cuda_pricing_util.h"
#include "greedy_plan_util.h"

namespace cagr {
namespace {

// The built-in H200 profile with CIN entries at those rates (flat curves),
// bf16 ones where given.
HardwareProfile cinProbed(double f32, double ltTf32, double genTf32, double ltBf16 = 0, double genBf16 = 0) {
  HardwareProfile hw = pricingtest::h200();
  hw.provenance = "measured";
  auto flat = [](double r) { return std::vector<RatePoint>{{1e6, r / 20}, {1e8, r}, {1e12, r}}; };
  hw.efficiencies.push_back(pricingtest::entry("nvrtc.cin", "gemm.cin", 5e-6, flat(f32)));
  hw.efficiencies.push_back(pricingtest::entry("cublaslt.cin", "gemm.cin", 5e-6, flat(35e12)));
  hw.efficiencies.push_back(pricingtest::entry("cublaslt.cin_tf32", "gemm.cin", 5e-6, flat(ltTf32)));
  hw.efficiencies.push_back(pricingtest::entry("nvrtc.cin_tf32", "gemm.cin", 5e-6, flat(genTf32)));
  if (ltBf16 > 0) hw.efficiencies.push_back(pricingtest::entry("cublaslt.cin_bf16", "gemm.cin", 5e-6, flat(ltBf16)));
  if (genBf16 > 0) hw.efficiencies.push_back(pricingtest::entry("nvrtc.cin_bf16", "gemm.cin", 5e-6, flat(genBf16)));
  return hw;
}

// Greedy's xDeepFM plan at batch 4096 with `low` math allowed (as cagr
// optimize --precision tf32 / bf16): each CIN layer's math and kernel name.
std::vector<std::pair<Precision, std::string>> cinChoices(const HardwareProfile& hw,
                                                          Precision low = Precision::kTF32) {
  std::vector<std::pair<Precision, std::string>> out;
  const std::optional<Graph> plan = greedytest::greedyPlan(hw, "xdeepfm", 4096, low);
  if (!plan) return out;
  for (const Node& n : plan->nodes()) {
    if (n.op == OpKind::kCIN) out.push_back({n.mir.math, n.mir.kernel == 0 ? "auto" : kernelInfo(n.mir.kernel).name});
  }
  return out;
}

TEST(GreedyCinPrecision, Tf32OnTheGeneratedKernelWhereItIsFastest) {
  const auto choices = cinChoices(cinProbed(142e12, 119e12, 191e12));
  ASSERT_EQ(choices.size(), 3u);
  for (const auto& [math, kernel] : choices) {
    EXPECT_EQ(math, Precision::kTF32) << kernel;
    EXPECT_NE(kernel, "cublaslt.cin");
  }
}

// Where cuBLASLt's tf32 CIN is the fastest entry, greedy still gets there
// (tf32 first, then set_kernel), and where f32 is, it keeps f32.
TEST(GreedyCinPrecision, CublasLtOrF32WhereTheProfileSaysSo) {
  for (const auto& [math, kernel] : cinChoices(cinProbed(60e12, 300e12, 120e12))) {
    EXPECT_EQ(math, Precision::kTF32) << kernel;
    EXPECT_EQ(kernel, "cublaslt.cin");
  }
  for (const auto& [math, kernel] : cinChoices(cinProbed(300e12, 100e12, 120e12))) {
    EXPECT_EQ(math, Precision::kF32) << kernel;
  }
}

// bf16: an unassigned bf16 layer runs on cuBLASLt (before sm_90 nvrtc.cin
// has only its slow wmma kernel there); where the profile measured
// nvrtc.cin_bf16 faster (the warpgroup kernel: 460 against cuBLASLt's 178
// TFLOP/s on the H100 re-probed 2026-12-06) greedy moves the layers to it,
// and where it measured it slower (the wmma kernel: 47 against 182 on the
// H200) it leaves them on cuBLASLt.
TEST(GreedyCinPrecision, Bf16LayersGoWhereTheProfileMeasuredThemFastest) {
  const auto fast = cinChoices(cinProbed(142e12, 119e12, 191e12, 178e12, 460e12), Precision::kBF16);
  ASSERT_EQ(fast.size(), 3u);
  for (const auto& [math, kernel] : fast) {
    EXPECT_EQ(math, Precision::kBF16) << kernel;
    EXPECT_EQ(kernel, "nvrtc.cin");
  }
  const auto slow = cinChoices(cinProbed(142e12, 119e12, 191e12, 182e12, 47e12), Precision::kBF16);
  ASSERT_EQ(slow.size(), 3u);
  for (const auto& [math, kernel] : slow) {
    EXPECT_EQ(math, Precision::kBF16) << kernel;
    EXPECT_NE(kernel, "nvrtc.cin");
  }
}

}  // namespace
}  // namespace cagr
