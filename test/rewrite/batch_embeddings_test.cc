// batch_embeddings: golden IR for one-hot lookups selected from one input
// (DeepFM's form), multi-hot bags with offsets (DLRM's), stacked ids, the
// near misses when it must not fire, and the numerical check on hand-written
// graphs and on the zoo's DeepFM and DLRM models.
#include <algorithm>

#include "rewrite_test_util.h"

namespace cagr {
namespace {

using rwtest::applyAll;
using rwtest::candidatesOf;

const Target& cpu() {
  static const Target t = rwtest::target("x86-64");
  return t;
}

// Two fields of `sparse` (columns 0 and 1), each read by a 4-wide table whose
// rows are stacked for FM and a 1-wide table summed as the linear term.
const char* kOneHot = R"(
"builtin.module"() ({
  "cagr.graph"() ({
  ^bb0(%arg0: tensor<?x3xi64>):
    %c0 = "cagr.constant"() {name = "c0", value = dense<0> : tensor<i64>} : () -> tensor<i64>
    %s0 = "cagr.gather"(%arg0, %c0) {name = "select0", axis = 1 : i64} : (tensor<?x3xi64>, tensor<i64>) -> tensor<?xi64>
    %w0 = "cagr.constant"() {elided, name = "emb0"} : () -> tensor<10x4xf32>
    %e0 = "cagr.gather"(%w0, %s0) {name = "lookup_emb0", axis = 0 : i64} : (tensor<10x4xf32>, tensor<?xi64>) -> tensor<?x4xf32>
    %u0 = "cagr.unsqueeze"(%e0) {name = "u0", axes = [1]} : (tensor<?x4xf32>) -> tensor<?x1x4xf32>
    %v0 = "cagr.constant"() {elided, name = "lin0"} : () -> tensor<10x1xf32>
    %l0 = "cagr.gather"(%v0, %s0) {name = "lookup_lin0", axis = 0 : i64} : (tensor<10x1xf32>, tensor<?xi64>) -> tensor<?x1xf32>
    %c1 = "cagr.constant"() {name = "c1", value = dense<1> : tensor<i64>} : () -> tensor<i64>
    %s1 = "cagr.gather"(%arg0, %c1) {name = "select1", axis = 1 : i64} : (tensor<?x3xi64>, tensor<i64>) -> tensor<?xi64>
    %w1 = "cagr.constant"() {elided, name = "emb1"} : () -> tensor<12x4xf32>
    %e1 = "cagr.gather"(%w1, %s1) {name = "lookup_emb1", axis = 0 : i64} : (tensor<12x4xf32>, tensor<?xi64>) -> tensor<?x4xf32>
    %u1 = "cagr.unsqueeze"(%e1) {name = "u1", axes = [1]} : (tensor<?x4xf32>) -> tensor<?x1x4xf32>
    %v1 = "cagr.constant"() {elided, name = "lin1"} : () -> tensor<12x1xf32>
    %l1 = "cagr.gather"(%v1, %s1) {name = "lookup_lin1", axis = 0 : i64} : (tensor<12x1xf32>, tensor<?xi64>) -> tensor<?x1xf32>
    %stack = "cagr.concat"(%u0, %u1) {name = "stack", axis = 1 : i64} : (tensor<?x1x4xf32>, tensor<?x1x4xf32>) -> tensor<?x2x4xf32>
    %fm = "cagr.fm"(%stack) {name = "fm"} : (tensor<?x2x4xf32>) -> tensor<?x1xf32>
    %cat = "cagr.concat"(%l0, %l1) {name = "cat", axis = 1 : i64} : (tensor<?x1xf32>, tensor<?x1xf32>) -> tensor<?x2xf32>
    %lin = "cagr.reduce_sum"(%cat) {name = "linear", axes = [1], keepdims = 1 : i64} : (tensor<?x2xf32>) -> tensor<?x1xf32>
    %y = "cagr.add"(%fm, %lin) {name = "logit"} : (tensor<?x1xf32>, tensor<?x1xf32>) -> tensor<?x1xf32>
    "cagr.return"(%y) : (tensor<?x1xf32>) -> ()
  }) {input_names = ["sparse"], input_dims = ["N,3"], output_names = ["y"], symbols = ["N"]} : () -> ()
}) : () -> ()
)";

// DLRM's form: bags t of sparse_indices[t] with offsets sparse_offsets[t],
// plus a max-pooled bag and a weighted bag that stay as they are.
const char* kMultiHot = R"(
"builtin.module"() ({
  "cagr.graph"() ({
  ^bb0(%arg0: tensor<2x?xi64>, %arg1: tensor<2x?xi64>, %arg2: tensor<?x2xi64>, %arg3: tensor<?x2xf32>):
    %c0 = "cagr.constant"() {name = "c0", value = dense<0> : tensor<i64>} : () -> tensor<i64>
    %i0 = "cagr.gather"(%arg0, %c0) {name = "ids0", axis = 0 : i64} : (tensor<2x?xi64>, tensor<i64>) -> tensor<?xi64>
    %o0 = "cagr.gather"(%arg1, %c0) {name = "offsets0", axis = 0 : i64} : (tensor<2x?xi64>, tensor<i64>) -> tensor<?xi64>
    %w0 = "cagr.constant"() {elided, name = "emb0"} : () -> tensor<10x4xf32>
    %b0 = "cagr.embedding_bag"(%w0, %i0, %o0) {name = "bag0", mode = "sum"} : (tensor<10x4xf32>, tensor<?xi64>, tensor<?xi64>) -> tensor<?x4xf32>
    %c1 = "cagr.constant"() {name = "c1", value = dense<1> : tensor<i64>} : () -> tensor<i64>
    %i1 = "cagr.gather"(%arg0, %c1) {name = "ids1", axis = 0 : i64} : (tensor<2x?xi64>, tensor<i64>) -> tensor<?xi64>
    %o1 = "cagr.gather"(%arg1, %c1) {name = "offsets1", axis = 0 : i64} : (tensor<2x?xi64>, tensor<i64>) -> tensor<?xi64>
    %w1 = "cagr.constant"() {elided, name = "emb1"} : () -> tensor<8x4xf32>
    %b1 = "cagr.embedding_bag"(%w1, %i1, %o1) {name = "bag1", mode = "sum"} : (tensor<8x4xf32>, tensor<?xi64>, tensor<?xi64>) -> tensor<?x4xf32>
    %w2 = "cagr.constant"() {elided, name = "emb2"} : () -> tensor<8x4xf32>
    %b2 = "cagr.embedding_bag"(%w2, %arg2) {name = "bag_max", mode = "max"} : (tensor<8x4xf32>, tensor<?x2xi64>) -> tensor<?x4xf32>
    %w3 = "cagr.constant"() {elided, name = "emb3"} : () -> tensor<8x4xf32>
    %b3 = "cagr.embedding_bag"(%w3, %arg2, %arg3) {name = "bag_weighted", operand_mask = [1, 1, 0, 1]} : (tensor<8x4xf32>, tensor<?x2xi64>, tensor<?x2xf32>) -> tensor<?x4xf32>
    %cat = "cagr.concat"(%b0, %b1, %b2, %b3) {name = "cat", axis = 1 : i64} : (tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x16xf32>
    "cagr.return"(%cat, %b1) : (tensor<?x16xf32>, tensor<?x4xf32>) -> ()
  }) {input_names = ["sparse_indices", "sparse_offsets", "ids", "psw"], input_dims = ["2,L", "2,N", "N,2", "N,2"], output_names = ["z", "bag1_out"], symbols = ["N", "L"]} : () -> ()
}) : () -> ()
)";

// Ids that are plain inputs (stacked), two tables sharing `a`, and one-hot
// ids selected along axis 0 of `rows` (gathered, then transposed).
const char* kStacked = R"(
"builtin.module"() ({
  "cagr.graph"() ({
  ^bb0(%arg0: tensor<?x2xi64>, %arg1: tensor<?x2xi64>, %arg2: tensor<3x?xi64>):
    %w0 = "cagr.constant"() {elided, name = "t0"} : () -> tensor<9x3xf32>
    %b0 = "cagr.embedding_bag"(%w0, %arg0) {name = "bag_a", mode = "mean"} : (tensor<9x3xf32>, tensor<?x2xi64>) -> tensor<?x3xf32>
    %w1 = "cagr.constant"() {elided, name = "t1"} : () -> tensor<9x2xf32>
    %b1 = "cagr.embedding_bag"(%w1, %arg1) {name = "bag_b", mode = "mean"} : (tensor<9x2xf32>, tensor<?x2xi64>) -> tensor<?x2xf32>
    %w2 = "cagr.constant"() {elided, name = "t2"} : () -> tensor<9x3xf32>
    %b2 = "cagr.embedding_bag"(%w2, %arg0) {name = "bag_a2", mode = "mean"} : (tensor<9x3xf32>, tensor<?x2xi64>) -> tensor<?x3xf32>
    %c0 = "cagr.constant"() {name = "c0", value = dense<0> : tensor<i64>} : () -> tensor<i64>
    %r0 = "cagr.gather"(%arg2, %c0) {name = "row0", axis = 0 : i64} : (tensor<3x?xi64>, tensor<i64>) -> tensor<?xi64>
    %w3 = "cagr.constant"() {elided, name = "t3"} : () -> tensor<9x2xf32>
    %g0 = "cagr.gather"(%w3, %r0) {name = "lookup_r0", axis = 0 : i64} : (tensor<9x2xf32>, tensor<?xi64>) -> tensor<?x2xf32>
    %c2 = "cagr.constant"() {name = "c2", value = dense<-1> : tensor<i64>} : () -> tensor<i64>
    %r2 = "cagr.gather"(%arg2, %c2) {name = "row2", axis = 0 : i64} : (tensor<3x?xi64>, tensor<i64>) -> tensor<?xi64>
    %w4 = "cagr.constant"() {elided, name = "t4"} : () -> tensor<9x2xf32>
    %g2 = "cagr.gather"(%w4, %r2) {name = "lookup_r2", axis = 0 : i64} : (tensor<9x2xf32>, tensor<?xi64>) -> tensor<?x2xf32>
    %s = "cagr.add"(%b1, %g0) {name = "sum_b"} : (tensor<?x2xf32>, tensor<?x2xf32>) -> tensor<?x2xf32>
    %t = "cagr.mul"(%s, %g2) {name = "mul_r2"} : (tensor<?x2xf32>, tensor<?x2xf32>) -> tensor<?x2xf32>
    %cat = "cagr.concat"(%b0, %t, %b2) {name = "cat", axis = 1 : i64} : (tensor<?x3xf32>, tensor<?x2xf32>, tensor<?x3xf32>) -> tensor<?x8xf32>
    "cagr.return"(%cat) : (tensor<?x8xf32>) -> ()
  }) {input_names = ["a", "b", "rows"], input_dims = ["N,2", "N,2", "3,N"], output_names = ["z"], symbols = ["N"]} : () -> ()
}) : () -> ()
)";

