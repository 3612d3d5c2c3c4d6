// cagr optimize MODEL --target PLATFORM --policy P -o plan.cagr: searches the
// legal rewrites of the model for the platform with a policy, prints every
// decision with its modelled gain, and writes the plan (MIR text with
// weights) that `cagr run` executes. All latencies here are modelled.
#include <cstdio>
#include <fstream>
#include <iostream>

#include "cagr/npz.h"
#include "cagr/policy.h"
#include "cagr/text.h"
#include "tools/bench_setup.h"
#include "support/files.h"
#include "tools/common.h"

namespace cagr::tools {
namespace {

struct OptimizeArgs {
  std::string model, target = "cpu", hw, policy = "greedy", output;
  int64_t batch = 0;  // 0: the model's fixed batch, else 256
  int beamWidth = 8;
  uint64_t seed = 1;
  double lambdaM = 0.1, lambdaC = 0.2;
  bool json = false;
  bool fp32 = false;
  PrecisionFlags precision;
  std::string calibration;  // .npz the precision budget is measured on
  double precisionBudget = 0;  // the effective --max-error, for the report
};

nlohmann::json decisionsJson(const OptimizeResult& r) {
  nlohmann::json out = nlohmann::json::array();
  for (const Decision& d : r.decisions) {
    std::vector<int> nodes(d.action.nodes.begin(), d.action.nodes.end());
    out.push_back({{"kind", actionKindName(d.action.kind)},
                   {"label", d.label},
                   {"nodes", nodes},
                   {"choice", d.action.choice},
                   {"gain_ms_modelled", (d.latencyBeforeS - d.latencyAfterS) * 1e3},
                   {"memory_delta_bytes_modelled", d.memoryAfter - d.memoryBefore},
                   {"reward", d.reward}});
  }
  return out;
}

void printHuman(const OptimizeArgs& a, const Target& t, const OptimizeResult& r) {
  std::printf("%s on %s (%s backend, profile %s), policy %s, batch %lld\n", a.model.c_str(), t.hw.name.c_str(),
              backendName(t.backend), t.hw.isMeasured() ? "measured" : "datasheet", r.policy.c_str(),
              static_cast<long long>(a.batch));
  std::printf("%-4s %-70s %12s %12s\n", "step", "decision", "gain ms", "latency ms");
  int step = 0;
  for (const Decision& d : r.decisions) {
    std::printf("%-4d %-70.70s %12.5f %12.5f\n", ++step, d.label.c_str(), (d.latencyBeforeS - d.latencyAfterS) * 1e3,
                d.latencyAfterS * 1e3);
  }
  double speedup = r.final.latencyS > 0 ? r.baseline.latencyS / r.final.latencyS : 0;
  std::printf("latency %.5f ms -> %.5f ms (%.2fx), peak memory %.2f MB -> %.2f MB — modelled on %s\n",
              r.baseline.latencyS * 1e3, r.final.latencyS * 1e3, speedup, r.baseline.peakMemoryBytes / 1e6,
              r.final.peakMemoryBytes / 1e6, t.hw.name.c_str());
  if (r.truncated) {
    std::printf("warning: the search stopped at its step limit after %zu decisions; the plan may be unfinished\n",
                r.decisions.size());
  }
  if (!r.precision.calibration.empty()) {
    std::printf("precision %s: output error %.3g measured against the f32 model (budget %.3g; %s)%s\n",
                a.precision.spec.c_str(), r.precision.measuredError, a.precisionBudget,
                r.precision.calibration.c_str(), r.precision.fellBackToF32 ? "; no plan within it: f32 kept" : "");
  }
  std::printf("optimize time %.3f s (measured, this host)%s%s\n", r.optimizeSeconds, a.output.empty() ? "" : "; wrote ",
              a.output.c_str());
}

int runOptimize(OptimizeArgs a) {
  auto m = loadModel(a.model);
  if (!m.isOk()) return fail(m.status());
  a.batch = batchOrDefault(m->graph, a.batch);
  auto t = resolveTarget(a.hw.empty() ? a.target : a.hw);
  if (!t.isOk()) return fail(t.status());
  if (a.fp32 && a.precision.spec != "fp32") return fail(invalidArgument("--fp32 and --precision " + a.precision.spec));
  auto precision = precisionOptions(a.precision, *t);
  if (!precision.isOk()) return fail(precision.status());
  PolicyOptions po;
  po.beamWidth = a.beamWidth;
  po.seed = a.seed;
  auto policy = makePolicy(a.policy, po);
  if (!policy.isOk()) return fail(policy.status());
  EnvConfig cfg;
  cfg.batch = a.batch;
  cfg.lambdaM = a.lambdaM;
  cfg.lambdaC = a.lambdaC;
  cfg.precision = *precision;
  a.precisionBudget = precision->maxError;
  if (!a.calibration.empty()) {
    if (precision->lossless()) return fail(invalidArgument("--calibration needs --precision other than fp32"));
    auto cal = readNpz(a.calibration);
    if (!cal.isOk()) return fail(cal.status());
    cfg.calibration = std::move(*cal);
  }
  auto r = optimize(m->graph, *t, **policy, cfg);
  if (!r.isOk()) return fail(r.status().withContext(a.model));
  if (!a.output.empty()) {
    Status w = a.output.ends_with(".cagr") ? savePlanFile(r->plan, a.output)
                                            : writeAtomically(a.output, [&](std::ofstream& out) {
                                                out << printGraph(r->plan, PrintOptions{false, "plan"});
                                              });
    if (!w.isOk()) return fail(w);
  }
  if (a.json) {
    nlohmann::json j = baseJson(a.model, t->hw.name);
    j["policy"] = r->policy;
    j["backend"] = backendName(t->backend);
    j["profile"] = t->hw.isMeasured() ? "measured" : "datasheet";
    j["batch"] = a.batch;
    j["latency_ms"] = r->final.latencyS * 1e3;
    j["latency_kind"] = "modelled";
    j["baseline_latency_ms"] = r->baseline.latencyS * 1e3;
    j["peak_memory_bytes"] = r->final.peakMemoryBytes;
    j["baseline_peak_memory_bytes"] = r->baseline.peakMemoryBytes;
    j["variance"] = r->final.variance;  // V_H, modelled: the reward's run-to-run term
    j["baseline_variance"] = r->baseline.variance;
    j["optimize_seconds"] = r->optimizeSeconds;
    j["decisions"] = decisionsJson(*r);
    j.update(precisionJson(cfg.precision, r->precision));
    j["truncated"] = r->truncated;
    if (!a.output.empty()) j["plan"] = a.output;
    std::cout << j.dump(2) << "\n";
  } else {
    printHuman(a, *t, *r);
  }
  return 0;
}

}  // namespace

void addOptimize(CLI::App& app, int& exitCode) {
  auto args = std::make_shared<OptimizeArgs>();
  CLI::App* cmd = app.add_subcommand("optimize", "choose rewrites for a platform and write a plan");
  cmd->add_option("model", args->model, "model (.onnx, .mlir)")->required();
  cmd->add_option("--target", args->target,
                  "platform: cpu, cuda, or a built-in profile (v100 a100 h100 h200 mi100 mi250x tpu-v3 tpu-v4 x86-64)");
  cmd->add_option("--hw", args->hw, "hardware profile JSON (e.g. from cagr profile); overrides --target");
  cmd->add_option("--policy", args->policy,
                  "none | random | greedy | beam | beam:K | exhaustive | rl | rl:PATH (trained policy, .rlp) | "
                  "rl+greedy[:PATH] (rl's plan refined by greedy steps)");
  cmd->add_option("--beam-width", args->beamWidth, "beam width for --policy beam (default 8)")
      ->check(CLI::Range(1, 256));
  cmd->add_option("--batch", args->batch, "batch size the plan is priced at (default 256, or the batch a model was exported with)")
      ->check(CLI::Range(int64_t{1}, kMaxBatch));
  cmd->add_option("--seed", args->seed, "seed of the random policy");
  cmd->add_option("--lambda-m", args->lambdaM, "weight of peak memory in the reward (default 0.1)");
  cmd->add_option("--lambda-c", args->lambdaC, "weight of run-to-run variance in the reward (default 0.2)");
  cmd->add_option("-o,--output", args->output, "plan file to write (.cagr)");
  cmd->add_flag("--fp32", args->fp32, "as --precision fp32 (the default)");
  addPrecisionFlags(cmd, args->precision);
  cmd->add_option("--calibration", args->calibration,
                  ".npz batch the --max-error budget is measured on (default: synthesized from the input types)");
  cmd->add_flag("--json", args->json, "print one JSON object");
  cmd->callback([args, &exitCode] { exitCode = runOptimize(*args); });
}

}  // namespace cagr::tools
