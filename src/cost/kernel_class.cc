// Maps HIR nodes to (kernel implementation, shape class) and looks up their
// effective rates in the profile.
#include "cost/kernel_class.h"

#include "ir/shape_util.h"
#include "lower/generated_gemm.h"

#include <algorithm>
#include <cmath>

namespace cagr {
namespace {

double numel(const std::vector<int64_t>& s) { return numelOf(s); }

bool isView(OpKind op) {
  switch (op) {
    case OpKind::kReshape:
    case OpKind::kFlatten:
    case OpKind::kSqueeze:
    case OpKind::kUnsqueeze:
    case OpKind::kIdentity: return true;
    default: return false;
  }
}

std::string defaultGemmKernel(const HardwareProfile& hw) {
  if (hw.kind == "tpu") return "xla.dot";
  if (hw.kind == "cpu") return "onednn.matmul";
  return hw.vendor == "amd" ? "rocblas.sgemm" : "cublas.sgemm";
}


}  // namespace

std::string fastestKernel(const HardwareProfile& hw, const std::string& shapeClass, const std::string& precision,
                          const std::string& fallback) {
  const KernelEfficiency* best = nullptr;
  for (const auto& e : hw.efficiencies) {
    if (e.shapeClass != shapeClass || kernelPrecision(e.kernel) != precision) continue;
    double rate = e.flopsPerS > 0 ? e.flopsPerS : e.bytesPerS;
    double bestRate = best == nullptr ? -1 : (best->flopsPerS > 0 ? best->flopsPerS : best->bytesPerS);
    if (rate > bestRate) best = &e;
  }
  return best != nullptr ? best->kernel : fallback;
}

namespace {

// The fastest fp32 kernel (HIR is fp32 until a plan sets a precision).
std::string bestKernelFor(const HardwareProfile& hw, const std::string& shapeClass, const std::string& fallback) {
  return fastestKernel(hw, shapeClass, "fp32", fallback);
}

bool hasClass(const HardwareProfile& hw, const std::string& shapeClass) {
  return std::any_of(hw.efficiencies.begin(), hw.efficiencies.end(),
                     [&](const KernelEfficiency& e) { return e.shapeClass == shapeClass; });
}

bool isMovement(OpKind op) {
  switch (op) {
    case OpKind::kTranspose:
    case OpKind::kConcat:
    case OpKind::kSlice:
    case OpKind::kExpand:
    case OpKind::kSplit: return true;
    default: return false;
  }
}

// A Transpose that changes the innermost axis: strided reads or writes of
// single elements, far slower than moving whole rows.
bool movesLastAxis(const Node& n) {
  if (n.op != OpKind::kTranspose || !n.attrs.has("perm")) return false;
  const std::vector<int64_t>& perm = n.attrs.getInts("perm");
  return !perm.empty() && perm.back() != static_cast<int64_t>(perm.size()) - 1;
}

// A Gather / GatherND whose data has the batch dim: picking columns or
// fields out of an activation (e.g. one id column), a strided copy, not a
// table lookup.
bool selectsFromActivation(const Graph& g, const Node& n) {
  if ((n.op != OpKind::kGather && n.op != OpKind::kGatherND) || n.inputs.empty()) return false;
  const auto& dims = g.type(n.inputs[0]).dims;
  return std::any_of(dims.begin(), dims.end(), [](int64_t d) { return isSymbolic(d); });
}

// A lookup whose table (the largest operand without the batch dim) fits in
// the last cache level: its rows come from cache, not device memory.
bool tableFitsInCache(const HardwareProfile& hw, const Graph& g, const Node& n) {
  if (hw.memory.size() < 2) return false;
  double table = 0;
  for (ValueId v : n.inputs) {
    if (v == kNoValue) continue;
    const TensorType& t = g.type(v);
    if (std::any_of(t.dims.begin(), t.dims.end(), [](int64_t d) { return isSymbolic(d); })) continue;
    table = std::max(table, numel(t.dims) * static_cast<double>(dtypeSize(t.dtype)));
  }
  return table > 0 && table <= hw.memory[hw.memory.size() - 2].sizeBytes.value;
}

// A MatMul of two activations with batch dims (attention scores): many
// small products, which a batched kernel runs far below one large GEMM of
// the same FLOPs.
bool isBatchedProduct(const Graph& g, const Node& n, const NodeStats& s) {
  if (n.op != OpKind::kMatMul || n.inputs.size() < 2 || s.outShapes[0].size() < 3) return false;
  return !g.isConstant(n.inputs[0]) && !g.isConstant(n.inputs[1]) && g.type(n.inputs[1]).rank() >= 3;
}

// M, N, K of the GEMM a node performs (batched GEMMs fold the batch into M).
void gemmDims(const Node& n, const NodeStats& s, double& m, double& nn, double& k) {
  const auto& out = s.outShapes[0];
  double total = numel(out);
  nn = out.empty() ? 1 : static_cast<double>(out.back());
  m = nn > 0 ? total / nn : 0;
  if (n.op == OpKind::kConv1x1 || n.op == OpKind::kCIN) {
    nn = static_cast<double>(out[1]);
    m = nn > 0 ? total / nn : 0;
  }
  k = total > 0 ? s.counts.flops / (2 * total) : 0;
}

}  // namespace

std::string kernelPrecision(const std::string& kernel) {
  for (const char* p : {"bf16", "fp16", "tf32", "int8", "fp8"}) {
    if (kernel.find(p) != std::string::npos) return p;
  }
  return "fp32";
}

int matrixUnitAlignment(int alignElements, const std::string& precision) {
  if (precision == "fp32") return 1;
  int align = std::max(1, alignElements);
  return precision == "tf32" ? std::max(1, align / 2) : align;
}

bool misalignedGemm(int alignment, double n, double k) {
  auto off = [alignment](double d) { return static_cast<int64_t>(d) % std::max(1, alignment) != 0; };
  return off(n) || off(k);
}

double misalignmentPenalty(const HardwareProfile& hw, const std::string& precision, const std::string& kernel,
                           const std::string& shapeClass, double n, double k, double flops) {
  if (precision == "fp32" || hw.kind != "gpu") return 1;
  if (!misalignedGemm(matrixUnitAlignment(hw.matrixUnit.alignElements, precision), n, k)) return 1;
  const KernelEfficiency* slow = hw.efficiency(kernel, kMisalignedGemmClass);
  if (slow == nullptr || slow->shapeClass != kMisalignedGemmClass || slow->curve.empty()) return 2.0;
  if (shapeClass == "gemm.skinny") return 1;  // its own curve was measured on (mostly misaligned) skinny shapes
  const KernelEfficiency* fast = hw.efficiency(kernel, shapeClass);
  if (fast == nullptr || fast->shapeClass != shapeClass || flops <= 0) return 2.0;
  double slowRate = slow->rateAt(flops), fastRate = fast->rateAt(flops);
  return slowRate > 0 ? std::max(1.0, fastRate / slowRate) : 2.0;
}

std::string gemmShapeClass(double m, double n, double k) {
  double flops = 2 * m * n * k;
  if (std::min({m, n, k}) <= 4) return "gemm.skinny";
  if (flops < 2.0 * 64 * 64 * 64) return "gemm.tiny";
  if (flops < 2.0 * 256 * 256 * 512) return "gemm.small";
  if (flops < 2.0 * 2048 * 1024 * 1024) return "gemm.medium";
  return "gemm.large";
}

namespace {

bool hasEntry(const HardwareProfile& hw, const std::string& kernel, const std::string& shapeClass) {
  const KernelEfficiency* e = hw.efficiency(kernel, shapeClass);
  return e != nullptr && e->shapeClass == shapeClass;
}

bool isLookup(OpKind op) {
  return op == OpKind::kEmbeddingBag || op == OpKind::kEmbeddingBags || op == OpKind::kGather ||
         op == OpKind::kGatherND;
}

// A CSR SpMM whose constant row_ptr has a longest row over 8x the mean
// (and over 64 entries): NGCF's user-item graph (longest row ~31x the mean).
bool skewedCsr(const Graph& g, const Node& n) {
  const Tensor* rp = n.inputs.empty() ? nullptr : g.constant(n.inputs[0]);
  if (rp == nullptr || rp->numel() < 2) return false;
  int64_t rows = rp->numel() - 1, longest = 0;
  for (int64_t r = 0; r < rows; ++r) longest = std::max(longest, rp->getI64(r + 1) - rp->getI64(r));
  double mean = static_cast<double>(rp->getI64(rows) - rp->getI64(0)) / static_cast<double>(rows);
  return longest > 64 && static_cast<double>(longest) > 8 * mean;
}

// A CSR SpMM's own kernel on either backend (own.spmm on the CPU,
// nvrtc.spmm on CUDA; backend probes time both on uniform and skewed rows):
// its rows' class, then the uniform one. Bytes: row_ptr, col_idx, values, the
// gathered dense rows and the output (the op table's count).
std::vector<std::pair<const char*, std::string>> spmmTries(const char* kernel, const Graph& g, const Node& n) {
  return {{kernel, skewedCsr(g, n) ? "spmm.skewed" : "spmm.csr"}, {kernel, "spmm.csr"}};
}

// The first of `tries` the profile has an entry for; else `fallback`.
std::pair<std::string, std::string> firstProbed(const HardwareProfile& hw,
                                                const std::vector<std::pair<const char*, std::string>>& tries,
                                                std::pair<std::string, std::string> fallback) {
  for (const auto& [kernel, cls] : tries) {
    if (hasEntry(hw, kernel, cls)) return {kernel, cls};
  }
  return fallback;
}

// The kernel CAGR's CUDA backend generates for node `n` priced as (kernel,
// cls) by default, and the class its backend probe measured it in, when the
// profile has that entry (cagr profile --target cuda); else (kernel, cls).
// Profiles without nvrtc.* entries (CPU, datasheets, cagr-profile-cuda
// alone) keep the default.
std::pair<std::string, std::string> generatedOnCuda(const HardwareProfile& hw, const Graph& g, const Node& n,
                                                    std::pair<std::string, std::string> kc) {
  if (kc.first == "view") return kc;
  std::vector<std::pair<const char*, std::string>> tries;
  switch (n.op) {
    case OpKind::kCIN: tries = {{"nvrtc.cin", "gemm.cin"}}; break;
    case OpKind::kInteraction: tries = {{"nvrtc.interaction", "gemm.interaction"}}; break;
    case OpKind::kFM: tries = {{"nvrtc.fm", "reduce.fm"}}; break;
    case OpKind::kSpMM: tries = spmmTries("nvrtc.spmm", g, n); break;  // backends/cuda/codegen_spmm.cc
    case OpKind::kGemm:
    case OpKind::kMatMul:
      // CAGR's CUDA backend calls cuBLASLt for a GEMM no plan gave a kernel
      // (src/backends/cuda/cuda_program.cc): priced by its entry, not by the
      // class's fastest (on a backend-probed profile often nvrtc.gemm_small,
      // which runs only where a plan asks for it); cuBLAS where the profile
      // has no cuBLASLt entry of the class.
      if (graphStepFloor(hw) > 0 && kc.first != "cublaslt.matmul") {
        tries = {{"cublaslt.matmul", kc.second}, {"cublas.sgemm", kc.second}};
      }
      break;
    case OpKind::kReduceSum:
    case OpKind::kReduceMean:
    case OpKind::kReduceMax: tries = {{"nvrtc.reduce", kc.second}}; break;
    case OpKind::kSoftmax:
    case OpKind::kLayerNorm:
      // Row reductions the backend runs on its reduce kernel
      // (backends/cuda/codegen_reduce.cc), not an elementwise stream; its
      // softmax probe where the profile has one (several passes a row).
      tries = {{"nvrtc.reduce", "softmax.rows"}, {"nvrtc.reduce", "reduce.rows"}};
      break;
    default:
      if (kc.second.rfind("movement.", 0) == 0) {
        tries = {{"nvrtc.movement", kc.second}};
      } else if (isLookup(n.op)) {
        // Table-batched lookups take the lookup classes here (the streaming
        // class elsewhere); the CUDA bench's synthesized ids are uniform, so
        // a zipf class falls back to the uniform probe.
        std::string cls = kc.second;
        if (n.op == OpKind::kEmbeddingBags) cls = tableFitsInCache(hw, g, n) ? "gather.cached" : "gather.zipf";
        // Many tables in one kernel: the probe of 26 / 52 tables (its curve
        // over bytes = tables x rows), not the one-table one.
        // Tables of unequal widths (DeepFM / Wide&Deep's 16-wide and 1-wide)
        // drop the kernel to scalar loads: their own probe, else the equal one.
        if (n.op == OpKind::kEmbeddingBags && n.attrs.getInt("num_tables", 1) > 1 && cls == "gather.cached") {
          bool mixed = false;
          for (int64_t t = 1; t < n.attrs.getInt("num_tables", 1) && t < static_cast<int64_t>(n.inputs.size()); ++t) {
            mixed = mixed || g.type(n.inputs[static_cast<size_t>(t)]).dims.back() != g.type(n.inputs[0]).dims.back();
          }
          if (mixed) tries.push_back({"nvrtc.embedding", "gather.tables_mixed"});
          tries.push_back({"nvrtc.embedding", "gather.tables"});
        }
        tries.push_back({"nvrtc.embedding", cls});
        if (cls == "gather.zipf") tries.push_back({"nvrtc.embedding", "gather.uniform"});
      } else if (kc.second == "eltwise.stream") {
        tries = {{"nvrtc.eltwise", kc.second}};
      }
  }
  return firstProbed(hw, tries, kc);
}

std::pair<std::string, std::string> classifyDefault(const HardwareProfile& hw, const Graph& g, const Node& n,
                                                    const NodeStats& stats);

}  // namespace

std::pair<std::string, std::string> classifyKernel(const HardwareProfile& hw, const Graph& g, const Node& n,
                                                   const NodeStats& stats) {
  return generatedOnCuda(hw, g, n, classifyDefault(hw, g, n, stats));
}

namespace {

std::pair<std::string, std::string> classifyDefault(const HardwareProfile& hw, const Graph& g, const Node& n,
                                                    const NodeStats& stats) {
  if (isView(n.op)) return {"view", ""};
  switch (n.op) {
    case OpKind::kGemm:
    case OpKind::kMatMul:
    case OpKind::kConv1x1:
    case OpKind::kCIN:
    case OpKind::kInteraction:
    case OpKind::kEinsum: {
      double m, nn, k;
      gemmDims(n, stats, m, nn, k);
      if (k <= 1.0) break;  // an einsum without contraction is elementwise
      std::string cls =
          isBatchedProduct(g, n, stats) && hasClass(hw, "gemm.batched") ? "gemm.batched" : gemmShapeClass(m, nn, k);
      return {bestKernelFor(hw, cls, defaultGemmKernel(hw)), cls};
    }
    case OpKind::kEmbeddingBag:
    case OpKind::kGather:
    case OpKind::kGatherND:
    case OpKind::kSpMM: {
      // The CPU backend's own SpMM (backends/cpu/spmm_step.cc) where the
      // profile probed it; else priced like a lookup.
      if (n.op == OpKind::kSpMM) {
        auto kc = firstProbed(hw, spmmTries("own.spmm", g, n), {"", ""});
        if (!kc.first.empty()) return kc;
      }
      if (selectsFromActivation(g, n) && hasClass(hw, "movement.strided")) {
        return {bestKernelFor(hw, "movement.strided", "own.eltwise"), "movement.strided"};
      }
      if (tableFitsInCache(hw, g, n) && hasClass(hw, "gather.cached")) {
        return {bestKernelFor(hw, "gather.cached", "own.gather"), "gather.cached"};
      }
      std::string cls = hasClass(hw, "gather.zipf") ? "gather.zipf" : "gather.uniform";
      return {bestKernelFor(hw, cls, "own.gather"), cls};
    }
    case OpKind::kReduceSum:
    case OpKind::kReduceMean:
    case OpKind::kReduceMax:
    case OpKind::kFM: return {bestKernelFor(hw, "reduce.rows", "own.reduce"), "reduce.rows"};
    default: break;
  }
  // Classes only a backend-probed profile has (cagr profile --target cpu):
  // elsewhere these ops stream like elementwise ones.
  const char* probed = n.op == OpKind::kSoftmax || n.op == OpKind::kLayerNorm ? "softmax.rows"
                       : movesLastAxis(n) && hasClass(hw, "movement.inner")     ? "movement.inner"
                       : isMovement(n.op)                                       ? "movement.strided"
                                                                                : nullptr;
  if (probed != nullptr && hasClass(hw, probed)) return {bestKernelFor(hw, probed, "own.eltwise"), probed};
  return {bestKernelFor(hw, "eltwise.stream", "own.eltwise"), "eltwise.stream"};
}

}  // namespace

double graphStepFloor(const HardwareProfile& hw) {
  const KernelEfficiency* e = hw.efficiency(kGraphStepKernel, kGraphStepClass);
  return e != nullptr && e->shapeClass == kGraphStepClass ? e->overheadS : 0;
}

double generatedStepFloor(const HardwareProfile& hw) {
  const KernelEfficiency* e = hw.efficiency(kGraphStepKernel, kGraphStepPdlClass);
  return e != nullptr && e->shapeClass == kGraphStepPdlClass ? e->overheadS : graphStepFloor(hw);
}

double graphReplayFixed(const HardwareProfile& hw) {
  const KernelEfficiency* e = hw.efficiency(kGraphStepKernel, kGraphReplayClass);
  return e != nullptr && e->shapeClass == kGraphReplayClass ? e->overheadS : 0;
}

double singleStepFloor(const HardwareProfile& hw) {
  const KernelEfficiency* e = hw.efficiency(kGraphStepKernel, kSingleStepFloorClass);
  return e != nullptr && e->shapeClass == kSingleStepFloorClass ? e->overheadS : 0;
}

bool stepProbed(const std::string& kernel, const std::string& shapeClass) {
  return kernel.rfind("nvrtc.", 0) == 0 || (shapeClass == "gemm.batched" && libraryGemmKernel(kernel));
}

std::string generatedGemmFormClass(const Graph& g, const Node& n) {
  if (n.op != OpKind::kGemm && n.op != OpKind::kMatMul) return "";
  if (n.inputs.size() < 2) return "";
  const auto& ad = g.type(n.inputs[0]).dims;
  const auto& bd = g.type(n.inputs[1]).dims;
  const auto& od = g.type(n.outputs[0]).dims;
  if (ad.empty() || bd.empty() || od.empty()) return "";
  const bool gemm = n.op == OpKind::kGemm;
  const bool transA = gemm && n.attrs.getInt("transA", 0) != 0, transB = gemm && n.attrs.getInt("transB", 0) != 0;
  const Dim nd = bd.size() == 1 ? Dim{1} : transB ? bd[bd.size() - 2] : bd.back();
  const Dim kd = transA ? ad[ad.size() - 2] : ad.back();
  if (isSymbolic(nd) || isSymbolic(kd)) return "";
  const int64_t N = nd, K = kd;
  if (N <= 4) return "gemm.skinny";
  const bool batched = !gemm && od.size() > 2;
  const bool rowMajorA = gemm ? !transA : ad.size() == 2;
  const bool bKByN = bd.size() == 2 && (!transB || g.isConstant(n.inputs[1]));
  if (n.mir.math == Precision::kF32 && !batched && gemm_forms::narrowShape(N, K) && rowMajorA && bKByN) {
    return "gemm.narrow";
  }
  if (!batched && gemm_forms::rowShape(N, K)) return "gemm.rows";
  // The tiles' probe (512 -> 256) runs the 64 x 128 tile of 8 x 4 sums a
  // thread (tileShape in codegen_gemm.cc: N >= 128, K > 64); narrower or
  // shallower tiles do a fraction of its work per thread, so they keep the
  // FLOP class.
  return N >= 128 && K > 64 ? "gemm.tiles" : "";
}

double probedMinimumRun(const HardwareProfile& hw, const std::string& kernel, const std::string& shapeClass) {
  // cublaslt.cin is CAGR's own step (outer-product, GEMM and transpose
  // kernels), probed like the generated ones: measured on the H200 its
  // shortest run is what made xDeepFM fp32 256's plan 0.513 ms against a
  // modelled 0.444 (three layers, ~23 us each).
  if (kernel.rfind("nvrtc.", 0) != 0 && kernel.rfind("cublaslt.cin", 0) != 0) return 0;
  // The reference: the same harness's trivial kernel (an elementwise add's
  // smallest call, so timing and launch differences cancel), else the
  // single-step floor of a chain of tiny kernels.
  const KernelEfficiency* trivial = hw.efficiency(kTrivialProbeKernel, kTrivialProbeClass);
  double single = trivial != nullptr && trivial->kernel == kTrivialProbeKernel &&
                          trivial->shapeClass == kTrivialProbeClass && trivial->overheadS > 0
                      ? trivial->overheadS
                      : singleStepFloor(hw);
  const KernelEfficiency* e = hw.efficiency(kernel, shapeClass);
  if (single <= 0 || e == nullptr || e->kernel != kernel || e->shapeClass != shapeClass) return 0;
  return std::max(0.0, e->overheadS - single);
}

bool libraryGemmKernel(const std::string& kernel) {
  return kernel.rfind("cublas.", 0) == 0 || kernel.rfind("cublaslt.matmul", 0) == 0 || kernel.rfind("rocblas.", 0) == 0;
}

Efficiency effectiveRates(const HardwareProfile& hw, const std::string& kernel, const std::string& shapeClass,
                          double flopsPerCall) {
  Efficiency e;
  double peak = hw.peak("fp32"), bw = hw.dramBandwidth();
  double launch = hw.launchLatencyS.value;
  double fraction = 0.5;
  if (shapeClass == "gemm.tiny") fraction = 0.05;
  if (shapeClass == "gemm.small") fraction = 0.3;
  if (shapeClass == "gemm.medium") fraction = 0.6;
  if (shapeClass == "gemm.large") fraction = 0.8;
  if (shapeClass == "gemm.skinny") fraction = 0.15;
  bool gather = shapeClass.rfind("gather.", 0) == 0;
  e.flopsPerS = peak * fraction;
  e.bytesPerS = gather ? bw * 0.5 / std::max(1.0, hw.traits.irregularGatherPenalty) : bw * 0.8;
  e.overheadS = launch;
  const KernelEfficiency* k = hw.efficiency(kernel, shapeClass);
  bool gemm = shapeClass.rfind("gemm.", 0) == 0;
  if (k != nullptr && k->shapeClass == shapeClass) {
    // A streaming class's FLOP rate was measured while bound by memory: it is
    // not a compute ceiling, so only GEMM classes take their measured FLOP/s.
    if (k->flopsPerS > 0 && gemm) e.flopsPerS = k->flopsPerS;
    if (k->bytesPerS > 0) e.bytesPerS = k->bytesPerS;
    if (k->overheadS > 0) e.overheadS = k->overheadS;
    // Within a class the achieved rate still varies several-fold with size:
    // a measured curve prices this call at its own FLOP count.
    // The curve's rates are whole-call rates of real GEMMs (their memory
    // traffic is in them), and the entry's bytes_per_s is only bytes / time
    // of mostly compute-bound shapes (well under 1 GB/s for large CPU GEMMs),
    // not a bandwidth ceiling: with a curve the memory term uses device
    // bandwidth, so only a genuinely memory-starved call is memory-bound.
    if (gemm && !k->curve.empty() && flopsPerCall > 0) {
      e.flopsPerS = k->rateAt(flopsPerCall);
      e.bytesPerS = std::max(e.bytesPerS, bw);
    }
    e.measured = k->samples > 0;
  }
  // A large f32 cuBLASLt call as the backend runs it (kernel_class.h kTunedGemmClass).
  const bool sizeClass = shapeClass == "gemm.small" || shapeClass == "gemm.medium" || shapeClass == "gemm.large";
  const KernelEfficiency* tuned = kernel == "cublaslt.matmul" && sizeClass ? hw.efficiency(kernel, kTunedGemmClass)
                                                                           : nullptr;
  if (tuned != nullptr && tuned->shapeClass == kTunedGemmClass && !tuned->curve.empty() &&
      flopsPerCall >= tuned->curve.front().flops) {
    const double rate = tuned->rateAt(flopsPerCall);
    if (rate > e.flopsPerS) {
      e.flopsPerS = rate;
      e.bytesPerS = std::max(e.bytesPerS, bw);
      e.measured = tuned->samples > 0;
    }
  }
  return e;
}

double streamingBandwidth(const HardwareProfile& hw, const std::string& kernel, const std::string& shapeClass,
                          double bytesPerCall, double classRate) {
  if (shapeClass.rfind("gemm.", 0) == 0) return classRate;  // GEMM curves are FLOP curves
  const KernelEfficiency* k = hw.efficiency(kernel, shapeClass);
  if (k != nullptr && k->shapeClass == shapeClass && !k->curve.empty() && bytesPerCall > 0) {
    return k->rateAt(bytesPerCall);
  }
  if (shapeClass == "eltwise.stream" || shapeClass == "reduce.rows") {
    return std::max(classRate, cacheBandwidthFor(hw, bytesPerCall));
  }
  return classRate;
}

double gemmTileShare(const HardwareProfile& hw, const Graph& g, const Node& n, const NodeStats& stats,
                     const std::string& shapeClass) {
  if (hw.kind != "gpu" || (n.op != OpKind::kGemm && n.op != OpKind::kMatMul) || isBatchedProduct(g, n, stats)) {
    return 1;
  }
  if (shapeClass != "gemm.small" && shapeClass != "gemm.medium" && shapeClass != "gemm.large") return 1;
  constexpr double kTile = 128;
  auto share = [](double d) { return d > kTile ? d / (std::ceil(d / kTile) * kTile) : 1.0; };
  double m, nn, k;
  gemmDims(n, stats, m, nn, k);
  return share(m) * share(nn);
}

double cacheBandwidthFor(const HardwareProfile& hw, double workingSetBytes) {
  for (size_t i = 0; i + 1 < hw.memory.size(); ++i) {  // the last level is device memory
    if (workingSetBytes <= hw.memory[i].sizeBytes.value) return hw.memory[i].bandwidth.value;
  }
  return 0;
}

double tableBatchPadding(const Graph& g, const Node& n, const std::vector<int64_t>& outShape) {
  if (n.op != OpKind::kEmbeddingBags || outShape.empty()) return 0;
  const size_t tables = static_cast<size_t>(n.attrs.getInt("num_tables", 1));
  if (tables < 2 || tables > n.inputs.size()) return 0;
  int64_t widest = 0, sum = 0;
  for (size_t t = 0; t < tables; ++t) {
    int64_t w = g.type(n.inputs[t]).dims.back();
    widest = std::max(widest, w);
    sum += w;
  }
  return static_cast<double>(outShape[0]) * static_cast<double>(widest * static_cast<int64_t>(tables) - sum) * 8.0;
}

double internalTraffic(const Graph& g, const GraphStats& stats, const std::vector<char>& member) {
  std::vector<int> uses = g.useCounts(), memberUses(g.numValues(), 0);
  for (size_t i = 0; i < g.nodes().size(); ++i) {
    if (!member[i]) continue;
    for (ValueId v : g.nodes()[i].inputs) {
      if (v != kNoValue) ++memberUses[static_cast<size_t>(v)];
    }
  }
  double bytes = 0;
  for (size_t i = 0; i < g.nodes().size(); ++i) {
    if (!member[i]) continue;
    const Node& n = g.nodes()[i];
    for (size_t o = 0; o < n.outputs.size(); ++o) {
      size_t v = static_cast<size_t>(n.outputs[o]);
      if (uses[v] > 0 && uses[v] == memberUses[v]) {
        bytes += numel(stats.nodes[i].outShapes[o]) * static_cast<double>(dtypeSize(g.type(n.outputs[o]).dtype));
      }
    }
  }
  return bytes;
}

int reductionsInside(const Graph& g, const std::vector<NodeId>& group) {
  int r = 0;
  for (size_t i = 1; i < group.size(); ++i) {  // a reduction that ends the group needs no extra sync
    OpKind op = g.node(group[i - 1]).op;
    r += (op == OpKind::kReduceSum || op == OpKind::kReduceMean || op == OpKind::kReduceMax ||
          op == OpKind::kSoftmax || op == OpKind::kLayerNorm)
             ? 1
             : 0;
  }
  return r;
}

}  // namespace cagr
