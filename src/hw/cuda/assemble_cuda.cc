// Turns the raw GPU micro-benchmark results into a measured HardwareProfile.
// Every number carries its source: "measured: <benchmark>" for what was
// timed or read from the device, "not measured: ..." for architecture facts.
#include <algorithm>
#include <cmath>
#include <limits>

#include "cost/kernel_class.h"
#include "hw/cuda/results_cuda.h"

namespace cagr::cuda {
namespace {

const char* const kGemmClasses[] = {"gemm.tiny", "gemm.small", "gemm.medium", "gemm.large", "gemm.skinny"};

/// The device-memory level's name by product; "DRAM" when unknown.
std::string memoryName(const std::string& device) {
  auto has = [&](const char* s) { return device.find(s) != std::string::npos; };
  if (has("H200") || has("B200") || has("GH200")) return "HBM3e";
  if (has("H100") || has("H800")) return "HBM3";
  if (has("A100") || has("A800")) return "HBM2e";
  if (has("V100")) return "HBM2";
  return "DRAM";
}

void fillIdentity(HardwareProfile& p, const CudaResults& r) {
  p.name = r.dev.profileName();
  p.kind = "gpu";
  p.vendor = "nvidia";
  p.provenance = "measured";
  p.measuredOn = r.dev.describe();
  p.date = isoNow();
  for (const auto& [name, version] : r.libraries) p.libraries[name] = version;
  p.parallelUnits = {static_cast<double>(r.dev.sms),
                     "measured: cudaDeviceProp.multiProcessorCount (SMs) on " + r.dev.name};
}

/// Fixed cost per call of a GEMM kernel: its fastest tiny-class shape
/// (nearly all launch and setup), else its fastest shape.
double gemmOverhead(const CudaResults& r, GemmKind k, std::string* from) {
  double best = std::numeric_limits<double>::infinity();
  for (bool tinyOnly : {true, false}) {
    for (const GemmRun& g : r.gemm) {
      if (g.kind != k || g.t.median <= 0 || (tinyOnly && gemmClassOf(g.dims) != "gemm.tiny")) continue;
      if (g.t.median < best) {
        best = g.t.median;
        *from = g.dims.label();
      }
    }
    if (std::isfinite(best)) return best;
  }
  return 0;
}

/// Rate curve (net of overhead) for a class entry of kernel `k`. The four size
/// classes (tiny..large) partition the non-skinny shapes by FLOPs, so each of
/// their entries carries ALL non-skinny shapes of the kernel: a call near a
/// class boundary interpolates towards the neighbouring class's shapes instead
/// of clamping. gemm.skinny (min dim <= 4) runs at rates unrelated to square
/// shapes of the same FLOPs, so it carries only skinny shapes.
///
/// A tensor-core kernel's size classes take only its aligned shapes (N and K
/// multiples of the matrix unit's alignment): misaligned ones run 2-4x
/// slower at the same FLOPs and go to their own gemm.misaligned entry
/// (fillMisaligned), from which the cost model reads the penalty. Skinny
/// shapes (mostly misaligned by nature) all stay in gemm.skinny.
bool inSizeCurves(const GemmRun& g, int alignElements) {
  return gemmClassOf(g.dims) == "gemm.skinny" || !misalignedFor(g.kind, g.dims, alignElements);
}

std::vector<RatePoint> gemmCurve(const CudaResults& r, GemmKind k, const char* cls, double overhead, int align) {
  const bool skinny = std::string(cls) == "gemm.skinny";
  std::vector<RatePoint> pts;
  for (const GemmRun& g : r.gemm) {
    if (g.kind != k || g.t.median <= 0 || (gemmClassOf(g.dims) == "gemm.skinny") != skinny) continue;
    if (!inSizeCurves(g, align)) continue;
    pts.push_back({g.dims.flops(), hw::netRate(g.dims.flops(), g.t.median, overhead)});
  }
  return makeRateCurve(std::move(pts));
}

void fillGemmClass(HardwareProfile& p, const CudaResults& r, GemmKind k, const char* cls, double overhead,
                   const std::string& overheadFrom, std::vector<double>& spreads) {
  const int align = p.matrixUnit.alignElements;
  std::vector<double> flops, bytes, classSpreads;
  std::string shapes;
  int samples = 0;
  for (const GemmRun& g : r.gemm) {
    if (g.kind != k || gemmClassOf(g.dims) != cls || g.t.median <= 0 || !inSizeCurves(g, align)) continue;
    flops.push_back(hw::netRate(g.dims.flops(), g.t.median, overhead));
    bytes.push_back(hw::netRate(g.dims.bytes(gemmElementBytes(k)), g.t.median, overhead));
    classSpreads.push_back(g.t.spread());
    spreads.push_back(g.t.spread());
    samples += g.t.samples;
    shapes += fmt("%s%s %.1f", shapes.empty() ? "" : ", ", g.dims.label().c_str(), g.flopsPerS() / 1e9);
  }
  if (flops.empty()) return;
  KernelEfficiency e;
  e.kernel = gemmKindName(k);
  e.shapeClass = cls;
  e.flopsPerS = hw::median(flops);
  e.bytesPerS = hw::median(bytes);
  e.overheadS = overhead;
  e.samples = samples;
  e.curve = gemmCurve(r, k, cls, overhead, align);
  e.source = fmt(
      "measured on %s: %s on %s shapes (GFLOP/s) %s; median of per-shape medians (CUDA events, per call inside "
      "CUDA-graph replays of back-to-back calls, as CAGR's CUDA backend runs plans), spread "
      "(p90-p10)/median %.1f%%; rates net of overhead_s; overhead_s: fastest tiny shape (%s); curve: net rate "
      "of every %s shape of this kernel (all classes), by FLOPs per call",
      r.dev.name.c_str(), e.kernel.c_str(), cls, shapes.c_str(), 100 * hw::median(classSpreads), overheadFrom.c_str(),
      std::string(cls) == "gemm.skinny" ? "skinny"
      : tensorCoreKind(k)               ? "aligned non-skinny (N, K multiples of the tensor-core alignment)"
                                        : "non-skinny");
  p.efficiencies.push_back(e);
}

/// Peak per dtype: the best per-shape median of the kernels of that dtype.
void fillPeaks(HardwareProfile& p, const CudaResults& r, ProfilerRunInfo* info) {
  for (const char* dtype : {"fp32", "tf32", "bf16"}) {
    const GemmRun* best = nullptr;
    std::string kernels;
    for (GemmKind k : allGemmKinds()) {
      if (std::string(gemmKindDtype(k)) != dtype) continue;
      kernels += std::string(kernels.empty() ? "" : ", ") + gemmKindName(k);
      for (const GemmRun& g : r.gemm)
        if (g.kind == k && (best == nullptr || g.flopsPerS() > best->flopsPerS())) best = &g;
    }
    if (best == nullptr || best->flopsPerS() <= 0) continue;
    p.peakFlops[dtype] = {
        best->flopsPerS(),
        fmt("measured on %s: best of %s per-shape median GEMM rates: %s %s (CUDA events)", r.dev.name.c_str(),
            kernels.c_str(), gemmKindName(best->kind), best->dims.label().c_str())};
  }
  if (info == nullptr) return;
  for (const GemmRun& g : r.gemm) {
    const std::string name = gemmKindName(g.kind);
    if (g.flopsPerS() > info->bestFlopsPerKernel[name]) {
      info->bestFlopsPerKernel[name] = g.flopsPerS();
      info->bestShapePerKernel[name] = g.dims.label();
    }
  }
}

/// A tensor-core kernel's misaligned non-skinny shapes as their own entry
/// (class kMisalignedGemmClass) with their own curve; the source lists each
/// shape's slow-down against the aligned curve at its FLOPs (what
/// misalignmentPenalty() reads off the two curves).
void fillMisaligned(HardwareProfile& p, const CudaResults& r, GemmKind k, double overhead,
                    std::vector<double>& spreads) {
  const KernelEfficiency* aligned = p.efficiency(gemmKindName(k), "gemm.medium");
  if (aligned == nullptr || aligned->curve.empty()) return;
  std::vector<RatePoint> pts;
  std::vector<double> rates, penalties;
  std::string shapes;
  int samples = 0;
  for (const GemmRun& g : r.gemm) {
    if (g.kind != k || g.t.median <= 0 || inSizeCurves(g, p.matrixUnit.alignElements)) continue;
    const double rate = hw::netRate(g.dims.flops(), g.t.median, overhead);
    pts.push_back({g.dims.flops(), rate});
    rates.push_back(rate);
    penalties.push_back(aligned->rateAt(g.dims.flops()) / rate);
    spreads.push_back(g.t.spread());
    samples += g.t.samples;
    shapes += fmt("%s%s %.1f (x%.2f)", shapes.empty() ? "" : ", ", g.dims.label().c_str(), g.flopsPerS() / 1e9,
                  penalties.back());
  }
  if (pts.empty()) return;
  KernelEfficiency e;
  e.kernel = gemmKindName(k);
  e.shapeClass = kMisalignedGemmClass;
  e.flopsPerS = hw::median(rates);
  e.overheadS = overhead;
  e.samples = samples;
  e.curve = makeRateCurve(std::move(pts));
  e.source =
      fmt("measured on %s: %s on shapes whose N or K is not a multiple of %d (GFLOP/s, slow-down vs the aligned "
          "curve at the same FLOPs) %s; median slow-down x%.2f; curve: net rate of these shapes by FLOPs per call "
          "(the cost model prices a misaligned call by aligned curve / this curve)",
          r.dev.name.c_str(), e.kernel.c_str(), matrixUnitAlignment(p.matrixUnit.alignElements, gemmKindDtype(k)),
          shapes.c_str(), hw::median(penalties));
  p.efficiencies.push_back(e);
}

void fillGemm(HardwareProfile& p, const CudaResults& r, std::vector<double>& spreads, ProfilerRunInfo* info) {
  for (GemmKind k : allGemmKinds()) {
    std::string from;
    const double overhead = gemmOverhead(r, k, &from);
    for (const char* cls : kGemmClasses) fillGemmClass(p, r, k, cls, overhead, from, spreads);
    if (tensorCoreKind(k)) fillMisaligned(p, r, k, overhead, spreads);
  }
  fillPeaks(p, r, info);
}

void fillMemoryLevels(HardwareProfile& p, const CudaResults& r, std::vector<double>& spreads) {
  MemoryLevel l2;
  l2.name = "L2";
  l2.sizeBytes = {static_cast<double>(r.dev.l2Bytes), "measured: cudaDeviceProp.l2CacheSize"};
  l2.bandwidth = {r.l2.bytesPerS(), fmt("measured: own.eltwise %s (half the L2, ld.global.cg loads), median of %d, "
                                        "spread %.1f%% (12 B/element counted)",
                                        r.l2.what.c_str(), r.l2.t.samples, 100 * r.l2.t.spread())};
  spreads.push_back(r.l2.t.spread());
  p.memory.push_back(l2);

  const bool kernelWins = r.stream.bytesPerS() >= r.copy.bytesPerS();
  const MemRun& best = kernelWins ? r.stream : r.copy;
  MemoryLevel dev;
  dev.name = memoryName(r.dev.name);
  dev.sizeBytes = {static_cast<double>(r.dev.globalMemBytes), "measured: cudaDeviceProp.totalGlobalMem"};
  dev.bandwidth = {best.bytesPerS(),
                   fmt("measured: best of own.eltwise %s = %.1f GB/s and %s = %.1f GB/s (bytes read + written / "
                       "time); this is the %s, median of %d, spread %.1f%%",
                       r.stream.what.c_str(), r.stream.bytesPerS() / 1e9, r.copy.what.c_str(), r.copy.bytesPerS() / 1e9,
                       kernelWins ? "kernel" : "copy", best.t.samples, 100 * best.t.spread())};
  spreads.push_back(r.stream.t.spread());
  spreads.push_back(r.copy.t.spread());
  p.memory.push_back(dev);
}

KernelEfficiency memEfficiency(const std::string& kernel, const std::string& cls, const std::vector<const MemRun*>& rs,
                               const CudaResults& r, std::vector<double>& spreads) {
  std::vector<double> bytes, flops;
  std::string what;
  KernelEfficiency e;
  e.kernel = kernel;
  e.shapeClass = cls;
  for (const MemRun* m : rs) {
    bytes.push_back(m->bytesPerS());
    if (m->flopsPerCall > 0 && m->t.median > 0) flops.push_back(m->flopsPerCall / m->t.median);
    e.samples += m->t.samples;
    spreads.push_back(m->t.spread());
    what += fmt("%s%s: %.1f GB/s", what.empty() ? "" : "; ", m->what.c_str(), m->bytesPerS() / 1e9);
  }
  e.bytesPerS = hw::median(bytes);
  e.flopsPerS = hw::median(flops);
  e.overheadS = r.launch.t.median;
  e.source =
      fmt("measured on %s: %s %s (bytes read + written / time, CUDA events); median over %zu config(s); "
          "overhead_s: empty-kernel launch, back to back",
          r.dev.name.c_str(), kernel.c_str(), what.c_str(), rs.size());
  return e;
}

void fillMemoryEfficiencies(HardwareProfile& p, const CudaResults& r, std::vector<double>& spreads) {
  for (bool zipf : {false, true}) {
    std::vector<const MemRun*> rs;
    for (const auto& [g, m] : r.gathers)
      if (g.zipf == zipf) rs.push_back(&m);
    if (rs.empty()) continue;
    p.efficiencies.push_back(memEfficiency("own.gather", zipf ? "gather.zipf" : "gather.uniform", rs, r, spreads));
    p.efficiencies.back().source += zipf ? "; ids Zipf(a=1.1), hot rows scattered" : "; ids uniform";
    p.efficiencies.back().source += "; bytes as cost_rules.cc counts an EmbeddingBag (rows + int32 ids + output)";
  }
  p.efficiencies.push_back(memEfficiency("own.eltwise", "eltwise.stream", {&r.stream}, r, spreads));
  p.efficiencies.push_back(memEfficiency("own.reduce", "reduce.rows", {&r.reduce}, r, spreads));

  KernelEfficiency g;
  g.kernel = "cuda.graph_node";
  g.shapeClass = "launch.graph";
  g.overheadS = r.graph.t.median;
  g.bytesPerS = r.stream.bytesPerS();
  g.samples = r.graph.t.samples;
  g.source = fmt(
      "measured on %s: overhead_s = per-node cost of replaying a %s (host wall time / nodes, median of "
      "%d, spread %.1f%%), vs %.2f us per plain launch; bytes_per_s: copied from own.eltwise in device "
      "memory (a graph node's kernel streams like a plain launch; not measured inside the graph)",
      r.dev.name.c_str(), r.graph.what.c_str(), r.graph.t.samples, 100 * r.graph.t.spread(), r.launch.t.median * 1e6);
  spreads.push_back(r.graph.t.spread());
  p.efficiencies.push_back(g);
}

void fillLaunch(HardwareProfile& p, const CudaResults& r, std::vector<double>& spreads) {
  p.launchLatencyS = {r.launch.t.median,
                      fmt("measured on %s: %s, host wall time per launch, median of %d, spread %.1f%%; one launch + "
                          "cudaStreamSynchronize round trip %.2f us; CUDA Graph replay %.2f us per node "
                          "(efficiency cuda.graph_node)",
                          r.dev.name.c_str(), r.launch.what.c_str(), r.launch.t.samples, 100 * r.launch.t.spread(),
                          r.launchSync.t.median * 1e6, r.graph.t.median * 1e6)};
  spreads.push_back(r.launch.t.spread());
  spreads.push_back(r.launchSync.t.spread());
}

/// Tensor-core shape by compute capability, as the built-in datasheet
/// profiles state it (not measured).
void fillMatrixUnit(HardwareProfile& p, const DeviceFacts& d) {
  MatrixUnit& mu = p.matrixUnit;
  const std::string cc = "sm_" + std::to_string(d.ccMajor) + std::to_string(d.ccMinor);
  if (d.ccMajor >= 9) {
    mu = {"tensor core", 8, 4, 16, 8, ""};
  } else if (d.ccMajor == 8 || (d.ccMajor == 7 && d.ccMinor >= 5)) {
    mu = {"tensor core", 8, 8, 4, 8, ""};
  } else if (d.ccMajor == 7) {
    mu = {"tensor core", 4, 4, 4, 8, ""};
  } else {
    return;
  }
  mu.source = "not measured: architecture table for compute capability " + cc +
              " (cudaDeviceProp), as the built-in datasheet profiles (h100/h200, a100, v100) give it; cuBLAS wants "
              "bf16/fp16 dims that are multiples of 8";
}

void fillTraits(HardwareProfile& p, const CudaResults& r, const std::vector<double>& spreads) {
  PlatformTraits& t = p.traits;
  t.warpWidth = r.dev.warpSize;
  t.registerFileBytesPerUnit = static_cast<double>(r.dev.regsPerSm) * 4;
  t.sharedMemBytesPerUnit = static_cast<double>(r.dev.sharedMemPerSm);
  t.spillRisk = 0.2;
  t.vectorWidthBits = 0;
  std::vector<double> uniform;
  for (const auto& [g, m] : r.gathers)
    if (!g.zipf) uniform.push_back(m.bytesPerS());
  const double gatherBw = hw::median(uniform);
  t.irregularGatherPenalty = gatherBw > 0 ? std::max(1.0, r.stream.bytesPerS() / gatherBw) : 1.0;
  t.runToRunVariance = hw::median(spreads);
  t.source =
      fmt("measured: warp_width (cudaDeviceProp.warpSize), register_file_bytes_per_unit "
          "(regsPerMultiprocessor %lld x 4 B), shared_mem_bytes_per_unit (sharedMemPerMultiprocessor); "
          "irregular_gather_penalty: own.eltwise device-memory stream %.1f GB/s / own.gather uniform %.1f "
          "GB/s; run_to_run_variance: median over %zu benchmarks of (p90-p10)/median; not measured: "
          "spill_risk 0.2 (as the datasheet profiles) and fuse_alpha/beta/gamma 1 (defaults)",
          static_cast<long long>(r.dev.regsPerSm), r.stream.bytesPerS() / 1e9, gatherBw / 1e9, spreads.size());
}

}  // namespace

StatusOr<HardwareProfile> assembleCudaProfile(const CudaResults& r, ProfilerRunInfo* info) {
  HardwareProfile p;
  std::vector<double> spreads;
  fillIdentity(p, r);
  fillMatrixUnit(p, r.dev);  // before the GEMMs: their curves split by its alignment
  fillGemm(p, r, spreads, info);
  if (p.peakFlops.count("fp32") == 0) return internalError("cagr-profile-cuda: no fp32 GEMM produced a result");
  fillMemoryLevels(p, r, spreads);
  fillMemoryEfficiencies(p, r, spreads);
  fillLaunch(p, r, spreads);
  fillTraits(p, r, spreads);
  p.notes =
      fmt("measured by cagr-profile-cuda (%s mode) in %.1f s on %s; every rate is the median of repeated "
          "CUDA-event-timed runs after warm-up; GEMM inputs uniform in [-1, 1], repeated on the same buffers "
          "(small operands stay in L2); memory buffer %s",
          r.quick ? "quick" : "full", r.seconds, r.dev.describe().c_str(),
          humanBytes(static_cast<double>(r.bufferBytes)).c_str());
  if (!r.gemmSkipped.empty()) {
    p.notes += "; skipped:";
    for (const std::string& s : r.gemmSkipped) p.notes += " " + s + ";";
  }
  if (info != nullptr) {
    info->seconds = r.seconds;
    info->threads = 0;
    info->dramCopyBytesPerS = r.copy.bytesPerS();
  }
  return p;
}

}  // namespace cagr::cuda
