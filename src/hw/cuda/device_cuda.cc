// Device facts (cudaDeviceProp, driver release), library versions, and the
// step runner shared by the profile and validation runs.
#include <algorithm>
#include <cctype>
#include <ctime>
#include <fstream>
#include <sstream>

#include "hw/cuda/kernels.h"
#include "hw/cuda/results_cuda.h"

namespace cagr::cuda {
namespace {

/// "580.159.04" from "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.04  Thu ...".
std::string readDriverRelease() {
  std::ifstream in("/proc/driver/nvidia/version");
  std::string line;
  if (!in || !std::getline(in, line)) return "";
  std::istringstream words(line);
  std::string w;
  while (words >> w) {
    const bool looksLikeVersion =
        std::count(w.begin(), w.end(), '.') >= 1 && std::isdigit(static_cast<unsigned char>(w[0])) &&
        std::all_of(w.begin(), w.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)) || c == '.'; });
    if (looksLikeVersion) return w;
  }
  return "";
}

}  // namespace

std::string cudaVersionString(int v) {
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

std::string DeviceFacts::describe() const {
  std::string s = name + " (";
  if (!driverRelease.empty()) s += "driver " + driverRelease + ", ";
  s += "CUDA " + cudaVersionString(driverApi) + " driver API, sm_" + std::to_string(ccMajor) + std::to_string(ccMinor) +
       ", " + std::to_string(sms) + " SMs)";
  return s;
}

std::string DeviceFacts::profileName() const {
  std::string lower;
  for (char c : name) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (lower.find("h200") != std::string::npos) return "h200-measured";
  std::string slug;
  for (char c : lower) {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      slug += c;
    } else if (!slug.empty() && slug.back() != '-') {
      slug += '-';
    }
  }
  while (!slug.empty() && slug.back() == '-') slug.pop_back();
  if (slug.rfind("nvidia-", 0) == 0) slug = slug.substr(7);
  return (slug.empty() ? std::string("gpu") : slug) + "-measured";
}

StatusOr<DeviceFacts> probeDevice() {
  DeviceFacts f;
  const cudaError_t err = cudaGetDeviceCount(&f.deviceCount);
  if (err != cudaSuccess || f.deviceCount <= 0) {
    cudaGetLastError();  // clear the sticky error
    return notFound(std::string("no CUDA device found (cudaGetDeviceCount: ") +
                    (err != cudaSuccess ? cudaGetErrorString(err) : "0 devices") + ")");
  }
  CAGR_CUDA_RETURN_IF_ERROR(cudaSetDevice(0));
  cudaDeviceProp p{};
  CAGR_CUDA_RETURN_IF_ERROR(cudaGetDeviceProperties(&p, 0));
  f.name = p.name;
  f.ccMajor = p.major;
  f.ccMinor = p.minor;
  f.sms = p.multiProcessorCount;
  f.warpSize = p.warpSize;
  f.l2Bytes = p.l2CacheSize;
  f.globalMemBytes = static_cast<int64_t>(p.totalGlobalMem);
  f.regsPerSm = p.regsPerMultiprocessor;
  f.sharedMemPerSm = static_cast<int64_t>(p.sharedMemPerMultiprocessor);
  f.memoryBusWidth = p.memoryBusWidth;
  CAGR_CUDA_RETURN_IF_ERROR(cudaDriverGetVersion(&f.driverApi));
  CAGR_CUDA_RETURN_IF_ERROR(cudaRuntimeGetVersion(&f.runtime));
  f.driverRelease = readDriverRelease();
  return f;
}

std::vector<std::pair<std::string, std::string>> cudaLibraries(const DeviceFacts& dev, const GemmBench& gemm) {
  std::vector<std::pair<std::string, std::string>> out;
  out.emplace_back("cuda_runtime", cudaVersionString(dev.runtime) + " (static cudart)");
  out.emplace_back("cuda_driver", (dev.driverRelease.empty() ? std::string("unknown release") : dev.driverRelease) +
                                      " (CUDA " + cudaVersionString(dev.driverApi) + " driver API)");
  out.emplace_back("own_kernels", kernelCompilerVersion());
  for (const auto& kv : gemm.versions()) out.push_back(kv);
  return out;
}


GpuTimingPlan planFor(bool quick, double targetS) {
  GpuTimingPlan p;
  p.targetS = targetS;
  p.minSamples = quick ? 3 : 5;
  p.maxSamples = quick ? 7 : 15;
  p.minSampleS = quick ? 1e-4 : 2e-4;
  return p;
}

Status runSteps(std::vector<Step>& steps, double budgetS, double start, const ProfileProgress& progress) {
  double total = 0;
  for (const Step& s : steps) total += std::max(s.plan.targetS, 0.02);
  double done = 0;
  for (Step& s : steps) {
    if (progress) progress(std::min(done / total, 1.0), s.what);
    GpuTimingPlan plan = s.plan;
    if (hw::nowSeconds() - start > 0.85 * budgetS) plan.targetS = 0;
    CAGR_RETURN_IF_ERROR(s.run(plan).withContext("cagr-profile-cuda: " + s.what));
    done += std::max(s.plan.targetS, 0.02);
  }
  if (progress) progress(1.0, "done");
  return Status::ok();
}

}  // namespace cagr::cuda
