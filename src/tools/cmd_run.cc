// cagr run MODEL|PLAN --inputs x.npz --output y.npz: executes a model or a
// plan (.cagr from cagr optimize) on the reference executor (the numerical
// oracle; precision decisions emulated) or, with --target cpu, compiled by
// the CPU backend, and writes the outputs.
#include <chrono>
#include <iostream>

#include "cagr/analysis.h"
#include "cagr/backend.h"
#include "cagr/npz.h"
#include "cagr/reference.h"
#include "tools/common.h"

namespace cagr::tools {
namespace {

struct RunArgs {
  std::string model, inputs, output, target = "reference";
  bool json = false;
};

int runRun(const RunArgs& a) {
  if (a.target != "reference" && a.target != "cpu") {
    return fail(unsupported("--target " + a.target + ": cagr run takes reference or cpu"));
  }
  auto m = loadModel(a.model);
  if (!m.isOk()) return fail(m.status());
  auto in = readNpz(a.inputs);
  if (!in.isOk()) return fail(in.status());
  auto t0 = std::chrono::steady_clock::now();
  StatusOr<std::vector<Tensor>> out = std::vector<Tensor>{};
  if (a.target == "cpu") {
    auto backend = makeBackend("cpu");
    if (!backend.isOk()) return fail(backend.status());
    auto exe = (*backend)->compile(m->graph);
    if (!exe.isOk()) return fail(exe.status().withContext(a.model));
    t0 = std::chrono::steady_clock::now();
    out = (*exe)->run(*in);
  } else {
    out = runReference(m->graph, *in);
  }
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  if (!out.isOk()) return fail(out.status().withContext(a.model));
  NpzContents named;
  for (size_t i = 0; i < out->size(); ++i) named.emplace_back(m->graph.value(m->graph.outputs()[i]).name, (*out)[i]);
  if (!a.output.empty()) {
    Status s = writeNpz(a.output, named);
    if (!s.isOk()) return fail(s);
  }
  std::vector<std::vector<int64_t>> shapes;
  for (ValueId v : m->graph.inputs()) {
    for (const auto& [k, t] : *in) {
      if (k == m->graph.value(v).name) shapes.push_back(t.shape());
    }
  }
  auto bind = m->graph.bindSymbols(shapes);
  auto st = bind.isOk() ? computeStats(m->graph, *bind) : StatusOr<GraphStats>(bind.status());
  if (a.json) {
    std::string engine = a.target == "cpu" ? "cpu backend" : "reference executor";
    nlohmann::json j = baseJson(a.model, a.target);
    j["latency_ms"] = ms;
    j["latency_kind"] = "measured (one run, " + engine + ", this host)";
    j["baseline_latency_ms"] = ms;
    if (st.isOk()) j["peak_memory_bytes"] = st->peakActivationBytes + st->paramBytes;
    for (const auto& [k, t] : named) j["outputs"].push_back({{"name", k}, {"type", t.typeString()}});
    std::cout << j.dump(2) << "\n";
  } else {
    for (const auto& [k, t] : named) std::cout << "output " << k << " " << t.typeString() << "\n";
    std::cout << "ran in " << ms << " ms (measured, one run, "
              << (a.target == "cpu" ? "cpu backend" : "reference executor") << " on this host)";
    if (!a.output.empty()) std::cout << "; wrote " << a.output;
    std::cout << "\n";
  }
  return 0;
}

}  // namespace

void addRun(CLI::App& app, int& exitCode) {
  auto args = std::make_shared<RunArgs>();
  CLI::App* cmd = app.add_subcommand("run", "run a model on inputs from an .npz file");
  cmd->add_option("model", args->model, "model (.onnx or .mlir) or plan (.cagr)")->required();
  cmd->add_option("--inputs", args->inputs, ".npz keyed by the graph's input names")->required();
  cmd->add_option("--output", args->output, ".npz to write, keyed by the graph's output names");
  cmd->add_option("--target", args->target, "reference (default: the reference executor) or cpu (the CPU backend)");
  cmd->add_flag("--json", args->json, "print one JSON object");
  cmd->callback([args, &exitCode] { exitCode = runRun(*args); });
}

}  // namespace cagr::tools
