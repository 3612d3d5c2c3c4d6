// cagr-profile-cuda: a standalone binary (static CUDA runtime, cuBLAS loaded
// at run time) that measures the GPU it runs on and writes a "measured"
// hardware profile, or the held-out validation set.
//
//   cagr-profile-cuda -o hw.json [--quick] [--budget S] [--quiet]
//   cagr-profile-cuda --validate -o v.json [--quick] [--budget S] [--quiet]
//   cagr-profile-cuda --self-test      (the profile fit on synthetic timings; no GPU needed)
//
// Progress bar on stderr; a summary on stdout, every figure labelled
// "measured on <GPU>". Exit status: 0 ok, 1 failure (including "no CUDA
// device found"), 2 bad usage.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "hw/cuda/profiler_cuda.h"
#include "hw/cuda/results_cuda.h"
#include "hw/progress_bar.h"

namespace {

constexpr const char* kUsage =
    "usage: cagr-profile-cuda -o hw.json [--quick] [--budget S] [--quiet]\n"
    "       cagr-profile-cuda --validate -o validate.json [--quick] [--budget S] [--quiet]\n"
    "  -o, --output PATH  write the measured profile (or the validation records) here\n"
    "  --quick            fewer shapes and samples (about 20 s)\n"
    "  --budget S         time budget in seconds for the full run (default 90)\n"
    "  --validate         time held-out kernels and shapes instead of fitting a profile\n"
    "  --quiet            no progress bar\n"
    "  --self-test        check the profile fit on synthetic timings (no GPU needed) and exit\n";

struct Args {
  std::string out;
  bool quick = false;
  bool validate = false;
  bool quiet = false;
  double budget = 90;
};

/// Parses argv; returns false (and prints why) on bad usage.
bool parseArgs(int argc, char** argv, Args* a) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&](const char* name) -> const char* {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "cagr-profile-cuda: %s needs a value\n%s", name, kUsage);
        return nullptr;
      }
      return argv[++i];
    };
    if (arg == "-o" || arg == "--output") {
      const char* v = value("-o");
      if (v == nullptr) return false;
      a->out = v;
    } else if (arg == "--budget") {
      const char* v = value("--budget");
      if (v == nullptr) return false;
      char* end = nullptr;
      a->budget = std::strtod(v, &end);
      if (end == v || *end != '\0' || !(a->budget > 0)) {
        std::fprintf(stderr, "cagr-profile-cuda: --budget '%s' must be a positive number of seconds\n", v);
        return false;
      }
    } else if (arg == "--quick") {
      a->quick = true;
    } else if (arg == "--validate") {
      a->validate = true;
    } else if (arg == "--quiet") {
      a->quiet = true;
    } else if (arg == "--self-test") {
      const cagr::Status s = cagr::cuda::assemblySelfTest();
      std::fprintf(s.isOk() ? stdout : stderr, "cagr-profile-cuda --self-test: %s\n",
                   s.isOk() ? "ok" : s.message().c_str());
      std::exit(s.isOk() ? 0 : 1);
    } else if (arg == "-h" || arg == "--help") {
      std::fputs(kUsage, stdout);
      std::exit(0);
    } else {
      std::fprintf(stderr, "cagr-profile-cuda: unknown argument '%s'\n%s", arg.c_str(), kUsage);
      return false;
    }
  }
  return true;
}

using cagr::hw::ProgressBar;

int fail(const cagr::Status& s) {
  const std::string& m = s.message();
  const bool prefixed = m.rfind("cagr-profile-cuda:", 0) == 0;
  std::fprintf(stderr, "%s%s\n", prefixed ? "" : "cagr-profile-cuda: ", m.c_str());
  return 1;
}

const cagr::KernelEfficiency* find(const cagr::HardwareProfile& p, const char* kernel, const char* cls) {
  for (const cagr::KernelEfficiency& e : p.efficiencies)
    if (e.kernel == kernel && e.shapeClass == cls) return &e;
  return nullptr;
}

double bytesOf(const cagr::HardwareProfile& p, const char* kernel, const char* cls) {
  const cagr::KernelEfficiency* e = find(p, kernel, cls);
  return e != nullptr ? e->bytesPerS : 0;
}

