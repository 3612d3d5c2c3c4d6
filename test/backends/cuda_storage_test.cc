// 16-bit activation storage (cuda_storage.cc, storeReducedActivations):
// which values a bf16 plan stores in bf16 — a one-id-per-bag lookup of bf16
// tables, and GEMM outputs that only bf16-math cuBLASLt GEMMs read — and
// which it must not (pooled bags, f32 tables, a reader that does not round,
// f32 math, a graph output); the lowering that follows (16-bit cuBLASLt
// operands and outputs, weights uploaded in bf16 and the bias of a 16-bit
// output too, halved arena bytes, the lookup kernel's bf16 stores through
// NVRTC); the zoo's bf16 plans. With a GPU: the run against the reference
// executor with those biases rounded, and within the plan's bf16 bound of
// the one without; bf16 tables pooled into f32 columns (skips without a GPU).
#include <gtest/gtest.h>

#include <cmath>

#ifdef CAGR_HAVE_CUDA

#include <algorithm>

#include "../rewrite/rewrite_test_util.h"
#include "backends/cpu_test_util.h"
#include "backends/cuda/codegen.h"
#include "backends/cuda/cuda_program.h"
#include "backends/cuda/cuda_weights.h"
#include "backends/cuda_test_util.h"
#include "cagr/policy.h"
#include "cagr/reference.h"
#include "support/scoped_env.h"

