// The backend probes (backend_probes.h) as profile entries: per probe
// kernel a rate curve by work per call (bytes for streaming classes, FLOPs
// for gemm.batched) net of its dispatch overhead, and the fusion
// coefficient alpha fitted from the fused vs unfused elementwise chain.
#include <algorithm>
#include <cmath>
#include <map>

#include "hw/profiler_results.h"

namespace cagr::hw {
namespace {

bool flopClass(const std::string& cls) {
  return cls.rfind("gemm.", 0) == 0;
}

double work(const ProbePoint& p) {
  return flopClass(p.shapeClass) ? p.flops : p.bytes;
}

}  // namespace

/// One entry per (kernel, class) of the probe points; `how` opens the source.
KernelEfficiency probeEntry(const std::vector<const ProbePoint*>& pts, const std::string& how) {
  KernelEfficiency e;
  e.kernel = pts.front()->kernel;
  e.shapeClass = pts.front()->shapeClass;
  const bool flops = flopClass(e.shapeClass);
  // Overhead: the smallest call (a handful of rows: dispatch, not work).
  const ProbePoint* small = *std::min_element(
      pts.begin(), pts.end(), [](const ProbePoint* a, const ProbePoint* b) { return work(*a) < work(*b); });
  e.overheadS = small->seconds;
  std::vector<RatePoint> curve;
  std::string what;
  for (const ProbePoint* p : pts) {
    if (p != small) curve.push_back({work(*p), netRate(work(*p), p->seconds, e.overheadS)});
    what += fmt("%s%s: %.2f us", what.empty() ? "" : "; ", p->what.c_str(), p->seconds * 1e6);
  }
  e.curve = makeRateCurve(std::move(curve));
  const ProbePoint* big = *std::max_element(
      pts.begin(), pts.end(), [](const ProbePoint* a, const ProbePoint* b) { return work(*a) < work(*b); });
  const double bigRate = netRate(work(*big), big->seconds, e.overheadS);
  (flops ? e.flopsPerS : e.bytesPerS) = bigRate;
  if (flops && big->seconds > 0) e.bytesPerS = big->bytes / big->seconds;
  e.samples = static_cast<int>(pts.size());
  e.source = fmt("%s: %s; overhead_s: the smallest call; %s: the largest call, net of overhead_s; curve: (%s per "
                 "call, net %s/s), which the cost model reads instead of the class rate",
                 how.c_str(), what.c_str(), flops ? "flops_per_s" : "bytes_per_s", flops ? "FLOPs" : "bytes",
                 flops ? "FLOP" : "bytes");
  return e;
}

namespace {

/// The intermediates' traffic of one fusion probe that its fused kernel did
/// not save (bytes, at the unfused chain's own measured bandwidth): fused
/// time x that bandwidth - the traffic a perfect fusion still moves.
/// alpha of the probe = 1 - unsaved / internalBytes.
double unsavedBytes(const FusionProbe& f, double overhead) {
  const double unfusedWork = f.unfusedS - f.members * overhead;
  if (unfusedWork <= 0 || f.internalBytes <= 0) return NAN;
  const double bw = (f.externalBytes + f.internalBytes) / unfusedWork;
  return (f.fusedS - overhead) * bw - f.externalBytes;
}

void fillFusionAlpha(HardwareProfile& p, const BackendProbes& b) {
  const KernelEfficiency* elt = p.efficiency("own.eltwise", "eltwise.stream");
  const double overhead = elt != nullptr ? elt->overheadS : 0;
  double unsaved = 0, internal = 0;
  std::string what;
  for (const FusionProbe& f : b.fusion) {
    const double u = unsavedBytes(f, overhead);
    if (!std::isfinite(u)) continue;
    unsaved += u;
    internal += f.internalBytes;
    what += fmt("%s%s: unfused %.1f us (%d kernels), fused %.1f us -> alpha %.2f", what.empty() ? "" : "; ",
                f.what.c_str(), f.unfusedS * 1e6, f.members, f.fusedS * 1e6, 1 - u / f.internalBytes);
  }
  // Pooled over the sizes (weighted by traffic): large chains, where fusion
  // saves the most time, decide; small cache-resident ones barely move it.
  if (!(internal > 0)) return;
  p.traits.fuseAlpha = std::clamp(1 - unsaved / internal, 0.0, 2.0);
  const std::string defaults = "fuse_alpha/beta/gamma 1: defaults (not measured)";
  const size_t at = p.traits.source.find(defaults);
  if (at != std::string::npos)
    p.traits.source.replace(at, defaults.size(), "fuse_beta/gamma 1: defaults (not measured)");
  p.traits.source +=
      fmt("; fuse_alpha %.2f measured: CAGR's CPU backend ran one elementwise chain unfused and fused (rewrite "
          "engine `fuse`), alpha = share of the intermediates' traffic the fused kernel saved, both priced at the "
          "unfused chain's measured bandwidth, pooled over (weighted by the intermediates' traffic): %s; fuse_beta, "
          "fuse_gamma stay defaults (CPU groups keep "
          "reductions last, so no fused synchronisation to time; register pressure not probed)",
          p.traits.fuseAlpha, what.c_str());
}

}  // namespace

void fillBackendProbes(HardwareProfile& p, const ProfileResults& r) {
  std::map<std::pair<std::string, std::string>, std::vector<const ProbePoint*>> byEntry;
  for (const ProbePoint& pt : r.backend.points) {
    if (pt.seconds > 0) byEntry[{pt.kernel, pt.shapeClass}].push_back(&pt);
  }
  for (const auto& [key, pts] : byEntry) {
    KernelEfficiency e = probeEntry(
        pts, fmt("measured: CAGR's CPU backend running generated one-kernel plans (Executable::profile, median %s "
                 "per call, %d threads)",
                 usingThreadCpuTime() ? "CPU time of the calling thread" : "wall time", r.threads));
    auto same = std::find_if(p.efficiencies.begin(), p.efficiencies.end(), [&](const KernelEfficiency& x) {
      return x.kernel == e.kernel && x.shapeClass == e.shapeClass;
    });
    if (same == p.efficiencies.end()) {
      p.efficiencies.push_back(std::move(e));
      continue;
    }
    // The streaming loop's entry (own.eltwise): the backend's kernel replaces
    // it; its figure stays in the source.
    e.source += fmt("; replaces the profiler's own streaming loop (%.2f GB/s)", same->bytesPerS / 1e9);
    *same = std::move(e);
  }
  fillFusionAlpha(p, r.backend);
}

}  // namespace cagr::hw
