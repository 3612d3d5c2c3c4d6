// `cagr bench --breakdown`: per-kernel timings of a compiled plan (measured
// by the backend) joined with op-table FLOP counts, summed per kernel
// implementation and printed largest first.
#include "tools/bench_breakdown.h"

#include <algorithm>
#include <cstdio>
#include <map>

#include "cagr/analysis.h"
#include "cagr/reference.h"

namespace cagr::tools {

namespace {

// Joins the measured steps with the modelled kernels of the same plan.
void joinModelled(Breakdown& b, const GraphEstimate& est, size_t numNodes) {
  std::vector<int> groupOf(numNodes, -1);
  for (size_t k = 0; k < est.kernels.size(); ++k) {
    for (NodeId m : est.kernels[k].members) groupOf[static_cast<size_t>(m)] = static_cast<int>(k);
  }
  std::map<int, size_t> slot;
  for (const KernelTiming& t : b.kernels) {
    if (t.nodes.empty()) continue;
    int k = groupOf[static_cast<size_t>(t.nodes.front())];
    if (k < 0) continue;
    auto [it, fresh] = slot.emplace(k, b.modelled.size());
    if (fresh) {
      const KernelEstimate& e = est.kernels[static_cast<size_t>(k)].estimate;
      b.modelled.push_back(ModelledKernel{e.kernel, e.shapeClass, e.seconds * 1e3, e.launchS * 1e3, 0, {}});
    }
    ModelledKernel& m = b.modelled[it->second];
    m.measuredMs += t.medianMs;
    m.steps.push_back(t.kernel);
  }
  b.modelledLatencyMs = est.latencyS * 1e3;
}

}  // namespace

StatusOr<Breakdown> profileKernels(Executable& exe, const Graph& plan,
                                   const std::vector<std::pair<std::string, Tensor>>& inputs, int repeats,
                                   const RooflineCostModel* model) {
  Breakdown b;
  b.repeats = repeats;
  CAGR_ASSIGN_OR_RETURN(b.kernels, exe.profile(inputs, repeats));
  CAGR_ASSIGN_OR_RETURN(std::vector<Tensor> given, matchGraphInputs(plan, inputs));
  std::vector<std::vector<int64_t>> shapes;
  for (const Tensor& t : given) shapes.push_back(t.shape());
  CAGR_ASSIGN_OR_RETURN(SymbolBindings bind, plan.bindSymbols(shapes));
  CAGR_ASSIGN_OR_RETURN(GraphStats stats, computeStats(plan, bind));
  std::map<std::string, size_t> slot;
  for (const KernelTiming& k : b.kernels) {
    double flops = 0;
    for (NodeId n : k.nodes) flops += stats.nodes[static_cast<size_t>(n)].counts.flops;
    b.kernelFlops.push_back(flops);
    b.totalMs += k.medianMs;
    b.totalCpuMs += k.cpuMs;
    auto [it, fresh] = slot.emplace(k.kernel, b.byKernel.size());
    if (fresh) b.byKernel.push_back(KernelShare{k.kernel});
    KernelShare& s = b.byKernel[it->second];
    s.count += 1;
    s.ms += k.medianMs;
    s.cpuMs += k.cpuMs;
    s.flops += flops;
  }
  std::stable_sort(b.byKernel.begin(), b.byKernel.end(), [](const KernelShare& x, const KernelShare& y) { return x.ms > y.ms; });
  if (model != nullptr) {
    CAGR_ASSIGN_OR_RETURN(GraphEstimate est, model->graphWithStats(plan, stats, bind));
    joinModelled(b, est, plan.nodes().size());
  }
  return b;
}

nlohmann::json breakdownJson(const Breakdown& b, const Graph& plan) {
  const std::string where = b.device.empty() ? "this host"
                                              : b.device + ", CUDA events around each step, steps issued one by one "
                                                           "(no graph)";
  nlohmann::json j = {{"kind", "measured per kernel (median over repeats, " + where + "); flops counted from the op table"},
                      {"repeats", b.repeats},
                      {"total_ms", b.totalMs},
                      {"total_cpu_ms", b.totalCpuMs}};
  j["by_kernel"] = nlohmann::json::array();
  for (const KernelShare& s : b.byKernel) {
    j["by_kernel"].push_back({{"kernel", s.kernel}, {"count", s.count}, {"ms", s.ms}, {"cpu_ms", s.cpuMs},
                              {"share", b.totalMs > 0 ? s.ms / b.totalMs : 0}, {"flops", s.flops}});
  }
  j["kernels"] = nlohmann::json::array();
  for (size_t i = 0; i < b.kernels.size(); ++i) {
    const KernelTiming& k = b.kernels[i];
    nlohmann::json nodes = nlohmann::json::array();
    for (NodeId n : k.nodes) {
      const Node& node = plan.node(n);
      nodes.push_back(std::string(opInfo(node.op).name) + (node.name.empty() ? "" : " " + node.name));
    }
    j["kernels"].push_back({{"kernel", k.kernel}, {"nodes", nodes}, {"median_ms", k.medianMs}, {"min_ms", k.minMs},
                            {"cpu_ms", k.cpuMs}, {"flops", b.kernelFlops[i]}});
  }
  if (!b.modelled.empty()) {
    j["modelled_latency_ms"] = b.modelledLatencyMs;
    j["modelled_kind"] = "modelled by the roofline cost model (the profile of --hw), per kernel of the plan; "
                         "measured_ms: the sum of the steps that run it";
    j["modelled_kernels"] = nlohmann::json::array();
    for (const ModelledKernel& m : b.modelled) {
      j["modelled_kernels"].push_back({{"kernel", m.kernel}, {"shape_class", m.shapeClass},
                                       {"modelled_ms", m.modelledMs}, {"modelled_launch_ms", m.modelledLaunchMs},
                                       {"measured_ms", m.measuredMs}, {"steps", m.steps}});
    }
  }
  return j;
}

void printBreakdown(const Breakdown& b, const std::string& title, size_t top) {
  std::printf("where the time goes: %s (measured per kernel, median of %d runs; cpu ms: the calling thread's CPU "
              "time; GFLOP counted)\n", title.c_str(), b.repeats);
  std::printf("  %-44s %5s %9s %9s %7s %9s %8s\n", "kernel", "count", "ms", "cpu ms", "share", "GFLOP", "GFLOP/s");
  for (size_t i = 0; i < b.byKernel.size() && i < top; ++i) {
    const KernelShare& s = b.byKernel[i];
    std::printf("  %-44.44s %5d %9.3f %9.3f %6.1f%% %9.4f %8.1f\n", s.kernel.c_str(), s.count, s.ms, s.cpuMs,
                b.totalMs > 0 ? 100 * s.ms / b.totalMs : 0.0, s.flops / 1e9, s.ms > 0 ? s.flops / (s.ms * 1e6) : 0.0);
  }
  if (b.byKernel.size() > top) std::printf("  ... %zu more kernel implementations\n", b.byKernel.size() - top);
  std::printf("  %-44s %5zu %9.3f %9.3f\n", "total (sum of kernels)", b.kernels.size(), b.totalMs, b.totalCpuMs);
}

}  // namespace cagr::tools
