// nvrtc.cin on Hopper's warpgroup MMAs (cagr_cin_wg_step, issue 6) without a
// GPU: which layers take it (sm_90, M <= 32, O % 8 == 0, O <= 256; f32
// math on three TF32 terms, tf32 on one), how W goes up for it (K-major per
// h, hi / lo planes or rounded to TF32, one h's planes a contiguous stage of
// swizzled 128-byte rows, zeros past M), its launch
// (128 columns a block, clusters of 2 along y below a block per two SMs) and
// that its module NVRTC-compiles for sm_90a. The GPU run against the
// reference is in cuda_cin_test.cc. Without the CUDA toolkit it compiles
// to nothing.
#include <gtest/gtest.h>

#if CAGR_HAVE_CUDA

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <tuple>

#include <unistd.h>

#include "../rewrite/rewrite_test_util.h"
#include "backends/cuda/cuda_program.h"
#include "backends/cuda/cuda_weights.h"
#include "backends/cuda/codegen.h"
#include "cin_pool_util.h"
#include "support/scoped_env.h"

namespace cagr {
namespace {

namespace fs = std::filesystem;
using rwtest::h200;

uint32_t bitsOf(float x) {
  uint32_t b = 0;
  std::memcpy(&b, &x, sizeof b);
  return b;
}

// The CIN steps of `p` (generated kernels named nvrtc.cin[...]).
std::vector<const cuda::ProgramStep*> cinSteps(const cuda::Program& p) {
  std::vector<const cuda::ProgramStep*> out;
  for (const auto& s : p.steps) {
    if (s.kind == cuda::StepKind::kGenerated && s.name.rfind("nvrtc.cin[", 0) == 0) out.push_back(&s);
  }
  return out;
}

// lowerPlan(g) for sm_90 with $name set to `value` for that call only.
StatusOr<cuda::Program> lowerWith(const Graph& g, const char* name, const char* value) {
  setenv(name, value, 1);
  auto p = cuda::lowerPlan(g, h200(), 90);
  unsetenv(name);
  return p;
}

// `source` NVRTC-compiled for sm_90a, in a cache directory of its own (removed after).
StatusOr<cuda::CompiledModule> compileSm90a(const std::string& source) {
  cuda::NvrtcOptions o;
  o.arch = "sm_90a";
  o.cacheDir = (fs::temp_directory_path() / ("cagr-nvrtc-cin-wg-test-" + std::to_string(getpid()))).string();
  auto m = cuda::compileModule(source, o);
  std::error_code ec;
  fs::remove_all(o.cacheDir, ec);
  return m;
}

// `p` lowered, and each of its CIN steps named with `tag` (", wmma]").
void expectCinSteps(const StatusOr<cuda::Program>& p, const std::string& tag) {
  ASSERT_TRUE(p.isOk()) << p.status().message();
  for (const auto* s : cinSteps(*p)) EXPECT_NE(s->name.find(tag), std::string::npos) << s->name;
}

TEST(CudaCinWgCodegen, WideLayersOnSm90TakeTheWarpgroupKernel) {
  ScopedEnv x3("CAGR_CUDA_CIN_F32", "3xtf32");  // f32 layers: the opt-in 3xTF32 kernels
  for (Precision math : {Precision::kF32, Precision::kTF32}) {
    const bool f32 = math == Precision::kF32;
    const std::string tag = f32 ? ", 3xtf32 wgmma]" : ", wgmma]";
    for (int64_t d : {8, 16}) {
      const std::string what = std::string(precisionName(math)) + " D " + std::to_string(d);
      Graph g = rectest::pooledCinLayers(d, "nvrtc.cin", math, 64, 72);
      auto p = cuda::lowerPlan(g, h200(), 90);
      ASSERT_TRUE(p.isOk()) << what << ": " << p.status().message();
      const auto steps = cinSteps(*p);
      ASSERT_EQ(steps.size(), 2u) << what;
      for (const cuda::ProgramStep* s : steps) {
        EXPECT_NE(s->name.find(tag), std::string::npos) << what << ": " << s->name;
        EXPECT_NE(s->name.find("+sum"), std::string::npos) << what << ": " << s->name;
        const Node& cin = g.node(s->nodes.front());
        const int64_t O = g.type(cin.inputs[2]).dims[0], planes = f32 ? 2 : 1;
        int weights = 0;
        for (const cuda::WeightFormat& f : s->constants) {
          if (f.value != cin.inputs[2]) continue;
          ++weights;
          EXPECT_TRUE(f.library && !f.transposed) << what << ": " << s->name;
          EXPECT_EQ(f.group, 6) << what << ": M values of each h";
          EXPECT_EQ(f.pitch, 32) << what << ": rows of 128 bytes";
          EXPECT_TRUE(f.swizzle128) << what << ": in the order the 128-byte swizzle reads";
          EXPECT_EQ(f.split, f32) << what << ": hi / lo planes for f32 math";
          EXPECT_EQ(f.tf32, !f32) << what << ": one plane rounded to TF32 for tf32 math";
          const int64_t H = g.type(cin.inputs[2]).dims[1] / 6;
          EXPECT_EQ(cuda::weightBytes(g, f), static_cast<size_t>(planes * O * H * 32 * 4)) << what;
        }
        EXPECT_EQ(weights, 1) << what << ": " << s->name;
        const auto& k = p->kernels[static_cast<size_t>(s->kernel)];
        // As many stages of W (planes x O rows of 128 bytes) as 227 KiB hold beside the pooled sums, 4 to 8.
        const int64_t stage = planes * O * 128, pool = O * (128 / d) * 4;
        const int64_t stages = std::clamp<int64_t>((227 * 1024 - 1024 - pool) / stage, 4, 8);
        const unsigned shared = static_cast<unsigned>(std::max<int64_t>(stages * stage, O * 512) + 1024);
        // 301 samples: 301 * D columns in blocks of 128, fewer than 132 / 2 SMs: clusters of 2.
        cuda::Launch small = k.launch(std::vector<int64_t>(k.extents.size(), 301));
        EXPECT_EQ(small.block[0], 256u) << what;
        EXPECT_EQ(small.grid[0], static_cast<unsigned>((301 * d + 127) / 128)) << what;
        EXPECT_EQ(small.grid[1], 2u) << what;
        EXPECT_EQ(small.clusterY, 2u) << what;
        EXPECT_EQ(small.sharedBytes, shared) << what;
        cuda::Launch large = k.launch(std::vector<int64_t>(k.extents.size(), 4096));
        EXPECT_EQ(large.grid[0], static_cast<unsigned>(4096 * d / 128)) << what;
        EXPECT_EQ(large.grid[1], 1u) << what << ": enough blocks, no cluster";
      }
      auto m = compileSm90a(p->moduleSource);
      ASSERT_TRUE(m.isOk()) << what << ": " << m.status().message();
      EXPECT_EQ(m->log.find("warning"), std::string::npos) << what << ": " << m->log;
      EXPECT_NE(m->ptx.find("wgmma.mma_async.sync.aligned.m64n72k8.f32.tf32.tf32"), std::string::npos) << what;
      EXPECT_NE(m->ptx.find("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes"), std::string::npos)
          << what << ": W's stages move by bulk copies";
    }
  }
}

// Where it does not run: sm_80 (no wgmma), CAGR_CUDA_CIN_WG=0, and a layer
// with more than 32 x0 rows (M = 40: a K step wider than a 128-byte row).
TEST(CudaCinWgCodegen, OtherGpusTheSwitchAndWideX0KeepTheMmaSyncKernel) {
  ScopedEnv x3("CAGR_CUDA_CIN_F32", "3xtf32");  // f32 layers: the opt-in 3xTF32 kernels
  Graph g = rectest::pooledCinLayers(8, "nvrtc.cin", Precision::kF32, 64, 72);
  expectCinSteps(cuda::lowerPlan(g, h200(), 80), ", 3xtf32]");
  expectCinSteps(lowerWith(g, "CAGR_CUDA_CIN_WG", "0"), ", 3xtf32]");

  rectest::Builder b;
  ValueId x = b.input("x", DType::kF32, {kBatch, 40, 8});
  ValueId c = b.op(OpKind::kCIN, {x, x, b.constant("w", {64, 1600}, 1)}, "c");
  b.g.addOutput(c);
  b.group({"c"}, 0, "nvrtc.cin");
  auto wide = cuda::lowerPlan(b.g, h200(), 90);
  ASSERT_TRUE(wide.isOk()) << wide.status().message();
  const auto steps = cinSteps(*wide);
  ASSERT_EQ(steps.size(), 1u);
  EXPECT_NE(steps[0]->name.find("[64x40x40, f32, 3xtf32]"), std::string::npos) << steps[0]->name;
}

// A bf16 layer of `h` xk rows and `m` x0 rows (D = 8, O = 64) alone in a
// group on nvrtc.cin, lowered for sm_90: its CIN step's name (its module
// compiled for sm_90a where `compile`).
std::string bf16CinStep(int64_t h, int64_t m, bool compile = false) {
  rectest::Builder b;
  ValueId xk = b.input("xk", DType::kF32, {kBatch, h, 8});
  ValueId x0 = b.input("x0", DType::kF32, {kBatch, m, 8});
  ValueId c = b.op(OpKind::kCIN, {xk, x0, b.constant("w", {64, h * m}, 1)}, "c");
  b.g.addOutput(c);
  b.group({"c"}, 0, "nvrtc.cin");
  for (Node& n : b.g.mutableNodes()) {
    if (n.op == OpKind::kCIN) n.mir.math = Precision::kBF16;
  }
  auto p = cuda::lowerPlan(b.g, h200(), 90);
  EXPECT_TRUE(p.isOk()) << p.status().message();
  if (!p.isOk() || cinSteps(*p).size() != 1) return "(no single CIN step)";
  if (compile) {
    auto module = compileSm90a(p->moduleSource);
    EXPECT_TRUE(module.isOk()) << "H " << h << " M " << m << ": " << module.status().message();
  }
  return cinSteps(*p)[0]->name;
}

// The bf16 warpgroup kernel stages two xk rows at a time in one 128-byte
// row of K = 2 M: an odd H, or M over 32 (2 M > 64 bf16), keeps the wmma
// kernel; an even H with M up to 32 takes it (M = 32 fills the row exactly:
// compiled here; xDeepFM's M = 22 and M = 6 ran on an H100).
TEST(CudaCinWgCodegen, Bf16LayersOfOddHOrWideX0KeepTheWmmaKernel) {
  EXPECT_NE(bf16CinStep(8, 6).find(", bf16 wgmma]"), std::string::npos) << bf16CinStep(8, 6);
  const std::string full = bf16CinStep(8, 32, true);
  EXPECT_NE(full.find(", bf16 wgmma]"), std::string::npos) << full;
  EXPECT_NE(bf16CinStep(7, 6).find(", wmma]"), std::string::npos) << bf16CinStep(7, 6);
  EXPECT_NE(bf16CinStep(8, 40).find(", wmma]"), std::string::npos) << bf16CinStep(8, 40);
}

// bf16 math on sm_90, at any batch: two xk rows a stage, W as bf16 stages
// (K = 2 M, rows of 64 bf16, swizzled), m64nOk16 bf16 wgmmas; with
// CAGR_CUDA_CIN_BF16=wmma, and before sm_90, the wmma kernel. (The GPU case
// is in cuda_cin_test.cc.)
TEST(CudaCinWgCodegen, Bf16LayersTakeTheWarpgroupKernelOnSm90) {
  Graph g = rectest::pooledCinLayers(8, "nvrtc.cin", Precision::kBF16, 64, 72);
  expectCinSteps(lowerWith(g, "CAGR_CUDA_CIN_BF16", "wmma"), ", wmma]");
  expectCinSteps(cuda::lowerPlan(g, h200(), 80), ", wmma]");
  auto p = cuda::lowerPlan(g, h200(), 90);
  ASSERT_TRUE(p.isOk()) << p.status().message();
  const auto steps = cinSteps(*p);
  ASSERT_EQ(steps.size(), 2u);
  for (const cuda::ProgramStep* s : steps) {
    EXPECT_NE(s->name.find(", bf16 wgmma]"), std::string::npos) << s->name;
    const Node& cin = g.node(s->nodes.front());
    const int64_t O = g.type(cin.inputs[2]).dims[0], K = g.type(cin.inputs[2]).dims[1];
    int weights = 0;
    for (const cuda::WeightFormat& f : s->constants) {
      if (f.value != cin.inputs[2]) continue;
      ++weights;
      EXPECT_EQ(f.group, 12) << s->name << ": two rows of M = 6 a stage";
      EXPECT_EQ(f.pitch, 64) << s->name << ": 128 bytes of bf16";
      EXPECT_EQ(f.element, Precision::kBF16) << s->name;
      EXPECT_TRUE(f.swizzle128 && !f.split && !f.tf32) << s->name;
      EXPECT_EQ(cuda::weightBytes(g, f), static_cast<size_t>(K / 12 * O * 64 * 2)) << s->name;
    }
    EXPECT_EQ(weights, 1) << s->name;
  }
  auto m = compileSm90a(p->moduleSource);
  ASSERT_TRUE(m.isOk()) << m.status().message();
  EXPECT_EQ(m->log.find("warning"), std::string::npos) << m->log;
  EXPECT_NE(m->ptx.find("wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16"), std::string::npos);
  EXPECT_NE(m->ptx.find("wgmma.mma_async.sync.aligned.m64n72k16.f32.bf16.bf16"), std::string::npos);
}

// A plan priced at a batch (Graph::meta "batch", as the optimizer marks
// it) of fewer 128-column blocks than an eighth of the SMs keeps
// cagr_cin_x3_step (D = 8: batch 263 is 16.4 blocks, 264 is 16.5 = 132 /
// 8); unmarked or at 264 and more the warpgroup kernel;
// CAGR_CUDA_CIN_WG=1 takes it anyway. bf16 layers take it at any batch
// (their alternative, the wmma kernel, is slower at every batch).
TEST(CudaCinWgCodegen, APlanPricedAtASmallBatchKeepsTheMmaSyncKernel) {
  ScopedEnv x3("CAGR_CUDA_CIN_F32", "3xtf32");  // f32 layers: the opt-in 3xTF32 kernels
  for (auto [batch, env, tag] : {std::tuple{int64_t{64}, "", ", 3xtf32]"}, std::tuple{int64_t{263}, "", ", 3xtf32]"},
                                 std::tuple{int64_t{264}, "", ", 3xtf32 wgmma]"},
                                 std::tuple{int64_t{4096}, "", ", 3xtf32 wgmma]"},
                                 std::tuple{int64_t{256}, "1", ", 3xtf32 wgmma]"},
                                 std::tuple{int64_t{64}, "", ", bf16 wgmma]"}}) {
    const Precision math = std::string(tag).find("bf16") != std::string::npos ? Precision::kBF16 : Precision::kF32;
    Graph g = rectest::pooledCinLayers(8, "nvrtc.cin", math, 64, 72);
    g.mutableMeta().set("batch", batch);
    if (*env != '\0') setenv("CAGR_CUDA_CIN_WG", env, 1);
    auto p = cuda::lowerPlan(g, h200(), 90);
    unsetenv("CAGR_CUDA_CIN_WG");
    ASSERT_TRUE(p.isOk()) << p.status().message();
    const auto steps = cinSteps(*p);
    ASSERT_EQ(steps.size(), 2u);
    for (const auto* s : steps) {
      EXPECT_NE(s->name.find(tag), std::string::npos)
          << "batch " << batch << " CAGR_CUDA_CIN_WG=" << env << ": " << s->name;
    }
  }
}

// W [O, H * M] as the kernel reads it: [h][plane][o][32], each row's
// 16-byte chunk u at chunk u ^ (o % 8) (the 128-byte swizzle); f32 math: hi
// (low 13 mantissa bits cleared) + lo == w exactly; tf32: one plane, each
// value rounded to nearest TF32; zeros past M.
TEST(CudaCinWgCodegen, GroupedWeightsAreSwizzledStagesPerHInHiLoPlanes) {
  ScopedEnv x3("CAGR_CUDA_CIN_F32", "3xtf32");  // f32 layers: the opt-in 3xTF32 kernels
  Graph g = rectest::pooledCinLayers(8, "nvrtc.cin", Precision::kF32, 64, 72);
  const ValueId w = g.node(cinSteps(*cuda::lowerPlan(g, h200(), 90))[1]->nodes.front()).inputs[2];
  const Tensor& t = *g.constant(w);
  const int64_t O = t.shape()[0], K = t.shape()[1], M = 6, H = K / M, pitch = 32;
  for (bool split : {true, false}) {
    cuda::WeightFormat f{w, true, pitch, false, Precision::kF32, !split, M, split, true};
    const int64_t planes = split ? 2 : 1;
    std::vector<float> dev(cuda::weightBytes(g, f) / 4, -1.f);
    ASSERT_EQ(static_cast<int64_t>(dev.size()), planes * H * O * pitch);
    ASSERT_TRUE(cuda::writeWeight(g, f, reinterpret_cast<std::byte*>(dev.data())).isOk());
    std::vector<int> seen(dev.size(), 0);
    for (int64_t h = 0; h < H; ++h) {
      for (int64_t o = 0; o < O; ++o) {
        for (int64_t m = 0; m < pitch; ++m) {
          const int64_t chunk = (m / 4) ^ (o % 8);
          const size_t at = static_cast<size_t>((h * planes * O + o) * pitch + chunk * 4 + m % 4);
          const size_t lo = at + static_cast<size_t>(O * pitch);
          ++seen[at];
          if (split) ++seen[lo];
          if (m >= M) {
            EXPECT_EQ(dev[at], 0.f) << "pad h " << h << " o " << o << " m " << m;
            if (split) {
              EXPECT_EQ(dev[lo], 0.f);
            }
            continue;
          }
          const float x = t.data<float>()[o * K + h * M + m];
          if (split) {
            ASSERT_EQ(bitsOf(dev[at]) & 0x1fffu, 0u) << "hi of W[" << o << ", " << h * M + m << "]";
            ASSERT_EQ(dev[at] + dev[lo], x) << "hi + lo of W[" << o << ", " << h * M + m << "]";
          } else {
            const int e = std::ilogb(x);
            const float want = x == 0.f ? x : std::ldexp(std::round(std::ldexp(x, 10 - e)), e - 10);
            ASSERT_EQ(dev[at], want) << "W[" << o << ", " << h * M + m << "]";
          }
        }
      }
    }
    EXPECT_EQ(std::count(seen.begin(), seen.end(), 1), static_cast<std::ptrdiff_t>(seen.size()))
        << "every float of the stages is one (h, plane, o, m)";
  }
  // bf16: two rows of M a stage, chunks of 8 values, each value rounded to bf16.
  cuda::WeightFormat bf{w, true, 64, false, Precision::kBF16, false, 2 * M, false, true};
  std::vector<uint16_t> half(cuda::weightBytes(g, bf) / 2, 0xffff);
  ASSERT_EQ(static_cast<int64_t>(half.size()), H / 2 * O * 64);
  ASSERT_TRUE(cuda::writeWeight(g, bf, reinterpret_cast<std::byte*>(half.data())).isOk());
  for (int64_t st = 0; st < H / 2; ++st) {
    for (int64_t o = 0; o < O; ++o) {
      for (int64_t k = 0; k < 64; ++k) {
        const uint16_t got = half[static_cast<size_t>((st * O + o) * 64 + ((k / 8) ^ (o % 8)) * 8 + k % 8)];
        const uint16_t want = k < 2 * M ? floatToBf16(t.data<float>()[o * K + st * 2 * M + k]) : 0;
        ASSERT_EQ(got, want) << "stage " << st << " o " << o << " k " << k;
      }
    }
  }
  cuda::WeightFormat narrow{w, true, 8, false, Precision::kF32, false, M, false, true};
  std::vector<float> dev(cuda::weightBytes(g, narrow) / 4);
  EXPECT_FALSE(cuda::writeWeight(g, narrow, reinterpret_cast<std::byte*>(dev.data())).isOk())
      << "swizzled rows must be 128 bytes";
}

}  // namespace
}  // namespace cagr

#endif
