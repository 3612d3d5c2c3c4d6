// splitConcatGemms (lower/split_concat_gemm.h): a narrow Gemm or MatMul over
// a concat that nothing else reads becomes a chain of Gemms over the concat's
// operands, the concat disappears, and the outputs stay the same on the
// reference executor and the CPU backend; a concat read elsewhere, a wide
// output or a padded concat is left as it is.
#include <gtest/gtest.h>

#include <algorithm>

#include "../backends/cpu_test_util.h"
#include "cagr/reference.h"
#include "lower/split_concat_gemm.h"

namespace cagr {
namespace {

using rectest::attrs;
using rectest::Builder;
using rectest::uniform;

struct HeadCase {
  bool matmul = false;   // the head is a MatMul [K, N] instead of a Gemm [N, K] with bias
  int operands = 2;      // concat of x, h (and x again, as a third operand: not split)
  int64_t outputs = 1;   // head width
  bool catReadElsewhere = false;
  int64_t pad = 0;       // the concat's zero columns
};

// dense [B, 5]; x = dense * s; h = relu(dense W1^T) [B, 4]; the head over
// concat(x, h[, x]) with a sigmoid after it.
Graph head(const HeadCase& c) {
  Builder b;
  ValueId dense = b.input("dense", DType::kF32, {kBatch, 5});
  ValueId x = b.op(OpKind::kMul, {dense, b.constant("s", {5}, 1)}, "x");
  ValueId w1 = b.g.addConstant("w1", uniform({4, 5}, 2));
  ValueId h = b.op(OpKind::kRelu, {b.op(OpKind::kGemm, {dense, w1}, "dnn", attrs({{"transB", int64_t{1}}}))}, "h");
  std::vector<ValueId> parts = {x, h};
  if (c.operands == 3) parts.push_back(x);
  Attrs catAttrs = attrs({{"axis", int64_t{1}}});
  if (c.pad > 0) catAttrs.set("pad", c.pad);
  ValueId cat = b.op(OpKind::kConcat, parts, "cat", catAttrs);
  int64_t k = 9 + (c.operands == 3 ? 5 : 0) + c.pad;
  ValueId out;
  if (c.matmul) {
    out = b.op(OpKind::kMatMul, {cat, b.g.addConstant("wo", uniform({k, c.outputs}, 3))}, "out");
  } else {
    ValueId wo = b.g.addConstant("wo", uniform({c.outputs, k}, 3));
    ValueId bias = b.g.addConstant("bo", uniform({c.outputs}, 4));
    out = b.op(OpKind::kGemm, {cat, wo, bias}, "out", attrs({{"transB", int64_t{1}}, {"alpha", 0.5}}));
  }
  for (Node& n : b.g.mutableNodes()) {
    if (n.name == "out" || n.name == "dnn" || n.name == "h") n.mir.stream = 1;
  }
  b.g.addOutput(b.op(OpKind::kSigmoid, {out}, "prob"), "prob");
  if (c.catReadElsewhere) b.g.addOutput(b.op(OpKind::kRelu, {cat}, "r"), "r");
  return b.g;
}

int count(const Graph& g, OpKind op) {
  return static_cast<int>(std::count_if(g.nodes().begin(), g.nodes().end(), [&](const Node& n) { return n.op == op; }));
}

void expectSameOutputs(const Graph& given, const Graph& split) {
  for (int64_t batch : {1, 7}) {
    rectest::Inputs in{{"dense", uniform({batch, 5}, 9)}};
    auto want = runReference(given, in);
    auto got = runReference(split, in);
    ASSERT_TRUE(want.isOk() && got.isOk());
    for (size_t i = 0; i < want->size(); ++i) {
      auto cmp = compareTensors((*got)[i], (*want)[i], 1e-6, 1e-5);
      EXPECT_TRUE(cmp.close) << "batch " << batch << ": " << cmp.message;
    }
    Graph oneStream = split;  // the CPU backend runs the split graph too (on its one stream)
    for (Node& n : oneStream.mutableNodes()) n.mir.stream = 0;
    rectest::runBoth(oneStream, in);
  }
}

TEST(SplitConcatGemm, HeadOverAConcatBecomesAChainOfGemms) {
  for (HeadCase c : {HeadCase{}, HeadCase{true}, HeadCase{true, 2, 4}}) {
    Graph g = head(c);
    std::vector<SplitGemm> report;
    auto s = splitConcatGemms(g, kSplitConcatGemmMaxN, &report);
    ASSERT_TRUE(s.isOk()) << s.status().message();
    ASSERT_EQ(report.size(), 1u);
    EXPECT_EQ(report[0].parts, c.operands);
    EXPECT_EQ(count(*s, OpKind::kConcat), 0);
    EXPECT_EQ(count(*s, OpKind::kGemm), 1 + c.operands);  // the DNN layer and one part per operand
    EXPECT_EQ(count(*s, OpKind::kMatMul), 0);
    for (const Node& n : s->nodes()) {
      if (n.op != OpKind::kGemm || n.name == "dnn") continue;
      if (n.name == "out") {  // the last part: the head's own node, group and stream
        EXPECT_EQ(n.mir.stream, 1);
        EXPECT_EQ(s->value(n.inputs[0]).name, "h");  // the operand made on the head's stream (1)
        continue;
      }
      EXPECT_EQ(n.mir.group, -1) << n.name;  // a lone group
      EXPECT_EQ(n.mir.stream, 0) << n.name;  // on x's stream
    }
    expectSameOutputs(g, *s);
  }
}

TEST(SplitConcatGemm, LeavesWhatItCannotSplit) {
  // read elsewhere, 17 outputs, a padded concat, three operands
  for (HeadCase c : {HeadCase{false, 2, 1, true}, HeadCase{false, 2, 17}, HeadCase{false, 2, 1, false, 3},
                     HeadCase{false, 3}}) {
    Graph g = head(c);
    std::vector<SplitGemm> report;
    auto s = splitConcatGemms(g, kSplitConcatGemmMaxN, &report);
    ASSERT_TRUE(s.isOk()) << s.status().message();
    EXPECT_TRUE(report.empty());
    EXPECT_EQ(count(*s, OpKind::kConcat), 1);
    EXPECT_EQ(s->nodes().size(), g.nodes().size());
  }
}

}  // namespace
}  // namespace cagr
