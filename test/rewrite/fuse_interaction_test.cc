// fuse_interaction: golden IR for a DLRM-like interaction, an FM and CIN
// layers; the cases it must not fire (lookups read elsewhere, no kernel for
// the math mode); and the reference executor's outputs before and after on
// hand-written graphs, dlrm_criteo, deepfm and xdeepfm.
#include <algorithm>

#include "rewrite_test_util.h"

namespace cagr {
namespace {

using rwtest::applyAll;
using rwtest::candidatesOf;

// A block argument: name, element type + static dims as MLIR spells them
// ("?x4xf32"), and the dims for input_dims ("N,4").
struct Arg {
  std::string name, type, dims;
};

// One graph op around `body`; tables and weights are graph inputs, so random
// inputs exercise them.
std::string graphOf(const std::vector<Arg>& args, const std::string& body, const std::string& ret,
                    const std::string& outputs = R"("out")") {
  std::string sig, names, dims;
  for (const Arg& a : args) {
    std::string sep = sig.empty() ? "" : ", ";
    sig += sep + "%" + a.name + ": tensor<" + a.type + ">";
    names += sep + "\"" + a.name + "\"";
    dims += sep + "\"" + a.dims + "\"";
  }
  return "\"builtin.module\"() ({\n  \"cagr.graph\"() ({\n  ^bb0(" + sig + "):" + body + "\n    " + ret +
         "\n  }) {sym_name = \"main\", input_names = [" + names + "], input_dims = [" + dims + "], output_names = [" +
         outputs + "], symbols = [\"N\"]} : () -> ()\n}) : () -> ()\n";
}

// Bottom MLP + three EmbeddingBags -> Concat -> Reshape -> Interaction ->
// Concat with the dense vector -> top Gemm. `extra` reads bag1 a second time.
std::string dlrm(bool extra = false) {
  std::string body = R"(
    %0 = "cagr.gemm"(%dense, %wb) {name = "bot", transB = 1 : i64} : (tensor<?x4xf32>, tensor<4x4xf32>) -> tensor<?x4xf32>
    %1 = "cagr.relu"(%0) {name = "bot_relu"} : (tensor<?x4xf32>) -> tensor<?x4xf32>
    %e0 = "cagr.embedding_bag"(%t0, %ids0) {name = "bag0"} : (tensor<10x4xf32>, tensor<?x2xi64>) -> tensor<?x4xf32>
    %e1 = "cagr.embedding_bag"(%t1, %ids1) {name = "bag1"} : (tensor<10x4xf32>, tensor<?x2xi64>) -> tensor<?x4xf32>
    %e2 = "cagr.embedding_bag"(%t2, %ids2) {name = "bag2"} : (tensor<10x4xf32>, tensor<?x2xi64>) -> tensor<?x4xf32>
    %2 = "cagr.concat"(%1, %e0, %e1, %e2) {name = "stack", axis = 1 : i64} : (tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x16xf32>
    %3 = "cagr.reshape"(%2) {name = "view", shape = [0, -1, 4]} : (tensor<?x16xf32>) -> tensor<?x4x4xf32>
    %4 = "cagr.interaction"(%3) {name = "interact"} : (tensor<?x4x4xf32>) -> tensor<?x6xf32>
    %5 = "cagr.concat"(%1, %4) {name = "join", axis = 1 : i64} : (tensor<?x4xf32>, tensor<?x6xf32>) -> tensor<?x10xf32>
    %6 = "cagr.gemm"(%5, %wt) {name = "top", transB = 1 : i64} : (tensor<?x10xf32>, tensor<1x10xf32>) -> tensor<?x1xf32>)";
  std::string ret = R"("cagr.return"(%6) : (tensor<?x1xf32>) -> ())";
  if (extra) {
    body += R"(
    %7 = "cagr.relu"(%e1) {name = "side"} : (tensor<?x4xf32>) -> tensor<?x4xf32>)";
    ret = R"("cagr.return"(%6, %7) : (tensor<?x1xf32>, tensor<?x4xf32>) -> ())";
  }
  std::vector<Arg> args = {{"dense", "?x4xf32", "N,4"}, {"ids0", "?x2xi64", "N,2"}, {"ids1", "?x2xi64", "N,2"},
                           {"ids2", "?x2xi64", "N,2"},  {"t0", "10x4xf32", "10,4"}, {"t1", "10x4xf32", "10,4"},
                           {"t2", "10x4xf32", "10,4"},  {"wb", "4x4xf32", "4,4"},   {"wt", "1x10xf32", "1,10"}};
  return graphOf(args, body, ret, extra ? R"("out", "side")" : R"("out")");
}

// Three Gathers -> Unsqueeze -> Concat -> FM; with `dnn` the stacked
// embeddings also feed a Gemm (DeepFM).
std::string fm(bool dnn) {
  std::string body;
  for (int i = 0; i < 3; ++i) {
    std::string k = std::to_string(i);
    body += "\n    %g" + k + R"( = "cagr.gather"(%t)" + k + ", %ids" + k + R"() {name = "emb)" + k +
            R"("} : (tensor<10x4xf32>, tensor<?xi64>) -> tensor<?x4xf32>
    %u)" + k +
            R"( = "cagr.unsqueeze"(%g)" + k + R"() {name = "u)" + k +
            R"(", axes = [1]} : (tensor<?x4xf32>) -> tensor<?x1x4xf32>)";
  }
  body += R"(
    %s = "cagr.concat"(%u0, %u1, %u2) {name = "stack", axis = 1 : i64} : (tensor<?x1x4xf32>, tensor<?x1x4xf32>, tensor<?x1x4xf32>) -> tensor<?x3x4xf32>
    %f = "cagr.fm"(%s) {name = "fm"} : (tensor<?x3x4xf32>) -> tensor<?x1xf32>)";
  std::string out = "%f";
  if (dnn) {
    body += R"(
    %fl = "cagr.flatten"(%s) {name = "flat"} : (tensor<?x3x4xf32>) -> tensor<?x12xf32>
    %d = "cagr.gemm"(%fl, %w) {name = "dnn", transB = 1 : i64} : (tensor<?x12xf32>, tensor<1x12xf32>) -> tensor<?x1xf32>
    %y = "cagr.add"(%f, %d) {name = "sum"} : (tensor<?x1xf32>, tensor<?x1xf32>) -> tensor<?x1xf32>)";
    out = "%y";
  }
  std::vector<Arg> args = {{"ids0", "?xi64", "N"},     {"ids1", "?xi64", "N"},     {"ids2", "?xi64", "N"},
                           {"t0", "10x4xf32", "10,4"}, {"t1", "10x4xf32", "10,4"}, {"t2", "10x4xf32", "10,4"},
                           {"w", "1x12xf32", "1,12"}};
  return graphOf(args, body, R"("cagr.return"()" + out + R"() : (tensor<?x1xf32>) -> ())");
}

