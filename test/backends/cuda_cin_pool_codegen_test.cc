// The pooled CIN tail's code without a GPU (issue 6): a CIN layer's sum
// over D in its own kernel — nvrtc.cin adds each tail value into the
// block's row sums, cublaslt.cin's transpose kernel sums each row — in
// every math mode, on xDeepFM's greedy H200 plan and on two small layers;
// the map is written only where the next layer reads it; the module
// NVRTC-compiles for sm_90a. Without the CUDA toolkit it compiles to nothing.
#include <gtest/gtest.h>

#if CAGR_HAVE_CUDA

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <tuple>

#include <unistd.h>

#include "../rewrite/rewrite_test_util.h"
#include "backends/cuda/codegen.h"
#include "backends/cuda/cuda_program.h"
#include "backends/cuda/cuda_weights.h"
#include "cagr/policy.h"
#include "cin_pool_util.h"

namespace cagr {
namespace {

namespace fs = std::filesystem;

using rwtest::h200;

void compileForSm90a(const cuda::Program& p, const std::string& what, const std::string& arch = "sm_90a") {
  cuda::NvrtcOptions o;
  o.arch = arch;
  o.cacheDir = (fs::temp_directory_path() / ("cagr-nvrtc-cin-pool-test-" + std::to_string(getpid()))).string();
  auto m = cuda::compileModule(p.moduleSource, o);
  std::error_code ec;
  fs::remove_all(o.cacheDir, ec);  // each module compiled afresh, nothing left behind
  ASSERT_TRUE(m.isOk()) << what << ": " << m.status().message();
  EXPECT_EQ(m->log.find("warning"), std::string::npos) << what << ": " << m->log;
  for (const auto& k : p.kernels) EXPECT_NE(m->ptx.find(".entry " + k.entry + "("), std::string::npos) << k.entry;
}

const Precision kModes[] = {Precision::kF32, Precision::kTF32, Precision::kBF16, Precision::kF16};

// xDeepFM's greedy plan for the H200 at batch 4096 (its three pooled CIN groups).
const Graph& xdeepfmPlan() {
  static const Graph plan = [] {
    auto policy = makePolicy("greedy");
    EnvConfig cfg;
    cfg.batch = 4096;
    auto r = optimize(rwtest::zoo("xdeepfm"), h200(), **policy, cfg);
    EXPECT_TRUE(r.isOk()) << r.status().message();
    return r.isOk() ? r->plan : Graph();
  }();
  return plan;
}

// The plan with every pooled CIN group on `kernel` in `math`.
Graph onKernel(const Graph& plan, const std::string& kernel, Precision math) {
  Graph g = plan;
  KernelId k = *kernelByName(kernel);
  std::vector<int32_t> groups;
  for (const auto& m : kernelGroups(g)) {
    if (g.node(m.front()).op == OpKind::kCIN && g.node(m.back()).op == OpKind::kReduceSum) {
      groups.push_back(g.node(m.front()).mir.group);
    }
  }
  EXPECT_EQ(groups.size(), 3u);
  for (Node& n : g.mutableNodes()) {
    if (n.mir.group < 0 || std::find(groups.begin(), groups.end(), n.mir.group) == groups.end()) continue;
    n.mir.kernel = k;
    if (n.op == OpKind::kCIN) n.mir.math = math;
  }
  return g;
}

// Each sum over a CIN layer's map runs in the step that runs the layer.
void expectEachPoolingInItsCinStep(const Graph& g, const cuda::Program& p, const std::string& what) {
  int pooled = 0;
  for (const auto& s : p.steps) {
    bool cin = false, sum = false;
    for (NodeId m : s.nodes) {
      cin |= g.node(m).op == OpKind::kCIN;
      sum |= g.node(m).op == OpKind::kReduceSum && g.type(g.node(m).inputs[0]).rank() == 3;
    }
    EXPECT_TRUE(cin || !sum) << what << ": " << s.name << " pools a map apart from its layer";
    pooled += cin && sum ? 1 : 0;
  }
  EXPECT_EQ(pooled, 3) << what;
}

TEST(CudaCinPoolCodegen, XdeepfmPooledLayersOnNvrtcCinInEveryMathMode) {
  for (Precision math : kModes) {
    const std::string what = std::string("xdeepfm nvrtc.cin pooled ") + precisionName(math);
    Graph g = onKernel(xdeepfmPlan(), "nvrtc.cin", math);
    ASSERT_TRUE(verifyPlan(g, h200()).isOk()) << verifyPlan(g, h200()).message();
    auto p = cuda::lowerPlan(g, h200());
    ASSERT_TRUE(p.isOk()) << what << ": " << p.status().message();
    std::vector<int> writes;  // per pooled layer: the buffers its kernel writes
    for (const auto& k : p->kernels) {
      if (k.name.rfind("nvrtc.cin[", 0) != 0) continue;
      EXPECT_NE(k.name.find("+relu+sum"), std::string::npos) << k.name;
      EXPECT_NE(k.name.find(precisionName(math)), std::string::npos) << k.name;
      writes.push_back(k.numOutputs);
    }
    // Layers 1 and 2 write their map (the next layer reads it) and row sums; layer 3 only its row sums.
    EXPECT_EQ(writes, (std::vector<int>{2, 2, 1})) << what;
    expectEachPoolingInItsCinStep(g, *p, what);
    compileForSm90a(*p, what);
  }
}

TEST(CudaCinPoolCodegen, XdeepfmPooledLayersOnCublasLtCinInEveryMathMode) {
  for (Precision math : kModes) {
    const std::string what = std::string("xdeepfm cublaslt.cin pooled ") + precisionName(math);
    Graph g = onKernel(xdeepfmPlan(), "cublaslt.cin", math);
    auto p = cuda::lowerPlan(g, h200());
    ASSERT_TRUE(p.isOk()) << what << ": " << p.status().message();
    ASSERT_EQ(p->cins.size(), 3u) << what;
    for (size_t i = 0; i < 3; ++i) {
      const cuda::CinGemm& c = p->cins[i];
      EXPECT_NE(c.pooled, kNoValue) << what << " layer " << i;
      EXPECT_EQ(c.out == kNoValue, i == 2) << what << " layer " << i << ": the map only where the next layer reads it";
      EXPECT_EQ(c.tail, "+relu+sum") << what;
      EXPECT_EQ(p->kernels[static_cast<size_t>(c.outKernel)].numOutputs, i == 2 ? 1 : 2) << what;
    }
    expectEachPoolingInItsCinStep(g, *p, what);
    for (const auto& s : p->steps) {
      if (s.kind == cuda::StepKind::kCinGemm) {
        EXPECT_EQ(s.writes, p->cins[static_cast<size_t>(s.cin)].outputs());
      }
    }
    compileForSm90a(*p, what);
  }
}

TEST(CudaCinPoolCodegen, SmallPooledLayersOnEitherKernelCompile) {
  // O = 40 / 24, D = 8: the FFMA tile widens to whole samples, the wmma tile is 64 columns.
  for (const std::string kernel : {"nvrtc.cin", "cublaslt.cin"}) {
    for (Precision math : kModes) {
      const std::string what = kernel + " pooled " + precisionName(math);
      Graph g = rectest::pooledCinLayers(8, kernel, math);
      ASSERT_TRUE(verifyPlan(g, h200()).isOk()) << what << ": " << verifyPlan(g, h200()).message();
      auto p = cuda::lowerPlan(g, h200());
      ASSERT_TRUE(p.isOk()) << what << ": " << p.status().message();
      int pooled = 0;
      for (const auto& s : p->steps) pooled += s.name.find("+sum") != std::string::npos ? 1 : 0;
      EXPECT_EQ(pooled, 2) << what;
      compileForSm90a(*p, what);
    }
  }
}

// A CIN layer the plan leaves unassigned runs on nvrtc.cin in f32 and tf32
// math and on cublaslt.cin (a kCinGemm step) in bf16 and f16 math, as the
// cost model prices it.
TEST(CudaCinPoolCodegen, UnassignedLayersRunOnNvrtcInF32AndTf32AndOnCublasLtInBf16AndF16) {
  for (Precision math : kModes) {
    Graph g = rectest::pooledCinLayers(8);
    for (Node& n : g.mutableNodes()) {
      if (n.op == OpKind::kCIN) n.mir.math = math;
    }
    auto p = cuda::lowerPlan(g, h200());
    ASSERT_TRUE(p.isOk()) << precisionName(math) << ": " << p.status().message();
    int gemmSteps = 0, generated = 0;
    for (const auto& s : p->steps) {
      if (g.node(s.nodes.front()).op != OpKind::kCIN) continue;
      gemmSteps += s.kind == cuda::StepKind::kCinGemm ? 1 : 0;
      generated += s.kind == cuda::StepKind::kGenerated && s.name.rfind("nvrtc.cin[", 0) == 0 ? 1 : 0;
    }
    const bool onNvrtc = math == Precision::kF32 || math == Precision::kTF32;
    EXPECT_EQ(gemmSteps, onNvrtc ? 0 : 2) << precisionName(math);
    EXPECT_EQ(generated, onNvrtc ? 2 : 0) << precisionName(math);
  }
}

// f32 layers whose O is a multiple of 8 in [64, 256] take a one-h-per-step
// kernel, which reads W as its transpose: the step asks for that layout
// (library, transposed); narrower layers keep the 8x8-tile kernel and W as
// stored. The step kernel (cp.async: sm_80 and later) is the FFMA one, the
// 3xTF32 tensor-core one with CAGR_CUDA_CIN_F32=3xtf32 (opt-in); on sm_90 a
// small launch of the 3xTF32 kernel (here batch 301) runs as clusters of
// two blocks along y. An sm_75 GPU gets the 8x8-tile kernel everywhere.
// tf32 layers of those shapes take the same tensor-core kernel with one
// term (", mma]"), narrower ones the wmma kernel; CAGR_CIN_X3_MT=1 halves
// the tensor-core kernel's columns per block (twice the blocks), and
// CAGR_CIN_X3_WO=8 puts all eight warps along O (O = 72: four warps of two
// n8 tiles, one of one, three of none). The one-term (tf32) kernel reads W
// rounded to TF32 on upload (WeightFormat::tf32), no other kernel does.
// Every module compiles for its GPU. (On sm_90 these layers would take
// the warpgroup kernel, cuda_cin_wg_codegen_test.cc; CAGR_CUDA_CIN_WG=0
// keeps them here.)
TEST(CudaCinPoolCodegen, WideF32LayersTakeAStepKernelWithTheWeightTransposed) {
  setenv("CAGR_CUDA_CIN_WG", "0", 1);
  struct Case {
    Precision math;
    const char* f32;
    int sm;
    const char* tag;
    const char* mt = "";
    const char* wo = "";
  };
  const Precision f32 = Precision::kF32, tf32 = Precision::kTF32;
  for (const Case c :
       {Case{f32, "3xtf32", 90, ", 3xtf32]"}, Case{f32, "3xtf32", 80, ", 3xtf32]"}, Case{f32, "ffma", 90, ", ffma-step]"},
        Case{f32, "", 75, ", none]"}, Case{tf32, "", 90, ", mma]"}, Case{tf32, "", 80, ", mma]"},
        Case{tf32, "", 90, ", mma]", "1"}, Case{f32, "3xtf32", 90, ", 3xtf32]", "1"}, Case{tf32, "", 90, ", mma]", "", "8"},
        Case{f32, "3xtf32", 80, ", 3xtf32]", "", "8"}}) {
    if (*c.f32 != '\0') setenv("CAGR_CUDA_CIN_F32", c.f32, 1);
    if (*c.mt != '\0') setenv("CAGR_CIN_X3_MT", c.mt, 1);
    if (*c.wo != '\0') setenv("CAGR_CIN_X3_WO", c.wo, 1);
    const char* other = c.math == f32 ? ", ffma]" : ", wmma]";
    for (auto [o1, o2, stepKernels] : {std::tuple{64, 72, 2}, std::tuple{40, 24, 0}, std::tuple{64, 60, 1}}) {
      const std::string what = std::string(precisionName(c.math)) + " O " + std::to_string(o1) + " / " +
                               std::to_string(o2) + " sm " + std::to_string(c.sm) + " CAGR_CUDA_CIN_F32=" + c.f32 +
                               " CAGR_CIN_X3_MT=" + c.mt + " CAGR_CIN_X3_WO=" + c.wo;
      Graph g = rectest::pooledCinLayers(8, "nvrtc.cin", c.math, o1, o2);
      auto p = cuda::lowerPlan(g, h200(), c.sm);
      ASSERT_TRUE(p.isOk()) << what << ": " << p.status().message();
      int steps = 0;
      for (const auto& s : p->steps) {
        if (s.kind != cuda::StepKind::kGenerated || s.name.rfind("nvrtc.cin[", 0) != 0) continue;
        const bool step = s.name.find(c.tag) != std::string::npos;
        const bool x3 = step && std::string(c.tag) != ", ffma-step]";  // the tensor-core step kernel
        EXPECT_TRUE(step || s.name.find(other) != std::string::npos) << what << ": " << s.name;
        steps += step ? 1 : 0;
        const Node& cin = g.node(s.nodes.front());
        int weights = 0;
        for (const cuda::WeightFormat& f : s.constants) {
          if (f.value != cin.inputs[2]) continue;
          ++weights;
          EXPECT_EQ(f.transposed, step) << what << ": " << s.name;
          EXPECT_EQ(f.library, step) << what << ": " << s.name;
          EXPECT_EQ(f.tf32, x3 && c.math == tf32) << what << ": " << s.name;
        }
        EXPECT_EQ(weights, 1) << what << ": " << s.name;
        const auto& k = p->kernels[static_cast<size_t>(s.kernel)];
        const cuda::Launch l = k.launch(std::vector<int64_t>(k.extents.size(), 301));
        EXPECT_EQ(l.sharedBytes > 0, step) << what << ": dynamic shared memory only for a step kernel";
        const auto rows = static_cast<unsigned>(g.type(cin.inputs[2]).dims[0]);  // FFMA step: a thread per row
        if (step) {
          EXPECT_EQ(l.block[0], x3 ? 256u : rows) << what << ": " << s.name;
        }
        if (x3) {  // 301 samples of D = 8 columns, 128 * MT / WO columns a block (WO warps along O)
          const unsigned columns = (*c.mt == '1' ? 128u : 256u) / (*c.wo == '8' ? 8u : 4u);
          EXPECT_EQ(l.grid[0], (301u * 8u + columns - 1) / columns) << what << ": " << s.name;
        }
        const unsigned split = x3 && c.sm >= 90 ? 2u : 1u;
        EXPECT_EQ(l.grid[1], split) << what << ": " << s.name;
        EXPECT_EQ(l.clusterY, split) << what << ": " << s.name;
      }
      EXPECT_EQ(steps, c.sm >= 80 ? stepKernels : 0) << what;
      compileForSm90a(*p, what, "sm_" + std::to_string(c.sm));
    }
    unsetenv("CAGR_CUDA_CIN_F32");
    unsetenv("CAGR_CIN_X3_MT");
    unsetenv("CAGR_CIN_X3_WO");
  }
  unsetenv("CAGR_CUDA_CIN_WG");
}

// The one-term kernel's W on the device: transposed, each value rounded to
// TF32 to nearest, ties away from zero (here computed from the value's
// binary exponent, not its bits).
TEST(CudaCinPoolCodegen, Tf32StepKernelReadsWRoundedToNearestOnUpload) {
  Graph g = rectest::pooledCinLayers(8, "nvrtc.cin", Precision::kTF32, 64, 72);
  auto p = cuda::lowerPlan(g, h200(), 80);  // sm_90 takes the warpgroup kernel and its own layout
  ASSERT_TRUE(p.isOk()) << p.status().message();
  int checked = 0;
  for (const auto& s : p->steps) {
    for (const cuda::WeightFormat& f : s.constants) {
      if (!f.tf32) continue;
      ASSERT_TRUE(f.transposed && f.library) << s.name;
      const Tensor& w = *g.constant(f.value);
      ASSERT_EQ(w.shape().size(), 2u);
      const int64_t rows = w.shape()[0], cols = w.shape()[1];
      std::vector<float> dev(cuda::weightBytes(g, f) / 4);
      ASSERT_EQ(static_cast<int64_t>(dev.size()), rows * cols);
      ASSERT_TRUE(cuda::writeWeight(g, f, reinterpret_cast<std::byte*>(dev.data())).isOk());
      int changed = 0;
      for (int64_t r = 0; r < rows; ++r) {
        for (int64_t c = 0; c < cols; ++c) {
          const float x = w.data<float>()[r * cols + c];
          const int e = std::ilogb(x);  // x = m 2^e, 1 <= |m| < 2; TF32 keeps 10 bits after the point
          const float want = x == 0.f ? x : std::ldexp(std::round(std::ldexp(x, 10 - e)), e - 10);
          ASSERT_EQ(dev[static_cast<size_t>(c * rows + r)], want) << s.name << " W[" << r << ", " << c << "] " << x;
          changed += want != x ? 1 : 0;
        }
      }
      EXPECT_GT(changed, 0) << s.name << ": the weights were all TF32 values already";
      ++checked;
    }
  }
  EXPECT_EQ(checked, 2) << "both layers' W";
}

// The one-term tf32 kernel rounds W with an integer add, which would turn a
// NaN into a number: a layer whose W is not all finite keeps the wmma
// kernel (NaN in, NaN out), its neighbour the step kernel.
TEST(CudaCinPoolCodegen, Tf32LayerWithANonFiniteWeightKeepsTheWmmaKernel) {
  Graph g = rectest::pooledCinLayers(8, "nvrtc.cin", Precision::kTF32, 64, 72);
  for (Node& n : g.mutableNodes()) {
    if (n.op != OpKind::kCIN || n.name != "c1") continue;
    Tensor w = g.constant(n.inputs[2])->clone();
    w.data<float>()[5] = std::numeric_limits<float>::quiet_NaN();
    n.inputs[2] = g.addConstant("w1_nan", std::move(w));
  }
  auto p = cuda::lowerPlan(g, h200(), 90);
  ASSERT_TRUE(p.isOk()) << p.status().message();
  std::vector<std::string> names;
  for (const auto& s : p->steps) {
    if (s.kind == cuda::StepKind::kGenerated && s.name.rfind("nvrtc.cin[", 0) == 0) names.push_back(s.name);
  }
  ASSERT_EQ(names.size(), 2u);
  EXPECT_NE(names[0].find("[64x6x6, tf32, wmma]"), std::string::npos) << names[0];
  EXPECT_NE(names[1].find("[72x64x6, tf32, wgmma]"), std::string::npos) << names[1];
  compileForSm90a(*p, "tf32 CIN with a NaN weight");
}

}  // namespace
}  // namespace cagr

#endif
