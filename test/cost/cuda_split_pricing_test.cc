// Pricing on CUDA-probed profiles (all modelled): table-batched lookups by
// their own multi-table probe entry (gather.tables, a curve over bytes =
// tables x rows), CSR SpMM by its nvrtc.spmm entries (skewed rows apart),
// and a fused GEMM group the CUDA backend runs as a library GEMM plus a
// generated epilogue kernel priced as two kernels; elsewhere unchanged.
#include <gtest/gtest.h>

#include "cagr/cost.h"
#include "cagr/mir.h"
#include "cagr/text.h"
#include "cost/kernel_class.h"
#include "cuda_pricing_util.h"
#include "hw/backend_probes_text.h"
#include "hw/cuda_probes.h"

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

HardwareProfile probed(bool withFloor) {
  HardwareProfile hw = pricingtest::h200();
  hw.provenance = "measured";
  hw.efficiencies.push_back(entry("nvrtc.embedding", "gather.cached", 3e-6, {{1e4, 1e10}, {1e8, 1e12}}));
  hw.efficiencies.push_back(entry("nvrtc.eltwise", "eltwise.stream", 3e-6, {{1e4, 1e10}, {1e8, 2e12}}));
  if (withFloor) {
    hw.efficiencies.push_back(pricingtest::floorEntry(kGraphStepClass, 1.25e-6));
  }
  return hw;
}

TEST(CudaSplitPricing, MultiTableLookupsUseTheirOwnProbeCurve) {
  HardwareProfile hw = probed(true);
  Graph t26 = parsed(specFor("nvrtc.embedding", "gather.tables", 0).text(), "26 tables");
  Graph t52 = parsed(specFor("nvrtc.embedding", "gather.tables", 1).text(), "52 tables");
  // Without the multi-table entry: the one-table probe prices them.
  EXPECT_EQ(only(priced(hw, t26, 4096)).shapeClass, "gather.cached");
  // A slower multi-table curve (the real kernel): its own entry, read at the call's bytes.
  hw.efficiencies.push_back(entry("nvrtc.embedding", "gather.tables", 4e-6, {{1e5, 2e11}, {1e9, 2e11}}));
  KernelEstimate a = only(priced(hw, t26, 4096)), b = only(priced(hw, t52, 4096));
  EXPECT_EQ(a.kernel, "nvrtc.embedding");
  EXPECT_EQ(a.shapeClass, "gather.tables");
  EXPECT_EQ(b.shapeClass, "gather.tables");
  auto stats = computeStats(t26, defaultBindings(t26, 4096));
  ASSERT_TRUE(stats.isOk());
  double bytes = stats->nodes.back().counts.bytesRead + stats->nodes.back().counts.bytesWritten;
  const KernelEfficiency* tables = hw.efficiency("nvrtc.embedding", "gather.tables");
  EXPECT_NEAR(a.memoryS, bytes / tables->rateAt(bytes), 1e-12);
  // Twice the lookups move about twice the bytes: priced by tables x rows
  // (a flat curve here, so the time follows the bytes).
  EXPECT_GT(b.memoryS, 1.5 * a.memoryS);
  EXPECT_GT(a.memoryS, only(priced(probed(true), t26, 4096)).memoryS);
  // Tables of unequal widths (16 and 1, Wide&Deep's): each 1-wide lookup
  // costs a 16-wide row on the kernel (padding bytes), and their own entry
  // where the profile has one.
  Graph mixed = parsed(specFor("nvrtc.embedding", "gather.tables_mixed").text(), "mixed widths");
  KernelEstimate m = only(priced(hw, mixed, 4096));
  EXPECT_EQ(m.shapeClass, "gather.tables");
  auto ms = computeStats(mixed, defaultBindings(mixed, 4096));
  ASSERT_TRUE(ms.isOk());
  const Node& bags = mixed.nodes().back();
  double pad = tableBatchPadding(mixed, bags, ms->nodes.back().outShapes[0]);
  EXPECT_DOUBLE_EQ(pad, 4096.0 * 26 * 15 * 8);
  double mb = ms->nodes.back().counts.bytesRead + ms->nodes.back().counts.bytesWritten + pad;
  EXPECT_NEAR(m.memoryS, mb / tables->rateAt(mb), 1e-12);
  EXPECT_DOUBLE_EQ(tableBatchPadding(t26, t26.nodes().back(), {4096, 416}), 0.0);
  hw.efficiencies.push_back(entry("nvrtc.embedding", "gather.tables_mixed", 4e-6, {{1e5, 1e11}, {1e9, 1e11}}));
  EXPECT_EQ(only(priced(hw, mixed, 4096)).shapeClass, "gather.tables_mixed");
  EXPECT_EQ(only(priced(hw, t52, 4096)).shapeClass, "gather.tables");
  // A one-table lookup keeps the one-table entry.
  Graph one = parsed(specFor("nvrtc.embedding", "gather.cached").text(), "one table");
  EXPECT_EQ(only(priced(hw, one, 4096)).shapeClass, "gather.cached");
}

