// `cagr bench MODEL --target cuda`: the unoptimized and the optimized plan
// on the CUDA backend, timed as CUDA-graph replays with CUDA events (inputs
// and outputs resident on the device), the host copies apart, peak device
// memory, and the optimization time with NVRTC cold and from its cache;
// with --breakdown, each plan step by step (CUDA events, no graph) next to
// the cost model's time of every kernel (the profile of --hw).
#pragma once

#include <cstdint>
#include <string>

namespace cagr::tools {

struct CudaBenchArgs {
  std::string model, hw, policy = "greedy", inputs, output;
  std::string precision = "fp32";  // --precision: the reduced precisions the policy may choose
  double maxError = -1;            // --max-error (< 0: the stated bound)
  int64_t batch = 256;
  int replays = 200;  // timed graph replays per plan
  bool json = false;
  bool breakdown = false;  // also time each plan step by step and join the cost model's per-kernel times
  double lambdaM = 0.1;    // the reward's memory weight: the plan's and the executable's workspace choice
};

/// Runs the benchmark; returns the process exit code (errors printed).
int runCudaBench(const CudaBenchArgs& a);

}  // namespace cagr::tools
