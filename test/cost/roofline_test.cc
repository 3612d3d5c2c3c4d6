// The analytic cost model on a synthetic profile with round numbers, so each
// expectation can be computed by hand.
#include <gtest/gtest.h>

#include <cmath>

#include "cagr/cost.h"

namespace cagr {
namespace {

HardwareProfile roundProfile() {
  HardwareProfile hw;
  hw.name = "round";
  hw.kind = "gpu";
  hw.vendor = "nvidia";
  hw.provenance = "datasheet";
  hw.peakFlops["fp32"] = {1e12, "test"};
  hw.memory.push_back({"DRAM", {1e9, "test"}, {1e11, "test"}});
  hw.launchLatencyS = {1e-6, "test"};
  hw.traits.runToRunVariance = 0.05;
  return hw;
}

Tensor zeros(std::vector<int64_t> shape) { return Tensor(DType::kF32, std::move(shape)); }

TEST(Roofline, LargeGemmIsComputeBoundAtTheDefaultFraction) {
  Graph g;
  ValueId x = g.addInput("x", {DType::kF32, {kBatch, 4096}});
  Attrs a;
  a.set("transB", int64_t{1});
  g.addOutput(*g.add(OpKind::kGemm, {x, g.addConstant("w", zeros({4096, 4096}))}, a));
  RooflineCostModel m(roundProfile());
  auto est = m.graph(g, defaultBindings(g, 4096));
  ASSERT_TRUE(est.isOk());
  const KernelEstimate& k = est->nodes[0];
  EXPECT_EQ(k.bound, Bound::kCompute);
  EXPECT_EQ(k.shapeClass, "gemm.large");
  double flops = 2.0 * 4096 * 4096 * 4096;
  EXPECT_NEAR(k.seconds, flops / (1e12 * 0.8) + 1e-6, 1e-9);
  EXPECT_STREQ(est->kind, "modelled");
  // V_H of a plan: the profile's 5 %, raised by the (tiny) launch share.
  EXPECT_NEAR(est->variance, 0.05, 1e-4);
  EXPECT_GE(est->variance, 0.05);
}

TEST(Roofline, EmbeddingBagIsMemoryBoundAndViewsAreFree) {
  Graph g;
  ValueId ids = g.addInput("ids", {DType::kI64, {kBatch, 20}});
  ValueId bag = *g.add(OpKind::kEmbeddingBag, {g.addConstant("t", zeros({100000, 64})), ids});
  Attrs r;
  r.set("shape", std::vector<int64_t>{0, 8, 8});
  g.addOutput(*g.add(OpKind::kReshape, {bag}, r));
  RooflineCostModel m(roundProfile());
  auto est = m.graph(g, defaultBindings(g, 4096));
  ASSERT_TRUE(est.isOk());
  EXPECT_EQ(est->nodes[0].bound, Bound::kMemory);
  // Rows read (4096*20*64*4) + ids + output, at half of DRAM bandwidth (gathers).
  double bytes = 4096.0 * 20 * 64 * 4 + 4096.0 * 20 * 8 + 4096.0 * 64 * 4;
  EXPECT_NEAR(est->nodes[0].seconds, bytes / (1e11 * 0.5) + 1e-6, 1e-9);
  EXPECT_EQ(est->nodes[1].bound, Bound::kFree);
  EXPECT_EQ(est->nodes[1].seconds, 0.0);
}

TEST(Roofline, FusingGemmAndReluSavesTheIntermediateAndALaunch) {
  Graph g;
  ValueId x = g.addInput("x", {DType::kF32, {kBatch, 512}});
  Attrs a;
  a.set("transB", int64_t{1});
  ValueId h = *g.add(OpKind::kGemm, {x, g.addConstant("w", zeros({512, 512}))}, a);
  g.addOutput(*g.add(OpKind::kRelu, {h}));
  RooflineCostModel m(roundProfile());
  auto stats = computeStats(g, defaultBindings(g, 1024));
  ASSERT_TRUE(stats.isOk());
  FusedGroupEstimate f = m.fusedGroup(g, *stats, {0, 1});
  EXPECT_LT(f.fused.seconds, f.unfusedS);
  EXPECT_GT(f.benefit, 0);
  EXPECT_NEAR(f.savedMemoryS, 2.0 * 1024 * 512 * 4 / (1e11 * 0.8), 1e-12);
}

// Two compute-bound GEMMs on two streams share the device: they overlap
// their launch floors, not their work (StreamBound tests the rest).
TEST(Roofline, IndependentBranchesOnTwoStreamsOverlapTheirFloors) {
  Graph g;
  ValueId x = g.addInput("x", {DType::kF32, {kBatch, 1024}});
  Attrs a;
  a.set("transB", int64_t{1});
  ValueId l = *g.add(OpKind::kGemm, {x, g.addConstant("w1", zeros({1024, 1024}))}, a);
  ValueId r = *g.add(OpKind::kGemm, {x, g.addConstant("w2", zeros({1024, 1024}))}, a);
  g.addOutput(*g.add(OpKind::kAdd, {l, r}));
  RooflineCostModel m(roundProfile());
  auto bind = defaultBindings(g, 2048);
  auto one = m.graph(g, bind);
  auto two = m.graph(g, bind, {0, 1, 0});
  ASSERT_TRUE(one.isOk() && two.isOk());
  EXPECT_DOUBLE_EQ(one->latencyS, one->serialS);
  EXPECT_LT(two->latencyS, one->latencyS);
  EXPECT_GT(one->nodes[1].seconds, 10 * one->nodes[1].launchS);  // work-bound
  // Sum of the three kernels' work plus the floors: the two GEMMs' overlap
  // (one counts), the Add after them runs alone (its own counts).
  EXPECT_NEAR(two->latencyS, one->serialS - one->nodes[1].launchS, 1e-12);
  EXPECT_GT(one->nodes[2].launchS, 0);
}

TEST(Roofline, PeakMemoryCountsWeightsAndLiveActivations) {
  Graph g;
  ValueId x = g.addInput("x", {DType::kF32, {kBatch, 256}});
  ValueId h = *g.add(OpKind::kRelu, {x});
  g.addOutput(*g.add(OpKind::kSigmoid, {h}));
  RooflineCostModel m(roundProfile());
  auto est = m.graph(g, defaultBindings(g, 100));
  ASSERT_TRUE(est.isOk());
  EXPECT_EQ(est->peakMemoryBytes, 2 * 100 * 256 * 4);  // x and h live while relu runs; h and y after
}

TEST(Roofline, StreamingKernelsThatFitInCacheRunAtCacheBandwidth) {
  HardwareProfile hw = roundProfile();
  hw.memory.insert(hw.memory.begin(), MemoryLevel{"L2", {1e6, "test"}, {1e12, "test"}});
  RooflineCostModel m(hw);
  OpCounts small{0, 4e5, 4e5}, large{0, 4e7, 4e7};
  EXPECT_NEAR(m.price("own.eltwise", "eltwise.stream", small).memoryS, 8e5 / 1e12, 1e-15);
  EXPECT_NEAR(m.price("own.eltwise", "eltwise.stream", large).memoryS, 8e7 / (1e11 * 0.8), 1e-12);
  // Gathers keep their class rate even when small.
  EXPECT_NEAR(m.price("own.gather", "gather.uniform", small).memoryS, 8e5 / (1e11 * 0.5), 1e-12);
}

TEST(Roofline, GemmRateCurveInterpolatesLogLinearlyAndClampsAtTheEnds) {
  HardwareProfile hw = roundProfile();
  KernelEfficiency e;
  e.kernel = "cublas.sgemm";
  e.shapeClass = "gemm.medium";
  e.flopsPerS = 5e11;  // class median: used only without a curve
  e.overheadS = 2e-6;
  e.samples = 3;
  e.source = "measured: test";
  // 1e6 FLOP at 1e10 FLOP/s, 1e8 at 1e12, 1e10 at 4e11 (net of overhead).
  e.curve = {{1e6, 1e10}, {1e8, 1e12}, {1e10, 4e11}};
  hw.efficiencies.push_back(e);
  RooflineCostModel m(hw);
  auto at = [&](double flops) { return m.price("cublas.sgemm", "gemm.medium", OpCounts{flops, 1e3, 1e3}); };
  // 1e7 is halfway between 1e6 and 1e8 in log: rate sqrt(1e10 * 1e12) = 1e11.
  KernelEstimate mid = at(1e7);
  EXPECT_NEAR(mid.computeS, 1e7 / 1e11, 1e-4 * 1e-12);
  EXPECT_NEAR(mid.seconds, 1e-4 + 2e-6, 1e-15);
  EXPECT_EQ(mid.bound, Bound::kCompute);
  // 1e9 is halfway between 1e8 and 1e10: rate sqrt(1e12 * 4e11) = 2e11 * sqrt(10).
  EXPECT_NEAR(at(1e9).computeS, 1e9 / (2e11 * std::sqrt(10.0)), 1e-15);
  // On a point: its own rate.
  EXPECT_NEAR(at(1e8).computeS, 1e8 / 1e12, 1e-18);
  // Outside the curve: clamped to the end points.
  EXPECT_NEAR(at(1e4).computeS, 1e4 / 1e10, 1e-18);
  EXPECT_NEAR(at(1e12).computeS, 1e12 / 4e11, 1e-12);
  // Memory still bounds the call, at device bandwidth (a curve's entry never
  // prices bytes below it): 2e9 bytes at 1e11 B/s beat 1e7 FLOP at 1e11 FLOP/s.
  KernelEstimate memBound = m.price("cublas.sgemm", "gemm.medium", OpCounts{1e7, 1e9, 1e9});
  EXPECT_EQ(memBound.bound, Bound::kMemory);
  EXPECT_NEAR(memBound.seconds, 2e9 / 1e11 + 2e-6, 1e-12);
  // An entry bytes_per_s above device bandwidth (cache-resident) is kept.
  hw.efficiencies.back().bytesPerS = 4e11;
  EXPECT_NEAR(RooflineCostModel(hw).price("cublas.sgemm", "gemm.medium", OpCounts{1e7, 1e9, 1e9}).memoryS,
              2e9 / 4e11, 1e-12);
  hw.efficiencies.back().bytesPerS = 0;
  // Without the curve the class median prices every size.
  hw.efficiencies.back().curve.clear();
  RooflineCostModel flat(hw);
  EXPECT_NEAR(flat.price("cublas.sgemm", "gemm.medium", OpCounts{1e7, 1e3, 1e3}).computeS, 1e7 / 5e11, 1e-18);
  // Another class of the same kernel (no entry of its own) ignores the curve.
  hw.efficiencies.back().curve = e.curve;
  RooflineCostModel other(hw);
  EXPECT_NEAR(other.price("cublas.sgemm", "gemm.large", OpCounts{1e7, 1e3, 1e3}).computeS, 1e7 / (1e12 * 0.8),
              1e-18);
}

TEST(Roofline, RooflinePositionSaturatesAtTheRidgePoint) {
  HardwareProfile hw = roundProfile();  // ridge at 10 FLOP/B
  EXPECT_DOUBLE_EQ(rooflinePosition(1.0, hw), 0.1);
  EXPECT_DOUBLE_EQ(rooflinePosition(10.0, hw), 1.0);
  EXPECT_DOUBLE_EQ(rooflinePosition(1000.0, hw), 1.0);
}

}  // namespace
}  // namespace cagr