TEST(CudaSplitPricing, SpmmIsPricedByItsOwnEntrySkewedRowsApart) {
  HardwareProfile hw = probed(true);
  // The 2000-node graphs (the first of each is the 100-node floor probe).
  Graph uniform = parsed(specFor("nvrtc.spmm", "spmm.csr", 1).text(), "uniform spmm");
  Graph skewed = parsed(specFor("nvrtc.spmm", "spmm.skewed", 1).text(), "skewed spmm");
  EXPECT_NE(only(priced(hw, uniform, 1)).kernel, "nvrtc.spmm");  // no entry: the lookup default
  hw.efficiencies.push_back(entry("nvrtc.spmm", "spmm.csr", 4e-6, {{1e5, 1e11}, {1e9, 2e12}}));
  KernelEstimate u = only(priced(hw, uniform, 1));
  EXPECT_EQ(u.kernel, "nvrtc.spmm");
  EXPECT_EQ(u.shapeClass, "spmm.csr");
  EXPECT_EQ(only(priced(hw, skewed, 1)).shapeClass, "spmm.csr");  // no skewed entry: the uniform one
  hw.efficiencies.push_back(entry("nvrtc.spmm", "spmm.skewed", 4e-6, {{1e5, 5e10}, {1e9, 1e12}}));
  KernelEstimate s = only(priced(hw, skewed, 1));
  EXPECT_EQ(s.shapeClass, "spmm.skewed");
  EXPECT_EQ(only(priced(hw, uniform, 1)).shapeClass, "spmm.csr");
  // Bytes: row_ptr + col_idx + values + the gathered dense rows + the output.
  auto stats = computeStats(uniform, defaultBindings(uniform, 1));
  ASSERT_TRUE(stats.isOk());
  const OpCounts& oc = stats->nodes.back().counts;
  const double nnz = 2000 * 16, rows = 2000, k = 64;
  EXPECT_DOUBLE_EQ(oc.bytesRead, (rows + 1) * 8 + nnz * 8 + nnz * 4 + nnz * k * 4);
  EXPECT_DOUBLE_EQ(oc.bytesWritten, rows * k * 4);
}

// One group: y = x0 * (x W + b) <tail> (DCN-v2's cross layer with `tail`
// "mul" then "add" of x; "relu": a ReLU the cuBLASLt epilogue runs).
Graph gemmGroup(const std::string& tail) {
  const std::string t = tensorType({64}), grp = "cagr.group = 0 : i64";
  std::string body =
      constantLine("%w", {64, 64}, 0.01) + constantLine("%b", {64}, 0.01) +
      opLine("%g", "gemm", "%arg0, %w, %b", grp, t + ", " + fixedType({64, 64}) + ", " + fixedType({64}), t);
  if (tail == "relu") {
    body += opLine("%out", "relu", "%g", grp, t, t);
  } else {
    body += opLine("%m", "mul", "%arg0, %g", grp, t + ", " + t, t) +
            opLine("%out", "add", "%m, %arg0", grp, t + ", " + t, t);
  }
  return parsed(hw::probe::graphText({Input{{64}}}, body, t), "gemm + " + tail);
}

