// dead_code: golden IR for a dead chain (and the constant only it read)
// removed, nothing offered for a graph without dead nodes, the near miss of a
// dead node sharing a fusion group with a live one, and the zoo models.
#include "rewrite_test_util.h"

namespace cagr {
namespace {

using rwtest::candidatesOf;

// `scaled` and `unused` feed nothing that reaches the output; `scale` is read
// by them alone. `$tail` splices decisions into the node after `keep`.
std::string withDeadChain(const std::string& keep = "", const std::string& tail = "") {
  return R"("builtin.module"() ({
  "cagr.graph"() ({
  ^bb0(%x: tensor<?x4xf32>):
    %c = "cagr.constant"() {name = "scale", value = dense<[2.0, 0.5, -1.0, 4.0]> : tensor<4xf32>} : () -> tensor<4xf32>
    %0 = "cagr.relu"(%x) {name = "keep")" + keep + R"(} : (tensor<?x4xf32>) -> tensor<?x4xf32>
    %1 = "cagr.mul"(%0, %c) {name = "scaled")" + tail + R"(} : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
    %2 = "cagr.exp"(%1) {name = "unused"} : (tensor<?x4xf32>) -> tensor<?x4xf32>
    %3 = "cagr.neg"(%0) {name = "out"} : (tensor<?x4xf32>) -> tensor<?x4xf32>
    "cagr.return"(%3) : (tensor<?x4xf32>) -> ()
  }) {sym_name = "main", input_names = ["x"], input_dims = ["N,4"], output_names = ["y"], symbols = ["N"]} : () -> ()
}) : () -> ()
)";
}

TEST(DeadCodeTest, DeadChainRemovedWithItsConstant) {
  Graph g = rwtest::parse(withDeadChain());
  Target t = rwtest::target("x86-64");
  auto cs = candidatesOf(g, t, ActionKind::kDeadCode);
  ASSERT_EQ(cs.size(), 1u);
  ASSERT_EQ(cs[0].action.nodes.size(), 2u);
  EXPECT_EQ(g.node(cs[0].action.nodes[0]).name, "scaled");
  EXPECT_EQ(g.node(cs[0].action.nodes[1]).name, "unused");
  Graph h = rwtest::applied(g, t, cs[0].action);
  EXPECT_EQ(h.nodes().size(), 2u);
  EXPECT_EQ(h.numValues(), 3u);  // x, keep, out: the constant went with its readers
  rwtest::expectGolden(h, "dead_code_chain.mlir");
  rwtest::expectSameOutputs(g, h, rwtest::randomInputs(g, 3, 1));
  EXPECT_TRUE(candidatesOf(h, t, ActionKind::kDeadCode, true).empty());
}

TEST(DeadCodeTest, DeadNodeInALiveFusionGroupIsRefused) {
  // keep and scaled run as one kernel; removing scaled would leave a group
  // whose kernel was chosen for two nodes.
  Graph g = rwtest::parse(withDeadChain(", cagr.group = 3 : i64", ", cagr.group = 3 : i64"));
  Target t = rwtest::target("x86-64");
  EXPECT_TRUE(candidatesOf(g, t, ActionKind::kDeadCode).empty());
  auto cs = candidatesOf(g, t, ActionKind::kDeadCode, /*explain=*/true);
  ASSERT_EQ(cs.size(), 1u);
  EXPECT_NE(cs[0].reason.find("'scaled' (Mul) is unused but shares its fusion group with 'keep' (Relu)"),
            std::string::npos)
      << cs[0].reason;
  Graph h = g;
  EXPECT_FALSE(applyAction(h, t, cs[0].action).isOk());
  EXPECT_EQ(h.nodes().size(), g.nodes().size());
}

TEST(DeadCodeTest, StaleActionIsRejected) {
  Graph g = rwtest::parse(withDeadChain());
  Target t = rwtest::target("x86-64");
  Action a = candidatesOf(g, t, ActionKind::kDeadCode).at(0).action;
  a.nodes.pop_back();  // not the dead set any more
  Graph h = g;
  EXPECT_FALSE(applyAction(h, t, a).isOk());
  EXPECT_EQ(printGraph(h), printGraph(g));
}

TEST(DeadCodeTest, ZooModelsHaveNoDeadNodes) {
  // The importer already drops what the exporters leave unused, so every zoo
  // model comes in clean; this pins that (a new dead node would show here).
  for (const char* m : {"dlrm_criteo", "deepfm", "xdeepfm", "dcnv2", "autoint", "wide_deep", "ngcf", "dlrm_avazu"}) {
    Graph g = rwtest::zoo(m);
    EXPECT_TRUE(candidatesOf(g, rwtest::target("h200"), ActionKind::kDeadCode, true).empty()) << m;
  }
}

TEST(DeadCodeTest, DlrmWithADeadHeadLosesOnlyTheHead) {
  Graph g = rwtest::zoo("dlrm_criteo");
  // Graft a dead branch onto the bottom MLP's output: Relu -> Exp, unused.
  ValueId bottom = g.nodes()[7].outputs[0];
  auto r = g.add(OpKind::kRelu, {bottom}, {}, "dead_relu");
  ASSERT_TRUE(r.isOk());
  ASSERT_TRUE(g.add(OpKind::kExp, {*r}, {}, "dead_exp").isOk());
  Target t = rwtest::target("h200");
  auto cs = candidatesOf(g, t, ActionKind::kDeadCode);
  ASSERT_EQ(cs.size(), 1u);
  EXPECT_EQ(cs[0].action.nodes.size(), 2u);
  Graph h = rwtest::applied(g, t, cs[0].action);
  EXPECT_EQ(h.nodes().size(), g.nodes().size() - 2);
  rwtest::expectSameOutputs(g, h, rwtest::zooInputs("dlrm_criteo"));
}

}  // namespace
}  // namespace cagr
