// Import of what third-party exporters emit around the batch: shape tensors
// with a symbolic batch (ConstantOfShape, Range, Expand), one symbol per
// dynamic input axis unified only where an op needs it, wide Concats, and
// models exported with a fixed batch.
#include <gtest/gtest.h>

#include "cagr/analysis.h"
#include "cagr/reference.h"
#include "cagr/text.h"
#include "common/onnx_builder.h"

namespace cagr {
namespace {

using testing::OnnxBuilder;
constexpr int32_t kF32 = onnx::TensorProto::FLOAT;
constexpr int32_t kI64 = onnx::TensorProto::INT64;

Tensor iota(DType t, std::vector<int64_t> shape, double scale = 1) {
  Tensor x(t, std::move(shape));
  for (int64_t i = 0; i < x.numel(); ++i) x.setF64(i, static_cast<double>(i) * scale);
  return x;
}

std::vector<Tensor> run(const Graph& g, std::vector<std::pair<std::string, Tensor>> in) {
  auto out = runReference(g, in);
  EXPECT_TRUE(out.isOk()) << out.status().message();
  return out.isOk() ? *out : std::vector<Tensor>{};
}

// DeepCTR-Torch's Linear: X.new_zeros((X.shape[0], 1)) + sum(X, 1).
TEST(SymbolicImport, ConstantOfShapeOverTheBatch) {
  OnnxBuilder b;
  b.input("X", kF32, {"batch", 3});
  b.output("y");
  b.ints("zero", {}, {0});
  b.ints("one", {1}, {1});
  b.ints("ax0", {1}, {0});
  b.ints("ax1", {1}, {1});
  b.node("Shape", {"X"}, {"s"});
  b.node("Gather", {"s", "zero"}, {"n"});
  b.node("Unsqueeze", {"n", "ax0"}, {"n1"});
  OnnxBuilder::attr(b.node("Concat", {"n1", "one"}, {"shape"}), "axis", int64_t{0});
  b.node("ConstantOfShape", {"shape"}, {"zeros"}, "/linear_model/ConstantOfShape");
  b.node("ReduceSum", {"X", "ax1"}, {"r"});
  b.node("Add", {"zeros", "r"}, {"y"});
  auto g = b.import("const_of_shape");
  ASSERT_TRUE(g.isOk()) << g.status().message();
  for (int64_t batch : {1, 5}) {
    auto y = run(*g, {{"X", iota(DType::kF32, {batch, 3})}});
    ASSERT_EQ(y.size(), 1u);
    ASSERT_EQ(y[0].shape(), (std::vector<int64_t>{batch, 1}));
    EXPECT_EQ(y[0].getF64(batch - 1), 9.0 * static_cast<double>(batch - 1) + 3.0);
  }
}

// DIN's attention (TorchScript, dynamic batch): an Expand whose target is
// ConstantOfShape(Shape(Concat(N, 4))), the shape of a shape: [1, 1].
TEST(SymbolicImport, ShapeOfASymbolicShapeIsItsLength) {
  OnnxBuilder b;
  b.input("X", kF32, {"batch", 4});
  b.output("y");
  b.ints("zero", {}, {0});
  b.ints("four", {1}, {4});
  b.ints("ax0", {1}, {0});
  b.node("Shape", {"X"}, {"s"});
  b.node("Gather", {"s", "zero"}, {"n"});
  b.node("Unsqueeze", {"n", "ax0"}, {"n1"});
  OnnxBuilder::attr(b.node("Concat", {"n1", "four"}, {"nd"}), "axis", int64_t{0});
  b.node("Shape", {"nd"}, {"rank"});
  onnx::AttributeProto* one = b.node("ConstantOfShape", {"rank"}, {"ones"}, "/attention/ConstantOfShape").add_attribute();
  one->set_name("value");
  one->set_type(onnx::AttributeProto::TENSOR);
  one->mutable_t()->set_data_type(onnx::TensorProto::INT64);
  one->mutable_t()->add_dims(1);
  one->mutable_t()->add_int64_data(1);
  b.node("Expand", {"X", "ones"}, {"y"}, "/attention/Expand");
  auto g = b.import("shape_of_shape");
  ASSERT_TRUE(g.isOk()) << g.status().message();
  auto y = run(*g, {{"X", iota(DType::kF32, {3, 4})}});
  ASSERT_EQ(y.size(), 1u);
  EXPECT_EQ(y[0].shape(), (std::vector<int64_t>{3, 4}));
  EXPECT_EQ(y[0].getF64(11), 11.0);
}

// PNN's inner products: hundreds of [B,1] columns concatenated; the graph also
// round-trips through the text form.
TEST(SymbolicImport, ConcatOfHundredsOfInputs) {
  OnnxBuilder b;
  b.input("x", kF32, {"B", 1});
  b.output("y");
  std::vector<std::string> parts;
  for (int i = 0; i < 325; ++i) {
    std::string c = "c" + std::to_string(i);
    b.initializer(c, {1}, {static_cast<float>(i)});
    b.node("Mul", {"x", c}, {"p" + std::to_string(i)});
    parts.push_back("p" + std::to_string(i));
  }
  OnnxBuilder::attr(b.node("Concat", parts, {"y"}, "/innerproduct/Concat"), "axis", int64_t{1});
  auto g = b.import("concat325");
  ASSERT_TRUE(g.isOk()) << g.status().message();
  auto y = run(*g, {{"x", iota(DType::kF32, {2, 1}, 1)}});
  ASSERT_EQ(y.size(), 1u);
  ASSERT_EQ(y[0].shape(), (std::vector<int64_t>{2, 325}));
  EXPECT_EQ(y[0].getF64(325 + 324), 324.0);
  auto back = parseGraph(printGraph(*g));
  ASSERT_TRUE(back.isOk()) << back.status().message();
  EXPECT_EQ(printGraph(*back), printGraph(*g));
}

// nn.EmbeddingBag on 2-D ids: offsets = arange(0, B * k, k) over the batch.
TEST(SymbolicImport, RangeOverTheBatch) {
  OnnxBuilder b;
  b.input("ids", kI64, {"B", 2});
  b.output("y", kI64);
  b.ints("zero", {}, {0});
  b.ints("two", {}, {2});
  b.node("Shape", {"ids"}, {"s"});
  b.node("Gather", {"s", "zero"}, {"n"});
  b.node("Mul", {"n", "two"}, {"limit"});
  b.node("Range", {"zero", "limit", "two"}, {"y"}, "/embs.0/Range");
  auto g = b.import("range");
  ASSERT_TRUE(g.isOk()) << g.status().message();
  auto y = run(*g, {{"ids", iota(DType::kI64, {4, 2})}});
  ASSERT_EQ(y.size(), 1u);
  ASSERT_EQ(y[0].shape(), (std::vector<int64_t>{4}));
  for (int64_t i = 0; i < 4; ++i) EXPECT_EQ(y[0].getI64(i), 2 * i);
}

// ConstantOfShape / Range whose shape is data, not shape arithmetic, still fail cleanly.
TEST(SymbolicImport, RangeOverDataFailsNamingTheNode) {
  OnnxBuilder b;
  b.input("lim", kI64, {});
  b.output("y", kI64);
  b.ints("zero", {}, {0});
  b.ints("one", {}, {1});
  b.node("Range", {"zero", "lim", "one"}, {"y"}, "the_range");
  auto g = b.import("range_data");
  ASSERT_FALSE(g.isOk());
  EXPECT_NE(g.status().message().find("the_range"), std::string::npos) << g.status().message();
}

// facebookresearch/dlrm names every dynamic axis "batch_size": the id count of
// a bag is its own symbol, not the batch.
TEST(SymbolicImport, EachDynamicAxisGetsItsOwnSymbol) {
  OnnxBuilder b;
  b.input("dense", kF32, {"batch_size", 4});
  b.input("indices_0", kI64, {"batch_size"});
  b.output("y");
  std::vector<float> table(10 * 4);
  for (size_t i = 0; i < table.size(); ++i) table[i] = static_cast<float>(i);
  b.initializer("table", {10, 4}, table);
  b.ints("ax0", {1}, {0});
  b.node("Gather", {"table", "indices_0"}, {"rows"});
  b.node("ReduceSum", {"rows", "ax0"}, {"pooled"});
  b.node("Add", {"dense", "pooled"}, {"y"});
  auto g = b.import("own_symbols");
  ASSERT_TRUE(g.isOk()) << g.status().message();
  EXPECT_EQ(g->symbols().size(), 3u);  // "", N and the ids' count
  Tensor ids(DType::kI64, {7});
  for (int64_t i = 0; i < 7; ++i) ids.data<int64_t>()[i] = 1;
  auto y = run(*g, {{"dense", Tensor(DType::kF32, {3, 4})}, {"indices_0", ids}});
  ASSERT_EQ(y.size(), 1u);
  ASSERT_EQ(y[0].shape(), (std::vector<int64_t>{3, 4}));
  EXPECT_EQ(y[0].getF64(0), 7.0 * 4);  // seven copies of row 1 = [4, 5, 6, 7]
}

// Two axes an elementwise op combines are one symbol after import.
TEST(SymbolicImport, AxesAnOpNeedsEqualAreUnified) {
  OnnxBuilder b;
  b.input("a", kF32, {"p", 4});
  b.input("b", kF32, {"q", 4});
  b.output("y");
  b.node("Add", {"a", "b"}, {"y"});
  auto g = b.import("unified");
  ASSERT_TRUE(g.isOk()) << g.status().message();
  EXPECT_EQ(g->symbols().size(), 2u);
  EXPECT_EQ(g->type(g->inputs()[1]).dims, (std::vector<Dim>{kBatch, 4}));
  auto bad = runReference(*g, {{"a", Tensor(DType::kF32, {3, 4})}, {"b", Tensor(DType::kF32, {5, 4})}});
  ASSERT_FALSE(bad.isOk());
  EXPECT_NE(bad.status().message().find("'b'"), std::string::npos) << bad.status().message();
}

TEST(SymbolicImport, FixedBatchIsKeptAndOtherBatchesRefused) {
  OnnxBuilder b;
  b.input("x", kF32, {int64_t{64}, 3});
  b.output("y");
  b.node("Relu", {"x"}, {"y"});
  auto g = b.import("fixed");
  ASSERT_TRUE(g.isOk()) << g.status().message();
  EXPECT_EQ(g->fixedBatch(), 64);
  EXPECT_TRUE(checkBatch(*g, 64).isOk());
  Status st = checkBatch(*g, 256);
  ASSERT_FALSE(st.isOk());
  EXPECT_NE(st.message().find("fixed batch of 64"), std::string::npos) << st.message();

  OnnxBuilder d;
  d.input("x", kF32, {"B", 3});
  d.output("y");
  d.node("Relu", {"x"}, {"y"});
  auto dyn = d.import("dynamic");
  ASSERT_TRUE(dyn.isOk());
  EXPECT_EQ(dyn->fixedBatch(), 0);
  EXPECT_TRUE(checkBatch(*dyn, 256).isOk());
}

}  // namespace
}  // namespace cagr
