// The CPU backend's GEMM step (src/backends/cpu/gemm_step.cc): every anchor
// form (Gemm with transposes / alpha / beta / C broadcasts, batched and
// broadcast MatMul, Conv1x1, Einsum contractions) and epilogue shape (chains
// oneDNN fuses, ones it cannot, BatchNorm, views, intermediate outputs) on
// each GEMM kernel, against the reference executor; kernelReport() must
// name the kernel, so a silent fallback to the reference step fails.
#include <gtest/gtest.h>

#include <random>

#include "../rewrite/rewrite_test_util.h"
#include "cagr/backend.h"

namespace cagr {
namespace {

// Builds small graphs node by node; weights are random constants.
class Builder {
 public:
  ValueId input(const std::string& name, std::vector<Dim> dims) {
    return g.addInput(name, TensorType{DType::kF32, std::move(dims)});
  }
  ValueId weight(const std::string& name, std::vector<int64_t> shape) {
    Tensor t(DType::kF32, std::move(shape));
    std::uniform_real_distribution<float> u(-1, 1);
    for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = u(rng_);
    return g.addConstant(name, std::move(t));
  }
  ValueId op(OpKind k, std::vector<ValueId> in, Attrs a = {}) {
    auto v = g.add(k, std::move(in), std::move(a), "n" + std::to_string(g.nodes().size()));
    EXPECT_TRUE(v.isOk()) << v.status().message();
    return v.isOk() ? *v : kNoValue;
  }
  /// Puts the producers of `values` into one group running `kernel`.
  void group(const std::vector<ValueId>& values, const std::string& kernel = "auto") {
    KernelId k = 0;
    if (kernel != "auto") k = *kernelByName(kernel);
    for (ValueId v : values) {
      Node& n = g.mutableNodes()[static_cast<size_t>(g.value(v).producer)];
      n.mir.group = label_;
      n.mir.kernel = k;
    }
    ++label_;
  }
  Graph g;

