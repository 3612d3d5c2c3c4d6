// The cublaslt.cin steps of a CudaExecutable's batch state (see
// cuda_cin_run.h): each prepared with its device pointers and chunking, and
// one scratch buffer per batch size with a slice per stream, as large as
// the largest CIN step on that stream needs (steps of one stream run one
// after another, so they share it). A pooled layer writes its row sums, and
// its map only where a later step reads it.
#include "backends/cuda/cuda_executable_batch.h"

namespace cagr::cuda {

Status CudaExecutable::prepareCin(Batch& bt, size_t s) {
  const ProgramStep& st = prog_.steps[s];
  const CinGemm& c = prog_.cins.at(static_cast<size_t>(st.cin));
  const auto kernel = [&](int i) -> const GeneratedKernel* {
    return i >= 0 ? &prog_.kernels.at(static_cast<size_t>(i)) : nullptr;
  };
  PreparedCin::Kernels k;
  if (const GeneratedKernel* w = kernel(c.wKernel)) {
    k.w = kernels_.at(static_cast<size_t>(c.wKernel));
    k.wLaunch = w->launch;
  }
  k.z = kernels_.at(static_cast<size_t>(c.zKernel));
  k.zLaunch = kernel(c.zKernel)->launch;
  k.out = kernels_.at(static_cast<size_t>(c.outKernel));
  k.outLaunch = kernel(c.outKernel)->launch;
  if (const GeneratedKernel* z = kernel(c.zSliceKernel)) {
    k.zSlice = kernels_.at(static_cast<size_t>(c.zSliceKernel));
    k.zSliceLaunch = z->launch;
  }
  const auto written = [&](ValueId v) -> void* {
    return v != kNoValue ? bt.ptr[static_cast<size_t>(prog_.root(v))] : nullptr;
  };
  PreparedCin::Buffers buf{operandPtr(bt, s, c.xk), operandPtr(bt, s, c.x0), operandPtr(bt, s, c.w),
                           c.bias != kNoValue ? operandPtr(bt, s, c.bias) : nullptr, written(c.out),
                           written(c.pooled)};
  if (buf.xk == nullptr || buf.x0 == nullptr || buf.w == nullptr || (c.out != kNoValue && buf.out == nullptr) ||
      (c.pooled != kNoValue && buf.pooled == nullptr) || (c.bias != kNoValue && buf.bias == nullptr)) {
    return internalError(stepWhere(s) + ": an operand has no device buffer");
  }
  const auto& shape = bt.plan.shape[static_cast<size_t>(c.xk)];
  if (shape.size() != 3) return internalError(stepWhere(s) + ": xk has no [B, H, D] shape");
  bt.cin.resize(prog_.steps.size());
  CAGR_ASSIGN_OR_RETURN(bt.cin[s],
                        PreparedCin::create(*blas_, c, std::move(k), buf, shape[0], bt.cinWorkspaceLimit,
                                            bt.cinChunkBudget, bt.cinSlices, stepWhere(s)));
  bt.shapes[s] = bt.cin[s]->shapeText();
  return Status::ok();
}

// The first run timed each CIN GEMM's candidates in a scratch with room for
// the workspace any of them needs; the graph captured after it keeps only
// what the chosen ones need.
Status CudaExecutable::shrinkCinScratch(Batch& bt) {
  bool smaller = false;
  for (auto& c : bt.cin) smaller = (c && c->keepChosenWorkspace()) || smaller;
  if (!smaller) return Status::ok();
  CAGR_RETURN_IF_ERROR(checkCuda(cudaDeviceSynchronize(), "the first run, before its CIN scratch shrinks"));
  bt.cinScratch.reset();
  return allocateCinScratch(bt);
}

Status CudaExecutable::allocateCinScratch(Batch& bt) {
  std::vector<size_t> need(static_cast<size_t>(prog_.numStreams()), 0);
  for (size_t s = 0; s < bt.cin.size(); ++s) {
    if (!bt.cin[s]) continue;
    size_t& n = need[static_cast<size_t>(prog_.steps[s].stream)];
    n = std::max(n, bt.cin[s]->scratchBytes());
  }
  bt.cinScratchOffset.assign(need.size(), 0);
  size_t total = 0;
  for (size_t i = 0; i < need.size(); ++i) {
    bt.cinScratchOffset[i] = total;
    total += (need[i] + kDeviceAlign - 1) / kDeviceAlign * kDeviceAlign;
  }
  bt.cinScratchBytes = total;
  if (total == 0) return Status::ok();
  CAGR_ASSIGN_OR_RETURN(bt.cinScratch, deviceAlloc(total, "the cublaslt.cin outer-product scratch"));
  return Status::ok();
}

}  // namespace cagr::cuda
