// CUDA error helpers, DeviceBuffer and the event / wall-clock timing harness.
#include "hw/cuda/cuda_common.h"

#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <vector>

namespace cagr::cuda {

Status cudaStatus(cudaError_t err, const std::string& what) {
  if (err == cudaSuccess) return Status::ok();
  return internalError(what + ": " + cudaGetErrorString(err));
}

Status lastLaunchStatus(const std::string& kernel) {
  return cudaStatus(cudaGetLastError(), "launching " + kernel);
}

DeviceBuffer::~DeviceBuffer() {
  if (ptr_ != nullptr) cudaFree(ptr_);
}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& o) noexcept {
  if (this != &o) {
    if (ptr_ != nullptr) cudaFree(ptr_);
    ptr_ = std::exchange(o.ptr_, nullptr);
    bytes_ = std::exchange(o.bytes_, 0);
  }
  return *this;
}

StatusOr<DeviceBuffer> DeviceBuffer::alloc(size_t bytes, const std::string& what) {
  DeviceBuffer b;
  const cudaError_t err = cudaMalloc(&b.ptr_, std::max<size_t>(bytes, 256));
  if (err != cudaSuccess) {
    b.ptr_ = nullptr;
    return internalError("cudaMalloc " + humanBytes(static_cast<double>(bytes)) + " for " + what + ": " +
                         cudaGetErrorString(err));
  }
  b.bytes_ = bytes;
  return b;
}

std::string humanBytes(double bytes) {
  char buf[32];
  if (bytes >= 1024.0 * 1024 * 1024) {
    std::snprintf(buf, sizeof(buf), "%.2f GiB", bytes / (1024.0 * 1024 * 1024));
  } else if (bytes >= 1024.0 * 1024) {
    std::snprintf(buf, sizeof(buf), "%.0f MiB", bytes / (1024.0 * 1024));
  } else {
    std::snprintf(buf, sizeof(buf), "%.0f KiB", bytes / 1024.0);
  }
  return buf;
}

namespace {

/// RAII pair of CUDA events.
struct EventPair {
  cudaEvent_t start = nullptr, stop = nullptr;
  ~EventPair() {
    if (start != nullptr) cudaEventDestroy(start);
    if (stop != nullptr) cudaEventDestroy(stop);
  }
  Status create() {
    CAGR_CUDA_RETURN_IF_ERROR(cudaEventCreate(&start));
    CAGR_CUDA_RETURN_IF_ERROR(cudaEventCreate(&stop));
    return Status::ok();
  }
};

/// Seconds per call of `calls` back-to-back calls, timed with events.
StatusOr<double> eventSeconds(const GpuWork& work, cudaStream_t stream, EventPair& ev, int64_t calls) {
  CAGR_CUDA_RETURN_IF_ERROR(cudaEventRecord(ev.start, stream));
  for (int64_t i = 0; i < calls; ++i) CAGR_RETURN_IF_ERROR(work());
  CAGR_CUDA_RETURN_IF_ERROR(cudaEventRecord(ev.stop, stream));
  CAGR_CUDA_RETURN_IF_ERROR(cudaEventSynchronize(ev.stop));
  float ms = 0;
  CAGR_CUDA_RETURN_IF_ERROR(cudaEventElapsedTime(&ms, ev.start, ev.stop));
  return static_cast<double>(ms) * 1e-3 / static_cast<double>(calls);
}

/// Seconds per call on the host clock; `work` ends synchronised.
StatusOr<double> wallSeconds(const GpuWork& work, int64_t calls) {
  const double t0 = hw::nowSeconds();
  for (int64_t i = 0; i < calls; ++i) CAGR_RETURN_IF_ERROR(work());
  return (hw::nowSeconds() - t0) / static_cast<double>(calls);
}

/// The shared sampling loop: `once(calls)` returns seconds per call.
StatusOr<hw::Timing> sample(const std::function<StatusOr<double>(int64_t)>& once, const GpuTimingPlan& plan) {
  // Warm-up: two single calls (module load, cuBLAS heuristics, first touch),
  // then a short batch for the per-call estimate.
  for (int i = 0; i < 2; ++i) {
    CAGR_ASSIGN_OR_RETURN(double w, once(1));
    (void)w;
  }
  CAGR_ASSIGN_OR_RETURN(double perCall, once(3));
  perCall = std::max(perCall, 1e-8);

  hw::Timing t;
  const double sampleS = std::max(plan.minSampleS, plan.targetS / std::max(plan.maxSamples, 1));
  t.inner = std::clamp<int64_t>(static_cast<int64_t>(std::ceil(sampleS / perCall)), 1, 20000);
  const double perSample = perCall * static_cast<double>(t.inner);
  const int fit = static_cast<int>(plan.targetS / perSample);
  const int samples = std::clamp(fit, plan.minSamples, std::max(plan.minSamples, plan.maxSamples));
  std::vector<double> times;
  times.reserve(static_cast<size_t>(samples));
  for (int s = 0; s < samples; ++s) {
    CAGR_ASSIGN_OR_RETURN(double secs, once(t.inner));
    times.push_back(secs);
  }
  t.samples = samples;
  t.median = hw::quantile(times, 0.5);
  t.p10 = hw::quantile(times, 0.1);
  t.p90 = hw::quantile(times, 0.9);
  return t;
}

}  // namespace

StatusOr<hw::Timing> timeGpu(const GpuWork& work, cudaStream_t stream, const GpuTimingPlan& plan) {
  EventPair ev;
  CAGR_RETURN_IF_ERROR(ev.create());
  return sample([&](int64_t calls) { return eventSeconds(work, stream, ev, calls); }, plan);
}

StatusOr<hw::Timing> timeWall(const GpuWork& work, const GpuTimingPlan& plan) {
  return sample([&](int64_t calls) { return wallSeconds(work, calls); }, plan);
}

}  // namespace cagr::cuda
