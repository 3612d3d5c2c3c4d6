// `cagr-profile-cuda --self-test`: checks the profile fit on synthetic GEMM
// timings, without a GPU (CI has none): tensor-core shapes with a
// misaligned N or K are made 3x slower than aligned ones of the same FLOPs,
// and the assembled profile must keep them out of the size-class curves and
// price them through its gemm.misaligned entries at about 3x.
#include <cmath>

#include "cost/kernel_class.h"
#include "hw/cuda/results_cuda.h"

namespace cagr::cuda {
namespace {

constexpr double kSlowdown = 3.0;

hw::Timing fixedTiming(double seconds) {
  hw::Timing t;
  t.median = t.p10 = t.p90 = seconds;
  t.samples = 5;
  return t;
}

/// An H200-like device whose GEMMs take 5 us + FLOPs / (1e14 * f / (f + 1e8)),
/// tensor-core kernels kSlowdown times slower at misaligned non-skinny shapes.
CudaResults syntheticRun() {
  CudaResults r;
  r.dev.name = "synthetic H200";
  r.dev.ccMajor = 9;
  r.dev.sms = 132;
  r.dev.l2Bytes = int64_t{60} << 20;
  r.dev.globalMemBytes = int64_t{141} << 30;
  for (GemmKind k : allGemmKinds()) {
    for (const GemmDims& d : tensorCoreKind(k) ? allProfileGemmShapes(false) : profileGemmShapes(false)) {
      const double f = d.flops(), work = f / (1e14 * f / (f + 1e8));
      const bool slow = misalignedFor(k, d, 8) && gemmClassOf(d) != "gemm.skinny";
      r.gemm.push_back({k, d, fixedTiming(5e-6 + work * (slow ? kSlowdown : 1.0))});
    }
  }
  for (MemRun* m : {&r.stream, &r.l2, &r.copy, &r.reduce, &r.launch, &r.launchSync, &r.graph}) {
    m->t = fixedTiming(1e-5);
    m->bytesPerCall = 1e7;
    m->what = "synthetic";
  }
  return r;
}

}  // namespace

Status assemblySelfTest() {
  CAGR_ASSIGN_OR_RETURN(HardwareProfile p, assembleCudaProfile(syntheticRun(), nullptr));
  // Held-out-like shapes: misaligned N or K, from small to large.
  const std::vector<GemmDims> probes = {{4096, 367, 512}, {8192, 1024, 479}, {1024, 4093, 1024}, {3072, 1536, 765}};
  for (GemmKind k : allGemmKinds()) {
    const std::string kernel = gemmKindName(k), precision = gemmKindDtype(k);
    const KernelEfficiency* mis = p.efficiency(kernel, kMisalignedGemmClass);
    const bool has = mis != nullptr && mis->shapeClass == kMisalignedGemmClass && !mis->curve.empty();
    if (has != tensorCoreKind(k)) {
      return internalError("self-test: " + kernel + (has ? " has" : " lacks") + " a gemm.misaligned entry");
    }
    for (const GemmDims& d : probes) {
      const double penalty = misalignmentPenalty(p, precision, kernel, gemmClassOf(d), static_cast<double>(d.n),
                                                 static_cast<double>(d.k), d.flops());
      const double want = tensorCoreKind(k) ? kSlowdown : 1.0;
      if (std::fabs(penalty - want) > 0.25 * want) {
        return internalError(fmt("self-test: %s %s: penalty %.2f, the synthetic timings say %.1f", kernel.c_str(),
                                 d.label().c_str(), penalty, want));
      }
    }
  }
  return Status::ok();
}

}  // namespace cagr::cuda