 private:
  std::mt19937 rng_{5};
  int32_t label_ = 0;
};

Attrs ints(std::initializer_list<std::pair<const char*, int64_t>> kv) {
  Attrs a;
  for (const auto& [k, v] : kv) a.set(k, v);
  return a;
}

// Runs `g` on the CPU backend at `batch` and expects the reference's outputs
// and a kernel line starting with `kernel`.
void expectRuns(const Graph& g, int64_t batch, const std::string& kernel, double rtol = 1e-4) {
  auto backend = makeBackend("cpu");
  ASSERT_TRUE(backend.isOk());
  auto exe = (*backend)->compile(g);
  ASSERT_TRUE(exe.isOk()) << exe.status().message();
  auto inputs = rwtest::randomInputs(g, batch, 1, static_cast<unsigned>(batch));
  auto got = (*exe)->run(inputs);
  ASSERT_TRUE(got.isOk()) << got.status().message();
  auto want = runReference(g, inputs);
  ASSERT_TRUE(want.isOk()) << want.status().message();
  ASSERT_EQ(got->size(), want->size());
  for (size_t i = 0; i < want->size(); ++i) {
    auto cmp = compareTensors((*got)[i], (*want)[i], 1e-5, rtol);
    EXPECT_TRUE(cmp.close) << kernel << " batch " << batch << " output " << i << ": " << cmp.message;
  }
  std::string report;
  bool found = false;
  for (const std::string& line : (*exe)->kernelReport()) {
    report += line + "; ";
    found = found || line.rfind(kernel, 0) == 0;
  }
  EXPECT_TRUE(found) << "no kernel '" << kernel << "' in: " << report;
}

const char* kGemmKernels[] = {"auto", "onednn.matmul", "own.gemm"};

std::string expectedName(const std::string& kernel) {
  return kernel == "auto" ? "onednn.matmul" : kernel;
}

// A GEMM + ReLU: the own kernel fuses it; oneDNN's ReLU post-op is max(x, 0),
// which drops NaN, so oneDNN's matmul leaves it to the epilogue pass.
std::string withRelu(const std::string& kernel) {
  const std::string k = expectedName(kernel);
  return k == "onednn.matmul" ? k + " then own.epilogue(relu)" : k + "+relu";
}

// Gemm + bias + ReLU, the MLP layer, on every kernel and batch (oneDNN: ReLU in the epilogue pass).
TEST(CpuGemm, GemmBiasReluOnEveryKernel) {
  for (const char* kernel : kGemmKernels) {
    Builder b;
    ValueId x = b.input("x", {kBatch, 37});
    ValueId y = b.op(OpKind::kGemm, {x, b.weight("w", {70, 37}), b.weight("b", {70})}, ints({{"transB", 1}}));
    ValueId r = b.op(OpKind::kRelu, {y});
    b.group({y, r}, kernel);
    b.g.addOutput(r, "out");
    for (int64_t batch : {1, 7, 300}) expectRuns(b.g, batch, withRelu(kernel));
  }
}

// OpenBLAS runs the product; views may follow it in the group.
TEST(CpuGemm, OpenBlasWithViews) {
  Builder b;
  ValueId x = b.input("x", {kBatch, 12});
  ValueId y = b.op(OpKind::kGemm, {x, b.weight("w", {12, 8}), b.weight("c", {8})});
  ValueId v = b.op(OpKind::kReshape, {y}, [] {
    Attrs a;
    a.set("shape", std::vector<int64_t>{-1, 2, 4});
    return a;
  }());
  b.group({y, v}, "openblas.sgemm");
  b.g.addOutput(v, "out");
  for (int64_t batch : {1, 65, 700}) expectRuns(b.g, batch, "openblas.sgemm");
}

// transA / transB, alpha and beta, and C as a column vector, a row, a full
// matrix (a graph input) and a scalar; Gemm without C.
TEST(CpuGemm, GemmTransposesScalingAndCBroadcasts) {
  for (const char* kernel : {"auto", "own.gemm", "openblas.sgemm"}) {
    for (int c = 0; c < 5; ++c) {
      Builder b;
      ValueId a = b.input("a", {9, kBatch});  // transA: A is [K, M]
      ValueId w = b.weight("w", {9, 6});
      std::vector<ValueId> in{a, w};
      if (c == 0) in.push_back(b.weight("c", {6}));
      if (c == 1) in.push_back(b.weight("c", {1, 6}));
      if (c == 2) in.push_back(b.input("c", {kBatch, 6}));
      if (c == 3) in.push_back(b.weight("c", {}));
      Attrs at = ints({{"transA", 1}});
      at.set("alpha", 0.5);
      at.set("beta", -2.0);
      ValueId y = b.op(OpKind::kGemm, in, at);
      b.group({y}, kernel);
      b.g.addOutput(y, "out");
      for (int64_t batch : {1, 33}) expectRuns(b.g, batch, expectedName(kernel));
    }
  }
}

TEST(CpuGemm, GemmTransposedBothWays) {
  for (const char* kernel : kGemmKernels) {
    Builder b;
    ValueId a = b.input("a", {20, kBatch});
    ValueId y = b.op(OpKind::kGemm, {a, b.weight("w", {11, 20})}, ints({{"transA", 1}, {"transB", 1}}));
    ValueId s = b.op(OpKind::kSigmoid, {y});
    b.group({y, s}, kernel);
    b.g.addOutput(s, "out");
    for (int64_t batch : {1, 40}) expectRuns(b.g, batch, expectedName(kernel));
  }
}

// Batched MatMul with a scalar divide (attention scores), a shared weight
// (batch folded into M), broadcast batch dims and a 1-D operand.
TEST(CpuGemm, BatchedAndBroadcastMatMul) {
  for (const char* kernel : kGemmKernels) {
    Builder b;
    ValueId q = b.input("q", {kBatch, 2, 5, 4});
    ValueId k = b.input("k", {kBatch, 2, 4, 6});
    ValueId s = b.op(OpKind::kMatMul, {q, k});
    ValueId d = b.op(OpKind::kDiv, {s, b.weight("scale", {})});
    b.group({s, d}, kernel);
    ValueId x = b.input("x", {kBatch, 5, 4});
    ValueId lin = b.op(OpKind::kMatMul, {x, b.weight("w", {4, 3})});
    b.group({lin}, kernel);
    ValueId bc = b.op(OpKind::kMatMul, {b.input("p", {kBatch, 1, 5, 4}), b.weight("w3", {2, 4, 3})});
    b.group({bc}, kernel);
    ValueId vec = b.op(OpKind::kMatMul, {b.weight("v", {4}), b.input("xs", {kBatch, 4, 3})});
    ValueId vr = b.op(OpKind::kRelu, {vec});
    b.group({vec, vr}, kernel);
    for (ValueId o : {d, lin, bc, vr}) b.g.addOutput(o, "o" + std::to_string(o));
    for (int64_t batch : {1, 9}) expectRuns(b.g, batch, expectedName(kernel));
  }
}

// Conv1x1 (weight x batch of [Cin, L]) with its per-channel bias, then ReLU.
TEST(CpuGemm, Conv1x1WithBias) {
  for (const char* kernel : kGemmKernels) {
    Builder b;
    ValueId x = b.input("x", {kBatch, 6, 16});
    ValueId y = b.op(OpKind::kConv1x1, {x, b.weight("w", {10, 6, 1}), b.weight("b", {10})});
    ValueId r = b.op(OpKind::kRelu, {y});
    b.group({y, r}, kernel);
    b.g.addOutput(r, "out");
    for (int64_t batch : {1, 5}) expectRuns(b.g, batch, withRelu(kernel));
  }
}

// Einsum contractions become batched products (a batched matmul, and x W^T
// through strides); an outer product (no summed letter) is declined and
// runs on the reference step.
TEST(CpuGemm, EinsumContractionsAndDeclines) {
  struct Case {
    const char* equation;
    std::vector<Dim> a, b;
    const char* kernel;
  };
  const Case cases[] = {{"bij,bjk->bik", {kBatch, 3, 4}, {kBatch, 4, 5}, "onednn.matmul"},
                        {"bfd,ed->bfe", {kBatch, 4, 5}, {7, 5}, "onednn.matmul"},
                        {"bhd,bmd->bhmd", {kBatch, 2, 4}, {kBatch, 3, 4}, "reference:Einsum"}};
  for (const Case& c : cases) {
    Builder b;
    Attrs eq;
    eq.set("equation", std::string(c.equation));
    b.g.addOutput(b.op(OpKind::kEinsum, {b.input("x", c.a), b.input("y", c.b)}, eq), "out");
    expectRuns(b.g, 6, c.kernel);
  }
}

// DCN-v2 cross layer: x * (W x + b) + x, with x the GEMM's own input; and a
// chain oneDNN cannot take whole (c - y, then Erf).
TEST(CpuGemm, EpiloguesWithFullOperands) {
  for (const char* kernel : kGemmKernels) {
    Builder b;
    ValueId x = b.input("x", {kBatch, 24});
    ValueId y = b.op(OpKind::kGemm, {x, b.weight("w", {24, 24}), b.weight("b", {24})}, ints({{"transB", 1}}));
    ValueId m = b.op(OpKind::kMul, {x, y});
    ValueId a = b.op(OpKind::kAdd, {m, x});
    b.group({y, m, a}, kernel);
    b.g.addOutput(a, "cross");
    for (int64_t batch : {1, 50}) expectRuns(b.g, batch, expectedName(kernel) + "+mul+add");
  }
  Builder b;
  ValueId x = b.input("x", {kBatch, 16});
  ValueId y = b.op(OpKind::kGemm, {x, b.weight("w", {16, 8})});
  ValueId s = b.op(OpKind::kSub, {b.weight("c", {8}), y});
  ValueId e = b.op(OpKind::kErf, {s});
  b.group({y, s, e}, "own.gemm");
  b.g.addOutput(e, "out");
  expectRuns(b.g, 20, "own.gemm+sub+erf");
}

// Every activation oneDNN has a post-op for, fused after the bias.
TEST(CpuGemm, ActivationPostOps) {
  Attrs leaky;
  leaky.set("alpha", 0.2);
  Attrs clip;
  clip.set("min", -0.3);
  clip.set("max", 0.4);
  Attrs gtanh;
  gtanh.set("approximate", std::string("tanh"));
  const std::vector<std::pair<OpKind, Attrs>> acts = {
      {OpKind::kLeakyRelu, leaky}, {OpKind::kSigmoid, {}}, {OpKind::kTanh, {}}, {OpKind::kGelu, {}},
      {OpKind::kGelu, gtanh},      {OpKind::kClip, clip},  {OpKind::kAbs, {}}};
  for (const auto& [act, attrs] : acts) {
    for (const char* kernel : {"onednn.matmul", "own.gemm"}) {
      Builder b;
      ValueId x = b.input("x", {kBatch, 32});
      ValueId y = b.op(OpKind::kGemm, {x, b.weight("w", {32, 48}), b.weight("b", {48})});
      ValueId r = b.op(act, {y}, attrs);
      b.group({y, r}, kernel);
      b.g.addOutput(r, "out");
      expectRuns(b.g, 64, std::string(kernel) + "+" + opInfo(act).mnemonic);
    }
  }
}

// Operands broadcast per row ([N, 1]) and per element; Max / Min; a value
// inside the group that is also needed outside; a non-chain epilogue (the
// first member does not read the GEMM), and BatchNorm.
TEST(CpuGemm, GeneralEpilogues) {
  for (const char* kernel : {"auto", "own.gemm"}) {
    Builder b;
    ValueId x = b.input("x", {kBatch, 10});
    ValueId row = b.input("row", {kBatch, 1});
    ValueId other = b.input("other", {kBatch, 6});
    ValueId y = b.op(OpKind::kGemm, {x, b.weight("w", {10, 6}), b.weight("b", {6})});
    ValueId mx = b.op(OpKind::kMax, {y, row});
    ValueId mn = b.op(OpKind::kMin, {mx, b.weight("cap", {1, 6})});
    ValueId side = b.op(OpKind::kAdd, {other, row});  // reads no member
    ValueId sum = b.op(OpKind::kAdd, {side, mn});
    ValueId bn = b.op(OpKind::kBatchNorm, {sum, b.weight("s", {6}), b.weight("bb", {6}), b.weight("m", {6}), [&] {
                                             Tensor v(DType::kF32, {6});
                                             for (int i = 0; i < 6; ++i) v.data<float>()[i] = 0.5f + 0.1f * i;
                                             return b.g.addConstant("v", std::move(v));
                                           }()});
    b.group({y, mx, mn, side, sum, bn}, kernel);
    b.g.addOutput(bn, "out");
    b.g.addOutput(b.op(OpKind::kNeg, {mx}), "outside");  // mx leaves the group too
    for (int64_t batch : {1, 77}) expectRuns(b.g, batch, expectedName(kernel));
  }
}

// Views inside the group: of the GEMM output (the next op broadcasts in the
// viewed shape) and of a value from outside (read through the view's shape).
TEST(CpuGemm, ViewsInsideTheGroup) {
  for (const char* kernel : kGemmKernels) {
    Builder b;
    ValueId x = b.input("x", {kBatch, 5});
    ValueId y = b.op(OpKind::kGemm, {x, b.weight("w", {5, 6})});
    Attrs to3;
    to3.set("shape", std::vector<int64_t>{-1, 2, 3});
    ValueId y3 = b.op(OpKind::kReshape, {y}, to3);
    ValueId s = b.op(OpKind::kAdd, {y3, b.weight("per3", {3})});
    Attrs to6;
    to6.set("shape", std::vector<int64_t>{-1, 6});
    ValueId z6 = b.op(OpKind::kReshape, {b.input("z", {kBatch, 2, 3})}, to6);
    Attrs flat;
    flat.set("axis", int64_t{1});
    ValueId s6 = b.op(OpKind::kFlatten, {s}, flat);
    ValueId out = b.op(OpKind::kMul, {s6, z6});
    b.group({y, y3, s, z6, s6, out}, kernel);
    b.g.addOutput(out, "out");
    for (int64_t batch : {1, 19}) expectRuns(b.g, batch, expectedName(kernel));
  }
}

// The GEMM output itself leaves the group as well as its activation.
TEST(CpuGemm, AnchorOutputAlsoUsedOutside) {
  for (const char* kernel : kGemmKernels) {
    Builder b;
    ValueId x = b.input("x", {kBatch, 8});
    ValueId y = b.op(OpKind::kGemm, {x, b.weight("w", {8, 5}), b.weight("b", {5})});
    ValueId t = b.op(OpKind::kTanh, {y});
    b.group({y, t}, kernel);
    b.g.addOutput(t, "act");
    b.g.addOutput(y, "pre");
    // oneDNN writes the pre-activation (needed outside), the loop the tanh.
    expectRuns(b.g, 13, expectedName(kernel) == "own.gemm" ? "own.gemm+tanh" : "onednn.matmul then own.epilogue(tanh)");
  }
}

// Packed weights (set_layout) hold the same values in the kernel's layout.
TEST(CpuGemm, PackedWeights) {
  for (const char* kernel : kGemmKernels) {
    Builder b;
    ValueId x = b.input("x", {kBatch, 300});
    ValueId w = b.weight("w", {270, 300});
    b.g.mutableValue(w).mir.layout = Layout::kPacked;
    ValueId y = b.op(OpKind::kGemm, {x, w, b.weight("b", {270})}, ints({{"transB", 1}}));
    ValueId r = b.op(OpKind::kRelu, {y});
    b.group({y, r}, kernel);
    b.g.addOutput(r, "out");
    for (int64_t batch : {1, 100, 257}) expectRuns(b.g, batch, withRelu(kernel));
  }
}

// A table with reduced storage read as a GEMM operand (NGCF multiplies its
// embedding tables): the step uses the stored values, as the reference does.
TEST(CpuGemm, ReducedPrecisionConstantOperand) {
  for (Precision p : {Precision::kBF16, Precision::kF16, Precision::kInt8Rowwise}) {
    Builder b;
    ValueId table = b.weight("table", {40, 16});
    b.g.mutableValue(table).mir.storage = p;
    ValueId y = b.op(OpKind::kGemm, {table, b.weight("w", {16, 16}), b.weight("b", {16})}, ints({{"transB", 1}}));
    ValueId l = b.op(OpKind::kLeakyRelu, {y});
    b.group({y, l});
    ValueId x = b.input("x", {kBatch, 40});
    ValueId out = b.op(OpKind::kMatMul, {x, l});
    b.g.addOutput(out, "out");
    expectRuns(b.g, 3, "onednn.matmul+leaky_relu");
  }
}

// Groups the step does not run fall back to the reference step.
TEST(CpuGemm, DeclinesNonF32Epilogues) {
  Builder b;
  ValueId x = b.input("x", {kBatch, 4});
  ValueId y = b.op(OpKind::kGemm, {x, b.weight("w", {4, 3})});
  Attrs to;
  to.set("to", std::string("f64"));
  ValueId c = b.op(OpKind::kCast, {y}, to);
  b.group({y, c}, "own.gemm");
  b.g.addOutput(c, "out");
  expectRuns(b.g, 2, "reference:Gemm+Cast");
}

}  // namespace
}  // namespace cagr
