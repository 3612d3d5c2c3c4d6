// DLRM's CUDA kernels (issue 6), compiled without a GPU and run on one: the generated small GEMM
// (nvrtc.gemm_small) set on every GEMM of DLRM's greedy plan — the K = 13
// bottom layer, the narrow N = 16 / N = 1 layers — picks its tile shape from
// N and K, covers the work at every batch and compiles with NVRTC for sm_90a
// without warnings; the interaction kernel compiles for the forms the zoo
// plans do not reach (D and F off multiples of 4, self-interaction, Gather
// ids, max bags, multi-hot, bf16 / f16 / int8 rows). On a GPU (skipped
// without one) both match the reference executor; DLRM end to end on
// nvrtc.gemm_small is the conformance suite's greedy_gemm_small cases.
// Without CAGR_HAVE_CUDA the file compiles to nothing.
#include <gtest/gtest.h>

#if CAGR_HAVE_CUDA

#include <algorithm>
#include <filesystem>

#include "../rewrite/rewrite_test_util.h"
#include "backends/cuda/codegen.h"
#include "backends/cuda/cuda_program.h"
#include "backends/plan_memory.h"
#include "cagr/policy.h"
#include "cagr/text.h"
#include "cpu_test_util.h"
#include "hw/cuda_probes.h"
#include "ir/graph_queries.h"

