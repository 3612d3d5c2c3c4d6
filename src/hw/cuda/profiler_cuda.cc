// profileCuda: plans the GPU micro-benchmarks against the time budget, runs
// them with progress reports, and hands the results to assemble_cuda.cc.
#include <algorithm>
#include <cmath>
#include <memory>

#include "hw/cuda/results_cuda.h"

namespace cagr::cuda {
namespace {

/// GEMMs grouped by kernel (the tensor-core kernels also at the misaligned
/// shapes); a shape a kernel cannot run (no cuBLASLt algorithm) is recorded
/// as skipped, any other failure stops the run.
void planGemm(std::vector<Step>& steps, CudaResults& r, std::unique_ptr<GemmBench>& gemm, double gemmS) {
  const std::vector<GemmKind> kinds = allGemmKinds();
  auto shapesFor = [&r](GemmKind k) {
    return tensorCoreKind(k) ? allProfileGemmShapes(r.quick) : profileGemmShapes(r.quick);
  };
  size_t calls = 0;
  for (GemmKind k : kinds) calls += shapesFor(k).size();
  const double per = gemmS / static_cast<double>(calls);
  for (GemmKind k : kinds) {
    for (const GemmDims& d : shapesFor(k)) {
      steps.push_back({"gemm " + d.label() + " " + gemmKindName(k), planFor(r.quick, per),
                       [&r, &gemm, k, d](const GpuTimingPlan& plan) -> Status {
                         StatusOr<hw::Timing> t = gemm->time(k, d, plan);
                         if (!t.isOk() && t.status().code() == ErrorCode::kUnsupported) {
                           r.gemmSkipped.push_back(std::string(gemmKindName(k)) + " " + d.label() + ": " +
                                                   t.status().message());
                           return Status::ok();
                         }
                         if (!t.isOk()) return t.status();
                         r.gemm.push_back({k, d, *t});
                         return Status::ok();
                       }});
    }
  }
}

/// Gathers, the stream kernel in device memory and in L2, the copy, the
/// row reduction, and the launch probes.
void planMemory(std::vector<Step>& steps, CudaResults& r, std::unique_ptr<GpuMemoryBench>& mem, double memS,
                double launchS) {
  std::vector<GatherSpec> gathers;
  for (bool zipf : {false, true})
    for (int64_t dim : {16, 64})
      for (int64_t pooling : {1, 20}) gathers.push_back({zipf, dim, pooling});
  const double per = memS / static_cast<double>(gathers.size() + 4);
  for (const GatherSpec& g : gathers) {
    steps.push_back({"gather " + g.label(), planFor(r.quick, per), [&r, &mem, g](const GpuTimingPlan& plan) -> Status {
                       CAGR_ASSIGN_OR_RETURN(MemRun m, mem->gather(g, plan));
                       r.gathers.emplace_back(g, m);
                       return Status::ok();
                     }});
  }
  const int64_t l2Half = r.dev.l2Bytes / 2;
  steps.push_back(
      {"stream L2 relu(a+b)", planFor(r.quick, per), [&r, &mem, l2Half](const GpuTimingPlan& plan) -> Status {
         CAGR_ASSIGN_OR_RETURN(r.l2, mem->eltwise(l2Half, plan, int64_t{256} << 20));
         return Status::ok();
       }});
  steps.push_back(
      {"stream device memory relu(a+b)", planFor(r.quick, per), [&r, &mem](const GpuTimingPlan& plan) -> Status {
         CAGR_ASSIGN_OR_RETURN(r.stream, mem->eltwise(0, plan, 0));
         return Status::ok();
       }});
  steps.push_back(
      {"cudaMemcpy device to device", planFor(r.quick, per), [&r, &mem](const GpuTimingPlan& plan) -> Status {
         CAGR_ASSIGN_OR_RETURN(r.copy, mem->copy(plan));
         return Status::ok();
       }});
  steps.push_back({"reduce rows [rows, 64]", planFor(r.quick, per), [&r, &mem](const GpuTimingPlan& plan) -> Status {
                     CAGR_ASSIGN_OR_RETURN(r.reduce, mem->rowSums(0, 64, plan));
                     return Status::ok();
                   }});
  const double perLaunch = launchS / 3;
  steps.push_back({"launch empty kernel", planFor(r.quick, perLaunch), [&r, &mem](const GpuTimingPlan& plan) -> Status {
                     CAGR_ASSIGN_OR_RETURN(r.launch, mem->launchThroughput(plan));
                     return Status::ok();
                   }});
  steps.push_back(
      {"launch + synchronise", planFor(r.quick, perLaunch), [&r, &mem](const GpuTimingPlan& plan) -> Status {
         CAGR_ASSIGN_OR_RETURN(r.launchSync, mem->launchRoundTrip(plan));
         return Status::ok();
       }});
  steps.push_back(
      {"CUDA Graph replay, 100 nodes", planFor(r.quick, perLaunch), [&r, &mem](const GpuTimingPlan& plan) -> Status {
         CAGR_ASSIGN_OR_RETURN(r.graph, mem->graphReplay(100, plan));
         return Status::ok();
       }});
}

}  // namespace

StatusOr<HardwareProfile> profileCuda(const ProfilerOptions& opts, const ProfileProgress& progress,
                                      ProfilerRunInfo* info) {
  if (!(opts.budgetSeconds > 0) || !std::isfinite(opts.budgetSeconds)) {
    return invalidArgument("cagr-profile-cuda: --budget must be a positive number of seconds");
  }
  const double start = hw::nowSeconds();
  CudaResults r;
  CAGR_ASSIGN_OR_RETURN(r.dev, probeDevice());
  r.quick = opts.quick;
  StreamGuard stream;
  CAGR_CUDA_RETURN_IF_ERROR(cudaStreamCreateWithFlags(&stream.s, cudaStreamNonBlocking));

  // Planned benchmark time is 60% of the budget; context creation, cuBLAS
  // heuristics, id generation and the minimum sample counts take the rest.
  const double budget = opts.quick ? std::min(opts.budgetSeconds, 12.0) : opts.budgetSeconds;
  const double planned = 0.6 * budget;
  if (progress) progress(0, "setup: cuBLAS, buffers, correctness check");
  CAGR_ASSIGN_OR_RETURN(std::unique_ptr<GemmBench> gemm, GemmBench::create(allProfileGemmShapes(opts.quick), stream.s));
  CAGR_RETURN_IF_ERROR(gemm->checkAll().withContext("cagr-profile-cuda: GEMM correctness check"));
  CAGR_RETURN_IF_ERROR(
      gemm->warmUp(profileGemmShapes(opts.quick), opts.quick ? 0.2 : 0.5).withContext("cagr-profile-cuda: warm-up"));
  r.libraries = cudaLibraries(r.dev, *gemm);
  CAGR_ASSIGN_OR_RETURN(std::unique_ptr<GpuMemoryBench> mem,
                        GpuMemoryBench::create(r.dev.l2Bytes, r.dev.sms, opts.quick, stream.s));
  CAGR_RETURN_IF_ERROR(mem->checkKernels().withContext("cagr-profile-cuda: own-kernel correctness check"));
  r.bufferBytes = mem->bufferBytes();

  std::vector<Step> steps;
  planGemm(steps, r, gemm, 0.6 * planned);
  planMemory(steps, r, mem, 0.32 * planned, 0.08 * planned);
  CAGR_RETURN_IF_ERROR(runSteps(steps, budget, start, progress));
  CAGR_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream.s));
  mem.reset();
  gemm.reset();
  r.seconds = hw::nowSeconds() - start;
  return assembleCudaProfile(r, info);
}

}  // namespace cagr::cuda
