// cagr bench MODEL --target cpu --batch N: compiles the unoptimized plan
// (the imported model) and the optimized one (a policy's plan for the host
// profile) on the CPU backend, times both on the same inputs and prints
// median, spread and peak memory — all measured on this host.
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>

#include "cagr/backend.h"
#include "cagr/policy.h"
#include "cagr/reference.h"
#include "tools/bench_breakdown.h"
#include "tools/bench_cuda.h"
#include "tools/bench_setup.h"
#include "tools/common.h"

namespace cagr::tools {
namespace {

struct BenchArgs {
  std::string model, target = "cpu", hw, policy = "greedy", inputs, output;
  int64_t batch = 0;  // 0: the model's fixed batch, else 256
  int threads = 0;
  double seconds = 2;
  int minRuns = 10;
  bool json = false;
  bool breakdown = false;
  bool noPatterns = false;  // import without lifting Interaction / FM / CIN
  PrecisionFlags precision;
  double lambdaM = 0.1;            // the reward's memory weight
};

struct Timing {
  double medianMs = 0, p10Ms = 0, p90Ms = 0;
  int runs = 0;
  int64_t peakBytes = 0;
  std::vector<std::string> kernels;
  std::vector<Tensor> outputs;
  double spreadPct() const { return medianMs > 0 ? 100 * (p90Ms - p10Ms) / medianMs : 0; }
};

StatusOr<Timing> timePlan(ExecutionBackend& backend, const Graph& plan, const BenchArgs& a,
                          const std::vector<std::pair<std::string, Tensor>>& inputs) {
  CompileOptions opts;
  opts.threads = a.threads;
  opts.memoryWeight = a.lambdaM;
  CAGR_ASSIGN_OR_RETURN(std::unique_ptr<Executable> exe, backend.compile(plan, opts));
  Timing t;
  for (int i = 0; i < 3; ++i) {  // warm-up: primitives, arena
    CAGR_ASSIGN_OR_RETURN(t.outputs, exe->run(inputs));
  }
  std::vector<double> ms;
  auto begin = std::chrono::steady_clock::now();
  while (static_cast<int>(ms.size()) < a.minRuns ||
         std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count() < a.seconds) {
    auto t0 = std::chrono::steady_clock::now();
    CAGR_RETURN_IF_ERROR(exe->run(inputs).status());
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    if (ms.size() >= 100000) break;
  }
  std::sort(ms.begin(), ms.end());
  auto at = [&](double q) { return ms[static_cast<size_t>(q * static_cast<double>(ms.size() - 1))]; };
  t.medianMs = at(0.5);
  t.p10Ms = at(0.1);
  t.p90Ms = at(0.9);
  t.runs = static_cast<int>(ms.size());
  t.peakBytes = exe->peakMemoryBytes();
  t.kernels = exe->kernelReport();
  return t;
}

nlohmann::json timingJson(const Timing& t) {
  return {{"median_ms", t.medianMs}, {"p10_ms", t.p10Ms},         {"p90_ms", t.p90Ms},
          {"runs", t.runs},          {"spread_pct", t.spreadPct()}, {"peak_memory_bytes", t.peakBytes},
          {"kernels", t.kernels}};
}

// --breakdown: both plans compiled again and timed kernel by kernel; the
// tables are printed unless --json, the JSON is returned either way.
StatusOr<nlohmann::json> breakdowns(ExecutionBackend& backend, const Graph& base, const Graph& best,
                                    const std::string& policy, const BenchArgs& a,
                                    const std::vector<std::pair<std::string, Tensor>>& inputs) {
  nlohmann::json j;
  for (const auto& [name, plan] : {std::pair<std::string, const Graph*>{"unoptimized", &base}, {policy, &best}}) {
    CompileOptions opts;
    opts.threads = a.threads;
    CAGR_ASSIGN_OR_RETURN(std::unique_ptr<Executable> exe, backend.compile(*plan, opts));
    CAGR_ASSIGN_OR_RETURN(Breakdown b, profileKernels(*exe, *plan, inputs, std::max(a.minRuns, 5)));
    if (!a.json) printBreakdown(b, name + " plan, batch " + std::to_string(a.batch), 12);
    j[plan == &best ? "optimized" : "unoptimized"] = breakdownJson(b, *plan);
  }
  return j;
}

int runBench(BenchArgs a) {
  if (a.target == "cuda") {
    if (a.batch == 0) a.batch = 256;  // bench_cuda.cc: graph replays timed on the GPU
    return runCudaBench({a.model, a.hw, a.policy, a.inputs, a.output, a.precision.spec, a.precision.maxError, a.batch,
                         std::max(a.minRuns, 200), a.json, a.breakdown, a.lambdaM});
  }
  if (a.target != "cpu") return fail(unsupported("--target " + a.target + ": cagr bench runs the cpu or the cuda backend"));
  auto m = loadModel(a.model, !a.noPatterns);
  if (!m.isOk()) return fail(m.status());
  a.batch = batchOrDefault(m->graph, a.batch);
  auto t = resolveTarget(a.hw.empty() ? "cpu" : a.hw);
  if (!t.isOk()) return fail(t.status());
  if (t->backend != Backend::kCpu) return fail(invalidArgument("--hw " + a.hw + " is not a CPU profile"));
  auto precision = precisionOptions(a.precision, *t);
  if (!precision.isOk()) return fail(precision.status());
  auto setup = setUpBench(m->graph, *t, a.inputs, a.batch, a.policy, *precision, a.lambdaM);
  if (!setup.isOk()) return fail(setup.status().withContext(a.model));
  const BenchInputs& inputs = setup->inputs;
  const OptimizeResult* opt = &setup->opt;
  auto backend = makeBackend("cpu");
  if (!backend.isOk()) return fail(backend.status());
  auto base = timePlan(**backend, m->graph, a, inputs);
  if (!base.isOk()) return fail(base.status().withContext("unoptimized plan"));
  auto best = timePlan(**backend, opt->plan, a, inputs);
  if (!best.isOk()) return fail(best.status().withContext("optimized plan"));
  double maxDiff = 0;
  for (size_t i = 0; i < base->outputs.size(); ++i) {
    maxDiff = std::max(maxDiff, compareTensors(best->outputs[i], base->outputs[i]).maxAbsError);
  }
  int threads = a.threads > 0 ? a.threads : omp_get_max_threads();
  if (!a.output.empty()) {
    Status st = writeBenchOutputs(a.output, opt->plan, best->outputs);
    if (!st.isOk()) return fail(st);
  }
  if (a.json) {
    nlohmann::json j = baseJson(a.model, "cpu");
    j["policy"] = opt->policy;
    j.update(precisionJson(*precision, opt->precision));
    j["patterns"] = !a.noPatterns;
    j["batch"] = a.batch;
    j["lambda_m"] = a.lambdaM;
    j["threads"] = threads;
    j["latency_ms"] = best->medianMs;
    j["latency_kind"] = "measured (median, cpu backend, this host)";
    j["baseline_latency_ms"] = base->medianMs;
    j["spread_pct"] = best->spreadPct();
    j["baseline_spread_pct"] = base->spreadPct();
    j["peak_memory_bytes"] = best->peakBytes;
    j["baseline_peak_memory_bytes"] = base->peakBytes;
    j["optimize_seconds"] = opt->optimizeSeconds;
    j["modelled_latency_ms"] = opt->final.latencyS * 1e3;
    j["baseline_modelled_latency_ms"] = opt->baseline.latencyS * 1e3;
    j["profile"] = t->hw.name + (t->hw.isMeasured() ? " (measured)" : " (datasheet)");
    j["max_abs_diff_vs_unoptimized"] = maxDiff;
    j["optimized"] = timingJson(*best);
    j["unoptimized"] = timingJson(*base);
    for (const Decision& d : opt->decisions) {
      j["decisions"].push_back({{"kind", actionKindName(d.action.kind)}, {"label", d.label},
                                {"gain_ms_modelled", (d.latencyBeforeS - d.latencyAfterS) * 1e3}});
    }
    if (a.breakdown) {
      auto bd = breakdowns(**backend, m->graph, opt->plan, a.policy, a, inputs);
      if (!bd.isOk()) return fail(bd.status().withContext("--breakdown"));
      j["breakdown"] = std::move(*bd);
    }
    std::cout << j.dump(2) << "\n";
    return 0;
  }
  std::printf("%s, batch %lld, %d threads, cpu backend (measured on this host)\n", a.model.c_str(),
              static_cast<long long>(a.batch), threads);
  std::printf("%-12s %10s %10s %8s %6s %10s\n", "plan", "median ms", "p10-p90", "spread", "runs", "peak MB");
  for (const auto& [name, tm] : {std::pair<const char*, const Timing*>{"unoptimized", &*base}, {a.policy.c_str(), &*best}}) {
    std::printf("%-12s %10.3f %4.2f-%-5.2f %7.1f%% %6d %10.1f\n", name, tm->medianMs, tm->p10Ms, tm->p90Ms,
                tm->spreadPct(), tm->runs, tm->peakBytes / 1e6);
  }
  std::printf("speed-up %.2fx (measured); optimize %.3f s; %zu decisions; max |diff| vs unoptimized %.2e\n",
              base->medianMs / best->medianMs, opt->optimizeSeconds, opt->decisions.size(), maxDiff);
  if (!precision->lossless()) {
    std::printf("precision %s: output error %.3g measured against the f32 model (budget %.3g; %s)\n",
                precision->spec.c_str(), opt->precision.measuredError, precision->maxError,
                opt->precision.calibration.c_str());
  }
  if (a.breakdown) {
    auto bd = breakdowns(**backend, m->graph, opt->plan, a.policy, a, inputs);
    if (!bd.isOk()) return fail(bd.status().withContext("--breakdown"));
  }
  return 0;
}

}  // namespace

void addBench(CLI::App& app, int& exitCode) {
  auto args = std::make_shared<BenchArgs>();
  CLI::App* cmd = app.add_subcommand("bench", "time the unoptimized and the optimized plan on a backend");
  cmd->add_option("model", args->model, "model (.onnx, .mlir)")->required();
  cmd->add_option("--target", args->target, "backend: cpu or cuda");
  addPrecisionFlags(cmd, args->precision);
  cmd->add_option("--hw", args->hw, "CPU profile the plan is made for (default: the built-in x86-64)");
  cmd->add_option("--policy", args->policy, "policy of the optimized plan (default greedy)");
  cmd->add_option("--batch", args->batch,
                  "batch size of synthesized inputs and of plan pricing (default 256, or the batch a model was "
                  "exported with)")
      ->check(CLI::Range(int64_t{1}, kMaxBatch));
  cmd->add_option("--inputs", args->inputs, ".npz inputs (default: synthesized at --batch)");
  cmd->add_option("--threads", args->threads, "worker threads (default: all)")->check(CLI::Range(0, kMaxThreads));
  cmd->add_option("--seconds", args->seconds, "minimum timing time per plan (default 2)")->check(CLI::Range(0.0, 3600.0));
  cmd->add_option("--runs", args->minRuns, "minimum timed runs per plan (default 10)")->check(CLI::Range(1, 1000000));
  cmd->add_option("--output", args->output, ".npz to write the optimized plan's outputs to");
  cmd->add_flag("--json", args->json, "print one JSON object");
  cmd->add_option("--lambda-m", args->lambdaM,
                  "weight of peak memory in the reward (default 0.1): for the plan, and for the cuda backend's "
                  "choice of library workspace")
      ->check(CLI::NonNegativeNumber);
  cmd->add_flag("--no-patterns", args->noPatterns,
                "cpu: import without recognising Interaction / FM / CIN (what a model no recogniser lifts costs)");
  cmd->add_flag("--breakdown", args->breakdown,
                "also time each plan kernel by kernel and print where the time goes (measured)");
  cmd->callback([args, &exitCode] { exitCode = runBench(*args); });
}

}  // namespace cagr::tools
