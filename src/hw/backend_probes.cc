// runBackendProbes: IR-text plans of one kernel each (and one elementwise
// chain, unfused and fused by the rewrite engine), compiled on the CPU
// backend and timed with Executable::profile. The plans use only the public
// API (text, rewrite, backend), like any user of the compiler would.
#include "hw/backend_probes.h"

#include <algorithm>
#include <cmath>
#include <random>

#include "cagr/analysis.h"
#include "cagr/backend.h"
#include "cagr/rewrite.h"
#include "cagr/text.h"
#include "hw/backend_probes_text.h"
#include "hw/microbench.h"

namespace cagr::hw {
namespace {

using probe::graphText;
using probe::Input;
using probe::opLine;
using probe::randomInputs;
using probe::tensorType;

/// Per-kernel timings of `plan` at batch `n`: enough repeats for about
/// `seconds` (at least 5), after one untimed run.
StatusOr<std::vector<KernelTiming>> timePlan(const Graph& plan, const std::vector<Input>& inputs, int64_t n,
                                             int threads, double seconds) {
  CAGR_ASSIGN_OR_RETURN(auto backend, makeBackend("cpu"));
  CompileOptions opts;
  opts.threads = threads;
  CAGR_ASSIGN_OR_RETURN(auto exe, backend->compile(plan, opts));
  auto in = randomInputs(inputs, n);
  const double t0 = nowSeconds();
  CAGR_RETURN_IF_ERROR(exe->run(in).status());
  const double once = std::max(nowSeconds() - t0, 1e-7);
  const int repeats = static_cast<int>(std::clamp(seconds / once, 5.0, 2000.0));
  return exe->profile(in, repeats);
}

struct ProbeSpec {
  std::string kernel, shapeClass, label;
  std::vector<Input> inputs;
  std::string body, outType;
  double bytesPerRow = 0, flopsPerRow = 0;  // per unit of N, as cost_rules.cc counts
};

ProbeSpec addSpec() {
  std::string t = tensorType({32});
  return {"own.eltwise",
          "eltwise.stream",
          "add [N,32]",
          {{{32}}, {{32}}},
          opLine("%out", "add", "%arg0, %arg1", "", t + ", " + t, t),
          t,
          3 * 32 * 4.0,
          32};
}

/// A probe of one op on one [N, inTail...] input producing [N, outTail...];
/// bytes per row as cost_rules.cc counts them (read + written).
ProbeSpec unarySpec(const std::string& kernel, const std::string& cls, const std::string& op, const std::string& attrs,
                    const std::vector<int64_t>& inTail, const std::vector<int64_t>& outTail, double flopsPerRow) {
  ProbeSpec s;
  s.kernel = kernel;
  s.shapeClass = cls;
  s.inputs = {Input{inTail}};
  s.outType = tensorType(outTail);
  s.body = opLine("%out", op, "%arg0", attrs, tensorType(inTail), s.outType);
  double inElems = 1, outElems = 1;
  s.label = op + " [N";
  for (int64_t d : inTail) inElems *= static_cast<double>(d), s.label += "," + std::to_string(d);
  for (int64_t d : outTail) outElems *= static_cast<double>(d);
  s.label += "]" + (attrs.empty() ? "" : " " + attrs);
  s.bytesPerRow = 4 * (inElems + outElems);
  s.flopsPerRow = flopsPerRow;
  return s;
}

/// The single-input probes: softmax rows of 22 (AutoInt's attention), a
/// transpose that keeps the innermost axis and one that moves it, a row sum.
std::vector<ProbeSpec> unarySpecs() {
  return {
      unarySpec("own.softmax", "softmax.rows", "softmax", "axis = -1 : i64", {22}, {22}, 5 * 22),
      unarySpec("own.movement", "movement.strided", "transpose", "perm = [0, 2, 1, 3]", {22, 2, 16}, {2, 22, 16}, 0),
      unarySpec("own.movement", "movement.inner", "transpose", "perm = [0, 2, 3, 1]", {22, 2, 16}, {2, 16, 22}, 0),
      unarySpec("own.reduce", "reduce.rows", "reduce_sum", "axes = [-1], keepdims = 0 : i64", {22, 16}, {22}, 352)};
}

ProbeSpec batchedGemmSpec() {
  std::string a = tensorType({22, 16}), b = tensorType({16, 22}), c = tensorType({22, 22});
  return {"own.batched_gemm",
          "gemm.batched",
          "matmul [N,22,16] x [N,16,22]",
          {{{22, 16}}, {{16, 22}}},
          opLine("%out", "matmul", "%arg0, %arg1", "", a + ", " + b, c),
          c,
          (352 + 352 + 484) * 4.0,
          2.0 * 22 * 22 * 16};
}

/// Rows of a table that fits in cache (16000 x 16 f32 = 1 MB), one id per row.
ProbeSpec cachedGatherSpec() {
  const Input table{{16000, 16}, true, 0}, ids{{}, false, 16000};
  std::string out = tensorType({16});
  return {"own.gather",
          "gather.cached",
          "gather rows of a [16000,16] table",
          {table, ids},
          opLine("%out", "gather", "%arg0, %arg1", "axis = 0 : i64", table.type() + ", " + ids.type(), out),
          out,
          (16 * 4.0 + 8) + 16 * 4.0,
          0};
}

/// A kernel's time per call: the calling thread's CPU time when the
/// profile times by CPU time (one thread), else the median wall time like
/// every other benchmark of the run.
double kernelSeconds(const KernelTiming& k) {
  return (usingThreadCpuTime() ? k.cpuMs : k.medianMs) * 1e-3;
}

Status runSpec(const ProbeSpec& s, const std::vector<int64_t>& rows, int threads, double seconds, BackendProbes& out) {
  CAGR_ASSIGN_OR_RETURN(Graph g, parseGraph(graphText(s.inputs, s.body, s.outType), "probe " + s.label));
  for (int64_t n : rows) {
    CAGR_ASSIGN_OR_RETURN(auto timings, timePlan(g, s.inputs, n, threads, seconds));
    if (timings.empty()) return internalError("probe " + s.label + ": the backend timed no kernel");
    ProbePoint p{s.kernel,
                 s.shapeClass,
                 fmt("%s, N=%lld", s.label.c_str(), static_cast<long long>(n)),
                 s.bytesPerRow * static_cast<double>(n),
                 s.flopsPerRow * static_cast<double>(n),
                 kernelSeconds(timings.front()),
                 timings.front().minMs * 1e-3};
    out.points.push_back(p);
  }
  return Status::ok();
}

/// NGCF's CSR SpMM (probe::spmmCsrPlan, 64 columns) on own.spmm, uniform
/// rows (spmm.csr) and skewed ones (spmm.skewed), from an L2-sized graph to
/// larger ones; bytes and FLOPs as the op table counts them (the cost
/// model's count), the plan has no batch dimension.
Status runSpmm(const std::vector<int64_t>& graphRows, int threads, double seconds, BackendProbes& out) {
  for (int64_t rows : graphRows) {
    for (bool skewed : {false, true}) {
      probe::CsrPlan plan = probe::spmmCsrPlan(rows, 16, 64, skewed);
      CAGR_ASSIGN_OR_RETURN(Graph g, parseGraph(graphText({}, plan.body, plan.outType), "probe " + plan.label));
      CAGR_ASSIGN_OR_RETURN(auto timings, timePlan(g, {}, 1, threads, seconds));
      auto k = std::find_if(timings.begin(), timings.end(), [](const KernelTiming& t) { return t.kernel == "own.spmm"; });
      if (k == timings.end()) return internalError("probe " + plan.label + ": the backend ran no own.spmm kernel");
      CAGR_ASSIGN_OR_RETURN(GraphStats stats, computeStats(g, defaultBindings(g, 1)));
      double bytes = 0, flops = 0;
      for (NodeId id : k->nodes) {
        const OpCounts& oc = stats.nodes[static_cast<size_t>(id)].counts;
        bytes += oc.bytesRead + oc.bytesWritten;
        flops += oc.flops;
      }
      out.points.push_back(ProbePoint{"own.spmm", skewed ? "spmm.skewed" : "spmm.csr", plan.label, bytes, flops,
                                      kernelSeconds(*k), k->minMs * 1e-3});
    }
  }
  return Status::ok();
}

/// x, y: [N,32]; out = relu((x + y) * y) - x: four kernels unfused, one fused.
Status runFusion(const std::vector<int64_t>& rows, int threads, double seconds, BackendProbes& out) {
  std::string t = tensorType({32}), tt = t + ", " + t;
  std::string body = opLine("%a", "add", "%arg0, %arg1", "", tt, t) + opLine("%m", "mul", "%a, %arg1", "", tt, t) +
                     opLine("%r", "relu", "%m", "", t, t) + opLine("%out", "sub", "%r, %arg0", "", tt, t);
  const std::vector<Input> inputs = {{{32}}, {{32}}};
  CAGR_ASSIGN_OR_RETURN(Graph plain, parseGraph(graphText(inputs, body, t), "fusion probe"));
  Graph fused = plain;
  CAGR_ASSIGN_OR_RETURN(Target target, resolveTarget("cpu"));
  for (bool applied = true; applied;) {  // fuse until no legal fuse is left: one group
    applied = false;
    for (const Candidate& c : enumerateActions(fused, target)) {
      if (c.action.kind != ActionKind::kFuse) continue;
      CAGR_RETURN_IF_ERROR(applyAction(fused, target, c.action));
      applied = true;
      break;
    }
  }
  for (int64_t n : rows) {
    CAGR_ASSIGN_OR_RETURN(auto a, timePlan(plain, inputs, n, threads, seconds));
    CAGR_ASSIGN_OR_RETURN(auto b, timePlan(fused, inputs, n, threads, seconds));
    if (b.size() != 1) return internalError(fmt("fusion probe: the fused chain ran as %zu kernels, not 1", b.size()));
    const double s = 32 * 4.0 * static_cast<double>(n);  // one [N,32] tensor
    FusionProbe f{fmt("relu((x + y) * y) - x over [%lld,32]", static_cast<long long>(n)),
                  4,
                  5 * s,
                  6 * s,
                  0,
                  kernelSeconds(b.front())};
    for (const KernelTiming& k : a) f.unfusedS += kernelSeconds(k);
    out.fusion.push_back(f);
  }
  return Status::ok();
}

}  // namespace

StatusOr<BackendProbes> runBackendProbes(int threads, bool quick, double secondsEach) {
  BackendProbes out;
  // Rows for the streaming probes: ~1.5 KB (dispatch-bound) to ~50 MB
  // (past the last-level cache of a small host) per [N,32] add.
  const std::vector<int64_t> rows =
      quick ? std::vector<int64_t>{4, 4096} : std::vector<int64_t>{4, 64, 512, 4096, 32768, 131072};
  std::vector<ProbeSpec> specs = unarySpecs();
  specs.push_back(addSpec());
  specs.push_back(cachedGatherSpec());
  for (const ProbeSpec& s : specs) {
    CAGR_RETURN_IF_ERROR(runSpec(s, rows, threads, secondsEach, out));
  }
  const std::vector<int64_t> batches =
      quick ? std::vector<int64_t>{64, 2048} : std::vector<int64_t>{8, 64, 512, 2048, 8192, 32768};
  CAGR_RETURN_IF_ERROR(runSpec(batchedGemmSpec(), batches, threads, secondsEach, out));
  // 100 rows (1,600 entries): the smallest call, whose time is the entry's overhead.
  CAGR_RETURN_IF_ERROR(runSpmm(quick ? std::vector<int64_t>{100, 2000} : std::vector<int64_t>{100, 2000, 8000, 32000},
                               threads, secondsEach, out));
  const std::vector<int64_t> fusionRows = quick ? std::vector<int64_t>{4096} : std::vector<int64_t>{512, 4096, 32768};
  CAGR_RETURN_IF_ERROR(runFusion(fusionRows, threads, secondsEach, out));
  return out;
}

}  // namespace cagr::hw
