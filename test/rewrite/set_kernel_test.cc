// set_kernel: candidates per kernel group, golden IR after choosing a kernel
// for a fused Gemm + Relu, near misses with reasons, and the reference
// outputs of hand-written and zoo graphs unchanged by kernel choices.
#include <algorithm>

#include "rewrite/rewrite_test_util.h"

namespace cagr {
namespace {

using namespace rwtest;

// fc1 + relu1 fused (group 0), a view, a sigmoid, a concat and an interaction.
const char* kGraph = R"mlir(
"builtin.module"() ({
  "cagr.graph"() ({
  ^bb0(%x: tensor<?x4xf32>):
    %w = "cagr.constant"() {name = "w1", value = dense<[[0.5, -1.0, 0.25, 2.0], [1.5, 0.75, -0.5, 1.0]]> : tensor<2x4xf32>} : () -> tensor<2x4xf32>
    %b = "cagr.constant"() {name = "b1", value = dense<[0.1, -0.2]> : tensor<2xf32>} : () -> tensor<2xf32>
    %h = "cagr.gemm"(%x, %w, %b) {name = "fc1", transB = 1 : i64, cagr.group = 0 : i64} : (tensor<?x4xf32>, tensor<2x4xf32>, tensor<2xf32>) -> tensor<?x2xf32>
    %r = "cagr.relu"(%h) {name = "relu1", cagr.group = 0 : i64} : (tensor<?x2xf32>) -> tensor<?x2xf32>
    %v = "cagr.reshape"(%r) {name = "view", shape = [-1, 1, 2]} : (tensor<?x2xf32>) -> tensor<?x1x2xf32>
    %c = "cagr.concat"(%v, %v) {name = "stack", axis = 1 : i64} : (tensor<?x1x2xf32>, tensor<?x1x2xf32>) -> tensor<?x2x2xf32>
    %i = "cagr.interaction"(%c) {name = "dot"} : (tensor<?x2x2xf32>) -> tensor<?x1xf32>
    %p = "cagr.sigmoid"(%i) {name = "prob"} : (tensor<?x1xf32>) -> tensor<?x1xf32>
    "cagr.return"(%p) : (tensor<?x1xf32>) -> ()
  }) {sym_name = "main", input_names = ["x"], input_dims = ["N,4"], output_names = ["prob"], symbols = ["N"]} : () -> ()
}) : () -> ()
)mlir";

NodeId nodeNamed(const Graph& g, const std::string& name) {
  for (size_t i = 0; i < g.nodes().size(); ++i) {
    if (g.nodes()[i].name == name) return static_cast<NodeId>(i);
  }
  ADD_FAILURE() << "no node " << name;
  return -1;
}

// The candidates acting on node `name` (its group).
std::vector<Candidate> on(const std::vector<Candidate>& cs, const Graph& g, const std::string& name) {
  std::vector<Candidate> out;
  NodeId id = nodeNamed(g, name);
  for (const Candidate& c : cs) {
    if (std::find(c.action.nodes.begin(), c.action.nodes.end(), id) != c.action.nodes.end()) out.push_back(c);
  }
  return out;
}

std::vector<std::string> choices(const std::vector<Candidate>& cs) {
  std::vector<std::string> out;
  for (const Candidate& c : cs) out.push_back(c.action.choice);
  return out;
}

TEST(SetKernel, OffersEveryOtherKernelOfTheGroupOnEachBackend) {
  Graph g = parse(kGraph);
  auto cpu = candidatesOf(g, target("x86-64"), ActionKind::kSetKernel);
  auto fc = on(cpu, g, "fc1");
  EXPECT_EQ(choices(fc), (std::vector<std::string>{"onednn.matmul", "own.gemm"}));  // openblas: no epilogue
  ASSERT_FALSE(fc.empty());
  EXPECT_EQ(fc[0].action.nodes, (std::vector<NodeId>{nodeNamed(g, "fc1"), nodeNamed(g, "relu1")}));
  EXPECT_EQ(choices(on(cpu, g, "prob")), (std::vector<std::string>{"own.eltwise"}));
  EXPECT_EQ(choices(on(cpu, g, "dot")), (std::vector<std::string>{"own.interaction"}));
  EXPECT_TRUE(on(cpu, g, "view").empty()) << "a view runs no kernel";
  auto gpu = candidatesOf(g, target("h200"), ActionKind::kSetKernel);
  EXPECT_EQ(choices(on(gpu, g, "fc1")), (std::vector<std::string>{"cublaslt.matmul", "nvrtc.gemm_small"}));
  auto tpu = candidatesOf(g, target("tpu-v4"), ActionKind::kSetKernel);
  EXPECT_EQ(choices(on(tpu, g, "fc1")), (std::vector<std::string>{"xla.dot"}));
  auto again = candidatesOf(g, target("x86-64"), ActionKind::kSetKernel);
  ASSERT_EQ(again.size(), cpu.size());
  for (size_t i = 0; i < cpu.size(); ++i)
    EXPECT_EQ(again[i].action, cpu[i].action) << "candidates must be deterministic";
}

TEST(SetKernel, GoldenFusedGemmOnOwnGemm) {
  Graph g = parse(kGraph);
  Target t = target("x86-64");
  auto fc = on(candidatesOf(g, t, ActionKind::kSetKernel), g, "fc1");
  ASSERT_EQ(fc.size(), 2u);
  Graph h = applied(g, t, fc[1].action);
  expectGolden(h, "set_kernel_fused_gemm.mlir");
  EXPECT_EQ(choices(on(candidatesOf(h, t, ActionKind::kSetKernel), h, "fc1")),
            (std::vector<std::string>{"onednn.matmul"}))
      << "the current kernel is no longer offered";
}

TEST(SetKernel, NearMissesSayWhy) {
  Graph g = parse(kGraph);
  Target t = target("x86-64");
  auto all = candidatesOf(g, t, ActionKind::kSetKernel, /*explain=*/true);
  auto stack = on(all, g, "stack");
  ASSERT_EQ(stack.size(), 1u);
  EXPECT_FALSE(stack[0].legal());
  EXPECT_NE(stack[0].reason.find("'stack' (Concat)"), std::string::npos) << stack[0].reason;
  EXPECT_NE(stack[0].reason.find("no cpu kernel runs a single group"), std::string::npos) << stack[0].reason;
  // Once the interaction has its only kernel there is no alternative left.
  Graph h = applied(g, t, on(candidatesOf(g, t, ActionKind::kSetKernel), g, "dot").at(0).action);
  auto dot = on(candidatesOf(h, t, ActionKind::kSetKernel, true), h, "dot");
  ASSERT_EQ(dot.size(), 1u);
  EXPECT_NE(dot[0].reason.find("no alternative kernel: only own.interaction"), std::string::npos) << dot[0].reason;
  EXPECT_TRUE(on(candidatesOf(h, t, ActionKind::kSetKernel), h, "dot").empty());
}

TEST(SetKernel, ApplyRefusesWhatItDidNotOfferAndLeavesTheGraphAlone) {
  Graph g = parse(kGraph);
  Target t = target("x86-64");
  std::string before = printGraph(g);
  Action a;
  a.kind = ActionKind::kSetKernel;
  a.nodes = {nodeNamed(g, "fc1")};  // only half of its group
  a.choice = "own.gemm";
  EXPECT_FALSE(applyAction(g, t, a).isOk());
  a.nodes.push_back(nodeNamed(g, "relu1"));
  a.choice = "cublaslt.matmul";  // another backend's kernel
  Status st = applyAction(g, t, a);
  ASSERT_FALSE(st.isOk());
  EXPECT_NE(st.message().find("'fc1' (Gemm)"), std::string::npos) << st.message();
  a.choice = "openblas.sgemm";  // its epilogue cannot take the Relu
  EXPECT_FALSE(applyAction(g, t, a).isOk());
  EXPECT_EQ(printGraph(g), before);
}

// Gives every group that still runs the default kernel its first offered
// kernel, re-enumerating after each apply; returns how many were set.
int chooseKernelsEverywhere(Graph& g, const Target& t) {
  int applied = 0;
  for (bool progress = true; progress;) {
    progress = false;
    for (const Candidate& c : candidatesOf(g, t, ActionKind::kSetKernel)) {
      if (g.node(c.action.nodes.front()).mir.kernel != 0) continue;
      Status st = applyAction(g, t, c.action);
      EXPECT_TRUE(st.isOk()) << st.message();
      progress = st.isOk();
      ++applied;
      break;
    }
  }
  return applied;
}

TEST(SetKernel, HandWrittenGraphComputesTheSameOnEveryBackend) {
  Graph g = parse(kGraph);
  for (const char* name : {"x86-64", "h200", "mi250x", "tpu-v4"}) {
    Graph h = g;
    EXPECT_GE(chooseKernelsEverywhere(h, target(name)), 3) << name;
    expectSameOutputs(g, h, randomInputs(g, 5, 1));
  }
}

TEST(SetKernel, ZooModelComputesTheSameWithKernelsChosen) {
  for (const char* model : {"dlrm_criteo", "xdeepfm"}) {
    Graph g = zoo(model);
    Graph h = g;
    EXPECT_GT(chooseKernelsEverywhere(h, target("h200")), 10) << model;
    expectSameOutputs(g, h, zooInputs(model));
  }
}

}  // namespace
}  // namespace cagr
