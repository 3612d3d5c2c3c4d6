// GPU pricing refinements from Nsight Compute traces of CAGR's plans on the
// H200 (all figures here modelled): library GEMMs cost as many 128-wide CTA
// tiles as they fill (gemmTileShare), AutoInt's batched products are priced
// by their own probe (gemm.batched), and a softmax row kernel keeps its row
// passes when a producer is fused into it.
#include <gtest/gtest.h>

#include "cagr/analysis.h"
#include "cagr/cost.h"
#include "cagr/mir.h"
#include "cost/kernel_class.h"
#include "cuda_pricing_util.h"
#include "hw/backend_probes_text.h"

namespace cagr {
namespace {

using hw::probe::constantLine;
using hw::probe::fixedType;
using hw::probe::Input;
using hw::probe::opLine;
using hw::probe::tensorType;
using pricingtest::entry;
using pricingtest::only;
using pricingtest::parsed;
using pricingtest::priced;
using pricingtest::specFor;

// [N,k] x [k,n] + bias as one Gemm node.
Graph gemmGraph(int64_t k, int64_t n) {
  std::string body = constantLine("%w", {k, n}, 0.01) + constantLine("%b", {n}, 0.01) +
                     opLine("%out", "gemm", "%arg0, %w, %b", "", tensorType({k}) + ", " + fixedType({k, n}) + ", " +
                                                                     fixedType({n}),
                            tensorType({n}));
  return parsed(hw::probe::graphText({Input{{k}}}, body, tensorType({n})), "gemm");
}

double tileShare(const HardwareProfile& hw, const Graph& g, int64_t batch, const std::string& cls) {
  auto stats = computeStats(g, defaultBindings(g, batch));
  EXPECT_TRUE(stats.isOk());
  const size_t last = g.nodes().size() - 1;
  return gemmTileShare(hw, g, g.nodes()[last], stats->nodes[last], cls);
}

TEST(GpuGemmShape, OutputDimsOver128AreRoundedToWholeTiles) {
  HardwareProfile gpu = pricingtest::h200();
  EXPECT_NEAR(tileShare(gpu, gemmGraph(400, 400), 4096, "gemm.medium"), 400.0 / 512, 1e-12);
  EXPECT_NEAR(tileShare(gpu, gemmGraph(429, 429), 4096, "gemm.medium"), 429.0 / 512, 1e-12);
  EXPECT_DOUBLE_EQ(tileShare(gpu, gemmGraph(256, 512), 4096, "gemm.medium"), 1.0);
  // Narrow outputs get narrow tiles: not rounded.
  EXPECT_DOUBLE_EQ(tileShare(gpu, gemmGraph(256, 64), 4096, "gemm.medium"), 1.0);
  // M = batch is rounded as well (300 rows fill 3 of 384).
  EXPECT_NEAR(tileShare(gpu, gemmGraph(256, 512), 300, "gemm.medium"), 300.0 / 384, 1e-12);
  // Skinny / batched classes and other platforms: untouched.
  EXPECT_DOUBLE_EQ(tileShare(gpu, gemmGraph(400, 400), 4096, "gemm.skinny"), 1.0);
  auto cpu = builtinProfile("x86-64");
  ASSERT_TRUE(cpu.isOk());
  EXPECT_DOUBLE_EQ(tileShare(*cpu, gemmGraph(400, 400), 4096, "gemm.medium"), 1.0);
}

TEST(GpuGemmShape, PartTileGemmCostsAsTheWholeTiles) {
  HardwareProfile gpu = pricingtest::h200();
  KernelEstimate aligned = only(priced(gpu, gemmGraph(512, 512), 4096));
  KernelEstimate ragged = only(priced(gpu, gemmGraph(512, 400), 4096));
  ASSERT_GT(aligned.computeS, 0);
  // 400 columns take four 128-wide tiles, as 512 do: (nearly) the same compute time, not 400/512 of it.
  EXPECT_GT(ragged.computeS, 0.95 * aligned.computeS);
  EXPECT_LT(ragged.computeS, 1.05 * aligned.computeS);
}

TEST(GpuGemmShape, BatchedProductsUseTheirProbe) {
  HardwareProfile hw = pricingtest::h200();
  hw.provenance = "measured";
  Graph g = parsed(specFor("cublas.sgemm", "gemm.batched").text(), "batched");
  KernelEstimate before = only(priced(hw, g, 4096));
  EXPECT_NE(before.shapeClass, "gemm.batched");  // no probe: the FLOP class of one GEMM
  // The probe's curve: 2 TFLOP/s at AutoInt's size (measured ~5 on the H200; far below one GEMM's).
  hw.efficiencies.push_back(entry("cublas.sgemm", "gemm.batched", 3e-6, {{1e6, 1e11}, {1e9, 2e12}}));
  KernelEstimate after = only(priced(hw, g, 4096));
  EXPECT_EQ(after.shapeClass, "gemm.batched");
  EXPECT_GT(after.computeS, 2 * before.computeS);
  // Chosen as the generated small GEMM, which was probed on plain GEMMs only:
  // not priced by that (fast, one-GEMM) curve.
  auto small = kernelByName("nvrtc.gemm_small");
  ASSERT_TRUE(small.isOk());
  hw.efficiencies.push_back(entry("nvrtc.gemm_small", "gemm.medium", 3e-6, {{1e6, 1e13}, {1e9, 3e13}}));
  for (Node& n : g.mutableNodes()) {
    if (n.op == OpKind::kMatMul) n.mir.kernel = *small;
  }
  EXPECT_GE(only(priced(hw, g, 4096)).computeS, 0.99 * after.computeS);
}

TEST(GpuGemmShape, FusedSoftmaxKeepsItsRowPasses) {
  // div + softmax in one reduce kernel vs the softmax alone: the fused producer
  // does not halve the softmax's row passes.
  std::string t = tensorType({2, 22, 22});
  std::string alone = opLine("%out", "softmax", "%arg0", "axis = -1 : i64", t, t);
  std::string fused = constantLine("%s", {1}, 4.0) +
                      opLine("%d", "div", "%arg0, %s", "cagr.group = 1 : i64", t + ", " + fixedType({1}), t) +
                      opLine("%out", "softmax", "%d", "axis = -1 : i64, cagr.group = 1 : i64", t, t);
  HardwareProfile hw = pricingtest::h200();
  hw.provenance = "measured";
  hw.efficiencies.push_back(entry("nvrtc.reduce", "softmax.rows", 3e-6, {{1e6, 5e11}, {1e9, 1e12}}));
  Graph a = parsed(hw::probe::graphText({Input{{2, 22, 22}}}, alone, t), "softmax");
  Graph f = parsed(hw::probe::graphText({Input{{2, 22, 22}}}, fused, t), "div+softmax");
  GraphEstimate ea = priced(hw, a, 4096), ef = priced(hw, f, 4096);
  ASSERT_EQ(ef.kernels.size(), 1u) << "div and softmax should be one kernel";
  EXPECT_GE(ef.kernels.front().estimate.memoryS, 0.99 * only(ea).memoryS);
}

}  // namespace
}  // namespace cagr

