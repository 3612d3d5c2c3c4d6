// fuse: golden IR for Gemm + activation, lookup chains and reductions on a
// CPU and a CUDA target, the near misses it must report, and the reference
// executor's outputs before and after fusing (hand-written and DLRM).
#include <algorithm>

#include "rewrite_test_util.h"

namespace cagr {
namespace {

using rwtest::applyAll;
using rwtest::candidatesOf;

// Two-layer MLP; the weights are graph inputs so random inputs exercise them.
// `$fc1` / `$relu1` / `$fc2` splice decision attributes into the nodes.
std::string mlp(const std::string& fc1 = "", const std::string& relu1 = "", const std::string& fc2 = "",
                const std::string& extraUse = "") {
  std::string uses = extraUse.empty() ? "" : R"(
    %y = "cagr.add"(%0, %0) {name = "y"} : (tensor<?x16xf32>, tensor<?x16xf32>) -> tensor<?x16xf32>)";
  std::string ret = extraUse.empty() ? R"("cagr.return"(%3) : (tensor<?x4xf32>) -> ())"
                                     : R"("cagr.return"(%3, %y) : (tensor<?x4xf32>, tensor<?x16xf32>) -> ())";
  std::string outs = extraUse.empty() ? R"(["prob"])" : R"(["prob", "y"])";
  return R"("builtin.module"() ({
  "cagr.graph"() ({
  ^bb0(%x: tensor<?x8xf32>, %w1: tensor<16x8xf32>, %b1: tensor<16xf32>, %w2: tensor<4x16xf32>, %b2: tensor<4xf32>):
    %0 = "cagr.gemm"(%x, %w1, %b1) {name = "fc1", transB = 1 : i64)" +
         fc1 + R"(} : (tensor<?x8xf32>, tensor<16x8xf32>, tensor<16xf32>) -> tensor<?x16xf32>
    %1 = "cagr.relu"(%0) {name = "relu1")" +
         relu1 + R"(} : (tensor<?x16xf32>) -> tensor<?x16xf32>
    %2 = "cagr.gemm"(%1, %w2, %b2) {name = "fc2", transB = 1 : i64)" +
         fc2 + R"(} : (tensor<?x16xf32>, tensor<4x16xf32>, tensor<4xf32>) -> tensor<?x4xf32>
    %3 = "cagr.sigmoid"(%2) {name = "sig"} : (tensor<?x4xf32>) -> tensor<?x4xf32>)" +
         uses + R"(
    )" + ret +
         R"(
  }) {sym_name = "main", input_names = ["x", "w1", "b1", "w2", "b2"], input_dims = ["N,8", "16,8", "16", "4,16", "4"], output_names = )" +
         outs + R"(, symbols = ["N"]} : () -> ()
}) : () -> ()
)";
}

// Lookup -> view -> Relu -> BatchNorm, and an eltwise prologue + reduction.
const char* kLookupAndReduce = R"("builtin.module"() ({
  "cagr.graph"() ({
  ^bb0(%ids: tensor<?xi64>, %table: tensor<10x4xf32>, %x: tensor<?x6xf32>):
    %s = "cagr.constant"() {elided, name = "bn.scale"} : () -> tensor<2xf32>
    %b = "cagr.constant"() {elided, name = "bn.bias"} : () -> tensor<2xf32>
    %m = "cagr.constant"() {elided, name = "bn.mean"} : () -> tensor<2xf32>
    %v = "cagr.constant"() {elided, name = "bn.var"} : () -> tensor<2xf32>
    %0 = "cagr.gather"(%table, %ids) {name = "emb"} : (tensor<10x4xf32>, tensor<?xi64>) -> tensor<?x4xf32>
    %1 = "cagr.reshape"(%0) {name = "view", shape = [-1, 2, 2]} : (tensor<?x4xf32>) -> tensor<?x2x2xf32>
    %2 = "cagr.relu"(%1) {name = "act"} : (tensor<?x2x2xf32>) -> tensor<?x2x2xf32>
    %3 = "cagr.batch_norm"(%2, %s, %b, %m, %v) {name = "bn"} : (tensor<?x2x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<?x2x2xf32>
    %4 = "cagr.mul"(%x, %x) {name = "sq"} : (tensor<?x6xf32>, tensor<?x6xf32>) -> tensor<?x6xf32>
    %5 = "cagr.reduce_sum"(%4) {name = "sum", axes = [1]} : (tensor<?x6xf32>) -> tensor<?x1xf32>
    %6 = "cagr.exp"(%5) {name = "after"} : (tensor<?x1xf32>) -> tensor<?x1xf32>
    "cagr.return"(%3, %6) : (tensor<?x2x2xf32>, tensor<?x1xf32>) -> ()
  }) {sym_name = "main", input_names = ["ids", "table", "x"], input_dims = ["N", "10,4", "N,6"], output_names = ["e", "r"], symbols = ["N"]} : () -> ()
}) : () -> ()
)";