// Two CIN layers over x0 [N,3,4]; `math` decorates the first.
std::string cin(const std::string& math = "") {
  std::string body = R"(
    %c1 = "cagr.cin"(%x0, %x0, %w1) {name = "cin1")" +
                     math + R"(} : (tensor<?x3x4xf32>, tensor<?x3x4xf32>, tensor<5x9xf32>) -> tensor<?x5x4xf32>
    %r1 = "cagr.relu"(%c1) {name = "cin1_relu"} : (tensor<?x5x4xf32>) -> tensor<?x5x4xf32>
    %c2 = "cagr.cin"(%r1, %x0, %w2, %b2) {name = "cin2"} : (tensor<?x5x4xf32>, tensor<?x3x4xf32>, tensor<2x15xf32>, tensor<2xf32>) -> tensor<?x2x4xf32>)";
  return graphOf(
      {{"x0", "?x3x4xf32", "N,3,4"}, {"w1", "5x9xf32", "5,9"}, {"w2", "2x15xf32", "2,15"}, {"b2", "2xf32", "2"}}, body,
      R"("cagr.return"(%c2) : (tensor<?x2x4xf32>) -> ())");
}

// "bag0 bag1 ..." : the candidate's members by name.
std::string members(const Graph& g, const Candidate& c) {
  std::string out;
  for (NodeId n : c.action.nodes) out += (out.empty() ? "" : " ") + g.node(n).name;
  return out;
}

