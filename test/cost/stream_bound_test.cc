// Streams share one device: two streams of large GEMMs are not modelled
// faster than the sum of their kernels' busy time (work, not launch floors),
// while small launch-bound kernels on two streams still overlap; on the CPU
// (one kernel at a time) streams gain nothing. On a CUDA-probed profile a
// plan pays the graph replay's fixed cost once, a library GEMM keeps its own
// per-call floor when larger than the graph floor, and unassigned GEMMs are
// priced as cuBLASLt (what the CUDA backend calls). All modelled.
#include <gtest/gtest.h>

#include "cagr/cost.h"
#include "cagr/mir.h"
#include "cost/kernel_class.h"
#include "hw/cuda_probes.h"

namespace cagr {
namespace {

Tensor zeros(std::vector<int64_t> shape) { return Tensor(DType::kF32, std::move(shape)); }

// x -> two independent chains of `depth` Gemm(n x n) layers, summed.
Graph twoBranches(int64_t n, int depth) {
  Graph g;
  ValueId x = g.addInput("x", {DType::kF32, {kBatch, n}});
  Attrs a;
  a.set("transB", int64_t{1});
  ValueId ends[2];
  for (int b = 0; b < 2; ++b) {
    ValueId h = x;
    for (int d = 0; d < depth; ++d) {
      std::string name = "fc" + std::to_string(b) + "_" + std::to_string(d);
      h = *g.add(OpKind::kGemm, {h, g.addConstant(name + ".w", zeros({n, n}))}, a, name);
    }
    ends[b] = h;
  }
  g.addOutput(*g.add(OpKind::kAdd, {ends[0], ends[1]}, {}, "sum"), "y");
  return g;
}

// The second branch's nodes on stream 1.
Graph onTwoStreams(Graph g) {
  for (Node& n : g.mutableNodes()) {
    if (n.name.rfind("fc1_", 0) == 0) n.mir.stream = 1;
  }
  return g;
}

HardwareProfile profile(const std::string& name) {
  auto p = builtinProfile(name);
  EXPECT_TRUE(p.isOk());
  return p.isOk() ? *p : HardwareProfile{};
}

GraphEstimate priced(const HardwareProfile& hw, const Graph& g, int64_t batch) {
  RooflineCostModel m(hw);
  auto e = m.graph(g, defaultBindings(g, batch));
  EXPECT_TRUE(e.isOk()) << e.status().message();
  return e.isOk() ? *e : GraphEstimate{};
}

double busy(const GraphEstimate& e) {
  double s = 0;
  for (const GroupEstimate& k : e.kernels) s += k.estimate.seconds - k.estimate.launchS;
  return s;
}

TEST(StreamBound, TwoStreamsOfLargeGemmsAreNotFasterThanTheirSummedWork) {
  HardwareProfile hw = profile("h200");
  Graph g = twoBranches(2048, 3);
  GraphEstimate one = priced(hw, g, 8192);
  GraphEstimate two = priced(hw, onTwoStreams(g), 8192);
  ASSERT_EQ(two.kernels.size(), 7u);
  // Compute-bound GEMMs: the work dominates the floors.
  EXPECT_GT(busy(two), 10 * two.launchS);
  EXPECT_GE(two.latencyS, busy(two) - 1e-12);
  EXPECT_LE(two.latencyS, one.latencyS + 1e-12);  // at most the floors overlap
  EXPECT_GT(two.latencyS, 0.95 * one.latencyS);
}

TEST(StreamBound, SmallLaunchBoundKernelsStillOverlap) {
  HardwareProfile hw = profile("h200");
  Graph g = twoBranches(16, 4);
  GraphEstimate one = priced(hw, g, 8);
  GraphEstimate two = priced(hw, onTwoStreams(g), 8);
  EXPECT_GT(two.launchS, 10 * busy(two));  // launch-bound
  // Four of the eight GEMMs run beside the other four: close to half.
  EXPECT_LT(two.latencyS, 0.7 * one.latencyS);
}

TEST(StreamBound, CpuStreamsRunOneKernelAtATime) {
  HardwareProfile hw = profile("x86-64");
  Graph g = twoBranches(16, 4);
  GraphEstimate one = priced(hw, g, 8);
  GraphEstimate two = priced(hw, onTwoStreams(g), 8);
  EXPECT_NEAR(two.latencyS, one.latencyS, 1e-12);
  EXPECT_NEAR(two.latencyS, two.serialS, 1e-12);
}

KernelEfficiency floorEntry(const char* cls, double s) {
  KernelEfficiency e;
  e.kernel = kGraphStepKernel;
  e.shapeClass = cls;
  e.overheadS = s;
  e.bytesPerS = 1e12;
  e.samples = 1;
  e.source = "measured: test";
  return e;
}

TEST(StreamBound, GraphReplayPaysItsFixedCostOnce) {
  HardwareProfile hw = profile("h200");
  Graph g = twoBranches(64, 2);
  hw.efficiencies.push_back(floorEntry(kGraphStepClass, 1e-6));
  GraphEstimate floorOnly = priced(hw, g, 64);
  EXPECT_DOUBLE_EQ(graphReplayFixed(hw), 0.0);
  hw.efficiencies.push_back(floorEntry(kGraphReplayClass, 4e-6));
  EXPECT_DOUBLE_EQ(graphReplayFixed(hw), 4e-6);
  GraphEstimate replay = priced(hw, g, 64);
  EXPECT_NEAR(replay.latencyS - floorOnly.latencyS, 4e-6 - 1e-6, 1e-12);
  // The constant the profiler writes is the one the cost model reads.
  EXPECT_STREQ(hw::kGraphReplayClass, kGraphReplayClass);
  // Without the graph floor (no CUDA backend probes) nothing is charged.
  HardwareProfile plain = profile("h200");
  plain.efficiencies.push_back(floorEntry(kGraphReplayClass, 4e-6));
  EXPECT_NEAR(priced(plain, g, 64).latencyS, priced(profile("h200"), g, 64).latencyS, 1e-15);
}

TEST(StreamBound, LibraryGemmKeepsItsOwnFloorInAGraphAndIsPricedAsCublasLt) {
  HardwareProfile hw = profile("h200");
  KernelEfficiency lt;
  lt.kernel = "cublaslt.matmul";
  lt.shapeClass = "gemm.small";
  lt.flopsPerS = 1e12;
  lt.bytesPerS = 1e12;
  lt.overheadS = 6e-6;
  lt.samples = 3;
  lt.source = "measured: test";
  hw.efficiencies.push_back(lt);
  Graph g = twoBranches(64, 1);  // two 64x64 GEMMs at batch 64 (gemm.small) and an add
  GraphEstimate before = priced(hw, g, 64);
  EXPECT_NE(before.kernels.front().estimate.kernel, "cublaslt.matmul");  // no CUDA backend probes: as before
  hw.efficiencies.push_back(floorEntry(kGraphStepClass, 1e-6));
  GraphEstimate after = priced(hw, g, 64);
  ASSERT_EQ(after.kernels.size(), 3u);
  EXPECT_EQ(after.kernels[0].estimate.kernel, "cublaslt.matmul");
  EXPECT_DOUBLE_EQ(after.kernels[0].estimate.launchS, 6e-6);  // its own per-call floor, above the graph's
  EXPECT_DOUBLE_EQ(after.kernels[2].estimate.launchS, 1e-6);  // the add: the graph floor
  // A generated GEMM priced at the library's rates keeps the library's floor:
  // not cheaper than cuBLASLt by the floor alone.
  Graph chosen = g;
  for (Node& n : chosen.mutableNodes()) {
    if (n.op == OpKind::kGemm) n.mir.kernel = *kernelByName("nvrtc.gemm_small");
  }
  GraphEstimate generated = priced(hw, chosen, 64);
  EXPECT_EQ(generated.kernels[0].estimate.kernel, "nvrtc.gemm_small");
  EXPECT_DOUBLE_EQ(generated.kernels[0].estimate.launchS, 6e-6);
  EXPECT_NEAR(generated.latencyS, after.latencyS, 1e-12);
  EXPECT_TRUE(libraryGemmKernel("cublas.sgemm"));
  EXPECT_TRUE(libraryGemmKernel("cublaslt.matmul"));
  EXPECT_FALSE(libraryGemmKernel("cublaslt.cin"));
  EXPECT_FALSE(libraryGemmKernel("nvrtc.eltwise"));
}

}  // namespace
}  // namespace cagr
