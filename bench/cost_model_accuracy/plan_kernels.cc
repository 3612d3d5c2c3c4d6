// Per-kernel accuracy on CAGR's own CPU plans: every zoo model is optimized
// (policy none and greedy), compiled on the CPU backend, and each kernel is
// timed apart (Executable::profile, median; with one thread the CPU time of
// the calling thread, robust to other processes on the machine, else wall
// time); the cost model prices the same plan with PROFILE (measured with
// the same thread count). Prints per-kernel-class and
// per-plan MAPE / Spearman and, with --json, every kernel record.
//   cagr_bench_kernel_accuracy --plans PROFILE.json [--batches 256,4096] [--threads 1]
//       [--models a,b] [--seconds 2] [--json]
// Inputs: the committed zoo batch (zoo/ref/<m>.b4.inputs.npz) tiled to the
// batch (offsets inputs: one id per bag). Run from the repository root.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <map>
#include <sstream>

#include <nlohmann/json.hpp>

#include "accuracy_stats.h"
#include "cagr/backend.h"
#include "cagr/cost.h"
#include "cagr/importer.h"
#include "cagr/npz.h"
#include "cagr/policy.h"

namespace cagr_bench {
namespace {

using namespace cagr;

struct Options {
  std::string profile;
  std::vector<int64_t> batches = {256, 4096};
  std::vector<std::string> models = {"dlrm_criteo", "dlrm_avazu", "deepfm",  "xdeepfm",
                                     "dcnv2",       "wide_deep",  "autoint", "ngcf"};
  int threads = 1;
  double seconds = 2;
  bool json = false;
};

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string item; std::getline(ss, item, ',');) out.push_back(item);
  return out;
}

// The zoo's batch-4 inputs tiled along the batch axis to `batch` rows.
StatusOr<std::vector<std::pair<std::string, Tensor>>> tiledInputs(const Graph& g, const std::string& model,
                                                                  int64_t batch) {
  CAGR_ASSIGN_OR_RETURN(NpzContents small, readNpz("zoo/ref/" + model + ".b4.inputs.npz"));
  std::vector<std::pair<std::string, Tensor>> out;
  for (ValueId v : g.inputs()) {
    const std::string& name = g.value(v).name;
    CAGR_ASSIGN_OR_RETURN(Tensor t, findArray(small, name, "zoo/ref/" + model + ".b4.inputs.npz"));
    const auto& dims = g.type(v).dims;
    size_t axis = 0;
    while (axis < dims.size() && !isSymbolic(dims[axis])) ++axis;
    if (axis == dims.size()) {
      out.emplace_back(name, std::move(t));
      continue;
    }
    std::vector<int64_t> shape = t.shape();
    const int64_t from = shape[axis];
    shape[axis] = batch;
    Tensor big(t.dtype(), shape);
    int64_t outer = 1, inner = 1;
    for (size_t d = 0; d < axis; ++d) outer *= shape[d];
    for (size_t d = axis + 1; d < shape.size(); ++d) inner *= shape[d];
    const size_t es = dtypeSize(t.dtype());
    const bool offsets = name.find("offset") != std::string::npos && t.dtype() == DType::kI64;
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t b = 0; b < batch; ++b) {
        std::byte* dst = big.rawData() + ((o * batch + b) * inner) * es;
        if (offsets) {
          for (int64_t i = 0; i < inner; ++i) reinterpret_cast<int64_t*>(dst)[i] = b * inner + i;
          continue;
        }
        std::copy_n(t.rawData() + ((o * from + b % from) * inner) * es, inner * es, dst);
      }
    }
    out.emplace_back(name, std::move(big));
  }
  return out;
}

struct Record {
  std::string model, plan, kernel, modelledKernel, shapeClass;
  int64_t batch = 0;
  double modelledS = 0, measuredS = 0;  // per call: modelled; measured (CPU or wall time, see joinKernels)
};