const char* kDlrmGroup = "bag0 bag1 bag2 stack view interact join";

TEST(FuseInteractionTest, DlrmLikeGroup) {
  for (auto [target, kernel] :
       {std::pair{"x86-64", "own.interaction"}, {"h200", "nvrtc.interaction"}, {"tpu-v4", "xla.interaction"}}) {
    Target t = rwtest::target(target);
    Graph g = rwtest::parse(dlrm());
    auto cs = candidatesOf(g, t, ActionKind::kFuseInteraction, true);
    ASSERT_EQ(cs.size(), 1u) << target;
    EXPECT_TRUE(cs[0].legal()) << cs[0].reason;
    EXPECT_EQ(members(g, cs[0]), kDlrmGroup);  // bottom MLP and top Gemm stay out
    EXPECT_EQ(cs[0].action.choice, kernel);
    EXPECT_EQ(applyAll(g, t, ActionKind::kFuseInteraction), 1) << target;
    EXPECT_TRUE(candidatesOf(g, t, ActionKind::kFuseInteraction).empty());
  }
  Graph before = rwtest::parse(dlrm());
  Graph g = before;
  applyAll(g, rwtest::target("x86-64"), ActionKind::kFuseInteraction);
  rwtest::expectGolden(g, "fuse_interaction_dlrm.mlir");
  rwtest::expectSameOutputs(before, g, rwtest::randomInputs(before, 4, 10));
}

TEST(FuseInteractionTest, LookupReadElsewhereStaysOut) {
  Target t = rwtest::target("x86-64");
  Graph g = rwtest::parse(dlrm(/*extra=*/true));
  auto cs = candidatesOf(g, t, ActionKind::kFuseInteraction, true);
  ASSERT_EQ(cs.size(), 2u);
  EXPECT_EQ(members(g, cs[0]), kDlrmGroup);
  EXPECT_NE(cs[0].reason.find("'bag1' (EmbeddingBag) is also used by 'side' (Relu)"), std::string::npos)
      << cs[0].reason;
  EXPECT_TRUE(cs[1].legal()) << cs[1].reason;
  EXPECT_EQ(members(g, cs[1]), "bag0 bag2 stack view interact join");
  Graph before = g;
  EXPECT_EQ(applyAll(g, t, ActionKind::kFuseInteraction), 1);
  EXPECT_EQ(g.node(3).name, "bag1");
  EXPECT_EQ(g.node(3).mir.group, -1);
  rwtest::expectSameOutputs(before, g, rwtest::randomInputs(before, 4, 10));
}

TEST(FuseInteractionTest, FmWithItsLookups) {
  Target t = rwtest::target("x86-64");
  Graph before = rwtest::parse(fm(/*dnn=*/false));
  Graph g = before;
  auto cs = candidatesOf(g, t, ActionKind::kFuseInteraction, true);
  ASSERT_EQ(cs.size(), 1u);
  EXPECT_EQ(cs[0].action.nodes.size(), 8u);  // 3 gathers, 3 unsqueezes, concat, FM
  EXPECT_EQ(cs[0].action.choice, "own.fm");
  EXPECT_EQ(applyAll(g, t, ActionKind::kFuseInteraction), 1);
  rwtest::expectGolden(g, "fuse_interaction_fm.mlir");
  rwtest::expectSameOutputs(before, g, rwtest::randomInputs(before, 4, 10));
}

