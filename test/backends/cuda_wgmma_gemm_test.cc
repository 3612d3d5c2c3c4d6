// CAGR's f32 wgmma GEMM tile (backends/cuda/gemm_wgmma.h): its kernels
// compile with NVRTC for sm_90a without a GPU (the PTX holds the TF32
// wgmma), the calls it may run are the ones it can, and on a Hopper GPU
// (skipped without one) it is as accurate as cuBLAS SGEMM against an fp64
// reference on DLRM's layers, through the aligned and the unaligned paths.
// Without CAGR_HAVE_CUDA the file compiles to nothing.
#include <gtest/gtest.h>

#if CAGR_HAVE_CUDA

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "../rewrite/rewrite_test_util.h"
#include "backends/cuda/codegen.h"
#include "backends/cuda/cuda_device.h"
#include "backends/cuda/cuda_executable.h"
#include "backends/cuda/cuda_program.h"
#include "backends/cuda/gemm_wgmma.h"
#include "cagr/backend.h"
#include "cpu_test_util.h"
#include "support/scoped_env.h"

namespace cagr {
namespace {

using rectest::attrs;
using rectest::Builder;

TEST(WgmmaGemm, KernelsCompileForSm90aWithoutAGpu) {
  cuda::NvrtcOptions o;
  o.arch = "sm_90a";
  o.useCache = false;
  auto m = cuda::compileModule(cuda::gemmWgmmaSource(), o);
  ASSERT_TRUE(m.isOk()) << m.status().message();
  EXPECT_FALSE(m->cubin.empty());
  EXPECT_NE(m->ptx.find("wgmma.mma_async.sync.aligned.m64n64k8.f32.tf32.tf32"), std::string::npos);
  for (const char* entry : {"cagr_wgmma_x3_v4_1", "cagr_wgmma_x3_v4_2", "cagr_wgmma_x3_v1_1", "cagr_wgmma_x3_v1_2",
                            "cagr_wgmma_kmajor"}) {
    EXPECT_NE(m->ptx.find(std::string(".entry ") + entry), std::string::npos) << entry;
  }
  // Other GPUs never get the tile.
  EXPECT_EQ(cuda::WgmmaGemm::create("sm_80").status().code(), ErrorCode::kUnsupported);
}

TEST(WgmmaGemm, RunsOnlyTheCallsItCan) {
  cuda::LibraryGemm p;  // f32 cuBLASLt call, bias and ReLU
  p.bias = 3;
  p.act = cuda::Activation::kRelu;
  cuda::ColumnMajorGemm c;
  c.m = 256, c.n = 4096, c.k = 512, c.lda = 256, c.ldb = 512, c.ldd = 256;
  EXPECT_EQ(cuda::wgmmaGemmRejection(p, c, true), "");
  EXPECT_NE(cuda::wgmmaGemmRejection(p, c, false), "");  // B an activation: no split copy to make
  auto rejected = [&](auto change) {
    cuda::LibraryGemm q = p;
    cuda::ColumnMajorGemm d = c;
    change(q, d);
    return !cuda::wgmmaGemmRejection(q, d, true).empty();
  };
  EXPECT_TRUE(rejected([](auto& q, auto&) { q.math = Precision::kTF32; }));
  EXPECT_TRUE(rejected([](auto& q, auto&) { q.operands = q.output = Precision::kBF16; }));
  EXPECT_TRUE(rejected([](auto& q, auto&) { q.library = cuda::GemmLibrary::kCublas; }));
  EXPECT_TRUE(rejected([](auto& q, auto&) { q.act = cuda::Activation::kGelu; }));
  EXPECT_TRUE(rejected([](auto& q, auto&) { q.addend = 4; }));
  EXPECT_TRUE(rejected([](auto& q, auto&) { q.alpha = 0.5f; }));
  EXPECT_TRUE(rejected([](auto&, auto& d) { d.batch = 2; }));
  EXPECT_TRUE(rejected([](auto&, auto& d) { d.transB = true; }));
  EXPECT_TRUE(rejected([](auto&, auto& d) { d.n = int64_t{65536} * 128; }));  // rows past the grid's y
  EXPECT_FALSE(rejected([](auto&, auto& d) { d.transA = true, d.lda = 512; }));  // W stored [N][K]: fine
  EXPECT_FALSE(rejected([](auto& q, auto&) { q.act = cuda::Activation::kNone, q.bias = kNoValue; }));
}

// An f32 Linear's [N, K] weight goes up as [K, N] for cuBLASLt's SIMT
// kernels, except on sm_90 where K is a multiple of 4, N at least one tile
// of columns and the call one the tile can run: the tile then reads it in
// place, when the tile is offered (CAGR_GEMM_WGMMA=1; unset or 0 keeps the flip).
TEST(WgmmaGemm, Sm90KeepsAlignedLinearWeightsKMajor) {
  ScopedEnv on("CAGR_GEMM_WGMMA", "1");  // the tile is opt-in (not a lossless default)
  auto flipped = [](int64_t kd, int sm, int64_t n = 256, bool gelu = false) {
    Builder b;
    ValueId x = b.input("x", DType::kF32, {kBatch, kd});
    ValueId y = b.op(OpKind::kGemm, {x, b.constant("w", {n, kd}, 1), b.constant("c", {n}, 2)}, "gemm",
                     attrs({{"transB", int64_t{1}}}));
    b.g.addOutput(gelu ? b.op(OpKind::kGelu, {y}, "act", attrs({{"approximate", std::string("tanh")}})) : y);
    b.group(gelu ? std::vector<std::string>{"gemm", "act"} : std::vector<std::string>{"gemm"}, 0, "cublaslt.matmul");
    auto prog = cuda::lowerPlan(b.g, rwtest::h200(), sm);
    EXPECT_TRUE(prog.isOk()) << prog.status().message();
    return prog.isOk() && prog->gemms.size() == 1 && prog->gemms[0].flipB;
  };
  EXPECT_FALSE(flipped(512, 90));
  EXPECT_FALSE(flipped(512, 90, cuda::kWgmmaCols));
  EXPECT_TRUE(flipped(367, 90));  // no 16-byte rows: the tile copies it K-major where it runs
  EXPECT_TRUE(flipped(512, 80));
  EXPECT_TRUE(flipped(256, 90, 1));                        // a column: cuBLASLt's, and faster flipped
  EXPECT_TRUE(flipped(512, 90, cuda::kWgmmaCols - 1));     // under one tile of columns
  EXPECT_TRUE(flipped(512, 90, 256, /*gelu=*/true));       // an epilogue the tile has not
  {
    ScopedEnv off("CAGR_GEMM_WGMMA", "0");
    EXPECT_TRUE(flipped(512, 90));
  }
  ScopedEnv unset("CAGR_GEMM_WGMMA", nullptr);
  EXPECT_TRUE(flipped(512, 90));
}

// Y = relu(X W^T + c) on `kernel`, with the tile forced or off; the largest
// and the mean |error| against fp64, and whether the tile ran.
struct GemmRun {
  double maxErr = 0, meanErr = 0;
  bool tile = false;
  int64_t peakBytes = 0, workspaceBytes = 0;
};
GemmRun runGemm(ExecutionBackend& backend, int64_t m, int64_t n, int64_t kd, const char* mode) {
  Tensor x = rectest::uniform({m, kd}, 7), w = rectest::uniform({n, kd}, 8, -0.1f, 0.1f);
  Tensor c = rectest::uniform({n}, 9, -0.1f, 0.1f);
  Builder b;
  ValueId in = b.input("x", DType::kF32, {kBatch, kd});
  ValueId y = b.op(OpKind::kGemm, {in, b.g.addConstant("w", w), b.g.addConstant("c", c)}, "gemm",
                   attrs({{"transB", int64_t{1}}}));
  b.g.addOutput(b.op(OpKind::kRelu, {y}, "r"));
  b.group({"gemm", "r"}, 0, "cublaslt.matmul");
  ScopedEnv env("CAGR_GEMM_WGMMA", mode);
  auto exe = backend.compile(b.g);
  EXPECT_TRUE(exe.isOk()) << exe.status().message();
  if (!exe.isOk()) return {};
  rectest::Inputs inputs;
  inputs.emplace_back("x", x);
  auto got = (*exe)->run(inputs);
  EXPECT_TRUE(got.isOk()) << got.status().message();
  if (!got.isOk()) return {};
  GemmRun r;
  r.peakBytes = (*exe)->peakMemoryBytes();
  if (const auto* cu = dynamic_cast<const cuda::CudaExecutable*>(exe->get())) {
    r.workspaceBytes = cu->memoryBreakdown().workspaceBytes;
  }
  for (const std::string& k : (*exe)->kernelReport()) r.tile = r.tile || k.find("wgmma") != std::string::npos;
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double a = c.data<float>()[j];
      for (int64_t k = 0; k < kd; ++k) a += double(x.data<float>()[i * kd + k]) * w.data<float>()[j * kd + k];
      const double e = std::fabs(static_cast<double>((*got)[0].data<float>()[i * n + j]) - std::max(a, 0.0));
      r.maxErr = std::max(r.maxErr, e);
      r.meanErr += e / double(m * n);
    }
  }
  return r;
}

