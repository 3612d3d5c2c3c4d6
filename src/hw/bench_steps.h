// The plumbing both CPU runs share (`cagr profile --target cpu` and its
// held-out `--validate` mode): a run is a list of timed steps, planned
// against a time budget and executed with progress reports, on the thread
// count the options ask for. Defined in profiler_cpu.cc.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "cagr/status.h"
#include "hw/microbench.h"
#include "hw/profiler.h"

namespace cagr::hw {

/// One benchmark of a run: its progress label, its timing plan, and what it does.
struct BenchStep {
  std::string what;
  TimingPlan plan;
  std::function<Status(const TimingPlan&)> run;
};

/// The timing plan of a step that aims for `targetS` seconds.
TimingPlan stepPlan(bool quick, double targetS);

/// Runs the steps in order, reporting progress by planned time. Past 0.85 of
/// `budgetS` (counted from `start`, nowSeconds()) every remaining step still
/// runs, at its minimum sample count. Errors carry "<tool>: <step>".
Status runSteps(std::vector<BenchStep>& steps, double budgetS, double start, const ProfileProgress& progress,
                const std::string& tool);

/// invalidArgument ("<tool>: --budget ...", "<tool>: --threads ...") for bad options.
Status checkProfilerOptions(const ProfilerOptions& opts, const std::string& tool);

/// Threads a run uses (opts.threads, else all online CPUs); sets the OpenMP
/// and OpenBLAS thread counts to it (process-wide).
int applyKernelThreads(const ProfilerOptions& opts, const MachineInfo& machine);

/// 1-minute load average from /proc/loadavg; -1 if unreadable.
double loadAverage();

}  // namespace cagr::hw
