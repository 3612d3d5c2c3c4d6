// The backends this build has, by name, and the reference backend: the
// reference executor behind the Executable interface (the oracle the
// conformance suite compares every other backend with). "cuda" exists in
// builds with the CUDA toolkit; it reports itself unavailable where no GPU
// or driver is found.
#include "backends/cuda/cuda_timing.h"
#include "cagr/analysis.h"
#include "cagr/backend.h"
#include "cagr/reference.h"

namespace cagr {
namespace cpu {
std::unique_ptr<ExecutionBackend> makeCpuBackend();
}

namespace {

class ReferenceExecutable : public Executable {
 public:
  explicit ReferenceExecutable(Graph g) : g_(std::move(g)) {}
  StatusOr<std::vector<Tensor>> run(const std::vector<std::pair<std::string, Tensor>>& inputs) override {
    CAGR_ASSIGN_OR_RETURN(std::vector<Tensor> out, runReference(g_, inputs));
    std::vector<std::vector<int64_t>> shapes;
    CAGR_ASSIGN_OR_RETURN(std::vector<Tensor> given, matchGraphInputs(g_, inputs));
    for (const Tensor& t : given) shapes.push_back(t.shape());
    CAGR_ASSIGN_OR_RETURN(SymbolBindings b, g_.bindSymbols(shapes));
    CAGR_ASSIGN_OR_RETURN(GraphStats st, computeStats(g_, b));
    peak_ = st.peakActivationBytes + st.paramBytes;
    return out;
  }
  int64_t peakMemoryBytes() const override { return peak_; }
  std::vector<std::string> kernelReport() const override { return {"reference executor: every node on its own"}; }

 private:
  Graph g_;
  int64_t peak_ = 0;
};

class ReferenceBackend : public ExecutionBackend {
 public:
  BackendCapabilities capabilities() const override {
    BackendCapabilities c;
    c.name = "reference";
    c.family = Backend::kCpu;
    c.storage = {Precision::kF32, Precision::kBF16, Precision::kF16, Precision::kInt8Rowwise};
    c.math = {Precision::kF32, Precision::kTF32, Precision::kBF16, Precision::kF16};
    c.note = "the numerical oracle: plain kernels, double accumulation, precisions emulated";
    return c;
  }
  StatusOr<std::unique_ptr<Executable>> compile(const Graph& plan, const CompileOptions&) override {
    CAGR_RETURN_IF_ERROR(plan.verify());
    return std::unique_ptr<Executable>(std::make_unique<ReferenceExecutable>(plan));
  }
};

}  // namespace

#ifndef CAGR_HAVE_CUDA
namespace cuda {
StatusOr<std::unique_ptr<ExecutionBackend>> makeCudaBackend(const CudaBackendOptions&) {
  return unsupported("this build has no CUDA backend (the CUDA toolkit was not found when it was configured)");
}
}  // namespace cuda
#endif

std::vector<std::string> backendNames() {
#ifdef CAGR_HAVE_CUDA
  return {"reference", "cpu", "cuda"};
#else
  return {"reference", "cpu"};
#endif
}

StatusOr<std::unique_ptr<ExecutionBackend>> makeBackend(const std::string& name) {
  if (name == "reference") return std::unique_ptr<ExecutionBackend>(std::make_unique<ReferenceBackend>());
  if (name == "cpu") return cpu::makeCpuBackend();
  if (name == "cuda") return cuda::makeCudaBackend();
  std::string known;
  for (const std::string& n : backendNames()) known += (known.empty() ? "" : ", ") + n;
  return invalidArgument("unknown backend '" + name + "' (" + known + ")");
}

}  // namespace cagr
