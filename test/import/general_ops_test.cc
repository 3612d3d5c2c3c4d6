// The general ONNX ops third-party models use (TopK, GatherElements, Tile,
// CumSum, Pad, Conv, comparisons and logic, Mod, PRelu, If on a condition
// known at import), imported and run on the reference executor and the CPU
// backend against hand-computed values; unsupported ops are all named at once.
#include <gtest/gtest.h>

#include "cagr/backend.h"
#include "cagr/reference.h"
#include "common/onnx_builder.h"

namespace cagr {
namespace {

using testing::OnnxBuilder;
using Inputs = std::vector<std::pair<std::string, Tensor>>;
constexpr int32_t kF32 = onnx::TensorProto::FLOAT;
constexpr int32_t kI64 = onnx::TensorProto::INT64;

Tensor values(DType t, std::vector<int64_t> shape, const std::vector<double>& v) {
  Tensor x(t, std::move(shape));
  for (int64_t i = 0; i < x.numel(); ++i) x.setF64(i, v[static_cast<size_t>(i)]);
  return x;
}

// Runs `g` on the reference executor and the CPU backend; both must give `want`.
void expectOutputs(const Graph& g, const Inputs& in, const std::vector<std::vector<double>>& want) {
  auto ref = runReference(g, in);
  ASSERT_TRUE(ref.isOk()) << ref.status().message();
  auto exe = (*makeBackend("cpu"))->compile(g);
  ASSERT_TRUE(exe.isOk()) << exe.status().message();
  auto cpu = (*exe)->run(in);
  ASSERT_TRUE(cpu.isOk()) << cpu.status().message();
  ASSERT_EQ(ref->size(), want.size());
  for (size_t o = 0; o < want.size(); ++o) {
    ASSERT_EQ((*ref)[o].numel(), static_cast<int64_t>(want[o].size())) << "output " << o;
    for (size_t i = 0; i < want[o].size(); ++i) {
      EXPECT_DOUBLE_EQ((*ref)[o].getF64(static_cast<int64_t>(i)), want[o][i]) << "output " << o << " [" << i << "]";
      EXPECT_DOUBLE_EQ((*cpu)[o].getF64(static_cast<int64_t>(i)), want[o][i]) << "cpu output " << o << " [" << i << "]";
    }
  }
}

// CCPM's KMaxPooling: topk values and indices along the last axis.
TEST(GeneralOps, TopKLargestWithTiesInIndexOrder) {
  OnnxBuilder b;
  b.input("x", kF32, {"B", 5});
  b.output("v");
  b.output("i", kI64);
  b.ints("k", {1}, {2});
  OnnxBuilder::attr(b.node("TopK", {"x", "k"}, {"v", "i"}), "axis", int64_t{1});
  auto g = b.import("topk");
  ASSERT_TRUE(g.isOk()) << g.status().message();
  expectOutputs(*g, {{"x", values(DType::kF32, {1, 5}, {1, 5, 3, 5, 0})}}, {{5, 5}, {1, 3}});
}

TEST(GeneralOps, GatherElementsTileAndCumSum) {
  OnnxBuilder b;
  b.input("x", kF32, {"B", 3});
  b.input("idx", kI64, {"B", 2});
  b.output("ge");
  b.output("tile");
  b.output("cs");
  b.ints("reps", {2}, {1, 2});
  b.ints("ax", {}, {1});
  OnnxBuilder::attr(b.node("GatherElements", {"x", "idx"}, {"ge"}), "axis", int64_t{1});
  b.node("Tile", {"x", "reps"}, {"tile"});
  auto& cs = b.node("CumSum", {"x", "ax"}, {"cs"});
  OnnxBuilder::attr(cs, "exclusive", int64_t{1});
  OnnxBuilder::attr(cs, "reverse", int64_t{1});
  auto g = b.import("gather_tile_cumsum");
  ASSERT_TRUE(g.isOk()) << g.status().message();
  expectOutputs(*g, {{"x", values(DType::kF32, {1, 3}, {1, 2, 4})}, {"idx", values(DType::kI64, {1, 2}, {2, -3})}},
                {{4, 1}, {1, 2, 4, 1, 2, 4}, {6, 4, 0}});
}

// CCPM: ZeroPad2d then a (k, 1) convolution over the fields.
TEST(GeneralOps, PadThenConv2d) {
  OnnxBuilder b;
  b.input("x", kF32, {"B", 1, 2, 2});
  b.output("y");
  b.ints("pads", {8}, {0, 0, 1, 0, 0, 0, 1, 0});
  b.initializer("w", {1, 1, 2, 1}, {1, 10});
  b.initializer("bias", {1}, {0.5f});
  b.node("Pad", {"x", "pads"}, {"p"});
  b.node("Conv", {"p", "w", "bias"}, {"y"});
  auto g = b.import("pad_conv");
  ASSERT_TRUE(g.isOk()) << g.status().message();
  // Padded rows: [0 0] [1 2] [3 4] [0 0]; y[r] = p[r] + 10 p[r+1] + 0.5.
  expectOutputs(*g, {{"x", values(DType::kF32, {1, 1, 2, 2}, {1, 2, 3, 4})}}, {{10.5, 20.5, 31.5, 42.5, 3.5, 4.5}});
}

TEST(GeneralOps, ComparisonsLogicWhereModAndPRelu) {
  OnnxBuilder b;
  b.input("x", kF32, {"B", 4});
  b.input("ids", kI64, {"B", 4});
  b.output("w");
  b.output("m", kI64);
  b.output("pr");
  b.initializer("zero", {}, {0});
  b.initializer("lo", {}, {-2});
  b.initializer("slope", {1}, {0.25f});
  b.ints("three", {}, {3});
  b.node("Greater", {"x", "zero"}, {"pos"});
  b.node("Less", {"x", "lo"}, {"low"});
  b.node("Not", {"low"}, {"notlow"});
  b.node("Or", {"pos", "low"}, {"keep"});
  b.node("And", {"keep", "notlow"}, {"cond"});
  b.node("Where", {"cond", "x", "zero"}, {"w"});
  b.node("Mod", {"ids", "three"}, {"m"});
  b.node("PRelu", {"x", "slope"}, {"pr"});
  auto g = b.import("compare_logic");
  ASSERT_TRUE(g.isOk()) << g.status().message();
  expectOutputs(*g,
                {{"x", values(DType::kF32, {1, 4}, {1, -1, -4, 2})}, {"ids", values(DType::kI64, {1, 4}, {7, -4, 3, -1})}},
                {{1, 0, 0, 2}, {1, 2, 0, 2}, {1, -0.25, -1, 2}});
}

// DeepCTR's varlen features one-hot their lengths; DIN repeats a row per sample.
TEST(GeneralOps, OneHotAndTileOverTheBatch) {
  OnnxBuilder b;
  b.input("ids", kI64, {"B", 2});
  b.output("oh");
  b.output("rep");
  b.ints("depth", {}, {3});
  b.initializer("vals", {2}, {0, 5});
  b.initializer("row", {1, 2}, {7, 8});
  b.ints("zero", {1}, {0});
  b.ints("one", {1}, {1});
  b.node("OneHot", {"ids", "depth", "vals"}, {"oh"});
  b.node("Shape", {"ids"}, {"s"});
  b.node("Gather", {"s", "zero"}, {"n"});
  OnnxBuilder::attr(b.node("Concat", {"n", "one"}, {"reps"}), "axis", int64_t{0});
  b.node("Tile", {"row", "reps"}, {"rep"});
  auto g = b.import("onehot_tile");
  ASSERT_TRUE(g.isOk()) << g.status().message();
  EXPECT_EQ(g->type(g->outputs()[1]).dims, (std::vector<Dim>{kBatch, 2}));
  expectOutputs(*g, {{"ids", values(DType::kI64, {2, 2}, {1, -1, 0, 4})}},
                {{0, 5, 0, 0, 0, 5, 5, 0, 0, 0, 0, 0}, {7, 8, 7, 8}});
}

// torch.squeeze(x, 1) exports as If(shape[1] == 1, Squeeze, Identity).
TEST(GeneralOps, IfWithAConditionKnownAtImport) {
  OnnxBuilder b;
  b.input("x", kF32, {"B", 1, 3});
  b.output("y");
  b.ints("one", {}, {1});
  b.ints("ax", {1}, {1});
  b.node("Shape", {"x"}, {"s"});
  b.node("Gather", {"s", "one"}, {"d"});
  b.node("Equal", {"d", "one"}, {"c"});
  auto& node = b.node("If", {"c"}, {"y"}, "/crossnet/If");
  auto& then = OnnxBuilder::branch(node, "then_branch");
  auto* sq = then.add_node();
  sq->set_op_type("Squeeze");
  sq->add_input("x");
  sq->add_input("ax");
  sq->add_output("sq");
  then.add_output()->set_name("sq");
  auto& other = OnnxBuilder::branch(node, "else_branch");
  auto* id = other.add_node();
  id->set_op_type("Identity");
  id->add_input("x");
  id->add_output("same");
  other.add_output()->set_name("same");
  auto g = b.import("if_const");
  ASSERT_TRUE(g.isOk()) << g.status().message();
  EXPECT_EQ(g->type(g->outputs()[0]).dims, (std::vector<Dim>{kBatch, 3}));
  expectOutputs(*g, {{"x", values(DType::kF32, {1, 1, 3}, {1, 2, 3})}}, {{1, 2, 3}});
}

TEST(GeneralOps, EveryUnsupportedOpIsNamedAtOnce) {
  OnnxBuilder b;
  b.input("x", kF32, {"B", 4});
  b.output("y");
  b.node("Hardmax", {"x"}, {"h"}, "the_hardmax");
  b.node("Trilu", {"x"}, {"t"}, "the_trilu");
  b.node("Celu", {"x"}, {"dead"}, "dead_celu");  // unused: not reported
  b.node("Add", {"h", "t"}, {"y"});
  auto g = b.import("unsupported_all");
  ASSERT_FALSE(g.isOk());
  const std::string& msg = g.status().message();
  for (const char* want : {"Hardmax (node 'the_hardmax')", "Trilu (node 'the_trilu')"}) {
    EXPECT_NE(msg.find(want), std::string::npos) << msg;
  }
  EXPECT_EQ(msg.find("dead_celu"), std::string::npos) << msg;
}

}  // namespace
}  // namespace cagr
