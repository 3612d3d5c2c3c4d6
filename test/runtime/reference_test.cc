// Reference executor: input checking, symbolic batch, node error context,
// intermediate freeing and compareTensors.
#include <gtest/gtest.h>

#include "runtime/ref_test_util.h"

namespace cagr {
namespace {

using namespace reftest;

// dense [N,4] -> Gemm(4->3, transB) -> Relu -> Gemm(3->2) -> Sigmoid.
struct Mlp {
  Graph g;
  Tensor w1 = randomF32({3, 4}, 1), b1 = randomF32({3}, 2), w2 = randomF32({3, 2}, 3), b2 = randomF32({1, 2}, 4);

  Mlp() {
    ValueId x = g.addInput("dense", {DType::kF32, {kBatch, 4}});
    ValueId h = *g.add(OpKind::kGemm, {x, g.addConstant("w1", w1), g.addConstant("b1", b1)},
                       attrs("transB", int64_t{1}), "fc1");
    ValueId r = *g.add(OpKind::kRelu, {h}, {}, "relu1");
    ValueId o = *g.add(OpKind::kGemm, {r, g.addConstant("w2", w2), g.addConstant("b2", b2)}, {}, "fc2");
    g.addOutput(*g.add(OpKind::kSigmoid, {o}, {}, "prob"), "prob");
    g.addOutput(r, "hidden");
  }

