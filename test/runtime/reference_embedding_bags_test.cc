// EmbeddingBags (table-batched lookups): its shape rule, its FLOP/byte count
// and its reference kernel, which must equal one EmbeddingBag per table
// reading its slot's ids, the outputs side by side.
#include <gtest/gtest.h>

#include "runtime/ref_test_util.h"

namespace cagr {
namespace {

using namespace reftest;

Attrs bagsAttrs(int64_t tables, const std::string& mode, std::vector<int64_t> slots = {}, int64_t includeLast = 0) {
  Attrs a;
  a.set("num_tables", tables);
  a.set("mode", mode);
  if (!slots.empty()) a.set("slots", std::move(slots));
  if (includeLast != 0) a.set("include_last_offset", includeLast);
  return a;
}

// Output type of an EmbeddingBags over inputs of the given types, or the error.
StatusOr<TensorType> bagsType(const std::vector<TensorType>& types, Attrs a) {
  Graph g;
  std::vector<ValueId> in;
  for (size_t i = 0; i < types.size(); ++i) in.push_back(g.addInput("in" + std::to_string(i), types[i]));
  CAGR_ASSIGN_OR_RETURN(ValueId y, g.add(OpKind::kEmbeddingBags, in, std::move(a), "tbe"));
  return g.type(y);
}

TensorType f32t(std::vector<Dim> d) {
  return {DType::kF32, std::move(d)};
}
TensorType i64t(std::vector<Dim> d) {
  return {DType::kI64, std::move(d)};
}

TEST(EmbeddingBagsShape, FixedAndMultiHotForms) {
  auto fixed = bagsType({f32t({10, 4}), f32t({7, 2}), i64t({kBatch, 2})}, bagsAttrs(2, "sum"));
  ASSERT_TRUE(fixed.isOk()) << fixed.status().message();
  EXPECT_EQ(fixed->dims, (std::vector<Dim>{kBatch, 6}));
  auto pooled =
      bagsType({f32t({10, 4}), f32t({7, 2}), f32t({7, 1}), i64t({kBatch, 2, 3})}, bagsAttrs(3, "max", {0, 1, 1}));
  ASSERT_TRUE(pooled.isOk()) << pooled.status().message();
  EXPECT_EQ(pooled->dims, (std::vector<Dim>{kBatch, 7}));
  auto multi = bagsType({f32t({10, 4}), f32t({7, 4}), i64t({2, 9}), i64t({2, kBatch})}, bagsAttrs(2, "mean"));
  ASSERT_TRUE(multi.isOk()) << multi.status().message();
  EXPECT_EQ(multi->dims, (std::vector<Dim>{kBatch, 8}));
  auto last = bagsType({f32t({10, 4}), i64t({1, 9}), i64t({1, 5})}, bagsAttrs(1, "sum", {}, 1));
  ASSERT_TRUE(last.isOk()) << last.status().message();
  EXPECT_EQ(last->dims, (std::vector<Dim>{4, 4}));
}

TEST(EmbeddingBagsShape, RejectsMalformedOperands) {
  expectError(bagsType({f32t({10, 4}), i64t({kBatch, 2})}, bagsAttrs(1, "sum", {2})), {"slot 2", "out of range"});
  expectError(bagsType({f32t({10, 4}), i64t({kBatch, 2})}, bagsAttrs(1, "sum", {0, 1})), {"one entry per table"});
  expectError(bagsType({f32t({10, 4}), {DType::kF16, {5, 4}}, i64t({kBatch, 2})}, bagsAttrs(2, "sum")),
              {"one element type"});
  expectError(bagsType({f32t({10, 4}), i64t({kBatch})}, bagsAttrs(1, "sum")), {"[B, S]"});
  expectError(bagsType({f32t({10, 4}), f32t({kBatch, 1})}, bagsAttrs(1, "sum")), {"i64 or i32"});
  expectError(bagsType({f32t({10, 4}), i64t({2, 9}), i64t({3, kBatch})}, bagsAttrs(1, "sum")), {"number of slots"});
  expectError(bagsType({f32t({10, 4}), i64t({1, 9}), f32t({1, kBatch})}, bagsAttrs(1, "sum")),
              {"offsets", "i64 or i32"});
  expectError(bagsType({f32t({10, 4}), i64t({1, 9}), i64t({1, kBatch})}, bagsAttrs(1, "sum", {}, 1)),
              {"include_last_offset"});
  expectError(bagsType({f32t({10, 4}), i64t({kBatch, 1})}, bagsAttrs(1, "min")), {"mode"});
  expectError(bagsType({f32t({10, 4}), i64t({kBatch, 1})}, bagsAttrs(2, "sum")), {"num_tables"});
}

Node bagsNode(Attrs a) {
  Node n;
  n.op = OpKind::kEmbeddingBags;
  n.attrs = std::move(a);
  return n;
}

TEST(EmbeddingBagsCost, EveryTableReadsItsRowsOncePerId) {
  // Tables [10,4] and [7,2] on one slot of [B=3, S=1, P=2] ids: 6 ids each.
  Node n = bagsNode(bagsAttrs(2, "sum", {0, 0}));
  std::vector<std::vector<int64_t>> in = {{10, 4}, {7, 2}, {3, 1, 2}}, out = {{3, 6}};
  std::vector<DType> inT = {DType::kF32, DType::kF32, DType::kI64}, outT = {DType::kF32};
  OpCounts c = opInfo(OpKind::kEmbeddingBags).count(n, in, inT, out, outT);
  EXPECT_DOUBLE_EQ(c.flops, 6 * 4 + 6 * 2);
  EXPECT_DOUBLE_EQ(c.bytesRead, (6 * 4 + 6 * 2) * 4 + 6 * 8);
  EXPECT_DOUBLE_EQ(c.bytesWritten, 3 * 6 * 4);
  // Multi-hot: 2 slots of L = 5 ids and 3 offsets each, one [8,4] table per slot.
  Node m = bagsNode(bagsAttrs(2, "sum"));
  in = {{8, 4}, {8, 4}, {2, 5}, {2, 3}};
  inT = {DType::kF32, DType::kF32, DType::kI64, DType::kI64};
  out = {{3, 8}};
  c = opInfo(OpKind::kEmbeddingBags).count(m, in, inT, out, outT);
  EXPECT_DOUBLE_EQ(c.flops, 2 * 5 * 4);
  EXPECT_DOUBLE_EQ(c.bytesRead, 2 * 5 * 4 * 4 + (10 + 6) * 8);
  EXPECT_DOUBLE_EQ(c.bytesWritten, 3 * 8 * 4);
}

// Table t's columns of `y` [B, width] starting at `col`.
Tensor columns(const Tensor& y, int64_t col, int64_t dim) {
  Tensor out(DType::kF32, {y.dim(0), dim});
  for (int64_t b = 0; b < y.dim(0); ++b) {
    for (int64_t d = 0; d < dim; ++d) out.setF64(b * dim + d, y.getF64(b * y.dim(1) + col + d));
  }
  return out;
}

// Rows [s] of a [S, n] tensor.
Tensor row(const Tensor& t, int64_t s) {
  Tensor out(t.dtype(), {t.dim(1)});
  for (int64_t i = 0; i < t.dim(1); ++i) out.data<int64_t>()[i] = t.data<int64_t>()[s * t.dim(1) + i];
  return out;
}

TEST(RefEmbeddingBags, HandComputedSharedSlot) {
  Tensor t0 = iota({4, 2}), t1 = f32({3, 1}, {10, 20, 30});
  Tensor ids = i64({2, 2}, {3, 1, 0, 2});  // [B=2, S=2]
  // Table 0 reads slot 1, table 1 slot 1 too: rows t0[1], t1[1] for bag 0; t0[2], t1[2] for bag 1.
  Tensor y = run1(OpKind::kEmbeddingBags, {t0, t1, ids}, bagsAttrs(2, "sum", {1, 1}));
  expectClose(y, f32({2, 3}, {2, 3, 20, 4, 5, 30}));
}

TEST(RefEmbeddingBags, MatchesOneEmbeddingBagPerTable) {
  Tensor t0 = randomF32({6, 3}, 1), t1 = randomF32({5, 2}, 2), t2 = randomF32({6, 4}, 3);
  Tensor ids = i64({2, 7}, {0, 5, 2, 2, 1, 4, 3, 4, 0, 1, 1, 3, 2, 0});
  Tensor offsets = i64({2, 3}, {0, 3, 3, 0, 2, 6});  // slot 0's bag 1 is empty
  std::vector<Tensor> tables = {t0, t1, t2};
  std::vector<int64_t> slots = {0, 1, 0};
  for (const char* mode : {"sum", "mean", "max"}) {
    Tensor y = run1(OpKind::kEmbeddingBags, {t0, t1, t2, ids, offsets}, bagsAttrs(3, mode, slots));
    ASSERT_EQ(y.shape(), (std::vector<int64_t>{3, 9}));
    int64_t col = 0;
    for (size_t t = 0; t < tables.size(); ++t) {
      int64_t s = slots[t];
      Tensor want =
          run1(OpKind::kEmbeddingBag, {tables[t], row(ids, s), row(offsets, s)}, attrs("mode", std::string(mode)));
      expectClose(columns(y, col, tables[t].dim(1)), want);
      col += tables[t].dim(1);
    }
  }
}

TEST(RefEmbeddingBags, FixedPoolingAndIncludeLastOffset) {
  Tensor t0 = randomF32({5, 2}, 4), t1 = randomF32({5, 3}, 5);
  Tensor ids = i64({2, 2, 2}, {0, 4, 1, 1, 3, 2, 4, 0});  // [B=2, S=2, P=2]
  Tensor y = run1(OpKind::kEmbeddingBags, {t0, t1, ids}, bagsAttrs(2, "mean"));
  Tensor slot0 = i64({2, 2}, {0, 4, 3, 2}), slot1 = i64({2, 2}, {1, 1, 4, 0});
  expectClose(columns(y, 0, 2), run1(OpKind::kEmbeddingBag, {t0, slot0}, attrs("mode", std::string("mean"))));
  expectClose(columns(y, 2, 3), run1(OpKind::kEmbeddingBag, {t1, slot1}, attrs("mode", std::string("mean"))));
  // include_last_offset: offsets [S, B+1]; ids after the last offset are unused.
  Tensor mids = i64({1, 5}, {1, 2, 3, 4, 0}), moff = i64({1, 3}, {0, 1, 4});
  Tensor z = run1(OpKind::kEmbeddingBags, {t0, mids, moff}, bagsAttrs(1, "sum", {}, 1));
  Attrs one = attrs("include_last_offset", int64_t{1});
  expectClose(z, run1(OpKind::kEmbeddingBag, {t0, row(mids, 0), row(moff, 0)}, one));
  EXPECT_NEAR(at(z, 2), at(t0, 4) + at(t0, 6) + at(t0, 8), 1e-6);  // bag 1 = rows 2, 3, 4
}

TEST(RefEmbeddingBags, RejectsBadIdsAndOffsets) {
  Tensor t0 = iota({4, 2});
  expectError(runOp(OpKind::kEmbeddingBags, {t0, i64({2, 1}, {1, 4})}, bagsAttrs(1, "sum")),
              {"out of range", "table 0"});
  expectError(runOp(OpKind::kEmbeddingBags, {t0, i64({1, 3}, {1, 2, 3}), i64({1, 2}, {2, 1})}, bagsAttrs(1, "sum")),
              {"non-decreasing", "slot 0"});
}

}  // namespace
}  // namespace cagr
