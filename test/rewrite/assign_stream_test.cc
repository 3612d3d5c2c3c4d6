// assign_stream: golden IR for two towers put on separate streams, the streams
// offered once one is taken, the near misses (one-stream platform, a branch
// that splits a fusion group), and DLRM / DeepFM branches spread over streams
// with the reference outputs unchanged.
#include <algorithm>

#include "rewrite_test_util.h"

namespace cagr {
namespace {

using rwtest::candidatesOf;

// Two Gemm towers over one input, joined by an Add. `$act_a` / `$join` splice
// decision attributes in.
std::string towers(const std::string& actA = "", const std::string& join = "") {
  return R"("builtin.module"() ({
  "cagr.graph"() ({
  ^bb0(%x: tensor<?x8xf32>, %wa: tensor<4x8xf32>, %wb: tensor<4x8xf32>):
    %0 = "cagr.gemm"(%x, %wa) {name = "fc_a", transB = 1 : i64} : (tensor<?x8xf32>, tensor<4x8xf32>) -> tensor<?x4xf32>
    %1 = "cagr.relu"(%0) {name = "act_a")" + actA + R"(} : (tensor<?x4xf32>) -> tensor<?x4xf32>
    %2 = "cagr.gemm"(%x, %wb) {name = "fc_b", transB = 1 : i64} : (tensor<?x8xf32>, tensor<4x8xf32>) -> tensor<?x4xf32>
    %3 = "cagr.tanh"(%2) {name = "act_b"} : (tensor<?x4xf32>) -> tensor<?x4xf32>
    %4 = "cagr.add"(%1, %3) {name = "join")" + join + R"(} : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
    %5 = "cagr.sigmoid"(%4) {name = "prob"} : (tensor<?x4xf32>) -> tensor<?x4xf32>
    "cagr.return"(%5) : (tensor<?x4xf32>) -> ()
  }) {sym_name = "main", input_names = ["x", "wa", "wb"], input_dims = ["N,8", "4,8", "4,8"], output_names = ["prob"], symbols = ["N"]} : () -> ()
}) : () -> ()
)";
}

// "fc_a,act_a->1" for a candidate: its branch and stream.
std::string brief(const Graph& g, const Candidate& c) {
  std::string s;
  for (NodeId n : c.action.nodes) s += (s.empty() ? "" : ",") + g.node(n).name;
  return s + "->" + std::to_string(c.action.arg);
}

std::vector<std::string> briefs(const Graph& g, const std::vector<Candidate>& cs, bool legal) {
  std::vector<std::string> out;
  for (const Candidate& c : cs) {
    if (c.legal() == legal) out.push_back(brief(g, c));
  }
  return out;
}

TEST(AssignStreamTest, TowerMovesToASecondStream) {
  Graph g = rwtest::parse(towers());
  Target t = rwtest::target("h200");
  auto cs = candidatesOf(g, t, ActionKind::kAssignStream);
  // Every free stream is interchangeable, so only the lowest is offered.
  EXPECT_EQ(briefs(g, cs, true), (std::vector<std::string>{"fc_a,act_a->1", "fc_b,act_b->1"}));
  Graph h = rwtest::applied(g, t, cs.front().action);
  rwtest::expectGolden(h, "assign_stream_towers.mlir");
  rwtest::expectSameOutputs(g, h, rwtest::randomInputs(g, 5, 1));
}

TEST(AssignStreamTest, TakenStreamIsRefusedToConcurrentBranch) {
  Graph g = rwtest::parse(towers());
  Target t = rwtest::target("h200");
  g = rwtest::applied(g, t, candidatesOf(g, t, ActionKind::kAssignStream).front().action);
  auto cs = candidatesOf(g, t, ActionKind::kAssignStream, /*explain=*/true);
  EXPECT_EQ(briefs(g, cs, true), (std::vector<std::string>{"fc_a,act_a->0", "fc_a,act_a->2", "fc_b,act_b->2"}));
  ASSERT_EQ(briefs(g, cs, false), (std::vector<std::string>{"fc_b,act_b->1"}));
  auto miss = std::find_if(cs.begin(), cs.end(), [](const Candidate& c) { return !c.legal(); });
  EXPECT_NE(miss->reason.find("stream 1 already runs 'fc_a' (Gemm)"), std::string::npos) << miss->reason;
  // Applying the near miss fails and leaves the graph alone.
  Graph h = g;
  EXPECT_FALSE(applyAction(h, t, miss->action).isOk());
  EXPECT_EQ(printGraph(h), printGraph(g));
}

TEST(AssignStreamTest, OneStreamPlatformOffersNothing) {
  Graph g = rwtest::parse(towers());
  Target t = rwtest::target("tpu-v4");
  EXPECT_TRUE(candidatesOf(g, t, ActionKind::kAssignStream).empty());
  auto cs = candidatesOf(g, t, ActionKind::kAssignStream, /*explain=*/true);
  ASSERT_EQ(cs.size(), 2u);
  for (const Candidate& c : cs) EXPECT_NE(c.reason.find(": tpu-v4 runs one stream"), std::string::npos) << c.reason;
}

