// CSR SpMM on a CPU profile (all modelled): priced by the CPU backend
// probes' own.spmm entries (spmm.csr, spmm.skewed; src/hw/backend_probes.cc)
// through the same class choice as the CUDA backend's nvrtc.spmm, and like
// a lookup on a profile without them.
#include <gtest/gtest.h>

#include "cagr/cost.h"
#include "cuda_pricing_util.h"
#include "hw/backend_probes_text.h"

namespace cagr {
namespace {

using pricingtest::entry;
using pricingtest::only;
using pricingtest::parsed;
using pricingtest::priced;

Graph csr(bool skewed) {
  hw::probe::CsrPlan p = hw::probe::spmmCsrPlan(2000, 16, 64, skewed);
  return parsed(hw::probe::graphText({}, p.body, p.outType), p.label);
}

TEST(CpuSpmmPricing, ProbedOwnSpmmEntriesPriceTheProduct) {
  auto base = builtinProfile("x86-64");
  ASSERT_TRUE(base.isOk());
  HardwareProfile hw = *base;
  Graph uniform = csr(false), skewed = csr(true);
  EXPECT_NE(only(priced(hw, uniform, 1)).kernel, "own.spmm");  // no entry: priced like a lookup
  hw.efficiencies.push_back(entry("own.spmm", "spmm.csr", 5e-6, {{1e5, 1e10}, {1e8, 2e10}}));
  KernelEstimate u = only(priced(hw, uniform, 1));
  EXPECT_EQ(u.kernel, "own.spmm");
  EXPECT_EQ(u.shapeClass, "spmm.csr");
  EXPECT_EQ(only(priced(hw, skewed, 1)).shapeClass, "spmm.csr");  // no skewed entry: the uniform one
  hw.efficiencies.push_back(entry("own.spmm", "spmm.skewed", 5e-6, {{1e5, 5e9}, {1e8, 1e10}}));
  KernelEstimate s = only(priced(hw, skewed, 1));
  EXPECT_EQ(s.kernel, "own.spmm");
  EXPECT_EQ(s.shapeClass, "spmm.skewed");
  EXPECT_GT(s.seconds, u.seconds);  // the slower curve
  // Read off the curve at the call's bytes (the op table's count), plus the overhead.
  auto stats = computeStats(uniform, defaultBindings(uniform, 1));
  ASSERT_TRUE(stats.isOk());
  const OpCounts& oc = stats->nodes.back().counts;
  const double bytes = oc.bytesRead + oc.bytesWritten;
  const KernelEfficiency* e = hw.efficiency("own.spmm", "spmm.csr");
  ASSERT_NE(e, nullptr);
  EXPECT_NEAR(u.seconds, 5e-6 + bytes / e->rateAt(bytes), 1e-3 * u.seconds);
}

}  // namespace
}  // namespace cagr