  // The same computation written out by hand.
  std::pair<Tensor, Tensor> expected(const Tensor& x) const {
    int64_t n = x.dim(0);
    Tensor hidden(DType::kF32, {n, 3}), prob(DType::kF32, {n, 2});
    for (int64_t b = 0; b < n; ++b) {
      for (int64_t j = 0; j < 3; ++j) {
        double s = at(b1, j);
        for (int64_t k = 0; k < 4; ++k) s += at(x, b * 4 + k) * at(w1, j * 4 + k);
        hidden.setF64(b * 3 + j, std::max(s, 0.0));
      }
      for (int64_t j = 0; j < 2; ++j) {
        double s = at(b2, j);
        for (int64_t k = 0; k < 3; ++k) s += at(hidden, b * 3 + k) * at(w2, k * 2 + j);
        prob.setF64(b * 2 + j, 1.0 / (1.0 + std::exp(-s)));
      }
    }
    return {prob, hidden};
  }
};

TEST(Reference, MlpWithSymbolicBatchRunsAtTwoBatchSizes) {
  Mlp m;
  for (int64_t batch : {1, 7}) {
    Tensor x = randomF32({batch, 4}, static_cast<unsigned>(10 + batch));
    auto r = runReference(m.g, {{"dense", x}});
    ASSERT_TRUE(r.isOk()) << r.status().message();
    ASSERT_EQ(r->size(), 2u);
    auto [prob, hidden] = m.expected(x);
    expectClose((*r)[0], prob);
    expectClose((*r)[1], hidden);
  }
}

TEST(Reference, MissingInputNamesTheKeyAndTheExpectedOnes) {
  Graph g;
  ValueId a = g.addInput("dense", {DType::kF32, {kBatch, 4}});
  ValueId b = g.addInput("sparse", {DType::kI64, {kBatch, 2}});
  g.addOutput(a);
  g.addOutput(b);
  auto r = runReference(g, {{"dense", randomF32({2, 4}, 0)}});
  expectError(r, {"missing input 'sparse'", "'dense' f32[N,4]", "'sparse' i64[N,2]"});
  EXPECT_EQ(r.status().code(), ErrorCode::kNotFound);
}

TEST(Reference, UnknownAndDuplicateInputKeysAreRejected) {
  Graph g;
  g.addOutput(g.addInput("x", {DType::kF32, {2}}));
  expectError(runReference(g, {{"x", f32({2}, {1, 2})}, {"y", f32({2}, {1, 2})}}), {"unknown input 'y'", "'x'"});
  expectError(runReference(g, {{"x", f32({2}, {1, 2})}, {"x", f32({2}, {1, 2})}}), {"'x'", "twice"});
}

TEST(Reference, WrongDtypeNamesInputExpectedAndGot) {
  Graph g;
  g.addOutput(g.addInput("dense", {DType::kF32, {2}}));
  expectError(runReference(g, {{"dense", f64({2}, {1, 2})}}), {"'dense'", "f32", "f64"});
}

TEST(Reference, I32IsWidenedWhereI64IsDeclared) {
  Graph g;
  ValueId t = g.addConstant("table", f32({3, 2}, {0, 1, 10, 11, 20, 21}));
  ValueId ids = g.addInput("ids", {DType::kI64, {kBatch}});
  g.addOutput(*g.add(OpKind::kGather, {t, ids}));
  g.addOutput(ids);
  auto r = runReference(g, {{"ids", i32({2}, {2, 0})}});
  ASSERT_TRUE(r.isOk()) << r.status().message();
  expectClose((*r)[0], f32({2, 2}, {20, 21, 0, 1}));
  EXPECT_EQ((*r)[1].dtype(), DType::kI64);
  EXPECT_EQ((*r)[1].data<int64_t>()[0], 2);
  // ...but nothing else is converted: i64 where f32 is declared fails.
  Graph h;
  h.addOutput(h.addInput("x", {DType::kI32, {1}}));
  expectError(runReference(h, {{"x", i64({1}, {1})}}), {"'x'", "i32", "i64"});
}

TEST(Reference, WrongShapeNamesTheInput) {
  Mlp m;
  expectError(runReference(m.g, {{"dense", randomF32({2, 5}, 0)}}), {"'dense'", "dimension 1", "must be 4", "got 5"});
  expectError(runReference(m.g, {{"dense", randomF32({8}, 0)}}), {"'dense'", "rank"});
}

TEST(Reference, KernelErrorsNameTheNodeAndOp) {
  Graph g;
  ValueId t = g.addConstant("table", f32({4, 2}, {0, 1, 2, 3, 4, 5, 6, 7}));
  ValueId ids = g.addInput("ids", {DType::kI64, {kBatch, 1}});
  g.addOutput(*g.add(OpKind::kEmbeddingBag, {t, ids}, {}, "emb_user"));
  auto r = runReference(g, {{"ids", i64({3, 1}, {0, 4, 1})}});
  expectError(r, {"node 'emb_user' (EmbeddingBag)", "indices[1] = 4", "[0, 3]", "4 rows"});
}

TEST(Reference, InvalidGraphIsReportedNotRun) {
  Mlp m;
  std::swap(m.g.mutableNodes()[0], m.g.mutableNodes()[1]);  // breaks topological order
  expectError(runReference(m.g, {{"dense", randomF32({2, 4}, 0)}}), {"invalid graph"});
}

TEST(Reference, ConstantAndInputOutputsAreCopies) {
  Graph g;
  Tensor c = f32({2}, {1, 2});
  ValueId k = g.addConstant("k", c);
  g.addOutput(k);
  auto r = runReference(g, {});
  ASSERT_TRUE(r.isOk()) << r.status().message();
  (*r)[0].data<float>()[0] = 42;
  EXPECT_EQ(g.constant(k)->data<float>()[0], 1.f);
}

TEST(Reference, DiamondGraphKeepsValuesUntilTheirLastUse) {
  // x feeds three nodes; intermediates are freed only after their last use.
  Graph g;
  ValueId x = g.addInput("x", {DType::kF32, {kBatch, 2}});
  ValueId a = *g.add(OpKind::kExp, {x});
  ValueId b = *g.add(OpKind::kNeg, {x});
  ValueId c = *g.add(OpKind::kAdd, {a, b});
  ValueId d = *g.add(OpKind::kMul, {c, a});
  (void)g.add(OpKind::kTanh, {d});  // dead: computed and dropped
  g.addOutput(*g.add(OpKind::kSub, {d, x}));
  Tensor in = f32({1, 2}, {0.5, -1});
  auto r = runReference(g, {{"x", in}});
  ASSERT_TRUE(r.isOk()) << r.status().message();
  std::vector<double> want;
  for (double v : {0.5, -1.0}) want.push_back((std::exp(v) - v) * std::exp(v) - v);
  expectClose((*r)[0], f32({1, 2}, want));
}

TEST(Reference, SplitOutputsFeedLaterNodes) {
  Graph g;
  ValueId x = g.addInput("x", {DType::kF32, {kBatch, 5}});
  Attrs a;
  a.set("axis", int64_t{1});
  a.set("split", std::vector<int64_t>{2, 3});
  auto parts = g.addNode(OpKind::kSplit, {x}, a, "split", 2);
  ASSERT_TRUE(parts.isOk()) << parts.status().message();
  g.addOutput(*g.add(OpKind::kReduceSum, {(*parts)[1]}, attrs("axes", std::vector<int64_t>{1})));
  auto r = runReference(g, {{"x", f32({2, 5}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10})}});
  ASSERT_TRUE(r.isOk()) << r.status().message();
  expectClose((*r)[0], f32({2, 1}, {12, 27}));
}

TEST(CompareTensors, ReportsMaxErrorAndFirstMismatch) {
  auto c = compareTensors(f32({3}, {1, 2, 3}), f32({3}, {1, 2.5, 3}), 1e-3, 0);
  EXPECT_FALSE(c.close);
  EXPECT_DOUBLE_EQ(c.maxAbsError, 0.5);
  EXPECT_NE(c.message.find("index 1"), std::string::npos) << c.message;
  EXPECT_TRUE(compareTensors(f32({2}, {1, NAN}), f32({2}, {1.000001, NAN})).close);
  EXPECT_FALSE(compareTensors(f32({2}, {1, NAN}), f32({2}, {1, 2})).close);
  auto shape = compareTensors(f32({2}, {1, 2}), f32({1, 2}, {1, 2}));
  EXPECT_FALSE(shape.close);
  EXPECT_NE(shape.message.find("f32[1,2]"), std::string::npos) << shape.message;
  EXPECT_FALSE(compareTensors(f32({1}, {1}), f64({1}, {1})).close);
}

}  // namespace
}  // namespace cagr
