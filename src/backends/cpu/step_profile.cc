// Per-kernel timing of a compiled CPU plan: wall time (steady clock) and the
// calling thread's CPU time around each step, over repeated passes.
#include "backends/cpu/step_profile.h"

#include <time.h>

#include <algorithm>
#include <chrono>

namespace cagr::cpu {
namespace {

double threadCpuMs() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) * 1e-6;
}

double median(std::vector<double> xs) {
  std::sort(xs.begin(), xs.end());
  return xs[xs.size() / 2];
}

}  // namespace

StatusOr<std::vector<KernelTiming>> timeSteps(const std::vector<std::unique_ptr<Step>>& steps,
                                              const std::vector<std::vector<NodeId>>& members, const RunContext& ctx,
                                              int repeats) {
  if (repeats < 1) return invalidArgument("profile: repeats must be at least 1, got " + std::to_string(repeats));
  if (members.size() != steps.size()) return internalError("profile: one member list per step expected");
  for (const auto& step : steps) CAGR_RETURN_IF_ERROR(step->run(ctx).withContext(step->kernelName()));  // warm-up
  std::vector<std::vector<double>> wall(steps.size()), cpu(steps.size());
  for (int r = 0; r < repeats; ++r) {
    for (size_t s = 0; s < steps.size(); ++s) {
      double c0 = threadCpuMs();
      auto t0 = std::chrono::steady_clock::now();
      CAGR_RETURN_IF_ERROR(steps[s]->run(ctx).withContext(steps[s]->kernelName()));
      wall[s].push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
      cpu[s].push_back(threadCpuMs() - c0);
    }
  }
  std::vector<KernelTiming> out;
  for (size_t s = 0; s < steps.size(); ++s) {
    KernelTiming k;
    k.kernel = steps[s]->kernelName();
    k.nodes = members[s];
    k.medianMs = median(wall[s]);
    k.minMs = *std::min_element(wall[s].begin(), wall[s].end());
    k.cpuMs = median(cpu[s]);
    out.push_back(std::move(k));
  }
  return out;
}

}  // namespace cagr::cpu
