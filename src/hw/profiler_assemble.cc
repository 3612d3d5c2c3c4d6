// Turns the raw micro-benchmark results into a measured HardwareProfile.
// Every number carries its source: "measured: <benchmark>" for what was
// timed or read from the machine, "ISA ..." / "default ..." for what was not.
#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <ctime>

#include "hw/profiler_results.h"

namespace cagr::hw {
namespace {



std::string vendorOf(const std::string& vendorId) {
  if (vendorId == "GenuineIntel") return "intel";
  if (vendorId == "AuthenticAMD") return "amd-cpu";
  return vendorId.empty() ? "unknown" : vendorId;
}

int lanes(const MachineInfo& m) {
  return m.vectorBits() / 32;
}

/// Theoretical fp32 FLOP/s from /proc/cpuinfo (never presented as measured).
double theoreticalPeak(const MachineInfo& m, std::string* how) {
  if (m.mhz <= 0) {
    *how = "theoretical peak unknown (/proc/cpuinfo has no cpu MHz)";
    return 0;
  }
  const bool fma = m.hasFlag("fma");
  const int perCycle = lanes(m) * 2 * 2;  // two vector pipes; FMA = 2 FLOP, else one add + one mul
  *how =
      fmt("theoretical (computed, not measured): %d cores x %.0f MHz (/proc/cpuinfo cpu MHz; boost clocks "
          "can exceed it) x %d fp32 FLOP/cycle (%d lanes x 2 %s pipes x 2, pipe count assumed)",
          m.onlineCpus, m.mhz, perCycle, lanes(m), fma ? "FMA" : "add/mul");
  return m.onlineCpus * m.mhz * 1e6 * perCycle;
}

double gemmBytes(const GemmShape& s) {
  return 4.0 * (s.m * s.k + s.k * s.n + s.m * s.n);
}

void fillIdentity(HardwareProfile& p, const ProfileResults& r) {
  const MachineInfo& m = r.machine;
  p.name = "host-cpu";
  p.kind = "cpu";
  p.vendor = vendorOf(m.vendorId);
  p.provenance = "measured";
  p.measuredOn = m.hostname + " (" + m.cpuModel + ")";
  p.date = isoNow();
  for (const auto& [name, version] : kernelLibraryVersions()) p.libraries[name] = version;
  p.parallelUnits = {static_cast<double>(m.onlineCpus),
                     fmt("measured: sysconf(_SC_NPROCESSORS_ONLN) online CPUs; benchmarks ran %d threads", r.threads)};
}

void fillGemm(HardwareProfile& p, const ProfileResults& r, std::vector<double>& spreads, ProfilerRunInfo* info) {
  static const char* kClasses[] = {"gemm.tiny", "gemm.small", "gemm.medium", "gemm.large", "gemm.skinny"};
  for (GemmKernel k : allGemmKernels()) {
    const std::string name = gemmKernelName(k);
    auto probe = r.probes.find(name);
    const double overhead = probe != r.probes.end() ? probe->second.median : 0;
    // Rate curves (net of overhead): every measured shape of this kernel. The
    // four size classes (tiny..large) partition the non-skinny shapes by FLOPs,
    // so each of their entries carries ALL non-skinny shapes: a call near a
    // class boundary interpolates towards the neighbouring class's shapes
    // instead of clamping. gemm.skinny (min dim <= 4) runs at rates unrelated
    // to square shapes of the same FLOPs, so it carries only skinny shapes.
    std::vector<RatePoint> squarePts, skinnyPts;
    for (const GemmResult& g : r.gemm) {
      if (g.kernel != k || g.t.median <= 0) continue;
      RatePoint pt{g.shape.flops(), netRate(g.shape.flops(), g.t.median, overhead)};
      (gemmShapeClass(g.shape) == "gemm.skinny" ? skinnyPts : squarePts).push_back(pt);
    }
    const std::vector<RatePoint> squareCurve = makeRateCurve(squarePts), skinnyCurve = makeRateCurve(skinnyPts);
    for (const char* cls : kClasses) {
      std::vector<double> flops, bytes, classSpreads;
      std::string shapes;
      int samples = 0;
      for (const GemmResult& g : r.gemm) {
        if (g.kernel != k || gemmShapeClass(g.shape) != cls || g.t.median <= 0) continue;
        flops.push_back(netRate(g.shape.flops(), g.t.median, overhead));
        bytes.push_back(netRate(gemmBytes(g.shape), g.t.median, overhead));
        classSpreads.push_back(g.t.spread());
        spreads.push_back(g.t.spread());
        samples += g.t.samples;
        shapes += fmt("%s%s %.2f", shapes.empty() ? "" : ", ", g.shape.label().c_str(), g.flopsPerS() / 1e9);
      }
      if (flops.empty()) continue;
      KernelEfficiency e;
      e.kernel = name;
      e.shapeClass = cls;
      e.flopsPerS = median(flops);
      e.bytesPerS = median(bytes);
      e.overheadS = overhead;
      e.samples = samples;
      const bool skinny = std::string(cls) == "gemm.skinny";
      e.curve = skinny ? skinnyCurve : squareCurve;
      e.source =
          fmt("measured: %s on %s shapes (MxKxN GFLOP/s) %s; median of per-shape medians, spread "
              "(p90-p10)/median %.1f%%, %d threads; rates net of overhead_s; overhead_s: median 1x1x1 call; "
              "curve: net rate of every %s shape of this kernel (all classes), by FLOPs per call",
              name.c_str(), cls, shapes.c_str(), 100 * median(classSpreads), r.threads,
              skinny ? "skinny" : "non-skinny");
      p.efficiencies.push_back(e);
    }
  }
  const GemmResult* best = nullptr;
  for (const GemmResult& g : r.gemm) {
    if (best == nullptr || g.flopsPerS() > best->flopsPerS()) best = &g;
    if (info != nullptr && g.flopsPerS() > info->bestFlopsPerKernel[gemmKernelName(g.kernel)]) {
      info->bestFlopsPerKernel[gemmKernelName(g.kernel)] = g.flopsPerS();
      info->bestShapePerKernel[gemmKernelName(g.kernel)] = g.shape.label();
    }
  }
  if (best == nullptr) return;
  std::string how;
  const double theory = theoreticalPeak(r.machine, &how);
  p.peakFlops["fp32"] = {
      best->flopsPerS(),
      fmt("measured: best per-shape median GEMM rate over openblas.sgemm, onednn.matmul, "
          "onednn.matmul_relu, own.gemm: %s %s (MxKxN), %d threads; %s = %.1f GFLOP/s",
          gemmKernelName(best->kernel), best->shape.label().c_str(), r.threads, how.c_str(), theory / 1e9)};
  if (info != nullptr) {
    info->theoreticalPeakFlops = theory;
    info->theoreticalPeakSource = how;
  }
}

void fillMemoryLevels(HardwareProfile& p, const ProfileResults& r, std::vector<double>& spreads) {
  for (const auto& [c, res] : r.caches) {
    MemoryLevel level;
    level.name = c.level == 1 ? "L1d" : "L" + std::to_string(c.level);
    const int instances = static_cast<int>(c.totalBytes / std::max<int64_t>(c.sizePerInstance, 1));
    level.sizeBytes = {static_cast<double>(c.totalBytes),
                       fmt("measured: %s/size = %lld KiB x %d instance(s)", c.sysfsPath.c_str(),
                           static_cast<long long>(c.sizePerInstance / 1024), instances)};
    level.bandwidth = {res.bytesPerS(), fmt("measured: own.eltwise %s (half this level), %d threads, median of "
                                            "%d, spread %.1f%%",
                                            res.what.c_str(), r.threads, res.t.samples, 100 * res.t.spread())};
    spreads.push_back(res.t.spread());
    p.memory.push_back(level);
  }
  MemoryLevel dram;
  dram.name = "DRAM";
  if (r.machine.memTotalBytes > 0) {
    dram.sizeBytes = {static_cast<double>(r.machine.memTotalBytes), "measured: /proc/meminfo MemTotal"};
  } else {
    dram.sizeBytes = {static_cast<double>(r.bufferBytes),
                      "measured: lower bound, the benchmark buffer (/proc/meminfo unreadable)"};
  }
  dram.bandwidth = {
      r.triad.bytesPerS(),
      fmt("measured: own.triad %s, %d threads, median of %d, spread %.1f%% (12 B/element counted, "
          "write-allocate not); STREAM copy %.2f GB/s",
          r.triad.what.c_str(), r.threads, r.triad.t.samples, 100 * r.triad.t.spread(), r.copy.bytesPerS() / 1e9)};
  spreads.push_back(r.triad.t.spread());
  spreads.push_back(r.copy.t.spread());
  p.memory.push_back(dram);
}

KernelEfficiency memEfficiency(const std::string& kernel, const std::string& cls,
                               const std::vector<const MemResult*>& rs, const ProfileResults& r,
                               std::vector<double>& spreads) {
  std::vector<double> bytes, flops;
  std::string what;
  KernelEfficiency e;
  e.kernel = kernel;
  e.shapeClass = cls;
  for (const MemResult* m : rs) {
    bytes.push_back(m->bytesPerS());
    if (m->flopsPerCall > 0) flops.push_back(m->flopsPerCall / m->t.median);
    e.samples += m->t.samples;
    spreads.push_back(m->t.spread());
    what += fmt("%s%s: %.2f GB/s", what.empty() ? "" : "; ", m->what.c_str(), m->bytesPerS() / 1e9);
  }
  e.bytesPerS = median(bytes);
  e.flopsPerS = median(flops);
  e.overheadS = r.ompRegion.median;
  e.source =
      fmt("measured: %s %s (bytes of rows/elements read and written / time), %d threads; median over "
          "%zu config(s); overhead_s: empty OpenMP parallel region",
          kernel.c_str(), what.c_str(), r.threads, rs.size());
  return e;
}

void fillMemoryEfficiencies(HardwareProfile& p, const ProfileResults& r, std::vector<double>& spreads) {
  for (bool zipf : {false, true}) {
    std::vector<const MemResult*> rs;
    for (const auto& [c, m] : r.gathers)
      if (c.zipf == zipf) rs.push_back(&m);
    if (!rs.empty()) {
      p.efficiencies.push_back(memEfficiency("own.gather", zipf ? "gather.zipf" : "gather.uniform", rs, r, spreads));
      p.efficiencies.back().source += zipf ? "; ids Zipf(a=1.1), hot rows scattered" : "; ids uniform";
    }
  }
  p.efficiencies.push_back(memEfficiency("own.eltwise", "eltwise.stream", {&r.stream}, r, spreads));
  p.efficiencies.push_back(memEfficiency("own.reduce", "reduce.rows", {&r.reduce}, r, spreads));
}

void fillLaunch(HardwareProfile& p, const ProfileResults& r, std::vector<double>& spreads) {
  auto at = [&](const char* k) {
    auto it = r.probes.find(k);
    return it != r.probes.end() ? it->second.median : 0.0;
  };
  const double dnnl = at("onednn.matmul");
  p.launchLatencyS = {
      dnnl > 0 ? dnnl : r.ompRegion.median,
      fmt("measured: %s, median; also empty OpenMP parallel region %.2f us, cblas_sgemm 1x1x1 "
          "%.2f us, own.gemm 1x1x1 %.2f us (%d threads)",
          dnnl > 0 ? "oneDNN matmul 1x1x1 execute+wait, primitive reused" : "empty OpenMP parallel region",
          r.ompRegion.median * 1e6, at("openblas.sgemm") * 1e6, at("own.gemm") * 1e6, r.threads)};
  spreads.push_back(r.ompRegion.spread());
  for (const auto& [k, t] : r.probes) spreads.push_back(t.spread());
}

void fillTraits(HardwareProfile& p, const ProfileResults& r, const std::vector<double>& spreads) {
  const MachineInfo& m = r.machine;
  const int bits = m.vectorBits();
  p.matrixUnit.name = bits == 512 ? "AVX-512 FMA" : (m.hasFlag("fma") ? "AVX2 FMA" : "SIMD");
  p.matrixUnit.n = lanes(m);
  p.matrixUnit.alignElements = lanes(m);
  p.matrixUnit.source =
      fmt("ISA from /proc/cpuinfo flags (not measured): %d-bit vectors, %d fp32 lanes per "
          "FMA; pad to %d elements",
          bits, lanes(m), lanes(m));
  PlatformTraits& t = p.traits;
  t.warpWidth = lanes(m);
  t.vectorWidthBits = bits;
  t.registerFileBytesPerUnit = bits == 512 ? 32 * 64 : 16 * 32;
  for (const CacheLevel& c : m.caches)
    if (c.level == 1) t.sharedMemBytesPerUnit = static_cast<double>(c.sizePerInstance);
  t.spillRisk = 0.1;
  std::vector<double> uniform;
  for (const auto& [c, res] : r.gathers)
    if (!c.zipf) uniform.push_back(res.bytesPerS());
  const double gatherBw = median(uniform);
  t.irregularGatherPenalty = gatherBw > 0 ? std::max(1.0, r.stream.bytesPerS() / gatherBw) : 1.0;
  t.runToRunVariance = median(spreads);
  t.source =
      fmt("warp_width, vector_width_bits, register_file_bytes_per_unit: ISA from /proc/cpuinfo flags (not "
          "measured); shared_mem_bytes_per_unit: L1d per core from sysfs; irregular_gather_penalty "
          "measured: own.eltwise DRAM stream %.2f GB/s / own.gather uniform %.2f GB/s; run_to_run_variance "
          "measured: median over %zu benchmarks of (p90-p10)/median; spill_risk 0.1 and "
          "fuse_alpha/beta/gamma 1: defaults (not measured)",
          r.stream.bytesPerS() / 1e9, gatherBw / 1e9, spreads.size());
}

}  // namespace

StatusOr<HardwareProfile> assembleProfile(const ProfileResults& r, ProfilerRunInfo* info) {
  HardwareProfile p;
  std::vector<double> spreads;
  fillIdentity(p, r);
  fillGemm(p, r, spreads, info);
  if (p.peakFlops.empty()) return internalError("cagr profile: no GEMM benchmark produced a result");
  fillMemoryLevels(p, r, spreads);
  fillMemoryEfficiencies(p, r, spreads);
  fillLaunch(p, r, spreads);
  fillTraits(p, r, spreads);
  fillBackendProbes(p, r);
  std::string how;
  const double theory = theoreticalPeak(r.machine, &how);
  p.notes =
      fmt("measured by cagr profile --target cpu (%s mode) in %.1f s on %d threads; load average %.2f at "
          "start, %.2f at end (other processes may share these cores: every rate is a median of repeated "
          "runs); timings: %s; fp32 %s = %.1f GFLOP/s",
          r.quick ? "quick" : "full", r.seconds, r.threads, r.loadAtStart, r.loadAtEnd,
          usingThreadCpuTime() ? "CPU time of the one benchmark thread (robust to other load)" : "wall time",
          how.c_str(), theory / 1e9);
  if (info != nullptr) {
    info->seconds = r.seconds;
    info->threads = r.threads;
    info->dramCopyBytesPerS = r.copy.bytesPerS();
  }
  return p;
}

}  // namespace cagr::hw
