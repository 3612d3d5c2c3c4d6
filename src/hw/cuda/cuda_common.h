// Shared pieces of cagr-profile-cuda: CUDA error checks that return Status,
// an owning device buffer, and the event-based timing harness (median and
// spread of repeated runs, the same hw::Timing the CPU profiler fills).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <functional>
#include <string>
#include <utility>

#include "cagr/status.h"
#include "hw/microbench.h"

/// Returns an internal error naming the call if a CUDA runtime call fails.
#define CAGR_CUDA_RETURN_IF_ERROR(expr)                                                             \
  do {                                                                                              \
    const cudaError_t cagr_cuda_err_ = (expr);                                                      \
    if (cagr_cuda_err_ != cudaSuccess) {                                                            \
      return ::cagr::internalError(std::string(#expr) + ": " + cudaGetErrorString(cagr_cuda_err_)); \
    }                                                                                               \
  } while (0)

namespace cagr::cuda {

/// Status for a CUDA error code (ok for cudaSuccess); `what` names the call.
Status cudaStatus(cudaError_t err, const std::string& what);

/// cudaGetLastError after a launch, as a Status.
Status lastLaunchStatus(const std::string& kernel);

/// Owning, move-only device allocation (cudaMalloc; plain device memory).
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& o) noexcept : ptr_(std::exchange(o.ptr_, nullptr)), bytes_(std::exchange(o.bytes_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  static StatusOr<DeviceBuffer> alloc(size_t bytes, const std::string& what);

  void* get() const { return ptr_; }
  template <typename T>
  T* as() const {
    return static_cast<T*>(ptr_);
  }
  size_t bytes() const { return bytes_; }

 private:
  void* ptr_ = nullptr;
  size_t bytes_ = 0;
};

/// Owns a stream (created non-blocking by the caller, so that CUDA Graph
/// capture works on it).
struct StreamGuard {
  cudaStream_t s = nullptr;
  StreamGuard() = default;
  StreamGuard(const StreamGuard&) = delete;
  StreamGuard& operator=(const StreamGuard&) = delete;
  ~StreamGuard() {
    if (s != nullptr) cudaStreamDestroy(s);
  }
};

/// How long one GPU benchmark may take and how many samples it needs.
struct GpuTimingPlan {
  double targetS = 0.1;  // wall time to aim for
  int minSamples = 5;
  int maxSamples = 15;
  double minSampleS = 2e-4;  // batch calls until one sample lasts this long
};

/// Enqueues one call of the benchmarked work on the stream it was built for.
using GpuWork = std::function<Status()>;

/// Warm-up (>= 2 calls, synchronised), then samples of `inner` back-to-back
/// calls bracketed by CUDA events on `stream`; each sample's time is the
/// event interval divided by `inner`. Median, p10, p90 over samples.
StatusOr<hw::Timing> timeGpu(const GpuWork& work, cudaStream_t stream, const GpuTimingPlan& plan);

/// Host wall-clock timing of `work` (which must end synchronised), for
/// launch-rate probes: same warm-up and sample rules as timeGpu.
StatusOr<hw::Timing> timeWall(const GpuWork& work, const GpuTimingPlan& plan);

/// "64 MiB", "1.5 GiB".
std::string humanBytes(double bytes);

/// printf into a std::string.
using hw::fmt;

}  // namespace cagr::cuda
