// reorder: golden IR for a tower issued before its sibling, the near miss of a
// branch that reads a value produced too late, a chain with nothing to move,
// and DLRM / DeepFM reordered step by step with the reference outputs unchanged.
#include <algorithm>

#include "rewrite_test_util.h"

namespace cagr {
namespace {

using rwtest::candidatesOf;

// Tower `left` (Gemm, Relu) then tower `right` (Gemm, Sigmoid, Mul); Concat joins.
const char* kTwoTowers = R"("builtin.module"() ({
  "cagr.graph"() ({
  ^bb0(%x: tensor<?x6xf32>, %wl: tensor<3x6xf32>, %wr: tensor<5x6xf32>):
    %0 = "cagr.gemm"(%x, %wl) {name = "left_fc", transB = 1 : i64} : (tensor<?x6xf32>, tensor<3x6xf32>) -> tensor<?x3xf32>
    %1 = "cagr.relu"(%0) {name = "left_act"} : (tensor<?x3xf32>) -> tensor<?x3xf32>
    %2 = "cagr.gemm"(%x, %wr) {name = "right_fc", transB = 1 : i64} : (tensor<?x6xf32>, tensor<5x6xf32>) -> tensor<?x5xf32>
    %3 = "cagr.sigmoid"(%2) {name = "right_gate"} : (tensor<?x5xf32>) -> tensor<?x5xf32>
    %4 = "cagr.mul"(%2, %3) {name = "right_act"} : (tensor<?x5xf32>, tensor<?x5xf32>) -> tensor<?x5xf32>
    %5 = "cagr.concat"(%1, %4) {name = "cat", axis = 1 : i64} : (tensor<?x3xf32>, tensor<?x5xf32>) -> tensor<?x8xf32>
    "cagr.return"(%5) : (tensor<?x8xf32>) -> ()
  }) {sym_name = "main", input_names = ["x", "wl", "wr"], input_dims = ["N,6", "3,6", "5,6"], output_names = ["y"], symbols = ["N"]} : () -> ()
}) : () -> ()
)";

// `b` reads `p`, which is issued after `a`: b cannot move before a; p can.
const char* kLateOperand = R"("builtin.module"() ({
  "cagr.graph"() ({
  ^bb0(%x: tensor<?x4xf32>):
    %0 = "cagr.tanh"(%x) {name = "a"} : (tensor<?x4xf32>) -> tensor<?x4xf32>
    %1 = "cagr.neg"(%x) {name = "p"} : (tensor<?x4xf32>) -> tensor<?x4xf32>
    %2 = "cagr.sigmoid"(%1) {name = "b"} : (tensor<?x4xf32>) -> tensor<?x4xf32>
    %3 = "cagr.add"(%0, %2) {name = "s"} : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
    %4 = "cagr.add"(%3, %1) {name = "out"} : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
    "cagr.return"(%4) : (tensor<?x4xf32>) -> ()
  }) {sym_name = "main", input_names = ["x"], input_dims = ["N,4"], output_names = ["y"], symbols = ["N"]} : () -> ()
}) : () -> ()
)";

std::string order(const Graph& g) {
  std::string s;
  for (const Node& n : g.nodes()) s += (s.empty() ? "" : " ") + n.name;
  return s;
}

// "moved@before" for a candidate: the branch's first node and the node it goes before.
std::string move(const Graph& g, const Candidate& c) {
  return g.node(c.action.nodes.front()).name + "@" + g.node(c.action.arg).name;
}

TEST(ReorderTest, RightTowerIssuedFirst) {
  Graph g = rwtest::parse(kTwoTowers);
  Target t = rwtest::target("x86-64");
  auto cs = candidatesOf(g, t, ActionKind::kReorder);
  ASSERT_EQ(cs.size(), 1u);
  EXPECT_EQ(move(g, cs[0]), "right_fc@left_fc");
  EXPECT_EQ(cs[0].action.nodes.size(), 3u);
  Graph h = rwtest::applied(g, t, cs[0].action);
  EXPECT_EQ(order(h), "right_fc right_gate right_act left_fc left_act cat");
  rwtest::expectGolden(h, "reorder_two_towers.mlir");
  rwtest::expectSameOutputs(g, h, rwtest::randomInputs(g, 3, 1));
  // Moving back is the only move left; it restores the original order.
  auto back = candidatesOf(h, t, ActionKind::kReorder);
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(order(rwtest::applied(h, t, back[0].action)), order(g));
}