// No pair of lookups fits one EmbeddingBags: a table that is an input, a
// weighted bag, and a lone bag.
const char* kNoBatch = R"(
"builtin.module"() ({
  "cagr.graph"() ({
  ^bb0(%arg0: tensor<?x2xi64>, %arg1: tensor<?x2xf32>, %arg2: tensor<10x4xf32>):
    %w0 = "cagr.constant"() {elided, name = "emb0"} : () -> tensor<10x4xf32>
    %b0 = "cagr.embedding_bag"(%w0, %arg0, %arg1) {name = "weighted", operand_mask = [1, 1, 0, 1]} : (tensor<10x4xf32>, tensor<?x2xi64>, tensor<?x2xf32>) -> tensor<?x4xf32>
    %b1 = "cagr.embedding_bag"(%arg2, %arg0) {name = "input_table", mode = "sum"} : (tensor<10x4xf32>, tensor<?x2xi64>) -> tensor<?x4xf32>
    %w2 = "cagr.constant"() {elided, name = "emb2"} : () -> tensor<10x4xf32>
    %b2 = "cagr.embedding_bag"(%w2, %arg0) {name = "lone", mode = "sum"} : (tensor<10x4xf32>, tensor<?x2xi64>) -> tensor<?x4xf32>
    %w3 = "cagr.constant"() {elided, name = "emb3"} : () -> tensor<10x4xf32>
    %b3 = "cagr.embedding_bag"(%w3, %arg0) {name = "max_bag", mode = "max"} : (tensor<10x4xf32>, tensor<?x2xi64>) -> tensor<?x4xf32>
    %s = "cagr.add"(%b0, %b1) {name = "s"} : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
    %t = "cagr.add"(%s, %b2) {name = "t"} : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
    %u = "cagr.add"(%t, %b3) {name = "u"} : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
    "cagr.return"(%u) : (tensor<?x4xf32>) -> ()
  }) {input_names = ["ids", "psw", "table"], input_dims = ["N,2", "N,2", "10,4"], output_names = ["y"], symbols = ["N"]} : () -> ()
}) : () -> ()
)";

