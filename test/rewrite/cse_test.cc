// cse: golden IR for duplicate MatMuls over equal constants and duplicate
// Relus (one a named graph output), the near misses (different MIR decisions,
// two differently named outputs), equal-shaped but different constants left
// alone, and the zoo models with the reference outputs unchanged.
#include <algorithm>

#include "rewrite_test_util.h"

namespace cagr {
namespace {

using rwtest::applyAll;
using rwtest::candidatesOf;

// mm1/mm2 read constants with equal bytes under different names; r1/r2 are
// the same Relu, r2 also a graph output ("act"). `$r2` splices decisions in.
std::string duplicates(const std::string& r2 = "", const std::string& w2 = "[[1.0, 2.0], [3.0, 4.0]]") {
  return R"("builtin.module"() ({
  "cagr.graph"() ({
  ^bb0(%x: tensor<?x2xf32>):
    %w1 = "cagr.constant"() {name = "w1", value = dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>} : () -> tensor<2x2xf32>
    %w2 = "cagr.constant"() {name = "w1_copy", value = dense<)" + w2 + R"(> : tensor<2x2xf32>} : () -> tensor<2x2xf32>
    %0 = "cagr.matmul"(%x, %w1) {name = "mm1"} : (tensor<?x2xf32>, tensor<2x2xf32>) -> tensor<?x2xf32>
    %1 = "cagr.matmul"(%x, %w2) {name = "mm2"} : (tensor<?x2xf32>, tensor<2x2xf32>) -> tensor<?x2xf32>
    %2 = "cagr.relu"(%x) {name = "r1"} : (tensor<?x2xf32>) -> tensor<?x2xf32>
    %3 = "cagr.relu"(%x) {name = "r2")" + r2 + R"(} : (tensor<?x2xf32>) -> tensor<?x2xf32>
    %4 = "cagr.sub"(%0, %1) {name = "diff"} : (tensor<?x2xf32>, tensor<?x2xf32>) -> tensor<?x2xf32>
    %5 = "cagr.add"(%2, %3) {name = "twice"} : (tensor<?x2xf32>, tensor<?x2xf32>) -> tensor<?x2xf32>
    %6 = "cagr.add"(%4, %5) {name = "total"} : (tensor<?x2xf32>, tensor<?x2xf32>) -> tensor<?x2xf32>
    "cagr.return"(%6, %3) : (tensor<?x2xf32>, tensor<?x2xf32>) -> ()
  }) {sym_name = "main", input_names = ["x"], input_dims = ["N,2"], output_names = ["total", "act"], symbols = ["N"]} : () -> ()
}) : () -> ()
)";
}

std::string members(const Graph& g, const Candidate& c) {
  std::string s;
  for (NodeId n : c.action.nodes) s += (s.empty() ? "" : "=") + g.node(n).name;
  return s;
}

TEST(CseTest, DuplicatesMergedAndOutputNameKept) {
  Graph g = rwtest::parse(duplicates());
  Target t = rwtest::target("x86-64");
  auto cs = candidatesOf(g, t, ActionKind::kCse);
  ASSERT_EQ(cs.size(), 2u);
  EXPECT_EQ(members(g, cs[0]), "mm1=mm2");
  EXPECT_EQ(members(g, cs[1]), "r1=r2");
  Graph h = rwtest::applied(g, t, cs[0].action);
  auto next = candidatesOf(h, t, ActionKind::kCse);
  ASSERT_EQ(next.size(), 1u);
  h = rwtest::applied(h, t, next[0].action);
  EXPECT_TRUE(candidatesOf(h, t, ActionKind::kCse, true).empty());
  EXPECT_EQ(h.nodes().size(), 5u);
  EXPECT_EQ(h.value(h.outputs()[1]).name, "act");  // r1 now carries r2's output name
  rwtest::expectGolden(h, "cse_duplicates.mlir");
  rwtest::expectSameOutputs(g, h, rwtest::randomInputs(g, 4, 1));
}

TEST(CseTest, DifferentConstantsAreNotDuplicates) {
  Graph g = rwtest::parse(duplicates("", "[[1.0, 2.0], [3.0, 4.5]]"));
  auto cs = candidatesOf(g, rwtest::target("x86-64"), ActionKind::kCse, true);
  ASSERT_EQ(cs.size(), 1u);
  EXPECT_EQ(members(g, cs[0]), "r1=r2");
}

