// The inputs, plan and output file both `cagr bench` paths share (see bench_setup.h).
#include "tools/bench_setup.h"

#include "cagr/npz.h"
#include "cagr/reference.h"

namespace cagr::tools {

int64_t batchOrDefault(const Graph& g, int64_t requested) {
  if (requested > 0) return requested;
  return g.fixedBatch() > 0 ? g.fixedBatch() : 256;
}

StatusOr<BenchSetup> setUpBench(const Graph& model, const Target& t, const std::string& inputsPath, int64_t batch,
                                const std::string& policy, const PrecisionOptions& precision, double lambdaM) {
  BenchSetup s;
  if (!inputsPath.empty()) {
    CAGR_ASSIGN_OR_RETURN(s.inputs, readNpz(inputsPath));
  } else {
    s.inputs = synthesizeInputs(model, batch);
  }
  CAGR_ASSIGN_OR_RETURN(std::unique_ptr<Policy> p, makePolicy(policy));
  EnvConfig cfg;
  cfg.batch = batch;
  cfg.lambdaM = lambdaM;
  cfg.precision = precision;
  CAGR_ASSIGN_OR_RETURN(s.opt, optimize(model, t, *p, cfg));
  return s;
}

Status writeBenchOutputs(const std::string& path, const Graph& plan, const std::vector<Tensor>& outputs) {
  NpzContents named;
  for (size_t i = 0; i < outputs.size(); ++i) named.emplace_back(plan.value(plan.outputs()[i]).name, outputs[i]);
  return writeNpz(path, named);
}

}  // namespace cagr::tools
