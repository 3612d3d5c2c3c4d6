// RooflineCostModel: T = max(FLOPs / FLOPSeff(k,H), Bytes / BWeff(k,H)) + T_launch
// with FLOPSeff / BWeff from the profile's efficiency table (measured where
// `cagr profile` ran, datasheet fractions elsewhere; a GEMM entry with a rate
// curve gives FLOPSeff at the call's own FLOP count). All output is modelled.
#include <algorithm>
#include <cmath>

#include "cagr/cost.h"
#include "cost/kernel_class.h"

namespace cagr {

const char* boundName(Bound b) {
  switch (b) {
    case Bound::kCompute: return "compute";
    case Bound::kMemory: return "memory";
    case Bound::kLaunch: return "launch";
    case Bound::kFree: return "free";
  }
  return "?";
}

RooflineCostModel::RooflineCostModel(HardwareProfile hw) : hw_(std::move(hw)) {}

std::pair<std::string, std::string> RooflineCostModel::kernelClass(const Graph& g, const Node& n,
                                                                   const NodeStats& stats) const {
  return classifyKernel(hw_, g, n, stats);
}

KernelEstimate RooflineCostModel::price(const std::string& kernel, const std::string& shapeClass,
                                        const OpCounts& c) const {
  KernelEstimate e;
  e.kernel = kernel;
  e.shapeClass = shapeClass;
  if (kernel == "view") return e;  // metadata only: no kernel, no launch
  Efficiency eff = effectiveRates(hw_, kernel, shapeClass, c.flops);
  double bytes = c.bytesRead + c.bytesWritten;
  // A streaming kernel runs at its measured byte curve, or at the bandwidth
  // of the cache level that holds its working set (gathers and GEMMs keep
  // their measured class rates: their reuse is already in them).
  eff.bytesPerS = streamingBandwidth(hw_, kernel, shapeClass, bytes, eff.bytesPerS);
  e.computeS = eff.flopsPerS > 0 ? c.flops / eff.flopsPerS : 0;
  e.memoryS = eff.bytesPerS > 0 ? bytes / eff.bytesPerS : 0;
  e.launchS = eff.overheadS;
  e.seconds = std::max(e.computeS, e.memoryS) + e.launchS;
  if (e.launchS >= std::max(e.computeS, e.memoryS)) {
    e.bound = Bound::kLaunch;
  } else {
    e.bound = e.computeS >= e.memoryS ? Bound::kCompute : Bound::kMemory;
  }
  return e;
}

KernelEstimate RooflineCostModel::kernel(const Graph& g, const Node& n, const NodeStats& stats) const {
  auto [kernelName, shapeClass] = kernelClass(g, n, stats);
  return price(kernelName, shapeClass, stats.counts);
}

FusedGroupEstimate RooflineCostModel::fusedGroup(const Graph& g, const GraphStats& stats,
                                                 const std::vector<NodeId>& group) const {
  FusedGroupEstimate f;
  if (group.empty()) return f;
  std::vector<char> member(g.nodes().size(), 0);
  for (NodeId id : group) member[static_cast<size_t>(id)] = 1;
  OpCounts sum;
  NodeId dominant = group.front();
  for (NodeId id : group) {
    const NodeStats& s = stats.nodes[static_cast<size_t>(id)];
    f.unfusedS += kernel(g, g.node(id), s).seconds;
    sum.flops += s.counts.flops;
    sum.bytesRead += s.counts.bytesRead;
    sum.bytesWritten += s.counts.bytesWritten;
    if (s.counts.flops > stats.nodes[static_cast<size_t>(dominant)].counts.flops) dominant = id;
  }
  double internalBytes = internalTraffic(g, stats, member);
  sum.bytesRead = std::max(0.0, sum.bytesRead - internalBytes);
  sum.bytesWritten = std::max(0.0, sum.bytesWritten - internalBytes);
  auto [kernelName, shapeClass] = kernelClass(g, g.node(dominant), stats.nodes[static_cast<size_t>(dominant)]);
  f.fused = price(kernelName == "view" ? "own.eltwise" : kernelName, shapeClass, sum);
  Efficiency eff = effectiveRates(hw_, f.fused.kernel, f.fused.shapeClass);
  f.savedMemoryS = eff.bytesPerS > 0 ? 2 * internalBytes / eff.bytesPerS : 0;
  f.savedLaunchS = std::max(0.0, f.unfusedS - f.fused.seconds - f.savedMemoryS);
  const PlatformTraits& t = hw_.traits;
  // Synchronisation added by fusing across a reduction, and register pressure
  // of long groups (spill risk is high on 64-wide AMD waves).
  double sync = reductionsInside(g, group) * eff.overheadS;
  double regPressure = t.spillRisk * std::max<double>(0, static_cast<double>(group.size()) - 2) * f.fused.seconds * 0.1;
  f.benefit = t.fuseAlpha * f.savedMemoryS + f.savedLaunchS - t.fuseBeta * sync - t.fuseGamma * regPressure;
  return f;
}

}  // namespace cagr
