// Prices a whole plan: HIR, or MIR with its decisions. Each kernel (fusion
// group or single node) costs max(sum of member compute, sum of member
// memory traffic not kept inside the group, of which the profile's
// fuse_alpha counts as saved) + one launch; precisions scale
// bytes and pick the math mode's rates; a fused CIN never writes its outer
// product; an in-place concat is free; peak memory follows liveness over
// the kernel schedule. Streams overlap on
// a critical path, bounded below by the device's throughput: the kernels'
// summed work (their floors overlap) on GPU-like platforms, everything on
// the CPU (one kernel at a time). On a profile with CUDA backend probes,
// generated kernels are priced by their own nvrtc.* entries, library GEMMs
// by cuBLASLt (what the backend calls), each kernel's launch is the measured
// CUDA-graph per-kernel floor (a library GEMM's own per-call floor where
// larger) and a plan pays the graph replay's fixed cost once. All modelled.
#include <algorithm>
#include <cmath>

#include "cagr/cost.h"
#include "cagr/mir.h"
#include "cost/kernel_class.h"
#include "ir/graph_queries.h"
#include "lower/op_sets.h"

namespace cagr {
namespace {

double storageFactor(Precision p) {
  switch (p) {
    case Precision::kBF16:
    case Precision::kF16: return 0.5;
    case Precision::kInt8Rowwise: return 0.25;
    default: return 1.0;
  }
}

const char* mathKernelPrecision(Precision p) {
  switch (p) {
    case Precision::kTF32: return "tf32";
    case Precision::kBF16: return "bf16";
    case Precision::kF16: return "fp16";
    default: return "fp32";
  }
}

double numelOf(const std::vector<int64_t>& s) {
  double n = 1;
  for (int64_t d : s) n *= static_cast<double>(d);
  return n;
}

}  // namespace

struct PricingCache {
  std::vector<double> bytes;        // f32-storage bytes of every value at the bindings
  ValueUses uses;
  NodeLists nodeConsumers;
  std::vector<std::string> kernel, cls;  // each node's default kernel and shape class
  std::vector<Efficiency> eff;           // its rates at its FLOP count
  Backend backend = Backend::kCpu;
  double graphFloorS = 0;  // the profile's CUDA-graph per-kernel floor (0: none measured)
  double generatedFloorS = 0;  // the same for a generated kernel (programmatic launch where measured)
  double replayFixedS = 0;  // once per plan: a graph replay's cost beyond its one kernel's floor (0: none measured)
  /// Latency, memory and variance only (no per-node / per-kernel detail):
  /// what a search needs to score a candidate.
  bool summaryOnly = false;
};

namespace {

struct PlanContext {
  const RooflineCostModel& model;
  const HardwareProfile& hw;
  const Graph& g;
  const GraphStats& stats;
  const PricingCache& cache;
  const std::vector<double>& bytes;
  const ValueUses& uses;
  Backend backend;
  std::vector<int> kernelOf;  // node -> index in the schedule
};

StatusOr<std::vector<double>> valueBytes(const Graph& g, const GraphStats& st, const SymbolBindings& b) {
  std::vector<double> out(g.numValues(), 0);
  for (ValueId v : g.inputs()) {
    CAGR_ASSIGN_OR_RETURN(auto shape, b.resolve(g.type(v).dims));
    out[static_cast<size_t>(v)] = numelOf(shape) * static_cast<double>(dtypeSize(g.type(v).dtype));
  }
  for (size_t v = 0; v < g.numValues(); ++v) {
    if (g.isConstant(static_cast<ValueId>(v))) out[v] = static_cast<double>(g.constant(static_cast<ValueId>(v))->byteSize());
  }
  for (size_t i = 0; i < g.nodes().size(); ++i) {
    const Node& n = g.nodes()[i];
    for (size_t o = 0; o < n.outputs.size(); ++o) {
      out[static_cast<size_t>(n.outputs[o])] =
          numelOf(st.nodes[i].outShapes[o]) * static_cast<double>(dtypeSize(g.type(n.outputs[o]).dtype));
    }
  }
  return out;
}

// Inputs of a lookup that are tables (the rest are ids / offsets).
size_t tableInputs(const Node& n) {
  if (n.op == OpKind::kEmbeddingBags) return static_cast<size_t>(n.attrs.getInt("num_tables"));
  return ops::in(ops::kLookups, n.op) ? 1 : 0;
}

// The value a chain of views of `v` reads (v itself when no view made it).
ValueId throughViews(const Graph& g, ValueId v) {
  for (NodeId p = g.value(v).producer; p >= 0 && ops::in(ops::kViews, g.node(p).op) && !g.node(p).inputs.empty();
       p = g.value(v).producer) {
    v = g.node(p).inputs[0];
  }
  return v;
}

bool isInternal(const PlanContext& c, ValueId v, int kernel) {
  const auto& cons = c.uses.consumers[static_cast<size_t>(v)];
  if (c.uses.isOutput[static_cast<size_t>(v)] || cons.empty()) return false;
  return std::all_of(cons.begin(), cons.end(), [&](NodeId k) { return c.kernelOf[static_cast<size_t>(k)] == kernel; });
}

// A node's traffic after storage precisions and group-internal values
// (fuse_alpha of their traffic saved). In a CIN group (`cinGroup`) a member
// reads what the kernel made from registers even when that value is also
// written for a later kernel (a pooled layer's map the next layer reads).
OpCounts memberCounts(const PlanContext& c, NodeId id, int kernel, bool fusedCin, bool cinGroup) {
  const Node& n = c.g.node(id);
  OpCounts k = c.stats.nodes[static_cast<size_t>(id)].counts;
  size_t tables = tableInputs(n);
  double indexBytes = 0, tableWidth = 0;
  for (size_t i = tables; i < n.inputs.size(); ++i) {
    if (n.inputs[i] != kNoValue) indexBytes += c.bytes[static_cast<size_t>(n.inputs[i])];
  }
  for (size_t i = 0; i < tables; ++i) tableWidth += static_cast<double>(c.g.type(n.inputs[i]).dims.back());
  double tableRead = std::max(0.0, k.bytesRead - indexBytes);
  // The share of a group-internal value's traffic fusion really saves: the
  // profile's fuse_alpha (fitted from fused vs unfused runs where measured,
  // 1 by default), at most all of it.
  // A softmax row kernel is not made faster by a fused producer: its probe
  // (softmax.rows, several passes a row) runs at the same per-row rate
  // whatever the row's source (measured on the H200: AutoInt's div+softmax
  // [4096,2,22,22] took 31.5 us inside a plan, the softmax probe alone 29 us),
  // so it keeps the traffic of its own row passes.
  const bool rowPasses = c.cache.cls[static_cast<size_t>(id)] == "softmax.rows";
  const double saved = rowPasses ? 0.0 : std::clamp(c.hw.traits.fuseAlpha, 0.0, 1.0);
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    ValueId v = n.inputs[i];
    if (v == kNoValue) continue;
    double f = storageFactor(c.g.value(v).mir.storage);
    double vb = c.bytes[static_cast<size_t>(v)];
    if (i < tables) {
      k.bytesRead -= tableRead * static_cast<double>(c.g.type(v).dims.back()) / tableWidth * (1 - f);
      continue;
    }
    k.bytesRead -= vb * (1 - f);
    // Saved only when this kernel computed the value (through views): a
    // value another kernel wrote is read back from memory even when this
    // kernel is its only consumer.
    const ValueId src = throughViews(c.g, v);
    NodeId p = c.g.value(src).producer;
    if (p >= 0 && c.kernelOf[static_cast<size_t>(p)] == kernel &&
        (isInternal(c, src, kernel) || isInternal(c, v, kernel) || cinGroup)) {
      k.bytesRead -= vb * f * saved;
    }
  }
  for (ValueId v : n.outputs) {
    double f = storageFactor(c.g.value(v).mir.storage);
    double vb = c.bytes[static_cast<size_t>(v)];
    k.bytesWritten -= vb * (1 - f) + (isInternal(c, v, kernel) ? vb * f * saved : 0);
  }
  if (n.op == OpKind::kCIN && !fusedCin) {
    // The outer product xk (x) x0 is written and read back by the GEMM.
    const auto& xk = c.g.type(n.inputs[0]).dims;
    double outer = c.bytes[static_cast<size_t>(n.inputs[0])] * static_cast<double>(c.g.type(n.inputs[1]).dims[1]);
    if (xk.size() == 3) k.bytesRead += outer, k.bytesWritten += outer;
  }
  k.bytesRead = std::max(0.0, k.bytesRead);
  k.bytesWritten = std::max(0.0, k.bytesWritten);
  return k;
}

// A backend's own generated GEMM (nvrtc.gemm_small, ...): a GEMM kernel the
// catalog prices by no library's entries.
bool generatedGemmKernel(KernelId k) {
  return k != 0 && kernelInfo(k).priceAs[0] == '\0' && kernelInfo(k).pattern == Pattern::kGemm;
}

// A GEMM in reduced math over f32-stored activations on cuBLASLt runs with
// f32 operands (FAST_TF32 / FAST_16BF compute, cuda_blas.cc): where the
// profile's backend probes measured such calls ("cublaslt.matmul_bf16" in
// kTunedGemmClass, cuda_probes.cc) over a range holding `flops`, that entry;
// else null (the profiler's cublas.gemm_bf16 runs bf16 operands, a rate such
// a call does not reach: DLRM's and DCN-v2's bf16 plans measured 35-50 %
// slower than priced by it on an H100).
const KernelEfficiency* reducedMathAsRun(const PlanContext& c, const Node& n, const std::string& kernelInMath,
                                         double flops) {
  if (!ops::in(ops::kGemmLike, n.op) || kernelInMath.rfind("cublaslt.matmul_", 0) != 0) return nullptr;
  for (ValueId v : n.inputs) {
    if (v != kNoValue && !c.g.isConstant(v) && c.g.value(v).mir.storage != Precision::kF32) return nullptr;
  }
  const KernelEfficiency* e = c.hw.efficiency(kernelInMath, kTunedGemmClass);
  if (e == nullptr || e->kernel != kernelInMath || e->shapeClass != kTunedGemmClass || e->curve.empty()) return nullptr;
  return flops >= e->curve.front().flops ? e : nullptr;
}

// Compute, memory and launch time of one member with its decisions.
// `libraryRates` (optional): set to whether the rates came from a vendor
// library GEMM's entry (libraryGemmKernel), whatever kernel runs it.
KernelEstimate memberTime(const PlanContext& c, NodeId id, KernelId chosen, int kernel, Pattern pattern,
                          bool* libraryRates = nullptr) {
  const Node& n = c.g.node(id);
  const std::string& cls = c.cache.cls[static_cast<size_t>(id)];
  if (c.cache.kernel[static_cast<size_t>(id)] == "view") return KernelEstimate{0, 0, 0, 0, Bound::kFree, "view", ""};
  const KernelInfo& info = kernelInfo(chosen);
  // The CUDA backend runs an unassigned CIN in f32 and tf32 math as its
  // generated kernel (no outer product in memory), in bf16 / f16 math on
  // cuBLASLt (cublaslt.cin: cuda_program.cc): priced so where the profile
  // measured it.
  const bool generatedCin = c.cache.kernel[static_cast<size_t>(id)] == "nvrtc.cin";
  OpCounts counts =
      memberCounts(c, id, kernel, pattern == Pattern::kCin && (chosen != 0 || generatedCin), pattern == Pattern::kCin);
  double rateScale = 1;
  bool tensorCores = n.mir.math != Precision::kF32;
  // A generated GEMM (priced "by class" in the catalog) that the profile
  // measured itself (CUDA backend probes: nvrtc.gemm_small) is priced by its
  // own entry — of this class where probed, else of its nearest probed one —
  // not by the library's rates: measured on the H200 it ran DCN-v2's
  // 4096x429x429 cross layer in 178 us against cuBLASLt + epilogue's 86 us,
  // and priced as the library it looked cheaper (one kernel, no epilogue).
  // (A batched product takes only a batched probe of its own: another
  // class's curve would price 8192 22x22 products as one large GEMM.)
  // Where the profile files the generated GEMM's probes by the form the
  // backend generates for the shape (narrow, rows, tiles: kernels ~10x
  // apart at equal FLOPs), that form's entry prices it.
  const bool generatedGemm = generatedGemmKernel(chosen);
  const std::string form = generatedGemm ? generatedGemmFormClass(c.g, n) : "";
  const KernelEfficiency* formEntry = form.empty() ? nullptr : c.hw.efficiency(info.name, form);
  const std::string& ownCls = formEntry != nullptr && formEntry->shapeClass == form ? form : cls;
  const KernelEfficiency* ownEntry = generatedGemm ? c.hw.efficiency(info.name, ownCls) : nullptr;
  const bool ownGemm = ownEntry != nullptr && (ownEntry->shapeClass == ownCls || cls != "gemm.batched");
  bool custom =
      (chosen != 0 && info.priceAs[0] != '\0' && info.pattern != Pattern::kConcatInPlace) || tensorCores || ownGemm;
  Efficiency eff = c.cache.eff[static_cast<size_t>(id)];
  std::string name;
  bool asRun = false;    // priced by reducedMathAsRun's entry
  std::string library;  // the fastest library kernel in the math mode (its overhead prices an asRun one)
  if (ownGemm && !tensorCores) {
    name = info.name;
    eff = effectiveRates(c.hw, name, ownEntry->shapeClass, counts.flops);
  } else if (custom) {
    name = chosen != 0 && info.priceAs[0] != '\0' ? info.priceAs : c.cache.kernel[static_cast<size_t>(id)];
    // A chosen kernel the profile measured itself on this class (the CUDA
    // backend probes' nvrtc.* entries) is priced by its own entry.
    const KernelEfficiency* self = chosen != 0 ? c.hw.efficiency(info.name, cls) : nullptr;
    if (self != nullptr && self->shapeClass == cls) name = info.name;
    // A chosen kernel the profile never measured on this class (e.g. a
    // softmax run by the reduction kernel) is priced by the class's own
    // measured kernel, not by its rate on another class.
    const KernelEfficiency* own = c.hw.efficiency(name, cls);
    const KernelEfficiency* dflt = c.hw.efficiency(c.cache.kernel[static_cast<size_t>(id)], cls);
    if ((own == nullptr || own->shapeClass != cls) && dflt != nullptr && dflt->shapeClass == cls) {
      name = c.cache.kernel[static_cast<size_t>(id)];
    }
    if (tensorCores) {
      std::string p = mathKernelPrecision(n.mir.math);
      // A probed CIN: the layer's own kernel in this math mode (CUDA backend
      // probes: "nvrtc.cin_tf32"); else the fastest kernel the profile has for it.
      const std::string autoCin = n.mir.math == Precision::kTF32 ? "nvrtc.cin" : "cublaslt.cin";
      const std::string mine = (chosen != 0                  ? std::string(info.name)
                                : pattern == Pattern::kCin ? autoCin
                                                           : c.cache.kernel[static_cast<size_t>(id)]) +
                               "_" + p;
      const KernelEfficiency* inMath = cls == "gemm.cin" ? c.hw.efficiency(mine, cls) : nullptr;
      asRun = reducedMathAsRun(c, n, mine, counts.flops) != nullptr;
      library = fastestKernel(c.hw, cls, p, "");
      const std::string k =
          (inMath != nullptr && inMath->kernel == mine && inMath->shapeClass == cls) || asRun ? mine : library;
      if (!k.empty()) {
        name = k;
      } else {
        rateScale = c.hw.peak(p) / std::max(1.0, c.hw.peak("fp32"));
      }
    }
    eff = effectiveRates(c.hw, name, asRun ? kTunedGemmClass : cls, counts.flops);
    if (asRun && !library.empty()) eff.overheadS = effectiveRates(c.hw, library, cls, counts.flops).overheadS;
  }
  double bytes = counts.bytesRead + counts.bytesWritten;
  if (cls.rfind("gather.tables", 0) == 0) {
    bytes += tableBatchPadding(c.g, n, c.stats.nodes[static_cast<size_t>(id)].outShapes[0]);
  }
  if (libraryRates != nullptr) {
    *libraryRates = libraryGemmKernel(custom ? name : c.cache.kernel[static_cast<size_t>(id)]);
  }
  eff.bytesPerS =
      streamingBandwidth(c.hw, custom ? name : c.cache.kernel[static_cast<size_t>(id)], cls, bytes, eff.bytesPerS);
  KernelEstimate e;
  e.kernel = chosen != 0 ? std::string(info.name) : custom ? name : c.cache.kernel[static_cast<size_t>(id)];
  e.shapeClass = ownGemm && !tensorCores ? ownCls : cls;
  e.computeS = eff.flopsPerS > 0 ? counts.flops / (eff.flopsPerS * rateScale) : 0;
  e.memoryS = eff.bytesPerS > 0 ? bytes / eff.bytesPerS : 0;
  e.launchS = eff.overheadS;
  if (libraryGemmKernel(custom ? name : c.cache.kernel[static_cast<size_t>(id)])) {
    double share = gemmTileShare(c.hw, c.g, n, c.stats.nodes[static_cast<size_t>(id)], cls);
    if (share > 0) e.computeS /= share;
  }
  // Weights: misaligned dims slow tensor cores unless padded; on CPUs an
  // unpacked weight is re-packed by the GEMM on every call.
  for (ValueId v : n.inputs) {
    if (v == kNoValue || !c.g.isConstant(v) || !ops::in(ops::kGemmLike, n.op) || c.g.type(v).rank() < 2) continue;
    const Value& w = c.g.value(v);
    const auto& wd = w.type.dims;
    // (A CIN priced by its probe's curve was measured at its own shapes; a
    // reduced-math GEMM priced as run, at the widths pad_gemm_dims pads the
    // zoo's misaligned layers to, as the backend runs them.)
    if (tensorCores && w.mir.layout != Layout::kPadded && cls != "gemm.cin" && !asRun) {
      e.computeS *=
          misalignmentPenalty(c.hw, mathKernelPrecision(n.mir.math), name, cls, static_cast<double>(wd[wd.size() - 2]),
                              static_cast<double>(wd.back()), counts.flops);
    }
    // OpenBLAS takes no pre-packed operand: it packs on every call regardless.
    bool packed = w.mir.layout == Layout::kPacked && std::string_view(info.name) != "openblas.sgemm";
    if (c.backend == Backend::kCpu && !packed && eff.bytesPerS > 0) {
      // A pass before the GEMM proper, so a fixed per-call cost, not overlapped.
      e.launchS += 2 * c.bytes[static_cast<size_t>(v)] * storageFactor(w.mir.storage) / c.hw.dramBandwidth();
    }
  }
  return e;
}

// Time kernel `k` keeps the device busy, which concurrent streams cannot
// overlap: its compute / memory work on GPU-like platforms (launch floors
// overlap across streams); all of it on the CPU, whose backend runs one
// kernel at a time over all its threads.
double deviceBusy(Backend b, const KernelEstimate& k) {
  if (b == Backend::kCpu) return k.seconds;
  return std::max(0.0, k.seconds - k.launchS);
}

// The member that is not elementwise / view (the verifier guarantees at most
// one, or an Interaction / FM for rec groups), else the first.
NodeId groupAnchor(const Graph& g, const std::vector<NodeId>& members) {
  for (NodeId m : members) {
    OpKind k = g.node(m).op;
    if (k == OpKind::kInteraction || k == OpKind::kFM) return m;
  }
  for (NodeId m : members) {
    if (!ops::in(ops::kEltwise | ops::kViews, g.node(m).op)) return m;
  }
  return members.front();
}

// The members of a GEMM group that the CUDA backend runs outside the
// library GEMM: on a CUDA-probed profile a Gemm / MatMul group on cuBLASLt
// (no kernel or a library one chosen) takes, along the single-consumer chain
// from the anchor, views, adds of an outside value (bias / addend) and one
// ReLU / tanh-GELU as its epilogue (backends/cuda/cuda_gemm.cc
// fuseEpilogue; cuBLAS takes views only); every other non-view member runs
// in a generated elementwise kernel of its own (cuda_program.cc
// addLibraryGemm). Empty when the group is one kernel.
std::vector<NodeId> outsideLibraryEpilogue(const PlanContext& c, const std::vector<NodeId>& members, NodeId anchor,
                                           KernelId chosen) {
  if (c.cache.graphFloorS <= 0 || c.backend != Backend::kCuda || members.size() < 2) return {};
  const Node& a = c.g.node(anchor);
  if (a.op != OpKind::kGemm && a.op != OpKind::kMatMul) return {};
  const std::string name = chosen != 0 ? kernelInfo(chosen).name : "";
  if (chosen != 0 && name != "cublaslt.matmul" && name != "cublas.sgemm") return {};  // a generated GEMM: one kernel
  auto member = [&](NodeId id) { return std::find(members.begin(), members.end(), id) != members.end(); };
  std::vector<NodeId> fused = {anchor};
  bool takes = name != "cublas.sgemm";
  ValueId chain = a.outputs[0];
  while (c.uses.count(chain) == 1 && !c.uses.isOutput[static_cast<size_t>(chain)]) {
    NodeId next = c.uses.consumers[static_cast<size_t>(chain)][0];
    if (!member(next)) break;
    const Node& m = c.g.node(next);
    if (c.g.value(m.outputs[0]).mir.storage != Precision::kF32) break;
    if (ops::in(ops::kViews, m.op)) {
      // bytes unchanged
    } else if (takes && m.op == OpKind::kAdd && m.inputs[0] != m.inputs[1]) {
      ValueId other = m.inputs[0] == chain ? m.inputs[1] : m.inputs[0];
      NodeId producer = c.g.value(other).producer;
      if (producer >= 0 && member(producer)) break;  // computed after the GEMM
    } else if (takes && (m.op == OpKind::kRelu ||
                         (m.op == OpKind::kGelu && m.attrs.getString("approximate", "none") == "tanh"))) {
      takes = false;  // nothing after the activation
    } else {
      break;
    }
    fused.push_back(next);
    chain = m.outputs[0];
  }
  std::vector<NodeId> rest;
  for (NodeId m : members) {
    if (std::find(fused.begin(), fused.end(), m) == fused.end() && !ops::in(ops::kViews, c.g.node(m).op)) {
      rest.push_back(m);
    }
  }
  return rest;
}

KernelEstimate priceKernel(const PlanContext& c, const std::vector<NodeId>& members, int kernel) {
  const Node& first = c.g.node(members.front());
  KernelId chosen = first.mir.kernel;
  if (chosen != 0 && kernelInfo(chosen).pattern == Pattern::kConcatInPlace) {
    KernelEstimate free;
    free.kernel = kernelInfo(chosen).name;
    return free;  // producers wrote into its buffer
  }
  NodeId anchor = groupAnchor(c.g, members);
  // A CIN group (the layer plus the elementwise tail its kernel stores through)
  // never writes the outer product.
  Pattern pattern = c.g.node(anchor).op == OpKind::kCIN ? Pattern::kCin : Pattern::kSingle;
  KernelEstimate total;
  bool libraryRates = false;  // the anchor's
  // A library GEMM plus a generated epilogue kernel (C): the second kernel's
  // work and floor are added after the first's, and the values crossing
  // between them are written and read back.
  const std::vector<NodeId> apart = outsideLibraryEpilogue(c, members, anchor, chosen);
  double apartComputeS = 0, apartMemoryS = 0;
  // The second layer of a GEMM chain (groups.cc checkGemmChain) runs in the
  // generated GEMM too, priced by that kernel's entry for its own form.
  const bool generatedGemm = generatedGemmKernel(chosen);
  for (NodeId m : members) {
    bool lib = false;
    const bool runsChosen = m == anchor || (generatedGemm && ops::in(ops::kGemmLike, c.g.node(m).op));
    KernelEstimate e = memberTime(c, m, runsChosen ? chosen : 0, kernel, pattern, &lib);
    if (std::find(apart.begin(), apart.end(), m) != apart.end()) {
      apartComputeS += e.computeS;
      apartMemoryS += e.memoryS;
      continue;
    }
    total.computeS += e.computeS;
    total.memoryS += e.memoryS;
    if (m == anchor || (total.kernel.empty() && e.kernel != "view")) {
      total.kernel = e.kernel;
      total.shapeClass = e.shapeClass;
      total.launchS = e.launchS;
      libraryRates = lib;
    }
  }
  if (total.kernel.empty()) total.kernel = "view";
  // Replayed as a CUDA graph: a generated kernel's floor is the measured
  // per-kernel floor inside a replay, not its single-launch overhead. A
  // kernel priced by a library GEMM's rates keeps that entry's per-call floor
  // where larger: cagr-profile-cuda times the calls back to back inside a
  // CUDA-graph replay, so it is the library's kernels' own minimum there, not
  // a trivial kernel's (and a generated GEMM priced at those rates is not
  // made cheaper than the library by the floor alone).
  // A generated kernel probed step by step (nvrtc.*) has a shortest run: its
  // smallest call less the trivial probe kernel's (a skewed SpMM's longest
  // row, a CIN's fixed passes), which its curve, net of the whole smallest
  // call, leaves out. Inside a replay the floor and that run overlap: the
  // kernel pays the larger of the two (measured on the H200: adding both
  // over-priced the many-kernel batch-256 plans by 15-37 %, the floor alone
  // under-priced SpMM / CIN plans by 16-37 %).
  // A generated kernel (nvrtc.*) is launched as a programmatic dependent of
  // the kernel before it where the profile measured that floor (sm_90+).
  const double floorS = total.kernel.rfind("nvrtc.", 0) == 0 ? c.cache.generatedFloorS : c.cache.graphFloorS;
  if (c.cache.graphFloorS > 0 && total.kernel != "view") {
    const bool libraryStepProbed = libraryGemmKernel(total.kernel) && stepProbed(total.kernel, total.shapeClass);
    total.launchS = libraryRates && libraryStepProbed ? floorS
                    : libraryRates ? std::max(total.launchS, floorS)
                                 : std::max(floorS, probedMinimumRun(c.hw, total.kernel, total.shapeClass));
  }
  double work = std::max(total.computeS, total.memoryS);
  if (!apart.empty()) {
    double crossing = 0;
    std::vector<ValueId> seen;
    for (NodeId m : apart) {
      for (ValueId v : c.g.node(m).inputs) {
        NodeId p = v == kNoValue ? -1 : c.g.value(v).producer;
        if (p < 0 || std::find(members.begin(), members.end(), p) == members.end() ||
            std::find(apart.begin(), apart.end(), p) != apart.end() ||
            std::find(seen.begin(), seen.end(), v) != seen.end()) {
          continue;
        }
        seen.push_back(v);
        crossing += c.bytes[static_cast<size_t>(v)] * storageFactor(c.g.value(v).mir.storage);
      }
    }
    Efficiency elt = effectiveRates(c.hw, "nvrtc.eltwise", "eltwise.stream");
    double bw = streamingBandwidth(c.hw, "nvrtc.eltwise", "eltwise.stream", crossing, elt.bytesPerS);
    double crossS = bw > 0 ? crossing / bw : 0;
    total.memoryS += crossS;
    work = std::max(total.computeS, total.memoryS) + std::max(apartComputeS, apartMemoryS + crossS);
    total.computeS += apartComputeS;
    total.memoryS += apartMemoryS + crossS;
    total.launchS += c.cache.generatedFloorS;  // the parts apart run as a generated kernel of their own
  }
  total.seconds = work + total.launchS;
  if (total.kernel == "view") total.bound = Bound::kFree;
  else if (total.launchS >= work) total.bound = Bound::kLaunch;
  else total.bound = total.computeS >= total.memoryS ? Bound::kCompute : Bound::kMemory;
  return total;
}

// Liveness over the schedule: values written to memory live from the kernel
// that makes them to their last reader; group-internal values never exist;
// in-place concat inputs are parts of the concat's buffer.
int64_t peakMemory(const PlanContext& c, const std::vector<std::vector<NodeId>>& order) {
  size_t nv = c.g.numValues();
  std::vector<double> size(nv, 0);
  std::vector<int> birth(nv, -1), death(nv, -1);
  double params = 0;
  for (size_t v = 0; v < nv; ++v) {
    const Value& val = c.g.value(static_cast<ValueId>(v));
    double b = c.bytes[v] * storageFactor(val.mir.storage);
    if (val.constant >= 0) {
      if (c.uses.count(static_cast<ValueId>(v)) > 0) params += b;
      continue;
    }
    size[v] = b;
    birth[v] = val.producer >= 0 ? c.kernelOf[static_cast<size_t>(val.producer)] : 0;
    death[v] = c.uses.isOutput[v] ? static_cast<int>(order.size()) : birth[v];
    for (NodeId k : c.uses.consumers[v]) death[v] = std::max(death[v], c.kernelOf[static_cast<size_t>(k)]);
    if (val.producer >= 0 && isInternal(c, static_cast<ValueId>(v), birth[v])) size[v] = 0;
  }
  for (const Node& n : c.g.nodes()) {
    if (n.mir.kernel == 0 || kernelInfo(n.mir.kernel).pattern != Pattern::kConcatInPlace) continue;
    size_t out = static_cast<size_t>(n.outputs[0]);
    for (ValueId v : n.inputs) {
      if (v == kNoValue) continue;
      birth[out] = std::min(birth[out], birth[static_cast<size_t>(v)]);
      size[static_cast<size_t>(v)] = 0;
    }
  }
  std::vector<double> delta(order.size() + 2, 0);
  for (size_t v = 0; v < nv; ++v) {
    if (birth[v] < 0 || size[v] == 0) continue;
    delta[static_cast<size_t>(birth[v])] += size[v];
    delta[static_cast<size_t>(death[v]) + 1] -= size[v];
  }
  double live = 0, peak = 0;
  for (double d : delta) peak = std::max(peak, live += d);
  return static_cast<int64_t>(std::llround(params + peak));
}

}  // namespace