TEST(CseTest, DifferentStreamsAreANearMiss) {
  Graph g = rwtest::parse(duplicates(", cagr.stream = 1 : i64"));
  Target t = rwtest::target("h200");
  auto legal = candidatesOf(g, t, ActionKind::kCse);
  ASSERT_EQ(legal.size(), 1u);
  EXPECT_EQ(members(g, legal[0]), "mm1=mm2");
  auto cs = candidatesOf(g, t, ActionKind::kCse, /*explain=*/true);
  auto miss = std::find_if(cs.begin(), cs.end(), [](const Candidate& c) { return !c.legal(); });
  ASSERT_NE(miss, cs.end());
  EXPECT_EQ(members(g, *miss), "r1=r2");
  EXPECT_NE(miss->reason.find("'r2' (Relu) repeats 'r1' (Relu) but their MIR decisions differ"), std::string::npos)
      << miss->reason;
}

TEST(CseTest, TwoNamedOutputsAreNotMerged) {
  Graph g = rwtest::parse(R"("builtin.module"() ({
  "cagr.graph"() ({
  ^bb0(%x: tensor<?x3xf32>):
    %0 = "cagr.sigmoid"(%x) {name = "head_a"} : (tensor<?x3xf32>) -> tensor<?x3xf32>
    %1 = "cagr.sigmoid"(%x) {name = "head_b"} : (tensor<?x3xf32>) -> tensor<?x3xf32>
    "cagr.return"(%0, %1) : (tensor<?x3xf32>, tensor<?x3xf32>) -> ()
  }) {sym_name = "main", input_names = ["x"], input_dims = ["N,3"], output_names = ["ctr", "cvr"], symbols = ["N"]} : () -> ()
}) : () -> ()
)");
  Target t = rwtest::target("x86-64");
  EXPECT_TRUE(candidatesOf(g, t, ActionKind::kCse).empty());
  auto cs = candidatesOf(g, t, ActionKind::kCse, /*explain=*/true);
  ASSERT_EQ(cs.size(), 1u);
  EXPECT_NE(cs[0].reason.find("graph outputs 'cvr' and 'ctr'"), std::string::npos) << cs[0].reason;
  Graph h = g;
  EXPECT_FALSE(applyAction(h, t, cs[0].action).isOk());
  EXPECT_EQ(printGraph(h), printGraph(g));
}

TEST(CseTest, ZooModelsHaveNoDuplicates) {
  // Both exporters already share repeated subexpressions in every zoo model
  // (checked for all eight): pinned at zero, so a new duplicate shows here.
  for (const char* m : {"dlrm_criteo", "deepfm", "xdeepfm", "dcnv2", "autoint", "wide_deep", "ngcf", "dlrm_avazu"}) {
    EXPECT_TRUE(candidatesOf(rwtest::zoo(m), rwtest::target("h200"), ActionKind::kCse, true).empty()) << m;
  }
}

TEST(CseTest, DlrmWithADuplicatedBottomOutputMergesBack) {
  Graph g = rwtest::zoo("dlrm_criteo");
  // A second copy of the bottom MLP's last Relu feeds the final Concat.
  NodeId last = 7;
  ASSERT_EQ(g.node(last).name, "node_relu_3");
  ValueId out = g.node(last).outputs[0];
  auto copy = g.add(OpKind::kRelu, {g.node(last).inputs[0]}, {}, "relu_copy");
  ASSERT_TRUE(copy.isOk());
  int users = 0;  // the second reader of the original now reads the copy
  for (Node& n : g.mutableNodes()) {
    if (std::find(n.inputs.begin(), n.inputs.end(), out) == n.inputs.end()) continue;
    if (++users == 2) std::replace(n.inputs.begin(), n.inputs.end(), out, *copy);
  }
  ASSERT_EQ(users, 2);
  ASSERT_TRUE(g.topoSort().isOk());
  Target t = rwtest::target("h200");
  Graph h = g;
  EXPECT_EQ(applyAll(h, t, ActionKind::kCse), 1);
  EXPECT_EQ(h.nodes().size(), g.nodes().size() - 1);
  rwtest::expectSameOutputs(g, h, rwtest::zooInputs("dlrm_criteo"));
}

}  // namespace
}  // namespace cagr
