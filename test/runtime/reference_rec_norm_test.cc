// Reference kernels of reductions, normalisations and the recommendation ops
// (EmbeddingBag, Interaction, FM, CIN) against their definitions.
#include <gtest/gtest.h>

#include <cmath>

#include "runtime/ref_test_util.h"

namespace cagr {
namespace {

using namespace reftest;

Attrs reduceAttrs(std::vector<int64_t> axes, int64_t keep) {
  Attrs a;
  a.set("axes", std::move(axes));
  a.set("keepdims", keep);
  return a;
}

TEST(RefReduce, SumMeanMaxOverAxes) {
  Tensor x = iota({2, 3, 2});
  expectClose(run1(OpKind::kReduceSum, {x}, reduceAttrs({1}, 1)), f32({2, 1, 2}, {6, 9, 24, 27}));
  expectClose(run1(OpKind::kReduceSum, {x}, reduceAttrs({-2}, 0)), f32({2, 2}, {6, 9, 24, 27}));
  expectClose(run1(OpKind::kReduceMean, {x}, reduceAttrs({0, 2}, 0)), f32({3}, {3.5, 5.5, 7.5}));
  expectClose(run1(OpKind::kReduceMax, {x}, reduceAttrs({}, 1)), f32({1, 1, 1}, {11}));
  expectClose(run1(OpKind::kReduceMax, {f32({2, 2}, {-3, -1, -7, -9})}, reduceAttrs({1}, 0)), f32({2}, {-1, -7}));
  Tensor s = run1(OpKind::kReduceSum, {i64({2, 2}, {1, 2, 3, 4})}, reduceAttrs({0}, 0));
  EXPECT_EQ(s.data<int64_t>()[0], 4);
  EXPECT_EQ(s.data<int64_t>()[1], 6);
}

TEST(RefNorm, BatchNormPerChannel) {
  Tensor x = randomF32({2, 3, 2}, 1);
  Tensor scale = f32({3}, {1, 2, 0.5}), bias = f32({3}, {0, 1, -1});
  Tensor mean = f32({3}, {0.1, -0.2, 0.3}), var = f32({3}, {1, 0.25, 4});
  Tensor want(DType::kF32, {2, 3, 2});
  for (int64_t i = 0; i < 12; ++i) {
    int64_t c = (i / 2) % 3;
    want.setF64(i, (at(x, i) - at(mean, c)) / std::sqrt(at(var, c) + 1e-3) * at(scale, c) + at(bias, c));
  }
  expectClose(run1(OpKind::kBatchNorm, {x, scale, bias, mean, var}, attrs("epsilon", 1e-3)), want);
}

TEST(RefNorm, LayerNormOverTrailingAxes) {
  Tensor x = f32({2, 3}, {1, 2, 3, -1, 0, 5});
  Tensor scale = f32({3}, {1, 2, 3}), bias = f32({3}, {0, 0.5, -0.5});
  Tensor want(DType::kF32, {2, 3});
  for (int64_t r = 0; r < 2; ++r) {
    double m = (at(x, r * 3) + at(x, r * 3 + 1) + at(x, r * 3 + 2)) / 3, v = 0;
    for (int64_t j = 0; j < 3; ++j) v += (at(x, r * 3 + j) - m) * (at(x, r * 3 + j) - m) / 3;
    for (int64_t j = 0; j < 3; ++j) {
      want.setF64(r * 3 + j, (at(x, r * 3 + j) - m) / std::sqrt(v + 1e-5) * at(scale, j) + at(bias, j));
    }
  }
  expectClose(run1(OpKind::kLayerNorm, {x, scale, bias}), want);
  // axis = 1 on [2,2,3] normalises 6 values; a [3] scale broadcasts over them.
  Tensor x3 = randomF32({2, 2, 3}, 2);
  Tensor y = run1(OpKind::kLayerNorm, {x3, f32({3}, {1, 1, 1})}, attrs("axis", int64_t{1}));
  for (int64_t b = 0; b < 2; ++b) {
    double s = 0, sq = 0;
    for (int64_t i = 0; i < 6; ++i) {
      s += at(y, b * 6 + i);
      sq += at(y, b * 6 + i) * at(y, b * 6 + i);
    }
    EXPECT_NEAR(s / 6, 0, 1e-6);
    EXPECT_NEAR(sq / 6, 1, 1e-3);  // variance 1 up to epsilon
  }
}

TEST(RefNorm, SoftmaxRowsSumToOneAndStayStable) {
  Tensor x = f32({2, 3}, {1, 2, 3, 1000, 1001, 1002});
  Tensor y = run1(OpKind::kSoftmax, {x});
  double e1 = std::exp(-2.0), e2 = std::exp(-1.0), z = e1 + e2 + 1;
  expectClose(y, f32({2, 3}, {e1 / z, e2 / z, 1 / z, e1 / z, e2 / z, 1 / z}), 1e-6);
  for (int64_t r = 0; r < 2; ++r) EXPECT_NEAR(at(y, r * 3) + at(y, r * 3 + 1) + at(y, r * 3 + 2), 1.0, 1e-6);
  // axis = 0: columns sum to one.
  Tensor c = run1(OpKind::kSoftmax, {x}, attrs("axis", int64_t{0}));
  for (int64_t j = 0; j < 3; ++j) {
    EXPECT_NEAR(at(c, j) + at(c, 3 + j), 1.0, 1e-6);
    EXPECT_NEAR(at(c, 3 + j), 1.0, 1e-6);
  }
}

// ---- EmbeddingBag: table row r is [r, 10 r] ----
Tensor table() { return f32({5, 2}, {0, 0, 1, 10, 2, 20, 3, 30, 4, 40}); }

TEST(RefEmbeddingBag, OffsetsSumMeanMaxWithAnEmptyBag) {
  Tensor idx = i64({5}, {0, 2, 4, 1, 3});
  Tensor off = i64({3}, {0, 2, 2});  // bags {0,2}, {}, {4,1,3}
  expectClose(run1(OpKind::kEmbeddingBag, {table(), idx, off}), f32({3, 2}, {2, 20, 0, 0, 8, 80}));
  expectClose(run1(OpKind::kEmbeddingBag, {table(), idx, off}, attrs("mode", std::string("mean"))),
              f32({3, 2}, {1, 10, 0, 0, 8.0 / 3, 80.0 / 3}));
  expectClose(run1(OpKind::kEmbeddingBag, {table(), idx, off}, attrs("mode", std::string("max"))),
              f32({3, 2}, {2, 20, 0, 0, 4, 40}));
  // i32 ids and offsets work the same.
  expectClose(run1(OpKind::kEmbeddingBag, {table(), i32({5}, {0, 2, 4, 1, 3}), i32({3}, {0, 2, 2})}),
              f32({3, 2}, {2, 20, 0, 0, 8, 80}));
}

TEST(RefEmbeddingBag, IncludeLastOffsetAndNonZeroFirstOffset) {
  Tensor idx = i64({5}, {0, 2, 4, 1, 3});
  Attrs last = attrs("include_last_offset", int64_t{1});
  expectClose(run1(OpKind::kEmbeddingBag, {table(), idx, i64({4}, {0, 2, 2, 5})}, last),
              f32({3, 2}, {2, 20, 0, 0, 8, 80}));
  expectClose(run1(OpKind::kEmbeddingBag, {table(), idx, i64({4}, {0, 2, 2, 4})}, last),
              f32({3, 2}, {2, 20, 0, 0, 5, 50}));  // id 3 after the last offset is unused
  expectClose(run1(OpKind::kEmbeddingBag, {table(), idx, i64({3}, {1, 2, 2})}),
              f32({3, 2}, {2, 20, 0, 0, 8, 80}));  // id 0 before offsets[0] is unused
}

TEST(RefEmbeddingBag, FixedPoolingAndOneHot) {
  expectClose(run1(OpKind::kEmbeddingBag, {table(), i64({3, 2}, {0, 1, 2, 3, 4, 4})}),
              f32({3, 2}, {1, 10, 5, 50, 8, 80}));
  expectClose(
      run1(OpKind::kEmbeddingBag, {table(), i64({3, 2}, {0, 1, 2, 3, 4, 4})}, attrs("mode", std::string("mean"))),
      f32({3, 2}, {0.5, 5, 2.5, 25, 4, 40}));
  expectClose(run1(OpKind::kEmbeddingBag, {table(), i64({2, 1}, {3, 1})}), f32({2, 2}, {3, 30, 1, 10}));
}

TEST(RefEmbeddingBag, PerSampleWeightsScaleRowsBeforeSumming) {
  Tensor idx = i64({5}, {0, 2, 4, 1, 3});
  Tensor w = f32({5}, {1, 0.5, 2, -1, 1});
  // bag0 = row0 + 0.5 row2; bag2 = 2 row4 - row1 + row3.
  expectClose(run1(OpKind::kEmbeddingBag, {table(), idx, i64({3}, {0, 2, 2}), w}), f32({3, 2}, {1, 10, 0, 0, 10, 100}));
  // Fixed pooling with weights; the offsets slot is absent.
  expectClose(run1(OpKind::kEmbeddingBag, {table(), i64({1, 2}, {1, 2}), std::nullopt, f32({1, 2}, {3, -1})}),
              f32({1, 2}, {1, 10}));
}

TEST(RefEmbeddingBag, BadIdsAndOffsetsAreNamed) {
  Tensor off = i64({2}, {0, 1});
  expectError(runOp(OpKind::kEmbeddingBag, {table(), i64({3}, {0, 5, 1}), off}),
              {"indices[1] = 5", "bag 1", "[0, 4]", "5 rows"});
  expectError(runOp(OpKind::kEmbeddingBag, {table(), i64({2, 1}, {-1, 0})}), {"indices[0] = -1", "bag 0"});
  expectError(runOp(OpKind::kEmbeddingBag, {table(), i64({3}, {0, 1, 2}), i64({3}, {0, 2, 1})}),
              {"offsets[2] = 1", "non-decreasing"});
  expectError(runOp(OpKind::kEmbeddingBag, {table(), i64({3}, {0, 1, 2}), i64({2}, {0, 4})}), {"offsets[1] = 4", "3"});
  expectError(runOp(OpKind::kEmbeddingBag, {table(), i64({3}, {0, 1, 2}), i64({2}, {-1, 1})}), {"offsets[0] = -1"});
}

// ---- Interaction, FM, CIN ----
double dotAt(const Tensor& x, int64_t b, int64_t i, int64_t j, int64_t f, int64_t d) {
  double s = 0;
  for (int64_t k = 0; k < d; ++k) s += at(x, (b * f + i) * d + k) * at(x, (b * f + j) * d + k);
  return s;
}

TEST(RefRec, InteractionIsLowerTriangleDotsInDlrmOrder) {
  Tensor x = randomF32({2, 4, 3}, 5);
  std::vector<double> strict, self;
  for (int64_t b = 0; b < 2; ++b) {
    for (int64_t i = 0; i < 4; ++i) {
      for (int64_t j = 0; j <= i; ++j) {
        if (j < i) strict.push_back(dotAt(x, b, i, j, 4, 3));
        self.push_back(dotAt(x, b, i, j, 4, 3));
      }
    }
  }
  expectClose(run1(OpKind::kInteraction, {x}), f32({2, 6}, strict));
  expectClose(run1(OpKind::kInteraction, {x}, attrs("self_interaction", int64_t{1})), f32({2, 10}, self));
  // By hand: fields e0, e1, e2 -> [e1.e0, e2.e0, e2.e1].
  Tensor h = f32({1, 3, 2}, {1, 0, 0, 2, 3, 4});
  expectClose(run1(OpKind::kInteraction, {h}), f32({1, 3}, {0, 3, 8}));
}

TEST(RefRec, FmMatchesTheFormula) {
  Tensor x = randomF32({2, 4, 3}, 6);
  std::vector<double> perDim, total;
  for (int64_t b = 0; b < 2; ++b) {
    double t = 0;
    for (int64_t d = 0; d < 3; ++d) {
      double s = 0, q = 0;
      for (int64_t f = 0; f < 4; ++f) {
        s += at(x, (b * 4 + f) * 3 + d);
        q += at(x, (b * 4 + f) * 3 + d) * at(x, (b * 4 + f) * 3 + d);
      }
      perDim.push_back(0.5 * (s * s - q));
      t += 0.5 * (s * s - q);
    }
    total.push_back(t);
  }
  expectClose(run1(OpKind::kFM, {x}), f32({2, 1}, total));
  expectClose(run1(OpKind::kFM, {x}, attrs("reduce", int64_t{0})), f32({2, 3}, perDim));
  // FM equals the sum of pairwise dot products (the interaction it models).
  Tensor pairs = run1(OpKind::kInteraction, {x});
  for (int64_t b = 0; b < 2; ++b) {
    double s = 0;
    for (int64_t p = 0; p < 6; ++p) s += at(pairs, b * 6 + p);
    EXPECT_NEAR(s, total[static_cast<size_t>(b)], 1e-5);
  }
}

TEST(RefRec, CinMatchesItsDefinition) {
  Tensor xk = randomF32({2, 3, 4}, 7), x0 = randomF32({2, 2, 4}, 8), w = randomF32({5, 6}, 9),
         bias = randomF32({5}, 10);
  Tensor want(DType::kF32, {2, 5, 4}), wantNoBias(DType::kF32, {2, 5, 4});
  for (int64_t b = 0; b < 2; ++b) {
    for (int64_t o = 0; o < 5; ++o) {
      for (int64_t d = 0; d < 4; ++d) {
        double s = 0;
        for (int64_t h = 0; h < 3; ++h) {
          for (int64_t f = 0; f < 2; ++f)
            s += at(w, o * 6 + h * 2 + f) * at(xk, (b * 3 + h) * 4 + d) * at(x0, (b * 2 + f) * 4 + d);
        }
        wantNoBias.setF64((b * 5 + o) * 4 + d, s);
        want.setF64((b * 5 + o) * 4 + d, s + at(bias, o));
      }
    }
  }
  expectClose(run1(OpKind::kCIN, {xk, x0, w, bias}), want);
  expectClose(run1(OpKind::kCIN, {xk, x0, w}), wantNoBias);
}

}  // namespace
}  // namespace cagr
