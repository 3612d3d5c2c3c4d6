// Two narrow MLP layers as one kernel (issue 6, groups.cc checkGemmChain):
// fuse offers the chain where the CUDA backend's generated GEMM runs it (a
// member names nvrtc.gemm_small, or the profile measured it) and nowhere
// else; the group's rules; the cost model prices one kernel that never
// writes the first layer's rows; greedy on the probed H200 profile fuses
// DLRM's 256 -> 64 -> 16; a fused plan agrees with the HIR.
#include <algorithm>

#include "../backends/gemm_chain_util.h"
#include "cagr/cost.h"
#include "cagr/policy.h"
#include "rewrite_test_util.h"

namespace cagr {
namespace {

using rectest::ChainShape;
using rectest::gemmChain;

NodeId byName(const Graph& g, const std::string& name) {
  for (size_t i = 0; i < g.nodes().size(); ++i) {
    if (g.nodes()[i].name == name) return static_cast<NodeId>(i);
  }
  ADD_FAILURE() << "no node " << name;
  return -1;
}

std::vector<NodeId> ids(const Graph& g, const std::vector<std::string>& names) {
  std::vector<NodeId> out;
  for (const std::string& n : names) out.push_back(byName(g, n));
  std::sort(out.begin(), out.end());
  return out;
}

const Candidate* chainCandidate(const std::vector<Candidate>& cands, const Graph& g) {
  const std::vector<NodeId> want = ids(g, {"g1", "r1", "g2", "r2"});
  for (const Candidate& c : cands) {
    if (c.action.nodes == want) return &c;
  }
  return nullptr;
}

const std::string& probed() {
  static const std::string p = rwtest::repoPath("bench/results/hw/h200-probed.json");
  return p;
}

TEST(FuseGemmChain, OfferedWhereTheGeneratedGemmRunsIt) {
  // Two layer groups with no kernel named: legal on the profile that measured
  // nvrtc.gemm_small, not on the datasheet H200 (it would be left to the
  // default placement, a library call per layer) nor on the CPU.
  Graph layers = gemmChain({}, "");
  for (Node& n : layers.mutableNodes()) n.mir.group = n.name.back() == '1' ? 0 : 1;
  const Target h200 = rwtest::target(probed());
  const std::vector<Candidate> cands = rwtest::candidatesOf(layers, h200, ActionKind::kFuse, true);
  const Candidate* c = chainCandidate(cands, layers);
  ASSERT_NE(c, nullptr);
  EXPECT_TRUE(c->legal()) << c->reason;
  Graph fused = rwtest::applied(layers, h200, c->action);
  EXPECT_EQ(kernelInfo(fused.node(byName(fused, "g2")).mir.kernel).name, std::string("nvrtc.gemm_small"));
  EXPECT_EQ(fused.node(byName(fused, "g2")).mir.group, fused.node(byName(fused, "g1")).mir.group);
  for (const std::string platform : {"h200", "x86-64"}) {
    const std::vector<Candidate> elsewhere =
        rwtest::candidatesOf(layers, rwtest::target(platform), ActionKind::kFuse, true);
    const Candidate* d = chainCandidate(elsewhere, layers);
    ASSERT_NE(d, nullptr) << platform;
    EXPECT_FALSE(d->legal()) << platform;
    EXPECT_FALSE(d->reason.empty()) << platform;
  }
  // A member that names the generated GEMM makes it legal on the datasheet H200 too.
  Graph named = gemmChain({}, "nvrtc.gemm_small");
  const std::vector<Candidate> onNamed = rwtest::candidatesOf(named, rwtest::target("h200"), ActionKind::kFuse);
  EXPECT_NE(chainCandidate(onNamed, named), nullptr);
  // The fused plan computes what the HIR does.
  rectest::Inputs in{{"x", rectest::uniform({7, 256}, 5)}};
  auto want = runReference(gemmChain({}), in);
  auto got = runReference(fused, in);
  ASSERT_TRUE(want.isOk() && got.isOk());
  EXPECT_TRUE(compareTensors((*got)[0], (*want)[0], 0, 0).close);
}

TEST(FuseGemmChain, GroupRules) {
  const std::vector<std::string> all = {"g1", "r1", "g2", "r2"};
  auto why = [&](const Graph& g) {
    auto shape = classifyGroup(g, ids(g, all));
    return shape.isOk() ? std::string() : shape.status().message();
  };
  {
    Graph g = gemmChain({});
    auto shape = classifyGroup(g, ids(g, all));
    ASSERT_TRUE(shape.isOk()) << shape.status().message();
    EXPECT_EQ(shape->pattern, Pattern::kGemm);
    EXPECT_EQ(shape->anchor, byName(g, "g1"));
    EXPECT_TRUE(classifyGroup(g, ids(g, {"g1", "r1", "g2"})).isOk()) << "the second layer's output as the group's";
  }
  ChainShape wide;
  wide.n1 = 128;
  EXPECT_NE(why(gemmChain(wide)).find("narrow"), std::string::npos) << why(gemmChain(wide));
  ChainShape deep;
  deep.k = 300;
  EXPECT_NE(why(gemmChain(deep)).find("narrow"), std::string::npos) << why(gemmChain(deep));
  ChainShape tall;
  tall.n2 = 96;
  EXPECT_NE(why(gemmChain(tall)).find("at most 64"), std::string::npos) << why(gemmChain(tall));
  {  // the first layer's activation also a graph output: its rows would have to be written
    Graph g = gemmChain({});
    g.addOutput(g.node(byName(g, "r1")).outputs[0]);
    EXPECT_NE(why(g).find("leaves the chain"), std::string::npos) << why(g);
  }
  {  // reduced math
    Graph g = gemmChain({});
    g.mutableNodes()[static_cast<size_t>(byName(g, "g2"))].mir.math = Precision::kTF32;
    EXPECT_NE(why(g).find("f32 math"), std::string::npos) << why(g);
  }
  {  // a tail that reads the first layer's rows (they would have to stay for it)
    ChainShape square;
    square.n2 = 64;
    Graph g = gemmChain(square);
    Node& r2 = g.mutableNodes()[static_cast<size_t>(byName(g, "r2"))];
    ValueId r1 = g.node(byName(g, "r1")).outputs[0];
    auto sum = g.add(OpKind::kAdd, {r2.outputs[0], r1}, Attrs(), "s");
    ASSERT_TRUE(sum.isOk());
    std::vector<NodeId> members = ids(g, {"g1", "r1", "g2", "r2", "s"});
    auto shape = classifyGroup(g, members);
    ASSERT_FALSE(shape.isOk());
    EXPECT_NE(shape.status().message().find("leaves the chain"), std::string::npos) << shape.status().message();
  }
  {  // the library cannot run two layers
    Graph g = gemmChain({});
    const Target h200 = rwtest::target(probed());
    auto shape = classifyGroup(g, ids(g, all));
    ASSERT_TRUE(shape.isOk());
    std::vector<std::string> names;
    for (KernelId k : kernelsFor(g, ids(g, all), *shape, h200, nullptr)) names.push_back(kernelInfo(k).name);
    EXPECT_EQ(names, std::vector<std::string>{"nvrtc.gemm_small"});
  }
}

TEST(FuseGemmChain, PricedAsOneKernelThatNeverWritesTheFirstLayersRows) {
  RooflineCostModel m(rwtest::target(probed()).hw);
  Graph two = gemmChain({}, "nvrtc.gemm_small"), one = gemmChain({}, "nvrtc.gemm_small", true);
  auto before = m.graph(two, defaultBindings(two, 4096));
  auto after = m.graph(one, defaultBindings(one, 4096));
  ASSERT_TRUE(before.isOk() && after.isOk());
  EXPECT_EQ(after->kernels.size() + 1, before->kernels.size());
  EXPECT_LT(after->latencyS, before->latencyS);
  EXPECT_LT(after->peakMemoryBytes, before->peakMemoryBytes);
  // Both layers priced by the generated GEMM's own entries: the fused kernel
  // costs more than the first layer's alone.
  EXPECT_GT(after->kernels.front().estimate.computeS, before->kernels.front().estimate.computeS);
}

TEST(FuseGemmChain, GreedyFusesDlrmsNarrowLayersOnTheProbedH200) {
  auto p = makePolicy("greedy");
  EnvConfig cfg;
  cfg.batch = 4096;
  cfg.disabled = {ActionKind::kSetPrecision};
  auto r = optimize(rwtest::zoo("dlrm_criteo"), rwtest::target(probed()), **p, cfg);
  ASSERT_TRUE(r.isOk()) << r.status().message();
  const Graph& plan = r->plan;
  const Node& a = plan.node(byName(plan, "node_linear_2"));
  const Node& b = plan.node(byName(plan, "node_linear_3"));
  EXPECT_GE(a.mir.group, 0);
  EXPECT_EQ(a.mir.group, b.mir.group) << "256 -> 64 -> 16 as one kernel";
  EXPECT_EQ(kernelInfo(a.mir.kernel).name, std::string("nvrtc.gemm_small"));
  EXPECT_TRUE(verifyPlan(plan, rwtest::target(probed())).isOk());
}

}  // namespace
}  // namespace cagr
