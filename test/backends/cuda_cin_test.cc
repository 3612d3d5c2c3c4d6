// cublaslt.cin on the GPU (issue 6): two chained CIN layers (with and
// without bias) run as outer-product chunks times cuBLASLt GEMMs, in every
// math mode, against the reference executor's emulation of the same plan;
// at batch 1 and at a batch that leaves a partial last chunk, with the
// default chunk budget and with one small enough to give dozens of chunks,
// without a pipeline and with 2 and 4 lanes (CAGR_CIN_PIPELINE), and in K
// slices (CAGR_CIN_SLICE=1: the outer product one slice at a time); and with
// the first layer's ReLU fused into it (cublaslt.cin's transpose kernel and
// nvrtc.cin's store apply it), and with each layer's sum over D pooled in
// its kernel; and the finer chunks the first run's variants offer, kept
// when memory outweighs time. The first run captures the CUDA graph, the
// second replays it. Skips without a GPU; the kernels' NVRTC compile is in
// cuda_codegen_test.cc.
#include <gtest/gtest.h>

#ifdef CAGR_HAVE_CUDA

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "backends/cin_pool_util.h"
#include "backends/cpu_test_util.h"
#include "backends/cuda_test_util.h"
#include "backends/cuda/cuda_device.h"
#include "cagr/backend.h"
#include "cagr/reference.h"

