// The CPU backend's fast paths for data movement and softmax rows
// (src/backends/cpu/eltwise_strided.cc: tiled transposes;
// eltwise_softmax_rows.cc: AVX2 softmax over the last axis): odd shapes,
// 1-element dims, non-contiguous perms, every element size, sizes that run
// on threads. Transposes must match the reference executor bit for bit;
// softmax within f32 rounding.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "cpu_test_util.h"
#include "cagr/backend.h"
#include "cagr/reference.h"

namespace cagr {
namespace {

using rectest::attrs;
using rectest::Builder;
using rectest::Inputs;

// Distinct bit patterns per element, so any misplaced element shows.
Tensor counting(DType t, const std::vector<int64_t>& shape) {
  Tensor x(t, shape);
  for (int64_t i = 0; i < x.numel(); ++i) {
    switch (t) {
      case DType::kI64:
        x.data<int64_t>()[i] = i * 1000003 - 7;
        break;
      case DType::kI32:
        x.data<int32_t>()[i] = static_cast<int32_t>(i * 7919 - 3);
        break;
      default:
        x.data<float>()[i] = static_cast<float>(i) * 0.5f - 3.25f;
    }
  }
  return x;
}

// Runs `g` on the cpu backend and the reference; every output byte-equal.
void expectExact(const Graph& g, const Inputs& in, const std::string& what) {
  auto exe = (*makeBackend("cpu"))->compile(g);
  ASSERT_TRUE(exe.isOk()) << exe.status().message();
  auto got = (*exe)->run(in);
  auto want = runReference(g, in);
  ASSERT_TRUE(got.isOk() && want.isOk()) << what;
  for (size_t i = 0; i < want->size(); ++i) {
    const Tensor &a = (*got)[i], &b = (*want)[i];
    ASSERT_EQ(a.shape(), b.shape()) << what;
    EXPECT_EQ(std::memcmp(a.rawData(), b.rawData(), a.byteSize()), 0) << what;
  }
  for (const std::string& k : (*exe)->kernelReport()) EXPECT_EQ(k.find("reference:"), std::string::npos) << k;
}

std::string describe(const std::vector<int64_t>& shape, const std::vector<int64_t>& perm, DType t) {
  std::string s = std::string(dtypeName(t)) + " [";
  for (int64_t d : shape) s += std::to_string(d) + ",";
  s += "] perm [";
  for (int64_t p : perm) s += std::to_string(p) + ",";
  return s + "]";
}

void checkTranspose(const std::vector<int64_t>& shape, const std::vector<int64_t>& perm, DType t) {
  Builder b;
  std::vector<Dim> dims(shape.begin(), shape.end());
  ValueId x = b.input("x", t, dims);
  b.g.addOutput(b.op(OpKind::kTranspose, {x}, "tr", attrs({{"perm", perm}})), "y");
  expectExact(b.g, {{"x", counting(t, shape)}}, describe(shape, perm, t));
}

// Perms that move the innermost axis (tiled path) and ones that keep it
// (runs), on planes narrower, equal to and wider than a tile, odd sizes and
// 1-element dims anywhere.
TEST(CpuFastPaths, TransposesMatchReferenceExactly) {
  const std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>> cases = {
      {{3, 22, 2, 16}, {0, 2, 1, 3}},  // AutoInt: heads to the front (runs of 16)
      {{3, 2, 22, 16}, {0, 1, 3, 2}},  // AutoInt: K^T, 22 x 16 planes
      {{3, 22, 2, 16}, {0, 2, 3, 1}},
      {{3, 2, 16, 22}, {0, 3, 1, 2}},
      {{3, 22, 2, 16}, {0, 1, 3, 2}},  // planes of 16 x 2
      {{5, 7}, {1, 0}},                // both sides under a tile
      {{8, 8}, {1, 0}},
      {{9, 17}, {1, 0}},
      {{1, 1, 13}, {2, 0, 1}},
      {{4, 1, 9, 1, 11}, {4, 3, 2, 1, 0}},
      {{2, 3, 4, 5}, {3, 1, 0, 2}},    // the stride-1 dim not next to the last
      {{2, 9, 3, 10}, {1, 3, 0, 2}},
      {{33, 65}, {1, 0}},
      {{1}, {0}},
  };
  for (const auto& [shape, perm] : cases) {
    for (DType t : {DType::kF32, DType::kI32, DType::kI64}) checkTranspose(shape, perm, t);
  }
}

// Large enough to split over threads (over 2^21 elements; work items that
// start mid-plane).
TEST(CpuFastPaths, LargeTransposesOnThreads) {
  checkTranspose({3000, 2, 22, 16}, {0, 1, 3, 2}, DType::kF32);
  checkTranspose({3001, 22, 2, 16}, {0, 2, 3, 1}, DType::kF32);
  checkTranspose({2, 1100, 1003}, {0, 2, 1}, DType::kF32);
  checkTranspose({3001, 701}, {1, 0}, DType::kI64);
  checkTranspose({4100, 22, 2, 16}, {0, 2, 1, 3}, DType::kF32);
}

// A slice, then a transpose of it (tiles of odd planes).
TEST(CpuFastPaths, TransposeAfterSlice) {
  Builder b;
  ValueId x = b.input("x", DType::kF32, {kBatch, 12, 10});
  ValueId sl = b.op(OpKind::kSlice, {x}, "sl",
                    attrs({{"starts", std::vector<int64_t>{1, 2}},
                           {"ends", std::vector<int64_t>{11, 10}},
                           {"axes", std::vector<int64_t>{1, 2}},
                           {"steps", std::vector<int64_t>{1, 1}}}));
  ValueId tr = b.op(OpKind::kTranspose, {sl}, "tr", attrs({{"perm", std::vector<int64_t>{0, 2, 1}}}));
  b.g.addOutput(tr, "y");
  for (int64_t n : {1, 3, 2000}) expectExact(b.g, {{"x", counting(DType::kF32, {n, 12, 10})}}, "slice+transpose");
}

// Short contiguous runs copied whole: a broadcast outer dim (Expand) and a
// reversed, stepped outer dim (Slice), runs of 5 and of 16 elements.
TEST(CpuFastPaths, ShortRunsOfExpandAndSlice) {
  for (int64_t run : {5, 16}) {
    Builder b;
    ValueId x = b.input("x", DType::kF32, {kBatch, 1, 9, run});
    ValueId ex = b.op(OpKind::kExpand, {x}, "ex", attrs({{"shape", std::vector<int64_t>{1, 4, 9, run}}}));
    ValueId sl = b.op(OpKind::kSlice, {x}, "sl",
                      attrs({{"starts", std::vector<int64_t>{-1}},
                             {"ends", std::vector<int64_t>{-100}},
                             {"axes", std::vector<int64_t>{2}},
                             {"steps", std::vector<int64_t>{-2}}}));
    b.g.addOutput(ex, "ex");
    b.g.addOutput(sl, "sl");
    for (int64_t n : {1, 7, 20000}) {
      expectExact(b.g, {{"x", counting(DType::kF32, {n, 1, 9, run})}}, "expand / slice runs of " + std::to_string(run));
    }
  }
}

// NGCF's scores: sum (or mean) over the last axis of x * y, fused; the
// product read straight from x and y. A broadcast operand or a product that
// is also an output takes the general path; both match the reference.
TEST(CpuFastPaths, MulThenReduceOverTheLastAxis) {
  for (int64_t K : {1, 7, 17, 256}) {
    for (OpKind red : {OpKind::kReduceSum, OpKind::kReduceMean}) {
      for (int variant = 0; variant < 3; ++variant) {  // 0: fast path, 1: broadcast operand, 2: product also output
        Builder b;
        ValueId x = b.input("x", DType::kF32, {kBatch, K});
        ValueId y = b.input("y", DType::kF32, variant == 1 ? std::vector<Dim>{K} : std::vector<Dim>{kBatch, K});
        ValueId m = b.op(OpKind::kMul, {x, y}, "mul");
        b.g.addOutput(b.op(red, {m}, "red", attrs({{"axes", std::vector<int64_t>{-1}}, {"keepdims", int64_t{0}}})),
                      "s");
        if (variant == 2) b.g.addOutput(m, "m");
        b.group({"mul", "red"}, 0, "own.reduce");
        for (int64_t n : {1, 33, 20000}) {
          Inputs in = {{"x", rectest::uniform({n, K}, 5)},
                       {"y", rectest::uniform(variant == 1 ? std::vector<int64_t>{K} : std::vector<int64_t>{n, K}, 6)}};
          rectest::expectKernel(rectest::runBoth(b.g, in, 1e-5), "own.reduce:mul+");
        }
      }
    }
  }
}

Graph softmaxGraph(int64_t K, bool prologue) {
  Builder b;
  ValueId x = b.input("x", DType::kF32, {kBatch, 2, K});
  ValueId in = prologue ? b.op(OpKind::kMul, {x, x}, "sq") : x;
  b.g.addOutput(b.op(OpKind::kSoftmax, {in}, "sm", attrs({{"axis", int64_t{-1}}})), "y");
  if (prologue) b.group({"sq", "sm"}, 0, "own.reduce");
  return std::move(b.g);
}

// Rows shorter than a vector, of whole vectors, with a tail, held in
// registers or not; large logits (the max shift matters) and batches that
// run on threads.
TEST(CpuFastPaths, SoftmaxRowsOfEveryLength) {
  for (int64_t K : {1, 2, 5, 7, 8, 9, 15, 16, 17, 22, 24, 63, 64, 65, 100, 257}) {
    for (bool prologue : {false, true}) {
      Graph g = softmaxGraph(K, prologue);
      for (int64_t n : {1, 37, K <= 22 ? 40000 : 3000}) {
        Inputs in = {{"x", rectest::uniform({n, 2, K}, static_cast<unsigned>(K + n), -30, 30)}};
        auto report = rectest::runBoth(g, in, 1e-5);
        rectest::expectKernel(report, prologue ? "own.reduce:mul+softmax" : "own.reduce:softmax");
      }
    }
  }
}

// -inf logits get probability 0, a +inf or NaN makes its row NaN, like the reference.
TEST(CpuFastPaths, SoftmaxSpecialValues) {
  for (int64_t K : {3, 22}) {
    Graph g = softmaxGraph(K, false);
    Tensor x = rectest::uniform({4, 2, K}, 3, -5, 5);
    float* p = x.data<float>();
    const float inf = std::numeric_limits<float>::infinity();
    p[0] = -inf;                              // row 0: one -inf
    p[2 * K + 1] = inf;                       // row 2: +inf
    p[4 * K + 2] = std::nanf("");             // row 4: NaN
    auto exe = (*makeBackend("cpu"))->compile(g);
    ASSERT_TRUE(exe.isOk());
    auto got = (*exe)->run({{"x", x}});
    auto want = runReference(g, {{"x", x}});
    ASSERT_TRUE(got.isOk() && want.isOk());
    const float *a = (*got)[0].data<float>(), *b = (*want)[0].data<float>();
    for (int64_t i = 0; i < x.numel(); ++i) {
      if (std::isnan(b[i])) {
        EXPECT_TRUE(std::isnan(a[i])) << "K " << K << " element " << i;
      } else {
        EXPECT_NEAR(a[i], b[i], 1e-6 + 1e-5 * std::fabs(b[i])) << "K " << K << " element " << i;
      }
    }
  }
}

}  // namespace
}  // namespace cagr
