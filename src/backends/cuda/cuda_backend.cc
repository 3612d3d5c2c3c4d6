// The "cuda" backend: compiles a MIR plan for the cuda family (verifyPlan
// against the H200 target's contract) into library GEMM steps and
// generated kernels (cuda_program.h), compiles the generated kernels as one
// NVRTC module for this GPU's architecture (cached by content hash), and
// hands them to a CudaExecutable. Misaligned feature widths of tensor-core
// GEMMs are padded first (lower/pad_gemm_dims.h), and a bf16 plan's
// activations stored in bf16 where its readers round them anyway
// (cuda_storage.cc). Without a GPU or driver it reports itself unavailable
// and compile() fails saying why.
#include <chrono>

#include "backends/cuda/cuda_device.h"
#include "backends/cuda/cuda_executable.h"
#include "backends/cuda/cuda_program.h"
#include "backends/cuda/cuda_timing.h"

namespace cagr::cuda {
namespace {

double secondsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

class CudaBackend : public ExecutionBackend {
 public:
  explicit CudaBackend(CudaBackendOptions opts) : opts_(opts) {}

  BackendCapabilities capabilities() const override {
    BackendCapabilities c;
    c.name = "cuda";
    c.family = Backend::kCuda;
    c.storage = {Precision::kF32, Precision::kBF16, Precision::kF16, Precision::kInt8Rowwise};
    c.math = {Precision::kF32, Precision::kTF32, Precision::kBF16, Precision::kF16};
    for (const KernelInfo& k : kernelCatalog()) {
      if (k.backend == Backend::kCuda && k.pattern != Pattern::kSingle) c.kernels.push_back(k.name);
    }
    const DeviceInfo& dev = deviceInfo();
    c.available = dev.available;
    c.note = dev.available ? dev.name + " (sm_" + std::to_string(dev.major) + std::to_string(dev.minor) +
                                 "): cuBLASLt / cuBLAS GEMMs, NVRTC kernels, CUDA graphs"
                           : "no CUDA device: " + dev.reason;
    return c;
  }

  StatusOr<std::unique_ptr<Executable>> compile(const Graph& given, const CompileOptions& opts) override {
    const DeviceInfo& dev = deviceInfo();
    if (!dev.available) return unsupported("no CUDA device: " + dev.reason);
    auto t0 = std::chrono::steady_clock::now();
    static const StatusOr<Target> cuda = resolveTarget("cuda");
    if (!cuda.isOk()) return cuda.status();
    CAGR_RETURN_IF_ERROR(verifyPlan(given, *cuda).withContext("cuda backend: the plan is not a valid cuda plan"));
    // The graph-level lowering steps (cuda_program.h), then the program.
    CAGR_ASSIGN_OR_RETURN(Graph split, prepareGraph(given, *cuda));
    auto plan = std::make_shared<const Graph>(std::move(split));
    std::vector<NodeId> planNodes = planNodeIds(given, *plan);
    CAGR_ASSIGN_OR_RETURN(Program program, lowerPlan(*plan, *cuda, dev.major * 10 + dev.minor, dev.sms));
    CompileStats stats;
    stats.lowerSeconds = secondsSince(t0);
    stats.generatedKernels = static_cast<int>(program.kernels.size());
    stats.libraryCalls = static_cast<int>(program.gemms.size());
    stats.moduleSourceBytes = program.moduleSource.size();
    CompiledModule module;
    if (!program.moduleSource.empty()) {
      NvrtcOptions o;
      o.arch = dev.arch();
      o.useCache = opts_.useCache;
      auto t1 = std::chrono::steady_clock::now();
      auto m = compileModule(program.moduleSource, o);
      if (!m.isOk()) return m.status().withContext("cuda backend: NVRTC (" + o.arch + ")");
      module = std::move(*m);
      stats.nvrtcSeconds = secondsSince(t1);
      stats.fromCache = module.fromCache;
    }
    CAGR_ASSIGN_OR_RETURN(
        std::unique_ptr<CudaExecutable> exe,
        CudaExecutable::create(std::move(plan), std::move(program),
                               module.cubin.empty() && module.ptx.empty() ? nullptr : &module, stats, opts));
    exe->setPlanNodes(std::move(planNodes));
    return std::unique_ptr<Executable>(std::move(exe));
  }

 private:
  CudaBackendOptions opts_;
};

}  // namespace

StatusOr<std::unique_ptr<ExecutionBackend>> makeCudaBackend(const CudaBackendOptions& opts) {
  return std::unique_ptr<ExecutionBackend>(std::make_unique<CudaBackend>(opts));
}

}  // namespace cagr::cuda