void printSummary(const cagr::HardwareProfile& p, const cagr::ProfilerRunInfo& info, const Args& a) {
  const std::string on = "measured on " + p.measuredOn;
  std::printf("cagr-profile-cuda: %s, %s, %.1f s (%s mode)\n", p.name.c_str(), on.c_str(), info.seconds,
              a.quick ? "quick" : "full");
  for (const char* dtype : {"fp32", "tf32", "bf16"}) {
    auto it = p.peakFlops.find(dtype);
    if (it != p.peakFlops.end())
      std::printf("  peak %-5s %10.1f TFLOP/s  (best GEMM)\n", dtype, it->second.value / 1e12);
  }
  for (const auto& [kernel, flops] : info.bestFlopsPerKernel) {
    std::printf("    %-18s %9.1f TFLOP/s  best shape %s\n", kernel.c_str(), flops / 1e12,
                info.bestShapePerKernel.at(kernel).c_str());
  }
  for (const cagr::MemoryLevel& m : p.memory) {
    std::printf("  %-6s %9.1f MiB %9.1f GB/s\n", m.name.c_str(), m.sizeBytes.value / (1024.0 * 1024),
                m.bandwidth.value / 1e9);
  }
  std::printf("  memcpy D2D      %9.1f GB/s (read + write)\n", info.dramCopyBytesPerS / 1e9);
  std::printf("  gather          %9.1f GB/s uniform, %.1f GB/s zipf (own.gather)\n",
              bytesOf(p, "own.gather", "gather.uniform") / 1e9, bytesOf(p, "own.gather", "gather.zipf") / 1e9);
  std::printf("  eltwise         %9.1f GB/s (own.eltwise), reduce rows %.1f GB/s (own.reduce)\n",
              bytesOf(p, "own.eltwise", "eltwise.stream") / 1e9, bytesOf(p, "own.reduce", "reduce.rows") / 1e9);
  const cagr::KernelEfficiency* graph = find(p, "cuda.graph_node", "launch.graph");
  std::printf("  launch          %9.2f us per kernel launch; CUDA Graph %.2f us per node\n",
              p.launchLatencyS.value * 1e6, graph != nullptr ? graph->overheadS * 1e6 : 0.0);
  std::printf("  run-to-run      %9.1f %% (median (p90-p10)/median)\n", p.traits.runToRunVariance * 100);
  std::printf("  all figures %s\n", on.c_str());
  if (!a.out.empty()) std::printf("wrote %s\n", a.out.c_str());
}

int runProfile(const Args& a, const cagr::ProfilerOptions& opts, ProgressBar& bar) {
  cagr::ProfilerRunInfo info;
  auto p = cagr::cuda::profileCuda(
      opts, [&bar](double f, const std::string& w) { bar.update(f, w); }, &info);
  bar.finish();
  if (!p.isOk()) return fail(p.status());
  if (!a.out.empty()) {
    cagr::Status s = cagr::saveProfile(*p, a.out);
    if (!s.isOk()) return fail(s);
  }
  printSummary(*p, info, a);
  return 0;
}

int runValidate(const Args& a, const cagr::ProfilerOptions& opts, ProgressBar& bar) {
  auto run = cagr::cuda::validateCuda(opts, [&bar](double f, const std::string& w) { bar.update(f, w); });
  bar.finish();
  if (!run.isOk()) return fail(run.status());
  const std::string text = cagr::hw::validationToJson(*run);
  if (a.out.empty()) {  // the records on stdout, nothing else
    std::fputs(text.c_str(), stdout);
    return 0;
  }
  std::ofstream out(a.out, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) return fail(cagr::notFound("cannot write '" + a.out + "'"));
  std::printf("cagr-profile-cuda --validate: %zu held-out records, measured on %s\n", run->records.size(),
              run->measuredOn.c_str());
  for (const cagr::hw::ValidationRecord& r : run->records) {
    std::printf("  %-18s %-14s %-44s %10.2f us  spread %4.1f%%\n", r.kernel.c_str(), r.shapeClass.c_str(),
                r.config.substr(0, 44).c_str(), r.measuredS * 1e6, 100 * r.spread);
  }
  std::printf("wrote %s\n", a.out.c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Args a;
  if (!parseArgs(argc, argv, &a)) return 2;
  // Fail fast and clearly on a machine without a GPU or driver.
  auto dev = cagr::cuda::probeDevice();
  if (!dev.isOk()) return fail(dev.status());
  cagr::ProfilerOptions opts;
  opts.quick = a.quick;
  opts.budgetSeconds = a.budget;
  ProgressBar bar(!a.quiet);
  return a.validate ? runValidate(a, opts, bar) : runProfile(a, opts, bar);
}