TEST(CudaSplitPricing, LibraryGemmWithAGeneratedEpiloguePaysTwoKernels) {
  Graph cross = gemmGroup("mul+add"), relu = gemmGroup("relu");
  HardwareProfile graphFloor = probed(true), noFloor = probed(false);
  KernelEstimate c = only(priced(graphFloor, cross, 4096)), r = only(priced(graphFloor, relu, 4096));
  // cuBLASLt runs the bias and ReLU: one kernel, one floor (at least the graph floor).
  EXPECT_GE(r.launchS, 1.25e-6);
  // Mul + add are no cuBLASLt epilogue: a second (generated) kernel's floor,
  // and the GEMM's output written and read back.
  EXPECT_NEAR(c.launchS - r.launchS, 1.25e-6, 1e-12);
  EXPECT_GT(c.seconds, r.seconds + 1.25e-6);
  // Chosen as a generated GEMM (one kernel with its epilogue): no split.
  Graph generated = cross;
  auto k = kernelByName("nvrtc.gemm_small");
  if (k.isOk()) {
    for (Node& n : generated.mutableNodes()) {
      if (n.op == OpKind::kGemm) n.mir.kernel = *k;
    }
    EXPECT_NEAR(only(priced(graphFloor, generated, 4096)).launchS, r.launchS, 1e-6);
  }
  // Profiles without a CUDA-graph floor (datasheets, CPUs) price it as one kernel, as before.
  KernelEstimate c0 = only(priced(noFloor, cross, 4096)), r0 = only(priced(noFloor, relu, 4096));
  EXPECT_DOUBLE_EQ(c0.launchS, r0.launchS);
}


// Generated kernels launched as programmatic dependents (sm_90+) pay the
// profile's launch.graph.pdl floor; library GEMMs keep launch.graph (cuBLASLt
// launches its kernels plainly); a library GEMM's generated epilogue kernel
// pays the programmatic floor. Profiles without the entry price as before.
TEST(CudaSplitPricing, ProgrammaticLaunchFloorAppliesToGeneratedKernelsOnly) {
  HardwareProfile plain = probed(true), pdl = probed(true);
  KernelEfficiency f = pricingtest::floorEntry(kGraphStepPdlClass, 0.75e-6);
  pdl.efficiencies.push_back(f);
  EXPECT_DOUBLE_EQ(generatedStepFloor(plain), 1.25e-6);
  EXPECT_DOUBLE_EQ(generatedStepFloor(pdl), 0.75e-6);
  EXPECT_DOUBLE_EQ(graphStepFloor(pdl), 1.25e-6);
  EXPECT_STREQ(hw::kGraphStepPdlClass, kGraphStepPdlClass);

  Graph chain = parsed(hw::launchChainSpec(8).text(), "chain");
  GraphEstimate a = priced(plain, chain, 4), b = priced(pdl, chain, 4);
  ASSERT_EQ(b.kernels.size(), 8u);
  for (const GroupEstimate& k : b.kernels) {
    EXPECT_EQ(k.estimate.kernel.rfind("nvrtc.", 0), 0u);
    EXPECT_DOUBLE_EQ(k.estimate.launchS, 0.75e-6);
  }
  EXPECT_NEAR(a.latencyS - b.latencyS, 8 * 0.5e-6, 1e-12);

  Graph cross = gemmGroup("mul+add"), relu = gemmGroup("relu");
  KernelEstimate r = only(priced(plain, relu, 4096)), rp = only(priced(pdl, relu, 4096));
  EXPECT_NE(rp.kernel.rfind("nvrtc.", 0), 0u);  // a library GEMM
  EXPECT_DOUBLE_EQ(rp.launchS, r.launchS);
  KernelEstimate cp = only(priced(pdl, cross, 4096));
  EXPECT_NEAR(cp.launchS - rp.launchS, 0.75e-6, 1e-12);  // its epilogue: a generated kernel of its own
}
}  // namespace
}  // namespace cagr
