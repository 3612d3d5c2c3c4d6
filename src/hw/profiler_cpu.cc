// profileCpu: plans the micro-benchmarks against the time budget, runs them
// with progress reports, and hands the results to the profile assembly
// (profiler_assemble.cc). Also the step plumbing (bench_steps.h) that the
// held-out run (validate_cpu.cc) shares.
#include <algorithm>
#include <cmath>
#include <fstream>

#include "hw/bench_steps.h"
#include "hw/microbench.h"
#include "hw/own_kernels.h"
#include "hw/profiler.h"
#include "hw/profiler_results.h"

namespace cagr {
namespace hw {

TimingPlan stepPlan(bool quick, double targetS) {
  TimingPlan p;
  p.targetS = targetS;
  p.minSamples = 3;
  p.maxSamples = quick ? 5 : 15;
  p.minSampleS = quick ? 5e-4 : 1e-3;
  return p;
}

double loadAverage() {
  std::ifstream in("/proc/loadavg");
  double v = -1;
  if (in) in >> v;
  return v;
}

Status runSteps(std::vector<BenchStep>& steps, double budgetS, double start, const ProfileProgress& progress,
                const std::string& tool) {
  double total = 0;
  for (const BenchStep& s : steps) total += std::max(s.plan.targetS, 0.05);
  double done = 0;
  for (BenchStep& s : steps) {
    if (progress) progress(std::min(done / total, 1.0), s.what);
    TimingPlan plan = s.plan;
    // Over budget: keep every benchmark (each class needs samples) but at
    // the minimum sample count.
    if (nowSeconds() - start > 0.85 * budgetS) plan.targetS = 0;
    CAGR_RETURN_IF_ERROR(s.run(plan).withContext(tool + ": " + s.what));
    done += std::max(s.plan.targetS, 0.05);
  }
  if (progress) progress(1.0, "done");
  return Status::ok();
}

Status checkProfilerOptions(const ProfilerOptions& opts, const std::string& tool) {
  if (!(opts.budgetSeconds > 0) || !std::isfinite(opts.budgetSeconds)) {
    return invalidArgument(tool + ": --budget must be a positive number of seconds");
  }
  if (opts.threads < 0) return invalidArgument(tool + ": --threads must be >= 0");
  return Status::ok();
}

int applyKernelThreads(const ProfilerOptions& opts, const MachineInfo& machine) {
  const int threads = opts.threads > 0 ? opts.threads : machine.onlineCpus;
  setKernelThreads(threads);
  useThreadCpuTime(threads == 1);  // one thread: its CPU time is the kernel's time, robust to other load
  return threads;
}

}  // namespace hw

namespace {

using hw::BenchStep;
using hw::GemmKernel;
using hw::TimingPlan;

TimingPlan planFor(bool quick, double targetS) {
  return hw::stepPlan(quick, targetS);
}

/// GEMMs grouped by kernel (one library's threads at a time), then the
/// 1x1x1 dispatch probes and the empty parallel region.
void planGemm(std::vector<BenchStep>& steps, hw::ProfileResults& r, hw::GemmBuffers& buf, bool quick, double gemmS,
              double launchS) {
  const std::vector<hw::GemmShape> shapes = hw::gemmShapes(quick);
  const std::vector<GemmKernel> kernels = hw::allGemmKernels();
  const double perGemm = gemmS / static_cast<double>(shapes.size() * kernels.size());
  for (GemmKernel k : kernels) {
    for (const hw::GemmShape& s : shapes) {
      steps.push_back({"gemm " + s.label() + " " + hw::gemmKernelName(k), planFor(quick, perGemm),
                       [&r, &buf, k, s](const TimingPlan& plan) -> Status {
                         CAGR_ASSIGN_OR_RETURN(hw::GemmResult g, hw::benchGemm(k, s, buf, plan));
                         r.gemm.push_back(g);
                         return Status::ok();
                       }});
    }
  }
  const double perProbe = launchS / static_cast<double>(kernels.size() + 1);
  for (GemmKernel k : kernels) {
    steps.push_back({std::string("launch 1x1x1 ") + hw::gemmKernelName(k), planFor(quick, perProbe),
                     [&r, &buf, k](const TimingPlan& plan) -> Status {
                       CAGR_ASSIGN_OR_RETURN(hw::GemmResult g, hw::benchGemm(k, {1, 1, 1}, buf, plan));
                       r.probes[hw::gemmKernelName(k)] = g.t;
                       return Status::ok();
                     }});
  }
  steps.push_back({"launch omp parallel region", planFor(quick, perProbe), [&r](const TimingPlan& plan) {
                     r.ompRegion = hw::timeIt([] { hw::ownEmptyParallel(); }, plan);
                     return Status::ok();
                   }});
}

/// Buffer setup, gathers, the streaming kernel per cache level and in DRAM,
/// STREAM copy/triad and the row reduction.
void planMemory(std::vector<BenchStep>& steps, hw::ProfileResults& r, std::unique_ptr<hw::MemoryBench>& mem, bool quick,
                double memS) {
  steps.push_back({"setup memory buffer", planFor(quick, 0), [&r, &mem, quick](const TimingPlan&) -> Status {
                     CAGR_ASSIGN_OR_RETURN(mem, hw::MemoryBench::create(r.machine.llcBytes(), quick));
                     r.bufferBytes = mem->bufferBytes();
                     return Status::ok();
                   }});
  std::vector<hw::GatherConfig> gathers;
  for (bool zipf : {false, true})
    for (int64_t dim : {16, 64})
      for (int64_t pooling : {1, 20}) gathers.push_back({zipf, dim, pooling});
  const double per = memS / static_cast<double>(gathers.size() + r.machine.caches.size() + 4);
  for (const hw::GatherConfig& c : gathers) {
    steps.push_back({"gather " + c.label(), planFor(quick, per), [&r, &mem, c](const TimingPlan& plan) {
                       r.gathers.emplace_back(c, mem->gather(c, plan));
                       return Status::ok();
                     }});
  }
  for (const hw::CacheLevel& c : r.machine.caches) {
    steps.push_back({"stream L" + std::to_string(c.level), planFor(quick, per), [&r, &mem, c](const TimingPlan& plan) {
                       r.caches.emplace_back(c, mem->eltwise(c.totalBytes / 2, plan));
                       return Status::ok();
                     }});
  }
  steps.push_back({"stream DRAM relu(a+b)", planFor(quick, per), [&r, &mem](const TimingPlan& plan) {
                     r.stream = mem->eltwise(0, plan);
                     return Status::ok();
                   }});
  steps.push_back({"stream DRAM copy", planFor(quick, per), [&r, &mem](const TimingPlan& plan) {
                     r.copy = mem->copy(plan);
                     return Status::ok();
                   }});
  steps.push_back({"stream DRAM triad", planFor(quick, per), [&r, &mem](const TimingPlan& plan) {
                     r.triad = mem->triad(plan);
                     return Status::ok();
                   }});
  steps.push_back({"reduce rows", planFor(quick, per), [&r, &mem](const TimingPlan& plan) {
                     r.reduce = mem->rowSums(plan);
                     return Status::ok();
                   }});
}

/// CAGR's own CPU backend on generated plans (backend_probes.h): 48 probe
/// plans (quick: 16), each timed for a share of `probeS`.
void planBackendProbes(std::vector<BenchStep>& steps, hw::ProfileResults& r, bool quick, double probeS) {
  steps.push_back(
      {"backend probes (cpu backend plans)", planFor(quick, probeS), [&r, quick](const TimingPlan& plan) -> Status {
         const double each = std::max(0.02, plan.targetS / (quick ? 16 : 48));
         CAGR_ASSIGN_OR_RETURN(r.backend, hw::runBackendProbes(r.threads, quick, each));
         return Status::ok();
       }});
}

}  // namespace

StatusOr<HardwareProfile> profileCpu(const ProfilerOptions& opts, const ProfileProgress& progress,
                                     ProfilerRunInfo* info) {
  CAGR_RETURN_IF_ERROR(hw::checkProfilerOptions(opts, "cagr profile"));
  const double start = hw::nowSeconds();
  hw::ProfileResults r;
  r.machine = hw::readMachineInfo();
  r.quick = opts.quick;
  r.threads = hw::applyKernelThreads(opts, r.machine);
  r.loadAtStart = hw::loadAverage();

  // Planned benchmark time is half the budget; warm-ups, buffer set-up and
  // the calls that cannot be cut below three samples take the rest.
  const double budget = opts.quick ? std::min(opts.budgetSeconds, 10.0) : opts.budgetSeconds;
  const double planned = 0.5 * budget;
  hw::GemmBuffers gemmBuf = hw::makeGemmBuffers(hw::gemmShapes(opts.quick));
  std::unique_ptr<hw::MemoryBench> mem;
  std::vector<BenchStep> steps;
  planGemm(steps, r, gemmBuf, opts.quick, 0.55 * planned, 0.1 * planned);
  planMemory(steps, r, mem, opts.quick, 0.25 * planned);
  planBackendProbes(steps, r, opts.quick, 0.1 * planned);
  CAGR_RETURN_IF_ERROR(hw::runSteps(steps, budget, start, progress, "cagr profile"));
  mem.reset();

  r.loadAtEnd = hw::loadAverage();
  r.seconds = hw::nowSeconds() - start;
  return hw::assembleProfile(r, info);
}

}  // namespace cagr