namespace cagr {
namespace {

using rectest::attrs;
using rectest::Builder;

using rwtest::h200;

struct Shape {
  int64_t pooling = 1;                  // ids per bag
  Precision tables = Precision::kBF16;  // storage of the embedding tables
  Precision math = Precision::kBF16;    // of the three GEMMs
  bool hiddenOut = false;               // the second hidden layer is a graph output too
  bool reluApart = false;               // the first layer's ReLU a kernel of its own
};

// DeepFM in small: ids [B, 3(, P)] -> one batched lookup of three 8-wide
// and three 1-wide tables [B, 27], cut into its embeddings [0, 24) (FM over
// [B, 3, 8], and an MLP 24 -> 32 -> 32 -> 1) and first-order weights
// [24, 27) (summed); the sum through a sigmoid.
Graph smallDeepFm(const Shape& s) {
  Builder b;
  std::vector<Dim> ids{kBatch, 3};
  if (s.pooling > 1) ids.push_back(s.pooling);
  ValueId x = b.input("ids", DType::kI64, ids);
  std::vector<ValueId> in;
  for (int i = 0; i < 3; ++i) in.push_back(b.table("e" + std::to_string(i), 40, 8, 10 + i, s.tables));
  for (int i = 0; i < 3; ++i) in.push_back(b.table("l" + std::to_string(i), 40, 1, 20 + i, s.tables));
  in.push_back(x);
  ValueId tbe = b.op(OpKind::kEmbeddingBags, in, "tbe",
                     attrs({{"num_tables", int64_t{6}},
                            {"mode", std::string("sum")},
                            {"slots", std::vector<int64_t>{0, 1, 2, 0, 1, 2}}}));
  auto cut = [&](int64_t begin, int64_t end, const char* name) {
    return b.op(OpKind::kSlice, {tbe}, name,
                attrs({{"starts", std::vector<int64_t>{begin}},
                       {"ends", std::vector<int64_t>{end}},
                       {"axes", std::vector<int64_t>{1}}}));
  };
  ValueId emb = cut(0, 24, "emb"), lin = cut(24, 27, "lin");
  ValueId fm = b.op(OpKind::kFM, {b.op(OpKind::kReshape, {emb}, "fields",
                                       attrs({{"shape", std::vector<int64_t>{0, 3, 8}}}))},
                    "fm");
  ValueId first = b.op(OpKind::kReduceSum, {lin}, "first",
                       attrs({{"axes", std::vector<int64_t>{1}}, {"keepdims", int64_t{1}}}));
  const Attrs t = attrs({{"transB", int64_t{1}}});
  auto layer = [&](ValueId a, int64_t k, int64_t n, int i) {
    std::string w = "w" + std::to_string(i), c = "c" + std::to_string(i);
    return b.op(OpKind::kGemm,
                {a, b.g.addConstant(w, rectest::uniform({n, k}, 30 + i, -0.3f, 0.3f)), b.constant(c, {n}, 40 + i)},
                "g" + std::to_string(i), t);
  };
  ValueId h1 = b.op(OpKind::kRelu, {layer(b.op(OpKind::kReshape, {emb}, "flat",
                                               attrs({{"shape", std::vector<int64_t>{-1, 24}}})),
                                          24, 32, 1)},
                    "r1");
  ValueId h2 = b.op(OpKind::kRelu, {layer(h1, 32, 32, 2)}, "r2");
  ValueId y = b.op(OpKind::kGemm, {h2, b.g.addConstant("w3", rectest::uniform({1, 32}, 33, -0.3f, 0.3f))}, "g3", t);
  ValueId sum = b.op(OpKind::kAdd, {b.op(OpKind::kAdd, {fm, first}, "a1"), y}, "a2");
  b.g.addOutput(b.op(OpKind::kSigmoid, {sum}, "prob"), "prob");
  if (s.hiddenOut) b.g.addOutput(h2, "h2");
  if (s.reluApart) {
    b.group({"g1"}, 0, "cublaslt.matmul");
  } else {
    b.group({"g1", "r1"}, 0, "cublaslt.matmul");
  }
  b.group({"g2", "r2"}, 1, "cublaslt.matmul");
  b.group({"g3"}, 2, "nvrtc.gemm_small");
  for (Node& n : b.g.mutableNodes()) {
    if (n.op == OpKind::kGemm && n.name != "g3") n.mir.math = s.math;
  }
  return b.g;
}

ValueId named(const Graph& g, const std::string& node) {
  for (const Node& n : g.nodes()) {
    if (n.name == node) return n.outputs[0];
  }
  ADD_FAILURE() << "no node " << node;
  return kNoValue;
}

Precision storedAs(const Graph& g, const std::string& node) { return g.value(named(g, node)).mir.storage; }

TEST(CudaReducedActivations, OneIdBagsOfBf16TablesAndLayersReadOnlyByBf16GemmsAreStoredBf16) {
  Graph g = smallDeepFm({});
  ASSERT_TRUE(verifyPlan(g, h200()).isOk()) << verifyPlan(g, h200()).message();
  auto marked = cuda::storeReducedActivations(g, h200());
  ASSERT_TRUE(marked.isOk()) << marked.status().message();
  // The embeddings and their two reshapes; r1 (read by g2 only). Not: the
  // first-order slice (a reduction reads it), r2 (the generated GEMM reads
  // it in f32), the products and the output.
  EXPECT_EQ(*marked, 4);
  for (const char* v : {"emb", "fields", "flat", "r1"}) EXPECT_EQ(storedAs(g, v), Precision::kBF16) << v;
  for (const char* v : {"lin", "r2", "g3", "fm", "first", "prob"}) EXPECT_EQ(storedAs(g, v), Precision::kF32) << v;

  auto p = cuda::lowerPlan(g, h200());
  ASSERT_TRUE(p.isOk()) << p.status().message();
  ASSERT_EQ(p->gemms.size(), 2u);
  for (const cuda::LibraryGemm& lg : p->gemms) EXPECT_EQ(lg.operands, Precision::kBF16);
  EXPECT_EQ(p->gemms[0].output, Precision::kBF16);  // g1 + ReLU into r1, one call
  EXPECT_EQ(p->gemms[0].act, cuda::Activation::kRelu);
  EXPECT_EQ(p->gemms[1].output, Precision::kF32);  // r2, read by the generated GEMM
  EXPECT_EQ(cuda::libraryGemmName(p->gemms[0]), "cublaslt.matmul+bias+relu (bf16 operands, bf16 out)");
  EXPECT_EQ(cuda::libraryGemmName(p->gemms[1]), "cublaslt.matmul+bias+relu (bf16 operands, f32 out)");
  // Both weights in bf16; g1's bias too (cuBLASLt takes a bf16 D's bias in
  // bf16), g2's (f32 output) stays f32.
  int bf16Weights = 0;
  for (const cuda::WeightFormat& f : p->weights) {
    if (!f.library) continue;
    const std::string& name = g.value(f.value).name;
    const bool reduced = name == "w1" || name == "w2" || name == "c1";
    EXPECT_EQ(f.element, reduced ? Precision::kBF16 : Precision::kF32) << name;
    if (reduced) {
      bf16Weights++;
      EXPECT_EQ(cuda::weightBytes(g, f), static_cast<size_t>(g.constant(f.value)->numel()) * 2) << name;
    }
  }
  EXPECT_EQ(bf16Weights, 3);

  // Arena: the embeddings and r1 take two bytes an element.
  SymbolBindings b;
  b.values = {0, 1000};
  auto a = cuda::planArena(g, *p, b);
  ASSERT_TRUE(a.isOk()) << a.status().message();
  EXPECT_EQ(a->bytes[static_cast<size_t>(named(g, "emb"))], 1000u * 24 * 2);
  EXPECT_EQ(a->bytes[static_cast<size_t>(named(g, "r1"))], 1000u * 32 * 2);
  EXPECT_EQ(a->bytes[static_cast<size_t>(named(g, "r2"))], 1000u * 32 * 4);

  // The lookup kernel stores the embeddings as bf16 pairs, the first-order
  // weights as floats; the FM reads bf16 rows. The module compiles.
  EXPECT_NE(p->moduleSource.find("__floats2bfloat162_rn(a[0], a[1])"), std::string::npos) << p->moduleSource;
  cuda::NvrtcOptions o;
  o.useCache = false;
  auto m = cuda::compileModule(p->moduleSource, o);
  ASSERT_TRUE(m.isOk()) << m.status().message();
  EXPECT_NE(m->ptx.find("st.global.v4.u32"), std::string::npos);  // eight bf16 of a row at a time
}

TEST(CudaReducedActivations, ValuesNotExactInBf16OrReadUnroundedStayF32) {
  struct Case {
    const char* what;
    Shape shape;
    std::vector<const char*> bf16;
  };
  const Case cases[] = {
      // Two ids a bag: sums of two rows are not bf16 values; r1 still is
      // (g2 rounds it), but g1 reads f32 embeddings, so it writes f32.
      {"pooled bags", {.pooling = 2}, {}},
      {"f32 tables", {.tables = Precision::kF32}, {}},
      // f32 math: g1 cannot read bf16 embeddings (bf16 operands in f32
      // math), so not even the exact embeddings are stored bf16.
      {"f32 math", {.math = Precision::kF32}, {}},
      // r2 is a graph output; r1 is still read only by g2.
      {"graph output", {.hiddenOut = true}, {"emb", "fields", "flat", "r1"}},
      // The ReLU runs apart: g1's output is read by a generated kernel.
      {"relu apart", {.reluApart = true}, {"emb", "fields", "flat"}},
  };
  for (const Case& c : cases) {
    Graph g = smallDeepFm(c.shape);
    ASSERT_TRUE(cuda::storeReducedActivations(g, h200()).isOk()) << c.what;
    std::vector<ValueId> want;
    for (const char* n : c.bf16) want.push_back(named(g, n));
    for (size_t v = 0; v < g.numValues(); ++v) {
      const auto id = static_cast<ValueId>(v);
      if (g.isConstant(id) || g.value(id).mir.storage == Precision::kF32) continue;
      EXPECT_NE(std::find(want.begin(), want.end(), id), want.end())
          << c.what << ": " << g.value(id).name << " stored " << precisionName(g.value(id).mir.storage);
    }
    for (const char* n : c.bf16) EXPECT_EQ(storedAs(g, n), Precision::kBF16) << c.what << ": " << n;
    auto p = cuda::lowerPlan(g, h200());
    EXPECT_TRUE(p.isOk()) << c.what << ": " << p.status().message();
  }
  ScopedEnv off("CAGR_CUDA_REDUCED_ACTIVATIONS", "0");
  Graph g = smallDeepFm({});
  auto marked = cuda::storeReducedActivations(g, h200());
  ASSERT_TRUE(marked.isOk());
  EXPECT_EQ(*marked, 0);
}

// Every zoo model as `cagr optimize --precision bf16` plans it for the
// H200 lowers after the step (and compiles when it marked anything). In
// DeepFM's plan its embeddings and the hidden layers that only bf16 GEMMs
// read are stored bf16, and the arena is smaller by their halves.
TEST(CudaReducedActivations, ZooBf16PlansLowerAndDeepFmStoresItsEmbeddingsAndHiddenLayersInBf16) {
  const Target& t = h200();
  for (const char* model :
       {"dlrm_criteo", "dlrm_avazu", "deepfm", "xdeepfm", "dcnv2", "wide_deep", "autoint", "ngcf"}) {
    auto policy = makePolicy("greedy");
    EnvConfig cfg;
    cfg.batch = 4096;
    cfg.precision.math = cfg.precision.storage = {Precision::kBF16};
    cfg.precision.maxError = INFINITY;  // lowering is under test, not the budget
    auto r = optimize(rwtest::zoo(model), t, **policy, cfg);
    ASSERT_TRUE(r.isOk()) << model << ": " << r.status().message();
    Graph plan = r->plan;
    auto before = cuda::lowerPlan(plan, h200());
    ASSERT_TRUE(before.isOk()) << model << ": " << before.status().message();
    auto marked = cuda::storeReducedActivations(plan, h200());
    ASSERT_TRUE(marked.isOk()) << model << ": " << marked.status().message();
    auto after = cuda::lowerPlan(plan, h200());
    ASSERT_TRUE(after.isOk()) << model << ": " << after.status().message();
    if (*marked > 0) {
      cuda::NvrtcOptions o;
      o.useCache = false;
      auto m = cuda::compileModule(after->moduleSource, o);
      ASSERT_TRUE(m.isOk()) << model << ": " << m.status().message();
    }
    if (std::string(model) != "deepfm") continue;
    EXPECT_GE(*marked, 4);  // the embeddings (and two views), the first hidden layer at least
    int reducedOut = 0;
    for (const cuda::LibraryGemm& lg : after->gemms) reducedOut += lg.output == Precision::kBF16;
    EXPECT_GE(reducedOut, 1);
    SymbolBindings b;
    b.values = {0, 4096};
    auto a0 = cuda::planArena(r->plan, *before, b);
    auto a1 = cuda::planArena(plan, *after, b);
    ASSERT_TRUE(a0.isOk() && a1.isOk());
    EXPECT_LT(a1->size, a0->size * 3 / 4) << a1->size << " vs " << a0->size;
  }
}

TEST(CudaReducedActivationsGpu, Bf16StoredPlanMatchesTheReference) {
  std::string why;
  auto backend = cudatest::gpuOrSkip(why);
  if (!backend) GTEST_SKIP() << why;
  for (int64_t pooling : {1, 2}) {
    Shape s;
    s.pooling = pooling;
    Graph g = smallDeepFm(s);
    auto exe = backend->compile(g);
    ASSERT_TRUE(exe.isOk()) << exe.status().message();
    // The backend's semantics for the reference: stored values rounded (the
    // reference executor rounds a value with a storage precision), and the
    // bias of a GEMM that writes bf16 rounded too.
    Graph ref = g;
    ASSERT_TRUE(cuda::storeReducedActivations(ref, h200()).isOk());
    auto p = cuda::lowerPlan(ref, h200());
    ASSERT_TRUE(p.isOk()) << p.status().message();
    int rounded = 0;
    for (const cuda::LibraryGemm& lg : p->gemms) {
      if (lg.output == Precision::kF32 || lg.bias == kNoValue) continue;
      ref.mutableValue(lg.bias).mir.storage = lg.output;
      ++rounded;
    }
    EXPECT_EQ(rounded, pooling == 1 ? 1 : 0);
    for (int64_t batch : {1, 77, 4096}) {
      std::vector<int64_t> ids{batch, 3};
      if (pooling > 1) ids.push_back(pooling);
      rectest::Inputs in{{"ids", rectest::randomIds(ids, 40, 5)}};
      for (int rep = 0; rep < 2; ++rep) {  // captured, then replayed
        auto got = (*exe)->run(in);
        ASSERT_TRUE(got.isOk()) << got.status().message();
        auto want = runReference(ref, in);
        ASSERT_TRUE(want.isOk()) << want.status().message();
        // bf16 products summed in another order than the reference's.
        auto cmp = compareTensors((*got)[0], (*want)[0], 2e-3, 2e-3);
        EXPECT_TRUE(cmp.close) << "pooling " << pooling << " batch " << batch << ": " << cmp.message;
        auto plain = runReference(g, in);  // f32 biases, f32 activations: the plan's bf16 bound
        ASSERT_TRUE(plain.isOk()) << plain.status().message();
        cmp = compareTensors((*got)[0], (*plain)[0], 5e-2, 5e-2);
        EXPECT_TRUE(cmp.close) << "pooling " << pooling << " batch " << batch << ": " << cmp.message;
      }
    }
  }
}

// Four 16-wide bf16 tables pooled into f32 columns (the lookup's output a
// graph output, so f32; DCN-v2's tables in its bf16 plans): the kernel
// stores two float4s per 8 columns (codegen_embedding.cc), not eight floats;
// with a GPU, what they write is what the reference reads, bags of one and
// two ids, full and partial blocks of rows.
TEST(CudaReducedActivationsGpu, Bf16TablesIntoF32ColumnsMatchTheReference) {
  std::string why;
  auto backend = cudatest::gpuOrSkip(why);
  for (int64_t pooling : {1, 2}) {
    Builder b;
    std::vector<Dim> dims{kBatch, 4};
    if (pooling > 1) dims.push_back(pooling);
    ValueId x = b.input("ids", DType::kI64, dims);
    std::vector<ValueId> in;
    for (int i = 0; i < 4; ++i) in.push_back(b.table("t" + std::to_string(i), 50, 16, 60 + i, Precision::kBF16));
    in.push_back(x);
    b.g.addOutput(b.op(OpKind::kEmbeddingBags, in, "tbe",
                       attrs({{"num_tables", int64_t{4}}, {"mode", std::string("sum")}})));
    auto prog = cuda::lowerPlan(b.g, h200());
    ASSERT_TRUE(prog.isOk()) << prog.status().message();
    EXPECT_NE(prog->moduleSource.find("v[1] = make_float4(a[4], a[5], a[6], a[7])"), std::string::npos);
    cuda::NvrtcOptions o;
    o.arch = "sm_90a";
    o.useCache = false;
    auto m = cuda::compileModule(prog->moduleSource, o);  // NVRTC: no GPU needed
    ASSERT_TRUE(m.isOk()) << m.status().message();
    if (!backend) GTEST_SKIP() << why;
    auto exe = backend->compile(b.g);
    ASSERT_TRUE(exe.isOk()) << exe.status().message();
    for (int64_t batch : {77, 4096}) {
      std::vector<int64_t> ids{batch, 4};
      if (pooling > 1) ids.push_back(pooling);
      rectest::Inputs inputs{{"ids", rectest::randomIds(ids, 50, 7)}};
      auto got = (*exe)->run(inputs);
      ASSERT_TRUE(got.isOk()) << got.status().message();
      auto want = runReference(b.g, inputs);
      ASSERT_TRUE(want.isOk()) << want.status().message();
      auto cmp = compareTensors((*got)[0], (*want)[0], 1e-6, 1e-6);
      EXPECT_TRUE(cmp.close) << "pooling " << pooling << " batch " << batch << ": " << cmp.message;
    }
  }
}

}  // namespace
}  // namespace cagr

#endif  // CAGR_HAVE_CUDA