// Node names of a candidate, for readable expectations.
std::vector<std::string> names(const Graph& g, const Candidate& c) {
  std::vector<std::string> out;
  for (NodeId n : c.action.nodes) out.push_back(g.node(n).name);
  return out;
}

const Candidate* find(const std::vector<Candidate>& cs, const Graph& g, const std::vector<std::string>& want) {
  for (const Candidate& c : cs) {
    if (names(g, c) == want) return &c;
  }
  return nullptr;
}

TEST(FuseTest, GemmBiasActivationOnCpu) {
  Graph g = rwtest::parse(mlp());
  Target cpu = rwtest::target("x86-64");
  auto cs = candidatesOf(g, cpu, ActionKind::kFuse, true);
  const Candidate* fc1 = find(cs, g, {"fc1", "relu1"});
  const Candidate* fc2 = find(cs, g, {"fc2", "sig"});
  const Candidate* back = find(cs, g, {"relu1", "fc2"});
  ASSERT_TRUE(fc1 && fc2 && back);
  EXPECT_TRUE(fc1->legal()) << fc1->reason;
  EXPECT_TRUE(fc2->legal()) << fc2->reason;  // oneDNN takes a sigmoid post-op
  EXPECT_NE(back->reason.find("'fc2' (Gemm) must come first"), std::string::npos) << back->reason;

  Graph h = rwtest::applied(g, cpu, fc1->action);
  auto after = candidatesOf(h, cpu, ActionKind::kFuse, true);
  const Candidate* two = find(after, h, {"fc1", "relu1", "fc2"});
  ASSERT_NE(two, nullptr);
  // Two GEMMs make one kernel only as a narrow chain on the CUDA backend's
  // generated GEMM (fuse_gemm_chain_test.cc); this pair is no chain at all.
  EXPECT_NE(two->reason.find("fusing 'fc2' (Gemm) after 'relu1' (Relu): 'fc2' (Gemm) after 'fc1' (Gemm): a GEMM chain"),
            std::string::npos)
      << two->reason;
  EXPECT_EQ(applyAll(g, cpu, ActionKind::kFuse), 2);
  rwtest::expectGolden(g, "fuse_mlp_x86.mlir");
  rwtest::expectSameOutputs(rwtest::parse(mlp()), g, rwtest::randomInputs(g, 5, 1));
}

TEST(FuseTest, GemmActivationOnH200FollowsTheCatalog) {
  Target gpu = rwtest::target("h200");
  Graph g = rwtest::parse(mlp());
  auto cs = candidatesOf(g, gpu, ActionKind::kFuse);
  EXPECT_NE(find(cs, g, {"fc1", "relu1"}), nullptr);  // cuBLASLt's bias/ReLU epilogue
  // Only the generated small GEMM takes a sigmoid, and only with f32 math.
  auto sigmoidOk = kernelsFor(g, {2, 3}, GroupShape{Pattern::kGemm, 2}, gpu, nullptr);
  ASSERT_EQ(sigmoidOk.size(), 1u);
  EXPECT_STREQ(kernelInfo(sigmoidOk[0]).name, "nvrtc.gemm_small");
  EXPECT_NE(find(cs, g, {"fc2", "sig"}), nullptr);

  Graph tf32 = rwtest::parse(mlp("", "", R"(, cagr.math = "tf32")"));
  auto near = candidatesOf(tf32, gpu, ActionKind::kFuse, true);
  const Candidate* sig = find(near, tf32, {"fc2", "sig"});
  ASSERT_NE(sig, nullptr);
  EXPECT_FALSE(sig->legal());
  EXPECT_NE(sig->reason.find("nvrtc.gemm_small has no tf32 math"), std::string::npos) << sig->reason;
  EXPECT_EQ(applyAll(g, gpu, ActionKind::kFuse), 2);
  EXPECT_EQ(kernelGroups(g).size(), 2u);
  EXPECT_EQ(applyAll(tf32, gpu, ActionKind::kFuse), 1);  // fc1 + relu1 only
  rwtest::expectGolden(tf32, "fuse_mlp_h200_tf32.mlir");
}

