// Synthetic inputs for a graph: what `cagr bench` runs without an .npz and
// what optimize() measures a precision budget on without a calibration batch.
#include <algorithm>
#include <climits>
#include <random>

#include "cagr/reference.h"

namespace cagr {
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

std::vector<std::pair<std::string, Tensor>> synthesizeInputs(const Graph& g, int64_t batch, uint64_t seed) {
  std::mt19937 rng(static_cast<std::mt19937::result_type>(seed));
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

}  // namespace cagr
