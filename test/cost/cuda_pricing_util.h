// Shared harness of the CUDA-probed pricing tests (cuda_probe_pricing_test,
// cuda_split_pricing_test): the probe plans by kernel and class, parsing,
// synthetic measured entries, and pricing a graph with a profile.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "cagr/cost.h"
#include "cagr/text.h"
#include "cost/kernel_class.h"
#include "hw/cuda_probes.h"

namespace cagr::pricingtest {

/// The `nth` probe plan of `kernel` on class `cls` (the full probe list).
inline const hw::CudaProbeSpec& specFor(const std::string& kernel, const std::string& cls, size_t nth = 0) {
  static const std::vector<hw::CudaProbeSpec> specs = hw::cudaProbeSpecs(true);
  const size_t wanted = nth;
  for (const hw::CudaProbeSpec& s : specs) {
    if (s.kernel == kernel && s.shapeClass == cls && nth-- == 0) return s;
  }
  ADD_FAILURE() << "no probe spec " << kernel << " " << cls << " #" << wanted;
  return specs.front();
}

inline Graph parsed(const std::string& text, const std::string& what) {
  auto g = parseGraph(text, what);
  EXPECT_TRUE(g.isOk()) << what << ": " << g.status().message();
  return g.isOk() ? std::move(*g) : Graph();
}

/// A measured entry with a rate curve: FLOP rates on GEMM classes, byte rates elsewhere.
inline KernelEfficiency entry(const std::string& kernel, const std::string& cls, double overhead,
                              std::vector<RatePoint> curve) {
  const bool gemm = cls.rfind("gemm.", 0) == 0;
  KernelEfficiency e;
  e.kernel = kernel;
  e.shapeClass = cls;
  e.flopsPerS = gemm ? curve.back().flopsPerS : 0;
  e.bytesPerS = gemm ? 1e11 : curve.back().flopsPerS;
  e.overheadS = overhead;
  e.samples = static_cast<int>(curve.size()) + 1;
  e.source = "measured: test";
  e.curve = std::move(curve);
  return e;
}

/// A measured CUDA-graph floor entry (kGraphStepKernel) of class `cls`.
inline KernelEfficiency floorEntry(const char* cls, double seconds) {
  KernelEfficiency f;
  f.kernel = kGraphStepKernel;
  f.shapeClass = cls;
  f.overheadS = seconds;
  f.samples = 2;
  f.source = "measured: test";
  return f;
}

inline HardwareProfile h200() {
  auto p = builtinProfile("h200");
  EXPECT_TRUE(p.isOk());
  return *p;
}

inline GraphEstimate priced(const HardwareProfile& hw, const Graph& g, int64_t batch) {
  RooflineCostModel m(hw);
  auto e = m.graph(g, defaultBindings(g, batch));
  EXPECT_TRUE(e.isOk()) << e.status().message();
  return e.isOk() ? *e : GraphEstimate{};
}

/// The one kernel of `e`.
inline KernelEstimate only(const GraphEstimate& e) {
  EXPECT_EQ(e.kernels.size(), 1u);
  return e.kernels.empty() ? KernelEstimate{} : e.kernels.front().estimate;
}

}  // namespace cagr::pricingtest
