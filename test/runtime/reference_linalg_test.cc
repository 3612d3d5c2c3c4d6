// Reference kernels of linear algebra (MatMul, Gemm, Einsum, Conv1x1, SpMM)
// against hand-computed values and explicit loops.
#include <gtest/gtest.h>

#include "runtime/ref_test_util.h"

namespace cagr {
namespace {

using namespace reftest;

Tensor iota(std::vector<int64_t> shape, double start = 1) {
  Tensor t(DType::kF32, std::move(shape));
  for (int64_t i = 0; i < t.numel(); ++i) t.setF64(i, start + static_cast<double>(i));
  return t;
}

TEST(RefLinalg, MatMul2dByHand) {
  expectClose(run1(OpKind::kMatMul, {iota({2, 3}), iota({3, 2}, 7)}), f32({2, 2}, {58, 64, 139, 154}));
}

TEST(RefLinalg, MatMulPromotesVectors) {
  expectClose(run1(OpKind::kMatMul, {iota({3}), iota({3, 2}, 7)}), f32({2}, {58, 64}));
  expectClose(run1(OpKind::kMatMul, {iota({2, 3}), f32({3}, {1, 1, 1})}), f32({2}, {6, 15}));
  expectClose(run1(OpKind::kMatMul, {iota({3}), iota({3})}), f32({}, {14}));
}

TEST(RefLinalg, MatMulBroadcastsBatchDims) {
  // a [2,1,2,3] x b [3,3,2] -> [2,3,2,2]: out[i,j] = a[i,0] @ b[j].
  Tensor a = randomF32({2, 1, 2, 3}, 1), b = randomF32({3, 3, 2}, 2);
  Tensor want(DType::kF32, {2, 3, 2, 2});
  for (int64_t i = 0; i < 2; ++i) {
    for (int64_t j = 0; j < 3; ++j) {
      for (int64_t r = 0; r < 2; ++r) {
        for (int64_t c = 0; c < 2; ++c) {
          double s = 0;
          for (int64_t k = 0; k < 3; ++k) s += at(a, i * 6 + r * 3 + k) * at(b, j * 6 + k * 2 + c);
          want.setF64(((i * 3 + j) * 2 + r) * 2 + c, s);
        }
      }
    }
  }
  expectClose(run1(OpKind::kMatMul, {a, b}), want);
}

TEST(RefLinalg, GemmTransBAlphaBetaAndBiasBroadcast) {
  Tensor a = iota({2, 3});
  Tensor bt = randomF32({4, 3}, 3);  // B^T: B is [3,4]
  Tensor bias = f32({4}, {1, -1, 0.5, 2});
  Attrs at2;
  at2.set("transB", int64_t{1});
  at2.set("alpha", 2.0);
  at2.set("beta", 0.5);
  Tensor want(DType::kF32, {2, 4});
  for (int64_t i = 0; i < 2; ++i) {
    for (int64_t j = 0; j < 4; ++j) {
      double s = 0;
      for (int64_t k = 0; k < 3; ++k) s += at(a, i * 3 + k) * at(bt, j * 3 + k);
      want.setF64(i * 4 + j, 2 * s + 0.5 * at(bias, j));
    }
  }
  expectClose(run1(OpKind::kGemm, {a, bt, bias}, at2), want);
}

TEST(RefLinalg, GemmTransAWithColumnBiasAndWithoutBias) {
  Tensor at = iota({3, 2});  // A^T: A = [[1,3,5],[2,4,6]]
  Tensor b = iota({3, 2}, 7);
  Tensor col = f32({2, 1}, {100, 200});
  // A @ B = [[1*7+3*9+5*11, 1*8+3*10+5*12], [2*7+4*9+6*11, 2*8+4*10+6*12]] = [[89,98],[116,128]].
  expectClose(run1(OpKind::kGemm, {at, b, col}, attrs("transA", int64_t{1})), f32({2, 2}, {189, 198, 316, 328}));
  expectClose(run1(OpKind::kGemm, {at, b}, attrs("transA", int64_t{1})), f32({2, 2}, {89, 98, 116, 128}));
  expectClose(run1(OpKind::kGemm, {at, b, std::nullopt}, attrs("transA", int64_t{1})), f32({2, 2}, {89, 98, 116, 128}));
}

TEST(RefLinalg, EinsumBatchedDotsMatchMatMul) {
  Tensor x = randomF32({3, 4, 5}, 4), y = randomF32({3, 2, 5}, 5);
  Tensor viaEinsum = run1(OpKind::kEinsum, {x, y}, attrs("equation", std::string("bnd,bmd->bnm")));
  Tensor yT = run1(OpKind::kTranspose, {y}, attrs("perm", std::vector<int64_t>{0, 2, 1}));
  expectClose(viaEinsum, run1(OpKind::kMatMul, {x, yT}));
  // And against the definition, one element.
  double s = 0;
  for (int64_t d = 0; d < 5; ++d) s += at(x, (2 * 4 + 3) * 5 + d) * at(y, (2 * 2 + 1) * 5 + d);
  EXPECT_NEAR(at(viaEinsum, (2 * 4 + 3) * 2 + 1), s, 1e-6);
}

TEST(RefLinalg, EinsumReductionsTransposesAndBroadcastIndices) {
  Tensor m = iota({2, 3});
  expectClose(run1(OpKind::kEinsum, {m}, attrs("equation", std::string("ij->ji"))), f32({3, 2}, {1, 4, 2, 5, 3, 6}));
  expectClose(run1(OpKind::kEinsum, {m}, attrs("equation", std::string("ij->i"))), f32({2}, {6, 15}));
  expectClose(run1(OpKind::kEinsum, {m}, attrs("equation", std::string("ij->"))), f32({}, {21}));
  expectClose(run1(OpKind::kEinsum, {m, f32({3}, {1, 0, -1})}, attrs("equation", std::string("ij,j->i"))),
              f32({2}, {-2, -2}));
  // A size-1 'b' in the second operand broadcasts against b = 2.
  Tensor w = f32({1, 3}, {1, 10, 100});
  expectClose(run1(OpKind::kEinsum, {m, w}, attrs("equation", std::string("bj,bj->b"))), f32({2}, {321, 654}));
  // Three operands: sum_i a_i b_i c_i.
  Tensor v = f32({3}, {1, 2, 3});
  expectClose(run1(OpKind::kEinsum, {v, v, v}, attrs("equation", std::string("i,i,i->"))), f32({}, {36}));
}

TEST(RefLinalg, Conv1x1IsAPerPositionLinearMap) {
  Tensor x = randomF32({2, 3, 4}, 6), w = randomF32({5, 3, 1}, 7), bias = randomF32({5}, 8);
  Tensor want(DType::kF32, {2, 5, 4});
  for (int64_t n = 0; n < 2; ++n) {
    for (int64_t o = 0; o < 5; ++o) {
      for (int64_t l = 0; l < 4; ++l) {
        double s = at(bias, o);
        for (int64_t c = 0; c < 3; ++c) s += at(w, o * 3 + c) * at(x, (n * 3 + c) * 4 + l);
        want.setF64((n * 5 + o) * 4 + l, s);
      }
    }
  }
  expectClose(run1(OpKind::kConv1x1, {x, w, bias}), want);
}

TEST(RefLinalg, SpMMByHandAndBadColumn) {
  Attrs a;
  a.set("rows", int64_t{3});
  a.set("cols", int64_t{4});
  Tensor rowPtr = i64({4}, {0, 2, 2, 3});
  Tensor vals = f32({3}, {1, 2, 3});
  Tensor dense = iota({4, 2});  // rows [1,2] [3,4] [5,6] [7,8]
  // row 0 = 1*d0 + 2*d3 = [15, 18]; row 1 empty; row 2 = 3*d1 = [9, 12].
  expectClose(run1(OpKind::kSpMM, {rowPtr, i64({3}, {0, 3, 1}), vals, dense}, a), f32({3, 2}, {15, 18, 0, 0, 9, 12}));
  expectError(runOp(OpKind::kSpMM, {rowPtr, i64({3}, {0, 4, 1}), vals, dense}, a), {"col_idx[1] = 4", "[0, 4)"});
  expectError(runOp(OpKind::kSpMM, {i64({4}, {0, 2, 1, 3}), i64({3}, {0, 3, 1}), vals, dense}, a), {"row_ptr[2] = 1"});
}

}  // namespace
}  // namespace cagr
