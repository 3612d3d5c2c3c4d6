// Plan pricing: decisions change the modelled cost the way the hardware
// would — fused groups save traffic and launches, reduced-precision tables
// move fewer bytes, a fused CIN never writes its outer product, misaligned
// tensor-core GEMMs are slow until padded, in-place concats are free.
#include <gtest/gtest.h>

#include "../rewrite/rewrite_test_util.h"
#include "cagr/cost.h"

namespace cagr {
namespace {

Tensor zeros(std::vector<int64_t> shape) { return Tensor(DType::kF32, std::move(shape)); }

GraphEstimate priced(const Graph& g, const std::string& platform, int64_t batch) {
  RooflineCostModel m(rwtest::target(platform).hw);
  auto e = m.graph(g, defaultBindings(g, batch));
  EXPECT_TRUE(e.isOk()) << e.status().message();
  return e.isOk() ? *e : GraphEstimate{};
}

Graph gemmRelu(int64_t k, int64_t n) {
  Graph g;
  ValueId x = g.addInput("x", {DType::kF32, {kBatch, k}});
  Attrs a;
  a.set("transB", int64_t{1});
  ValueId h = *g.add(OpKind::kGemm, {x, g.addConstant("w", zeros({n, k}))}, a, "fc");
  g.addOutput(*g.add(OpKind::kRelu, {h}, {}, "relu"), "y");
  return g;
}

TEST(PlanCost, FusingAnEpilogueSavesALaunchAndTheIntermediate) {
  Graph g = gemmRelu(512, 512);
  GraphEstimate before = priced(g, "h200", 4096);
  g.mutableNodes()[0].mir.group = g.mutableNodes()[1].mir.group = 0;
  GraphEstimate after = priced(g, "h200", 4096);
  EXPECT_EQ(before.kernels.size(), 2u);
  ASSERT_EQ(after.kernels.size(), 1u);
  EXPECT_LT(after.latencyS, before.latencyS);
  EXPECT_LE(after.peakMemoryBytes, before.peakMemoryBytes);  // h is never written
  EXPECT_EQ(after.nodes[1].kernel, "fused");
}

TEST(PlanCost, ReducedPrecisionTablesMoveFewerBytes) {
  Graph g;
  ValueId ids = g.addInput("ids", {DType::kI64, {kBatch}});
  ValueId table = g.addConstant("table", zeros({100000, 64}));
  g.addOutput(*g.add(OpKind::kGather, {table, ids}, {}, "lookup"), "e");
  GraphEstimate f32 = priced(g, "h200", 65536);
  g.mutableValue(table).mir.storage = Precision::kBF16;
  GraphEstimate bf16 = priced(g, "h200", 65536);
  g.mutableValue(table).mir.storage = Precision::kInt8Rowwise;
  GraphEstimate i8 = priced(g, "h200", 65536);
  EXPECT_LT(bf16.nodes[0].memoryS, f32.nodes[0].memoryS);
  EXPECT_LT(i8.nodes[0].memoryS, bf16.nodes[0].memoryS);
  EXPECT_LT(bf16.peakMemoryBytes, f32.peakMemoryBytes);  // the table itself shrinks
}

TEST(PlanCost, MisalignedTensorCoreGemmIsSlowUntilPadded) {
  Graph g = gemmRelu(479, 367);
  GraphEstimate fp32 = priced(g, "h200", 4096);
  g.mutableNodes()[0].mir.math = Precision::kBF16;
  GraphEstimate bf16 = priced(g, "h200", 4096);
  g.mutableValue(g.node(0).inputs[1]).mir.layout = Layout::kPadded;
  GraphEstimate padded = priced(g, "h200", 4096);
  EXPECT_LT(bf16.nodes[0].computeS, fp32.nodes[0].computeS);  // tensor cores even when misaligned
  EXPECT_NEAR(padded.nodes[0].computeS * 2.0, bf16.nodes[0].computeS, 1e-15);
}

TEST(PlanCost, FusedCinNeverWritesItsOuterProduct) {
  Graph g;
  ValueId x0 = g.addInput("x0", {DType::kF32, {kBatch, 20, 16}});
  ValueId w = g.addConstant("w", zeros({64, 400}));
  g.addOutput(*g.add(OpKind::kCIN, {x0, x0, w}, {}, "cin"), "y");
  GraphEstimate plain = priced(g, "h200", 4096);
  g.mutableNodes()[0].mir.kernel = *kernelByName("nvrtc.cin");
  GraphEstimate fused = priced(g, "h200", 4096);
  EXPECT_GT(plain.nodes[0].memoryS, fused.nodes[0].memoryS * 5);
}

TEST(PlanCost, InPlaceConcatIsFree) {
  Graph g;
  ValueId x = g.addInput("x", {DType::kF32, {kBatch, 64}});
  ValueId a = *g.add(OpKind::kRelu, {x}, {}, "a");
  ValueId b = *g.add(OpKind::kSigmoid, {x}, {}, "b");
  Attrs axis;
  axis.set("axis", int64_t{1});
  g.addOutput(*g.add(OpKind::kConcat, {a, b}, axis, "cat"), "y");
  GraphEstimate copy = priced(g, "x86-64", 4096);
  g.mutableNodes()[2].mir.kernel = *kernelByName("own.concat_inplace");
  GraphEstimate inPlace = priced(g, "x86-64", 4096);
  EXPECT_GT(copy.nodes[2].seconds, 0);
  EXPECT_EQ(inPlace.nodes[2].seconds, 0);
  EXPECT_LT(inPlace.peakMemoryBytes, copy.peakMemoryBytes);
}

TEST(PlanCost, PackedWeightsSaveTheCpuRepack) {
  Graph g = gemmRelu(512, 512);
  GraphEstimate plain = priced(g, "x86-64", 64);
  g.mutableValue(g.node(0).inputs[1]).mir.layout = Layout::kPacked;
  GraphEstimate packed = priced(g, "x86-64", 64);
  EXPECT_LT(packed.latencyS, plain.latencyS);
}

}  // namespace
}  // namespace cagr
