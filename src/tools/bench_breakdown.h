// `cagr bench --breakdown`: where the time of a compiled plan goes, kernel
// by kernel (Executable::profile, measured) with each kernel's FLOPs from
// the op table (modelled counts), summed per kernel implementation.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "cagr/backend.h"
#include "cagr/cost.h"

namespace cagr::tools {

/// Time of every kernel with the same implementation name, summed.
struct KernelShare {
  std::string kernel;
  int count = 0;             // kernels of the plan that run it
  double ms = 0, cpuMs = 0;  // summed medians per run (measured)
  double flops = 0;          // op-table FLOPs of their nodes (counted)
};

/// One kernel of the plan as the cost model prices it (a fusion group or a
/// single node), joined with the measured steps that run it: a step counts
/// towards the modelled kernel of its first node.
struct ModelledKernel {
  std::string kernel, shapeClass;  // priced as (modelled)
  double modelledMs = 0;           // modelled time, launch floor included
  double modelledLaunchMs = 0;     // its launch / floor share (modelled)
  double measuredMs = 0;           // sum of its steps' medians (measured)
  std::vector<std::string> steps;  // the measured steps' kernelReport names
};

struct Breakdown {
  int repeats = 0;
  std::string device;  // "" for this host's CPU, else the GPU ("NVIDIA H200 (sm_90)")
  double totalMs = 0, totalCpuMs = 0;    // sums over all kernels
  std::vector<KernelTiming> kernels;     // run order
  std::vector<double> kernelFlops;       // parallel to kernels
  std::vector<KernelShare> byKernel;     // largest time first
  std::vector<ModelledKernel> modelled;  // with a cost model: schedule order
  double modelledLatencyMs = 0;          // with a cost model: the plan's modelled latency
};

/// Times each kernel of `exe` (compiled from `plan`) over `repeats` runs;
/// with `model`, also prices the plan at the inputs' shapes and joins each
/// modelled kernel with its measured steps (Breakdown::modelled).
StatusOr<Breakdown> profileKernels(Executable& exe, const Graph& plan,
                                   const std::vector<std::pair<std::string, Tensor>>& inputs, int repeats,
                                   const RooflineCostModel* model = nullptr);

nlohmann::json breakdownJson(const Breakdown& b, const Graph& plan);
/// A table of the `top` largest kernel implementations and their share.
void printBreakdown(const Breakdown& b, const std::string& title, size_t top);

}  // namespace cagr::tools