// A group no library kernel runs whole (Gemm + Sigmoid) goes to the
// generated GEMM where the profile measured it (the probed H200 profile),
// not on the datasheet H200 (no such entry: default placement); a group
// cuBLASLt's epilogue runs (Gemm + ReLU) keeps the default placement on both.
TEST(FuseTest, GemmSigmoidGoesToTheMeasuredGeneratedGemm) {
  auto hw = loadProfile(rwtest::repoPath("bench/results/hw/h200-probed.json"));
  ASSERT_TRUE(hw.isOk()) << hw.status().message();
  auto probed = makeTarget(*hw);
  ASSERT_TRUE(probed.isOk());
  const Target datasheet = rwtest::target("h200");
  const KernelId small = *kernelByName("nvrtc.gemm_small");
  for (const Target* t : {static_cast<const Target*>(&*probed), &datasheet}) {
    Graph g = rwtest::parse(mlp());
    auto cs = candidatesOf(g, *t, ActionKind::kFuse);
    const Candidate* head = find(cs, g, {"fc2", "sig"});
    const Candidate* first = find(cs, g, {"fc1", "relu1"});
    ASSERT_TRUE(head && first);
    Graph h = rwtest::applied(rwtest::applied(g, *t, head->action), *t, first->action);
    const bool measured = t == &*probed;
    for (const Node& n : h.nodes()) {
      if (n.name == "fc2" || n.name == "sig") EXPECT_EQ(n.mir.kernel, measured ? small : 0) << n.name;
      if (n.name == "fc1" || n.name == "relu1") EXPECT_EQ(n.mir.kernel, 0) << n.name;
    }
  }
}

TEST(FuseTest, MatMulBiasActivation) {
  Graph before = rwtest::parse(R"("builtin.module"() ({
  "cagr.graph"() ({
  ^bb0(%x: tensor<?x8xf32>, %w: tensor<8x4xf32>, %b: tensor<4xf32>):
    %0 = "cagr.matmul"(%x, %w) {name = "mm"} : (tensor<?x8xf32>, tensor<8x4xf32>) -> tensor<?x4xf32>
    %1 = "cagr.add"(%0, %b) {name = "bias"} : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
    %2 = "cagr.gelu"(%1) {name = "act"} : (tensor<?x4xf32>) -> tensor<?x4xf32>
    "cagr.return"(%2) : (tensor<?x4xf32>) -> ()
  }) {sym_name = "main", input_names = ["x", "w", "b"], input_dims = ["N,8", "8,4", "4"], output_names = ["y"], symbols = ["N"]} : () -> ()
}) : () -> ()
)");
  for (const char* name : {"x86-64", "h200", "mi250x", "tpu-v4"}) {
    Target t = rwtest::target(name);
    Graph g = before;
    EXPECT_EQ(applyAll(g, t, ActionKind::kFuse), 2) << name;
    ASSERT_EQ(kernelGroups(g).size(), 1u) << name;
    auto shape = classifyGroup(g, kernelGroups(g)[0]);
    ASSERT_TRUE(shape.isOk());
    EXPECT_EQ(shape->pattern, Pattern::kGemm);
    EXPECT_FALSE(kernelsFor(g, kernelGroups(g)[0], *shape, t, nullptr).empty()) << name;
    rwtest::expectSameOutputs(before, g, rwtest::randomInputs(before, 4, 1));
  }
}

TEST(FuseTest, LookupChainAndReduction) {
  for (const char* name : {"x86-64", "h200"}) {
    Target t = rwtest::target(name);
    Graph g = rwtest::parse(kLookupAndReduce);
    auto cs = candidatesOf(g, t, ActionKind::kFuse, true);
    const Candidate* view = find(cs, g, {"emb", "view", "act"});  // the view rides along
    const Candidate* red = find(cs, g, {"sq", "sum"});
    const Candidate* past = find(cs, g, {"sum", "after"});
    ASSERT_TRUE(view && red && past) << name;
    EXPECT_TRUE(view->legal() && red->legal()) << view->reason << red->reason;
    EXPECT_NE(past->reason.find("'sum' (ReduceSum) must come last"), std::string::npos) << past->reason;
    EXPECT_EQ(applyAll(g, t, ActionKind::kFuse), 3) << name;
    EXPECT_EQ(kernelGroups(g).size(), 3u) << name;  // emb..bn, sq+sum, after
  }
  Graph g = rwtest::parse(kLookupAndReduce);
  Target cpu = rwtest::target("x86-64");
  applyAll(g, cpu, ActionKind::kFuse);
  rwtest::expectGolden(g, "fuse_lookup_reduce.mlir");
  rwtest::expectSameOutputs(rwtest::parse(kLookupAndReduce), g, rwtest::randomInputs(g, 3, 10));
}

