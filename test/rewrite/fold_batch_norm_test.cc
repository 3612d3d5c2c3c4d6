// fold_batch_norm: golden IR for Gemm (transB either way) and MatMul + bias
// followed by BatchNorm, the near misses, and the reference executor's
// outputs before and after folding (hand-written MLP; DLRM with a BatchNorm
// inserted, since no zoo model has one after a Gemm).
#include <algorithm>
#include <cmath>

#include "rewrite_test_util.h"

namespace cagr {
namespace {

using rwtest::candidatesOf;

const char* kBnParams = R"(
    %g = "cagr.constant"() {name = "bn.scale", value = dense<[1.5, -0.5, 2.0, 0.25]> : tensor<4xf32>} : () -> tensor<4xf32>
    %be = "cagr.constant"() {name = "bn.bias", value = dense<[0.1, 0.2, -0.3, 0.0]> : tensor<4xf32>} : () -> tensor<4xf32>
    %mu = "cagr.constant"() {name = "bn.mean", value = dense<[0.5, -1.0, 0.0, 2.0]> : tensor<4xf32>} : () -> tensor<4xf32>
    %va = "cagr.constant"() {name = "bn.var", value = dense<[1.0, 0.5, 4.0, 0.1]> : tensor<4xf32>} : () -> tensor<4xf32>)";

// One graph op around `body`; `args` are the block arguments with their names and dims.
std::string module(const std::string& args, const std::string& names, const std::string& dims, const std::string& body,
                   const std::string& ret) {
  return R"("builtin.module"() ({
  "cagr.graph"() ({
  ^bb0()" +
         args + "):" + body + "\n    " + ret + R"(
  }) {sym_name = "main", input_names = [)" +
         names + "], input_dims = [" + dims +
         R"(], output_names = ["out"], symbols = ["N"]} : () -> ()
}) : () -> ()
)";
}

// x [N,3] -> GEMM (3 -> 4) defining %y -> BatchNorm -> Relu, then `extra`.
std::string graph(const std::string& gemm, const std::string& extra = "",
                  const std::string& ret = R"("cagr.return"(%r) : (tensor<?x4xf32>) -> ())",
                  const std::string& mean = "%mu", const std::string& bnAttrs = "") {
  std::string bn =
      R"(
    %bn = "cagr.batch_norm"(%y, %g, %be, )" +
      mean + R"(, %va) {name = "bn", epsilon = 1.0e-3 : f64)" + bnAttrs +
      R"(} : (tensor<?x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
    %r = "cagr.relu"(%bn) {name = "act")" +
      bnAttrs + R"(} : (tensor<?x4xf32>) -> tensor<?x4xf32>)";
  std::string args = "%x: tensor<?x3xf32>", names = R"("x")", dims = R"("N,3")";
  if (mean != "%mu") {
    args += ", %m: tensor<4xf32>";
    names += R"(, "m")";
    dims += R"(, "4")";
  }
  return module(args, names, dims, kBnParams + gemm + bn + extra, ret);
}

const char* kGemmTransB = R"(
    %w = "cagr.constant"() {name = "fc.weight", value = dense<[[0.5, -1.0, 2.0], [1.0, 0.0, -0.5], [0.25, 0.75, 1.0], [-2.0, 1.0, 0.5]]> : tensor<4x3xf32>} : () -> tensor<4x3xf32>
    %b = "cagr.constant"() {name = "fc.bias", value = dense<[0.1, -0.2, 0.3, 0.4]> : tensor<4xf32>} : () -> tensor<4xf32>
    %y = "cagr.gemm"(%x, %w, %b) {name = "fc", transB = 1 : i64, alpha = 0.5 : f64, beta = 2.0 : f64} : (tensor<?x3xf32>, tensor<4x3xf32>, tensor<4xf32>) -> tensor<?x4xf32>)";

const char* kGemmPlain = R"(
    %w = "cagr.constant"() {name = "fc.weight", value = dense<[[0.5, -1.0, 2.0, 1.0], [0.0, -0.5, 0.25, 0.75], [1.0, -2.0, 1.0, 0.5]]> : tensor<3x4xf32>} : () -> tensor<3x4xf32>
    %y = "cagr.gemm"(%x, %w) {name = "fc"} : (tensor<?x3xf32>, tensor<3x4xf32>) -> tensor<?x4xf32>)";

const char* kMatMulAdd = R"(
    %w = "cagr.constant"() {name = "fc.weight", value = dense<[[0.5, -1.0, 2.0, 1.0], [0.0, -0.5, 0.25, 0.75], [1.0, -2.0, 1.0, 0.5]]> : tensor<3x4xf32>} : () -> tensor<3x4xf32>
    %b = "cagr.constant"() {name = "fc.bias", value = dense<[[0.1, -0.2, 0.3, 0.4]]> : tensor<1x4xf32>} : () -> tensor<1x4xf32>
    %mm = "cagr.matmul"(%x, %w) {name = "fc"} : (tensor<?x3xf32>, tensor<3x4xf32>) -> tensor<?x4xf32>
    %y = "cagr.add"(%b, %mm) {name = "fc.add"} : (tensor<1x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>)";