TEST(AssignStreamTest, BranchSplittingAFusionGroupIsRefused) {
  // act_a and join run as one kernel: moving fc_a/act_a would split it.
  Graph g = rwtest::parse(towers(", cagr.group = 0 : i64", ", cagr.group = 0 : i64"));
  Target t = rwtest::target("h200");
  EXPECT_EQ(briefs(g, candidatesOf(g, t, ActionKind::kAssignStream), true),
            (std::vector<std::string>{"fc_b,act_b->1"}));
  auto cs = candidatesOf(g, t, ActionKind::kAssignStream, /*explain=*/true);
  ASSERT_EQ(briefs(g, cs, false), (std::vector<std::string>{"fc_a,act_a->1"}));
  EXPECT_NE(cs.front().reason.find("splits the fusion group of 'join' (Add)"), std::string::npos) << cs.front().reason;
}

bool holds(const Graph& g, const Candidate& c, const std::string& name) {
  return std::any_of(c.action.nodes.begin(), c.action.nodes.end(), [&](NodeId n) { return g.node(n).name == name; });
}

// Moves each branch still wholly on stream 0 to the first stream offered for
// it, until no such move is left; returns how many moved.
int spread(Graph& g, const Target& t) {
  int moved = 0;
  for (bool again = true; again && moved < 100;) {
    again = false;
    for (const Candidate& c : candidatesOf(g, t, ActionKind::kAssignStream)) {
      bool onZero = std::all_of(c.action.nodes.begin(), c.action.nodes.end(),
                                [&](NodeId n) { return g.node(n).mir.stream == 0; });
      if (!onZero || c.action.arg == 0) continue;
      g = rwtest::applied(g, t, c.action);
      ++moved;
      again = true;
      break;
    }
  }
  return moved;
}

TEST(AssignStreamTest, DlrmBottomMlpAndLookupsSpreadOverStreams) {
  Graph g = rwtest::zoo("dlrm_criteo");
  Target t = rwtest::target("h200");
  auto cs = candidatesOf(g, t, ActionKind::kAssignStream);
  // The bottom MLP and the 26 embedding lookups, each offered stream 1.
  ASSERT_EQ(cs.size(), 27u);
  EXPECT_TRUE(holds(g, cs.front(), "node_linear")) << cs.front().action.label(g);
  EXPECT_EQ(cs.front().action.nodes.size(), 8u);  // 4 x (Gemm, Relu)
  Graph h = g;
  // Streams 1..3 go to the bottom MLP and the first two lookups; every other
  // lookup runs concurrently with all three, so no stream is left for it.
  EXPECT_EQ(spread(h, t), 3);
  EXPECT_EQ(h.node(cs.front().action.nodes.front()).mir.stream, 1);
  EXPECT_TRUE(verifyPlan(h, t).isOk());
  rwtest::expectSameOutputs(g, h, rwtest::zooInputs("dlrm_criteo"));
}

TEST(AssignStreamTest, DeepFmDnnTowerBesideFmAndLinearPart) {
  Graph g = rwtest::zoo("deepfm");
  Target t = rwtest::target("mi250x");
  auto cs = candidatesOf(g, t, ActionKind::kAssignStream);
  auto tower = std::find_if(cs.begin(), cs.end(), [&](const Candidate& c) { return holds(g, c, "node_linear"); });
  auto fm = std::find_if(cs.begin(), cs.end(), [&](const Candidate& c) { return holds(g, c, "node_sum_1.fm"); });
  ASSERT_NE(tower, cs.end());
  ASSERT_NE(fm, cs.end());
  EXPECT_FALSE(holds(g, *tower, "node_sum_1.fm"));
  EXPECT_TRUE(holds(g, *fm, "node_sum_4"));  // the linear part's ReduceSum travels with FM
  Graph h = rwtest::applied(g, t, tower->action);
  rwtest::expectSameOutputs(g, h, rwtest::zooInputs("deepfm"));
  // With the tower on stream 1, the FM/linear branch may not follow it there.
  for (const Candidate& c : candidatesOf(h, t, ActionKind::kAssignStream)) {
    if (holds(h, c, "node_sum_1.fm")) {
      EXPECT_NE(c.action.arg, 1);
    }
  }
}

TEST(AssignStreamTest, CandidatesAreDeterministic) {
  Graph g = rwtest::zoo("deepfm");
  Target t = rwtest::target("h200");
  auto a = candidatesOf(g, t, ActionKind::kAssignStream, true);
  auto b = candidatesOf(g, t, ActionKind::kAssignStream, true);
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_TRUE(a[i].action == b[i].action && a[i].reason == b[i].reason);
}

}  // namespace
}  // namespace cagr
