// cublaslt.cin on the GPU (issue 6): two chained CIN layers (with and
// without bias) run as outer-product chunks times cuBLASLt GEMMs, in every
// math mode, against the reference executor's emulation of the same plan;
// at batch 1 and at a batch that leaves a partial last chunk, with the
// default chunk budget and with one small enough to give dozens of chunks;
// the first run captures the CUDA graph, the second replays it. Skips
// without a GPU; the kernels' NVRTC compile is in cuda_codegen_test.cc.
#include <gtest/gtest.h>

#ifdef CAGR_HAVE_CUDA

#include <cmath>
#include <cstdlib>
#include <string>

#include "backends/cpu_test_util.h"
#include "cagr/backend.h"
#include "cagr/reference.h"

namespace cagr {
namespace {

using rectest::Builder;
using rectest::uniform;

std::unique_ptr<ExecutionBackend> gpuOrSkip(std::string& why) {
  auto backend = makeBackend("cuda");
  if (!backend.isOk()) {
    why = backend.status().message();
    return nullptr;
  }
  BackendCapabilities caps = (*backend)->capabilities();
  if (!caps.available) {
    why = caps.note;
    return nullptr;
  }
  return std::move(*backend);
}

// x [B, 6, 8]; c1 = CIN(x, x, w1 [40, 36], b1) [B, 40, 8]; c2 = CIN(c1, x, w2 [24, 240]) [B, 24, 8].
Graph twoCinLayers(Precision math) {
  Builder b;
  ValueId x = b.input("x", DType::kF32, {kBatch, 6, 8});
  ValueId c1 = b.op(OpKind::kCIN, {x, x, b.constant("w1", {40, 36}, 1), b.constant("b1", {40}, 2)}, "c1");
  ValueId c2 = b.op(OpKind::kCIN, {c1, x, b.constant("w2", {24, 240}, 3)}, "c2");
  b.g.addOutput(c1);
  b.g.addOutput(c2);
  auto k = kernelByName("cublaslt.cin");
  for (Node& n : b.g.mutableNodes()) {
    n.mir.math = math;
    if (k.isOk()) n.mir.kernel = *k;
  }
  return b.g;
}

double maxAbs(const Tensor& t) {
  double m = 0;
  for (float v : t.values<float>()) m = std::max(m, static_cast<double>(std::fabs(v)));
  return m;
}

TEST(CudaCinGpu, CublasLtCinMatchesTheReferenceInEveryMathModeAndChunking) {
  std::string why;
  auto backend = gpuOrSkip(why);
  if (!backend) GTEST_SKIP() << why;
  // f32: only the accumulation order differs from the reference. Reduced
  // modes also round each product xk * x0 to the GEMM's element type (the
  // reference keeps it exact), so they get set_precision's stated bounds,
  // max|out' - out| <= bound * max|out|, which an indexing error breaks.
  for (auto [math, bound] : {std::pair{Precision::kF32, 1e-4},
                             {Precision::kTF32, 1e-2},
                             {Precision::kBF16, 5e-2},
                             {Precision::kF16, 1e-2}}) {
    for (const char* chunkKb : {"", "16"}) {
      if (*chunkKb != '\0') {
        setenv("CAGR_CIN_CHUNK_KB", chunkKb, 1);
      } else {
        unsetenv("CAGR_CIN_CHUNK_KB");
      }
      Graph g = twoCinLayers(math);
      auto exe = backend->compile(g);
      ASSERT_TRUE(exe.isOk()) << exe.status().message();
      for (int64_t batch : {1, 301}) {
        rectest::Inputs in{{"x", uniform({batch, 6, 8}, 7)}};
        auto want = runReference(g, in);
        ASSERT_TRUE(want.isOk()) << want.status().message();
        for (int rep = 0; rep < 2; ++rep) {
          auto got = (*exe)->run(in);
          ASSERT_TRUE(got.isOk()) << got.status().message();
          const std::string what = std::string(precisionName(math)) + " batch " + std::to_string(batch) + " chunk " +
                                   (*chunkKb ? chunkKb : "default") + " run " + std::to_string(rep);
          auto c1 = compareTensors((*got)[0], (*want)[0], bound * maxAbs((*want)[0]), 0);
          EXPECT_TRUE(c1.close) << what << " layer 1: " << c1.message;
          auto c2 = compareTensors((*got)[1], (*want)[1], bound * maxAbs((*want)[1]), 0);
          EXPECT_TRUE(c2.close) << what << " layer 2: " << c2.message;
        }
      }
      bool named = false;
      for (const std::string& k : (*exe)->kernelReport()) named |= k.rfind("cublaslt.cin[40x6x6", 0) == 0;
      EXPECT_TRUE(named) << "kernel report names the cublaslt.cin step";
    }
  }
  unsetenv("CAGR_CIN_CHUNK_KB");
}

}  // namespace
}  // namespace cagr

#else

TEST(CudaCinGpu, ThisBuildHasNoCuda) {
  GTEST_SKIP() << "built without the CUDA toolkit";
}

#endif
