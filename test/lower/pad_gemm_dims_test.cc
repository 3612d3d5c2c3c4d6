// padGemmDims (lower/pad_gemm_dims.h): a misaligned feature width that
// tensor-core GEMMs read is widened with zeros, the padded graph computes
// the same outputs on the reference executor, and a width whose tensors
// escape the rules (a graph output, an op other than the allowed ones, f32
// math only) is left as it is.
#include <gtest/gtest.h>

#include "../backends/cpu_test_util.h"
#include "cagr/reference.h"
#include "lower/pad_gemm_dims.h"

namespace cagr {
namespace {

using rectest::attrs;
using rectest::Builder;
using rectest::uniform;

constexpr int64_t kDense = 5, kSparse = 6, kF = kDense + kSparse, kHidden = 4;

// DCN-v2 in small: x0 = concat(dense, sparse) [B, 11]; two cross layers
// x' = x0 * (x W^T + b) + x; a ReLU layer on x0; the head reads concat(x2, h).
struct SmallDcn {
  Builder b;
  ValueId dense, sparse, x0, x2, head;
  explicit SmallDcn(Precision math, bool crossAsOutput = false, bool reduceX0 = false) {
    dense = b.input("dense", DType::kF32, {kBatch, kDense});
    sparse = b.input("sparse", DType::kF32, {kBatch, kSparse});
    x0 = b.op(OpKind::kConcat, {dense, sparse}, "x0", attrs({{"axis", int64_t{1}}}));
    ValueId x = x0;
    for (int l = 0; l < 2; ++l) {
      std::string s = std::to_string(l);
      ValueId w = b.g.addConstant("cw" + s, uniform({kF, kF}, 10 + l));
      ValueId bias = b.g.addConstant("cb" + s, uniform({kF}, 20 + l));
      ValueId y = b.op(OpKind::kGemm, {x, w, bias}, "cross" + s, attrs({{"transB", int64_t{1}}}));
      b.g.mutableNodes().back().mir.math = math;
      ValueId t = b.op(OpKind::kMul, {x0, y}, "mul" + s);
      x = b.op(OpKind::kAdd, {t, x}, "add" + s);
    }
    x2 = x;
    ValueId scale = b.g.addConstant("scale", uniform({kF}, 30));  // broadcast along the features
    ValueId xs = b.op(OpKind::kMul, {x2, scale}, "scaled");
    ValueId w1 = b.g.addConstant("w1", uniform({kHidden, kF}, 31));
    ValueId h = b.op(OpKind::kRelu, {b.op(OpKind::kGemm, {x0, w1}, "dnn", attrs({{"transB", int64_t{1}}}))}, "relu");
    ValueId cat = b.op(OpKind::kConcat, {xs, h}, "cat", attrs({{"axis", int64_t{1}}}));
    ValueId wo = b.g.addConstant("wo", uniform({kF + kHidden, 1}, 32));
    head = b.op(OpKind::kSigmoid, {b.op(OpKind::kMatMul, {cat, wo}, "out")}, "prob");
    b.g.addOutput(head, "prob");
    if (crossAsOutput) b.g.addOutput(x2, "cross");
    if (reduceX0) b.g.addOutput(b.op(OpKind::kReduceSum, {x0}, "sum", attrs({{"keepdims", int64_t{0}}})), "sum");
  }
};

std::vector<std::pair<std::string, Tensor>> inputs(int64_t batch) {
  return {{"dense", uniform({batch, kDense}, 1)}, {"sparse", uniform({batch, kSparse}, 2)}};
}

TEST(PadGemmDims, WidensTheCrossTowerAndKeepsTheOutputs) {
  SmallDcn m(Precision::kTF32);
  const Graph& g = m.b.g;
  std::vector<PaddedWidth> report;
  auto padded = padGemmDims(g, 8, &report);
  ASSERT_TRUE(padded.isOk()) << padded.status().message();
  ASSERT_EQ(report.size(), 1u);
  EXPECT_EQ(report[0].from, kF);
  EXPECT_EQ(report[0].to, 16);
  EXPECT_EQ(report[0].gemms, 4);  // two cross layers, the ReLU layer (K), the head (K)
  // x0, two GEMM outputs, two products, two sums, the scaled copy
  EXPECT_EQ(report[0].values, 8);
  EXPECT_EQ(padded->type(m.x0).dims[1], 16);
  EXPECT_EQ(padded->type(m.x2).dims[1], 16);
  EXPECT_EQ(padded->type(m.head).dims, g.type(m.head).dims);
  for (const Node& n : padded->nodes()) {
    if (n.name == "cat") {
      EXPECT_EQ(padded->type(n.outputs[0]).dims[1], 16 + kHidden);
    }
    if (n.name == "out") {
      EXPECT_EQ(padded->type(n.inputs[1]).dims, (std::vector<Dim>{16 + kHidden, 1}));
    }
    if (n.name == "cross0") {
      EXPECT_EQ(padded->type(n.inputs[2]).dims, std::vector<Dim>{16});
    }
  }
  for (int64_t batch : {1, 7}) {
    auto want = runReference(g, inputs(batch));
    auto got = runReference(*padded, inputs(batch));
    ASSERT_TRUE(want.isOk() && got.isOk()) << (want.isOk() ? got.status().message() : want.status().message());
    auto cmp = compareTensors((*got)[0], (*want)[0], 0, 1e-6);
    EXPECT_TRUE(cmp.close) << cmp.message;
  }
  // The cpu backend (f32 math) writes the Concat's zero columns as the reference does.
  Graph cpuPlan = *padded;
  for (Node& n : cpuPlan.mutableNodes()) n.mir.math = Precision::kF32;
  EXPECT_FALSE(rectest::runBoth(cpuPlan, inputs(9)).empty());
}

TEST(PadGemmDims, LeavesF32MathAlone) {
  SmallDcn m(Precision::kF32);
  std::vector<PaddedWidth> report;
  auto padded = padGemmDims(m.b.g, 8, &report);
  ASSERT_TRUE(padded.isOk());
  EXPECT_TRUE(report.empty());
  EXPECT_EQ(padded->type(m.x0).dims[1], kF);
}

TEST(PadGemmDims, LeavesAWidthThatEscapes) {
  for (bool output : {true, false}) {
    SmallDcn m(Precision::kBF16, /*crossAsOutput=*/output, /*reduceX0=*/!output);
    std::vector<PaddedWidth> report;
    auto padded = padGemmDims(m.b.g, 8, &report);
    ASSERT_TRUE(padded.isOk());
    EXPECT_TRUE(report.empty()) << (output ? "a graph output" : "a ReduceSum") << " among the features";
    EXPECT_EQ(padded->type(m.x2).dims[1], kF);
  }
}

TEST(PadGemmDims, AlignedWidthsAndAlignOneAreNoOps) {
  SmallDcn m(Precision::kBF16);
  std::vector<PaddedWidth> report;
  ASSERT_TRUE(padGemmDims(m.b.g, 1, &report).isOk());
  ASSERT_TRUE(padGemmDims(m.b.g, 11, &report).isOk());  // 11 is a multiple of 11
  EXPECT_TRUE(report.empty());
}

}  // namespace
}  // namespace cagr