namespace cagr {
namespace {

namespace fs = std::filesystem;
using rectest::attrs;
using rectest::Builder;

const Target& h200() {
  static const Target t = rwtest::target("h200");
  return t;
}

cuda::NvrtcOptions options() {
  cuda::NvrtcOptions o;
  o.arch = "sm_90a";
  o.useCache = false;  // always NVRTC's own verdict
  return o;
}

// The greedy fp32 plan (no set_precision), as `cagr bench` measures it.
Graph greedy(const std::string& model) {
  auto p = makePolicy("greedy");
  EnvConfig cfg;
  cfg.batch = 4096;
  cfg.disabled = {ActionKind::kSetPrecision};
  auto r = optimize(rwtest::zoo(model), h200(), **p, cfg);
  EXPECT_TRUE(r.isOk()) << r.status().message();
  return r.isOk() ? r->plan : rwtest::zoo(model);
}

// Every GEMM group of `g` (Gemm / MatMul anchors and their fused members) on
// nvrtc.gemm_small in f32 math (the catalog's mode for it; greedy may have
// chosen reduced math for the library GEMM).
int setGemmSmall(Graph& g) {
  KernelId small = *kernelByName("nvrtc.gemm_small");
  int n = 0;
  for (Node& a : g.mutableNodes()) {
    if (a.op != OpKind::kGemm && a.op != OpKind::kMatMul) continue;
    ++n;
    a.mir.math = Precision::kF32;
    int32_t label = a.mir.group;
    for (Node& m : g.mutableNodes()) {
      if (&m == &a || (label >= 0 && m.mir.group == label)) m.mir.kernel = small;
    }
  }
  return n;
}

std::vector<int64_t> extentsAt(const Graph& g, const cuda::GeneratedKernel& k, int64_t n) {
  std::vector<int64_t> out;
  for (const cuda::ExtentRef& e : k.extents) {
    Dim d = g.type(k.params[static_cast<size_t>(e.param)]).dims[static_cast<size_t>(e.dim)];
    out.push_back(isSymbolic(d) ? dimCoef(d) * n : d);
  }
  return out;
}

void compileAndCheck(const Graph& g, const std::string& src, const std::vector<cuda::GeneratedKernel>& kernels,
                     const std::string& what) {
  for (const auto& k : kernels) {
    unsigned last = 0;
    for (int64_t n : {1, 256, 4096, 65536}) {
      cuda::Launch l = k.launch(extentsAt(g, k, n));
      EXPECT_GE(l.grid[0], std::max(last, 1u)) << k.name << " at batch " << n;
      EXPECT_EQ(l.block[0] % 32, 0u) << k.name;
      last = l.grid[0];
    }
  }
  auto m = cuda::compileModule(src, options());
  ASSERT_TRUE(m.isOk()) << what << ": " << m.status().message();
  EXPECT_FALSE(m->cubin.empty()) << what;
  EXPECT_EQ(m->log.find("warning"), std::string::npos) << what << ": " << m->log;
  for (const auto& k : kernels) EXPECT_NE(m->ptx.find(".entry " + k.entry + "("), std::string::npos) << k.entry;
}

// x [N, kd] times a constant [kd, n] plus a bias, then ReLU, on nvrtc.gemm_small.
Graph gemmGraph(int64_t n, int64_t kd) {
  Builder b;
  ValueId x = b.input("x", DType::kF32, {kBatch, kd});
  ValueId w = b.constant("w", {kd, n}, 1);
  ValueId c = b.constant("c", {n}, 2);
  ValueId y = b.op(OpKind::kGemm, {x, w, c}, "gemm");
  ValueId r = b.op(OpKind::kRelu, {y}, "r");
  b.g.addOutput(r);
  b.group({"gemm", "r"}, 0, "nvrtc.gemm_small");
  return b.g;
}

// D = 10 (rows not whole float4s), F = 5, no self term: a dense row, two
// one-hot Gathers (bf16 rows; negative ids wrap), a multi-hot max bag of
// int8 rows and a weighted sum bag with offsets, fused with the lookups and
// the output concat.
Graph interactionD10() {
  Builder b;
  int L = b.g.addSymbol("L");
  ValueId dense = b.input("dense", DType::kF32, {kBatch, 10});
  ValueId g1 = b.op(OpKind::kGather, {b.table("ta", 30, 10, 1), b.input("ia", DType::kI64, {kBatch})}, "g1");
  ValueId g2 =
      b.op(OpKind::kGather, {b.table("tb", 30, 10, 2, Precision::kBF16), b.input("ib", DType::kI64, {kBatch})}, "g2");
  ValueId ids = b.input("ids", DType::kI64, {symDim(L)});
  ValueId off = b.input("off", DType::kI64, {kBatch});
  ValueId m = b.op(OpKind::kEmbeddingBag, {b.table("tc", 40, 10, 3, Precision::kInt8Rowwise), ids, off}, "bagmax",
                   attrs({{"mode", std::string("max")}}));
  ValueId w = b.op(OpKind::kEmbeddingBag, {b.table("td", 40, 10, 4), ids, off, b.input("w", DType::kF32, {symDim(L)})},
                   "bagw", attrs({{"mode", std::string("sum")}}));
  ValueId cat = b.op(OpKind::kConcat, {dense, g1, g2, m, w}, "cat", attrs({{"axis", int64_t{1}}}));
  ValueId x3 = b.op(OpKind::kReshape, {cat}, "r", attrs({{"shape", std::vector<int64_t>{-1, 5, 10}}}));
  ValueId it = b.op(OpKind::kInteraction, {x3}, "inter");
  ValueId out = b.op(OpKind::kConcat, {dense, it}, "out", attrs({{"axis", int64_t{1}}}));
  b.group({"g1", "g2", "bagmax", "bagw", "cat", "r", "inter", "out"}, 0, "nvrtc.interaction");
  b.g.addOutput(out);
  return b.g;
}

// Self-interaction over a Gather with two ids per sample (f16 rows) and a
// dense row: F = 3, D = 16.
Graph interactionSelf() {
  Builder b;
  ValueId dense = b.input("dense", DType::kF32, {kBatch, 16});
  ValueId g =
      b.op(OpKind::kGather, {b.table("t", 30, 16, 5, Precision::kF16), b.input("i", DType::kI64, {kBatch, 2})}, "g");
  ValueId d3 = b.op(OpKind::kReshape, {dense}, "d3", attrs({{"shape", std::vector<int64_t>{-1, 1, 16}}}));
  ValueId x3 = b.op(OpKind::kConcat, {d3, g}, "cat", attrs({{"axis", int64_t{1}}}));
  ValueId it = b.op(OpKind::kInteraction, {x3}, "inter", attrs({{"self_interaction", int64_t{1}}}));
  b.group({"g", "d3", "cat", "inter"}, 0, "nvrtc.interaction");
  b.g.addOutput(it);
  return b.g;
}

TEST(CudaDlrmCodegen, GemmSmallOnEveryDlrmLayerCompiles) {
  for (const char* model : {"dlrm_criteo", "dlrm_avazu"}) {
    Graph g = greedy(model);
    ASSERT_GT(setGemmSmall(g), 0) << model;
    ASSERT_TRUE(verifyPlan(g, h200()).isOk()) << model << ": " << verifyPlan(g, h200()).message();
    auto prog = cuda::lowerPlan(g, h200());
    ASSERT_TRUE(prog.isOk()) << model << ": " << prog.status().message();
    std::string names;
    for (const auto& k : prog->kernels) names += k.name + "\n";
    if (model == std::string("dlrm_criteo")) {
      // 4096x512x13 and 4096x256x512: wide tiles; 4096x64x256: 64 columns;
      // 4096x16x64: 16 columns; 4096x1x256: one warp per row.
      EXPECT_NE(names.find("nvrtc.gemm_small[gemm, 32x128 tiles]"), std::string::npos) << names;
      EXPECT_NE(names.find("nvrtc.gemm_small[gemm, 64x128 tiles]"), std::string::npos) << names;
      EXPECT_NE(names.find("nvrtc.gemm_small[gemm, 32x64 tiles]"), std::string::npos) << names;
      EXPECT_NE(names.find("nvrtc.gemm_small[gemm, 16x16 tiles]"), std::string::npos) << names;
      EXPECT_NE(names.find("nvrtc.gemm_small[gemm, row dots]"), std::string::npos) << names;
      EXPECT_EQ(std::count(names.begin(), names.end(), '\n'), static_cast<long>(prog->kernels.size()));
    }
    compileAndCheck(g, prog->moduleSource, prog->kernels, std::string(model) + " gemm_small");
  }
}

TEST(CudaDlrmCodegen, GemmSmallTileShapesFollowNAndK) {
  // Gemm with bias and ReLU at every N class and K below, at and above a K
  // chunk: one graph of independent layers, one module.
  Builder b;
  std::vector<std::string> want;
  int32_t label = 0;
  for (int64_t n : {1, 3, 5, 8, 16, 24, 33, 64, 100, 128, 512}) {
    for (int64_t kd : {1, 13, 16, 17, 64, 300}) {
      std::string id = std::to_string(n) + "x" + std::to_string(kd);
      ValueId x = b.input("x" + id, DType::kF32, {kBatch, kd});
      ValueId y = b.op(OpKind::kGemm, {x, b.constant("w" + id, {kd, n}, 1), b.constant("c" + id, {n}, 2)}, "gemm" + id);
      b.g.addOutput(b.op(OpKind::kRelu, {y}, "r" + id));
      b.group({"gemm" + id, "r" + id}, label++, "nvrtc.gemm_small");
      want.push_back(n <= 4 ? "row dots" : "tiles");
    }
  }
  auto prog = cuda::lowerPlan(b.g, h200());
  ASSERT_TRUE(prog.isOk()) << prog.status().message();
  ASSERT_EQ(prog->kernels.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_NE(prog->kernels[i].name.find(want[i]), std::string::npos) << prog->kernels[i].name;
  }
  compileAndCheck(b.g, prog->moduleSource, prog->kernels, "gemm_small shapes");
}

TEST(CudaDlrmCodegen, GemmSmallProbesRunTheGeneratedKernel) {
  // cagr profile --target cuda times nvrtc.gemm_small at DLRM's layer shapes.
  int probes = 0;
  for (const hw::CudaProbeSpec& s : hw::cudaProbeSpecs(true)) {
    if (s.kernel != "nvrtc.gemm_small") continue;
    ++probes;
    auto g = parseGraph(s.text(), s.label);
    ASSERT_TRUE(g.isOk()) << g.status().message();
    ASSERT_TRUE(verifyPlan(*g, h200()).isOk()) << s.label << ": " << verifyPlan(*g, h200()).message();
    auto p = cuda::lowerPlan(*g, h200());
    ASSERT_TRUE(p.isOk()) << s.label << ": " << p.status().message();
    ASSERT_EQ(p->kernels.size(), 1u) << s.label;
    EXPECT_EQ(p->kernels[0].name.rfind("nvrtc.gemm_small[gemm", 0), 0u) << s.label << ": " << p->kernels[0].name;
  }
  EXPECT_EQ(probes, 4);
}

TEST(CudaDlrmCodegen, InteractionFormsCompile) {
  Graph a = interactionD10(), b = interactionSelf();
  for (const Graph* g : {&a, &b}) {
    auto prog = cuda::lowerPlan(*g, h200());
    ASSERT_TRUE(prog.isOk()) << prog.status().message();
    ASSERT_EQ(prog->kernels.size(), 1u);
    EXPECT_EQ(prog->kernels[0].name.rfind("nvrtc.interaction[", 0), 0u) << prog->kernels[0].name;
    compileAndCheck(*g, prog->moduleSource, prog->kernels, prog->kernels[0].name);
  }
}

// ---- on a GPU (skipped without one) ----

// Inputs of the graphs above at batch n: floats in [-1, 1), ids in [-3, 30)
// (Gather: negative ids wrap) or [0, 40) with 2 ids per bag and 5 in the last.
rectest::Inputs inputsAt(const Graph& g, int64_t n) {
  rectest::Inputs in;
  unsigned seed = 1;
  for (ValueId v : g.inputs()) {
    const std::string& name = g.value(v).name;
    std::vector<int64_t> shape;
    for (Dim d : g.type(v).dims) shape.push_back(d == kBatch ? n : isSymbolic(d) ? 2 * n + 3 : d);
    if (name == "off") {
      Tensor t(DType::kI64, shape);
      for (int64_t i = 0; i < n; ++i) t.data<int64_t>()[i] = 2 * i;
      in.emplace_back(name, std::move(t));
    } else if (g.type(v).dtype == DType::kI64) {
      Tensor t = rectest::randomIds(shape, name == "ids" ? 40 : 33, seed++);
      if (name != "ids") {
        for (int64_t i = 0; i < t.numel(); ++i) t.data<int64_t>()[i] -= 3;
      }
      in.emplace_back(name, std::move(t));
    } else {
      in.emplace_back(name, rectest::uniform(shape, seed++));
    }
  }
  return in;
}

TEST(CudaDlrmGpu, GemmSmallAndInteractionMatchTheReference) {
  auto backend = makeBackend("cuda");
  ASSERT_TRUE(backend.isOk()) << backend.status().message();
  if (!(*backend)->capabilities().available) GTEST_SKIP() << (*backend)->capabilities().note;
  std::vector<std::pair<std::string, Graph>> graphs = {{"interaction D=10", interactionD10()},
                                                       {"self interaction", interactionSelf()}};
  for (int64_t n : {1, 5, 16, 64, 512}) {
    for (int64_t kd : {13, 64, 256})
      graphs.emplace_back(std::to_string(n) + "x" + std::to_string(kd), gemmGraph(n, kd));
  }
  for (const auto& [what, g] : graphs) {
    auto exe = (*backend)->compile(g);
    ASSERT_TRUE(exe.isOk()) << what << ": " << exe.status().message();
    for (int64_t batch : {1, 77, 4096}) {
      rectest::Inputs in = inputsAt(g, batch);
      auto got = (*exe)->run(in);
      ASSERT_TRUE(got.isOk()) << what << ": " << got.status().message();
      auto want = runReference(g, in);
      ASSERT_TRUE(want.isOk()) << what << ": " << want.status().message();
      auto cmp = compareTensors((*got)[0], (*want)[0], 1e-5, 1e-4);
      EXPECT_TRUE(cmp.close) << what << " at batch " << batch << ": " << cmp.message;
    }
  }
}

}  // namespace
}  // namespace cagr

#endif  // CAGR_HAVE_CUDA
