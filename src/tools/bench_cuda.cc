// cagr bench --target cuda (see bench_cuda.h). Every figure is measured on
// the GPU this runs on; compile times are wall time on this host.
#include "tools/bench_cuda.h"

#include <algorithm>
#include <cstdio>
#include <iostream>

#include "backends/cuda/cuda_timing.h"
#include "cagr/backend.h"
#include "cagr/cost.h"
#include "cagr/policy.h"
#include "cagr/reference.h"
#include "tools/bench_breakdown.h"
#include "tools/bench_setup.h"
#include "tools/common.h"

namespace cagr::tools {
namespace {

using Inputs = BenchInputs;

struct PlanTiming {
  cuda::CompileStats cold, cached;  // NVRTC with its cache off, then from the cache
  cuda::ReplayTiming replay;
  double medianMs = 0, p10Ms = 0, p90Ms = 0;
  std::vector<std::string> kernels;
  std::vector<Tensor> outputs;
  double spreadPct() const { return medianMs > 0 ? 100 * (p90Ms - p10Ms) / medianMs : 0; }
};

StatusOr<Target> benchTarget(const CudaBenchArgs& a) {
  CAGR_ASSIGN_OR_RETURN(Target t, resolveTarget(a.hw.empty() ? "cuda" : a.hw));
  if (t.backend != Backend::kCuda) return invalidArgument("profile '" + t.hw.name + "' is not an NVIDIA GPU profile");
  return t;
}

StatusOr<std::unique_ptr<Executable>> compileWith(const Graph& plan, bool cache, const CompileOptions& opts,
                                                  cuda::CompileStats& stats) {
  CAGR_ASSIGN_OR_RETURN(std::unique_ptr<ExecutionBackend> backend, cuda::makeCudaBackend({cache}));
  CAGR_ASSIGN_OR_RETURN(std::unique_ptr<Executable> exe, backend->compile(plan, opts));
  auto* timed = dynamic_cast<cuda::DeviceTimed*>(exe.get());
  if (timed == nullptr) return internalError("the cuda backend's executable has no device timing");
  stats = timed->compileStats();
  return exe;
}

// `baseline`: the unoptimized plan's timing, the reward's L0 and M0 the
// backend's own workspace choice weighs time and bytes against (DESIGN §4).
StatusOr<PlanTiming> timePlan(const Graph& plan, const CudaBenchArgs& a, const Inputs& inputs,
                              const PlanTiming* baseline = nullptr) {
  PlanTiming t;
  CompileOptions opts;
  opts.memoryWeight = a.lambdaM;
  if (baseline != nullptr) {
    opts.baselineLatencyMs = baseline->medianMs;
    opts.baselineBytes = static_cast<double>(baseline->replay.peakBytes);
  }
  CAGR_RETURN_IF_ERROR(compileWith(plan, false, opts, t.cold).status());   // NVRTC from scratch
  CAGR_RETURN_IF_ERROR(compileWith(plan, true, opts, t.cached).status());  // fills the cache if needed
  CAGR_ASSIGN_OR_RETURN(std::unique_ptr<Executable> exe, compileWith(plan, true, opts, t.cached));
  CAGR_ASSIGN_OR_RETURN(t.outputs, exe->run(inputs));
  CAGR_ASSIGN_OR_RETURN(t.replay, dynamic_cast<cuda::DeviceTimed&>(*exe).timeReplays(inputs, a.replays, 20));
  std::vector<double> ms = t.replay.replayMs;
  std::sort(ms.begin(), ms.end());
  auto at = [&](double q) { return ms[static_cast<size_t>(q * static_cast<double>(ms.size() - 1))]; };
  t.medianMs = at(0.5);
  t.p10Ms = at(0.1);
  t.p90Ms = at(0.9);
  t.kernels = exe->kernelReport();
  return t;
}

nlohmann::json compileJson(const cuda::CompileStats& s) {
  return {{"total_s", s.totalSeconds},      {"lower_s", s.lowerSeconds}, {"nvrtc_s", s.nvrtcSeconds},
          {"load_s", s.loadSeconds},        {"from_cache", s.fromCache}, {"generated_kernels", s.generatedKernels},
          {"library_calls", s.libraryCalls}};
}

// Where peak_memory_bytes goes: the sizes of the plan's device allocations.
nlohmann::json memoryJson(const cuda::MemoryBreakdown& m) {
  return {{"arena_bytes", m.arenaBytes},
          {"arena_input_bytes", m.inputBytes},
          {"arena_workspace_bytes", m.workspaceBytes},
          {"weight_bytes", m.weightBytes},
          {"cin_scratch_bytes", m.scratchBytes},
          {"total_bytes", m.total()},
          {"kind", "allocated (exact sizes of the device allocations; host staging excluded)"}};
}

nlohmann::json timingJson(const PlanTiming& t) {
  return {{"median_ms", t.medianMs},
          {"p10_ms", t.p10Ms},
          {"p90_ms", t.p90Ms},
          {"spread_pct", t.spreadPct()},
          {"replays", t.replay.replayMs.size()},
          {"h2d_ms", t.replay.uploadMs},
          {"d2h_ms", t.replay.downloadMs},
          {"peak_memory_bytes", t.replay.peakBytes},
          {"peak_memory_breakdown", memoryJson(t.replay.memory)},
          {"compile_cold", compileJson(t.cold)},
          {"compile_cached", compileJson(t.cached)},
          {"kernels", t.kernels}};
}

void printReport(const CudaBenchArgs& a, const OptimizeResult& opt, const PlanTiming& base, const PlanTiming& best,
                 double maxDiff) {
  std::printf("%s, batch %lld, %s, cuda backend on %s (measured: CUDA-graph replays timed with CUDA events)\n",
              a.model.c_str(), static_cast<long long>(a.batch), a.precision.c_str(), best.replay.device.c_str());
  std::printf("%-12s %10s %13s %7s %7s %8s %8s %9s %9s %9s\n", "plan", "median ms", "p10-p90", "spread", "replays",
              "H2D ms", "D2H ms", "peak MB", "cold s", "cached s");
  for (const auto& [name, t] :
       {std::pair<const char*, const PlanTiming*>{"unoptimized", &base}, {a.policy.c_str(), &best}}) {
    std::printf("%-12s %10.4f %6.4f-%-6.4f %6.1f%% %7zu %8.4f %8.4f %9.1f %9.3f %9.3f\n", name, t->medianMs, t->p10Ms,
                t->p90Ms, t->spreadPct(), t->replay.replayMs.size(), t->replay.uploadMs, t->replay.downloadMs,
                static_cast<double>(t->replay.peakBytes) / 1e6, t->cold.totalSeconds, t->cached.totalSeconds);
  }
  std::printf(
      "speed-up %.2fx (measured); optimization %.3f s + compile %.3f s cold (NVRTC %.3f s) / %.3f s from cache; "
      "%zu decisions; max |diff| vs unoptimized %.2e\n",
      base.medianMs / best.medianMs, opt.optimizeSeconds, best.cold.totalSeconds, best.cold.nvrtcSeconds,
      best.cached.totalSeconds, opt.decisions.size(), maxDiff);
  const cuda::MemoryBreakdown& m = best.replay.memory;
  std::printf(
      "peak memory of the %s plan (allocated): %.2f MB = arena %.2f (inputs %.2f, library workspaces %.2f) + "
      "weights %.2f + CIN scratch %.2f\n",
      a.policy.c_str(), static_cast<double>(m.total()) / 1e6, static_cast<double>(m.arenaBytes) / 1e6,
      static_cast<double>(m.inputBytes) / 1e6, static_cast<double>(m.workspaceBytes) / 1e6,
      static_cast<double>(m.weightBytes) / 1e6, static_cast<double>(m.scratchBytes) / 1e6);
  std::printf("kernels of the %s plan:\n", a.policy.c_str());
  for (const std::string& k : best.kernels) std::printf("  %s\n", k.c_str());
}

// --breakdown: both plans compiled again (NVRTC cache) and timed step by
// step, each modelled kernel joined with its steps; tables printed unless --json.
StatusOr<nlohmann::json> breakdowns(const Graph& base, const Graph& best, const CudaBenchArgs& a,
                                    const HardwareProfile& hw, const Inputs& inputs, const PlanTiming& baseTiming) {
  RooflineCostModel model(hw);
  nlohmann::json j;
  const std::string& device = baseTiming.replay.device;
  for (const auto& [name, plan] : {std::pair<std::string, const Graph*>{"unoptimized", &base}, {a.policy, &best}}) {
    cuda::CompileStats stats;
    CompileOptions opts;  // as timePlan compiled it
    opts.memoryWeight = a.lambdaM;
    if (plan == &best) {
      opts.baselineLatencyMs = baseTiming.medianMs;
      opts.baselineBytes = static_cast<double>(baseTiming.replay.peakBytes);
    }
    CAGR_ASSIGN_OR_RETURN(std::unique_ptr<Executable> exe, compileWith(*plan, true, opts, stats));
    CAGR_ASSIGN_OR_RETURN(Breakdown b, profileKernels(*exe, *plan, inputs, std::max(a.replays / 4, 20), &model));
    b.device = device;
    if (!a.json) {
      printBreakdown(b, name + " plan, batch " + std::to_string(a.batch) + " (" + device + ")", 12);
      std::printf("  modelled (%s): %.4f ms latency; %zu kernels\n", hw.name.c_str(), b.modelledLatencyMs,
                  b.modelled.size());
    }
    j[plan == &best ? "optimized" : "unoptimized"] = breakdownJson(b, *plan);
  }
  return j;
}

void printJson(const CudaBenchArgs& a, const OptimizeResult& opt, const PlanTiming& base, const PlanTiming& best,
               double maxDiff, const HardwareProfile& hw, const nlohmann::json& breakdown,
               const PrecisionOptions& precision) {
  nlohmann::json j = baseJson(a.model, "cuda");
  j["policy"] = opt.policy;
  j.update(precisionJson(precision, opt.precision));
  j["batch"] = a.batch;
  j["lambda_m"] = a.lambdaM;
  j["device"] = best.replay.device;
  j["latency_ms"] = best.medianMs;
  j["latency_kind"] = "measured (median CUDA-graph replay, CUDA events, " + best.replay.device + ")";
  j["baseline_latency_ms"] = base.medianMs;
  j["peak_memory_bytes"] = best.replay.peakBytes;
  j["peak_memory_breakdown"] = memoryJson(best.replay.memory);
  j["baseline_peak_memory_bytes"] = base.replay.peakBytes;
  j["optimize_seconds"] = opt.optimizeSeconds;
  j["optimize_plus_compile_cold_seconds"] = opt.optimizeSeconds + best.cold.totalSeconds;
  j["optimize_plus_compile_cached_seconds"] = opt.optimizeSeconds + best.cached.totalSeconds;
  j["modelled_latency_ms"] = opt.final.latencyS * 1e3;
  j["baseline_modelled_latency_ms"] = opt.baseline.latencyS * 1e3;
  j["modelled_kind"] = "modelled by the roofline cost model with profile " + hw.name +
                       (hw.isMeasured() ? " (measured)" : " (datasheet)");
  j["profile"] = hw.name + (hw.isMeasured() ? " (measured)" : " (datasheet)");
  j["max_abs_diff_vs_unoptimized"] = maxDiff;
  j["optimized"] = timingJson(best);
  j["unoptimized"] = timingJson(base);
  for (const Decision& d : opt.decisions) {
    j["decisions"].push_back({{"kind", actionKindName(d.action.kind)},
                              {"label", d.label},
                              {"gain_ms_modelled", (d.latencyBeforeS - d.latencyAfterS) * 1e3}});
  }
  if (!breakdown.is_null()) j["breakdown"] = breakdown;
  std::cout << j.dump(2) << "\n";
}

}  // namespace

int runCudaBench(const CudaBenchArgs& a) {
  auto backend = cuda::makeCudaBackend();
  if (!backend.isOk()) return fail(backend.status());
  BackendCapabilities caps = (*backend)->capabilities();
  if (!caps.available) return fail(unsupported(caps.note));
  auto m = loadModel(a.model);
  if (!m.isOk()) return fail(m.status());
  auto t = benchTarget(a);
  if (!t.isOk()) return fail(t.status());
  auto precision = precisionOptions({a.precision, a.maxError}, *t);
  if (!precision.isOk()) return fail(precision.status());
  auto setup = setUpBench(m->graph, *t, a.inputs, a.batch, a.policy, *precision, a.lambdaM);
  if (!setup.isOk()) return fail(setup.status().withContext(a.model));
  const BenchInputs& inputs = setup->inputs;
  const OptimizeResult* opt = &setup->opt;
  auto base = timePlan(m->graph, a, inputs);
  if (!base.isOk()) return fail(base.status().withContext("unoptimized plan"));
  auto best = timePlan(opt->plan, a, inputs, &*base);
  if (!best.isOk()) return fail(best.status().withContext("optimized plan"));
  double maxDiff = 0;
  for (size_t i = 0; i < base->outputs.size(); ++i) {
    maxDiff = std::max(maxDiff, compareTensors(best->outputs[i], base->outputs[i]).maxAbsError);
  }
  if (!a.output.empty()) {
    Status st = writeBenchOutputs(a.output, opt->plan, best->outputs);
    if (!st.isOk()) return fail(st);
  }
  if (!a.json) printReport(a, *opt, *base, *best, maxDiff);
  nlohmann::json breakdown;
  if (a.breakdown) {
    auto bd = breakdowns(m->graph, opt->plan, a, t->hw, inputs, *base);
    if (!bd.isOk()) return fail(bd.status().withContext("--breakdown"));
    breakdown = std::move(*bd);
  }
  if (a.json) printJson(a, *opt, *base, *best, maxDiff, t->hw, breakdown, *precision);
  return 0;
}

}  // namespace cagr::tools