// Measured kernels joined with the modelled groups of the same plan: a
// measured kernel counts towards the modelled group of its first node.
void joinKernels(const std::vector<KernelTiming>& measured, const GraphEstimate& est, size_t numNodes, bool cpuTime,
                 const Record& proto, std::vector<Record>& out) {
  std::vector<int> groupOf(numNodes, -1);
  for (size_t k = 0; k < est.kernels.size(); ++k) {
    for (NodeId m : est.kernels[k].members) groupOf[static_cast<size_t>(m)] = static_cast<int>(k);
  }
  std::map<int, Record> byGroup;
  for (const KernelTiming& t : measured) {
    if (t.nodes.empty()) continue;
    int k = groupOf[static_cast<size_t>(t.nodes.front())];
    if (k < 0) continue;
    Record& r = byGroup[k];
    if (r.kernel.empty()) {
      r = proto;
      r.kernel = t.kernel;
      r.modelledKernel = est.kernels[static_cast<size_t>(k)].estimate.kernel;
      r.shapeClass = est.kernels[static_cast<size_t>(k)].estimate.shapeClass;
      r.modelledS = est.kernels[static_cast<size_t>(k)].estimate.seconds;
    }
    r.measuredS += (cpuTime ? t.cpuMs : t.medianMs) * 1e-3;
  }
  for (auto& [k, r] : byGroup) out.push_back(r);
}

// One plan: compile, time kernel by kernel, price, join. Returns (modelled
// latency, measured sum of kernel CPU times) in seconds.
StatusOr<std::pair<double, double>> measurePlan(const Graph& plan, const RooflineCostModel& model,
                                                const std::vector<std::pair<std::string, Tensor>>& inputs,
                                                const Options& o, const Record& proto, std::vector<Record>& out) {
  CAGR_ASSIGN_OR_RETURN(auto backend, makeBackend("cpu"));
  CompileOptions co;
  co.threads = o.threads;
  CAGR_ASSIGN_OR_RETURN(auto exe, backend->compile(plan, co));
  auto t0 = std::chrono::steady_clock::now();
  CAGR_RETURN_IF_ERROR(exe->run(inputs).status());
  double once = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  int repeats = static_cast<int>(std::clamp(o.seconds / std::max(once, 1e-6), 5.0, 50.0));
  CAGR_ASSIGN_OR_RETURN(auto timings, exe->profile(inputs, repeats));
  CAGR_ASSIGN_OR_RETURN(GraphEstimate est, model.graph(plan, defaultBindings(plan, proto.batch)));
  size_t before = out.size();
  joinKernels(timings, est, plan.nodes().size(), o.threads == 1, proto, out);
  double measured = 0;
  for (size_t i = before; i < out.size(); ++i) measured += out[i].measuredS;
  return std::make_pair(est.latencyS, measured);
}

void printGroups(const char* title, const std::map<std::string, Group>& groups) {
  std::printf("\n| %s | n | modelled / measured (sums) | MAPE %% | Spearman |\n|---|---|---|---|---|\n", title);
  for (const auto& [name, g] : groups) {
    double p = 0, m = 0;
    for (size_t i = 0; i < g.predicted.size(); ++i) p += g.predicted[i], m += g.measured[i];
    std::printf("| %s | %zu | %.2f | %.1f | %.3f |\n", name.c_str(), g.predicted.size(), m > 0 ? p / m : 0, g.mape(),
                spearman(g.predicted, g.measured));
  }
}

Status parse(int argc, char** argv, Options& o) {
  if (argc < 2) return invalidArgument("usage: --plans PROFILE.json [--batches 256,4096] [--threads N] ...");
  o.profile = argv[1];
  for (int i = 2; i < argc; ++i) {
    std::string a = argv[i];
    bool more = i + 1 < argc;
    if (a == "--json")
      o.json = true;
    else if (a == "--batches" && more) {
      o.batches.clear();
      for (const std::string& b : split(argv[++i])) o.batches.push_back(std::stoll(b));
    } else if (a == "--models" && more)
      o.models = split(argv[++i]);
    else if (a == "--threads" && more)
      o.threads = std::stoi(argv[++i]);
    else if (a == "--seconds" && more)
      o.seconds = std::stod(argv[++i]);
    else
      return invalidArgument("--plans: unknown or incomplete option '" + a + "'");
  }
  return Status::ok();
}