// The same graph with every float constant filled with values in [-1, 1)
// (parsed elided weights are zeros, which would hide a wrong column).
Graph withRandomWeights(const Graph& g) {
  Graph h = g;
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  for (size_t v = 0; v < g.numValues(); ++v) {
    const Tensor* c = g.constant(static_cast<ValueId>(v));
    if (c == nullptr || c->dtype() != DType::kF32) continue;
    Tensor t(DType::kF32, c->shape());
    for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = dist(rng);
    h.replaceAllUses(static_cast<ValueId>(v), h.addConstant(g.value(static_cast<ValueId>(v)).name, std::move(t)));
  }
  h.compact();
  return h;
}

int countOps(const Graph& g, OpKind k) {
  return static_cast<int>(std::count_if(g.nodes().begin(), g.nodes().end(), [&](const Node& n) { return n.op == k; }));
}

std::vector<std::string> reasons(const std::vector<Candidate>& cands) {
  std::vector<std::string> out;
  for (const auto& c : cands) {
    if (!c.legal()) out.push_back(c.reason);
  }
  return out;
}

bool anyContains(const std::vector<std::string>& texts, const std::string& part) {
  return std::any_of(texts.begin(), texts.end(),
                     [&](const std::string& s) { return s.find(part) != std::string::npos; });
}

