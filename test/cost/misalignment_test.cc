// Tensor-core misalignment penalty: read off the profile's measured aligned
// and misaligned curves where it has them, the trait default where not.
#include <gtest/gtest.h>

#include <cmath>

#include "cost/kernel_class.h"

namespace cagr {
namespace {

KernelEfficiency curveEntry(const std::string& cls, double rateLo, double rateHi) {
  KernelEfficiency e;
  e.kernel = "cublas.gemm_bf16";
  e.shapeClass = cls;
  e.flopsPerS = rateHi;
  e.samples = 10;
  e.source = "test";
  e.curve = {{1e6, rateLo}, {1e10, rateHi}};
  return e;
}

HardwareProfile tensorCoreProfile(bool withMisaligned) {
  HardwareProfile hw;
  hw.kind = "gpu";
  hw.matrixUnit.alignElements = 8;
  hw.efficiencies.push_back(curveEntry("gemm.medium", 1e11, 1e14));
  if (withMisaligned) hw.efficiencies.push_back(curveEntry(kMisalignedGemmClass, 5e10, 2.5e13));
  return hw;
}

TEST(Misalignment, AlignmentPerPrecision) {
  EXPECT_EQ(matrixUnitAlignment(8, "bf16"), 8);
  EXPECT_EQ(matrixUnitAlignment(8, "tf32"), 4);
  EXPECT_EQ(matrixUnitAlignment(8, "fp32"), 1);
  EXPECT_TRUE(misalignedGemm(8, 512, 13));
  EXPECT_TRUE(misalignedGemm(8, 300, 512));
  EXPECT_FALSE(misalignedGemm(4, 300, 512));
  EXPECT_FALSE(misalignedGemm(8, 512, 1024));
}

TEST(Misalignment, MeasuredCurvesGiveTheRatioAtTheCallsFlops) {
  HardwareProfile hw = tensorCoreProfile(true);
  const std::string k = "cublas.gemm_bf16";
  // At the curve ends: 1e11 / 5e10 = 2 and 1e14 / 2.5e13 = 4.
  EXPECT_NEAR(misalignmentPenalty(hw, "bf16", k, "gemm.medium", 367, 512, 1e6), 2.0, 1e-9);
  EXPECT_NEAR(misalignmentPenalty(hw, "bf16", k, "gemm.medium", 367, 512, 1e10), 4.0, 1e-9);
  // In between, log-log interpolation of both curves: sqrt(2 * 4).
  EXPECT_NEAR(misalignmentPenalty(hw, "bf16", k, "gemm.medium", 367, 512, 1e8), std::sqrt(8.0), 1e-6);
  EXPECT_EQ(misalignmentPenalty(hw, "bf16", k, "gemm.medium", 512, 1024, 1e8), 1.0);  // aligned
  EXPECT_EQ(misalignmentPenalty(hw, "bf16", k, "gemm.skinny", 1, 512, 1e8), 1.0);     // skinny curve has them
  EXPECT_EQ(misalignmentPenalty(hw, "fp32", "cublas.sgemm", "gemm.medium", 367, 512, 1e8), 1.0);
}

TEST(Misalignment, WithoutMeasurementsTheTraitDefault) {
  HardwareProfile hw = tensorCoreProfile(false);
  EXPECT_EQ(misalignmentPenalty(hw, "bf16", "cublas.gemm_bf16", "gemm.medium", 367, 512, 1e8), 2.0);
  hw.kind = "cpu";
  EXPECT_EQ(misalignmentPenalty(hw, "bf16", "cublas.gemm_bf16", "gemm.medium", 367, 512, 1e8), 1.0);
}

}  // namespace
}  // namespace cagr
