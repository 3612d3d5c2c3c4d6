// Precision emulation of the reference executor: rounding functions on exact
// bit patterns, int8 row-wise quantisation, and runReference honouring
// Node::mir.math and Value::mir.storage.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>

#include "cagr/mir.h"
#include "runtime/ref_test_util.h"
#include "runtime/reference/precision.h"

namespace cagr {
namespace {

using namespace reftest;

float fromBits(uint32_t b) {
  return std::bit_cast<float>(b);
}

// Bit pattern of f(the float with bit pattern `in`).
uint32_t rounded(float (*f)(float), uint32_t in) {
  return std::bit_cast<uint32_t>(f(fromBits(in)));
}

TEST(ReferencePrecision, Bf16RoundsToNearestTiesToEven) {
  EXPECT_EQ(rounded(ref::roundToBF16, 0x3F800000u), 0x3F800000u);  // 1.0 exact
  EXPECT_EQ(rounded(ref::roundToBF16, 0x3F808000u), 0x3F800000u);  // tie, even below
  EXPECT_EQ(rounded(ref::roundToBF16, 0x3F818000u), 0x3F820000u);  // tie, even above
  EXPECT_EQ(rounded(ref::roundToBF16, 0x3F808001u), 0x3F810000u);  // just above the tie
  EXPECT_EQ(rounded(ref::roundToBF16, 0xBF80FFFFu), 0xBF810000u);  // negative, rounds away
  EXPECT_EQ(rounded(ref::roundToBF16, 0x7F7FFFFFu), 0x7F800000u);  // f32 max overflows
  EXPECT_TRUE(std::isnan(ref::roundToBF16(fromBits(0x7FC00001u))));
}

TEST(ReferencePrecision, Tf32KeepsTenMantissaBits) {
  EXPECT_EQ(rounded(ref::roundToTF32, 0x3F801000u), 0x3F800000u);  // tie, even below
  EXPECT_EQ(rounded(ref::roundToTF32, 0x3F803000u), 0x3F804000u);  // tie, even above
  EXPECT_EQ(rounded(ref::roundToTF32, 0x3F801001u), 0x3F802000u);  // above the tie
  EXPECT_EQ(rounded(ref::roundToTF32, 0x3EAAAAABu), 0x3EAAA000u);  // 1/3 rounds down
  EXPECT_EQ(rounded(ref::roundToTF32, 0x00003000u), 0x00004000u);  // subnormal tie, even above
  EXPECT_EQ(rounded(ref::roundToTF32, 0x7F7FFFFFu), 0x7F800000u);  // overflow to infinity
  EXPECT_EQ(rounded(ref::roundToTF32, 0xFF800000u), 0xFF800000u);  // -inf unchanged
  EXPECT_TRUE(std::isnan(ref::roundToTF32(fromBits(0x7FC00001u))));
}

TEST(ReferencePrecision, F16HasHalfRangeAndSubnormals) {
  EXPECT_EQ(rounded(ref::roundToF16, 0x3F801000u), 0x3F800000u);  // 1 + 2^-11: tie, even below
  EXPECT_EQ(rounded(ref::roundToF16, 0x3F803000u), 0x3F804000u);  // 1 + 3*2^-11: tie, even above
  EXPECT_EQ(ref::roundToF16(0.1f), 0.0999755859375f);             // f16 0x2E66
  EXPECT_EQ(ref::roundToF16(65504.0f), 65504.0f);                 // f16 max
  EXPECT_EQ(ref::roundToF16(65519.0f), 65504.0f);
  EXPECT_TRUE(std::isinf(ref::roundToF16(65520.0f)));                        // tie with an odd max: overflows
  EXPECT_EQ(ref::roundToF16(std::ldexp(1.0f, -24)), std::ldexp(1.0f, -24));  // smallest subnormal
  EXPECT_EQ(ref::roundToF16(std::ldexp(1.0f, -25)), 0.0f);                   // tie, even is zero
  EXPECT_EQ(ref::roundToF16(std::ldexp(3.0f, -25)), std::ldexp(1.0f, -23));  // tie, even above
  EXPECT_EQ(ref::roundToF16(std::ldexp(1.0f, -26)), 0.0f);
}

TEST(ReferencePrecision, RoundToDispatchesAndLeavesF32Alone) {
  float x = fromBits(0x3F808001u);
  EXPECT_EQ(ref::roundTo(x, Precision::kF32), x);
  EXPECT_EQ(ref::roundTo(x, Precision::kInt8Rowwise), x);
  EXPECT_EQ(ref::roundTo(x, Precision::kBF16), ref::roundToBF16(x));
  EXPECT_EQ(ref::roundTo(x, Precision::kTF32), ref::roundToTF32(x));
  EXPECT_EQ(ref::roundTo(x, Precision::kF16), ref::roundToF16(x));
}

TEST(ReferencePrecision, Int8RowwiseQuantisesEachRowOnItsOwnGrid) {
  // Row 0 spans [0, 255] (scale 1, ties to even); row 1 is constant; row 2 spans [-1, 1].
  Tensor t = f32({3, 5}, {0, 3.4, 3.5, 4.5, 255, 7, 7, 7, 7, 7, -1, 0, 0.5, 1, -1});
  Tensor q = ref::quantizeRowwiseInt8(t);
  ASSERT_EQ(q.shape(), t.shape());
  std::vector<double> row0 = {0, 3, 4, 4, 255};
  for (int64_t c = 0; c < 5; ++c) EXPECT_EQ(at(q, c), row0[static_cast<size_t>(c)]) << "column " << c;
  for (int64_t c = 5; c < 10; ++c) EXPECT_EQ(at(q, c), 7.0);
  float scale = 2.0f / 255.0f;
  EXPECT_EQ(at(q, 10), -1.0);         // the minimum is the bias: exact
  EXPECT_NEAR(at(q, 13), 1.0, 1e-6);  // the maximum: 255 steps
  EXPECT_NE(at(q, 11), 0.0) << "0 lies between two steps of the [-1, 1] grid";
  for (int64_t c = 10; c < 15; ++c) EXPECT_LE(std::fabs(at(q, c) - at(t, c)), scale / 2 + 1e-7);
}

TEST(ReferencePrecision, StoredAsCopiesAndRejectsIntegers) {
  Tensor t = f32({2}, {1.0 + std::ldexp(1.0, -12), 3.0});
  auto s = ref::storedAs(t, Precision::kTF32);
  ASSERT_TRUE(s.isOk()) << s.status().message();
  EXPECT_EQ(at(*s, 0), 1.0);
  EXPECT_EQ(at(t, 0), 1.0 + std::ldexp(1.0, -12)) << "the source tensor must not change";
  auto d = ref::storedAs(f64({1}, {1.0 + std::ldexp(1.0, -30)}), Precision::kBF16);
  ASSERT_TRUE(d.isOk());
  EXPECT_EQ(at(*d, 0), 1.0);
  auto bad = ref::storedAs(i64({1}, {3}), Precision::kBF16);
  expectError(bad, {"i64", "bf16"});
}

// Runs a graph of one [1,1] input "x" and one output; returns its first element.
double runScalar(const Graph& g, double x) {
  auto r = runReference(g, {{"x", f32({1, 1}, {x})}});
  EXPECT_TRUE(r.isOk()) << r.status().message();
  return r.isOk() ? at(r->front(), 0) : NAN;
}

TEST(ReferencePrecision, ReducedMathRoundsMultiplicandsNotTheBias) {
  // y = x * w + b with a bias whose low bits a rounded bias would lose.
  Graph g;
  ValueId x = g.addInput("x", {DType::kF32, {1, 1}});
  ValueId w = g.addConstant("w", f32({1, 1}, {1.0}));
  ValueId b = g.addConstant("b", f32({1}, {1.0 + std::ldexp(1.0, -20)}));
  g.addOutput(*g.add(OpKind::kGemm, {x, w, b}, {}, "fc"), "y");
  double in = 1.0 + std::ldexp(1.0, -12);  // exact in f32, 1.0 in tf32 / bf16 / f16
  EXPECT_EQ(runScalar(g, in), 2.0 + std::ldexp(1.0, -12) + std::ldexp(1.0, -20));
  for (Precision p : {Precision::kTF32, Precision::kBF16, Precision::kF16}) {
    g.mutableNodes()[0].mir.math = p;
    EXPECT_EQ(runScalar(g, in), 2.0 + std::ldexp(1.0, -20)) << precisionName(p);
  }
}

TEST(ReferencePrecision, ConstantStorageRoundsTheWeightWhereItIsRead) {
  Tensor heavy = f32({1, 1}, {1.0 + std::ldexp(1.0, -10)});  // bf16 cannot hold it
  Graph g;
  ValueId x = g.addInput("x", {DType::kF32, {1, 1}});
  ValueId w = g.addConstant("w", heavy);
  g.addOutput(*g.add(OpKind::kMatMul, {x, w}, {}, "mm"), "y");
  g.mutableValue(w).mir.storage = Precision::kBF16;
  EXPECT_EQ(runScalar(g, 1.0), 1.0);
  EXPECT_EQ(at(heavy, 0), 1.0 + std::ldexp(1.0, -10)) << "the graph's constant must stay f32";
  g.mutableValue(w).mir.storage = Precision::kF32;
  EXPECT_EQ(runScalar(g, 1.0), 1.0 + std::ldexp(1.0, -10)) << "the all-f32 path must be exact again";
}

TEST(ReferencePrecision, ProducedValueIsRoundedWhenStored) {
  Graph g;
  ValueId x = g.addInput("x", {DType::kF32, {2}});
  ValueId r = *g.add(OpKind::kRelu, {x}, {}, "relu");
  g.mutableValue(r).mir.storage = Precision::kF16;
  g.addOutput(*g.add(OpKind::kNeg, {r}, {}, "neg"), "y");
  auto out = runReference(g, {{"x", f32({2}, {0.1, -3})}});
  ASSERT_TRUE(out.isOk()) << out.status().message();
  EXPECT_EQ(at(out->front(), 0), -0.0999755859375);
  EXPECT_EQ(at(out->front(), 1), 0.0);
}

TEST(ReferencePrecision, Int8RowwiseTableThroughAGather) {
  Graph g;
  Tensor table = f32({2, 3}, {0, 3.4, 255, 5, 5, 5});  // row 0: scale 1, bias 0
  ValueId tab = g.addConstant("table", table);
  g.mutableValue(tab).mir.storage = Precision::kInt8Rowwise;
  ValueId ids = g.addInput("ids", {DType::kI64, {2}});
  g.addOutput(*g.add(OpKind::kGather, {tab, ids}, {}, "lookup"), "rows");
  auto out = runReference(g, {{"ids", i64({2}, {1, 0})}});
  ASSERT_TRUE(out.isOk()) << out.status().message();
  expectClose(out->front(), f32({2, 3}, {5, 5, 5, 0, 3, 255}), 0, 0);
}

TEST(ReferencePrecision, StorageOnAnIntegerValueIsAnErrorNamingIt) {
  Graph g;
  ValueId tab = g.addConstant("table", f32({2, 2}, {1, 2, 3, 4}));
  ValueId ids = g.addInput("ids", {DType::kI64, {1}});
  g.mutableValue(ids).mir.storage = Precision::kBF16;
  g.addOutput(*g.add(OpKind::kGather, {tab, ids}, {}, "lookup"), "rows");
  expectError(runReference(g, {{"ids", i64({1}, {1})}}), {"'ids'", "i64", "bf16"});
}

}  // namespace
}  // namespace cagr
