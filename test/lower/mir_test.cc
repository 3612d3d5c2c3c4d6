// MIR: decisions survive the text round trip; group classification, kernel
// choice per backend, schedules and the plan verifier accept what the
// contract allows and name the node when they refuse.
#include <gtest/gtest.h>

#include "../rewrite/rewrite_test_util.h"
#include "cagr/mir.h"

namespace cagr {
namespace {

using rwtest::parse;
using rwtest::target;

// x -> fc1 (Gemm) -> relu -> fc2 (Gemm) -> sigmoid; w2's K = 12 (not a multiple of 8).
const char* kMlp = R"(
"builtin.module"() ({
  "cagr.graph"() ({
  ^bb0(%arg0: tensor<?x16xf32>):
    %0 = "cagr.constant"() {elided, name = "w1"} : () -> tensor<12x16xf32>
    %1 = "cagr.constant"() {elided, name = "b1"} : () -> tensor<12xf32>
    %2 = "cagr.gemm"(%arg0, %0, %1) {name = "fc1", transB = 1 : i64} : (tensor<?x16xf32>, tensor<12x16xf32>, tensor<12xf32>) -> tensor<?x12xf32>
    %3 = "cagr.relu"(%2) {name = "relu1"} : (tensor<?x12xf32>) -> tensor<?x12xf32>
    %4 = "cagr.constant"() {elided, name = "w2"} : () -> tensor<8x12xf32>
    %5 = "cagr.gemm"(%3, %4) {name = "fc2", transB = 1 : i64} : (tensor<?x12xf32>, tensor<8x12xf32>) -> tensor<?x8xf32>
    %6 = "cagr.sigmoid"(%5) {name = "out"} : (tensor<?x8xf32>) -> tensor<?x8xf32>
    "cagr.return"(%6) : (tensor<?x8xf32>) -> ()
  }) {sym_name = "main", input_names = ["x"], input_dims = ["N,16"], output_names = ["y"], symbols = ["N"]} : () -> ()
}) : () -> ()
)";

TEST(MirText, DecisionsAndMetadataRoundTrip) {
  Graph g = parse(kMlp);
  g.mutableNodes()[0].mir = NodeDecision{3, *kernelByName("onednn.matmul"), 1, Precision::kF32};
  g.mutableNodes()[1].mir = NodeDecision{3, *kernelByName("onednn.matmul"), 1, Precision::kF32};
  g.mutableNodes()[2].mir.math = Precision::kBF16;
  g.mutableValue(g.node(2).inputs[1]).mir = ValueDecision{Precision::kBF16, Layout::kPacked};
  g.mutableValue(g.node(1).outputs[0]).mir.storage = Precision::kF16;
  g.mutableMeta().set("target", std::string("x86-64"));
  g.mutableMeta().set("batch", int64_t{256});
  std::string text = printGraph(g);
  EXPECT_NE(text.find("cagr.group = 3 : i64"), std::string::npos);
  EXPECT_NE(text.find("cagr.kernel = \"onednn.matmul\""), std::string::npos);
  EXPECT_NE(text.find("cagr.layout = \"packed\""), std::string::npos);
  EXPECT_NE(text.find("cagr.target = \"x86-64\""), std::string::npos);
  auto back = parseGraph(text);
  ASSERT_TRUE(back.isOk()) << back.status().message();
  EXPECT_EQ(printGraph(*back), text);
  EXPECT_EQ(back->node(0).mir, g.node(0).mir);
  EXPECT_EQ(back->node(2).mir.math, Precision::kBF16);
  EXPECT_EQ(back->value(back->node(2).inputs[1]).mir.layout, Layout::kPacked);
  EXPECT_EQ(back->meta().getInt("batch"), 256);
}

TEST(MirText, BadDecisionsAreNamed) {
  std::string text = kMlp;
  text.replace(text.find("{name = \"relu1\"}"), 16, "{name = \"relu1\", cagr.kernel = \"nope.gemm\"}");
  auto g = parseGraph(text, "plan.cagr");
  ASSERT_FALSE(g.isOk());
  EXPECT_NE(g.status().message().find("unknown kernel 'nope.gemm'"), std::string::npos) << g.status().message();
  EXPECT_NE(g.status().message().find("plan.cagr:"), std::string::npos);
}

TEST(MirGroups, ClassifiesGemmEpiloguesAndRefusesTwoAnchors) {
  Graph g = parse(kMlp);
  auto gemm = classifyGroup(g, {0, 1});
  ASSERT_TRUE(gemm.isOk()) << gemm.status().message();
  EXPECT_EQ(gemm->pattern, Pattern::kGemm);
  EXPECT_EQ(gemm->anchor, 0);
  // Two GEMMs are one kernel only as a narrow chain (fuse_gemm_chain_test.cc):
  // fc1's 12 columns are not a narrow kernel's 16 / 32 / 64.
  auto two = classifyGroup(g, {0, 1, 2});
  ASSERT_FALSE(two.isOk());
  EXPECT_NE(two.status().message().find("must be narrow"), std::string::npos) << two.status().message();
  auto gap = classifyGroup(g, {0, 2});
  ASSERT_FALSE(gap.isOk());
  EXPECT_NE(gap.status().message().find("not connected"), std::string::npos);
}

TEST(MirGroups, KernelChoicesFollowTheBackendCatalog) {
  Graph g = parse(kMlp);
  auto relu = *classifyGroup(g, {0, 1});
  auto sig = *classifyGroup(g, {2, 3});
  std::string why;
  auto cpu = kernelsFor(g, {0, 1}, relu, target("x86-64"), &why);
  EXPECT_NE(std::find(cpu.begin(), cpu.end(), *kernelByName("onednn.matmul")), cpu.end());
  EXPECT_EQ(std::find(cpu.begin(), cpu.end(), *kernelByName("openblas.sgemm")), cpu.end());  // no epilogue
  auto gpu = kernelsFor(g, {2, 3}, sig, target("h200"), &why);
  EXPECT_EQ(std::find(gpu.begin(), gpu.end(), *kernelByName("cublaslt.matmul")), gpu.end());  // bias/relu/gelu only
  EXPECT_NE(std::find(gpu.begin(), gpu.end(), *kernelByName("nvrtc.gemm_small")), gpu.end());
  // cuBLAS takes no C of the Gemm's own (fc1's bias): not offered for it,
  // offered for fc2 (no C) alone.
  const KernelId cublas = *kernelByName("cublas.sgemm");
  auto fc1 = kernelsFor(g, {0}, *classifyGroup(g, {0}), target("h200"), &why);
  EXPECT_EQ(std::find(fc1.begin(), fc1.end(), cublas), fc1.end());
  EXPECT_NE(std::find(fc1.begin(), fc1.end(), *kernelByName("cublaslt.matmul")), fc1.end());
  auto fc2 = kernelsFor(g, {2}, *classifyGroup(g, {2}), target("h200"), &why);
  EXPECT_NE(std::find(fc2.begin(), fc2.end(), cublas), fc2.end());
}

TEST(MirVerify, AcceptsAGoodPlanAndNamesTheNodeOfABadOne) {
  Graph g = parse(kMlp);
  Target cpu = target("x86-64");
  g.mutableNodes()[0].mir.group = g.mutableNodes()[1].mir.group = 0;
  g.mutableNodes()[0].mir.kernel = g.mutableNodes()[1].mir.kernel = *kernelByName("onednn.matmul");
  EXPECT_TRUE(verifyPlan(g, cpu).isOk()) << verifyPlan(g, cpu).message();
  Graph wrongBackend = g;
  wrongBackend.mutableNodes()[0].mir.kernel = wrongBackend.mutableNodes()[1].mir.kernel = *kernelByName("cublaslt.matmul");
  Status s = verifyPlan(wrongBackend, cpu);
  EXPECT_NE(s.message().find("not a cpu kernel"), std::string::npos) << s.message();
  Graph tf32 = g;
  tf32.mutableNodes()[2].mir.math = Precision::kTF32;
  s = verifyPlan(tf32, cpu);
  EXPECT_NE(s.message().find("'fc2'"), std::string::npos) << s.message();
  Graph stream = g;
  stream.mutableNodes()[3].mir.stream = 5;
  EXPECT_FALSE(verifyPlan(stream, cpu).isOk());
}

TEST(MirSchedule, RefusesGroupsThatDependOnEachOtherInACycle) {
  // a -> c, b -> d, a -> d, b -> c: groups {a, d} and {b, c} are each convex
  // and connected, yet each needs the other's output.
  Graph g;
  ValueId x = g.addInput("x", {DType::kF32, {kBatch, 4}});
  ValueId a = *g.add(OpKind::kRelu, {x}, {}, "a");
  ValueId b = *g.add(OpKind::kSigmoid, {x}, {}, "b");
  ValueId c = *g.add(OpKind::kAdd, {a, b}, {}, "c");
  ValueId d = *g.add(OpKind::kMul, {a, b}, {}, "d");
  g.addOutput(c, "c");
  g.addOutput(d, "d");
  std::vector<int32_t> labels = {0, 1, 1, 0};
  auto s = scheduleKernels(g, &labels);
  ASSERT_FALSE(s.isOk());
  EXPECT_NE(s.status().message().find("cycle"), std::string::npos);
  std::vector<int32_t> fine = {0, -1, 0, -1};
  auto ok = scheduleKernels(g, &fine);
  ASSERT_TRUE(ok.isOk()) << ok.status().message();
  EXPECT_EQ(ok->size(), 3u);
}

}  // namespace
}  // namespace cagr
