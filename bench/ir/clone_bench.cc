// How fast HIR graphs copy: the RL environment clones a state per step, so a
// DLRM-size clone must cost microseconds. Run: build/cagr_bench_ir
#include <benchmark/benchmark.h>

#include "cagr/importer.h"

namespace {

const cagr::Graph& model(const char* rel) {
  static std::map<std::string, cagr::Graph> cache;
  auto it = cache.find(rel);
  if (it == cache.end()) {
    auto g = cagr::importOnnx(std::string(CAGR_SOURCE_DIR) + "/" + rel);
    if (!g.isOk()) throw std::runtime_error(g.status().message());
    it = cache.emplace(rel, std::move(g).value()).first;
  }
  return it->second;
}

void cloneModel(benchmark::State& state, const char* rel) {
  const cagr::Graph& g = model(rel);
  for (auto _ : state) {
    cagr::Graph copy = g;
    benchmark::DoNotOptimize(copy.nodes().data());
  }
  state.counters["nodes"] = static_cast<double>(g.nodes().size());
  state.SetItemsProcessed(state.iterations());
}

BENCHMARK_CAPTURE(cloneModel, dlrm_criteo, "zoo/onnx/dlrm_criteo.dynamo.onnx");
BENCHMARK_CAPTURE(cloneModel, xdeepfm, "zoo/onnx/xdeepfm.dynamo.onnx");
BENCHMARK_CAPTURE(cloneModel, autoint, "zoo/onnx/autoint.ts.onnx");

}  // namespace

BENCHMARK_MAIN();
