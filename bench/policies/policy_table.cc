// The policy table of issue 4: every zoo model on every built-in platform,
// modelled latency and peak memory after none / greedy / beam(8), and each
// policy's optimization time (measured on this host). Writes Markdown and
// JSON.
//
//   cagr_bench_policies [--batch 4096] [--md out.md] [--json out.json] [--models a,b] [--platforms x,y]
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cagr/importer.h"
#include "cagr/policy.h"

using namespace cagr;

namespace {

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string x; std::getline(ss, x, ',');) out.push_back(x);
  return out;
}

struct Cell {
  double latencyMs = 0, optimizeS = 0;
  int64_t memory = 0;
  size_t decisions = 0;
  std::string error;
};

Cell runCell(const Graph& g, const Target& t, const std::string& policy, int64_t batch) {
  Cell c;
  auto p = makePolicy(policy);
  EnvConfig cfg;
  cfg.batch = batch;
  auto r = optimize(g, t, **p, cfg);
  if (!r.isOk()) {
    c.error = r.status().message();
    return c;
  }
  c.latencyMs = r->final.latencyS * 1e3;
  c.memory = r->final.peakMemoryBytes;
  c.optimizeS = r->optimizeSeconds;
  c.decisions = r->decisions.size();
  return c;
}

}  // namespace

int main(int argc, char** argv) {
  int64_t batch = 4096;
  std::string md, json;
  std::vector<std::string> models = {"dlrm_criteo", "dlrm_avazu", "deepfm", "xdeepfm",
                                     "dcnv2",       "wide_deep",  "autoint", "ngcf"};
  std::vector<std::string> platforms = builtinProfileNames();
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--batch")) batch = std::atoll(argv[i + 1]);
    if (!std::strcmp(argv[i], "--md")) md = argv[i + 1];
    if (!std::strcmp(argv[i], "--json")) json = argv[i + 1];
    if (!std::strcmp(argv[i], "--models")) models = split(argv[i + 1]);
    if (!std::strcmp(argv[i], "--platforms")) platforms = split(argv[i + 1]);
  }
  const std::vector<std::string> policies = {"none", "greedy", "beam:8"};
  nlohmann::json rows = nlohmann::json::array();
  std::ostringstream table;
  table << "# Policies on every zoo model and built-in platform (batch " << batch << ")\n\n"
        << "Latency and peak memory are **modelled** by the roofline cost model on each platform's built-in "
           "datasheet profile (x86-64 is a generic stand-in, not this host); optimization time is **measured** "
           "wall time of `optimize()` on the machine that ran this (the 2-core development VM unless noted). "
           "`x` = speed-up over `none`; steps = applied actions. Reward: -dL/L0 - 0.1 dM/M0 - 0.2 dV, so a "
           "policy may trade a little latency for memory or variance.\n\n"
        << "Command: `build/cagr_bench_policies --batch " << batch
        << " --md bench/results/policies.md --json bench/results/policies.json`\n\n";
  table << "| model | platform | none ms | greedy ms | beam(8) ms | greedy x | beam x | none MB | greedy MB | beam MB "
           "| greedy opt s | beam opt s | greedy steps | beam steps |\n";
  table << "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n";
  for (const std::string& model : models) {
    auto g = importOnnx(std::string(CAGR_SOURCE_DIR) + "/zoo/onnx/" + model + ".dynamo.onnx");
    if (!g.isOk()) return std::fprintf(stderr, "%s\n", g.status().message().c_str()), 1;
    for (const std::string& platform : platforms) {
      auto t = resolveTarget(platform);
      if (!t.isOk()) return std::fprintf(stderr, "%s\n", t.status().message().c_str()), 1;
      std::vector<Cell> cells;
      for (const std::string& p : policies) cells.push_back(runCell(*g, *t, p, batch));
      for (size_t i = 0; i < cells.size(); ++i) {
        if (!cells[i].error.empty()) return std::fprintf(stderr, "%s %s %s: %s\n", model.c_str(), platform.c_str(),
                                                         policies[i].c_str(), cells[i].error.c_str()), 1;
      }
      char line[512];
      std::snprintf(line, sizeof line,
                    "| %s | %s | %.4f | %.4f | %.4f | %.2f | %.2f | %.1f | %.1f | %.1f | %.3f | %.3f | %zu | %zu |\n",
                    model.c_str(), platform.c_str(), cells[0].latencyMs, cells[1].latencyMs, cells[2].latencyMs,
                    cells[0].latencyMs / cells[1].latencyMs, cells[0].latencyMs / cells[2].latencyMs,
                    cells[0].memory / 1e6, cells[1].memory / 1e6, cells[2].memory / 1e6, cells[1].optimizeS,
                    cells[2].optimizeS, cells[1].decisions, cells[2].decisions);
      table << line;
      std::fputs(line, stdout);
      std::fflush(stdout);
      nlohmann::json row = {{"model", model}, {"platform", platform}, {"batch", batch},
                            {"profile", t->hw.isMeasured() ? "measured" : "datasheet"}};
      for (size_t i = 0; i < cells.size(); ++i) {
        row[policies[i]] = {{"latency_ms_modelled", cells[i].latencyMs},
                            {"peak_memory_bytes_modelled", cells[i].memory},
                            {"optimize_seconds_measured", cells[i].optimizeS},
                            {"decisions", cells[i].decisions}};
      }
      rows.push_back(row);
    }
  }
  if (!md.empty()) std::ofstream(md) << table.str();
  if (!json.empty()) std::ofstream(json) << rows.dump(1) << "\n";
  return 0;
}