TEST(BatchEmbeddings, OneHotFieldsGolden) {
  Graph g = rwtest::parse(kOneHot);
  auto cands = candidatesOf(g, cpu(), ActionKind::kBatchEmbeddings);
  ASSERT_EQ(cands.size(), 3u);  // all four, and the two feeding each concat
  EXPECT_EQ(cands[0].action.nodes.size(), 4u);
  EXPECT_EQ(cands[1].action.nodes, (std::vector<NodeId>{1, 5}));  // the FM stack's
  EXPECT_EQ(cands[2].action.nodes, (std::vector<NodeId>{3, 7}));  // the linear terms'
  Graph h = rwtest::applied(g, cpu(), cands[0].action);
  EXPECT_EQ(countOps(h, OpKind::kEmbeddingBags), 1);
  EXPECT_EQ(countOps(h, OpKind::kGather), 1);  // both fields selected by one gather
  EXPECT_EQ(countOps(h, OpKind::kConcat), 0);  // both concats fold into slices of the batch
  rwtest::expectGolden(h, "batch_embeddings_onehot.mlir");
  EXPECT_TRUE(candidatesOf(h, cpu(), ActionKind::kBatchEmbeddings).empty());
}

// One EmbeddingBags per concat: each is that concat's value, with no slice.
TEST(BatchEmbeddings, OnePerConcatFoldsToViews) {
  Graph g = withRandomWeights(rwtest::parse(kOneHot));
  Graph h = g;
  for (int i = 0; i < 2; ++i) {
    auto cands = candidatesOf(h, cpu(), ActionKind::kBatchEmbeddings);
    ASSERT_GE(cands.size(), 2u - static_cast<size_t>(i));
    h = rwtest::applied(h, cpu(), cands[cands.size() - 1].action);
  }
  EXPECT_EQ(countOps(h, OpKind::kEmbeddingBags), 2);
  EXPECT_EQ(countOps(h, OpKind::kConcat), 0);
  EXPECT_EQ(countOps(h, OpKind::kSlice), 0);
  rwtest::expectSameOutputs(g, h, rwtest::randomInputs(g, 5, 10));
}

