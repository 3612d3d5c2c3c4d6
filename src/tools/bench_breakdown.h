// `cagr bench --breakdown`: where the time of a compiled plan goes, kernel
// by kernel (Executable::profile, measured) with each kernel's FLOPs from
// the op table (modelled counts), summed per kernel implementation.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "cagr/backend.h"

namespace cagr::tools {

/// Time of every kernel with the same implementation name, summed.
struct KernelShare {
  std::string kernel;
  int count = 0;             // kernels of the plan that run it
  double ms = 0, cpuMs = 0;  // summed medians per run (measured)
  double flops = 0;          // op-table FLOPs of their nodes (counted)
};

struct Breakdown {
  int repeats = 0;
  double totalMs = 0, totalCpuMs = 0;    // sums over all kernels
  std::vector<KernelTiming> kernels;     // run order
  std::vector<double> kernelFlops;       // parallel to kernels
  std::vector<KernelShare> byKernel;     // largest time first
};

/// Times each kernel of `exe` (compiled from `plan`) over `repeats` runs.
StatusOr<Breakdown> profileKernels(Executable& exe, const Graph& plan,
                                   const std::vector<std::pair<std::string, Tensor>>& inputs, int repeats);

nlohmann::json breakdownJson(const Breakdown& b, const Graph& plan);
/// A table of the `top` largest kernel implementations and their share.
void printBreakdown(const Breakdown& b, const std::string& title, size_t top);

}  // namespace cagr::tools