// Against cuBLASLt's SGEMM in the same process: DLRM's 4096x256x512 (16-byte
// rows: the vector path) and, through the one-float path, 367-deep rows of
// 4000 samples into 400 columns (partial row and column tiles); the tile's
// peak memory is SGEMM's, less its workspace (the tile needs none), plus
// the K-major copy of the 367-deep weight. Measured on an H100: max
// error 1.3e-6 against SGEMM's 3.9e-6, and 1.1e-6 against 2.4e-6.
TEST(CudaWgmmaGpu, AsAccurateAsSgemm) {
  auto backend = makeBackend("cuda");
  ASSERT_TRUE(backend.isOk()) << backend.status().message();
  if (!(*backend)->capabilities().available) GTEST_SKIP() << (*backend)->capabilities().note;
  if (cuda::deviceInfo().arch() != "sm_90a") GTEST_SKIP() << "the tile is for sm_90a GPUs";
  for (auto [m, n, kd] : {std::tuple<int64_t, int64_t, int64_t>{4096, 256, 512}, {4000, 400, 367}}) {
    const GemmRun tile = runGemm(**backend, m, n, kd, "force"), sgemm = runGemm(**backend, m, n, kd, "0");
    const std::string what = std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(kd);
    EXPECT_TRUE(tile.tile) << what << ": the tile did not run";
    EXPECT_FALSE(sgemm.tile) << what;
    EXPECT_LE(tile.maxErr, 1.25 * sgemm.maxErr) << what << ": tile " << tile.maxErr << " vs SGEMM " << sgemm.maxErr;
    EXPECT_LE(tile.meanErr, 2.5 * sgemm.meanErr) << what << ": tile " << tile.meanErr << " vs " << sgemm.meanErr;
    // The tile reads a Linear's [N, K] weight in place where its rows are
    // 16-byte aligned (on sm_90 it stays [N, K] on the device); else a
    // K-major copy, K rounded up to 4, is device memory reported as weights.
    const int64_t copy = kd % 4 == 0 ? 0 : n * ((kd + 3) / 4 * 4) * 4;
    EXPECT_EQ(tile.workspaceBytes, 0) << what;
    EXPECT_EQ(tile.peakBytes - (sgemm.peakBytes - sgemm.workspaceBytes), copy) << what;
    std::printf("%s max |error| tile %.3g SGEMM %.3g, mean %.3g / %.3g\n", what.c_str(), tile.maxErr, sgemm.maxErr,
                tile.meanErr, sgemm.meanErr);
  }
}

}  // namespace
}  // namespace cagr

#endif  // CAGR_HAVE_CUDA