// Lookups moved to another stream (assign_stream) keep it once batched, so
// batching after assign_stream does not serialise the branch.
TEST(BatchEmbeddings, KeepsTheLookupsStream) {
  const Target h200 = rwtest::target("h200");
  Graph g = rwtest::parse(kOneHot);
  for (Node& n : g.mutableNodes()) n.mir.stream = 1;
  auto cands = candidatesOf(g, h200, ActionKind::kBatchEmbeddings);
  ASSERT_FALSE(cands.empty());
  Graph h = rwtest::applied(g, h200, cands[0].action);
  for (const Node& n : h.nodes()) EXPECT_EQ(n.mir.stream, 1) << n.name;
}

TEST(BatchEmbeddings, MultiHotGolden) {
  Graph g = rwtest::parse(kMultiHot);
  auto all = candidatesOf(g, cpu(), ActionKind::kBatchEmbeddings, true);
  auto legal = candidatesOf(g, cpu(), ActionKind::kBatchEmbeddings);
  ASSERT_EQ(legal.size(), 1u);
  EXPECT_EQ(legal[0].action.nodes.size(), 2u);
  auto why = reasons(all);
  EXPECT_TRUE(anyContains(why, "'bag_weighted' (EmbeddingBag) has per-sample weights"));
  EXPECT_TRUE(anyContains(
      why,
      "'bag_max' (EmbeddingBag) cannot share an EmbeddingBags with 'bag0' (EmbeddingBag): fixed pooling vs multi-hot"));
  Graph h = rwtest::applied(g, cpu(), legal[0].action);
  EXPECT_EQ(countOps(h, OpKind::kEmbeddingBags), 1);
  EXPECT_EQ(h.value(h.outputs()[1]).name, "bag1_out");
  rwtest::expectGolden(h, "batch_embeddings_multihot.mlir");
}

TEST(BatchEmbeddings, StackedIdsGolden) {
  Graph g = rwtest::parse(kStacked);
  auto cands = candidatesOf(g, cpu(), ActionKind::kBatchEmbeddings);
  ASSERT_EQ(cands.size(), 3u);  // [N,2] bags, those two of them the concat takes, and [N] row gathers
  EXPECT_EQ(cands[0].action.nodes.size(), 3u);
  EXPECT_EQ(cands[1].action.nodes.size(), 2u);
  EXPECT_EQ(applyAll(g, cpu(), ActionKind::kBatchEmbeddings), 2);
  EXPECT_EQ(countOps(g, OpKind::kEmbeddingBags), 2);
  EXPECT_EQ(countOps(g, OpKind::kTranspose), 1);
  rwtest::expectGolden(g, "batch_embeddings_stacked.mlir");
}

TEST(BatchEmbeddings, DoesNotFireWithoutACompatiblePair) {
  Graph g = rwtest::parse(kNoBatch);
  EXPECT_TRUE(candidatesOf(g, cpu(), ActionKind::kBatchEmbeddings).empty());
  auto why = reasons(candidatesOf(g, cpu(), ActionKind::kBatchEmbeddings, true));
  EXPECT_EQ(why.size(), 4u);
  EXPECT_TRUE(anyContains(why, "'weighted' (EmbeddingBag) has per-sample weights"));
  EXPECT_TRUE(anyContains(why, "table 'table' is not a constant"));
  EXPECT_TRUE(anyContains(
      why, "'lone' (EmbeddingBag) cannot share an EmbeddingBags with 'max_bag' (EmbeddingBag): mode sum vs max"));
  EXPECT_TRUE(anyContains(
      why, "'max_bag' (EmbeddingBag) cannot share an EmbeddingBags with 'lone' (EmbeddingBag): mode max vs sum"));
  // Forced anyway: the weighted bag with the input-table bag, the sum bag with the max bag.
  for (std::vector<NodeId> nodes : {std::vector<NodeId>{0, 1}, std::vector<NodeId>{2, 3}}) {
    Action forced;
    forced.kind = ActionKind::kBatchEmbeddings;
    forced.nodes = nodes;
    Graph h = g;
    EXPECT_FALSE(rewriteFor(ActionKind::kBatchEmbeddings)->apply(h, cpu(), forced).isOk());
    EXPECT_EQ(h.nodes().size(), g.nodes().size());
  }
}

