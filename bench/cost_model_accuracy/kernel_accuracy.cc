// Scores the roofline cost model against held-out kernel measurements:
// predicted (modelled, from a profile) vs measured time per record, then MAPE
// and Spearman rank correlation per kernel class and overall.
//   cagr_bench_kernel_accuracy PROFILE.json VALIDATION.json [--json]
//   cagr_bench_kernel_accuracy --plans PROFILE.json [...]   (plan_kernels.cc)
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <numeric>

#include <nlohmann/json.hpp>

#include "cagr/cost.h"
#include "cost/kernel_class.h"
#include "accuracy_stats.h"

using cagr_bench::Group;
using cagr_bench::spearman;

namespace {

std::string classFamily(const std::string& shapeClass) { return shapeClass.substr(0, shapeClass.find('.')); }

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && std::string(argv[1]) == "--plans") return cagr_bench::runPlanKernels(argc - 1, argv + 1);
  if (argc < 3) {
    std::cerr << "usage: cagr_bench_kernel_accuracy PROFILE.json VALIDATION.json [--json]\n"
                 "       cagr_bench_kernel_accuracy --plans PROFILE.json [options]\n";
    return 2;
  }
  auto hw = cagr::resolveProfile(argv[1]);
  if (!hw.isOk()) {
    std::cerr << "error: " << hw.status().message() << "\n";
    return 1;
  }
  std::ifstream in(argv[2]);
  if (!in) {
    std::cerr << "error: cannot read " << argv[2] << "\n";
    return 1;
  }
  nlohmann::json v = nlohmann::json::parse(in, nullptr, false);
  if (v.is_discarded() || !v.contains("records")) {
    std::cerr << "error: " << argv[2] << ": not a cagr-validation-1 file\n";
    return 1;
  }
  cagr::RooflineCostModel model(*hw);
  std::map<std::string, Group> byKernelClass, byFamily, byKernel;
  Group all;
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& r : v["records"]) {
    cagr::OpCounts c;
    c.flops = r.value("flops", 0.0);
    c.bytesRead = r.value("bytes", 0.0);
    std::string kernel = r["kernel"], cls = r["shape_class"];
    cagr::KernelEstimate e = model.price(kernel, cls, c);
    // Tensor-core GEMMs with misaligned N or K: the same penalty plans are priced with.
    double penalty = cagr::misalignmentPenalty(*hw, cagr::kernelPrecision(kernel), kernel, cls, r.value("n", 0.0),
                                               r.value("k", 0.0), c.flops);
    double predicted = std::max(e.computeS * penalty, e.memoryS) + e.launchS;
    double measured = r["measured_s"];
    if (measured <= 0) continue;
    for (Group* g : {&byKernelClass[kernel + " " + cls], &byFamily[classFamily(cls)], &byKernel[kernel], &all}) {
      g->predicted.push_back(predicted);
      g->measured.push_back(measured);
    }
    rows.push_back({{"kernel", kernel}, {"shape_class", cls}, {"config", r.value("config", "")},
                    {"predicted_s", predicted}, {"measured_s", measured}});
  }
  bool json = argc > 3 && std::string(argv[3]) == "--json";
  nlohmann::json out = {{"profile", hw->name}, {"profile_provenance", hw->provenance},
                        {"measured_on", v.value("measured_on", "")}, {"records", rows}};
  for (auto& [name, g] : byFamily) out["families"][name] = {{"mape_pct", g.mape()}, {"spearman", spearman(g.predicted, g.measured)}, {"n", g.predicted.size()}};
  for (auto& [name, g] : byKernel) out["kernels"][name] = {{"mape_pct", g.mape()}, {"spearman", spearman(g.predicted, g.measured)}, {"n", g.predicted.size()}};
  for (auto& [name, g] : byKernelClass) out["kernel_classes"][name] = {{"mape_pct", g.mape()}, {"spearman", spearman(g.predicted, g.measured)}, {"n", g.predicted.size()}};
  out["all"] = {{"mape_pct", all.mape()}, {"spearman", spearman(all.predicted, all.measured)}, {"n", all.predicted.size()}};
  if (json) {
    std::cout << out.dump(1) << "\n";
    return 0;
  }
  std::printf("cost model (modelled from profile %s, %s) vs held-out kernels measured on %s\n\n", hw->name.c_str(),
              hw->provenance.c_str(), v.value("measured_on", "?").c_str());
  std::printf("| family | n | MAPE %% | Spearman |\n|---|---|---|---|\n");
  for (auto& [name, g] : byFamily) std::printf("| %s | %zu | %.1f | %.3f |\n", name.c_str(), g.predicted.size(), g.mape(), spearman(g.predicted, g.measured));
  std::printf("| all | %zu | %.1f | %.3f |\n\n", all.predicted.size(), all.mape(), spearman(all.predicted, all.measured));
  std::printf("| kernel (all shapes) | n | MAPE %% | Spearman |\n|---|---|---|---|\n");
  for (auto& [name, g] : byKernel) std::printf("| %s | %zu | %.1f | %.3f |\n", name.c_str(), g.predicted.size(), g.mape(), spearman(g.predicted, g.measured));
  std::printf("\n| kernel / class | n | MAPE %% | Spearman |\n|---|---|---|---|\n");
  for (auto& [name, g] : byKernelClass) std::printf("| %s | %zu | %.1f | %.3f |\n", name.c_str(), g.predicted.size(), g.mape(), spearman(g.predicted, g.measured));
  return 0;
}