namespace cagr {
namespace {

TEST(GpuGemmShape, GeneratedGemmIsPricedByItsOwnProbe) {
  HardwareProfile hw = pricingtest::h200();
  hw.provenance = "measured";
  // The plan runs the layer on nvrtc.gemm_small (its cagr.kernel decision).
  Graph g = parsed(specFor("nvrtc.gemm_small", "gemm.tiles").text(), "gemm_small");
  KernelEstimate asLibrary = only(priced(hw, g, 4096));
  // Probed 3x slower than the library curve: priced so, by its own entry.
  hw.efficiencies.push_back(entry("nvrtc.gemm_small", "gemm.medium", 8e-6, {{1e6, 1e11}, {1e10, 3e12}}));
  KernelEstimate own = only(priced(hw, g, 4096));
  EXPECT_EQ(own.kernel, "nvrtc.gemm_small");
  EXPECT_GT(own.computeS, 1.5 * asLibrary.computeS);
  // A class it was never probed on: its nearest probed entry, not the library's rates.
  Graph big = parsed(specFor("nvrtc.gemm_small", "gemm.tiles").text(), "gemm_small");
  KernelEstimate large = only(priced(hw, big, 65536));
  EXPECT_GT(large.computeS, 0);
}

// The CUDA backend runs a GEMM no plan gave a kernel on cuBLASLt: on a
// backend-probed profile (one with a graph-step floor) it is priced as that
// call, even where the class's fastest entry is the generated GEMM, which
// runs only where a plan asks for it.
TEST(GpuGemmShape, UnassignedGemmIsPricedAsTheCublasLtCallTheBackendMakes) {
  HardwareProfile hw = pricingtest::h200();
  hw.provenance = "measured";
  Graph g = gemmGraph(256, 64);
  const std::string cls = only(priced(hw, g, 4096)).shapeClass;
  hw.efficiencies.push_back(entry("cublaslt.matmul", cls, 6e-6, {{1e6, 1e11}, {1e10, 1e12}}));
  hw.efficiencies.push_back(entry("nvrtc.gemm_small", cls, 3e-6, {{1e6, 1e13}, {1e10, 1e15}}));  // the fastest
  EXPECT_EQ(only(priced(hw, g, 4096)).kernel, "nvrtc.gemm_small");  // no floor: not a backend-probed profile
  hw.efficiencies.push_back(pricingtest::floorEntry(kGraphStepClass, 1.05e-6));
  KernelEstimate library = only(priced(hw, g, 4096));
  EXPECT_EQ(library.kernel, "cublaslt.matmul");
  auto small = kernelByName("nvrtc.gemm_small");
  ASSERT_TRUE(small.isOk());
  for (Node& n : g.mutableNodes()) {
    if (n.op == OpKind::kGemm) n.mir.kernel = *small;
  }
  KernelEstimate generated = only(priced(hw, g, 4096));
  EXPECT_EQ(generated.kernel, "nvrtc.gemm_small");  // the plan's choice, priced as itself
  EXPECT_LT(generated.seconds, library.seconds);
}

// nvrtc.gemm_small is priced by the entry of the form the backend generates
// for the shape (generatedGemmFormClass) where the profile has one: the
// 64 x 128 FFMA tiles measured ~100 us a call where the narrow kernel's
// probe of the same FLOP class took 12.
TEST(GpuGemmShape, GeneratedGemmIsPricedByItsFormsEntry) {
  HardwareProfile hw = pricingtest::h200();
  hw.provenance = "measured";
  auto small = kernelByName("nvrtc.gemm_small");
  ASSERT_TRUE(small.isOk());
  auto onSmall = [&](Graph g) {
    for (Node& n : g.mutableNodes()) {
      if (n.op == OpKind::kGemm) n.mir.kernel = *small;
    }
    return g;
  };
  Graph cross = onSmall(gemmGraph(429, 429)), narrow = onSmall(gemmGraph(256, 64));
  const std::string crossCls = only(priced(hw, cross, 256)).shapeClass;
  const std::string narrowCls = only(priced(hw, narrow, 4096)).shapeClass;
  for (const std::string& cls : {crossCls, narrowCls}) {
    hw.efficiencies.push_back(entry("nvrtc.gemm_small", cls, 7e-6, {{1e6, 1e12}, {1e8, 2e13}, {1e10, 3e13}}));
  }
  KernelEstimate byClass = only(priced(hw, cross, 256));
  EXPECT_EQ(byClass.shapeClass, crossCls);
  EXPECT_LT(byClass.seconds, 30e-6);
  hw.efficiencies.push_back(entry("nvrtc.gemm_small", "gemm.tiles", 100e-6, {{1e8, 1.5e12}, {1e10, 1.5e13}}));
  hw.efficiencies.push_back(entry("nvrtc.gemm_small", "gemm.narrow", 7e-6, {{1e7, 1e12}, {1e9, 2e12}}));
  KernelEstimate byForm = only(priced(hw, cross, 256));
  EXPECT_EQ(byForm.shapeClass, "gemm.tiles");
  EXPECT_GT(byForm.computeS, 3 * byClass.computeS);
  EXPECT_EQ(only(priced(hw, narrow, 4096)).shapeClass, "gemm.narrow");
  // Without a plan's choice of the generated kernel the forms play no part.
  Graph library = gemmGraph(429, 429);
  EXPECT_NE(only(priced(hw, library, 256)).kernel, "nvrtc.gemm_small");
}

}  // namespace
}  // namespace cagr
