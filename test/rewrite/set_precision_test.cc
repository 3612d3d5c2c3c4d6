// set_precision: math modes of GEMM-like nodes and CIN, storage of embedding
// tables; golden IR, near misses with reasons, and the stated error bounds
// checked on the reference executor (which emulates the precisions) for a
// hand-written graph and every zoo model.
#include <cmath>
#include <cstdlib>

#include "rewrite/rewrite_test_util.h"

namespace cagr {
namespace {

using namespace rwtest;

// fc1 -> relu, an embedding bag, concat, top MatMul -> sigmoid.
const char* kModel = R"mlir(
"builtin.module"() ({
  "cagr.graph"() ({
  ^bb0(%x: tensor<?x4xf32>, %ids: tensor<?x2xi64>):
    %w1 = "cagr.constant"() {name = "w1", value = dense<[[0.31, -0.72, 0.45, 0.13], [0.92, 0.27, -0.38, 0.61], [-0.55, 0.83, 0.17, -0.29]]> : tensor<3x4xf32>} : () -> tensor<3x4xf32>
    %b1 = "cagr.constant"() {name = "b1", value = dense<[0.11, -0.07, 0.05]> : tensor<3xf32>} : () -> tensor<3xf32>
    %h = "cagr.gemm"(%x, %w1, %b1) {name = "fc1", transB = 1 : i64} : (tensor<?x4xf32>, tensor<3x4xf32>, tensor<3xf32>) -> tensor<?x3xf32>
    %r = "cagr.relu"(%h) {name = "relu1"} : (tensor<?x3xf32>) -> tensor<?x3xf32>
    %e = "cagr.constant"() {name = "emb", value = dense<[[0.12, -0.33, 0.71], [0.58, 0.09, -0.44], [-0.91, 0.36, 0.27], [0.15, -0.62, 0.84], [0.47, 0.53, -0.18]]> : tensor<5x3xf32>} : () -> tensor<5x3xf32>
    %bag = "cagr.embedding_bag"(%e, %ids) {name = "bag", mode = "sum"} : (tensor<5x3xf32>, tensor<?x2xi64>) -> tensor<?x3xf32>
    %c = "cagr.concat"(%r, %bag) {name = "cat", axis = 1 : i64} : (tensor<?x3xf32>, tensor<?x3xf32>) -> tensor<?x6xf32>
    %w2 = "cagr.constant"() {name = "w2", value = dense<[[0.41], [-0.26], [0.73], [0.19], [-0.57], [0.34]]> : tensor<6x1xf32>} : () -> tensor<6x1xf32>
    %t = "cagr.matmul"(%c, %w2) {name = "top"} : (tensor<?x6xf32>, tensor<6x1xf32>) -> tensor<?x1xf32>
    %p = "cagr.sigmoid"(%t) {name = "prob"} : (tensor<?x1xf32>) -> tensor<?x1xf32>
    "cagr.return"(%p) : (tensor<?x1xf32>) -> ()
  }) {sym_name = "main", input_names = ["x", "ids"], input_dims = ["N,4", "N,2"], output_names = ["prob"], symbols = ["N"]} : () -> ()
}) : () -> ()
)mlir";

// A CIN (CUDA has no tf32 CIN kernel), a MatMul pinned to an f32-only
// kernel, an Interaction, and a MatMul whose output is the graph output.
const char* kMisses = R"mlir(
"builtin.module"() ({
  "cagr.graph"() ({
  ^bb0(%x: tensor<?x2x3xf32>):
    %cw = "cagr.constant"() {elided, name = "cw"} : () -> tensor<2x4xf32>
    %c = "cagr.cin"(%x, %x, %cw) {name = "cin"} : (tensor<?x2x3xf32>, tensor<?x2x3xf32>, tensor<2x4xf32>) -> tensor<?x2x3xf32>
    %f = "cagr.flatten"(%c) {name = "flat"} : (tensor<?x2x3xf32>) -> tensor<?x6xf32>
    %w2 = "cagr.constant"() {elided, name = "w2"} : () -> tensor<6x1xf32>
    %k = "cagr.matmul"(%f, %w2) {name = "small", cagr.kernel = "nvrtc.gemm_small"} : (tensor<?x6xf32>, tensor<6x1xf32>) -> tensor<?x1xf32>
    %i = "cagr.interaction"(%c) {name = "dot"} : (tensor<?x2x3xf32>) -> tensor<?x1xf32>
    %s = "cagr.add"(%k, %i) {name = "sum"} : (tensor<?x1xf32>, tensor<?x1xf32>) -> tensor<?x1xf32>
    %w3 = "cagr.constant"() {elided, name = "w3"} : () -> tensor<1x1xf32>
    %o = "cagr.matmul"(%s, %w3) {name = "head"} : (tensor<?x1xf32>, tensor<1x1xf32>) -> tensor<?x1xf32>
    "cagr.return"(%o) : (tensor<?x1xf32>) -> ()
  }) {sym_name = "main", input_names = ["x"], input_dims = ["N,2,3"], output_names = ["y"], symbols = ["N"]} : () -> ()
}) : () -> ()
)mlir";

