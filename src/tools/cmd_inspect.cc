// cagr inspect MODEL: ops, shapes, parameters, FLOPs, bytes and arithmetic
// intensity per node, at a concrete batch (counts, not timings).
#include <cstdio>
#include <memory>
#include <iostream>

#include "cagr/analysis.h"
#include "cagr/cost.h"
#include "tools/bench_setup.h"
#include "tools/common.h"

namespace cagr::tools {
namespace {

struct InspectArgs {
  std::string model;
  int64_t batch = 0;  // 0: the model's fixed batch, else 256
  int64_t pooling = 1;
  bool json = false;
  bool noPatterns = false;
  std::string hw;  // profile name or path: adds the roofline table
};

// The modelled roofline view of a graph on one profile (only with --hw).
struct Roofline {
  HardwareProfile hw;
  GraphEstimate est;
  std::vector<double> rho;
};

std::string kindLabel(const HardwareProfile& hw) {
  return "modelled on " + hw.name + " (" + (hw.isMeasured() ? "measured profile" : "datasheet profile") + ")";
}

std::string shapesOf(const Graph& g, const Node& n) {
  std::string s;
  for (ValueId v : n.outputs) s += (s.empty() ? "" : " ") + g.typeString(g.type(v));
  return s;
}

nlohmann::json toJson(const LoadedModel& m, const GraphStats& st, const InspectArgs& a, const Roofline* r) {
  const Graph& g = m.graph;
  nlohmann::json j = baseJson(m.path, "none");
  j["producer"] = m.report.producer;
  j["opset"] = m.report.opset;
  j["batch"] = a.batch;
  j["fixed_batch"] = m.graph.fixedBatch() > 0;
  j["counts_kind"] = "static counts from the op table at the given batch (not timings)";
  j["recognized"] = m.report.recognized;
  j["generic"] = m.report.generic;
  j["peak_memory_bytes"] = st.peakActivationBytes + st.paramBytes;
  for (ValueId v : g.inputs()) j["inputs"].push_back({{"name", g.value(v).name}, {"type", g.typeString(g.type(v))}});
  for (ValueId v : g.outputs()) j["outputs"].push_back({{"name", g.value(v).name}, {"type", g.typeString(g.type(v))}});
  for (size_t i = 0; i < g.nodes().size(); ++i) {
    const Node& n = g.nodes()[i];
    const NodeStats& s = st.nodes[i];
    nlohmann::json node = {{"name", n.name}, {"op", opInfo(n.op).name}, {"output", shapesOf(g, n)},
                           {"params", s.params}, {"flops", s.counts.flops}, {"bytes_read", s.counts.bytesRead},
                           {"bytes_written", s.counts.bytesWritten}, {"intensity", s.intensity()}};
    if (r != nullptr) {
      const KernelEstimate& k = r->est.nodes[i];
      node["rho"] = r->rho[i];
      node["bound"] = boundName(k.bound);
      node["kernel"] = k.kernel;
      node["shape_class"] = k.shapeClass;
      node["modelled_us"] = k.seconds * 1e6;
      node["share"] = r->est.serialS > 0 ? k.seconds / r->est.serialS : 0.0;
    }
    j["nodes"].push_back(std::move(node));
  }
  if (r != nullptr) {
    j["target"] = r->hw.name;
    j["latency_ms"] = r->est.latencyS * 1e3;
    j["baseline_latency_ms"] = r->est.latencyS * 1e3;
    j["latency_kind"] = kindLabel(r->hw);
    j["peak_memory_bytes"] = r->est.peakMemoryBytes;
    j["variance"] = r->est.variance;
  }
  j["totals"] = {{"nodes", g.nodes().size()}, {"flops", st.flops}, {"bytes", st.bytes},
                 {"params", st.params}, {"param_bytes", st.paramBytes},
                 {"peak_activation_bytes", st.peakActivationBytes},
                 {"intensity", st.bytes > 0 ? st.flops / st.bytes : 0.0}};
  return j;
}

void printRoofline(const Graph& g, const Roofline& r) {
  std::printf("\nroofline on %s — every time below is %s\n", r.hw.name.c_str(), kindLabel(r.hw).c_str());
  std::printf("%4s  %-14s %-28s %6s %-8s %-16s %-14s %10s %7s\n", "#", "op", "name", "rho", "bound", "kernel",
              "class", "time us", "share");
  for (size_t i = 0; i < g.nodes().size(); ++i) {
    const Node& n = g.nodes()[i];
    const KernelEstimate& k = r.est.nodes[i];
    std::string name = n.name.size() > 28 ? "…" + n.name.substr(n.name.size() - 26) : n.name;
    std::printf("%4zu  %-14s %-28s %6.3f %-8s %-16s %-14s %10.2f %6.1f%%\n", i, opInfo(n.op).name, name.c_str(),
                r.rho[i], boundName(k.bound), k.kernel.c_str(), k.shapeClass.c_str(), k.seconds * 1e6,
                r.est.serialS > 0 ? 100.0 * k.seconds / r.est.serialS : 0.0);
  }
  std::printf("\nmodelled latency %.3f ms (one stream; launch/dispatch %.3f ms), peak memory %.2f MB, run-to-run "
              "variance %.1f%% — %s\n",
              r.est.latencyS * 1e3, r.est.launchS * 1e3, r.est.peakMemoryBytes / 1e6, r.est.variance * 100,
              kindLabel(r.hw).c_str());
}

void printText(const LoadedModel& m, const GraphStats& st, const InspectArgs& a) {
  const Graph& g = m.graph;
  std::printf("model     %s (%s, opset %lld)\n", m.path.c_str(), m.report.producer.c_str(),
              static_cast<long long>(m.report.opset));
  for (ValueId v : g.inputs()) std::printf("input     %-24s %s\n", g.value(v).name.c_str(), g.typeString(g.type(v)).c_str());
  for (ValueId v : g.outputs()) std::printf("output    %-24s %s\n", g.value(v).name.c_str(), g.typeString(g.type(v)).c_str());
  if (g.fixedBatch() > 0) {
    std::printf("batch     fixed at %lld (exported with static shapes; other batches are refused)\n",
                static_cast<long long>(g.fixedBatch()));
  } else {
    std::printf("batch     symbolic N (dynamic)\n");
  }
  for (const auto& r : m.report.recognized) std::printf("recognised %s\n", r.c_str());
  if (m.report.recognized.empty()) std::printf("recognised nothing (no EmbeddingBag, Interaction, FM or CIN)\n");
  for (const auto& r : m.report.generic) std::printf("generic   %s\n", r.c_str());
  std::printf("\ncounts at batch N=%lld (static counts from the op table, not timings)\n",
              static_cast<long long>(a.batch));
  std::printf("%4s  %-14s %-28s %-26s %10s %11s %11s %9s\n", "#", "op", "name", "output", "params", "MFLOP",
              "KB moved", "FLOP/B");
  for (size_t i = 0; i < g.nodes().size(); ++i) {
    const Node& n = g.nodes()[i];
    const NodeStats& s = st.nodes[i];
    std::string name = n.name.size() > 28 ? "…" + n.name.substr(n.name.size() - 26) : n.name;
    std::printf("%4zu  %-14s %-28s %-26s %10lld %11.3f %11.1f %9.2f\n", i, opInfo(n.op).name, name.c_str(),
                shapesOf(g, n).c_str(), static_cast<long long>(s.params), s.counts.flops / 1e6,
                (s.counts.bytesRead + s.counts.bytesWritten) / 1024.0, s.intensity());
  }
  std::printf("\ntotal     %zu nodes, %.1f MFLOP, %.1f MB moved, intensity %.2f FLOP/B\n", g.nodes().size(),
              st.flops / 1e6, st.bytes / 1e6, st.bytes > 0 ? st.flops / st.bytes : 0.0);
  std::printf("weights   %lld parameters, %.1f MB\n", static_cast<long long>(st.params), st.paramBytes / 1e6);
  std::printf("peak activations %.2f MB (graph order, freed after last use)\n", st.peakActivationBytes / 1e6);
}

int runInspect(InspectArgs a) {
  auto m = loadModel(a.model, !a.noPatterns);
  if (!m.isOk()) return fail(m.status());
  if (a.batch < 0) return fail(invalidArgument("--batch must be positive"));
  a.batch = batchOrDefault(m->graph, a.batch);
  if (Status st = checkBatch(m->graph, a.batch); !st.isOk()) return fail(st);
  SymbolBindings bindings = defaultBindings(m->graph, a.batch, a.pooling);
  auto st = computeStats(m->graph, bindings);
  if (!st.isOk()) return fail(st.status());
  std::unique_ptr<Roofline> roof;
  if (!a.hw.empty()) {
    auto hw = resolveProfile(a.hw);
    if (!hw.isOk()) return fail(hw.status());
    RooflineCostModel model(*hw);
    auto est = model.graph(m->graph, bindings);
    if (!est.isOk()) return fail(est.status());
    roof = std::make_unique<Roofline>(Roofline{*hw, *est, {}});
    for (const NodeStats& s : st->nodes) roof->rho.push_back(rooflinePosition(s.intensity(), *hw));
  }
  if (a.json) {
    std::cout << toJson(*m, *st, a, roof.get()).dump(2) << "\n";
  } else {
    printText(*m, *st, a);
    if (roof) printRoofline(m->graph, *roof);
  }
  return 0;
}

}  // namespace

void addInspect(CLI::App& app, int& exitCode) {
  auto args = std::make_shared<InspectArgs>();
  CLI::App* cmd = app.add_subcommand("inspect", "ops, shapes, parameters, FLOPs, bytes and intensity per node");
  cmd->add_option("model", args->model, "model (.onnx or .mlir)")->required();
  cmd->add_option("--batch", args->batch,
                  "batch size N for the counts (default 256, or the batch a model was exported with)")
      ->check(CLI::Range(int64_t{1}, kMaxBatch));
  cmd->add_option("--pooling", args->pooling, "ids per bag for multi-hot inputs (other symbols = N*pooling)");
  cmd->add_flag("--json", args->json, "print one JSON object");
  cmd->add_flag("--no-patterns", args->noPatterns, "do not recognise Interaction/FM/CIN");
  cmd->add_option("--hw", args->hw, "hardware profile (built-in name or JSON path): adds the modelled roofline table");
  cmd->callback([args, &exitCode] { exitCode = runInspect(*args); });
}

}  // namespace cagr::tools
