// fold_constants: golden IR for a constant chain folded step by step (one
// step a graph output, whose name survives), the near misses (an inflating
// Expand, a lookup reading a graph input, a fusion-group member), exact
// folded values, and the zoo models with the reference outputs unchanged.
#include <algorithm>
#include <cmath>

#include "rewrite_test_util.h"

namespace cagr {
namespace {

using rwtest::applyAll;
using rwtest::candidatesOf;

// ab = a * b and e = exp(ab) depend on constants only; `k` (Neg of a) is a
// graph output. `$ab` splices decisions into ab, `$e` into e.
std::string constantChain(const std::string& ab = "", const std::string& e = "") {
  return R"("builtin.module"() ({
  "cagr.graph"() ({
  ^bb0(%x: tensor<?x4xf32>):
    %a = "cagr.constant"() {name = "a", value = dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>} : () -> tensor<4xf32>
    %b = "cagr.constant"() {name = "b", value = dense<0.5> : tensor<4xf32>} : () -> tensor<4xf32>
    %0 = "cagr.mul"(%a, %b) {name = "ab")" + ab + R"(} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %1 = "cagr.exp"(%0) {name = "e")" + e + R"(} : (tensor<4xf32>) -> tensor<4xf32>
    %2 = "cagr.add"(%x, %1) {name = "shifted"} : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
    %3 = "cagr.neg"(%a) {name = "k"} : (tensor<4xf32>) -> tensor<4xf32>
    "cagr.return"(%2, %3) : (tensor<?x4xf32>, tensor<4xf32>) -> ()
  }) {sym_name = "main", input_names = ["x"], input_dims = ["N,4"], output_names = ["y", "k"], symbols = ["N"]} : () -> ()
}) : () -> ()
)";
}

std::vector<std::string> folded(const Graph& g, const std::vector<Candidate>& cs) {
  std::vector<std::string> out;
  for (const Candidate& c : cs) out.push_back(g.node(c.action.nodes.front()).name);
  return out;
}

TEST(FoldConstantsTest, ChainFoldsStepByStep) {
  Graph g = rwtest::parse(constantChain());
  Target t = rwtest::target("x86-64");
  auto cs = candidatesOf(g, t, ActionKind::kFoldConstants);
  EXPECT_EQ(folded(g, cs), (std::vector<std::string>{"ab", "k"}));
  Graph h = rwtest::applied(g, t, cs.front().action);
  EXPECT_EQ(folded(h, candidatesOf(h, t, ActionKind::kFoldConstants)), (std::vector<std::string>{"e", "k"}));
  EXPECT_EQ(applyAll(h, t, ActionKind::kFoldConstants), 2);
  ASSERT_EQ(h.nodes().size(), 1u);  // only the Add of the input is left
  EXPECT_EQ(h.value(h.outputs()[1]).name, "k");
  const Tensor* k = h.constant(h.outputs()[1]);
  ASSERT_NE(k, nullptr);
  EXPECT_EQ(k->data<float>()[3], -4.0f);
  const Tensor* e = h.constant(h.node(0).inputs[1]);
  ASSERT_NE(e, nullptr);
  EXPECT_FLOAT_EQ(e->data<float>()[1], std::exp(1.0f));
  PrintOptions full;  // the folded data itself, not elided
  EXPECT_NE(printGraph(h, full).find(R"(name = "k", value = dense<[-1.0, -2.0, -3.0, -4.0]>)"), std::string::npos);
  rwtest::expectGolden(h, "fold_constants_chain.mlir");
  rwtest::expectSameOutputs(g, h, rwtest::randomInputs(g, 3, 1));
}

