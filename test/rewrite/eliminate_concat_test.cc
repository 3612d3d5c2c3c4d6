// eliminate_concat: golden IR for the in-place form (the concat's kernel) and
// the fold form (consecutive slices -> one slice / reshape, a one-input
// concat -> its input), the near misses when neither may fire, and the
// numerical check on hand-written graphs and on DeepFM / DLRM after
// batch_embeddings.
#include <algorithm>

#include "rewrite_test_util.h"

namespace cagr {
namespace {

using rwtest::candidatesOf;

const Target& cpu() {
  static const Target t = rwtest::target("x86-64");
  return t;
}

// `cat` joins two producers of its own (in place); `mixed` reads a graph
// input, a view, a value used twice and a graph output (not in place).
const char* kInPlace = R"(
"builtin.module"() ({
  "cagr.graph"() ({
  ^bb0(%arg0: tensor<?x4xf32>, %arg1: tensor<?x4xf32>):
    %a = "cagr.relu"(%arg0) {name = "relu"} : (tensor<?x4xf32>) -> tensor<?x4xf32>
    %b = "cagr.sigmoid"(%arg1) {name = "sigmoid"} : (tensor<?x4xf32>) -> tensor<?x4xf32>
    %cat = "cagr.concat"(%a, %b) {name = "cat", axis = 1 : i64} : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x8xf32>
    %t = "cagr.tanh"(%cat) {name = "tanh"} : (tensor<?x8xf32>) -> tensor<?x8xf32>
    "cagr.return"(%t) : (tensor<?x8xf32>) -> ()
  }) {input_names = ["x", "y"], input_dims = ["N,4", "N,4"], output_names = ["z"], symbols = ["N"]} : () -> ()
}) : () -> ()
)";

const char* kNotInPlace = R"(
"builtin.module"() ({
  "cagr.graph"() ({
  ^bb0(%arg0: tensor<?x4xf32>, %arg1: tensor<?x4xf32>):
    %a = "cagr.relu"(%arg0) {name = "relu"} : (tensor<?x4xf32>) -> tensor<?x4xf32>
    %b = "cagr.sigmoid"(%arg1) {name = "sigmoid"} : (tensor<?x4xf32>) -> tensor<?x4xf32>
    %c = "cagr.exp"(%arg1) {name = "exp"} : (tensor<?x4xf32>) -> tensor<?x4xf32>
    %r = "cagr.reshape"(%c) {name = "view", shape = [-1, 4]} : (tensor<?x4xf32>) -> tensor<?x4xf32>
    %d = "cagr.neg"(%arg0) {name = "neg"} : (tensor<?x4xf32>) -> tensor<?x4xf32>
    %e = "cagr.abs"(%arg0) {name = "abs"} : (tensor<?x4xf32>) -> tensor<?x4xf32>
    %cat0 = "cagr.concat"(%arg0, %a) {name = "with_input", axis = 1 : i64} : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x8xf32>
    %cat1 = "cagr.concat"(%r, %a) {name = "with_view", axis = 1 : i64} : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x8xf32>
    %cat2 = "cagr.concat"(%b, %b) {name = "twice", axis = 1 : i64} : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x8xf32>
    %cat3 = "cagr.concat"(%d, %e) {name = "with_output", axis = 1 : i64} : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x8xf32>
    %s0 = "cagr.add"(%cat0, %cat1) {name = "s0"} : (tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
    %s1 = "cagr.add"(%s0, %cat2) {name = "s1"} : (tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
    %s2 = "cagr.add"(%s1, %cat3) {name = "s2"} : (tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
    "cagr.return"(%s2, %e) : (tensor<?x8xf32>, tensor<?x4xf32>) -> ()
  }) {input_names = ["x", "y"], input_dims = ["N,4", "N,4"], output_names = ["z", "e"], symbols = ["N"]} : () -> ()
}) : () -> ()
)";

// What batch_embeddings leaves: `stack` of unsqueezed column slices (DeepFM's
// form, covering x whole), `cat` of a dense part and two touching slices
// (DLRM's form), `one` with a single input, and `gap` whose slices skip
// columns 4..8 (nothing to fold there).
const char* kSlices = R"(
"builtin.module"() ({
  "cagr.graph"() ({
  ^bb0(%arg0: tensor<?x12xf32>, %arg1: tensor<?x3xf32>):
    %x = "cagr.relu"(%arg0) {name = "x"} : (tensor<?x12xf32>) -> tensor<?x12xf32>
    %s0 = "cagr.slice"(%x) {name = "s0", starts = [0], ends = [4], axes = [1]} : (tensor<?x12xf32>) -> tensor<?x4xf32>
    %s1 = "cagr.slice"(%x) {name = "s1", starts = [4], ends = [8], axes = [1]} : (tensor<?x12xf32>) -> tensor<?x4xf32>
    %s2 = "cagr.slice"(%x) {name = "s2", starts = [8], ends = [12], axes = [-1]} : (tensor<?x12xf32>) -> tensor<?x4xf32>
    %u0 = "cagr.unsqueeze"(%s0) {name = "u0", axes = [1]} : (tensor<?x4xf32>) -> tensor<?x1x4xf32>
    %u1 = "cagr.unsqueeze"(%s1) {name = "u1", axes = [1]} : (tensor<?x4xf32>) -> tensor<?x1x4xf32>
    %u2 = "cagr.reshape"(%s2) {name = "u2", shape = [-1, 1, 4]} : (tensor<?x4xf32>) -> tensor<?x1x4xf32>
    %stack = "cagr.concat"(%u0, %u1, %u2) {name = "stack", axis = 1 : i64} : (tensor<?x1x4xf32>, tensor<?x1x4xf32>, tensor<?x1x4xf32>) -> tensor<?x3x4xf32>
    %fm = "cagr.fm"(%stack) {name = "fm"} : (tensor<?x3x4xf32>) -> tensor<?x1xf32>
    %cat = "cagr.concat"(%arg1, %s1, %s2) {name = "cat", axis = -1 : i64} : (tensor<?x3xf32>, tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x11xf32>
    %sum = "cagr.reduce_sum"(%cat) {name = "sum", axes = [1], keepdims = 1 : i64} : (tensor<?x11xf32>) -> tensor<?x1xf32>
    %one = "cagr.concat"(%fm) {name = "one", axis = 1 : i64} : (tensor<?x1xf32>) -> tensor<?x1xf32>
    %gap = "cagr.concat"(%s0, %s2) {name = "gap", axis = 1 : i64} : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x8xf32>
    %y = "cagr.add"(%one, %sum) {name = "y"} : (tensor<?x1xf32>, tensor<?x1xf32>) -> tensor<?x1xf32>
    "cagr.return"(%y, %gap) : (tensor<?x1xf32>, tensor<?x8xf32>) -> ()
  }) {input_names = ["dense", "extra"], input_dims = ["N,12", "N,3"], output_names = ["y", "gap"], symbols = ["N"]} : () -> ()
}) : () -> ()
)";

// A graph output that is a one-input concat of a graph input, and a concat of
// the whole input in two halves: both forward `x` itself.
const char* kForward = R"(
"builtin.module"() ({
  "cagr.graph"() ({
  ^bb0(%arg0: tensor<?x6xf32>):
    %one = "cagr.concat"(%arg0) {name = "one", axis = 0 : i64} : (tensor<?x6xf32>) -> tensor<?x6xf32>
    %a = "cagr.slice"(%arg0) {name = "a", starts = [0], ends = [3], axes = [1]} : (tensor<?x6xf32>) -> tensor<?x3xf32>
    %b = "cagr.slice"(%arg0) {name = "b", starts = [3], ends = [100], axes = [1]} : (tensor<?x6xf32>) -> tensor<?x3xf32>
    %halves = "cagr.concat"(%a, %b) {name = "halves", axis = 1 : i64} : (tensor<?x3xf32>, tensor<?x3xf32>) -> tensor<?x6xf32>
    %t = "cagr.tanh"(%halves) {name = "tanh"} : (tensor<?x6xf32>) -> tensor<?x6xf32>
    "cagr.return"(%one, %t) : (tensor<?x6xf32>, tensor<?x6xf32>) -> ()
  }) {input_names = ["x"], input_dims = ["N,6"], output_names = ["copy", "t"], symbols = ["N"]} : () -> ()
}) : () -> ()
)";

std::vector<Candidate> legalOf(const Graph& g, const std::string& choice) {
  std::vector<Candidate> out;
  for (auto& c : candidatesOf(g, cpu(), ActionKind::kEliminateConcat)) {
    if (c.action.choice == choice) out.push_back(c);
  }
  return out;
}

// Reason of the near miss for `concat`'s `choice` (empty when none).
std::string reasonFor(const Graph& g, const std::string& concat, const std::string& choice) {
  for (const auto& c : candidatesOf(g, cpu(), ActionKind::kEliminateConcat, true)) {
    if (!c.legal() && c.action.choice == choice && g.node(c.action.nodes[0]).name == concat) return c.reason;
  }
  return "";
}

// Applies eliminate_concat candidates, folds first (re-enumerating after
// each), until none is left; returns how many were applied. Not
// rwtest::applyAll: that takes the first candidate, and a concat lists its
// in_place candidate before its fold.
int eliminateAll(Graph& g) {
  int n = 0;
  for (auto cands = candidatesOf(g, cpu(), ActionKind::kEliminateConcat); !cands.empty() && n < 64; ++n) {
    auto fold = std::find_if(cands.begin(), cands.end(), [](const Candidate& c) { return c.action.choice == "fold"; });
    g = rwtest::applied(g, cpu(), (fold != cands.end() ? *fold : cands[0]).action);
    cands = candidatesOf(g, cpu(), ActionKind::kEliminateConcat);
  }
  return n;
}

// The nodes running op `k`, in graph order.
std::vector<const Node*> opsOf(const Graph& g, OpKind k) {
  std::vector<const Node*> out;
  for (const Node& n : g.nodes()) {
    if (n.op == k) out.push_back(&n);
  }
  return out;
}

NodeId nodeNamed(const Graph& g, const std::string& name) {
  for (size_t i = 0; i < g.nodes().size(); ++i) {
    if (g.nodes()[i].name == name) return static_cast<NodeId>(i);
  }
  ADD_FAILURE() << "no node " << name;
  return -1;
}

TEST(EliminateConcat, InPlaceGolden) {
  Graph g = rwtest::parse(kInPlace);
  auto cands = legalOf(g, "in_place");
  ASSERT_EQ(cands.size(), 1u);
  EXPECT_TRUE(legalOf(g, "fold").empty());
  Graph h = rwtest::applied(g, cpu(), cands[0].action);
  const Node& cat = h.node(cands[0].action.nodes[0]);
  EXPECT_STREQ(kernelInfo(cat.mir.kernel).name, "own.concat_inplace");
  rwtest::expectGolden(h, "eliminate_concat_in_place.mlir");
  EXPECT_TRUE(legalOf(h, "in_place").empty());
  EXPECT_NE(reasonFor(h, "cat", "in_place").find("already runs in place"), std::string::npos);
  Graph gpu = rwtest::applied(g, rwtest::target("h200"), cands[0].action);
  EXPECT_STREQ(kernelInfo(gpu.node(cands[0].action.nodes[0]).mir.kernel).name, "nvrtc.concat_inplace");
}

TEST(EliminateConcat, InPlaceMustNotFire) {
  Graph g = rwtest::parse(kNotInPlace);
  EXPECT_TRUE(candidatesOf(g, cpu(), ActionKind::kEliminateConcat).empty());
  EXPECT_EQ(reasonFor(g, "with_input", "in_place"), "'with_input' (Concat)'s input 'x' is a graph input");
  EXPECT_EQ(reasonFor(g, "with_view", "in_place"),
            "'with_view' (Concat)'s input 'view' is a view (Reshape), not a kernel's own output");
  EXPECT_EQ(reasonFor(g, "twice", "in_place"), "'twice' (Concat)'s input 'sigmoid' is concatenated twice");
  EXPECT_EQ(reasonFor(g, "with_output", "in_place"), "'with_output' (Concat)'s input 'e' is a graph output");
  EXPECT_NE(reasonFor(g, "with_input", "fold").find("no two adjacent inputs are consecutive slices"),
            std::string::npos);
  Graph h = g;
  Action forced;
  forced.kind = ActionKind::kEliminateConcat;
  forced.nodes = {nodeNamed(g, "with_output")};
  forced.choice = "in_place";
  EXPECT_FALSE(rewriteFor(ActionKind::kEliminateConcat)->apply(h, cpu(), forced).isOk());
  EXPECT_EQ(h.node(forced.nodes[0]).mir.kernel, 0);
}

TEST(EliminateConcat, FoldGolden) {
  Graph g = rwtest::parse(kSlices);
  auto folds = legalOf(g, "fold");
  ASSERT_EQ(folds.size(), 3u);  // stack, cat, one
  EXPECT_NE(reasonFor(g, "gap", "fold").find("'gap' (Concat): no two adjacent inputs"), std::string::npos);
  Graph h = g;
  for (size_t i = 0; i < 3; ++i) h = rwtest::applied(h, cpu(), legalOf(h, "fold")[0].action);
  EXPECT_TRUE(legalOf(h, "fold").empty());
  EXPECT_EQ(opsOf(h, OpKind::kConcat).size(), 2u);  // cat (dense + one slice) and gap
  rwtest::expectGolden(h, "eliminate_concat_fold.mlir");
}

TEST(EliminateConcat, FoldForwardsWholeTensors) {
  Graph g = rwtest::parse(kForward);
  Graph h = g;
  EXPECT_EQ(eliminateAll(h), 2);
  EXPECT_EQ(opsOf(h, OpKind::kConcat).size(), 0u);
  EXPECT_EQ(opsOf(h, OpKind::kSlice).size(), 0u);
  EXPECT_EQ(h.value(h.outputs()[0]).name, "copy");
  rwtest::expectGolden(h, "eliminate_concat_forward.mlir");
  rwtest::expectSameOutputs(g, h, rwtest::randomInputs(g, 3, 1));
}

TEST(EliminateConcat, HandWrittenGraphsComputeTheSame) {
  for (const char* text : {kInPlace, kNotInPlace, kSlices}) {
    Graph g = rwtest::parse(text);
    Graph h = g;
    eliminateAll(h);
    EXPECT_TRUE(candidatesOf(h, cpu(), ActionKind::kEliminateConcat).empty());
    rwtest::expectSameOutputs(g, h, rwtest::randomInputs(g, 5, 1));
  }
}

// batch_embeddings (which folds the concats of its slices itself), then
// eliminate_concat until neither has a candidate.
Graph batchedAndEliminated(const Graph& g) {
  Graph h = g;
  EXPECT_GT(rwtest::applyAll(h, cpu(), ActionKind::kBatchEmbeddings), 0);
  eliminateAll(h);
  return h;
}

TEST(EliminateConcat, DeepFmStackFoldsAway) {
  Graph g = rwtest::zoo("deepfm");
  Graph h = batchedAndEliminated(g);
  EXPECT_EQ(opsOf(h, OpKind::kConcat).size(), 0u);  // the FM stack and the linear terms are slices of the batch
  EXPECT_EQ(opsOf(h, OpKind::kSlice).size(), 2u);
  rwtest::expectSameOutputs(g, h, rwtest::zooInputs("deepfm"));
}

TEST(EliminateConcat, DlrmEmbeddingsJoinTheDensePartAsOneInput) {
  for (const char* exporter : {"ts", "dynamo"}) {
    Graph g = rwtest::zoo("dlrm_criteo", exporter);
    Graph h = batchedAndEliminated(g);
    auto concats = opsOf(h, OpKind::kConcat);
    ASSERT_EQ(concats.size(), 2u);
    for (const Node* n : concats) EXPECT_EQ(n->inputs.size(), 2u) << n->name;
    EXPECT_EQ(opsOf(h, OpKind::kSlice).size(), 0u);
    rwtest::expectSameOutputs(g, h, rwtest::zooInputs("dlrm_criteo"));
  }
}

// Every zoo model: the two rewrites in turn until neither has a candidate
// leave the outputs as they were.
class EliminateConcatZoo : public ::testing::TestWithParam<const char*> {};

TEST_P(EliminateConcatZoo, PipelineComputesTheSame) {
  Graph g = rwtest::zoo(GetParam());
  Graph h = g;
  for (int round = 0; round < 4; ++round) {
    auto batch = candidatesOf(h, cpu(), ActionKind::kBatchEmbeddings);
    if (!batch.empty()) h = rwtest::applied(h, cpu(), batch[0].action);
    if (eliminateAll(h) == 0 && batch.empty()) break;
  }
  EXPECT_TRUE(candidatesOf(h, cpu(), ActionKind::kEliminateConcat).empty());
  rwtest::expectSameOutputs(g, h, rwtest::zooInputs(GetParam()));
}

INSTANTIATE_TEST_SUITE_P(Models, EliminateConcatZoo,
                         ::testing::Values("autoint", "dcnv2", "deepfm", "dlrm_avazu", "dlrm_criteo", "ngcf",
                                           "wide_deep", "xdeepfm"));

}  // namespace
}  // namespace cagr
