// validateCuda: times held-out kernels and shapes (none of them used by the
// profile fit) and returns them as ValidationRecords for the cost-model
// accuracy benchmark.
#include <algorithm>
#include <cmath>
#include <memory>

#include "hw/cuda/results_cuda.h"

namespace cagr::cuda {
namespace {

hw::ValidationRecord fromMem(const MemRun& m, const std::string& shapeClass) {
  hw::ValidationRecord v;
  v.kernel = m.kernel;
  v.shapeClass = shapeClass;
  v.config = m.what;
  v.flops = m.flopsPerCall;
  v.bytes = m.bytesPerCall;
  v.measuredS = m.t.median;
  v.spread = m.t.spread();
  v.samples = m.t.samples;
  return v;
}

void planGemm(std::vector<Step>& steps, hw::ValidationRun& run, std::unique_ptr<GemmBench>& gemm, bool quick,
              double gemmS) {
  const std::vector<GemmDims> shapes = validationGemmShapes();
  const double per = gemmS / static_cast<double>(shapes.size() * allGemmKinds().size());
  for (GemmKind k : allGemmKinds()) {
    for (const GemmDims& d : shapes) {
      steps.push_back({"gemm " + d.label() + " " + gemmKindName(k), planFor(quick, per),
                       [&run, &gemm, k, d](const GpuTimingPlan& plan) -> Status {
                         StatusOr<hw::Timing> t = gemm->time(k, d, plan);
                         if (!t.isOk() && t.status().code() == ErrorCode::kUnsupported) return Status::ok();
                         if (!t.isOk()) return t.status();
                         hw::ValidationRecord v;
                         v.kernel = gemmKindName(k);
                         v.shapeClass = gemmClassOf(d);
                         v.m = d.m;
                         v.n = d.n;
                         v.k = d.k;
                         v.config = d.label() + (k == GemmKind::kBf16 ? " bf16" : " fp32");
                         v.flops = d.flops();
                         v.bytes = d.bytes(gemmElementBytes(k));
                         v.measuredS = t->median;
                         v.spread = t->spread();
                         v.samples = t->samples;
                         run.records.push_back(v);
                         return Status::ok();
                       }});
    }
  }
}

void planMemory(std::vector<Step>& steps, hw::ValidationRun& run, std::unique_ptr<GpuMemoryBench>& mem, bool quick,
                double memS) {
  const std::vector<GatherSpec> gathers = {{false, 32, 5}, {true, 32, 5}, {false, 16, 8}, {true, 64, 3}};
  const std::vector<int64_t> eltwiseBytes = {int64_t{3} << 20, int64_t{48} << 20, int64_t{768} << 20};
  const std::vector<std::pair<int64_t, int64_t>> reductions = {{2048, 64}, {300000, 64}, {1000000, 128}};
  const double per = memS / static_cast<double>(gathers.size() + eltwiseBytes.size() + reductions.size());
  for (const GatherSpec& g : gathers) {
    steps.push_back({"gather " + g.label(), planFor(quick, per), [&run, &mem, g](const GpuTimingPlan& plan) -> Status {
                       CAGR_ASSIGN_OR_RETURN(MemRun m, mem->gather(g, plan, int64_t{3} << 20));
                       run.records.push_back(fromMem(m, g.zipf ? "gather.zipf" : "gather.uniform"));
                       return Status::ok();
                     }});
  }
  for (int64_t bytes : eltwiseBytes) {
    steps.push_back({"eltwise " + humanBytes(static_cast<double>(bytes)), planFor(quick, per),
                     [&run, &mem, bytes](const GpuTimingPlan& plan) -> Status {
                       CAGR_ASSIGN_OR_RETURN(MemRun m, mem->eltwise(bytes, plan, 0));
                       run.records.push_back(fromMem(m, "eltwise.stream"));
                       return Status::ok();
                     }});
  }
  for (const auto& [rows, cols] : reductions) {
    steps.push_back({"reduce [" + std::to_string(rows) + ", " + std::to_string(cols) + "]", planFor(quick, per),
                     [&run, &mem, rows = rows, cols = cols](const GpuTimingPlan& plan) -> Status {
                       CAGR_ASSIGN_OR_RETURN(MemRun m, mem->rowSums(rows, cols, plan));
                       run.records.push_back(fromMem(m, "reduce.rows"));
                       return Status::ok();
                     }});
  }
}

}  // namespace

StatusOr<hw::ValidationRun> validateCuda(const ProfilerOptions& opts, const ProfileProgress& progress) {
  if (!(opts.budgetSeconds > 0) || !std::isfinite(opts.budgetSeconds)) {
    return invalidArgument("cagr-profile-cuda: --budget must be a positive number of seconds");
  }
  const double start = hw::nowSeconds();
  CAGR_ASSIGN_OR_RETURN(DeviceFacts dev, probeDevice());
  StreamGuard stream;
  CAGR_CUDA_RETURN_IF_ERROR(cudaStreamCreateWithFlags(&stream.s, cudaStreamNonBlocking));
  const double budget = opts.quick ? std::min(opts.budgetSeconds, 12.0) : std::min(opts.budgetSeconds, 45.0);
  const double planned = 0.6 * budget;
  if (progress) progress(0, "setup: cuBLAS, buffers, correctness check");
  CAGR_ASSIGN_OR_RETURN(std::unique_ptr<GemmBench> gemm, GemmBench::create(validationGemmShapes(), stream.s));
  CAGR_RETURN_IF_ERROR(gemm->checkAll().withContext("cagr-profile-cuda: GEMM correctness check"));
  CAGR_RETURN_IF_ERROR(
      gemm->warmUp(validationGemmShapes(), opts.quick ? 0.2 : 0.5).withContext("cagr-profile-cuda: warm-up"));
  CAGR_ASSIGN_OR_RETURN(std::unique_ptr<GpuMemoryBench> mem,
                        GpuMemoryBench::create(dev.l2Bytes, dev.sms, opts.quick, stream.s));
  CAGR_RETURN_IF_ERROR(mem->checkKernels().withContext("cagr-profile-cuda: own-kernel correctness check"));

  hw::ValidationRun run;
  run.tool = std::string("cagr-profile-cuda --validate") + (opts.quick ? " --quick" : "");
  run.measuredOn = dev.describe();
  run.date = isoNow();
  for (const auto& [name, version] : cudaLibraries(dev, *gemm)) run.libraries[name] = version;
  std::vector<Step> steps;
  planGemm(steps, run, gemm, opts.quick, 0.6 * planned);
  planMemory(steps, run, mem, opts.quick, 0.4 * planned);
  CAGR_RETURN_IF_ERROR(runSteps(steps, budget, start, progress));
  CAGR_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream.s));
  return run;
}

}  // namespace cagr::cuda
