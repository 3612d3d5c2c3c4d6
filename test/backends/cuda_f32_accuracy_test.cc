// Lossless by default (DESIGN §7) on the GPU: an f32 node may run on a kernel
// that computes f32 another way (3xTF32 on tensor cores) only where it is
// measured no less accurate than the plain f32 kernel on the same shapes.
// Per layer, against the reference executor (double accumulation), the
// default kernel's max abs error must stay within 1.1x the FFMA / SGEMM
// kernel's (and a kernel measured less accurate must not be the default):
// xDeepFM-shaped CIN layers (the default against
// CAGR_CUDA_CIN_F32=ffma, and the 3xTF32 kernels, which measured less
// accurate and so are opt-in with CAGR_CUDA_CIN_F32=3xtf32) and a DCN-sized f32 GEMM over a weight
// (the wgmma 3xTF32 tile, opt-in, CAGR_GEMM_WGMMA=force, against cuBLASLt
// SGEMM, CAGR_GEMM_WGMMA=0). Skips without a GPU.
#include <gtest/gtest.h>

#ifdef CAGR_HAVE_CUDA

#include <cmath>
#include <string>
#include <vector>

#include "backends/cpu_test_util.h"
#include "backends/cuda_test_util.h"
#include "cagr/backend.h"
#include "cagr/reference.h"
#include "support/scoped_env.h"

namespace cagr {
namespace {

using rectest::Builder;
using rectest::uniform;

// Max abs error of `g`'s first output on the GPU against the reference,
// with the environment variable `knob` set to `value` (nullptr: unset).
double gpuError(ExecutionBackend& backend, const Graph& g, const rectest::Inputs& in, const char* knob,
                const char* value, std::string* kernels) {
  ScopedEnv env(knob, value);
  auto exe = backend.compile(g);
  EXPECT_TRUE(exe.isOk()) << exe.status().message();
  if (!exe.isOk()) return INFINITY;
  auto got = (*exe)->run(in);
  auto want = runReference(g, in);
  EXPECT_TRUE(got.isOk() && want.isOk());
  if (!got.isOk() || !want.isOk()) return INFINITY;
  for (const std::string& k : (*exe)->kernelReport()) *kernels += "[" + k + "] ";
  return compareTensors((*got)[0], (*want)[0], 0, 0).maxAbsError;
}

// xDeepFM's CIN: x [B, 22, 16], two layers of 200 maps (the zoo's shapes).
Graph cinLayers(const std::string& kernel) {
  Builder b;
  ValueId x = b.input("x", DType::kF32, {kBatch, 22, 16});
  ValueId c1 = b.op(OpKind::kCIN, {x, x, b.constant("w1", {200, 22 * 22}, 1), b.constant("b1", {200}, 2)}, "c1");
  ValueId c2 = b.op(OpKind::kCIN, {c1, x, b.constant("w2", {200, 200 * 22}, 3)}, "c2");
  b.g.addOutput(c2);
  auto k = kernelByName(kernel);
  for (Node& n : b.g.mutableNodes()) {
    if (n.op == OpKind::kCIN && k.isOk()) n.mir.kernel = *k;
  }
  return b.g;
}

TEST(CudaF32Accuracy, DefaultCinKernelsAreAsAccurateAsFfma) {
  std::string why;
  auto backend = cudatest::gpuOrSkip(why);
  if (!backend) GTEST_SKIP() << why;
  Graph g = cinLayers("nvrtc.cin");
  for (int64_t batch : {64, 512}) {
    rectest::Inputs in{{"x", uniform({batch, 22, 16}, 5)}};
    std::string fast, plain, x3;
    double dflt = gpuError(*backend, g, in, "CAGR_CUDA_CIN_F32", nullptr, &fast);
    double ffma = gpuError(*backend, g, in, "CAGR_CUDA_CIN_F32", "ffma", &plain);
    // The 3xTF32 kernel, opt-in since it measured less accurate (H100: max
    // abs error 3.46 vs FFMA's 0.245 at batch 64, 9.20 vs 0.653 at 512).
    double tc = gpuError(*backend, g, in, "CAGR_CUDA_CIN_F32", "3xtf32", &x3);
    RecordProperty("cin_b" + std::to_string(batch), std::to_string(dflt) + " vs ffma " + std::to_string(ffma) +
                                                        " vs 3xtf32 " + std::to_string(tc));
    EXPECT_LE(dflt, 1.1 * ffma) << "batch " << batch << ": default " << fast << "vs " << plain;
    if (tc > 1.1 * ffma) EXPECT_EQ(fast, plain) << "the default must not be the less accurate " << x3;
  }
}

// A DCN-v2-sized f32 layer: y = x [B, 432] * W^T [432 -> 400] + b.
TEST(CudaF32Accuracy, WgmmaGemmTileIsAsAccurateAsSgemm) {
  std::string why;
  auto backend = cudatest::gpuOrSkip(why);
  if (!backend) GTEST_SKIP() << why;
  Builder b;
  ValueId x = b.input("x", DType::kF32, {kBatch, 432});
  ValueId y = b.op(OpKind::kGemm, {x, b.constant("w", {400, 432}, 7), b.constant("b", {400}, 8)}, "fc",
                   rectest::attrs({{"transB", int64_t{1}}}));
  b.g.addOutput(y);
  for (int64_t batch : {256, 4096}) {
    rectest::Inputs in{{"x", uniform({batch, 432}, 9)}};
    std::string tile, sgemm;
    double wg = gpuError(*backend, b.g, in, "CAGR_GEMM_WGMMA", "force", &tile);
    double lib = gpuError(*backend, b.g, in, "CAGR_GEMM_WGMMA", "0", &sgemm);
    std::string chosen;
    double dflt = gpuError(*backend, b.g, in, "CAGR_GEMM_WGMMA", nullptr, &chosen);
    RecordProperty("gemm_b" + std::to_string(batch), std::to_string(wg) + " vs sgemm " + std::to_string(lib));
    // The default must be as accurate as SGEMM; the tile (opt-in) may only
    // be the default where it measures so (it did not: 1.03-1.10x on H100).
    EXPECT_LE(dflt, 1.1 * lib) << "batch " << batch << ": default " << chosen << "vs " << sgemm;
    if (wg > lib) EXPECT_EQ(chosen.find("wgmma"), std::string::npos) << "the less accurate tile runs by default";
  }
}

}  // namespace
}  // namespace cagr

#else

TEST(CudaF32Accuracy, ThisBuildHasNoCuda) { GTEST_SKIP() << "built without the CUDA toolkit"; }

#endif
