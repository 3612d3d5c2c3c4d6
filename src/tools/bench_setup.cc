// The inputs, plan and output file both `cagr bench` paths share (see bench_setup.h).
#include "tools/bench_setup.h"

#include <algorithm>
#include <climits>
#include <random>

#include "cagr/npz.h"

namespace cagr::tools {
namespace {

// Rows of the smallest table any lookup reads: synthesized ids stay below it.
int64_t smallestTable(const Graph& g) {
  int64_t rows = INT64_MAX;
  for (const Node& n : g.nodes()) {
    bool lookup = n.op == OpKind::kGather || n.op == OpKind::kEmbeddingBag || n.op == OpKind::kGatherND;
    if (!lookup || !g.isConstant(n.inputs[0]) || g.type(n.inputs[0]).rank() != 2) continue;
    rows = std::min(rows, g.type(n.inputs[0]).dims[0]);
  }
  for (const Node& n : g.nodes()) {
    if (n.op != OpKind::kEmbeddingBags) continue;
    for (int64_t t = 0; t < n.attrs.getInt("num_tables"); ++t)
      rows = std::min(rows, g.type(n.inputs[static_cast<size_t>(t)]).dims[0]);
  }
  return rows == INT64_MAX ? 1 : rows;
}

}  // namespace

BenchInputs synthesizeInputs(const Graph& g, int64_t batch) {
  std::mt19937 rng(1);
  int64_t bound = smallestTable(g);
  std::vector<std::pair<std::string, Tensor>> out;
  for (ValueId v : g.inputs()) {
    const std::string& name = g.value(v).name;
    std::vector<int64_t> shape;
    for (Dim d : g.type(v).dims) shape.push_back(isSymbolic(d) ? batch * dimCoef(d) : d);
    Tensor t(g.type(v).dtype, shape);
    for (int64_t i = 0; i < t.numel(); ++i) {
      if (t.dtype() == DType::kF32) t.data<float>()[i] = std::uniform_real_distribution<float>(0, 2)(rng);
      if (t.dtype() == DType::kI64) {
        t.data<int64_t>()[i] = name.find("offset") != std::string::npos
                                   ? i % shape.back()
                                   : std::uniform_int_distribution<int64_t>(0, bound - 1)(rng);
      }
    }
    out.emplace_back(name, std::move(t));
  }
  return out;
}

int64_t batchOrDefault(const Graph& g, int64_t requested) {
  if (requested > 0) return requested;
  return g.fixedBatch() > 0 ? g.fixedBatch() : 256;
}

StatusOr<BenchSetup> setUpBench(const Graph& model, const Target& t, const std::string& inputsPath, int64_t batch,
                                const std::string& policy, bool reducedPrecision, double lambdaM) {
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
  if (!reducedPrecision) cfg.disabled.push_back(ActionKind::kSetPrecision);
  CAGR_ASSIGN_OR_RETURN(s.opt, optimize(model, t, *p, cfg));
  return s;
}

Status writeBenchOutputs(const std::string& path, const Graph& plan, const std::vector<Tensor>& outputs) {
  NpzContents named;
  for (size_t i = 0; i < outputs.size(); ++i) named.emplace_back(plan.value(plan.outputs()[i]).name, outputs[i]);
  return writeNpz(path, named);
}

}  // namespace cagr::tools
