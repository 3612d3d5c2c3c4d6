// HIR construction, shape inference with a symbolic batch, verification and clone.
#include <gtest/gtest.h>

#include "cagr/graph.h"

namespace cagr {
namespace {

Tensor filled(std::vector<int64_t> shape, float v) {
  Tensor t(DType::kF32, std::move(shape));
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = v;
  return t;
}

TEST(Graph, MlpShapesFlowWithSymbolicBatch) {
  Graph g;
  ValueId x = g.addInput("dense", {DType::kF32, {kBatch, 13}});
  ValueId w = g.addConstant("w", filled({512, 13}, 0.1f));
  ValueId b = g.addConstant("b", filled({512}, 0.0f));
  Attrs a;
  a.set("transB", int64_t{1});
  auto h = g.add(OpKind::kGemm, {x, w, b}, a, "fc1");
  ASSERT_TRUE(h.isOk()) << h.status().message();
  auto r = g.add(OpKind::kRelu, {*h}, {}, "relu1");
  ASSERT_TRUE(r.isOk());
  g.addOutput(*r, "y");
  EXPECT_EQ(g.type(*r).dims, (std::vector<Dim>{kBatch, 512}));
  EXPECT_EQ(g.typeString(g.type(*r)), "f32[N,512]");
  EXPECT_TRUE(g.verify().isOk());
}

TEST(Graph, GemmMismatchNamesTheNode) {
  Graph g;
  ValueId x = g.addInput("x", {DType::kF32, {kBatch, 13}});
  ValueId w = g.addConstant("w", filled({512, 14}, 0.1f));
  Attrs a;
  a.set("transB", int64_t{1});
  auto h = g.add(OpKind::kGemm, {x, w}, a, "fc1");
  ASSERT_FALSE(h.isOk());
  EXPECT_NE(h.status().message().find("node 'fc1' (Gemm)"), std::string::npos) << h.status().message();
}

TEST(Graph, ReshapeInfersSymbolicMultiples) {
  Graph g;
  ValueId x = g.addInput("x", {DType::kF32, {kBatch, 26, 16}});
  Attrs a;
  a.set("shape", std::vector<int64_t>{-1, 16});
  auto y = g.add(OpKind::kReshape, {x}, a);
  ASSERT_TRUE(y.isOk()) << y.status().message();
  EXPECT_EQ(g.type(*y).dims, (std::vector<Dim>{symDim(kBatchSymbol, 26), 16}));
  EXPECT_EQ(g.dimString(g.type(*y).dims[0]), "26N");
  Attrs back;
  back.set("shape", std::vector<int64_t>{-1, 26, 16});
  auto z = g.add(OpKind::kReshape, {*y}, back);
  ASSERT_TRUE(z.isOk());
  EXPECT_EQ(g.type(*z).dims, (std::vector<Dim>{kBatch, 26, 16}));
}

TEST(Graph, UnknownAttributeAndMissingRequiredAreRejected) {
  Graph g;
  ValueId x = g.addInput("x", {DType::kF32, {kBatch, 4}});
  Attrs bad;
  bad.set("axs", std::vector<int64_t>{1});
  EXPECT_FALSE(g.add(OpKind::kReduceSum, {x}, bad).isOk());
  EXPECT_FALSE(g.add(OpKind::kConcat, {x, x}).isOk());  // axis is required
}

TEST(Graph, RecOpShapes) {
  Graph g;
  ValueId e = g.addInput("e", {DType::kF32, {kBatch, 27, 16}});
  EXPECT_EQ(g.type(*g.add(OpKind::kInteraction, {e})).dims, (std::vector<Dim>{kBatch, 351}));
  EXPECT_EQ(g.type(*g.add(OpKind::kFM, {e})).dims, (std::vector<Dim>{kBatch, 1}));
  ValueId w = g.addConstant("w", filled({200, 27 * 27}, 0.f));
  EXPECT_EQ(g.type(*g.add(OpKind::kCIN, {e, e, w})).dims, (std::vector<Dim>{kBatch, 200, 16}));
  ValueId table = g.addConstant("t", filled({1000, 16}, 0.f));
  int l = g.addSymbol("L");
  ValueId idx = g.addInput("idx", {DType::kI64, {symDim(l)}});
  ValueId off = g.addInput("off", {DType::kI64, {kBatch}});
  auto bag = g.add(OpKind::kEmbeddingBag, {table, idx, off});
  ASSERT_TRUE(bag.isOk()) << bag.status().message();
  EXPECT_EQ(g.type(*bag).dims, (std::vector<Dim>{kBatch, 16}));
}

TEST(Graph, CloneSharesWeightsAndIsIndependent) {
  Graph g;
  ValueId x = g.addInput("x", {DType::kF32, {kBatch, 4}});
  ValueId w = g.addConstant("w", filled({4, 4}, 1.f));
  g.addOutput(*g.add(OpKind::kMatMul, {x, w}));
  Graph c = g;
  EXPECT_EQ(c.constant(w), g.constant(w));  // same storage
  c.addOutput(*c.add(OpKind::kRelu, {c.outputs()[0]}));
  EXPECT_EQ(g.nodes().size(), 1u);
  EXPECT_EQ(c.nodes().size(), 2u);
}

TEST(Graph, DeadNodesAreErasedAndOrderRestored) {
  Graph g;
  ValueId x = g.addInput("x", {DType::kF32, {kBatch, 4}});
  ValueId a = *g.add(OpKind::kRelu, {x});
  (void)g.add(OpKind::kSigmoid, {x});  // dead
  g.addOutput(*g.add(OpKind::kTanh, {a}));
  g.eraseDeadNodes();
  EXPECT_EQ(g.nodes().size(), 2u);
  std::swap(g.mutableNodes()[0], g.mutableNodes()[1]);
  EXPECT_FALSE(g.verify().isOk());
  ASSERT_TRUE(g.topoSort().isOk());
  EXPECT_TRUE(g.verify().isOk());
}

TEST(Graph, BindSymbolsChecksInputShapes) {
  Graph g;
  g.addInput("dense", {DType::kF32, {kBatch, 13}});
  g.addInput("sparse", {DType::kI64, {kBatch, 26}});
  std::vector<std::vector<int64_t>> ok{{8, 13}, {8, 26}};
  auto b = g.bindSymbols(ok);
  ASSERT_TRUE(b.isOk());
  EXPECT_EQ(b->values[kBatchSymbol], 8);
  std::vector<std::vector<int64_t>> bad{{8, 13}, {9, 26}};
  auto e = g.bindSymbols(bad);
  ASSERT_FALSE(e.isOk());
  EXPECT_NE(e.status().message().find("'sparse'"), std::string::npos);
}

}  // namespace
}  // namespace cagr