TEST(ReorderTest, BranchReadingALateValueStaysPut) {
  Graph g = rwtest::parse(kLateOperand);
  Target t = rwtest::target("h200");
  auto cs = candidatesOf(g, t, ActionKind::kReorder, /*explain=*/true);
  ASSERT_EQ(cs.size(), 2u);
  EXPECT_TRUE(cs[0].legal());
  EXPECT_EQ(move(g, cs[0]), "p@a");
  EXPECT_FALSE(cs[1].legal());
  EXPECT_EQ(move(g, cs[1]), "b@a");
  EXPECT_NE(cs[1].reason.find("reads 'p' (Neg), issued after 'a' (Tanh)"), std::string::npos) << cs[1].reason;
  Graph h = g;
  EXPECT_FALSE(applyAction(h, t, cs[1].action).isOk());
  EXPECT_EQ(order(h), order(g));
  h = rwtest::applied(g, t, cs[0].action);
  EXPECT_EQ(order(h), "p a b s out");
  rwtest::expectSameOutputs(g, h, rwtest::randomInputs(g, 2, 1));
}

TEST(ReorderTest, BranchSplittingAFusionGroupStaysPut) {
  // right_act and cat run as one kernel; moving the right tower would split it.
  std::string text = kTwoTowers;
  for (const char* n : {"right_act", "cat"}) {
    std::string at = std::string("name = \"") + n + "\"";
    text.replace(text.find(at), at.size(), at + ", cagr.group = 5 : i64");
  }
  Graph g = rwtest::parse(text);
  Target t = rwtest::target("h200");
  EXPECT_TRUE(candidatesOf(g, t, ActionKind::kReorder).empty());
  auto cs = candidatesOf(g, t, ActionKind::kReorder, /*explain=*/true);
  ASSERT_EQ(cs.size(), 1u);
  EXPECT_EQ(move(g, cs[0]), "right_fc@left_fc");
  EXPECT_NE(cs[0].reason.find("branch of 'right_act' (Mul) splits the fusion group of 'cat' (Concat)"),
            std::string::npos)
      << cs[0].reason;
}

TEST(ReorderTest, ChainHasNothingToMove) {
  Graph g = rwtest::parse(R"("builtin.module"() ({
  "cagr.graph"() ({
  ^bb0(%x: tensor<?x4xf32>):
    %0 = "cagr.exp"(%x) {name = "e"} : (tensor<?x4xf32>) -> tensor<?x4xf32>
    %1 = "cagr.add"(%0, %x) {name = "res"} : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
    "cagr.return"(%1) : (tensor<?x4xf32>) -> ()
  }) {sym_name = "main", input_names = ["x"], input_dims = ["N,4"], output_names = ["y"], symbols = ["N"]} : () -> ()
}) : () -> ()
)");
  EXPECT_TRUE(candidatesOf(g, rwtest::target("h200"), ActionKind::kReorder, true).empty());
}

// Applies the last legal reorder `steps` times and checks each step changes
// the order. Reordering never runs out (a moved branch can always move back);
// the last candidate moves the latest branch as early as it goes, which does
// not undo the step before.
Graph reorderSteps(const Graph& g, const Target& t, int steps) {
  Graph h = g;
  for (int i = 0; i < steps; ++i) {
    auto cs = candidatesOf(h, t, ActionKind::kReorder);
    if (cs.empty()) break;
    Graph next = rwtest::applied(h, t, cs.back().action);
    EXPECT_NE(order(next), order(h)) << cs.back().action.label(h);
    h = std::move(next);
  }
  return h;
}

TEST(ReorderTest, DlrmLookupsIssuedBeforeTheBottomMlp) {
  Graph g = rwtest::zoo("dlrm_criteo");
  Target t = rwtest::target("h200");
  auto cs = candidatesOf(g, t, ActionKind::kReorder);
  // 26 lookups: the first can only go before the bottom MLP, the other 25 one
  // lookup earlier or all the way before the bottom MLP.
  EXPECT_EQ(cs.size(), 51u);
  EXPECT_EQ(move(g, cs.front()), "node_select@node_linear");
  Graph h = reorderSteps(g, t, 6);
  EXPECT_EQ(h.nodes().front().name, "node_select_40");  // the lookups issued last now come first
  EXPECT_TRUE(verifyPlan(h, t).isOk());
  rwtest::expectSameOutputs(g, h, rwtest::zooInputs("dlrm_criteo"));
}

TEST(ReorderTest, DeepFmReorderedKeepsOutputs) {
  Graph g = rwtest::zoo("deepfm");
  Target t = rwtest::target("x86-64");
  Graph h = reorderSteps(g, t, 8);
  EXPECT_NE(order(h), order(g));
  rwtest::expectSameOutputs(g, h, rwtest::zooInputs("deepfm"));
}

}  // namespace
}  // namespace cagr