namespace cagr {
namespace {

using rectest::Builder;
using rectest::uniform;

using cudatest::gpuOrSkip;

// x [B, 6, 8]; c1 = CIN(x, x, w1 [o1, 36], b1) [B, o1, 8]; c2 = CIN(c1, x, w2 [o2, 6 * o1]) [B, o2, 8]
// on `kernel`. With `relu`, c1 is followed by r1 = Relu(c1) in c1's group, and c2 reads r1.
Graph twoCinLayers(Precision math, const std::string& kernel = "cublaslt.cin", bool relu = false, int64_t o1 = 40,
                   int64_t o2 = 24) {
  Builder b;
  ValueId x = b.input("x", DType::kF32, {kBatch, 6, 8});
  ValueId c1 = b.op(OpKind::kCIN, {x, x, b.constant("w1", {o1, 36}, 1), b.constant("b1", {o1}, 2)}, "c1");
  ValueId r1 = relu ? b.op(OpKind::kRelu, {c1}, "r1") : c1;
  ValueId c2 = b.op(OpKind::kCIN, {r1, x, b.constant("w2", {o2, 6 * o1}, 3)}, "c2");
  b.g.addOutput(r1);
  b.g.addOutput(c2);
  auto k = kernelByName(kernel);
  for (Node& n : b.g.mutableNodes()) {
    if (n.op == OpKind::kCIN) n.mir.math = math;
    if (k.isOk() && (n.op == OpKind::kCIN || n.op == OpKind::kRelu)) n.mir.kernel = *k;
    if (n.op == OpKind::kRelu || (relu && n.outputs[0] == c1)) n.mir.group = 0;
  }
  return b.g;
}

// Sets (or, given "", unsets) an environment variable.
void setEnv(const char* name, const std::string& value) {
  if (value.empty()) {
    unsetenv(name);
  } else {
    setenv(name, value.c_str(), 1);
  }
}

double maxAbs(const Tensor& t) {
  double m = 0;
  for (float v : t.values<float>()) m = std::max(m, static_cast<double>(std::fabs(v)));
  return m;
}

// Compiles `g` (input x [B, fields, d]) and checks every output against
// the reference at batch 1 and 301, run twice (capture, replay); `what`
// names the case in failures. Returns the kernel report (empty when
// compiling failed).
std::vector<std::string> checkAgainstReference(ExecutionBackend& backend, const Graph& g, double bound,
                                               const std::string& what, int64_t d = 8, int64_t fields = 6) {
  auto exe = backend.compile(g);
  EXPECT_TRUE(exe.isOk()) << what << ": " << exe.status().message();
  if (!exe.isOk()) return {};
  for (int64_t batch : {1, 301}) {
    rectest::Inputs in{{"x", uniform({batch, fields, d}, 7)}};
    auto want = runReference(g, in);
    EXPECT_TRUE(want.isOk()) << want.status().message();
    if (!want.isOk()) return {};
    for (int rep = 0; rep < 2; ++rep) {
      auto got = (*exe)->run(in);
      EXPECT_TRUE(got.isOk()) << what << ": " << got.status().message();
      if (!got.isOk()) return {};
      for (size_t o = 0; o < want->size(); ++o) {
        auto c = compareTensors((*got)[o], (*want)[o], bound * maxAbs((*want)[o]), 0);
        EXPECT_TRUE(c.close) << what << " batch " << batch << " run " << rep << " output " << o << ": " << c.message;
      }
    }
  }
  return (*exe)->kernelReport();
}

// checkAgainstReference, and a step of the report starts with `reportPrefix`.
void checkAgainstReference(ExecutionBackend& backend, const Graph& g, double bound, const std::string& what,
                           const std::string& reportPrefix) {
  bool named = false;
  for (const std::string& k : checkAgainstReference(backend, g, bound, what)) named |= k.rfind(reportPrefix, 0) == 0;
  EXPECT_TRUE(named) << what << ": kernel report names the step " << reportPrefix;
}

// f32: only the accumulation order differs from the reference. Reduced
// modes also round each product xk * x0 to the GEMM's element type (the
// reference keeps it exact), so they get set_precision's stated bounds,
// max|out' - out| <= bound * max|out|, which an indexing error breaks.
const std::pair<Precision, double> kModes[] = {
    {Precision::kF32, 1e-4}, {Precision::kTF32, 1e-2}, {Precision::kBF16, 5e-2}, {Precision::kF16, 1e-2}};

TEST(CudaCinGpu, CublasLtCinMatchesTheReferenceInEveryMathModeChunkingAndPipeline) {
  std::string why;
  auto backend = gpuOrSkip(why);
  if (!backend) GTEST_SKIP() << why;
  for (auto [math, bound] : kModes) {
    for (const char* pipeline : {"", "2", "4"}) {
      for (const char* chunkKb : {"", "16"}) {
        for (const char* slice : {"", "1"}) {  // layer 2 (K = 40 x 6) in two K slices of 20 xk rows
          if (*slice != '\0' && *pipeline != '\0') continue;  // lanes run unsliced
          setEnv("CAGR_CIN_PIPELINE", pipeline);
          setEnv("CAGR_CIN_CHUNK_KB", chunkKb);
          setEnv("CAGR_CIN_SLICE", slice);
          const std::string what = std::string(precisionName(math)) + " chunk " + (*chunkKb ? chunkKb : "default") +
                                   " KB, pipeline " + (*pipeline ? pipeline : "none") + (*slice ? ", K slices" : "");
          bool named = false, sliced = false;
          for (const std::string& k : checkAgainstReference(*backend, twoCinLayers(math), bound, what)) {
            named |= k.rfind("cublaslt.cin[40x6x6", 0) == 0;
            sliced |= k.find(", 2 K slices]") != std::string::npos;
          }
          EXPECT_TRUE(named) << what << ": kernel report names the step cublaslt.cin[40x6x6";
          EXPECT_EQ(sliced, *slice != '\0') << what;
        }
      }
    }
  }
  unsetenv("CAGR_CIN_PIPELINE");
  unsetenv("CAGR_CIN_CHUNK_KB");
  unsetenv("CAGR_CIN_SLICE");
}

TEST(CudaCinGpu, FusedReluMatchesTheReferenceOnEitherKernel) {
  std::string why;
  auto backend = gpuOrSkip(why);
  if (!backend) GTEST_SKIP() << why;
  for (const std::string kernel : {"cublaslt.cin", "nvrtc.cin"}) {
    for (auto [math, bound] : kModes) {
      for (const char* pipeline : {"", "2"}) {
        if (kernel == "nvrtc.cin" && *pipeline != '\0') continue;
        setEnv("CAGR_CIN_PIPELINE", pipeline);
        setEnv("CAGR_CIN_CHUNK_KB", *pipeline ? "16" : "");
        const std::string what =
            kernel + " + relu " + precisionName(math) + " pipeline " + (*pipeline ? pipeline : "none");
        checkAgainstReference(*backend, twoCinLayers(math, kernel, true), bound, what, kernel + "[40x6x6");
      }
    }
  }
  unsetenv("CAGR_CIN_PIPELINE");
  unsetenv("CAGR_CIN_CHUNK_KB");
}

// f32 layers of 64 and 72 rows run on nvrtc.cin's one-h-per-step kernels
// (W uploaded transposed, cp.async double buffer): on FFMA by default
// (cagr_cin_ffma_step), on tensor cores with CAGR_CUDA_CIN_F32=3xtf32
// (cagr_cin_x3_step, 3xTF32; these small batches run as clusters of two
// blocks splitting H, CAGR_CIN_X3_SPLIT=1 runs them unsplit), all to f32's
// bound: with the first layer's ReLU, and with both layers pooled (D = 8:
// one atomic per value; D = 16: a fragment's 16 rows summed across the
// warp first). tf32 layers of the same shapes take cagr_cin_x3_step with
// one term (", mma]"), to tf32's bound; both also with one h slice per
// barrier (CAGR_CIN_X3_HSTEP=1), one m16 column tile per warp
// (CAGR_CIN_X3_MT=1), and eight or two warps along O (CAGR_CIN_X3_WO: at O
// = 72 warps of 2, 1 and no n8 tiles, or of 5 and 4). On sm_90 the same
// layers also on cagr_cin_wg_step (warpgroup MMAs, ", 3xtf32 wgmma]" /
// ", wgmma]"; CAGR_CUDA_CIN_WG=0 keeps the others' cases on
// cagr_cin_x3_step), in clusters of 2 (the default at batch 301), unsplit
// and in clusters of 4 (CAGR_CIN_WG_SPLIT); bf16 layers on it too (",
// bf16 wgmma]", their default on sm_90), to bf16's bound.
TEST(CudaCinGpu, StepKernelsOfWideLayersMatchTheReference) {
  std::string why;
  auto backend = gpuOrSkip(why);
  if (!backend) GTEST_SKIP() << why;
  struct Case {
    Precision math;
    const char* f32;
    const char* split;
    const char* tag;
    double bound;
    const char* knob = "";  // NAME=value set for the case
  };
  for (const Case c :
       {Case{Precision::kF32, "3xtf32", "", ", 3xtf32]", 1e-4}, Case{Precision::kF32, "3xtf32", "1", ", 3xtf32]", 1e-4},
        Case{Precision::kF32, "ffma", "", ", ffma-step]", 1e-4}, Case{Precision::kTF32, "", "", ", mma]", 1e-2},
        Case{Precision::kTF32, "", "1", ", mma]", 1e-2}, Case{Precision::kF32, "3xtf32", "", ", 3xtf32]", 1e-4, "MT=1"},
        Case{Precision::kTF32, "", "", ", mma]", 1e-2, "MT=1"},
        Case{Precision::kF32, "3xtf32", "", ", 3xtf32]", 1e-4, "HSTEP=1"},
        Case{Precision::kTF32, "", "", ", mma]", 1e-2, "HSTEP=1"},
        Case{Precision::kTF32, "", "", ", mma]", 1e-2, "WO=8"},
        Case{Precision::kF32, "3xtf32", "", ", 3xtf32]", 1e-4, "WO=2"},
        Case{Precision::kBF16, "", "", ", wmma]", 5e-2},
        Case{Precision::kF32, "3xtf32", "", ", 3xtf32 wgmma]", 1e-4, "WG"},
        Case{Precision::kTF32, "", "", ", wgmma]", 1e-2, "WG"},
        Case{Precision::kF32, "3xtf32", "", ", 3xtf32 wgmma]", 1e-4, "WG_SPLIT=1"},
        Case{Precision::kTF32, "", "", ", wgmma]", 1e-2, "WG_SPLIT=4"},
        Case{Precision::kBF16, "", "", ", bf16 wgmma]", 5e-2, "WG"},
        Case{Precision::kBF16, "", "", ", bf16 wgmma]", 5e-2, "WG_SPLIT=1"}}) {
    const bool wg = std::string(c.knob).rfind("WG", 0) == 0;
    if (wg && cuda::deviceInfo().major * 10 + cuda::deviceInfo().minor != 90) continue;  // sm_90a only
    setEnv("CAGR_CUDA_CIN_WG", wg ? "" : "0");

    setEnv("CAGR_CUDA_CIN_F32", c.f32);
    setEnv("CAGR_CIN_X3_SPLIT", c.split);
    const std::string knob = std::string(c.knob) == "WG" ? "" : c.knob;
    const std::string knobName = "CAGR_CIN_" + std::string(wg ? "" : "X3_") + knob.substr(0, knob.find('='));
    if (!knob.empty()) setEnv(knobName.c_str(), knob.substr(knob.find('=') + 1).c_str());
    const std::string tag = c.tag, mode = precisionName(c.math);
    checkAgainstReference(*backend, twoCinLayers(c.math, "nvrtc.cin", true, 64, 72), c.bound,
                          "nvrtc.cin step + relu" + tag + " split " + c.split + " " + knob,
                          "nvrtc.cin[64x6x6, " + mode + tag + "+relu");
    for (int64_t d : {8, 16}) {
      int step = 0;
      const std::string what =
          "pooled step kernel " + mode + tag + " split " + c.split + " " + knob + " D " + std::to_string(d);
      for (const std::string& k : checkAgainstReference(
               *backend, rectest::pooledCinLayers(d, "nvrtc.cin", c.math, 64, 72), c.bound, what, d)) {
        step += k.find(tag + "+relu+sum") != std::string::npos ? 1 : 0;
      }
      EXPECT_EQ(step, 1) << what << ": layer 1 (+relu+sum) on the step kernel";
    }
    if (!knob.empty()) unsetenv(knobName.c_str());
  }
  unsetenv("CAGR_CUDA_CIN_F32");
  unsetenv("CAGR_CIN_X3_SPLIT");
  unsetenv("CAGR_CUDA_CIN_WG");
}

// bf16 on sm_90 with M = 32 x0 rows: two xk rows fill a stage's 128-byte
// row exactly (K = 64, no padding), the widest the warpgroup kernel takes.
TEST(CudaCinGpu, Bf16LayerOfThirtyTwoFieldsMatchesTheReference) {
  std::string why;
  auto backend = gpuOrSkip(why);
  if (!backend) GTEST_SKIP() << why;
  rectest::Builder b;
  ValueId x = b.input("x", DType::kF32, {kBatch, 32, 8});
  b.g.addOutput(b.op(OpKind::kCIN, {x, x, b.constant("w", {64, 32 * 32}, 1)}, "c"));
  b.group({"c"}, 0, "nvrtc.cin");
  for (Node& n : b.g.mutableNodes()) {
    if (n.op == OpKind::kCIN) n.mir.math = Precision::kBF16;
  }
  const auto report = checkAgainstReference(*backend, b.g, 5e-2, "bf16 CIN, M = 32", 8, 32);
  const bool sm90 = cuda::deviceInfo().major * 10 + cuda::deviceInfo().minor == 90;
  const std::string tag = sm90 ? "nvrtc.cin[64x32x32, bf16, bf16 wgmma]" : "nvrtc.cin[64x32x32, bf16, wmma]";
  EXPECT_TRUE(std::any_of(report.begin(), report.end(), [&](const std::string& k) { return k.rfind(tag, 0) == 0; }))
      << "no step named " << tag;
}

// The pooled tail (xDeepFM's sum over D fused into each CIN layer's kernel,
// its row sums the concat's operands): layer 1 writes its ReLU'd map for
// layer 2 and its sums, layer 2 only its sums; both kernels, every math
// mode, batch 1 and 301 (partial blocks and chunks), capture and replay.
TEST(CudaCinGpu, PooledTailMatchesTheReferenceOnEitherKernel) {
  std::string why;
  auto backend = gpuOrSkip(why);
  if (!backend) GTEST_SKIP() << why;
  for (const std::string kernel : {"cublaslt.cin", "nvrtc.cin"}) {
    for (auto [math, bound] : kModes) {
      for (const char* chunkKb : {"", "16"}) {
        if (kernel == "nvrtc.cin" && *chunkKb != '\0') continue;
        setEnv("CAGR_CIN_CHUNK_KB", chunkKb);
        const std::string what = kernel + " + relu + sum " + precisionName(math) + " chunk " + chunkKb;
        int pooled = 0;
        for (const std::string& k :
             checkAgainstReference(*backend, rectest::pooledCinLayers(8, kernel, math), bound, what)) {
          pooled += k.find("+sum") != std::string::npos ? 1 : 0;
        }
        EXPECT_EQ(pooled, 2) << what << ": both layers pool in their own kernel";
      }
    }
  }
  unsetenv("CAGR_CIN_CHUNK_KB");
}

// chooseBatch's CIN chunk variants (cuda_launch.cc): the first run also
// times the layers in K slices and in chunks of half and a quarter of the
// default's (here one chunk for all 301 samples; the quarter takes the
// fewest bytes); with device bytes weighed far above time
// (CompileOptions::memoryWeight) the executable keeps the finest, its
// device bytes no more than where time alone decides, its results the
// reference's either way.
TEST(CudaCinGpu, FinerCinChunksAreKeptWhenMemoryOutweighsTime) {
  std::string why;
  auto backend = gpuOrSkip(why);
  if (!backend) GTEST_SKIP() << why;
  unsetenv("CAGR_CIN_CHUNK_KB");
  unsetenv("CAGR_CIN_PIPELINE");
  const Graph g = twoCinLayers(Precision::kBF16);
  rectest::Inputs in{{"x", uniform({301, 6, 8}, 7)}};
  auto want = runReference(g, in);
  ASSERT_TRUE(want.isOk()) << want.status().message();
  int64_t peak[2] = {0, 0};
  for (int i : {0, 1}) {
    CompileOptions o;
    o.memoryWeight = i == 0 ? 0.0 : 100.0;
    auto exe = backend->compile(g, o);
    ASSERT_TRUE(exe.isOk()) << exe.status().message();
    for (int rep = 0; rep < 2; ++rep) {
      auto got = (*exe)->run(in);
      ASSERT_TRUE(got.isOk()) << got.status().message();
      for (size_t out = 0; out < want->size(); ++out) {
        auto c = compareTensors((*got)[out], (*want)[out], 5e-2 * maxAbs((*want)[out]), 0);
        EXPECT_TRUE(c.close) << "memory weight " << o.memoryWeight << " output " << out << ": " << c.message;
      }
    }
    peak[i] = (*exe)->peakMemoryBytes();
    int64_t most = 0;
    for (const std::string& k : (*exe)->kernelReport()) {
      const size_t at = k.find(" chunks of ");
      if (k.rfind("cublaslt.cin", 0) != 0 || at == std::string::npos) continue;
      const size_t from = k.rfind(", ", at);
      ASSERT_NE(from, std::string::npos) << k;
      most = std::max<int64_t>(most, std::stoll(k.substr(from + 2, at - from - 2)));
    }
    if (i == 1) {
      EXPECT_GE(most, 4) << "a quarter of one chunk of 301 samples, evened out";
    }
  }
  EXPECT_LE(peak[1], peak[0]);
}

}  // namespace
}  // namespace cagr

#else

TEST(CudaCinGpu, ThisBuildHasNoCuda) {
  GTEST_SKIP() << "built without the CUDA toolkit";
}

#endif
