// The CUDA backend probes without a GPU: every probe plan parses and, with
// the CUDA toolkit, lowers through the CUDA backend's own lowering and
// compiles with NVRTC (sm_90a); merging probe results into a
// cagr-profile-cuda profile round-trips through JSON, replaces rather than
// duplicates, and refuses a non-GPU base; running the probes without a GPU
// fails cleanly, as does `cagr profile --target cuda`.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>

#include "../common/run_cli.h"
#include "../rewrite/rewrite_test_util.h"
#include "cagr/backend.h"
#include "cagr/mir.h"
#include "support/scoped_env.h"
#include "cagr/text.h"
#include "cost/kernel_class.h"
#include "hw/cuda_probes.h"

#ifdef CAGR_HAVE_CUDA
#include "backends/cuda/codegen.h"
#include "backends/cuda/cuda_program.h"
#endif

namespace cagr {
namespace {

bool gpuPresent() {
  auto b = makeBackend("cuda");
  return b.isOk() && (*b)->capabilities().available;
}

TEST(CudaProbes, EveryProbePlanParsesAndCoversTheGeneratedKernels) {
  std::vector<hw::CudaProbeSpec> specs = hw::cudaProbeSpecs(false);
  std::set<std::string> kernels;
  for (const hw::CudaProbeSpec& s : specs) {
    auto g = parseGraph(s.text(), s.label);
    ASSERT_TRUE(g.isOk()) << s.label << ": " << g.status().message();
    EXPECT_FALSE(s.rows.empty()) << s.label;
    kernels.insert(s.kernel);
  }
  for (const char* k : {"nvrtc.eltwise", "nvrtc.reduce", "nvrtc.movement", "nvrtc.embedding", "nvrtc.interaction",
                        "nvrtc.fm", "nvrtc.cin", "nvrtc.cin_tf32", "nvrtc.cin_bf16"}) {
    EXPECT_TRUE(kernels.count(k)) << k;
  }
  EXPECT_LT(hw::cudaProbeSpecs(true).front().rows.size(), specs.front().rows.size());
  // The tuned f32 cuBLASLt layers (kTunedGemmClass): one small call, the
  // entry's overhead, and every other call at or above the backend's tuning
  // threshold (1e8 FLOPs), so the curve the cost model reads starts there.
  // The same layers in tf32 / bf16 math (cublaslt.matmul_tf32 / _bf16,
  // the node's math decision, f32 activations) from 256 rows.
  std::vector<double> tuned;
  std::map<std::string, int> inMath;
  for (const hw::CudaProbeSpec& s : specs) {
    if (s.shapeClass != kTunedGemmClass) continue;
    if (s.kernel != "cublaslt.matmul") {
      auto g = parseGraph(s.text(), s.label);
      ASSERT_TRUE(g.isOk());
      const Node& gemm = g->node(static_cast<NodeId>(g->nodes().size() - 1));
      EXPECT_EQ(s.kernel, "cublaslt.matmul_" + std::string(precisionName(gemm.mir.math))) << s.label;
      if (s.rows.size() > 1) EXPECT_EQ(s.rows.front(), 256) << s.label;
      ++inMath[s.kernel];
      continue;
    }
    auto g = parseGraph(s.text(), s.label);
    ASSERT_TRUE(g.isOk());
    const Node& gemm = g->node(static_cast<NodeId>(g->nodes().size() - 1));
    ASSERT_EQ(gemm.op, OpKind::kGemm) << s.label;
    EXPECT_EQ(gemm.attrs.getInt("transB", 0), 1) << s.label << ": a Linear's [N, K] weight";
    const auto k = static_cast<double>(g->type(gemm.inputs[0]).dims.back());
    const auto n = static_cast<double>(g->type(gemm.outputs[0]).dims.back());
    for (int64_t r : s.rows) tuned.push_back(2 * static_cast<double>(r) * k * n);
  }
  EXPECT_EQ(inMath["cublaslt.matmul_tf32"], 7);
  EXPECT_EQ(inMath["cublaslt.matmul_bf16"], 7);
  std::sort(tuned.begin(), tuned.end());
  ASSERT_GE(tuned.size(), 4u);
  EXPECT_LT(tuned[0], 1e6);
  EXPECT_GE(tuned[1], 1e8);
  auto chain = parseGraph(hw::launchChainSpec(16).text(), "chain");
  ASSERT_TRUE(chain.isOk()) << chain.status().message();
  EXPECT_EQ(chain->nodes().size(), 16u);
}

#ifdef CAGR_HAVE_CUDA
TEST(CudaProbes, ProbePlansLowerAndCompileWithNvrtc) {
  ScopedEnv tile("CAGR_GEMM_WGMMA", "1");  // the (opt-in) wgmma tile offered: sm_90 keeps weights [N][K]
  const Target t = rwtest::target("h200");
  std::vector<hw::CudaProbeSpec> specs = hw::cudaProbeSpecs(true);
  specs.push_back(hw::launchChainSpec(4));
  std::string dir = (std::filesystem::temp_directory_path() / "cagr-cuda-probes-test").string();
  for (const hw::CudaProbeSpec& s : specs) {
    auto g = parseGraph(s.text(), s.label);
    ASSERT_TRUE(g.isOk()) << g.status().message();
    Status v = verifyPlan(*g, t);  // what the backend's compile() checks first
    ASSERT_TRUE(v.isOk()) << s.label << ": " << v.message();
    auto p = cuda::lowerPlan(*g, t);
    ASSERT_TRUE(p.isOk()) << s.label << ": " << p.status().message();
    ASSERT_FALSE(p->steps.empty()) << s.label;
    if (s.shapeClass == kTunedGemmClass) {  // one library call; on sm_90 the weight kept [N][K] for the wgmma tile
      ASSERT_EQ(p->gemms.size(), 1u) << s.label;
      // (f32 math only: the tile's, and cuBLASLt's SIMT kernels that read the flipped weight faster)
      const bool misaligned =
          s.label.find("[N,367]") != std::string::npos || s.label.find("[N,429]") != std::string::npos;
      EXPECT_EQ(p->gemms[0].flipB, misaligned && s.kernel == "cublaslt.matmul") << s.label;
      // Reduced math at the widths pad_gemm_dims gives a plan's tensor-core GEMMs (368, 432).
      if (s.kernel != "cublaslt.matmul") EXPECT_FALSE(misaligned) << s.label;
    }
    if (p->moduleSource.empty()) continue;
    cuda::NvrtcOptions o;
    o.arch = "sm_90a";
    o.cacheDir = dir;
    auto m = cuda::compileModule(p->moduleSource, o);
    ASSERT_TRUE(m.isOk()) << s.label << ": " << m.status().message();
    EXPECT_FALSE(m->cubin.empty()) << s.label;
  }
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
}
#endif

hw::CudaProbes fakeProbes() {
  hw::CudaProbes p;
  p.device = "test GPU (sm_90)";
  p.repeats = 20;
  for (double n : {4.0, 256.0, 4096.0}) {
    p.probes.points.push_back({"nvrtc.cin", "gemm.cin", "cin", 0, 3e6 * n, 4e-6 + 3e6 * n / 1e13, 0});
    p.probes.points.push_back({"nvrtc.eltwise", "eltwise.stream", "add", 384 * n, 32 * n, 3e-6 + 384 * n / 3e12, 0});
  }
  p.floor = {64, 1.3e-6, 4e-6, 2.9e-6};
  return p;
}

TEST(CudaProbes, MergeAddsEntriesAndRoundTrips) {
  auto base = loadProfile(std::string(CAGR_SOURCE_DIR) + "/bench/results/hw/h200-measured.json");
  ASSERT_TRUE(base.isOk()) << base.status().message();
  auto merged = hw::mergeCudaProbes(*base, fakeProbes());
  ASSERT_TRUE(merged.isOk()) << merged.status().message();
  const KernelEfficiency* cin = merged->efficiency("nvrtc.cin", "gemm.cin");
  ASSERT_NE(cin, nullptr);
  EXPECT_EQ(cin->shapeClass, "gemm.cin");
  EXPECT_NEAR(cin->overheadS, 4e-6 + 3e6 * 4 / 1e13, 1e-15);  // the smallest call
  EXPECT_EQ(cin->curve.size(), 2u);
  EXPECT_NE(cin->source.find("measured on test GPU"), std::string::npos);
  const KernelEfficiency* floor = merged->efficiency(hw::kGraphStepKernel, hw::kGraphStepClass);
  ASSERT_NE(floor, nullptr);
  EXPECT_DOUBLE_EQ(floor->overheadS, 1.3e-6);
  EXPECT_DOUBLE_EQ(merged->efficiency(hw::kGraphStepKernel, hw::kSingleStepClass)->overheadS, 2.9e-6);
  // The one-kernel graph replay (the plan's fixed cost).
  const KernelEfficiency* replay = merged->efficiency(hw::kGraphStepKernel, hw::kGraphReplayClass);
  ASSERT_NE(replay, nullptr);
  EXPECT_EQ(replay->shapeClass, hw::kGraphReplayClass);
  EXPECT_DOUBLE_EQ(replay->overheadS, 4e-6);
  // The base's own entries stay.
  EXPECT_NE(merged->efficiency("cublas.sgemm", "gemm.large"), nullptr);
  EXPECT_EQ(merged->efficiencies.size(), base->efficiencies.size() + 5);

  auto back = parseProfile(profileToJson(*merged), "merged");
  ASSERT_TRUE(back.isOk()) << back.status().message();
  EXPECT_EQ(*back, *merged);
  auto twice = hw::mergeCudaProbes(*back, fakeProbes());
  ASSERT_TRUE(twice.isOk());
  EXPECT_EQ(twice->efficiencies.size(), merged->efficiencies.size());  // replaced, not duplicated
}

// The chain timed with programmatic launches as well: its floor becomes the
// launch.graph.pdl entry only where it is below the plain one.
TEST(CudaProbes, MergeAddsTheProgrammaticLaunchFloorWhereItIsLower) {
  auto base = loadProfile(std::string(CAGR_SOURCE_DIR) + "/bench/results/hw/h200-measured.json");
  ASSERT_TRUE(base.isOk()) << base.status().message();
  auto hasPdlFloor = [](const HardwareProfile& h) {
    const KernelEfficiency* e = h.efficiency(hw::kGraphStepKernel, hw::kGraphStepPdlClass);
    return e != nullptr && e->shapeClass == hw::kGraphStepPdlClass;
  };
  hw::CudaProbes p = fakeProbes();
  EXPECT_FALSE(hasPdlFloor(*hw::mergeCudaProbes(*base, p)));  // not measured (0)
  p.floor.graphPerKernelPdlS = 0.8e-6;
  auto merged = hw::mergeCudaProbes(*base, p);
  ASSERT_TRUE(merged.isOk()) << merged.status().message();
  const KernelEfficiency* e = merged->efficiency(hw::kGraphStepKernel, hw::kGraphStepPdlClass);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->shapeClass, hw::kGraphStepPdlClass);
  EXPECT_DOUBLE_EQ(e->overheadS, 0.8e-6);
  EXPECT_DOUBLE_EQ(merged->efficiency(hw::kGraphStepKernel, hw::kGraphStepClass)->overheadS, 1.3e-6);
  EXPECT_NE(merged->notes.find("0.80 us with programmatic launches"), std::string::npos) << merged->notes;
  p.floor.graphPerKernelPdlS = 1.4e-6;  // no saving measured: no entry
  auto none = hw::mergeCudaProbes(*base, p);
  ASSERT_TRUE(none.isOk());
  EXPECT_FALSE(hasPdlFloor(*none));
}

TEST(CudaProbes, MergeRefusesANonGpuBase) {
  auto cpu = builtinProfile("x86-64");
  ASSERT_TRUE(cpu.isOk());
  auto merged = hw::mergeCudaProbes(*cpu, fakeProbes());
  ASSERT_FALSE(merged.isOk());
  EXPECT_NE(merged.status().message().find("not an NVIDIA GPU profile"), std::string::npos);
}

TEST(CudaProbes, WithoutAGpuTheProbesAndTheCommandFailCleanly) {
  if (gpuPresent()) GTEST_SKIP() << "a GPU is present: the probes would run";
  auto r = hw::runCudaProbes(true, 0.01);
  ASSERT_FALSE(r.isOk());
  EXPECT_FALSE(r.status().message().empty());
  const std::string out = (std::filesystem::temp_directory_path() / "cagr-cuda-probe-out.json").string();
  auto cli = testing::runCagr("profile --target cuda --quiet --merge " + std::string(CAGR_SOURCE_DIR) +
                              "/bench/results/hw/h200-measured.json -o " + out);
  EXPECT_NE(cli.code, 0) << cli.out;
  EXPECT_NE(cli.out.find("cagr profile --target cuda: this build has no CUDA support on this machine"),
            std::string::npos)
      << cli.out;
  EXPECT_FALSE(std::filesystem::exists(out));
}

}  // namespace
}  // namespace cagr