StatusOr<std::shared_ptr<const PricingCache>> RooflineCostModel::prepare(const Graph& g, const GraphStats& stats,
                                                                         const SymbolBindings& bindings,
                                                                         bool summaryOnly) const {
  auto c = std::make_shared<PricingCache>();
  c->summaryOnly = summaryOnly;
  CAGR_ASSIGN_OR_RETURN(c->bytes, valueBytes(g, stats, bindings));
  c->uses = valueUses(g);
  c->nodeConsumers = nodeConsumers(g);
  c->backend = hw_.kind == "cpu" ? Backend::kCpu : hw_.kind == "tpu" ? Backend::kTpu
              : hw_.vendor == "amd"                                 ? Backend::kHip
                                                                    : Backend::kCuda;
  c->graphFloorS = graphStepFloor(hw_);
  c->generatedFloorS = generatedStepFloor(hw_);
  c->replayFixedS = c->graphFloorS > 0 ? std::max(0.0, graphReplayFixed(hw_) - c->graphFloorS) : 0;
  for (size_t i = 0; i < g.nodes().size(); ++i) {
    auto [name, cls] = kernelClass(g, g.nodes()[i], stats.nodes[i]);
    c->eff.push_back(effectiveRates(hw_, name, cls, stats.nodes[i].counts.flops));
    c->kernel.push_back(std::move(name));
    c->cls.push_back(std::move(cls));
  }
  return std::shared_ptr<const PricingCache>(std::move(c));
}

