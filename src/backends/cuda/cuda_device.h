// CUDA runtime plumbing of the CUDA backend (runtime API only, never the
// driver library, so the build links without a GPU or driver): errors as
// Status values naming what failed, owning handles for device and pinned
// memory, streams, events and graph executables, and the device probe.
#pragma once

#include <cuda_runtime_api.h>

#include <memory>
#include <string>

#include "cagr/status.h"

namespace cagr::cuda {

/// ok for cudaSuccess; otherwise an internal error "`what`: <name>: <text>".
Status checkCuda(cudaError_t err, const std::string& what);

/// The device the backend runs on, or why there is none.
struct DeviceInfo {
  bool available = false;
  std::string reason;  // why not available
  int device = 0;
  std::string name;  // "NVIDIA H200"
  int major = 0, minor = 0;
  size_t memoryBytes = 0;
  int sharedPerBlockOptin = 0;
  int sms = 0;  // streaming multiprocessors
  /// NVRTC target for its own architecture: "sm_90a" on Hopper.
  std::string arch() const;
};
/// Probed once per process (cudaGetDeviceCount on device 0).
const DeviceInfo& deviceInfo();

namespace detail {
struct DeviceFree {
  void operator()(void* p) const;
};
struct HostFree {
  void operator()(void* p) const;
};
struct StreamDestroy {
  void operator()(cudaStream_t s) const;
};
struct EventDestroy {
  void operator()(cudaEvent_t e) const;
};
struct GraphExecDestroy {
  void operator()(cudaGraphExec_t g) const;
};
struct LibraryUnload {
  void operator()(cudaLibrary_t l) const;
};
}  // namespace detail

using DevicePtr = std::unique_ptr<void, detail::DeviceFree>;
using PinnedPtr = std::unique_ptr<void, detail::HostFree>;
using StreamPtr = std::unique_ptr<std::remove_pointer_t<cudaStream_t>, detail::StreamDestroy>;
using EventPtr = std::unique_ptr<std::remove_pointer_t<cudaEvent_t>, detail::EventDestroy>;
using GraphExecPtr = std::unique_ptr<std::remove_pointer_t<cudaGraphExec_t>, detail::GraphExecDestroy>;
using LibraryPtr = std::unique_ptr<std::remove_pointer_t<cudaLibrary_t>, detail::LibraryUnload>;

/// cudaMalloc of `bytes` (at least 1) for `what` (named in the error).
StatusOr<DevicePtr> deviceAlloc(size_t bytes, const std::string& what);
/// Page-locked host memory for staging copies.
StatusOr<PinnedPtr> pinnedAlloc(size_t bytes, const std::string& what);
/// A non-blocking stream (capturable into a CUDA graph).
StatusOr<StreamPtr> newStream();
/// An event; `timing` false makes it a cheap ordering-only event.
StatusOr<EventPtr> newEvent(bool timing);

}  // namespace cagr::cuda
