// cagr-profile-cuda: measures the GPU it runs on (cuBLAS / cuBLASLt GEMMs,
// CAGR's own gather / eltwise / reduce kernels, launch and CUDA Graph
// costs) and returns a HardwareProfile with provenance "measured"; and the
// held-out validation set for the cost-model accuracy benchmark.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "cagr/hw.h"
#include "cagr/status.h"
#include "hw/profiler.h"
#include "hw/validation.h"

namespace cagr::cuda {

/// What the runtime says about device 0.
struct DeviceFacts {
  std::string name;  // "NVIDIA H200"
  int ccMajor = 0, ccMinor = 0;
  int sms = 0;
  int warpSize = 32;
  int64_t l2Bytes = 0;
  int64_t globalMemBytes = 0;
  int64_t regsPerSm = 0;       // 32-bit registers
  int64_t sharedMemPerSm = 0;  // bytes
  int memoryBusWidth = 0;      // bits
  int driverApi = 0;           // cudaDriverGetVersion: 13000 = CUDA 13.0
  int runtime = 0;             // cudaRuntimeGetVersion (static runtime linked in)
  std::string driverRelease;   // "580.159.04" from /proc/driver/nvidia/version; "" if unreadable
  int deviceCount = 0;

  std::string describe() const;     // "NVIDIA H200 (driver 580.159.04, CUDA 13.0 driver API, sm_90, 132 SMs)"
  std::string profileName() const;  // "h200-measured" for an H200, else a slug of the name + "-measured"
};

/// Device 0's facts; notFound("no CUDA device found (...)") when the runtime
/// sees no device or no usable driver.
StatusOr<DeviceFacts> probeDevice();

/// "13.0" from 13000.
std::string cudaVersionString(int v);

/// Full profile run: every benchmark family, fitted into a measured profile.
/// opts.threads is ignored. `progress` may be empty.
StatusOr<HardwareProfile> profileCuda(const ProfilerOptions& opts, const ProfileProgress& progress,
                                      ProfilerRunInfo* info = nullptr);

/// Held-out kernels and shapes (none used by profileCuda's fit).
StatusOr<hw::ValidationRun> validateCuda(const ProfilerOptions& opts, const ProfileProgress& progress);

}  // namespace cagr::cuda
