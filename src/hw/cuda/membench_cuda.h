// Memory-bound and launch micro-benchmarks on the GPU: embedding gathers
// (uniform and Zipf ids) over a table several times the L2, the streaming
// elementwise kernel in device memory and in L2, cudaMemcpy device to
// device, row reductions, plain kernel launches and CUDA Graph replay.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "hw/cuda/cuda_common.h"

namespace cagr::cuda {

struct GatherSpec {
  bool zipf = false;
  int64_t dim = 16;
  int64_t pooling = 1;
  std::string label() const;  // "zipf dim16 p20"
};

/// One timed configuration: what ran, its timing, and the work per call.
struct MemRun {
  std::string kernel;  // "own.gather", "own.eltwise", "cuda.memcpy", "own.reduce", "cuda.launch", ...
  std::string what;    // label for sources and progress
  hw::Timing t;
  double bytesPerCall = 0;
  double flopsPerCall = 0;
  double bytesPerS() const { return t.median > 0 ? bytesPerCall / t.median : 0; }
};

/// Zipf(a) ranks over [0, rows) (inverse CDF of the continuous power law,
/// as the CPU profiler draws them), hot ranks scattered over the table by a
/// fixed bijection; generated on the host with several threads.
std::vector<int32_t> zipfIds32(int64_t count, int64_t rows, double a, uint64_t seed);
std::vector<int32_t> uniformIds32(int64_t count, int64_t rows, uint64_t seed);

class GpuMemoryBench {
 public:
  /// One buffer of max(1 GiB, 4 x L2) (the gather table, the three stream
  /// arrays, the copy halves, the reduction matrix), an id buffer and an
  /// output buffer; quick mode uses a quarter of the lookups.
  static StatusOr<std::unique_ptr<GpuMemoryBench>> create(int64_t l2Bytes, int sms, bool quick, cudaStream_t stream);
  ~GpuMemoryBench();

  int64_t bufferBytes() const { return static_cast<int64_t>(buf_.bytes()); }
  /// own.gather, own.eltwise and own.reduce at small sizes against host
  /// results (each element within 1e-5 relative + 1e-5 absolute).
  Status checkKernels();

  /// Bytes counted as cost_rules.cc counts an EmbeddingBag: rows read + ids
  /// read + pooled rows written. `lookups` 0: the default count.
  StatusOr<MemRun> gather(const GatherSpec& g, const GpuTimingPlan& plan, int64_t lookups = 0);
  /// y = relu(a + b): 3 arrays totalling `workingSetBytes` (0: the whole
  /// buffer, device memory), passes repeated in-kernel until a call moves
  /// at least `minBytesPerCall` (0: one pass).
  StatusOr<MemRun> eltwise(int64_t workingSetBytes, const GpuTimingPlan& plan, int64_t minBytesPerCall);
  /// cudaMemcpyAsync device to device of half the buffer (read + write counted).
  StatusOr<MemRun> copy(const GpuTimingPlan& plan);
  /// Row sums of [rows, cols]; rows 0: the whole buffer.
  StatusOr<MemRun> rowSums(int64_t rows, int64_t cols, const GpuTimingPlan& plan);
  /// Empty kernels launched back to back: host wall time per launch
  /// (batches of 100 launches, one synchronisation per batch).
  StatusOr<MemRun> launchThroughput(const GpuTimingPlan& plan);
  /// One empty kernel launch + cudaStreamSynchronize, wall time.
  StatusOr<MemRun> launchRoundTrip(const GpuTimingPlan& plan);
  /// A CUDA Graph of `nodes` empty kernels replayed 5 times per sample:
  /// wall time per node.
  StatusOr<MemRun> graphReplay(int nodes, const GpuTimingPlan& plan);

 private:
  GpuMemoryBench() = default;
  cudaStream_t stream_ = nullptr;
  int sms_ = 1;
  bool quick_ = false;
  DeviceBuffer buf_, ids_, out_;
};

}  // namespace cagr::cuda