TEST(FoldConstantsTest, InflatingExpandIsRefused) {
  Graph g = rwtest::parse(R"("builtin.module"() ({
  "cagr.graph"() ({
  ^bb0(%x: tensor<?x512xf32>):
    %c = "cagr.constant"() {name = "row", value = dense<0.25> : tensor<1x512xf32>} : () -> tensor<1x512xf32>
    %0 = "cagr.expand"(%c) {name = "tiled", shape = [1024, 512]} : (tensor<1x512xf32>) -> tensor<1024x512xf32>
    %1 = "cagr.reduce_sum"(%0) {name = "colsum", axes = [0]} : (tensor<1024x512xf32>) -> tensor<1x512xf32>
    %2 = "cagr.add"(%x, %1) {name = "y"} : (tensor<?x512xf32>, tensor<1x512xf32>) -> tensor<?x512xf32>
    "cagr.return"(%2) : (tensor<?x512xf32>) -> ()
  }) {sym_name = "main", input_names = ["x"], input_dims = ["N,512"], output_names = ["y"], symbols = ["N"]} : () -> ()
}) : () -> ()
)");
  Target t = rwtest::target("x86-64");
  EXPECT_TRUE(candidatesOf(g, t, ActionKind::kFoldConstants).empty());
  auto cs = candidatesOf(g, t, ActionKind::kFoldConstants, /*explain=*/true);
  ASSERT_EQ(cs.size(), 1u);
  EXPECT_NE(cs[0].reason.find("'tiled' (Expand) would turn 2048 constant bytes into 2097152"), std::string::npos)
      << cs[0].reason;
}

TEST(FoldConstantsTest, LookupOfAGraphInputAndGroupMembersAreRefused) {
  Graph g = rwtest::parse(R"("builtin.module"() ({
  "cagr.graph"() ({
  ^bb0(%table: tensor<10x4xf32>):
    %i = "cagr.constant"() {name = "row", value = dense<3> : tensor<i64>} : () -> tensor<i64>
    %0 = "cagr.gather"(%table, %i) {name = "pick"} : (tensor<10x4xf32>, tensor<i64>) -> tensor<4xf32>
    "cagr.return"(%0) : (tensor<4xf32>) -> ()
  }) {sym_name = "main", input_names = ["table"], input_dims = ["10,4"], output_names = ["v"], symbols = ["N"]} : () -> ()
}) : () -> ()
)");
  Target t = rwtest::target("h200");
  EXPECT_TRUE(candidatesOf(g, t, ActionKind::kFoldConstants).empty());
  auto cs = candidatesOf(g, t, ActionKind::kFoldConstants, true);
  ASSERT_EQ(cs.size(), 1u);
  EXPECT_NE(cs[0].reason.find("'pick' (Gather) looks up graph input 'table'"), std::string::npos) << cs[0].reason;

  Graph grouped = rwtest::parse(constantChain(", cagr.group = 0 : i64", ", cagr.group = 0 : i64"));
  EXPECT_EQ(folded(grouped, candidatesOf(grouped, t, ActionKind::kFoldConstants)), (std::vector<std::string>{"k"}));
  auto all = candidatesOf(grouped, t, ActionKind::kFoldConstants, true);
  ASSERT_EQ(all.size(), 2u);
  EXPECT_NE(all[0].reason.find("'ab' (Mul) is in fusion group 0"), std::string::npos) << all[0].reason;
  Graph h = grouped;
  EXPECT_FALSE(applyAction(h, t, all[0].action).isOk());
  EXPECT_EQ(printGraph(h), printGraph(grouped));
}

TEST(FoldConstantsTest, ZooModels) {
  // Counts pinned per model. The CTR models fold nothing: their only nodes
  // with constant operands select columns of a graph input. NGCF's graph
  // convolutions read the constant adjacency and the constant node table, so
  // all 22 propagation nodes fold into the final embedding tables and only
  // the lookups of the request's users and items are left.
  struct Case {
    const char* model;
    int folds;
  };
  for (Case c : {Case{"dlrm_criteo", 0}, Case{"deepfm", 0}, Case{"ngcf", 22}}) {
    Graph g = rwtest::zoo(c.model);
    Graph h = g;
    EXPECT_EQ(applyAll(h, rwtest::target("h200"), ActionKind::kFoldConstants), c.folds) << c.model;
    for (const Node& n : h.nodes()) {
      bool reads = std::any_of(n.inputs.begin(), n.inputs.end(), [&](ValueId v) { return !h.isConstant(v); });
      EXPECT_TRUE(reads) << c.model << ": " << n.name << " reads only constants after folding";
    }
    if (c.folds > 0) rwtest::expectSameOutputs(g, h, rwtest::zooInputs(c.model));
  }
}

}  // namespace
}  // namespace cagr
