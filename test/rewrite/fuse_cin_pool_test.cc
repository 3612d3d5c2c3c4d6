// A CIN layer's sum-pooling fused into its kernel (issue 6): the importer
// pushes xDeepFM's ReduceSum through the concat of the layers' maps (one
// pooling per layer, same values on the reference); fuse offers CIN + ReLU
// + ReduceSum over D on the H200 (the map may stay an output the next layer
// reads) and not on the CPU (own.cin takes no tail); its pricing; the group's rules; the
// greedy H200 plan for xDeepFM pools every layer in its own kernel; a fused
// plan agrees with the HIR on the reference executor.
#include <algorithm>

#include "../backends/cin_pool_util.h"
#include "cagr/analysis.h"
#include "cagr/cost.h"
#include "cagr/policy.h"
#include "rewrite_test_util.h"

namespace cagr {
namespace {

using rectest::Builder;
using rectest::uniform;

Graph pooledLayers(int64_t d = 8) {
  return rectest::pooledCinLayers(d);
}

NodeId byName(const Graph& g, const std::string& name) {
  for (size_t i = 0; i < g.nodes().size(); ++i) {
    if (g.nodes()[i].name == name) return static_cast<NodeId>(i);
  }
  ADD_FAILURE() << "no node " << name;
  return -1;
}

const Candidate* fuseOf(const std::vector<Candidate>& cands, const Graph& g, const std::vector<std::string>& names) {
  std::vector<NodeId> want;
  for (const std::string& n : names) want.push_back(byName(g, n));
  std::sort(want.begin(), want.end());
  for (const Candidate& c : cands) {
    if (c.action.nodes == want) return &c;
  }
  return nullptr;
}

TEST(FuseCinPool, OfferedOnTheH200WithTheMapStillReadByTheNextLayer) {
  Graph g = pooledLayers();
  const Target h200 = rwtest::target("h200");
  // c1 + r1 first (the existing CIN + activation fusion), then its pooling.
  auto first = rwtest::candidatesOf(g, h200, ActionKind::kFuse);
  const Candidate* cr = fuseOf(first, g, {"c1", "r1"});
  ASSERT_NE(cr, nullptr);
  Graph h = rwtest::applied(g, h200, cr->action);
  auto next = rwtest::candidatesOf(h, h200, ActionKind::kFuse);
  const Candidate* pooled = fuseOf(next, h, {"c1", "r1", "p1"});
  ASSERT_NE(pooled, nullptr) << "r1 is also c2's operand, yet the pooling joins c1's kernel";
  const Candidate* last = fuseOf(next, h, {"c2", "p2"});
  ASSERT_NE(last, nullptr);
  auto shape = classifyGroup(h, pooled->action.nodes);
  ASSERT_TRUE(shape.isOk()) << shape.status().message();
  EXPECT_EQ(shape->pattern, Pattern::kCin);
  EXPECT_EQ(shape->anchor, byName(h, "c1"));
  std::vector<std::string> names;
  for (KernelId k : kernelsFor(h, pooled->action.nodes, *shape, h200, nullptr)) names.push_back(kernelInfo(k).name);
  EXPECT_NE(std::find(names.begin(), names.end(), "nvrtc.cin"), names.end());
  EXPECT_NE(std::find(names.begin(), names.end(), "cublaslt.cin"), names.end());
  // The fused plan computes what the HIR does (the reference runs members one by one).
  Graph fused = rwtest::applied(rwtest::applied(h, h200, pooled->action), h200, last->action);
  rectest::Inputs in{{"x", uniform({5, 6, 8}, 11)}};
  auto want = runReference(g, in);
  auto got = runReference(fused, in);
  ASSERT_TRUE(want.isOk() && got.isOk());
  EXPECT_TRUE(compareTensors((*got)[0], (*want)[0], 0, 0).close);
}

// The same layers unfused: each CIN alone on `kernel`, the ReLU and the sums separate kernels.
Graph unfusedOn(const std::string& kernel) {
  Graph g = pooledLayers();
  for (Node& n : g.mutableNodes()) {
    if (n.op == OpKind::kCIN) n.mir.kernel = *kernelByName(kernel);
  }
  return g;
}

TEST(FuseCinPool, PricedAsOneKernelThatNeverReadsItsMapBack) {
  // On the built-in H200 and on the profile probed on it: three kernels (r1, p1, p2) fewer, the
  // layer-2 map neither written nor read, the layer-1 map written once and not read back by its sum.
  for (const std::string& platform : {std::string("h200"), rwtest::repoPath("bench/results/hw/h200-probed.json")}) {
    RooflineCostModel m(rwtest::target(platform).hw);
    for (const std::string kernel : {"nvrtc.cin", "cublaslt.cin"}) {
      auto before = m.graph(unfusedOn(kernel), defaultBindings(pooledLayers(), 4096));
      Graph fused = rectest::pooledCinLayers(8, kernel);
      auto after = m.graph(fused, defaultBindings(fused, 4096));
      ASSERT_TRUE(before.isOk() && after.isOk());
      EXPECT_EQ(after->kernels.size() + 3, before->kernels.size()) << kernel << " on " << platform;
      EXPECT_LT(after->latencyS, before->latencyS) << kernel << " on " << platform;
      EXPECT_LT(after->peakMemoryBytes, before->peakMemoryBytes) << kernel << " on " << platform;
      const NodeId cat = byName(fused, "out");  // the concat of the sums, the same kernel in both
      const auto layersMemory = [&](const GraphEstimate& e) {
        double s = 0;
        for (const auto& k : e.kernels) s += k.members.back() == cat ? 0 : k.estimate.memoryS;
        return s;
      };
      const double unfusedMemory = layersMemory(*before), fusedMemory = layersMemory(*after);
      EXPECT_LT(fusedMemory, unfusedMemory) << kernel << " on " << platform;
      // Layer 1's pooled group writes its map once (for c2) and its sum reads it from registers: about
      // the CIN + ReLU group plus the sums' write (small, so priced at a small transfer's rate on the
      // probed profile), well under a lone sum's read of the map.
      Graph partial = unfusedOn(kernel);
      for (const char* name : {"c1", "r1"}) {
        partial.mutableNodes()[static_cast<size_t>(byName(partial, name))].mir.group = 0;
      }
      auto half = m.graph(partial, defaultBindings(partial, 4096));
      ASSERT_TRUE(half.isOk());
      const auto memoryOf = [](const GraphEstimate& e, NodeId first) {
        for (const auto& k : e.kernels) {
          if (k.members.front() == first) return k.estimate.memoryS;
        }
        return -1.0;
      };
      const double pooled = memoryOf(*after, byName(fused, "c1")), cinRelu = memoryOf(*half, byName(fused, "c1"));
      EXPECT_LT(pooled, cinRelu + 0.5 * memoryOf(*half, byName(fused, "p1"))) << kernel << " on " << platform;
    }
  }
}

TEST(FuseCinPool, NotOfferedOnTheCpuWhoseCinKernelTakesNoTail) {
  Graph g = pooledLayers();
  const Target cpu = rwtest::target("x86-64");
  auto cands = rwtest::candidatesOf(g, cpu, ActionKind::kFuse, true);
  const Candidate* c = fuseOf(cands, g, {"c2", "p2"});
  ASSERT_NE(c, nullptr);
  EXPECT_FALSE(c->legal());
  EXPECT_NE(c->reason.find("own.cin"), std::string::npos) << c->reason;
}

TEST(FuseCinPool, GroupRules) {
  const Target h200 = rwtest::target("h200");
  {  // an embedding dim the generated kernel's 64-column tile cannot hold whole
    Graph g = pooledLayers(10);
    auto shape = classifyGroup(g, {byName(g, "c2"), byName(g, "p2")});
    ASSERT_FALSE(shape.isOk());
    EXPECT_NE(shape.status().message().find("divide 64"), std::string::npos) << shape.status().message();
  }
  {  // a sum over O, not D
    Builder b;
    ValueId x = b.input("x", DType::kF32, {kBatch, 6, 8});
    ValueId c = b.op(OpKind::kCIN, {x, x, b.constant("w", {40, 36}, 1)}, "c");
    Attrs a;
    a.set("axes", std::vector<int64_t>{1});
    b.g.addOutput(b.op(OpKind::kReduceSum, {c}, "s", a));
    auto shape = classifyGroup(b.g, {byName(b.g, "c"), byName(b.g, "s")});
    ASSERT_FALSE(shape.isOk());
    EXPECT_NE(shape.status().message().find("embedding axis"), std::string::npos) << shape.status().message();
  }
  {  // the map may stay an output, the row sums are last: CIN + ReduceSum + ReLU is no group
    Graph g = pooledLayers();
    EXPECT_FALSE(classifyGroup(g, {byName(g, "c1"), byName(g, "p1")}).isOk()) << "p1 reads r1, not c1";
  }
}

TEST(FuseCinPool, ImportPushesXdeepfmsSumThroughTheConcatOfItsLayers) {
  Graph g = rwtest::zoo("xdeepfm");
  int pooled = 0, bigConcats = 0;
  for (const Node& n : g.nodes()) {
    if (n.op == OpKind::kReduceSum && g.value(n.inputs[0]).producer >= 0 &&
        g.node(g.value(n.inputs[0]).producer).op == OpKind::kRelu) {
      ++pooled;
    }
    if (n.op == OpKind::kConcat && g.type(n.outputs[0]).rank() == 3 && g.type(n.outputs[0]).dims[1] == 600)
      ++bigConcats;
  }
  EXPECT_EQ(pooled, 3) << "one sum over D per CIN layer";
  EXPECT_EQ(bigConcats, 0) << "the [B, 600, 16] concat of the maps is gone";
  // Same values as the graph as exported (patterns off: the sum of the concat).
  ImportOptions raw;
  raw.recognizePatterns = false;
  auto plain = importOnnx(rwtest::repoPath("zoo/onnx/xdeepfm.dynamo.onnx"), raw);
  ASSERT_TRUE(plain.isOk()) << plain.status().message();
  auto in = rwtest::zooInputs("xdeepfm");
  auto want = runReference(*plain, in);
  auto got = runReference(g, in);
  ASSERT_TRUE(want.isOk() && got.isOk());
  auto cmp = compareTensors((*got)[0], (*want)[0], 1e-5, 1e-4);
  EXPECT_TRUE(cmp.close) << cmp.message;
}

TEST(FuseCinPool, GreedyH200PlanForXdeepfmPoolsEveryCinLayerInItsKernel) {
  Graph hir = rwtest::zoo("xdeepfm");
  auto policy = makePolicy("greedy");
  ASSERT_TRUE(policy.isOk());
  EnvConfig cfg;
  cfg.batch = 4096;
  auto r = optimize(hir, rwtest::target("h200"), **policy, cfg);
  ASSERT_TRUE(r.isOk()) << r.status().message();
  const Graph& plan = r->plan;
  int pooledGroups = 0;
  for (const auto& members : kernelGroups(plan)) {
    const Node& first = plan.node(members.front());
    const Node& last = plan.node(members.back());
    if (first.op == OpKind::kCIN && last.op == OpKind::kReduceSum) ++pooledGroups;
  }
  EXPECT_EQ(pooledGroups, 3) << "each layer's sum over D runs in the layer's own kernel";
  // And the plan agrees with the HIR on the reference (within set_precision's stated bounds).
  auto in = rwtest::zooInputs("xdeepfm");
  auto want = runReference(hir, in);
  auto got = runReference(plan, in);
  ASSERT_TRUE(want.isOk() && got.isOk()) << (got.isOk() ? want.status().message() : got.status().message());
  auto cmp = compareTensors((*got)[0], (*want)[0], 5e-2, 5e-2);
  EXPECT_TRUE(cmp.close) << cmp.message;
}

TEST(FuseCinPool, CpuGreedyPlanForXdeepfmHasNoPooledCinGroup) {
  Graph hir = rwtest::zoo("xdeepfm");
  auto policy = makePolicy("greedy");
  ASSERT_TRUE(policy.isOk());
  auto r = optimize(hir, rwtest::target("x86-64"), **policy, EnvConfig{});
  ASSERT_TRUE(r.isOk()) << r.status().message();
  for (const auto& members : kernelGroups(r->plan)) {
    EXPECT_FALSE(members.size() > 1 && r->plan.node(members.front()).op == OpKind::kCIN &&
                 r->plan.node(members.back()).op == OpKind::kReduceSum);
  }
}

}  // namespace
}  // namespace cagr