// What a candidate acts on: "node:fc1" or "table:emb".
std::string subject(const Graph& g, const Action& a) {
  if (a.value != kNoValue) return "value:" + g.value(a.value).name;
  return a.nodes.empty() ? "?" : "node:" + g.node(a.nodes.front()).name;
}

// The precision a choice names (its first word) and the bound it states.
std::string choicePrecision(const std::string& choice) {
  return choice.substr(0, choice.find(' '));
}
double statedBound(const std::string& choice) {
  size_t at = choice.find("<= ");
  return at == std::string::npos ? 0.0 : std::strtod(choice.c_str() + at + 3, nullptr);
}

// Legal candidates as "subject -> precision"; near misses with " ! reason".
std::vector<std::string> listed(const Graph& g, const std::vector<Candidate>& cs) {
  std::vector<std::string> out;
  for (const Candidate& c : cs) {
    std::string s = subject(g, c.action) + " -> " + choicePrecision(c.action.choice);
    out.push_back(c.legal() ? s : s + " ! " + c.reason);
  }
  return out;
}

Action pick(const Graph& g, const Target& t, const std::string& what, const std::string& precision) {
  for (const Candidate& c : candidatesOf(g, t, ActionKind::kSetPrecision)) {
    if (subject(g, c.action) == what && choicePrecision(c.action.choice) == precision) return c.action;
  }
  ADD_FAILURE() << "no legal candidate " << what << " -> " << precision;
  return Action{};
}

TEST(SetPrecision, OffersWhatTheTargetRuns) {
  Graph g = parse(kModel);
  using V = std::vector<std::string>;
  EXPECT_EQ(listed(g, candidatesOf(g, target("h200"), ActionKind::kSetPrecision)),
            (V{"node:fc1 -> tf32", "node:fc1 -> bf16", "node:fc1 -> f16", "node:top -> tf32", "node:top -> bf16",
               "node:top -> f16", "value:emb -> bf16", "value:emb -> f16", "value:emb -> int8_rowwise"}));
  EXPECT_EQ(listed(g, candidatesOf(g, target("x86-64"), ActionKind::kSetPrecision)),
            (V{"value:emb -> bf16", "value:emb -> f16", "value:emb -> int8_rowwise"}));
  EXPECT_EQ(listed(g, candidatesOf(g, target("tpu-v4"), ActionKind::kSetPrecision)),
            (V{"node:fc1 -> bf16", "node:top -> bf16", "value:emb -> bf16", "value:emb -> int8_rowwise"}));
  for (const Candidate& c : candidatesOf(g, target("h200"), ActionKind::kSetPrecision)) {
    EXPECT_GT(statedBound(c.action.choice), 0.0) << "no stated bound in '" << c.action.choice << "'";
  }
}

TEST(SetPrecision, GoldenMathAndStorage) {
  Graph g = parse(kModel);
  Target t = target("h200");
  Graph math = applied(g, t, pick(g, t, "node:fc1", "bf16"));
  expectGolden(math, "set_precision_math.mlir");
  Graph both = applied(math, t, pick(math, t, "value:emb", "int8_rowwise"));
  expectGolden(both, "set_precision_storage.mlir");
  // fc1 now offers the other modes and the way back to f32.
  auto again = listed(both, candidatesOf(both, t, ActionKind::kSetPrecision));
  EXPECT_EQ(std::vector<std::string>(again.begin(), again.begin() + 3),
            (std::vector<std::string>{"node:fc1 -> f32", "node:fc1 -> tf32", "node:fc1 -> f16"}));
}

TEST(SetPrecision, NearMissesSayWhy) {
  Graph g = parse(kMisses);
  auto all = listed(g, candidatesOf(g, target("h200"), ActionKind::kSetPrecision, /*explain=*/true));
  auto has = [&](const std::string& line) {
    EXPECT_NE(std::find(all.begin(), all.end(), line), all.end()) << "missing: " << line;
  };
  has("node:cin -> tf32");  // nvrtc.cin runs tf32 on tensor cores (wmma)
  has("node:cin -> bf16");
  has("node:small -> bf16 ! 'small' (MatMul) runs nvrtc.gemm_small, which has no bf16 math");
  has("node:dot -> bf16 ! 'dot' (Interaction) has no math mode: only GEMM-like ops and CIN run on matrix units");
  has("node:head -> f16 ! 'head' (MatMul): its output %y is a graph output");
  has("value:w2 -> bf16 ! %w2 is operand #1 of 'small' (MatMul): storage precision is for embedding tables only");
  Graph m = parse(kModel);
  auto cpu = listed(m, candidatesOf(m, target("x86-64"), ActionKind::kSetPrecision, true));
  EXPECT_EQ(cpu.front(), "node:fc1 -> tf32 ! 'fc1' (Gemm): x86-64 has no tf32 math");
  auto tpu = listed(m, candidatesOf(m, target("tpu-v4"), ActionKind::kSetPrecision, true));
  EXPECT_NE(std::find(tpu.begin(), tpu.end(), "value:emb -> f16 ! tpu-v4 has no f16 storage"), tpu.end());
}