TEST(BatchEmbeddings, HandWrittenGraphsComputeTheSame) {
  Graph onehot = withRandomWeights(rwtest::parse(kOneHot));
  Graph h = onehot;
  EXPECT_EQ(applyAll(h, cpu(), ActionKind::kBatchEmbeddings), 1);
  rwtest::expectSameOutputs(onehot, h, rwtest::randomInputs(onehot, 5, 10));

  Graph stacked = withRandomWeights(rwtest::parse(kStacked));
  h = stacked;
  EXPECT_EQ(applyAll(h, cpu(), ActionKind::kBatchEmbeddings), 2);
  rwtest::expectSameOutputs(stacked, h, rwtest::randomInputs(stacked, 5, 9));
}

TEST(BatchEmbeddings, MultiHotComputesTheSame) {
  Graph g = withRandomWeights(rwtest::parse(kMultiHot));
  Graph h = g;
  EXPECT_EQ(applyAll(h, cpu(), ActionKind::kBatchEmbeddings), 1);
  // 3 bags per slot over L = 5 ids; slot 1 has an empty bag.
  std::vector<std::pair<std::string, Tensor>> in;
  Tensor ids(DType::kI64, {2, 5}), offsets(DType::kI64, {2, 3}), fixed(DType::kI64, {3, 2}), psw(DType::kF32, {3, 2});
  const int64_t idv[] = {1, 9, 4, 4, 0, 7, 2, 3, 0, 5}, offv[] = {0, 2, 3, 0, 0, 4};
  std::copy(std::begin(idv), std::end(idv), ids.data<int64_t>());
  std::copy(std::begin(offv), std::end(offv), offsets.data<int64_t>());
  for (int64_t i = 0; i < 6; ++i) fixed.data<int64_t>()[i] = i + 1, psw.data<float>()[i] = 0.5f * static_cast<float>(i);
  in = {{"sparse_indices", ids}, {"sparse_offsets", offsets}, {"ids", fixed}, {"psw", psw}};
  rwtest::expectSameOutputs(g, h, in);
}

struct ZooCase {
  const char* model;
  const char* exporter;
  int lookups;  // lookups the batch replaces
};

class BatchEmbeddingsZoo : public ::testing::TestWithParam<ZooCase> {};

TEST_P(BatchEmbeddingsZoo, OneKernelSameOutputs) {
  const ZooCase& c = GetParam();
  Graph g = rwtest::zoo(c.model, c.exporter);
  auto cands = candidatesOf(g, cpu(), ActionKind::kBatchEmbeddings);
  ASSERT_GE(cands.size(), 1u);  // all lookups first, then those of each concat when they feed several
  EXPECT_EQ(static_cast<int>(cands[0].action.nodes.size()), c.lookups);
  Graph h = g;
  EXPECT_EQ(applyAll(h, cpu(), ActionKind::kBatchEmbeddings), 1);
  EXPECT_EQ(countOps(h, OpKind::kEmbeddingBags), 1);
  EXPECT_EQ(countOps(h, OpKind::kEmbeddingBag), 0);
  EXPECT_EQ(h.value(h.outputs()[0]).name, g.value(g.outputs()[0]).name);
  rwtest::expectSameOutputs(g, h, rwtest::zooInputs(c.model));
}

INSTANTIATE_TEST_SUITE_P(Models, BatchEmbeddingsZoo,
                         ::testing::Values(ZooCase{"dlrm_criteo", "ts", 26}, ZooCase{"dlrm_criteo", "dynamo", 26},
                                           ZooCase{"dlrm_avazu", "ts", 22}, ZooCase{"dlrm_avazu", "dynamo", 22},
                                           ZooCase{"deepfm", "dynamo", 44}, ZooCase{"deepfm", "ts", 44},
                                           ZooCase{"xdeepfm", "dynamo", 44}, ZooCase{"wide_deep", "dynamo", 52},
                                           ZooCase{"autoint", "dynamo", 22}, ZooCase{"dcnv2", "ts", 26}),
                         [](const auto& info) { return std::string(info.param.model) + "_" + info.param.exporter; });

}  // namespace
}  // namespace cagr
