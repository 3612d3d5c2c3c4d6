// cagr profile --target cpu -o hw.json: measures this machine with
// micro-benchmarks (progress bar on stderr) and writes a "measured"
// hardware profile; prints a short summary, every figure labelled
// "measured on <host>" (or "computed" for the theoretical peak).
// cagr profile --target cpu --validate -o v.json: times held-out kernels and
// shapes instead (cagr-validation-1 records for cagr_bench_kernel_accuracy).
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <iostream>

#include "cagr/backend.h"
#include "cagr/hw.h"
#include "hw/cuda_probes.h"
#include "hw/profiler.h"
#include "tools/common.h"
#include "hw/progress_bar.h"

namespace cagr::tools {
namespace {

struct ProfileArgs {
  std::string target = "cpu";
  std::string out;
  std::string merge;  // --target cuda: the cagr-profile-cuda profile the probes are added to
  double probeSeconds = 0.2;
  bool quick = false;
  bool validate = false;
  double budget = 90;
  int threads = 0;
  bool json = false;
  bool quiet = false;
};

using hw::ProgressBar;

double effBytes(const HardwareProfile& p, const char* kernel, const char* cls) {
  for (const KernelEfficiency& e : p.efficiencies)
    if (e.kernel == kernel && e.shapeClass == cls) return e.bytesPerS;
  return 0;
}

nlohmann::json summaryJson(const HardwareProfile& p, const ProfilerRunInfo& info, const ProfileArgs& a) {
  nlohmann::json j = baseJson("none", a.target);
  j["profile"] = {{"name", p.name},
                  {"provenance", p.provenance},
                  {"measured_on", p.measuredOn},
                  {"date", p.date},
                  {"output", a.out.empty() ? nlohmann::json(nullptr) : nlohmann::json(a.out)},
                  {"quick", a.quick},
                  {"seconds", info.seconds},
                  {"threads", info.threads}};
  j["peak_fp32_flops"] = {{"value", p.peak("fp32")}, {"kind", "measured"}, {"source", p.peakFlops.at("fp32").source}};
  j["theoretical_peak_fp32_flops"] = {
      {"value", info.theoreticalPeakFlops}, {"kind", "computed"}, {"source", info.theoreticalPeakSource}};
  for (const auto& [kernel, flops] : info.bestFlopsPerKernel) {
    j["gemm_best_flops"][kernel] = {
        {"value", flops}, {"kind", "measured"}, {"shape_mxkxn", info.bestShapePerKernel.at(kernel)}};
  }
  for (const MemoryLevel& m : p.memory) {
    j["memory"].push_back({{"name", m.name},
                           {"size_bytes", m.sizeBytes.value},
                           {"bandwidth", m.bandwidth.value},
                           {"kind", "measured"},
                           {"source", m.bandwidth.source}});
  }
  j["dram_bytes_per_s"] = {{"value", p.dramBandwidth()}, {"kind", "measured"}, {"benchmark", "triad"}};
  j["dram_copy_bytes_per_s"] = {{"value", info.dramCopyBytesPerS}, {"kind", "measured"}, {"benchmark", "copy"}};
  j["gather_bytes_per_s"] = {{"uniform", effBytes(p, "own.gather", "gather.uniform")},
                             {"zipf", effBytes(p, "own.gather", "gather.zipf")},
                             {"kind", "measured"}};
  j["launch_latency_s"] = {
      {"value", p.launchLatencyS.value}, {"kind", "measured"}, {"source", p.launchLatencyS.source}};
  j["run_to_run_variance"] = p.traits.runToRunVariance;
  return j;
}

void printSummary(const HardwareProfile& p, const ProfilerRunInfo& info, const ProfileArgs& a) {
  const std::string on = "measured on " + p.measuredOn;
  std::printf("cagr profile: %s, %s, %d threads, %.1f s (%s mode)\n", p.name.c_str(), on.c_str(), info.threads,
              info.seconds, a.quick ? "quick" : "full");
  std::printf("  peak fp32    %8.1f GFLOP/s  %s (best GEMM)\n", p.peak("fp32") / 1e9, on.c_str());
  if (info.theoreticalPeakFlops > 0) {
    std::printf(
        "  theoretical  %8.1f GFLOP/s  computed from /proc/cpuinfo cpu MHz (boost may exceed it), not measured\n",
        info.theoreticalPeakFlops / 1e9);
  }
  for (const auto& [kernel, flops] : info.bestFlopsPerKernel) {
    std::printf("    %-20s %8.1f GFLOP/s  %s (best shape %s, MxKxN)\n", kernel.c_str(), flops / 1e9, on.c_str(),
                info.bestShapePerKernel.at(kernel).c_str());
  }
  for (const MemoryLevel& m : p.memory) {
    std::printf("  %-6s %9.0f KiB %8.1f GB/s    %s\n", m.name.c_str(), m.sizeBytes.value / 1024,
                m.bandwidth.value / 1e9, on.c_str());
  }
  std::printf("  DRAM copy    %8.1f GB/s     %s\n", info.dramCopyBytesPerS / 1e9, on.c_str());
  std::printf("  gather       %8.2f GB/s     uniform, %.2f GB/s zipf; %s (own.gather)\n",
              effBytes(p, "own.gather", "gather.uniform") / 1e9, effBytes(p, "own.gather", "gather.zipf") / 1e9,
              on.c_str());
  std::printf("  launch       %8.2f us       %s (oneDNN 1x1x1 matmul dispatch)\n", p.launchLatencyS.value * 1e6,
              on.c_str());
  std::printf("  run-to-run   %8.1f %%        %s (median (p90-p10)/median)\n", p.traits.runToRunVariance * 100,
              on.c_str());
  if (!a.out.empty()) std::printf("wrote %s\n", a.out.c_str());
}

/// Without -o, the records go to stdout (nothing else); with -o, a table
/// (or, with --json, the records) follows the file.
int runValidate(const ProfileArgs& a, const ProfilerOptions& opts) {
  ProgressBar bar(!a.quiet);
  auto run = validateCpu(opts, [&bar](double f, const std::string& what) { bar.update(f, what); });
  bar.finish();
  if (!run.isOk()) return fail(run.status());
  const std::string text = hw::validationToJson(*run);
  if (a.out.empty() || a.json) std::fputs(text.c_str(), stdout);
  if (a.out.empty()) return 0;
  std::ofstream out(a.out, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) return fail(notFound("cagr profile --validate: cannot write '" + a.out + "'"));
  if (a.json) return 0;
  std::printf("cagr profile --target cpu --validate: %zu held-out records, measured on %s\n", run->records.size(),
              run->measuredOn.c_str());
  for (const hw::ValidationRecord& r : run->records) {
    std::printf("  %-18s %-14s %-44s %12.2f us  spread %5.1f%%\n", r.kernel.c_str(), r.shapeClass.c_str(),
                r.config.substr(0, 44).c_str(), r.measuredS * 1e6, 100 * r.spread);
  }
  std::printf("wrote %s\n", a.out.c_str());
  return 0;
}

/// --target cuda: the CUDA backend probes (cuda_probes.h) on this machine's
/// GPU, added to --merge BASE (a cagr-profile-cuda profile).
int runCudaProfile(const ProfileArgs& a) {
  {  // no GPU (or a build without the CUDA backend): fail before anything else
    auto backend = makeBackend("cuda");
    std::string why = backend.isOk() ? (*backend)->capabilities().note : backend.status().message();
    if (!backend.isOk() || !(*backend)->capabilities().available) {
      return fail(unsupported("cagr profile --target cuda: this build has no CUDA support on this machine (" + why +
                              ")"));
    }
  }
  if (a.validate) return fail(unsupported("cagr profile --target cuda --validate: use cagr-profile-cuda --validate"));
  if (a.merge.empty()) {
    return fail(invalidArgument(
        "cagr profile --target cuda: --merge BASE.json is required (the profile cagr-profile-cuda measured on this "
        "GPU: GEMM curves, memory, launch); the backend probes are added to it"));
  }
  if (a.out.empty()) return fail(invalidArgument("cagr profile --target cuda: -o OUT.json is required"));
  auto base = loadProfile(a.merge);  // read first: a bad BASE fails before minutes of probing
  if (!base.isOk()) return fail(base.status().withContext("--merge"));
  ProgressBar bar(!a.quiet);
  auto probes = hw::runCudaProbes(a.quick, a.probeSeconds, [&bar](double f, const std::string& w) { bar.update(f, w); });
  bar.finish();
  if (!probes.isOk()) return fail(probes.status());
  auto merged = hw::mergeCudaProbes(*base, *probes);
  if (!merged.isOk()) return fail(merged.status());
  Status s = saveProfile(*merged, a.out);
  if (!s.isOk()) return fail(s);
  if (a.json) {
    nlohmann::json j = baseJson("none", "cuda");
    j["profile"] = {{"name", merged->name}, {"base", a.merge}, {"output", a.out}, {"device", probes->device}};
    for (const hw::ProbePoint& p : probes->probes.points) {
      j["points"].push_back({{"kernel", p.kernel}, {"shape_class", p.shapeClass}, {"what", p.what}, {"bytes", p.bytes},
                             {"flops", p.flops}, {"seconds", p.seconds}, {"kind", "measured"}});
    }
    j["graph_step_floor_s"] = {{"value", probes->floor.graphPerKernelS}, {"kind", "measured"}};
    j["single_step_floor_s"] = {{"value", probes->floor.singleStepS}, {"kind", "measured"}};
    std::cout << j.dump(2) << "\n";
    return 0;
  }
  std::printf("cagr profile --target cuda: %zu probe points on %s (measured: CUDA events per step)\n",
              probes->probes.points.size(), probes->device.c_str());
  for (const hw::ProbePoint& p : probes->probes.points) {
    std::printf("  %-18s %-17s %10.2f us  %s\n", p.kernel.c_str(), p.shapeClass.c_str(), p.seconds * 1e6,
                p.what.c_str());
  }
  std::printf("  CUDA-graph per-kernel floor %.2f us, single step %.2f us, one-kernel graph %.2f us (measured on %s)\n",
              probes->floor.graphPerKernelS * 1e6, probes->floor.singleStepS * 1e6,
              probes->floor.graphOneKernelS * 1e6, probes->device.c_str());
  std::printf("wrote %s (%s + backend probes)\n", a.out.c_str(), a.merge.c_str());
  return 0;
}

int runProfile(const ProfileArgs& a) {
  if (a.target == "cuda") return runCudaProfile(a);
  if (a.target != "cpu") {
    return fail(invalidArgument("cagr profile --target '" + a.target + "': unknown target (expected cpu or cuda)"));
  }
  ProfilerOptions opts;
  opts.quick = a.quick;
  opts.budgetSeconds = a.budget;
  opts.threads = a.threads;
  if (a.validate) return runValidate(a, opts);
  ProgressBar bar(!a.quiet);
  ProfilerRunInfo info;
  auto p = profileCpu(
      opts, [&bar](double f, const std::string& what) { bar.update(f, what); }, &info);
  bar.finish();
  if (!p.isOk()) return fail(p.status());
  if (!a.out.empty()) {
    Status s = saveProfile(*p, a.out);
    if (!s.isOk()) return fail(s);
  }
  if (a.json) {
    std::cout << summaryJson(*p, info, a).dump(2) << "\n";
  } else {
    printSummary(*p, info, a);
  }
  return 0;
}

}  // namespace

void addProfile(CLI::App& app, int& exitCode) {
  auto args = std::make_shared<ProfileArgs>();
  CLI::App* cmd = app.add_subcommand("profile", "measure this machine and write a hardware profile (JSON)");
  cmd->add_option("--target", args->target,
                  "cpu, or cuda (CAGR's CUDA backend probes added to --merge BASE.json from cagr-profile-cuda)")
      ->required();
  cmd->add_option("--merge", args->merge,
                  "--target cuda: the cagr-profile-cuda profile of this GPU the backend probes are added to");
  cmd->add_option("--probe-seconds", args->probeSeconds,
                  "--target cuda: timing budget per probe point in seconds (default 0.2)");
  cmd->add_option("-o,--output", args->out, "write the measured profile here (e.g. hw.json)");
  cmd->add_flag("--quick", args->quick, "fewer shapes and samples (about 15 s; with --validate about 3 s)");
  cmd->add_flag("--validate", args->validate,
                "time held-out kernels and shapes (none used by the profile fit) and write cagr-validation-1 "
                "records instead of a profile");
  cmd->add_option("--budget", args->budget, "time budget in seconds for the full run (default 90)");
  cmd->add_option("--threads", args->threads, "threads to benchmark with (default: all online CPUs)")
      ->check(CLI::Range(0, kMaxThreads));
  cmd->add_flag("--json", args->json, "print the summary as one JSON object");
  cmd->add_flag("--quiet", args->quiet, "no progress bar");
  cmd->callback([args, &exitCode] { exitCode = runProfile(*args); });
}

}  // namespace cagr::tools
