// What both `cagr bench` paths (cpu: cmd_bench.cc, cuda: bench_cuda.cc)
// share: the inputs (an .npz, or synthesized at the batch size), the
// policy's plan for the target, and writing the optimized plan's outputs.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "cagr/graph.h"
#include "cagr/mir.h"
#include "cagr/policy.h"
#include "cagr/tensor.h"

namespace cagr::tools {

using BenchInputs = std::vector<std::pair<std::string, Tensor>>;

/// `requested` when given (> 0), else the batch a fixed-batch model was
/// exported with, else 256 (the CLI default).
int64_t batchOrDefault(const Graph& g, int64_t requested);

struct BenchSetup {
  BenchInputs inputs;
  OptimizeResult opt;
};

/// Inputs from `inputsPath` (or synthesized at `batch`) and `policy`'s plan
/// of `model` for `t` at `batch` under the reward's `lambdaM`, with the
/// reduced precisions `precision` allows (none unless asked; optimize()
/// measures their budget).
StatusOr<BenchSetup> setUpBench(const Graph& model, const Target& t, const std::string& inputsPath, int64_t batch,
                                const std::string& policy, const PrecisionOptions& precision, double lambdaM);

/// Writes `outputs` of `plan` to `path` (.npz, keyed by output names).
Status writeBenchOutputs(const std::string& path, const Graph& plan, const std::vector<Tensor>& outputs);

}  // namespace cagr::tools
