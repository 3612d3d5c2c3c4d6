// set_layout: packed GEMM weights on CPU, padded ones on GPUs for tensor-core
// math, row_major back; golden IR, near misses with reasons, and the
// reference outputs unchanged bit for bit (a layout never changes values).
#include <optional>

#include "rewrite/rewrite_test_util.h"

namespace cagr {
namespace {

using namespace rwtest;

// fc1 (K = 13, N = 8: misaligned), fc2 (K = 8, N = 16), and a MatMul whose
// B operand is a graph input. `math` goes on fc1 and fc2 as cagr.math.
std::string layoutGraph(const std::string& math = "") {
  std::string m = math.empty() ? "" : ", cagr.math = \"" + math + "\"";
  return R"mlir(
"builtin.module"() ({
  "cagr.graph"() ({
  ^bb0(%x: tensor<?x13xf32>, %p: tensor<8x16xf32>):
    %w1 = "cagr.constant"() {name = "w1", value = dense<0.125> : tensor<8x13xf32>} : () -> tensor<8x13xf32>
    %b1 = "cagr.constant"() {name = "b1", value = dense<-0.5> : tensor<8xf32>} : () -> tensor<8xf32>
    %h = "cagr.gemm"(%x, %w1, %b1) {name = "fc1", transB = 1 : i64)mlir" +
         m + R"mlir(} : (tensor<?x13xf32>, tensor<8x13xf32>, tensor<8xf32>) -> tensor<?x8xf32>
    %r = "cagr.relu"(%h) {name = "relu1"} : (tensor<?x8xf32>) -> tensor<?x8xf32>
    %w2 = "cagr.constant"() {name = "w2", value = dense<0.25> : tensor<8x16xf32>} : () -> tensor<8x16xf32>
    %o = "cagr.matmul"(%r, %w2) {name = "fc2")mlir" +
         m + R"mlir(} : (tensor<?x8xf32>, tensor<8x16xf32>) -> tensor<?x16xf32>
    %q = "cagr.matmul"(%r, %p) {name = "mix"} : (tensor<?x8xf32>, tensor<8x16xf32>) -> tensor<?x16xf32>
    %s = "cagr.add"(%o, %q) {name = "sum"} : (tensor<?x16xf32>, tensor<?x16xf32>) -> tensor<?x16xf32>
    %y = "cagr.sigmoid"(%s) {name = "prob"} : (tensor<?x16xf32>) -> tensor<?x16xf32>
    "cagr.return"(%y) : (tensor<?x16xf32>) -> ()
  }) {sym_name = "main", input_names = ["x", "p"], input_dims = ["N,13", "8,16"], output_names = ["prob"], symbols = ["N"]} : () -> ()
}) : () -> ()
)mlir";
}

ValueId valueNamed(const Graph& g, const std::string& name) {
  for (size_t v = 0; v < g.numValues(); ++v) {
    if (g.value(static_cast<ValueId>(v)).name == name) return static_cast<ValueId>(v);
  }
  ADD_FAILURE() << "no value " << name;
  return kNoValue;
}

// "w1 -> packed" for each candidate, with " ! reason" on near misses.
std::vector<std::string> summary(const Graph& g, const std::vector<Candidate>& cs) {
  std::vector<std::string> out;
  for (const Candidate& c : cs) {
    out.push_back(g.value(c.action.value).name + " -> " + c.action.choice + (c.legal() ? "" : " ! " + c.reason));
  }
  return out;
}

// The candidate for `value -> layout`, or a failure.
Action find(const Graph& g, const std::vector<Candidate>& cs, const std::string& value, const std::string& layout) {
  for (const Candidate& c : cs) {
    if (g.value(c.action.value).name == value && c.action.choice == layout) return c.action;
  }
  ADD_FAILURE() << "no candidate " << value << " -> " << layout;
  return Action{};
}

TEST(SetLayout, PacksConstantGemmWeightsOnCpu) {
  Graph g = parse(layoutGraph());
  Target t = target("x86-64");
  EXPECT_EQ(summary(g, candidatesOf(g, t, ActionKind::kSetLayout)),
            (std::vector<std::string>{"w1 -> packed", "w2 -> packed"}));
  Graph h = applied(g, t, find(g, candidatesOf(g, t, ActionKind::kSetLayout), "w1", "packed"));
  expectGolden(h, "set_layout_packed.mlir");
  // Packed weights can go back to row_major, which restores the input graph.
  EXPECT_EQ(summary(h, candidatesOf(h, t, ActionKind::kSetLayout)),
            (std::vector<std::string>{"w1 -> row_major", "w2 -> packed"}));
  Graph back = applied(h, t, find(h, candidatesOf(h, t, ActionKind::kSetLayout), "w1", "row_major"));
  EXPECT_EQ(printGraph(back), printGraph(g));
}

TEST(SetLayout, PadsMisalignedWeightsForTensorCoreMath) {
  Graph g = parse(layoutGraph("tf32"));
  Target t = target("h200");
  auto all = candidatesOf(g, t, ActionKind::kSetLayout, /*explain=*/true);
  EXPECT_EQ(
      summary(g, all),
      (std::vector<std::string>{
          "w1 -> packed ! the cuda backend has no packed weight layout (its BLAS reads row-major or padded weights)",
          "w1 -> padded",
          "b1 -> padded ! %b1 is operand #2 of 'fc1' (Gemm), not a GEMM weight",
          "w2 -> packed ! the cuda backend has no packed weight layout (its BLAS reads row-major or padded weights)",
          "w2 -> padded ! %w2 is already aligned: N = 16 and K = 8 are multiples of 4 for tf32 on h200",
          "p -> padded ! %p (read by 'mix' (MatMul)) is not a constant: layouts are chosen for weights",
      }));
  Graph h = applied(g, t, find(g, all, "w1", "padded"));
  expectGolden(h, "set_layout_padded.mlir");
}

TEST(SetLayout, DoesNotPadWithoutMatrixUnitsOrOnTpu) {
  Graph g = parse(layoutGraph());
  auto gpu = candidatesOf(g, target("h200"), ActionKind::kSetLayout, true);
  EXPECT_TRUE(candidatesOf(g, target("h200"), ActionKind::kSetLayout).empty());
  EXPECT_EQ(summary(g, gpu)[1], "w1 -> padded ! 'fc1' (Gemm) runs f32 math, not on the matrix units");
  Graph bf = parse(layoutGraph("bf16"));
  auto tpu = candidatesOf(bf, target("tpu-v4"), ActionKind::kSetLayout, true);
  EXPECT_TRUE(candidatesOf(bf, target("tpu-v4"), ActionKind::kSetLayout).empty());
  EXPECT_EQ(summary(bf, tpu)[1], "w1 -> padded ! XLA lays out and pads dot operands to the MXU tile by itself");
  // With bf16 (8-element alignment on the H200) w2's K = 8 and N = 16 are still aligned.
  auto h200 = summary(bf, candidatesOf(bf, target("h200"), ActionKind::kSetLayout));
  EXPECT_EQ(h200, (std::vector<std::string>{"w1 -> padded"}));
}

TEST(SetLayout, ApplyRefusesNonWeightsAndLeavesTheGraphAlone) {
  Graph g = parse(layoutGraph());
  Target t = target("x86-64");
  std::string before = printGraph(g);
  Action a;
  a.kind = ActionKind::kSetLayout;
  a.value = valueNamed(g, "b1");
  a.choice = "packed";
  Status st = applyAction(g, t, a);
  ASSERT_FALSE(st.isOk());
  EXPECT_NE(st.message().find("not a GEMM weight"), std::string::npos) << st.message();
  a.value = valueNamed(g, "w1");
  a.choice = "padded";
  st = applyAction(g, t, a);
  ASSERT_FALSE(st.isOk());
  EXPECT_NE(st.message().find("no padded layout"), std::string::npos) << st.message();
  EXPECT_EQ(printGraph(g), before);
}

// The first legal candidate that moves a weight to `layout`, if any.
std::optional<Action> nextTo(const Graph& g, const Target& t, const std::string& layout) {
  for (const Candidate& c : candidatesOf(g, t, ActionKind::kSetLayout)) {
    if (c.action.choice == layout) return c.action;
  }
  return std::nullopt;
}

// Moves every weight it can to `layout`, one apply at a time (ids are
// re-enumerated after each); returns how many moved.
int applyAll(Graph& g, const Target& t, const std::string& layout) {
  int moved = 0;
  while (auto a = nextTo(g, t, layout)) {
    Status st = applyAction(g, t, *a);
    if (!st.isOk()) {
      ADD_FAILURE() << st.message();
      break;
    }
    ++moved;
  }
  return moved;
}

TEST(SetLayout, HandWrittenGraphComputesExactlyTheSame) {
  Graph g = parse(layoutGraph());
  Graph packed = g;
  EXPECT_EQ(applyAll(packed, target("x86-64"), "packed"), 2);
  expectSameOutputs(g, packed, randomInputs(g, 3, 1), 0, 0);
  Graph tf32 = parse(layoutGraph("tf32"));
  Graph padded = tf32;
  EXPECT_EQ(applyAll(padded, target("h200"), "padded"), 1);
  expectSameOutputs(tf32, padded, randomInputs(g, 3, 1), 0, 0);
}

TEST(SetLayout, ZooModelsComputeExactlyTheSame) {
  for (const char* model : {"dlrm_criteo", "xdeepfm"}) {
    Graph g = zoo(model);
    Graph packed = g;
    EXPECT_GT(applyAll(packed, target("x86-64"), "packed"), 2) << model;
    expectSameOutputs(g, packed, zooInputs(model), 0, 0);
    // Tensor-core math first (the precondition of padding), then pad.
    Graph f16 = g;
    for (Node& n : f16.mutableNodes()) {
      if (n.op == OpKind::kGemm || n.op == OpKind::kMatMul) n.mir.math = Precision::kF16;
    }
    Graph padded = f16;
    EXPECT_GT(applyAll(padded, target("h200"), "padded"), 0) << model;
    expectSameOutputs(f16, padded, zooInputs(model), 0, 0);
  }
}

}  // namespace
}  // namespace cagr