Status run(const Options& o) {
  CAGR_ASSIGN_OR_RETURN(HardwareProfile hw, resolveProfile(o.profile));
  CAGR_ASSIGN_OR_RETURN(Target target, makeTarget(hw));
  RooflineCostModel model(hw);
  std::vector<Record> records;
  std::map<std::string, Group> byClass, byPlan;
  nlohmann::json plans = nlohmann::json::array();
  for (const std::string& m : o.models) {
    CAGR_ASSIGN_OR_RETURN(Graph g, importOnnx("zoo/onnx/" + m + ".dynamo.onnx"));
    for (int64_t batch : o.batches) {
      CAGR_ASSIGN_OR_RETURN(auto inputs, tiledInputs(g, m, batch));
      for (const char* policyName : {"none", "greedy"}) {
        CAGR_ASSIGN_OR_RETURN(auto policy, makePolicy(policyName));
        EnvConfig cfg;
        cfg.batch = batch;
        cfg.disabled.push_back(ActionKind::kSetPrecision);
        CAGR_ASSIGN_OR_RETURN(OptimizeResult opt, optimize(g, target, *policy, cfg));
        Record proto{m, policyName, "", "", "", batch, 0, 0};
        size_t first = records.size();
        CAGR_ASSIGN_OR_RETURN(auto total, measurePlan(opt.plan, model, inputs, o, proto, records));
        byPlan["all plans"].predicted.push_back(total.first);
        byPlan["all plans"].measured.push_back(total.second);
        plans.push_back({{"model", m},
                         {"batch", batch},
                         {"plan", policyName},
                         {"modelled_s", total.first},
                         {"measured_kernel_sum_s", total.second}});
        for (size_t i = first; i < records.size(); ++i) {
          Group& c = byClass[records[i].shapeClass.empty() ? records[i].modelledKernel : records[i].shapeClass];
          c.predicted.push_back(records[i].modelledS);
          c.measured.push_back(records[i].measuredS);
        }
        std::fprintf(stderr, "%s b%lld %s: modelled %.3f ms, measured (sum of kernel times) %.3f ms\n", m.c_str(),
                     static_cast<long long>(batch), policyName, total.first * 1e3, total.second * 1e3);
      }
    }
  }
  if (o.json) {
    nlohmann::json j = {{"profile", o.profile}, {"threads", o.threads}, {"plans", plans}};
    for (const Record& r : records) {
      j["kernels"].push_back({{"model", r.model},
                              {"batch", r.batch},
                              {"plan", r.plan},
                              {"kernel", r.kernel},
                              {"modelled_kernel", r.modelledKernel},
                              {"shape_class", r.shapeClass},
                              {"modelled_s", r.modelledS},
                              {"measured_s", r.measuredS}});
    }
    std::cout << j.dump(1) << "\n";
    return Status::ok();
  }
  std::printf(
      "# Cost model vs CAGR's own CPU plans, kernel by kernel (issue 3)\n\nCommand: `build/cagr_bench_kernel_accuracy "
      "--plans %s --threads %d` (profile: `build/cagr profile --target cpu --threads %d -o %s`).\n\n",
      o.profile.c_str(), o.threads, o.threads, o.profile.c_str());
  std::printf(
      "Modelled: roofline cost model, profile `%s`. Measured: CAGR's CPU backend, %d thread(s), each kernel "
      "timed apart (Executable::profile, median %s), summed per plan.\n",
      o.profile.c_str(), o.threads, o.threads == 1 ? "CPU time of the calling thread" : "wall time");
  printGroups("plans (end to end)", byPlan);
  printGroups("kernel class (per kernel)", byClass);
  std::printf("\n| model | batch | plan | modelled ms | measured ms | error %% |\n|---|---|---|---|---|---|\n");
  for (const auto& p : plans) {
    double m = p["modelled_s"], x = p["measured_kernel_sum_s"];
    std::printf("| %s | %lld | %s | %.3f | %.3f | %+.1f |\n", p["model"].get<std::string>().c_str(),
                static_cast<long long>(p["batch"].get<int64_t>()), p["plan"].get<std::string>().c_str(), m * 1e3,
                x * 1e3, x > 0 ? 100 * (m - x) / x : 0.0);
  }
  return Status::ok();
}

}  // namespace

int runPlanKernels(int argc, char** argv) {
  Options o;
  Status st = parse(argc, argv, o);
  if (st.isOk()) st = run(o);
  if (!st.isOk()) {
    std::cerr << "error: " << st.message() << "\n";
    return 1;
  }
  return 0;
}

}  // namespace cagr_bench
