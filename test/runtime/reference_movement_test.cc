// Reference kernels of the data-movement ops, including non-float dtypes,
// ONNX slice clamping with negative steps and gather index checking.
#include <gtest/gtest.h>

#include <climits>

#include "runtime/ref_test_util.h"

namespace cagr {
namespace {

using namespace reftest;

std::vector<int64_t> ints(const Tensor& t) { return {t.values<int64_t>().begin(), t.values<int64_t>().end()}; }

Attrs sliceAttrs(std::vector<int64_t> starts, std::vector<int64_t> ends, std::vector<int64_t> axes,
                 std::vector<int64_t> steps) {
  Attrs a;
  a.set("starts", std::move(starts));
  a.set("ends", std::move(ends));
  a.set("axes", std::move(axes));
  a.set("steps", std::move(steps));
  return a;
}

TEST(RefMovement, ConcatAlongInnerAndOuterAxes) {
  Tensor a = f32({2, 1}, {1, 2}), b = f32({2, 2}, {3, 4, 5, 6});
  expectClose(run1(OpKind::kConcat, {a, b}, attrs("axis", int64_t{1})), f32({2, 3}, {1, 3, 4, 2, 5, 6}));
  expectClose(run1(OpKind::kConcat, {b, b}, attrs("axis", int64_t{-2})), f32({4, 2}, {3, 4, 5, 6, 3, 4, 5, 6}));
  Tensor c = run1(OpKind::kConcat, {i64({2}, {1, 2}), i64({1}, {3})}, attrs("axis", int64_t{0}));
  EXPECT_EQ(ints(c), (std::vector<int64_t>{1, 2, 3}));
}

TEST(RefMovement, ViewsKeepElementOrder) {
  Tensor x = iota({2, 3, 2});
  Tensor r = run1(OpKind::kReshape, {x}, attrs("shape", std::vector<int64_t>{0, -1}));
  EXPECT_EQ(r.shape(), (std::vector<int64_t>{2, 6}));
  expectClose(r, iota({2, 6}));
  expectClose(run1(OpKind::kFlatten, {x}, attrs("axis", int64_t{2})), iota({6, 2}));
  expectClose(run1(OpKind::kFlatten, {x}), iota({2, 6}));
  Tensor u = run1(OpKind::kUnsqueeze, {x}, attrs("axes", std::vector<int64_t>{0, -1}));
  EXPECT_EQ(u.shape(), (std::vector<int64_t>{1, 2, 3, 2, 1}));
  Tensor s = run1(OpKind::kSqueeze, {u}, attrs("axes", std::vector<int64_t>{0}));
  EXPECT_EQ(s.shape(), (std::vector<int64_t>{2, 3, 2, 1}));
  expectClose(run1(OpKind::kSqueeze, {u}, attrs("axes", std::vector<int64_t>{})), x);  // every size-1 dim
}

TEST(RefMovement, TransposeWithPermAndDefaultReverse) {
  Tensor x = iota({2, 3, 2});
  Tensor want(DType::kF32, {3, 2, 2});  // want[j,i,k] = x[i,j,k]
  for (int64_t i = 0; i < 2; ++i) {
    for (int64_t j = 0; j < 3; ++j) {
      for (int64_t k = 0; k < 2; ++k) want.setF64((j * 2 + i) * 2 + k, at(x, (i * 3 + j) * 2 + k));
    }
  }
  expectClose(run1(OpKind::kTranspose, {x}, attrs("perm", std::vector<int64_t>{1, 0, 2})), want);
  Attrs reverse = attrs("perm", std::vector<int64_t>{});  // empty perm reverses the axes
  expectClose(run1(OpKind::kTranspose, {iota({2, 3})}, reverse), f32({3, 2}, {0, 3, 1, 4, 2, 5}));
  Tensor t = run1(OpKind::kTranspose, {i64({2, 2}, {1, 2, 3, 4})}, reverse);
  EXPECT_EQ(ints(t), (std::vector<int64_t>{1, 3, 2, 4}));
}

TEST(RefMovement, SliceWithNegativeStepsAndClamping) {
  Tensor v = iota({5});
  expectClose(run1(OpKind::kSlice, {v}, sliceAttrs({-1}, {INT64_MIN}, {0}, {-1})), f32({5}, {4, 3, 2, 1, 0}));
  expectClose(run1(OpKind::kSlice, {v}, sliceAttrs({4}, {0}, {0}, {-2})), f32({2}, {4, 2}));
  expectClose(run1(OpKind::kSlice, {v}, sliceAttrs({100}, {-100}, {0}, {-3})), f32({2}, {4, 1}));
  expectClose(run1(OpKind::kSlice, {v}, sliceAttrs({1}, {1000}, {0}, {2})), f32({2}, {1, 3}));
  expectClose(run1(OpKind::kSlice, {v}, sliceAttrs({-2}, {-1}, {}, {})), f32({1}, {3}));
  // 2-D: rows 0..1, columns 3, 2, 1.
  Tensor m = iota({3, 4});
  expectClose(run1(OpKind::kSlice, {m}, sliceAttrs({0, 3}, {2, 0}, {0, -1}, {1, -1})), f32({2, 3}, {3, 2, 1, 7, 6, 5}));
  // Empty selection.
  EXPECT_EQ(run1(OpKind::kSlice, {v}, sliceAttrs({3}, {1}, {0}, {1})).numel(), 0);
}

TEST(RefMovement, ExpandBroadcastsToTheTargetShape) {
  Tensor x = f32({3, 1}, {1, 2, 3});
  Tensor y = run1(OpKind::kExpand, {x}, attrs("shape", std::vector<int64_t>{2, 1, 4}));
  ASSERT_EQ(y.shape(), (std::vector<int64_t>{2, 3, 4}));
  for (int64_t i = 0; i < y.numel(); ++i) EXPECT_EQ(at(y, i), 1 + (i / 4) % 3) << i;
}

TEST(RefMovement, SplitIntoConsecutivePieces) {
  Attrs a;
  a.set("axis", int64_t{1});
  a.set("split", std::vector<int64_t>{1, 3, 1});
  auto r = runOp(OpKind::kSplit, {iota({2, 5})}, a, 3);
  ASSERT_TRUE(r.isOk()) << r.status().message();
  ASSERT_EQ(r->size(), 3u);
  expectClose((*r)[0], f32({2, 1}, {0, 5}));
  expectClose((*r)[1], f32({2, 3}, {1, 2, 3, 6, 7, 8}));
  expectClose((*r)[2], f32({2, 1}, {4, 9}));
  Attrs b;
  b.set("axis", int64_t{0});
  b.set("split", std::vector<int64_t>{2, 1});
  auto s = runOp(OpKind::kSplit, {i64({3, 1}, {7, 8, 9})}, b, 2);
  ASSERT_TRUE(s.isOk()) << s.status().message();
  EXPECT_EQ(ints((*s)[0]), (std::vector<int64_t>{7, 8}));
  EXPECT_EQ(ints((*s)[1]), (std::vector<int64_t>{9}));
}

TEST(RefMovement, GatherWrapsNegativeIndicesAlongAnyAxis) {
  Tensor data = iota({3, 2});  // [[0,1],[2,3],[4,5]]
  expectClose(run1(OpKind::kGather, {data, i64({2, 2}, {0, -1, 2, 1})}), f32({2, 2, 2}, {0, 1, 4, 5, 4, 5, 2, 3}));
  expectClose(run1(OpKind::kGather, {data, i32({1}, {-1})}, attrs("axis", int64_t{1})), f32({3, 1}, {1, 3, 5}));
  expectClose(run1(OpKind::kGather, {data, i64({}, {1})}), f32({2}, {2, 3}));  // scalar index drops the axis
}

TEST(RefMovement, GatherOutOfRangeNamesTheIndexAndRange) {
  Tensor data = iota({3, 2});
  expectError(runOp(OpKind::kGather, {data, i64({3}, {0, 3, 1})}), {"indices[1] = 3", "[-3, 2]", "size 3"});
  expectError(runOp(OpKind::kGather, {data, i64({1}, {-4})}), {"indices[0] = -4", "[-3, 2]"});
}

TEST(RefMovement, GatherNDWithAndWithoutBatchDims) {
  Tensor d = iota({2, 2});
  expectClose(run1(OpKind::kGatherND, {d, i64({2, 2}, {0, 0, 1, 1})}), f32({2}, {0, 3}));
  expectClose(run1(OpKind::kGatherND, {d, i64({2, 1}, {1, 0})}), f32({2, 2}, {2, 3, 0, 1}));
  // ONNX example 5: batch_dims = 1.
  Tensor d3 = iota({2, 2, 2});  // [[[0,1],[2,3]],[[4,5],[6,7]]]
  expectClose(run1(OpKind::kGatherND, {d3, i64({2, 1}, {1, 0})}, attrs("batch_dims", int64_t{1})),
              f32({2, 2}, {2, 3, 4, 5}));
  // batch_dims = 1 with two index tuples per batch and full-depth indices.
  expectClose(
      run1(OpKind::kGatherND, {d3, i64({2, 2, 2}, {0, 1, 1, 0, 1, 1, -1, -2})}, attrs("batch_dims", int64_t{1})),
      f32({2, 2}, {1, 2, 7, 6}));
  expectError(runOp(OpKind::kGatherND, {d3, i64({2, 1}, {1, 2})}, attrs("batch_dims", int64_t{1})),
              {"indices[1] = 2", "[-2, 1]"});
}

}  // namespace
}  // namespace cagr