// Folds every BatchNorm it can; returns how many.
int foldAll(Graph& g, const Target& t) {
  int n = 0;
  for (auto cs = candidatesOf(g, t, ActionKind::kFoldBatchNorm); !cs.empty() && n < 100;
       cs = candidatesOf(g, t, ActionKind::kFoldBatchNorm), ++n) {
    g = rwtest::applied(g, t, cs.front().action);
  }
  return n;
}

size_t countOp(const Graph& g, OpKind k) {
  return static_cast<size_t>(
      std::count_if(g.nodes().begin(), g.nodes().end(), [&](const Node& n) { return n.op == k; }));
}

// Golden + numerics for one GEMM form.
void checkFolds(const char* gemm, const std::string& golden) {
  Target cpu = rwtest::target("x86-64");
  Graph before = rwtest::parse(graph(gemm));
  Graph g = before;
  EXPECT_EQ(foldAll(g, cpu), 1);
  EXPECT_EQ(countOp(g, OpKind::kBatchNorm), 0u);
  EXPECT_EQ(countOp(g, OpKind::kGemm), 1u);
  EXPECT_EQ(g.nodes().size(), 2u);  // Gemm + Relu
  EXPECT_EQ(g.value(g.outputs()[0]).name, "out");
  rwtest::expectGolden(g, golden);
  rwtest::expectSameOutputs(before, g, rwtest::randomInputs(before, 6, 1));
}

TEST(FoldBatchNormTest, GemmTransBWithAlphaBeta) {
  checkFolds(kGemmTransB, "fold_batch_norm_gemm_transb.mlir");
}
TEST(FoldBatchNormTest, GemmWithoutBias) {
  checkFolds(kGemmPlain, "fold_batch_norm_gemm.mlir");
}
TEST(FoldBatchNormTest, MatMulPlusBias) {
  checkFolds(kMatMulAdd, "fold_batch_norm_matmul_add.mlir");
}

TEST(FoldBatchNormTest, KeepsFusionAndOutputName) {
  // Gemm + BatchNorm + Relu fused on the GPU: the folded Gemm and the Relu stay one group.
  Target gpu = rwtest::target("h200");
  std::string text =
      graph(kGemmTransB, "", R"("cagr.return"(%r) : (tensor<?x4xf32>) -> ())", "%mu", ", cagr.group = 0 : i64");
  text.replace(text.find(R"({name = "fc",)"), 13, R"({name = "fc", cagr.group = 0 : i64,)");
  Graph before = rwtest::parse(text);
  ASSERT_EQ(kernelGroups(before).size(), 1u);
  Graph g = before;
  EXPECT_EQ(foldAll(g, gpu), 1);
  ASSERT_EQ(g.nodes().size(), 2u);
  EXPECT_EQ(kernelGroups(g).size(), 1u);
  rwtest::expectSameOutputs(before, g, rwtest::randomInputs(before, 3, 1));
  // The BatchNorm's output is the graph output: its name survives the fold.
  Graph out = rwtest::parse(graph(kGemmTransB, "", R"("cagr.return"(%bn) : (tensor<?x4xf32>) -> ())"));
  Graph h = out;
  EXPECT_EQ(foldAll(h, gpu), 1);
  EXPECT_EQ(h.value(h.outputs()[0]).name, "out");
  EXPECT_EQ(h.value(h.outputs()[0]).producer, 0);
  rwtest::expectSameOutputs(out, h, rwtest::randomInputs(out, 3, 1));
}

std::string nearMiss(const std::string& text) {
  Graph g = rwtest::parse(text);
  auto cs = candidatesOf(g, rwtest::target("x86-64"), ActionKind::kFoldBatchNorm, true);
  if (cs.size() != 1) return "<" + std::to_string(cs.size()) + " candidates>";
  return cs[0].legal() ? "<legal>" : cs[0].reason;
}