StatusOr<GraphEstimate> RooflineCostModel::graph(const Graph& g, const SymbolBindings& bindings,
                                                 const std::vector<int>& streams) const {
  CAGR_ASSIGN_OR_RETURN(GraphStats stats, computeStats(g, bindings));
  return graphWithStats(g, stats, bindings, streams);
}

StatusOr<GraphEstimate> RooflineCostModel::graphWithStats(const Graph& g, const GraphStats& stats,
                                                          const SymbolBindings& bindings,
                                                          const std::vector<int>& streams,
                                                          const PricingCache* cache) const {
  std::shared_ptr<const PricingCache> own;
  if (cache == nullptr) {
    CAGR_ASSIGN_OR_RETURN(own, prepare(g, stats, bindings));
    cache = own.get();
  }
  CAGR_ASSIGN_OR_RETURN(auto order, scheduleKernels(g, nullptr, &cache->nodeConsumers));
  PlanContext c{*this, hw_, g, stats, *cache, cache->bytes, cache->uses, cache->backend,
                std::vector<int>(g.nodes().size(), 0)};
  for (size_t k = 0; k < order.size(); ++k) {
    for (NodeId m : order[k]) c.kernelOf[static_cast<size_t>(m)] = static_cast<int>(k);
  }
  GraphEstimate e;
  bool detail = !(cache->summaryOnly);
  if (detail) e.nodes.resize(g.nodes().size());
  std::vector<double> ready(g.numValues(), 0.0), streamFree;
  double busyS = 0;  // the device-throughput bound (deviceBusy, below)
  struct Span {
    double start, end, busy;
    int stream;
  };
  std::vector<Span> spans;
  for (size_t k = 0; k < order.size(); ++k) {
    const auto& members = order[k];
    GroupEstimate ge{{}, priceKernel(c, members, static_cast<int>(k)), 0, 0, 0};
    if (detail) ge.members = members;
    NodeId lead = members.front();
    ge.stream = streams.empty() ? g.node(lead).mir.stream : streams[static_cast<size_t>(lead)];
    size_t s = static_cast<size_t>(std::max(0, ge.stream));
    if (streamFree.size() <= s) streamFree.resize(s + 1, 0.0);
    ge.startS = streamFree[s];
    for (NodeId m : members) {
      for (ValueId v : g.node(m).inputs) {
        if (v != kNoValue) ge.startS = std::max(ge.startS, ready[static_cast<size_t>(v)]);
      }
    }
    ge.endS = ge.startS + ge.estimate.seconds;
    streamFree[s] = ge.endS;
    for (NodeId m : members) {
      for (ValueId v : g.node(m).outputs) ready[static_cast<size_t>(v)] = ge.endS;
    }
    e.serialS += ge.estimate.seconds;
    e.launchS += ge.estimate.launchS;
    busyS += deviceBusy(cache->backend, ge.estimate);
    spans.push_back({ge.startS, ge.endS, deviceBusy(cache->backend, ge.estimate), ge.stream});
    e.latencyS = std::max(e.latencyS, ge.endS);
    if (!detail) continue;
    NodeId at = groupAnchor(g, members);
    for (NodeId m : members) {
      e.nodes[static_cast<size_t>(m)].kernel = m == at ? ge.estimate.kernel : "fused";
    }
    e.nodes[static_cast<size_t>(at)] = ge.estimate;
    e.kernels.push_back(std::move(ge));
  }
  // Streams share one device: concurrent kernels overlap their floors, not
  // their work (each large kernel fills the SMs / bandwidth), so no plan
  // beats the sum of its kernels' busy time plus the floors of the kernels
  // no kernel of another stream overlaps on the timeline above (DCN-v2's
  // lookups before its towers, its head after them: nothing hides their
  // launch) plus the longest of the other floors. One stream: the critical
  // path is already that sum. (With one floor for the whole plan, measured
  // on the H200, greedy kept DCN-v2 fp32 256's head on cuBLASLt + a sigmoid
  // kernel, 0.0550 ms, over one generated kernel, 0.0501.)
  double exposedS = 0, sharedFloorS = 0;
  const bool oneStream = std::all_of(spans.begin(), spans.end(), [&](const Span& b) {
    return b.stream == spans.front().stream;
  });
  // One stream: the critical path above is already the sum (no pairs to test).
  for (size_t i = 0; !oneStream && i < spans.size(); ++i) {
    const Span& a = spans[i];
    const bool alone = std::none_of(spans.begin(), spans.end(), [&](const Span& b) {
      return b.stream != a.stream && b.start < a.end && a.start < b.end;
    });
    const double floorS = a.end - a.start - a.busy;
    if (alone) {
      exposedS += floorS;
    } else {
      sharedFloorS = std::max(sharedFloorS, floorS);
    }
  }
  e.latencyS = std::max(e.latencyS, busyS + exposedS + sharedFloorS);
  // A CUDA-graph replay's fixed cost (graph launch, first kernel), once.
  e.latencyS += cache->replayFixedS;
  e.peakMemoryBytes = peakMemory(c, order);
  // V_H of the plan: the profile's run-to-run spread, larger for launch-bound
  // plans (launch jitter) and for plans spread over streams (scheduling).
  int used = static_cast<int>(std::count_if(streamFree.begin(), streamFree.end(), [](double t) { return t > 0; }));
  double launchShare = e.latencyS > 0 ? std::min(1.0, e.launchS / e.latencyS) : 0;
  e.variance = hw_.traits.runToRunVariance * (1 + launchShare) * (1 + 0.25 * std::max(0, used - 1));
  return e;
}

}  // namespace cagr