TEST(FuseInteractionTest, SharedStackLeavesFmAlone) {
  // DeepFM: the stacked embeddings feed the DNN too, so only the FM is offered.
  Target t = rwtest::target("h200");
  Graph g = rwtest::parse(fm(/*dnn=*/true));
  auto cs = candidatesOf(g, t, ActionKind::kFuseInteraction, true);
  ASSERT_EQ(cs.size(), 2u);
  EXPECT_FALSE(cs[0].legal());
  EXPECT_NE(cs[0].reason.find("'stack' (Concat) is also used by 'flat' (Flatten): it stays outside the kernel"),
            std::string::npos)
      << cs[0].reason;
  EXPECT_TRUE(cs[1].legal());
  EXPECT_EQ(members(g, cs[1]), "fm");
  EXPECT_EQ(cs[1].action.choice, "nvrtc.fm");
  EXPECT_EQ(applyAll(g, t, ActionKind::kFuseInteraction), 1);
  rwtest::expectGolden(g, "fuse_interaction_fm_shared.mlir");
}

TEST(FuseInteractionTest, CinLayers) {
  Target cpu = rwtest::target("x86-64");
  Graph before = rwtest::parse(cin());
  Graph g = before;
  auto cs = candidatesOf(g, cpu, ActionKind::kFuseInteraction);
  ASSERT_EQ(cs.size(), 2u);
  EXPECT_EQ(cs[0].action.choice, "own.cin");
  EXPECT_EQ(applyAll(g, cpu, ActionKind::kFuseInteraction), 2);
  rwtest::expectGolden(g, "fuse_interaction_cin.mlir");
  rwtest::expectSameOutputs(before, g, rwtest::randomInputs(before, 3, 1));
}

TEST(FuseInteractionTest, NoKernelForTheMathMode) {
  // hip.cin runs f32 / bf16 / f16 math; a tf32 CIN has no fused kernel on the MI250X.
  Target gpu = rwtest::target("mi250x");
  Graph g = rwtest::parse(cin(R"(, cagr.math = "tf32")"));
  auto cs = candidatesOf(g, gpu, ActionKind::kFuseInteraction, true);
  ASSERT_EQ(cs.size(), 2u);
  EXPECT_EQ(members(g, cs[0]), "cin1");
  EXPECT_NE(cs[0].reason.find("hip.cin has no tf32 math"), std::string::npos) << cs[0].reason;
  EXPECT_TRUE(cs[1].legal());
  EXPECT_EQ(cs[1].action.choice, "hip.cin");
  Graph before = g;
  EXPECT_FALSE(applyAction(g, gpu, cs[0].action).isOk());
  EXPECT_EQ(printGraph(g), printGraph(before));
}

TEST(FuseInteractionTest, ZooModelsMatchReference) {
  struct Case {
    const char* model;
    const char* exporter;
    int actions;
    size_t largest;  // members of the largest group afterwards
  };
  for (const Case& c : {Case{"dlrm_criteo", "ts", 1, 31}, Case{"dlrm_criteo", "dynamo", 1, 30},
                        Case{"deepfm", "dynamo", 1, 1}, Case{"xdeepfm", "ts", 3, 1}}) {
    Target t = rwtest::target("x86-64");
    Graph before = rwtest::zoo(c.model, c.exporter);
    Graph g = before;
    EXPECT_EQ(applyAll(g, t, ActionKind::kFuseInteraction), c.actions) << c.model;
    size_t largest = 0, fused = 0;
    for (const auto& k : kernelGroups(g)) {
      largest = std::max(largest, k.size());
      Pattern p = kernelInfo(g.node(k[0]).mir.kernel).pattern;
      fused += p == Pattern::kInteraction || p == Pattern::kFM || p == Pattern::kCin ? 1 : 0;
    }
    EXPECT_EQ(largest, c.largest) << c.model << "." << c.exporter;
    EXPECT_EQ(fused, static_cast<size_t>(c.actions)) << c.model;
    rwtest::expectSameOutputs(before, g, rwtest::zooInputs(c.model));
  }
}

}  // namespace
}  // namespace cagr