TEST(FuseTest, MustNotFire) {
  Target cpu = rwtest::target("x86-64");
  auto reasonOf = [&](const std::string& text, const std::vector<std::string>& group) {
    Graph g = rwtest::parse(text);
    auto cs = candidatesOf(g, cpu, ActionKind::kFuse, true);
    const Candidate* c = find(cs, g, group);
    if (c == nullptr) return std::string("<no candidate>");
    return c->legal() ? std::string("<legal>") : c->reason;
  };
  EXPECT_NE(
      reasonOf(mlp("", "", "", "y"), {"fc1", "relu1"}).find("the output of 'fc1' (Gemm) is also used by 'y' (Add)"),
      std::string::npos);
  EXPECT_NE(reasonOf(mlp("", ", cagr.stream = 1 : i64"), {"fc1", "relu1"}).find("'relu1' (Relu) is on stream 1"),
            std::string::npos);
  EXPECT_NE(reasonOf(mlp(R"(, cagr.kernel = "openblas.sgemm")"), {"fc1", "relu1"})
                .find("'fc1' (Gemm) runs openblas.sgemm, which cannot run the merged group"),
            std::string::npos);
  // An explicit kernel that still runs the merged group is kept.
  Graph own = rwtest::parse(mlp(R"(, cagr.kernel = "own.gemm")"));
  auto cs = candidatesOf(own, cpu, ActionKind::kFuse);
  const Candidate* c = find(cs, own, {"fc1", "relu1"});
  ASSERT_NE(c, nullptr);
  Graph h = rwtest::applied(own, cpu, c->action);
  EXPECT_STREQ(kernelInfo(h.node(1).mir.kernel).name, "own.gemm");
  EXPECT_EQ(h.node(0).mir.group, h.node(1).mir.group);
  EXPECT_GE(h.node(0).mir.group, 0);
  // A view fed by an input and read by a view only: nothing to fuse at all.
  Graph views = rwtest::parse(R"("builtin.module"() ({
  "cagr.graph"() ({
  ^bb0(%x: tensor<?x4xf32>):
    %0 = "cagr.reshape"(%x) {name = "r", shape = [-1, 2, 2]} : (tensor<?x4xf32>) -> tensor<?x2x2xf32>
    %1 = "cagr.flatten"(%0) {name = "f"} : (tensor<?x2x2xf32>) -> tensor<?x4xf32>
    "cagr.return"(%1) : (tensor<?x4xf32>) -> ()
  }) {sym_name = "main", input_names = ["x"], input_dims = ["N,4"], output_names = ["y"], symbols = ["N"]} : () -> ()
}) : () -> ()
)");
  EXPECT_TRUE(candidatesOf(views, cpu, ActionKind::kFuse, true).empty());
  // Applying a near miss fails and leaves the graph alone.
  Graph used = rwtest::parse(mlp("", "", "", "y"));
  Graph before = used;
  Action bad;
  bad.kind = ActionKind::kFuse;
  bad.nodes = {0, 1};
  EXPECT_FALSE(applyAction(used, cpu, bad).isOk());
  EXPECT_EQ(printGraph(used), printGraph(before));
}

TEST(FuseTest, DlrmMatchesReference) {
  Graph base = rwtest::zoo("dlrm_criteo");
  auto inputs = rwtest::zooInputs("dlrm_criteo");
  for (const char* name : {"x86-64", "h200"}) {
    Target t = rwtest::target(name);
    Graph g = base;
    EXPECT_GE(applyAll(g, t, ActionKind::kFuse), 7) << name;  // every Gemm takes its ReLU / sigmoid
    EXPECT_LT(kernelGroups(g).size(), kernelGroups(base).size());
    EXPECT_TRUE(candidatesOf(g, t, ActionKind::kFuse).empty());
    EXPECT_TRUE(verifyPlan(g, t).isOk());
    rwtest::expectSameOutputs(base, g, inputs);
  }
}

TEST(FuseTest, CandidatesAreDeterministicAndExplainAddsOnlyNearMisses) {
  for (const char* model : {"deepfm", "dlrm_criteo", "xdeepfm"}) {
    Graph g = rwtest::zoo(model);
    Target t = rwtest::target("h200");
    auto a = candidatesOf(g, t, ActionKind::kFuse, true);
    auto b = candidatesOf(g, t, ActionKind::kFuse, true);
    ASSERT_EQ(a.size(), b.size());
    for (size_t i = 0; i < a.size(); ++i) EXPECT_TRUE(a[i].action == b[i].action && a[i].reason == b[i].reason);
    std::vector<Action> legal, plain;
    for (const Candidate& c : a) {
      if (c.legal()) legal.push_back(c.action);
    }
    for (const Candidate& c : candidatesOf(g, t, ActionKind::kFuse)) plain.push_back(c.action);
    EXPECT_EQ(legal, plain) << model;
    EXPECT_GT(a.size(), plain.size()) << model;
  }
}

}  // namespace
}  // namespace cagr
