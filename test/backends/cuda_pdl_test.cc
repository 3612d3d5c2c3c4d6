// Programmatic dependent launch of the generated kernels (issue 6): every
// kernel the code generator emits starts with CAGR_GRID_DEPS(), which on
// sm_90+ waits for the grid it was launched after (griddepcontrol.wait) and
// compiles to nothing below sm_90 — except an interaction with lookups,
// which waits after them (CAGR_CUDA_PDL_PREFETCH=0: at the start), its
// generated predecessor letting it launch early; the runtime launches such
// kernels with the programmatic-serialization attribute on sm_90+
// (CAGR_CUDA_PDL=0: never; =early: each kernel also lets its successor
// launch at once). Without a GPU the generated code is checked and
// compiled; on one (skipped without) a plan's outputs are the same with and
// without the attribute, and with the prefetch.
#include <gtest/gtest.h>

#if CAGR_HAVE_CUDA

#include <cstdlib>
#include <string>

#include "../rewrite/rewrite_test_util.h"
#include "backends/cuda/codegen.h"
#include "backends/cuda/cuda_program.h"
#include "cagr/policy.h"
#include "cagr/reference.h"
#include "cuda_test_util.h"
#include "support/scoped_env.h"

namespace cagr {
namespace {

// DLRM's greedy fp32 plan at batch 4096 on the H200 profile, every GEMM
// group on nvrtc.gemm_small: lookups, interaction and GEMMs all generated.
Graph dlrmGenerated() {
  auto p = makePolicy("greedy");
  EnvConfig cfg;
  cfg.batch = 4096;
  cfg.disabled = {ActionKind::kSetPrecision};
  auto r = optimize(rwtest::zoo("dlrm_avazu"), rwtest::target("h200"), **p, cfg);
  EXPECT_TRUE(r.isOk()) << r.status().message();
  Graph g = r.isOk() ? r->plan : rwtest::zoo("dlrm_avazu");
  KernelId small = *kernelByName("nvrtc.gemm_small");
  for (Node& a : g.mutableNodes()) {
    if (a.op != OpKind::kGemm) continue;
    for (Node& m : g.mutableNodes()) {
      if (&m == &a || (a.mir.group >= 0 && m.mir.group == a.mir.group)) m.mir.kernel = small;
    }
  }
  return g;
}

size_t count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
}

TEST(CudaPdl, EveryGeneratedKernelWaitsForItsPredecessorOnSm90Only) {
  ScopedEnv env("CAGR_CUDA_PDL", nullptr);
  ScopedEnv prefetch("CAGR_CUDA_PDL_PREFETCH", "0");  // on by default; the next test covers it
  Graph g = dlrmGenerated();
  auto prog = cuda::lowerPlan(g, rwtest::target("h200"));
  ASSERT_TRUE(prog.isOk()) << prog.status().message();
  ASSERT_GE(prog->kernels.size(), 3u);
  for (const cuda::GeneratedKernel& k : prog->kernels) EXPECT_TRUE(k.gridDeps) << k.name;
  const std::string& src = prog->moduleSource;
  const size_t entries = count(src, "__global__ void");
  EXPECT_EQ(count(src, "{\n  CAGR_GRID_DEPS();\n"), entries) << "a kernel does not start with the wait";
  EXPECT_EQ(count(src, "  CAGR_GRID_LAUNCH();\n"), 0u) << "only for a kernel that waits late";

  cuda::NvrtcOptions o;
  o.useCache = false;
  o.arch = "compute_90a";
  auto sm90 = cuda::compileModule(src, o);
  ASSERT_TRUE(sm90.isOk()) << sm90.status().message();
  EXPECT_EQ(count(sm90->ptx, "griddepcontrol.wait"), entries);
  EXPECT_EQ(count(sm90->ptx, "griddepcontrol.launch_dependents"), 0u);
  o.arch = "compute_80";
  auto sm80 = cuda::compileModule(src, o);
  ASSERT_TRUE(sm80.isOk()) << sm80.status().message();
  EXPECT_EQ(count(sm80->ptx, "griddepcontrol"), 0u);

  ScopedEnv early("CAGR_CUDA_PDL", "early");
  auto eprog = cuda::lowerPlan(g, rwtest::target("h200"));
  ASSERT_TRUE(eprog.isOk()) << eprog.status().message();
  o.arch = "compute_90a";
  auto e90 = cuda::compileModule(eprog->moduleSource, o);
  ASSERT_TRUE(e90.isOk()) << e90.status().message();
  EXPECT_EQ(count(e90->ptx, "griddepcontrol.launch_dependents"), entries);
}

// By default (CAGR_CUDA_PDL_PREFETCH unset) the interaction does its lookups before it
// waits for the kernel before it (the bottom MLP's last layer, generated
// here), which launches it early: the interaction's kernel starts without
// the wait and waits in its body, the layer's starts by letting it launch;
// nothing else changes.
TEST(CudaPdl, TheInteractionLooksUpBeforeItWaitsAndItsPredecessorLaunchesItEarly) {
  ScopedEnv env("CAGR_CUDA_PDL", nullptr);
  ScopedEnv prefetch("CAGR_CUDA_PDL_PREFETCH", nullptr);
  Graph g = dlrmGenerated();
  auto prog = cuda::lowerPlan(g, rwtest::target("h200"));
  ASSERT_TRUE(prog.isOk()) << prog.status().message();
  size_t late = 0, early = 0;
  for (size_t t = 0; t < prog->steps.size(); ++t) {
    const cuda::ProgramStep& s = prog->steps[t];
    if (s.kind != cuda::StepKind::kGenerated) continue;
    const cuda::GeneratedKernel& k = prog->kernels[static_cast<size_t>(s.kernel)];
    if (k.waitsLate) {
      ++late;
      EXPECT_NE(k.name.find("nvrtc.interaction"), std::string::npos) << k.name;
      ASSERT_GT(t, 0u);
      const std::string& before = prog->steps[t - 1].name;
      EXPECT_NE(before.find("(launches the next early)"), std::string::npos) << before;
    }
    early += s.name.find("(launches the next early)") != std::string::npos;
  }
  EXPECT_EQ(late, 1u);
  EXPECT_EQ(early, 1u);
  const std::string& src = prog->moduleSource;
  const size_t entries = count(src, "__global__ void");
  EXPECT_EQ(count(src, "{\n  CAGR_GRID_DEPS();\n"), entries - 2);
  EXPECT_EQ(count(src, "{\n  CAGR_GRID_LAUNCH();\n  CAGR_GRID_DEPS();\n"), 1u);
  EXPECT_EQ(count(src, "    CAGR_GRID_WAIT();\n"), 1u);  // in the interaction's sample loop, after the lookups
  const size_t lookups = src.find("cagr_row<"), wait = src.find("    CAGR_GRID_WAIT();\n");
  EXPECT_LT(lookups, wait);
  cuda::NvrtcOptions o;
  o.useCache = false;
  o.arch = "compute_90a";
  auto sm90 = cuda::compileModule(src, o);
  ASSERT_TRUE(sm90.isOk()) << sm90.status().message();
  EXPECT_EQ(count(sm90->ptx, "griddepcontrol.launch_dependents"), 1u);
  EXPECT_GE(count(sm90->ptx, "griddepcontrol.wait"), entries);
}

// After a library GEMM (which cannot launch it early) the interaction keeps
// its one-pass fill and its wait at the start.
TEST(CudaPdl, AnInteractionAfterALibraryCallWaitsAtItsStart) {
  ScopedEnv env("CAGR_CUDA_PDL", nullptr);
  ScopedEnv prefetch("CAGR_CUDA_PDL_PREFETCH", nullptr);
  Graph g = dlrmGenerated();
  KernelId lt = *kernelByName("cublaslt.matmul");
  for (Node& a : g.mutableNodes()) {
    if (a.op != OpKind::kGemm) continue;
    for (Node& m : g.mutableNodes()) {
      if (&m == &a || (a.mir.group >= 0 && m.mir.group == a.mir.group)) m.mir.kernel = lt;
    }
  }
  auto prog = cuda::lowerPlan(g, rwtest::target("h200"));
  ASSERT_TRUE(prog.isOk()) << prog.status().message();
  size_t interactions = 0;
  for (const cuda::GeneratedKernel& k : prog->kernels) {
    if (k.name.find("nvrtc.interaction") == std::string::npos) continue;
    ++interactions;
    EXPECT_FALSE(k.waitsLate) << k.name;
  }
  EXPECT_EQ(interactions, 1u);
  EXPECT_EQ(count(prog->moduleSource, "CAGR_GRID_WAIT();"), 0u);
  EXPECT_EQ(count(prog->moduleSource, "  CAGR_GRID_LAUNCH();\n"), 0u);
}

// The same plan with and without programmatic launches: identical outputs
// on every replay (the wait orders each kernel after the one before it).
TEST(CudaPdlGpu, ProgrammaticLaunchesKeepEveryReplaysOutput) {
  std::string why;
  auto backend = cudatest::gpuOrSkip(why);
  if (!backend) GTEST_SKIP() << why;
  Graph g = dlrmGenerated();
  auto in = rwtest::zooInputs("dlrm_avazu", 7);
  std::vector<Tensor> base;
  for (const char* mode : {"0", "1", "early", "1 with prefetch"}) {
    ScopedEnv env("CAGR_CUDA_PDL", std::string(mode).substr(0, std::string(mode).find(' ')).c_str());
    const bool with = std::string(mode).find("prefetch") != std::string::npos;
    ScopedEnv prefetch("CAGR_CUDA_PDL_PREFETCH", with ? nullptr : "0");
    auto exe = backend->compile(g);
    ASSERT_TRUE(exe.isOk()) << mode << ": " << exe.status().message();
    for (int rep = 0; rep < 4; ++rep) {  // the first run captures the graph, the others replay it
      auto got = (*exe)->run(in);
      ASSERT_TRUE(got.isOk()) << mode << ": " << got.status().message();
      if (base.empty()) {
        base = *got;
        auto want = runReference(g, in);
        ASSERT_TRUE(want.isOk()) << want.status().message();
        auto cmp = compareTensors(base[0], (*want)[0], 1e-5, 1e-4);
        EXPECT_TRUE(cmp.close) << cmp.message;
        continue;
      }
      auto same = compareTensors((*got)[0], base[0], 0, 0);
      EXPECT_TRUE(same.close) << "CAGR_CUDA_PDL=" << mode << ", run " << rep << ": " << same.message;
    }
  }
}

}  // namespace
}  // namespace cagr

#endif  // CAGR_HAVE_CUDA