TEST(FoldBatchNormTest, MustNotFire) {
  auto has = [](const std::string& s, const std::string& sub) { return s.find(sub) != std::string::npos; };
  std::string twice = nearMiss(graph(kGemmTransB, R"(
    %z = "cagr.add"(%r, %y) {name = "z"} : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>)",
                                     R"("cagr.return"(%z) : (tensor<?x4xf32>) -> ())"));
  EXPECT_TRUE(has(twice, "the output of 'fc' (Gemm) is also used by 'z' (Add)")) << twice;

  std::string mean = nearMiss(graph(kGemmTransB, "", R"("cagr.return"(%r) : (tensor<?x4xf32>) -> ())", "%m"));
  EXPECT_TRUE(has(mean, "'bn' (BatchNorm)'s mean 'm' is not a constant")) << mean;

  std::string grouped = nearMiss(
      graph(kGemmTransB, "", R"("cagr.return"(%r) : (tensor<?x4xf32>) -> ())", "%mu", ", cagr.group = 0 : i64"));
  EXPECT_TRUE(has(grouped, "'bn' (BatchNorm) is in another fusion group than 'fc' (Gemm)")) << grouped;

  std::string weight = nearMiss(module("%x: tensor<?x3xf32>, %w: tensor<3x4xf32>", R"("x", "w")", R"("N,3", "3,4")",
                                       std::string(kBnParams) + R"(
    %y = "cagr.matmul"(%x, %w) {name = "fc"} : (tensor<?x3xf32>, tensor<3x4xf32>) -> tensor<?x4xf32>
    %bn = "cagr.batch_norm"(%y, %g, %be, %mu, %va) {name = "bn"} : (tensor<?x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<?x4xf32>)",
                                       R"("cagr.return"(%bn) : (tensor<?x4xf32>) -> ())"));
  EXPECT_TRUE(has(weight, "'fc' (MatMul)'s weight 'w' is not a constant")) << weight;

  std::string rows = nearMiss(module("%x: tensor<2x3xf32>", R"("x")", R"("2,3")", std::string(kBnParams) + R"(
    %w = "cagr.constant"() {elided, name = "fc.weight"} : () -> tensor<4x3xf32>
    %b = "cagr.constant"() {elided, name = "fc.bias"} : () -> tensor<2x4xf32>
    %y = "cagr.gemm"(%x, %w, %b) {name = "fc", transB = 1 : i64} : (tensor<2x3xf32>, tensor<4x3xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
    %bn = "cagr.batch_norm"(%y, %g, %be, %mu, %va) {name = "bn"} : (tensor<2x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4xf32>)",
                                     R"("cagr.return"(%bn) : (tensor<2x4xf32>) -> ())"));
  EXPECT_TRUE(has(rows, "'fc' (Gemm)'s bias f32[2,4] varies per row")) << rows;

  std::string rank3 = nearMiss(module("%x: tensor<?x2x3xf32>", R"("x")", R"("N,2,3")", R"(
    %w = "cagr.constant"() {elided, name = "w"} : () -> tensor<3x4xf32>
    %p = "cagr.constant"() {elided, name = "p"} : () -> tensor<2xf32>
    %y = "cagr.matmul"(%x, %w) {name = "fc"} : (tensor<?x2x3xf32>, tensor<3x4xf32>) -> tensor<?x2x4xf32>
    %bn = "cagr.batch_norm"(%y, %p, %p, %p, %p) {name = "bn"} : (tensor<?x2x4xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<?x2x4xf32>)",
                                      R"("cagr.return"(%bn) : (tensor<?x2x4xf32>) -> ())"));
  EXPECT_TRUE(has(rank3, "'bn' (BatchNorm) normalises axis 1 of a rank-3 tensor")) << rank3;

  std::string notGemm = nearMiss(module("%x: tensor<?x4xf32>", R"("x")", R"("N,4")", std::string(kBnParams) + R"(
    %y = "cagr.tanh"(%x) {name = "t"} : (tensor<?x4xf32>) -> tensor<?x4xf32>
    %bn = "cagr.batch_norm"(%y, %g, %be, %mu, %va) {name = "bn"} : (tensor<?x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<?x4xf32>)",
                                        R"("cagr.return"(%bn) : (tensor<?x4xf32>) -> ())"));
  EXPECT_TRUE(has(notGemm, "'bn' (BatchNorm) does not follow a Gemm or MatMul")) << notGemm;
}

// DLRM's first bottom Gemm gets a BatchNorm with made-up statistics.
Graph dlrmWithBatchNorm() {
  Graph g = rwtest::zoo("dlrm_criteo");
  const Node& fc = g.node(0);
  EXPECT_EQ(fc.op, OpKind::kGemm);
  ValueId y = fc.outputs[0];
  int64_t f = g.type(y).dims[1];
  std::vector<ValueId> params;
  for (int p = 0; p < 4; ++p) {
    Tensor t(DType::kF32, {f});
    for (int64_t i = 0; i < f; ++i)
      t.data<float>()[i] = static_cast<float>(p == 3 ? 0.5 + 0.01 * i : std::sin(p + 0.1 * i));
    params.push_back(g.addConstant("bn.p" + std::to_string(p), std::move(t)));
  }
  auto bn = g.add(OpKind::kBatchNorm, {y, params[0], params[1], params[2], params[3]}, {}, "bn");
  EXPECT_TRUE(bn.isOk());
  NodeId bnId = static_cast<NodeId>(g.nodes().size() - 1);
  for (Node& n : g.mutableNodes()) {
    if (&n != &g.mutableNodes()[static_cast<size_t>(bnId)]) std::replace(n.inputs.begin(), n.inputs.end(), y, *bn);
  }
  EXPECT_TRUE(g.topoSort().isOk());
  return g;
}

TEST(FoldBatchNormTest, DlrmMatchesReference) {
  Graph before = dlrmWithBatchNorm();
  Target cpu = rwtest::target("x86-64");
  Graph g = before;
  EXPECT_EQ(foldAll(g, cpu), 1);
  EXPECT_EQ(countOp(g, OpKind::kBatchNorm), 0u);
  EXPECT_EQ(g.nodes().size(), before.nodes().size() - 1);
  rwtest::expectSameOutputs(before, g, rwtest::zooInputs("dlrm_criteo"));
}

}  // namespace
}  // namespace cagr
