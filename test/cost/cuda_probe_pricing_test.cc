// Pricing with CUDA backend-probe entries (cagr profile --target cuda): a
// CIN layer is priced by the nvrtc.cin entry's own FLOP-rate curve (not
// cuBLAS's) whether the plan leaves it unassigned or chooses nvrtc.cin, a
// chosen kernel with its own entry is priced by it, lookups and elementwise
// nodes by their nvrtc.* entries, and a measured CUDA-graph per-kernel floor
// replaces each kernel's launch overhead; profiles without these entries
// price exactly as before; an f32 cuBLASLt layer within the range of the
// backend-probed tuned-layer curve takes it where faster, a tf32 / bf16
// one over f32 activations that math mode's probed curve. All modelled.
#include <gtest/gtest.h>

#include "cagr/cost.h"
#include "cagr/mir.h"
#include "cagr/text.h"
#include "cost/kernel_class.h"
#include "cuda_pricing_util.h"
#include "hw/cuda_probes.h"

namespace cagr {
namespace {

using pricingtest::entry;
using pricingtest::h200;
using pricingtest::only;
using pricingtest::priced;
using pricingtest::specFor;

Graph parsed(const hw::CudaProbeSpec& s) {
  return pricingtest::parsed(s.text(), s.label);
}

// The graph's FLOPs at `batch` (0 after a failure, which the caller's
// estimates then fail on).
double flopsAt(const Graph& g, int64_t batch) {
  auto stats = computeStats(g, defaultBindings(g, batch));
  EXPECT_TRUE(stats.isOk());
  double flops = 0;
  if (stats.isOk()) {
    for (const NodeStats& s : stats->nodes) flops += s.counts.flops;
  }
  return flops;
}

HardwareProfile probed() {
  HardwareProfile hw = h200();
  hw.provenance = "measured";
  hw.efficiencies.push_back(entry("nvrtc.cin", "gemm.cin", 4e-6, {{1e6, 1e11}, {1e10, 2e12}}));
  hw.efficiencies.push_back(entry("nvrtc.embedding", "gather.cached", 3e-6, {{1e4, 1e10}, {1e8, 1e12}}));
  hw.efficiencies.push_back(entry("nvrtc.eltwise", "eltwise.stream", 3e-6, {{1e4, 1e10}, {1e8, 2e12}}));
  return hw;
}

TEST(CudaProbePricing, CinLayerIsPricedByItsOwnCurveNotCublas) {
  Graph g = parsed(specFor("nvrtc.cin", "gemm.cin", 1));  // [N,200,16] x [N,22,16] -> 200
  const int64_t batch = 4096;
  const double flops = flopsAt(g, batch);

  KernelEstimate before = only(priced(h200(), g, batch));
  EXPECT_NE(before.kernel, "nvrtc.cin");  // a datasheet profile: cuBLAS's class rate, as before
  EXPECT_EQ(before.shapeClass.rfind("gemm.", 0), 0u);

  HardwareProfile hw = probed();
  KernelEstimate after = only(priced(hw, g, batch));
  EXPECT_EQ(after.kernel, "nvrtc.cin");
  EXPECT_EQ(after.shapeClass, "gemm.cin");
  const double rate = hw.efficiency("nvrtc.cin", "gemm.cin")->rateAt(flops);
  EXPECT_NEAR(after.computeS, flops / rate, 1e-9 * flops / rate);
  EXPECT_DOUBLE_EQ(after.launchS, 4e-6);
  // The generated kernel never writes the outer product: memory is the
  // inputs and the output only, far below the compute time here.
  EXPECT_LT(after.memoryS, after.computeS);

  // The plan choosing nvrtc.cin prices the same (its own entry, not cublas.sgemm).
  Graph chosen = g;
  for (Node& n : chosen.mutableNodes()) {
    if (n.op == OpKind::kCIN) n.mir.kernel = *kernelByName("nvrtc.cin");
  }
  KernelEstimate viaPlan = only(priced(hw, chosen, batch));
  EXPECT_EQ(viaPlan.kernel, "nvrtc.cin");
  EXPECT_NEAR(viaPlan.seconds, after.seconds, 1e-12);
}

// A cagr-profile-cuda profile (cuBLASLt's class curves), as the probes are
// merged into, and it with a flat `kernel` curve in kTunedGemmClass from
// `from` FLOPs at `rate`.
HardwareProfile cublasProfile() {
  auto base = loadProfile(std::string(CAGR_SOURCE_DIR) + "/bench/results/hw/h200-measured.json");
  EXPECT_TRUE(base.isOk()) << base.status().message();
  return base.isOk() ? *base : h200();
}
HardwareProfile withTuned(HardwareProfile hw, const std::string& kernel, double overhead, double from, double rate) {
  hw.efficiencies.push_back(entry(kernel, kTunedGemmClass, overhead, {{from, rate}, {1e10, rate}}));
  return hw;
}

// A tensor-core CIN is priced by its kernel's entry of its math mode (no
// peak ratio); one the plan leaves unassigned runs as the CUDA backend runs
// it (cuda_program.cc): in tf32 on nvrtc.cin's step kernels, in bf16 on
// cuBLASLt, and is priced by that kernel's entry.
TEST(CudaProbePricing, ATensorCoreCinIsPricedByItsMathModesEntry) {
  Graph g = parsed(specFor("nvrtc.cin", "gemm.cin", 1));
  const int64_t batch = 4096;
  const double flops = flopsAt(g, batch);
  HardwareProfile hw = probed();
  hw.efficiencies.push_back(entry("nvrtc.cin_tf32", "gemm.cin", 4e-6, {{1e6, 2e11}, {1e10, 4e12}}));
  hw.efficiencies.push_back(entry("cublaslt.cin_tf32", "gemm.cin", 4e-6, {{1e6, 5e11}, {1e10, 9e12}}));
  hw.efficiencies.push_back(entry("nvrtc.cin_bf16", "gemm.cin", 4e-6, {{1e6, 1e11}, {1e10, 2e12}}));
  hw.efficiencies.push_back(entry("cublaslt.cin_bf16", "gemm.cin", 4e-6, {{1e6, 7e11}, {1e10, 2e13}}));
  auto withCin = [&](Precision math, const char* kernel) {
    Graph out = g;
    for (Node& n : out.mutableNodes()) {
      if (n.op != OpKind::kCIN) continue;
      n.mir.math = math;
      n.mir.kernel = kernel == nullptr ? 0 : *kernelByName(kernel);
    }
    return only(priced(hw, out, batch));
  };
  auto rate = [&](const char* kernel) { return hw.efficiency(kernel, "gemm.cin")->rateAt(flops); };
  KernelEstimate unassigned = withCin(Precision::kTF32, nullptr);
  EXPECT_NEAR(unassigned.computeS, flops / rate("nvrtc.cin_tf32"), 1e-9 * flops / rate("nvrtc.cin_tf32"));
  KernelEstimate generated = withCin(Precision::kTF32, "nvrtc.cin");
  EXPECT_EQ(generated.kernel, "nvrtc.cin");
  EXPECT_NEAR(generated.computeS, unassigned.computeS, 1e-12);  // its own tf32 curve, no peak ratio
  KernelEstimate library = withCin(Precision::kTF32, "cublaslt.cin");
  EXPECT_NEAR(library.computeS, flops / rate("cublaslt.cin_tf32"), 1e-9 * flops / rate("cublaslt.cin_tf32"));
  EXPECT_LT(library.seconds, unassigned.seconds) << "the faster entry of this profile";
  KernelEstimate bf16 = withCin(Precision::kBF16, nullptr);
  EXPECT_NEAR(bf16.computeS, flops / rate("cublaslt.cin_bf16"), 1e-9 * flops / rate("cublaslt.cin_bf16"));
  EXPECT_GT(withCin(Precision::kBF16, "nvrtc.cin").seconds, bf16.seconds);
}

TEST(CudaProbePricing, LookupsAndElementwiseUseTheirGeneratedKernels) {
  HardwareProfile hw = probed();
  KernelEstimate bag = only(priced(hw, parsed(specFor("nvrtc.embedding", "gather.cached")), 4096));
  EXPECT_EQ(bag.kernel, "nvrtc.embedding");
  EXPECT_EQ(bag.shapeClass, "gather.cached");
  KernelEstimate add = only(priced(hw, parsed(specFor("nvrtc.eltwise", "eltwise.stream")), 4096));
  EXPECT_EQ(add.kernel, "nvrtc.eltwise");
  // A profile without them keeps the profiler's streaming loop.
  EXPECT_EQ(only(priced(h200(), parsed(specFor("nvrtc.eltwise", "eltwise.stream")), 4096)).kernel, "own.eltwise");
}

TEST(CudaProbePricing, GraphFloorReplacesTheLaunchOverheadPerKernel) {
  Graph chain = [] {
    auto g = parseGraph(hw::launchChainSpec(8).text(), "chain");
    EXPECT_TRUE(g.isOk());
    return *g;
  }();
  HardwareProfile hw = probed();
  GraphEstimate plain = priced(hw, chain, 4);
  ASSERT_EQ(plain.kernels.size(), 8u);
  EXPECT_DOUBLE_EQ(plain.kernels.front().estimate.launchS, 3e-6);  // nvrtc.eltwise's single-step overhead
  EXPECT_DOUBLE_EQ(graphStepFloor(hw), 0.0);

  KernelEfficiency floor = pricingtest::floorEntry(kGraphStepClass, 1.25e-6);
  hw.efficiencies.push_back(floor);
  EXPECT_DOUBLE_EQ(graphStepFloor(hw), 1.25e-6);
  GraphEstimate replay = priced(hw, chain, 4);
  for (const GroupEstimate& k : replay.kernels) EXPECT_DOUBLE_EQ(k.estimate.launchS, 1.25e-6);
  EXPECT_NEAR(plain.latencyS - replay.latencyS, 8 * (3e-6 - 1.25e-6), 1e-12);
  // The constants the profiler writes are the ones the cost model reads.
  EXPECT_STREQ(hw::kGraphStepKernel, kGraphStepKernel);
  EXPECT_STREQ(hw::kGraphStepClass, kGraphStepClass);
}

// Softmax / LayerNorm rows: the reduce kernel's softmax probe where the
// profile has it, else its row-sum one.
TEST(CudaProbePricing, SoftmaxTakesItsOwnProbeWhereMeasured) {
  HardwareProfile hw = probed();
  hw.efficiencies.push_back(entry("nvrtc.reduce", "reduce.rows", 3e-6, {{1e4, 1e10}, {1e8, 2e12}}));
  Graph softmax = parsed(specFor("nvrtc.reduce", "softmax.rows"));
  KernelEstimate rows = only(priced(hw, softmax, 4096));
  EXPECT_EQ(rows.kernel, "nvrtc.reduce");
  EXPECT_EQ(rows.shapeClass, "reduce.rows");
  hw.efficiencies.push_back(entry("nvrtc.reduce", "softmax.rows", 3e-6, {{1e4, 1e9}, {1e8, 5e11}}));
  KernelEstimate own = only(priced(hw, softmax, 4096));
  EXPECT_EQ(own.kernel, "nvrtc.reduce");
  EXPECT_EQ(own.shapeClass, "softmax.rows");
  EXPECT_GT(own.seconds, rows.seconds);  // priced by its own (slower) curve
}

// A probed generated kernel whose smallest call outlasts the trivial probe
// kernel's (nvrtc.eltwise) by more than the graph floor pays that shortest
// run in a replay instead of the floor (not both); others pay the floor.
TEST(CudaProbePricing, AProbedKernelsShortestRunReplacesASmallerGraphFloor) {
  HardwareProfile hw = probed();
  for (auto& e : hw.efficiencies) {
    if (e.kernel == "nvrtc.embedding") e.overheadS = 3e-6 + 5e-6;  // 5 us beyond the trivial kernel's 3 us
  }
  // CAGR's cuBLASLt CIN step is probed the same way: its shortest run counts.
  hw.efficiencies.push_back(entry("cublaslt.cin", "gemm.cin", 3e-6 + 7e-6, {{1e6, 1e11}, {1e10, 2e12}}));
  KernelEfficiency floor = pricingtest::floorEntry(kGraphStepClass, 1.25e-6);
  hw.efficiencies.push_back(floor);
  EXPECT_NEAR(probedMinimumRun(hw, "nvrtc.embedding", "gather.cached"), 5e-6, 1e-15);
  EXPECT_DOUBLE_EQ(probedMinimumRun(hw, "nvrtc.eltwise", "eltwise.stream"), 0.0);
  EXPECT_DOUBLE_EQ(probedMinimumRun(hw, "cublaslt.matmul", "gemm.medium"), 0.0);  // library: timed in replays
  EXPECT_NEAR(probedMinimumRun(hw, "cublaslt.cin", "gemm.cin"), 7e-6, 1e-15);
  EXPECT_DOUBLE_EQ(probedMinimumRun(hw, "nvrtc.spmm", "spmm.csr"), 0.0);          // no entry
  KernelEstimate bag = only(priced(hw, parsed(specFor("nvrtc.embedding", "gather.cached")), 4096));
  EXPECT_NEAR(bag.launchS, 5e-6, 1e-15);
  KernelEstimate add = only(priced(hw, parsed(specFor("nvrtc.eltwise", "eltwise.stream")), 4096));
  EXPECT_DOUBLE_EQ(add.launchS, 1.25e-6);
  // Without the trivial kernel's entry the reference is the single-step floor.
  KernelEfficiency single = floor;
  single.shapeClass = kSingleStepFloorClass;
  single.overheadS = 4e-6;
  hw.efficiencies.push_back(single);
  std::erase_if(hw.efficiencies, [](const KernelEfficiency& e) { return e.kernel == "nvrtc.eltwise"; });
  EXPECT_DOUBLE_EQ(singleStepFloor(hw), 4e-6);
  EXPECT_NEAR(probedMinimumRun(hw, "nvrtc.embedding", "gather.cached"), 4e-6, 1e-15);
  EXPECT_STREQ(hw::kSingleStepClass, kSingleStepFloorClass);
}

// An f32 cuBLASLt layer over a weight (DLRM's 512 -> 256): where the profile
// has the backend-probed curve of such layers as the backend runs them
// (kTunedGemmClass: tuned, on sm_90 maybe on the wgmma tile), a call within
// that curve's range is priced at the faster of it and the library's class
// rate; below its range, with a slower curve, or on another kernel, as before.
TEST(CudaProbePricing, TunedLayersTakeTheBackendsOwnCurveWithinItsRange) {
  const hw::CudaProbeSpec& spec = specFor("cublaslt.matmul", kTunedGemmClass, 1);
  EXPECT_NE(spec.label.find("[N,512] x [256,512]^T"), std::string::npos) << spec.label;
  Graph g = parsed(spec);
  const HardwareProfile base = cublasProfile();
  auto with = [&](double rate) { return withTuned(base, "cublaslt.matmul", 5e-6, 2.7e8, rate); };
  const KernelEstimate before = only(priced(base, g, 4096)), fast = only(priced(with(1e15), g, 4096));
  EXPECT_EQ(before.kernel, "cublaslt.matmul");
  EXPECT_EQ(fast.shapeClass, before.shapeClass);  // the class stays the library's: only the rate moves
  EXPECT_GT(before.computeS, 0);
  EXPECT_NEAR(fast.computeS, flopsAt(g, 4096) / 1e15, 0.01 * flopsAt(g, 4096) / 1e15);
  EXPECT_DOUBLE_EQ(fast.launchS, before.launchS);  // the library's overhead, not the probe's dispatch floor
  EXPECT_DOUBLE_EQ(only(priced(with(1e9), g, 4096)).computeS, before.computeS);  // slower: the class rate stays
  // 64 rows: 1.7e7 FLOPs, under the curve's first call (not tuned by the backend).
  EXPECT_DOUBLE_EQ(only(priced(with(1e15), g, 64)).computeS, only(priced(base, g, 64)).computeS);
  // Another kernel of the same class is not the backend's tuned call.
  HardwareProfile hw = with(1e15);
  EXPECT_EQ(effectiveRates(hw, "cublas.sgemm", "gemm.medium", 1e9).flopsPerS,
            effectiveRates(base, "cublas.sgemm", "gemm.medium", 1e9).flopsPerS);
  EXPECT_EQ(effectiveRates(hw, "cublaslt.matmul", "gemm.skinny", 1e9).flopsPerS,
            effectiveRates(base, "cublaslt.matmul", "gemm.skinny", 1e9).flopsPerS);
}

// A bf16-math cuBLASLt layer over f32 activations (DLRM's 512 -> 256) runs
// with f32 operands (FAST_16BF): where the backend probes measured such
// calls (cublaslt.matmul_bf16, kTunedGemmClass) it is priced by that curve
// — slower or faster than the profiler's bf16-operand cublas.gemm_bf16 —
// with the library's overhead; below the curve's range, or with its
// activations stored in bf16 (bf16 operands), as before.
TEST(CudaProbePricing, ReducedMathLayersOverF32ActivationsTakeTheirMathsProbedCurve) {
  for (const char* math : {"tf32", "bf16"}) {
    const std::string kernel = std::string("cublaslt.matmul_") + math;
    const hw::CudaProbeSpec& spec = specFor(kernel, kTunedGemmClass, 1);
    EXPECT_NE(spec.label.find("[N,512] x [256,512]^T"), std::string::npos) << spec.label;
    EXPECT_EQ(spec.rows.front(), 256) << kernel << ": from DLRM's batch 256";
    EXPECT_NE(spec.text().find(std::string("cagr.math = \"") + math + "\""), std::string::npos) << spec.text();
  }
  Graph g = parsed(specFor("cublaslt.matmul_bf16", kTunedGemmClass, 1));
  const HardwareProfile base = cublasProfile();
  auto with = [&](double rate) { return withTuned(base, "cublaslt.matmul_bf16", 7e-6, 6e7, rate); };
  const double flops = flopsAt(g, 4096);
  const KernelEstimate before = only(priced(base, g, 4096));
  EXPECT_GT(before.computeS, 0);
  for (double rate : {2e12, 5e14}) {
    const KernelEstimate asRun = only(priced(with(rate), g, 4096));
    EXPECT_NEAR(asRun.computeS, flops / rate, 0.01 * flops / rate) << rate;
    EXPECT_DOUBLE_EQ(asRun.launchS, before.launchS) << "the library's overhead";
  }
  EXPECT_GT(only(priced(with(2e12), g, 4096)).seconds, before.seconds);
  // 64 rows: 1.7e7 FLOPs, under the curve's first call.
  EXPECT_DOUBLE_EQ(only(priced(with(2e12), g, 64)).computeS, only(priced(base, g, 64)).computeS);
  // Activations stored in bf16: the call runs bf16 operands, as the profiler's entry did.
  Graph stored = g;
  for (ValueId v = 0; v < static_cast<ValueId>(stored.numValues()); ++v) {
    if (!stored.isConstant(v)) stored.mutableValue(v).mir.storage = Precision::kBF16;
  }
  EXPECT_DOUBLE_EQ(only(priced(with(2e12), stored, 4096)).computeS, only(priced(base, stored, 4096)).computeS);
}

}  // namespace
}  // namespace cagr
