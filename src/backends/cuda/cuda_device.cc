// CUDA runtime plumbing of the CUDA backend (see cuda_device.h).
#include "backends/cuda/cuda_device.h"

#include <algorithm>

namespace cagr::cuda {

Status checkCuda(cudaError_t err, const std::string& what) {
  if (err == cudaSuccess) return Status::ok();
  return internalError(what + ": " + cudaGetErrorName(err) + ": " + cudaGetErrorString(err));
}

std::string DeviceInfo::arch() const {
  // Hopper and later have arch-specific ("a") features the generator may use.
  return "sm_" + std::to_string(major) + std::to_string(minor) + (major >= 9 ? "a" : "");
}

namespace {

DeviceInfo probe() {
  DeviceInfo d;
  int count = 0;
  cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess || count == 0) {
    cudaGetLastError();  // leave no error behind for later calls
    d.reason = err != cudaSuccess
                   ? std::string("cudaGetDeviceCount: ") + cudaGetErrorName(err) + ": " + cudaGetErrorString(err)
                   : std::string("the driver reports no CUDA device");
    return d;
  }
  cudaDeviceProp p{};
  err = cudaGetDeviceProperties(&p, d.device);
  if (err == cudaSuccess) err = cudaSetDevice(d.device);
  if (err != cudaSuccess) {
    cudaGetLastError();
    d.reason = std::string("device 0: ") + cudaGetErrorString(err);
    return d;
  }
  d.available = true;
  d.name = p.name;
  d.major = p.major;
  d.minor = p.minor;
  d.memoryBytes = p.totalGlobalMem;
  d.sharedPerBlockOptin = static_cast<int>(p.sharedMemPerBlockOptin);
  d.sms = p.multiProcessorCount;
  return d;
}

}  // namespace

const DeviceInfo& deviceInfo() {
  static const DeviceInfo info = probe();
  return info;
}

namespace detail {
void DeviceFree::operator()(void* p) const {
  cudaFree(p);
}
void HostFree::operator()(void* p) const {
  cudaFreeHost(p);
}
void StreamDestroy::operator()(cudaStream_t s) const {
  cudaStreamDestroy(s);
}
void EventDestroy::operator()(cudaEvent_t e) const {
  cudaEventDestroy(e);
}
void GraphExecDestroy::operator()(cudaGraphExec_t g) const {
  cudaGraphExecDestroy(g);
}
void LibraryUnload::operator()(cudaLibrary_t l) const {
  cudaLibraryUnload(l);
}
}  // namespace detail

StatusOr<DevicePtr> deviceAlloc(size_t bytes, const std::string& what) {
  void* p = nullptr;
  CAGR_RETURN_IF_ERROR(checkCuda(cudaMalloc(&p, std::max<size_t>(bytes, 1)),
                                 "cudaMalloc of " + std::to_string(bytes) + " bytes for " + what));
  return DevicePtr(p);
}

StatusOr<PinnedPtr> pinnedAlloc(size_t bytes, const std::string& what) {
  void* p = nullptr;
  CAGR_RETURN_IF_ERROR(checkCuda(cudaHostAlloc(&p, std::max<size_t>(bytes, 1), cudaHostAllocDefault),
                                 "cudaHostAlloc of " + std::to_string(bytes) + " bytes for " + what));
  return PinnedPtr(p);
}

StatusOr<StreamPtr> newStream() {
  cudaStream_t s = nullptr;
  CAGR_RETURN_IF_ERROR(checkCuda(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreate"));
  return StreamPtr(s);
}

StatusOr<EventPtr> newEvent(bool timing) {
  cudaEvent_t e = nullptr;
  CAGR_RETURN_IF_ERROR(
      checkCuda(cudaEventCreateWithFlags(&e, timing ? cudaEventDefault : cudaEventDisableTiming), "cudaEventCreate"));
  return EventPtr(e);
}

}  // namespace cagr::cuda
