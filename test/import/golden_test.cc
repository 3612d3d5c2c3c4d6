// Golden IR text of imported zoo models (elided weights), and the recognisers
// on hand-built graphs: they fire on the exact pattern and must not fire on
// near misses.
#include <cstdlib>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "cagr/importer.h"
#include "cagr/text.h"
#include "common/golden.h"
#include "import/context.h"

namespace cagr {
namespace {

std::string src(const std::string& rel) { return std::string(CAGR_SOURCE_DIR) + "/" + rel; }

void expectGolden(const std::string& model, const std::string& golden) {
  auto g = importOnnx(src(model));
  ASSERT_TRUE(g.isOk()) << g.status().message();
  PrintOptions opts;
  opts.elideWeights = true;
  testing::expectGoldenText(printGraph(*g, opts), src("test/import/golden/" + golden));
}

TEST(ImportGolden, DeepFmDynamo) { expectGolden("zoo/onnx/deepfm.dynamo.onnx", "deepfm.dynamo.mlir"); }
TEST(ImportGolden, XDeepFmTorchScript) { expectGolden("zoo/onnx/xdeepfm.ts.onnx", "xdeepfm.ts.mlir"); }
TEST(ImportGolden, DlrmCriteoTorchScript) { expectGolden("zoo/onnx/dlrm_criteo.ts.onnx", "dlrm_criteo.ts.mlir"); }

TEST(ImportOptions, PatternsCanBeTurnedOff) {
  ImportOptions opts;
  opts.recognizePatterns = false;
  auto g = importOnnx(src("zoo/onnx/deepfm.ts.onnx"), opts);
  ASSERT_TRUE(g.isOk());
  for (const Node& n : g->nodes()) EXPECT_NE(n.op, OpKind::kFM);
}

Tensor constant(std::vector<int64_t> shape, float v) {
  Tensor t(DType::kF32, shape);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = v;
  return t;
}

Attrs ints(const char* k, std::vector<int64_t> v) {
  Attrs a;
  a.set(k, std::move(v));
  return a;
}

// T [N,4,8] -> MatMul(T, T^T) -> Flatten -> Gather(indices) -> [N,P].
int countInteractions(const std::vector<int64_t>& flatIndices) {
  Graph g;
  ValueId t = g.addInput("t", {DType::kF32, {kBatch, 4, 8}});
  ValueId tt = *g.add(OpKind::kTranspose, {t}, ints("perm", {0, 2, 1}));
  ValueId z = *g.add(OpKind::kMatMul, {t, tt}, {}, "bmm");
  ValueId flat = *g.add(OpKind::kReshape, {z}, ints("shape", {0, -1}));
  Tensor idx(DType::kI64, {static_cast<int64_t>(flatIndices.size())});
  for (size_t i = 0; i < flatIndices.size(); ++i) idx.data<int64_t>()[i] = flatIndices[i];
  Attrs axis1;
  axis1.set("axis", int64_t{1});
  g.addOutput(*g.add(OpKind::kGather, {flat, g.addConstant("idx", idx)}, axis1), "y");
  ImportReport report;
  EXPECT_TRUE(import::recognizeInteraction(g, report).isOk());
  int n = 0;
  for (const Node& node : g.nodes()) n += node.op == OpKind::kInteraction ? 1 : 0;
  return n;
}

TEST(InteractionPattern, FiresOnStrictLowerTriangleInDlrmOrder) {
  // Pairs (i, j) with i > j for F = 4, in DLRM order: (1,0) (2,0) (2,1) (3,0) (3,1) (3,2).
  EXPECT_EQ(countInteractions({4, 8, 9, 12, 13, 14}), 1);
}

TEST(InteractionPattern, FiresOnTheMirroredUpperTriangle) {
  // T T^T is symmetric: Z[j,i] in the same pair order is the same function.
  EXPECT_EQ(countInteractions({1, 2, 6, 3, 7, 11}), 1);
}

TEST(InteractionPattern, DoesNotFireOnOtherOrderOrDiagonal) {
  EXPECT_EQ(countInteractions({8, 4, 9, 12, 13, 14}), 0);  // lower triangle, pairs out of order
  EXPECT_EQ(countInteractions({0, 5, 10, 15, 4, 8}), 0);   // diagonal mixed in
}

// x [N,5,4] -> 0.5 * sum_d((sum_f x)^2 `op` sum_f x^2).
int countFm(OpKind combine) {
  Graph g;
  ValueId x = g.addInput("x", {DType::kF32, {kBatch, 5, 4}});
  Attrs f = ints("axes", {1});
  ValueId s = *g.add(OpKind::kReduceSum, {x}, f);
  ValueId s2 = *g.add(OpKind::kMul, {s, s});
  ValueId q = *g.add(OpKind::kReduceSum, {*g.add(OpKind::kMul, {x, x})}, f);
  ValueId d = *g.add(combine, {s2, q});
  Attrs r = ints("axes", {2});
  r.set("keepdims", int64_t{0});
  ValueId red = *g.add(OpKind::kReduceSum, {d}, r);
  g.addOutput(*g.add(OpKind::kMul, {red, g.addConstant("half", constant({}, 0.5f))}), "y");
  ImportReport report;
  EXPECT_TRUE(import::recognizeFM(g, report).isOk());
  int n = 0;
  for (const Node& node : g.nodes()) n += node.op == OpKind::kFM ? 1 : 0;
  return n;
}

TEST(FmPattern, FiresOnSquareOfSumMinusSumOfSquares) { EXPECT_EQ(countFm(OpKind::kSub), 1); }
TEST(FmPattern, DoesNotFireOnAPlusVariant) { EXPECT_EQ(countFm(OpKind::kAdd), 0); }

}  // namespace
}  // namespace cagr
