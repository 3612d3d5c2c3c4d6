// Classes that only a backend-probed CPU profile has (softmax rows, data
// movement, gathers from cached tables, batched GEMMs), their byte curves,
// and the fusion coefficient alpha in plan pricing.
#include <gtest/gtest.h>

#include "cagr/cost.h"
#include "cagr/mir.h"

namespace cagr {
namespace {

KernelEfficiency entry(const std::string& kernel, const std::string& cls, std::vector<RatePoint> curve) {
  KernelEfficiency e;
  e.kernel = kernel;
  e.shapeClass = cls;
  e.bytesPerS = 1e10;
  e.flopsPerS = cls == "gemm.batched" ? 1e10 : 0;
  e.overheadS = 1e-6;
  e.samples = 3;
  e.source = "measured: test";
  e.curve = std::move(curve);
  return e;
}

HardwareProfile cpuProfile(bool probed) {
  HardwareProfile hw;
  hw.name = "probed";
  hw.kind = "cpu";
  hw.provenance = "measured";
  hw.peakFlops["fp32"] = {1e11, "test"};
  hw.memory.push_back({"L2", {2e6, "test"}, {1e11, "test"}});
  hw.memory.push_back({"DRAM", {1e10, "test"}, {1e10, "test"}});
  hw.launchLatencyS = {1e-6, "test"};
  hw.efficiencies.push_back(entry("own.eltwise", "eltwise.stream",
                                  probed ? std::vector<RatePoint>{{1e4, 2e10}, {1e8, 5e9}} : std::vector<RatePoint>{}));
  if (!probed) return hw;
  hw.efficiencies.push_back(entry("own.softmax", "softmax.rows", {{1e4, 4e9}}));
  hw.efficiencies.push_back(entry("own.movement", "movement.strided", {{1e4, 1e10}}));
  hw.efficiencies.push_back(entry("own.movement", "movement.inner", {{1e4, 5e9}}));
  hw.efficiencies.push_back(entry("own.gather", "gather.cached", {{1e4, 3e10}}));
  hw.efficiencies.push_back(entry("own.batched_gemm", "gemm.batched", {{1e6, 5e10}}));
  return hw;
}

// x:[N,22,2,16] -> transposes, a batched product of two activations, a
// softmax, a lookup in a small table and a column picked out of the ids.
struct Probed {
  Graph g;
  NodeId inner, strided, scores, softmax, lookup, select;
};

Probed probedGraph() {
  Probed p;
  Graph& g = p.g;
  ValueId x = g.addInput("x", {DType::kF32, {kBatch, 22, 2, 16}});
  ValueId ids = g.addInput("ids", {DType::kI64, {kBatch, 4}});
  Attrs a, b, pick;
  a.set("perm", std::vector<int64_t>{0, 2, 1, 3});
  b.set("perm", std::vector<int64_t>{0, 2, 3, 1});
  ValueId q = *g.add(OpKind::kTranspose, {x}, a);
  ValueId k = *g.add(OpKind::kTranspose, {x}, b);
  ValueId s = *g.add(OpKind::kMatMul, {q, k});
  Attrs last;
  last.set("axis", int64_t{-1});
  ValueId sm = *g.add(OpKind::kSoftmax, {s}, last);
  pick.set("axis", int64_t{1});
  ValueId col = *g.add(OpKind::kGather, {ids, g.addConstant("one", Tensor(DType::kI64, {}))}, pick);
  Attrs rows;
  rows.set("axis", int64_t{0});
  ValueId emb = *g.add(OpKind::kGather, {g.addConstant("table", Tensor(DType::kF32, {1000, 16})), col}, rows);
  g.addOutput(sm);
  g.addOutput(emb);
  p.strided = 0, p.inner = 1, p.scores = 2, p.softmax = 3, p.select = 4, p.lookup = 5;
  return p;
}

std::string classOf(const RooflineCostModel& m, const Graph& g, const GraphStats& st, NodeId n) {
  return m.kernelClass(g, g.node(n), st.nodes[static_cast<size_t>(n)]).second;
}

TEST(ProbedClasses, OpsTakeTheBackendMeasuredClassesWhereTheProfileHasThem) {
  Probed p = probedGraph();
  auto st = computeStats(p.g, defaultBindings(p.g, 256));
  ASSERT_TRUE(st.isOk()) << st.status().message();
  RooflineCostModel probed(cpuProfile(true)), plain(cpuProfile(false));
  EXPECT_EQ(classOf(probed, p.g, *st, p.strided), "movement.strided");
  EXPECT_EQ(classOf(probed, p.g, *st, p.inner), "movement.inner");
  EXPECT_EQ(classOf(probed, p.g, *st, p.scores), "gemm.batched");
  EXPECT_EQ(classOf(probed, p.g, *st, p.softmax), "softmax.rows");
  EXPECT_EQ(classOf(probed, p.g, *st, p.select), "movement.strided");
  EXPECT_EQ(classOf(probed, p.g, *st, p.lookup), "gather.cached");  // 64 KB table, 2 MB L2
  // A profile without them: the classes every profile has.
  EXPECT_EQ(classOf(plain, p.g, *st, p.inner), "eltwise.stream");
  EXPECT_EQ(classOf(plain, p.g, *st, p.softmax), "eltwise.stream");
  EXPECT_EQ(classOf(plain, p.g, *st, p.scores).rfind("gemm.", 0), 0u);
  EXPECT_NE(classOf(plain, p.g, *st, p.scores), "gemm.batched");
  EXPECT_EQ(classOf(plain, p.g, *st, p.lookup).rfind("gather.", 0), 0u);
}

TEST(ProbedClasses, StreamingKernelsReadTheirByteCurve) {
  RooflineCostModel m(cpuProfile(true));
  // 1e6 bytes: halfway (in log) between 1e4 at 2e10 and 1e8 at 5e9 -> 1e10 B/s.
  KernelEstimate e = m.price("own.eltwise", "eltwise.stream", OpCounts{0, 5e5, 5e5});
  EXPECT_NEAR(e.memoryS, 1e6 / 1e10, 1e-12);
  EXPECT_NEAR(e.launchS, 1e-6, 1e-15);
  // Without a curve the cache level that holds the call sets the rate.
  RooflineCostModel plain(cpuProfile(false));
  EXPECT_NEAR(plain.price("own.eltwise", "eltwise.stream", OpCounts{0, 5e5, 5e5}).memoryS, 1e6 / 1e11, 1e-12);
}

TEST(ProbedClasses, AChosenKernelWithoutAnEntryForTheClassIsPricedByTheClasssKernel) {
  Probed p = probedGraph();
  HardwareProfile hw = cpuProfile(true);
  KernelEfficiency reduce = entry("own.reduce", "reduce.rows", {{1e4, 1e11}});  // far faster than softmax rows
  hw.efficiencies.push_back(reduce);
  auto reduceKernel = kernelByName("own.reduce");
  ASSERT_TRUE(reduceKernel.isOk()) << reduceKernel.status().message();
  RooflineCostModel m(hw);
  auto plain = m.graph(p.g, defaultBindings(p.g, 256));
  p.g.mutableNodes()[static_cast<size_t>(p.softmax)].mir.kernel = *reduceKernel;
  auto chosen = m.graph(p.g, defaultBindings(p.g, 256));
  ASSERT_TRUE(plain.isOk() && chosen.isOk());
  // The softmax still runs at the measured softmax.rows rate, not at the
  // reduction kernel's rate on reduce.rows.
  EXPECT_NEAR(chosen->nodes[static_cast<size_t>(p.softmax)].memoryS,
              plain->nodes[static_cast<size_t>(p.softmax)].memoryS, 1e-12);
  EXPECT_GT(plain->nodes[static_cast<size_t>(p.softmax)].memoryS, 0);
}

// relu(x + y) fused: the intermediate's write and read cost (1 - alpha) of
// their traffic.
double fusedChainMemoryS(double alpha) {
  Graph g;
  ValueId x = g.addInput("x", {DType::kF32, {kBatch, 1000}});
  ValueId y = g.addInput("y", {DType::kF32, {kBatch, 1000}});
  ValueId s = *g.add(OpKind::kAdd, {x, y});
  g.addOutput(*g.add(OpKind::kRelu, {s}));
  g.mutableNodes()[0].mir.group = g.mutableNodes()[1].mir.group = 0;
  HardwareProfile hw = cpuProfile(false);
  hw.memory.erase(hw.memory.begin());  // DRAM only: one rate for every size
  hw.traits.fuseAlpha = alpha;
  auto e = RooflineCostModel(hw).graph(g, defaultBindings(g, 1000));
  EXPECT_TRUE(e.isOk());
  return e.isOk() ? e->kernels.at(0).estimate.memoryS : 0;
}

TEST(ProbedClasses, FuseAlphaSetsTheShareOfInternalTrafficFusionSaves) {
  const double tensor = 1000.0 * 1000 * 4, bw = 1e10;
  // alpha 1: x, y read and the output written; alpha 0: the intermediate too.
  EXPECT_NEAR(fusedChainMemoryS(1.0), 3 * tensor / bw, 1e-9);
  EXPECT_NEAR(fusedChainMemoryS(0.0), 5 * tensor / bw, 1e-9);
  EXPECT_NEAR(fusedChainMemoryS(0.5), 4 * tensor / bw, 1e-9);
}

}  // namespace
}  // namespace cagr
