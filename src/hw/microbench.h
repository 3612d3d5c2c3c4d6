// Internals of `cagr profile --target cpu`: the timing harness, the GEMM
// kernel runners (OpenBLAS, oneDNN, own), the machine facts read from
// /proc and /sys, and the benchmark families. profiler_cpu.cc strings them
// together into a HardwareProfile.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "cagr/status.h"

namespace cagr::hw {

// ------------------------------------------------------------------ timing

/// Median and spread of repeated timings of one benchmark (seconds per call).
struct Timing {
  double median = 0;
  double p10 = 0;
  double p90 = 0;
  int samples = 0;    // timed samples (each the mean of `inner` calls)
  int64_t inner = 1;  // calls per sample
  double spread() const { return median > 0 ? (p90 - p10) / median : 0; }
};

/// How long a benchmark may take and how many samples it needs.
struct TimingPlan {
  double targetS = 0.2;  // wall time to aim for (samples are cut to fit)
  int minSamples = 3;
  int maxSamples = 15;
  double minSampleS = 1e-3;  // batch calls until one sample lasts this long
};

/// Warm-up (at least two calls), then samples of `inner` back-to-back calls;
/// a sample lasts max(minSampleS, targetS / maxSamples) so that short
/// kernels spend their share of the budget averaging more calls.
Timing timeIt(const std::function<void()>& fn, const TimingPlan& plan);

/// Process-wide: time samples with the calling thread's CPU time instead of
/// wall time (budgets stay wall time). Single-threaded profiles use it, so
/// that other processes on a shared machine do not inflate the timings.
void useThreadCpuTime(bool on);
bool usingThreadCpuTime();

/// q-quantile (0..1) of `v` by linear interpolation; 0 for an empty vector.
double quantile(std::vector<double> v, double q);
/// Current time as ISO 8601 UTC ("2026-11-29T21:40:00Z"), for profile dates.
std::string isoNow();
/// printf into a std::string (profile and record sources).
std::string fmt(const char* f, ...) __attribute__((format(printf, 1, 2)));

/// Rate of `work` per second net of a fixed per-call `overhead`: the cost
/// model adds overhead_s on top of work / rate, so fitted rates must not
/// include it (capped so a noisy overhead never makes the rate explode).
double netRate(double work, double seconds, double overhead);
double median(std::vector<double> v);

double nowSeconds();

// ------------------------------------------------------------------ machine

struct CacheLevel {
  int level = 0;
  std::string type;  // "Data" | "Unified"
  int64_t sizePerInstance = 0;
  int sharedCpus = 1;      // CPUs sharing one instance
  int64_t totalBytes = 0;  // over all instances on the machine
  std::string sysfsPath;
};

struct MachineInfo {
  std::string hostname;
  std::string cpuModel;  // /proc/cpuinfo "model name"
  std::string vendorId;  // "GenuineIntel" | "AuthenticAMD" | ...
  std::string flags;     // /proc/cpuinfo "flags", space separated
  double mhz = 0;        // /proc/cpuinfo "cpu MHz" (current, of cpu0)
  int onlineCpus = 1;
  int64_t memTotalBytes = 0;       // /proc/meminfo MemTotal
  std::vector<CacheLevel> caches;  // data/unified levels, L1d first
  bool hasFlag(const std::string& f) const;
  int vectorBits() const;    // 512 (avx512f), 256 (avx2/avx), 128
  int64_t llcBytes() const;  // largest total cache; 32 MiB if sysfs says nothing
};

MachineInfo readMachineInfo();

// ------------------------------------------------------------------ GEMM

enum class GemmKernel { kOpenBlas, kOneDnn, kOneDnnRelu, kOwn };
const char* gemmKernelName(GemmKernel k);  // "openblas.sgemm", "onednn.matmul", ...
std::vector<GemmKernel> allGemmKernels();

/// One (kernel, shape) ready to run: C[M,N] = A[M,K] * B[K,N] row-major; the
/// ReLU variant computes relu(A*B + bias[N]). oneDNN primitives are created
/// once here and reused by every run().
class GemmRunner {
 public:
  virtual ~GemmRunner() = default;
  virtual Status run(const float* a, const float* b, const float* bias, float* c) = 0;
};
StatusOr<std::unique_ptr<GemmRunner>> makeGemmRunner(GemmKernel k, int64_t m, int64_t kDim, int64_t n);

/// Sets the thread count of OpenBLAS and of the OpenMP runtime (own kernels, oneDNN).
void setKernelThreads(int threads);

/// Library versions: "openblas", "onednn", "compiler", "openmp".
std::vector<std::pair<std::string, std::string>> kernelLibraryVersions();

struct GemmShape {
  int64_t m, k, n;
  std::string label() const;  // "1024x512x256" (MxKxN)
  double flops() const { return 2.0 * m * k * n; }
};

/// "gemm.tiny" .. "gemm.large", "gemm.skinny": the cost model's gemmShapeClass.
std::string gemmShapeClass(const GemmShape& s);
std::vector<GemmShape> gemmShapes(bool quick);

struct GemmResult {
  GemmKernel kernel;
  GemmShape shape;
  Timing t;
  double flopsPerS() const { return t.median > 0 ? shape.flops() / t.median : 0; }
};

/// Inputs and outputs big enough for every shape of a list, filled with
/// reproducible values in [-1, 1].
struct GemmBuffers {
  std::vector<float> a, b, bias, c;
};
GemmBuffers makeGemmBuffers(const std::vector<GemmShape>& shapes);

/// Creates the runner (outside the timing), then times it.
StatusOr<GemmResult> benchGemm(GemmKernel k, const GemmShape& s, GemmBuffers& buf, const TimingPlan& plan);

// ------------------------------------------------------------------ memory

/// Pooled-sum gather over a table larger than the LLC.
struct GatherConfig {
  bool zipf = false;
  int64_t dim = 16;
  int64_t pooling = 1;
  std::string label() const;  // "uniform dim16 p1"
};

struct MemResult {
  std::string kernel;  // "own.gather", "own.eltwise", "own.copy", ...
  std::string what;    // label for sources and progress
  Timing t;
  double bytesPerCall = 0;
  double flopsPerCall = 0;
  double bytesPerS() const { return t.median > 0 ? bytesPerCall / t.median : 0; }
};

/// One buffer larger than the last-level cache (4x LLC, 64 MiB .. 1 GiB;
/// quick mode caps it at 256 MiB), first-touched by the threads that stream
/// it. The gather views it as a [rows, dim] table; the streaming kernels
/// split it into three arrays a | b | c; the row sums read it as [rows, 64].
class MemoryBench {
 public:
  static StatusOr<std::unique_ptr<MemoryBench>> create(int64_t llcBytes, bool quick);

  int64_t bufferBytes() const { return floats_ * 4; }
  MemResult gather(const GatherConfig& c, const TimingPlan& plan);
  /// y = relu(a + b) over a working set of `workingSetBytes` (3 arrays),
  /// repeated to >= 64 MiB per call; 0 = the whole buffer (DRAM).
  MemResult eltwise(int64_t workingSetBytes, const TimingPlan& plan);
  MemResult copy(const TimingPlan& plan);
  MemResult triad(const TimingPlan& plan);
  MemResult rowSums(const TimingPlan& plan);

 private:
  MemoryBench() = default;
  struct Free {
    void operator()(float* p) const;
  };
  std::unique_ptr<float, Free> buf_;  // 64-byte aligned
  std::unique_ptr<float, Free> out_;  // gather / row-sum outputs
  int64_t floats_ = 0;
  int64_t outFloats_ = 0;
};

/// Zipf(a) ranks in [0, rows), scattered over the table by a fixed bijection.
std::vector<int64_t> zipfIds(int64_t count, int64_t rows, double a, uint64_t seed);
std::vector<int64_t> uniformIds(int64_t count, int64_t rows, uint64_t seed);

}  // namespace cagr::hw