TEST(SetPrecision, ApplyRefusesWhatItDidNotOfferAndLeavesTheGraphAlone) {
  Graph g = parse(kMisses);
  Target t = target("h200");
  std::string before = printGraph(g);
  Action a = pick(g, t, "node:cin", "bf16");
  a.choice = "int8_rowwise";  // a storage precision, no math mode
  Status st = applyAction(g, t, a);
  ASSERT_FALSE(st.isOk());
  EXPECT_NE(st.message().find("int8_rowwise"), std::string::npos) << st.message();
  a.nodes.clear();
  a.value = g.nodes()[0].inputs[2];  // the CIN weight is no table
  a.choice = "int8_rowwise";
  EXPECT_FALSE(applyAction(g, t, a).isOk());
  EXPECT_EQ(printGraph(g), before);
}

// Applies every legal candidate that sets `precision` (of storage when
// `storage`, else of math), re-enumerating after each. Returns how many and
// the bound they state (the largest).
int applyEvery(Graph& g, const Target& t, const std::string& precision, bool storage, double& bound) {
  int n = 0;
  for (bool again = true; again;) {
    again = false;
    for (const Candidate& c : candidatesOf(g, t, ActionKind::kSetPrecision)) {
      if ((c.action.value != kNoValue) != storage || choicePrecision(c.action.choice) != precision) continue;
      bound = std::max(bound, statedBound(c.action.choice));
      Status st = applyAction(g, t, c.action);
      EXPECT_TRUE(st.isOk()) << st.message();
      again = st.isOk();
      n += again ? 1 : 0;
      break;
    }
  }
  return n;
}

// max |got - want| / max |want| over the graph outputs.
double outputError(const std::vector<Tensor>& want, const Graph& g,
                   const std::vector<std::pair<std::string, Tensor>>& in) {
  auto got = runReference(g, in);
  EXPECT_TRUE(got.isOk()) << got.status().message();
  if (!got.isOk()) return INFINITY;
  double worst = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    double scale = 0, err = 0;
    for (int64_t k = 0; k < want[i].numel(); ++k) {
      scale = std::max(scale, std::fabs(want[i].getF64(k)));
      err = std::max(err, std::fabs((*got)[i].getF64(k) - want[i].getF64(k)));
    }
    worst = std::max(worst, scale > 0 ? err / scale : err);
  }
  return worst;
}

struct Kind {
  const char* precision;
  bool storage;
};
constexpr Kind kKinds[] = {{"tf32", false}, {"bf16", false}, {"f16", false},
                           {"bf16", true},  {"f16", true},   {"int8_rowwise", true}};

using Inputs = std::vector<std::pair<std::string, Tensor>>;

// Checks every kind on `g` (h200 runs them all) against each input set;
// returns the number of kinds that found candidates.
int checkBounds(const Graph& g, const std::string& what, const std::vector<Inputs>& inputSets) {
  std::vector<std::vector<Tensor>> want;  // the all-f32 outputs
  for (const Inputs& in : inputSets) {
    auto r = runReference(g, in);
    if (!r.isOk()) ADD_FAILURE() << what << ": " << r.status().message();
    want.push_back(r.isOk() ? std::move(*r) : std::vector<Tensor>{});
  }
  int kinds = 0;
  for (const Kind& k : kKinds) {
    Graph h = g;
    double bound = 0;
    int n = applyEvery(h, target("h200"), k.precision, k.storage, bound);
    if (n == 0) continue;
    ++kinds;
    for (size_t i = 0; i < inputSets.size(); ++i) {
      double err = outputError(want[i], h, inputSets[i]);
      std::string label = what + " inputs #" + std::to_string(i) + ": " + std::to_string(n) + " x " + k.precision +
                          (k.storage ? " storage" : " math");
      EXPECT_LE(err, bound) << label << " (measured " << err << ")";
      EXPECT_GT(err, 0.0) << label << ": the reference run did not change at all";
      if (std::getenv("CAGR_PRINT_ERRORS") != nullptr)
        std::printf("%s: error %.3g (bound %g)\n", label.c_str(), err, bound);
    }
  }
  return kinds;
}

TEST(SetPrecision, HandWrittenGraphStaysWithinTheStatedBounds) {
  Graph g = parse(kModel);
  EXPECT_EQ(checkBounds(g, "hand-written", {randomInputs(g, 16, 5)}), 6);
}

TEST(SetPrecision, ZooModelsStayWithinTheStatedBounds) {
  const std::pair<const char*, int> models[] = {{"dlrm_criteo", 6}, {"dlrm_avazu", 6}, {"deepfm", 6},
                                                {"xdeepfm", 6},     {"dcnv2", 6},      {"wide_deep", 6},
                                                {"autoint", 6},     {"ngcf", 3}};  // ngcf: no tables
  for (const auto& [model, kinds] : models) {
    EXPECT_EQ(checkBounds(zoo(model), model, {zooInputs(model, 4), zooInputs(model, 7)}), kinds) << model;
  }
}

}  // namespace
}  // namespace cagr
