// GPU memory and launch micro-benchmarks (see membench_cuda.h).
#include "hw/cuda/membench_cuda.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <thread>

#include "hw/cuda/kernels.h"

namespace cagr::cuda {
namespace {

constexpr int64_t kMiB = int64_t{1} << 20;
constexpr int64_t kOneHotBags = int64_t{1} << 20;     // pooling 1
constexpr int64_t kPooledLookups = int64_t{1} << 22;  // pooling > 1: bags = lookups / pooling
constexpr int64_t kMaxOutFloats = int64_t{64} << 20;  // 256 MiB of pooled rows / row sums
constexpr int kGraphReplays = 5;
constexpr int kLaunchBatch = 100;

/// Fills ids[lo, hi) with `draw(rng)`; one generator per chunk.
template <typename Draw>
void parallelFill(std::vector<int32_t>& ids, uint64_t seed, const Draw& draw) {
  const int64_t n = static_cast<int64_t>(ids.size());
  const int threads = static_cast<int>(std::clamp<int64_t>(std::thread::hardware_concurrency(), 1, 16));
  const int64_t chunk = (n + threads - 1) / threads;
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      std::mt19937_64 rng(seed * 1000003ULL + static_cast<uint64_t>(t));
      const int64_t end = std::min(n, (t + 1) * chunk);
      for (int64_t i = t * chunk; i < end; ++i) ids[static_cast<size_t>(i)] = draw(rng);
    });
  }
  for (std::thread& th : pool) th.join();
}

Status compare(const std::vector<float>& got, const std::vector<double>& want, const std::string& what) {
  for (size_t i = 0; i < want.size(); ++i) {
    if (!(std::fabs(got[i] - want[i]) <= 1e-5 * (1 + std::fabs(want[i])))) {
      return internalError(what + ": element " + std::to_string(i) + " is " + std::to_string(got[i]) +
                           ", host reference " + std::to_string(want[i]));
    }
  }
  return Status::ok();
}

}  // namespace

std::string GatherSpec::label() const {
  return std::string(zipf ? "zipf" : "uniform") + " dim" + std::to_string(dim) + " p" + std::to_string(pooling);
}

std::vector<int32_t> uniformIds32(int64_t count, int64_t rows, uint64_t seed) {
  std::vector<int32_t> ids(static_cast<size_t>(count));
  parallelFill(ids, seed, [rows](std::mt19937_64& rng) {
    return static_cast<int32_t>(std::uniform_int_distribution<int64_t>(0, rows - 1)(rng));
  });
  return ids;
}

std::vector<int32_t> zipfIds32(int64_t count, int64_t rows, double a, uint64_t seed) {
  const double oneMinusA = 1.0 - a;
  const double top = std::pow(static_cast<double>(rows) + 1.0, oneMinusA);
  const uint64_t prime = 2654435761ULL;  // > any row count here: a bijection mod rows
  std::vector<int32_t> ids(static_cast<size_t>(count));
  parallelFill(ids, seed, [=](std::mt19937_64& rng) {
    const double u = std::uniform_real_distribution<double>(0.0, 1.0)(rng);
    const double x = std::pow((top - 1.0) * u + 1.0, 1.0 / oneMinusA);
    const uint64_t rank = std::min<uint64_t>(static_cast<uint64_t>(x) - 1, static_cast<uint64_t>(rows - 1));
    return static_cast<int32_t>((rank * prime + 12345) % static_cast<uint64_t>(rows));
  });
  return ids;
}

GpuMemoryBench::~GpuMemoryBench() = default;

StatusOr<std::unique_ptr<GpuMemoryBench>> GpuMemoryBench::create(int64_t l2Bytes, int sms, bool quick,
                                                                 cudaStream_t stream) {
  std::unique_ptr<GpuMemoryBench> mb(new GpuMemoryBench());
  mb->stream_ = stream;
  mb->sms_ = std::max(sms, 1);
  mb->quick_ = quick;
  const int64_t bytes = std::max<int64_t>(1024 * kMiB, (4 * l2Bytes + kMiB - 1) / kMiB * kMiB);
  CAGR_ASSIGN_OR_RETURN(mb->buf_, DeviceBuffer::alloc(static_cast<size_t>(bytes), "memory benchmark buffer"));
  CAGR_ASSIGN_OR_RETURN(mb->ids_, DeviceBuffer::alloc(static_cast<size_t>(4 * kPooledLookups), "gather ids"));
  CAGR_ASSIGN_OR_RETURN(mb->out_, DeviceBuffer::alloc(static_cast<size_t>(4 * kMaxOutFloats), "gather output"));
  CAGR_RETURN_IF_ERROR(
      cudaStatus(launchFillUniform(mb->buf_.as<float>(), bytes / 4, 21, -1.f, 1.f, stream), "fill buffer"));
  CAGR_RETURN_IF_ERROR(
      cudaStatus(launchFillUniform(mb->out_.as<float>(), kMaxOutFloats, 22, -1.f, 1.f, stream), "fill output"));
  CAGR_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream));
  return mb;
}

Status GpuMemoryBench::checkKernels() {
  const int64_t hostFloats = 1000 * 64;  // the first 1000 rows of a dim-64 view
  std::vector<float> table(static_cast<size_t>(hostFloats));
  CAGR_CUDA_RETURN_IF_ERROR(cudaDeviceSynchronize());
  CAGR_CUDA_RETURN_IF_ERROR(cudaMemcpy(table.data(), buf_.get(), 4 * table.size(), cudaMemcpyDeviceToHost));
  std::vector<float> got(static_cast<size_t>(hostFloats));
  for (const GatherSpec& g :
       {GatherSpec{false, 16, 1}, GatherSpec{false, 16, 3}, GatherSpec{true, 64, 20}, GatherSpec{false, 32, 5}}) {
    const int64_t bags = 37, rows = hostFloats / g.dim;
    const std::vector<int32_t> ids = uniformIds32(bags * g.pooling, rows, 5);
    CAGR_CUDA_RETURN_IF_ERROR(cudaDeviceSynchronize());
    CAGR_CUDA_RETURN_IF_ERROR(cudaMemcpy(ids_.get(), ids.data(), 4 * ids.size(), cudaMemcpyHostToDevice));
    CAGR_CUDA_RETURN_IF_ERROR(cudaDeviceSynchronize());
    CAGR_RETURN_IF_ERROR(cudaStatus(
        launchGatherSum(buf_.as<float>(), g.dim, ids_.as<int32_t>(), bags, g.pooling, out_.as<float>(), stream_),
        "own.gather"));
    CAGR_CUDA_RETURN_IF_ERROR(cudaDeviceSynchronize());
    CAGR_CUDA_RETURN_IF_ERROR(cudaMemcpy(got.data(), out_.get(), 4 * bags * g.dim, cudaMemcpyDeviceToHost));
    std::vector<double> want(static_cast<size_t>(bags * g.dim), 0.0);
    for (int64_t b = 0; b < bags; ++b)
      for (int64_t p = 0; p < g.pooling; ++p)
        for (int64_t d = 0; d < g.dim; ++d) want[b * g.dim + d] += table[ids[b * g.pooling + p] * g.dim + d];
    CAGR_RETURN_IF_ERROR(compare(got, want, "own.gather " + g.label()));
  }
  for (int64_t cols : {64, 100}) {
    const int64_t rows = 33;
    CAGR_RETURN_IF_ERROR(
        cudaStatus(launchRowSums(buf_.as<float>(), rows, cols, out_.as<float>(), stream_), "own.reduce"));
    CAGR_CUDA_RETURN_IF_ERROR(cudaDeviceSynchronize());
    CAGR_CUDA_RETURN_IF_ERROR(cudaMemcpy(got.data(), out_.get(), 4 * rows, cudaMemcpyDeviceToHost));
    std::vector<double> want(static_cast<size_t>(rows), 0.0);
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c) want[r] += table[r * cols + c];
    CAGR_RETURN_IF_ERROR(compare(got, want, "own.reduce cols " + std::to_string(cols)));
  }
  const int64_t n = 4096;
  CAGR_RETURN_IF_ERROR(cudaStatus(
      launchReluAdd(buf_.as<float>(), buf_.as<float>() + n, out_.as<float>(), n, 2, sms_ * 8, stream_), "own.eltwise"));
  CAGR_CUDA_RETURN_IF_ERROR(cudaDeviceSynchronize());
  CAGR_CUDA_RETURN_IF_ERROR(cudaMemcpy(got.data(), out_.get(), 4 * n, cudaMemcpyDeviceToHost));
  std::vector<double> want(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) want[i] = std::max(0.0, static_cast<double>(table[i] + table[n + i]));
  return compare(got, want, "own.eltwise");
}

StatusOr<MemRun> GpuMemoryBench::gather(const GatherSpec& g, const GpuTimingPlan& plan, int64_t lookups) {
  if (!gatherDimSupported(g.dim)) return invalidArgument("own.gather: unsupported dim " + std::to_string(g.dim));
  const int64_t rows = bufferBytes() / 4 / g.dim;
  if (lookups <= 0) lookups = g.pooling == 1 ? kOneHotBags : kPooledLookups;
  if (quick_) lookups /= 4;
  const int64_t bags = std::max<int64_t>(1, lookups / g.pooling);
  lookups = bags * g.pooling;
  if (lookups > kPooledLookups || bags * g.dim > kMaxOutFloats) {
    return invalidArgument("own.gather: " + g.label() + " with " + std::to_string(lookups) + " lookups is too big");
  }
  const uint64_t seed = 1000 + static_cast<uint64_t>(g.dim * 100 + g.pooling) + (g.zipf ? 7 : 0);
  const std::vector<int32_t> ids = g.zipf ? zipfIds32(lookups, rows, 1.1, seed) : uniformIds32(lookups, rows, seed);
  CAGR_CUDA_RETURN_IF_ERROR(cudaDeviceSynchronize());
  CAGR_CUDA_RETURN_IF_ERROR(cudaMemcpy(ids_.get(), ids.data(), 4 * ids.size(), cudaMemcpyHostToDevice));
  CAGR_CUDA_RETURN_IF_ERROR(cudaDeviceSynchronize());
  MemRun r;
  r.kernel = "own.gather";
  r.what =
      g.label() + ", " + std::to_string(bags) + " bags, table " + humanBytes(static_cast<double>(rows * g.dim * 4));
  r.bytesPerCall = 4.0 * static_cast<double>(lookups * g.dim + lookups + bags * g.dim);
  r.flopsPerCall = static_cast<double>(lookups * g.dim);
  const float* table = buf_.as<float>();
  const int32_t* dIds = ids_.as<int32_t>();
  float* out = out_.as<float>();
  CAGR_ASSIGN_OR_RETURN(
      r.t,
      timeGpu(
          [&] { return cudaStatus(launchGatherSum(table, g.dim, dIds, bags, g.pooling, out, stream_), "own.gather"); },
          stream_, plan));
  return r;
}

StatusOr<MemRun> GpuMemoryBench::eltwise(int64_t workingSetBytes, const GpuTimingPlan& plan, int64_t minBytesPerCall) {
  const int64_t maxN = bufferBytes() / 4 / 3 / 64 * 64;
  int64_t n = maxN;
  if (workingSetBytes > 0) n = std::clamp<int64_t>(workingSetBytes / 12 / 64 * 64, 64, maxN);
  const int64_t bytesPerPass = 12 * n;  // read a, b; write y
  const int reps = static_cast<int>(std::max<int64_t>(1, (minBytesPerCall + bytesPerPass - 1) / bytesPerPass));
  const float* a = buf_.as<float>();
  const float* b = a + n;
  float* y = buf_.as<float>() + 2 * n;
  MemRun r;
  r.kernel = "own.eltwise";
  r.what = "y=relu(a+b), working set " + humanBytes(static_cast<double>(bytesPerPass)) + " x " + std::to_string(reps) +
           " pass(es)";
  r.bytesPerCall = static_cast<double>(bytesPerPass) * reps;
  r.flopsPerCall = 2.0 * static_cast<double>(n) * reps;
  const int maxBlocks = sms_ * 8;
  CAGR_ASSIGN_OR_RETURN(
      r.t, timeGpu([&] { return cudaStatus(launchReluAdd(a, b, y, n, reps, maxBlocks, stream_), "own.eltwise"); },
                   stream_, plan));
  return r;
}

StatusOr<MemRun> GpuMemoryBench::copy(const GpuTimingPlan& plan) {
  const size_t half = buf_.bytes() / 2 / 256 * 256;
  char* base = buf_.as<char>();
  MemRun r;
  r.kernel = "cuda.memcpy";
  r.what = "cudaMemcpyAsync device to device, " + humanBytes(static_cast<double>(half));
  r.bytesPerCall = 2.0 * static_cast<double>(half);
  CAGR_ASSIGN_OR_RETURN(r.t, timeGpu(
                                 [&] {
                                   return cudaStatus(
                                       cudaMemcpyAsync(base + half, base, half, cudaMemcpyDeviceToDevice, stream_),
                                       "cudaMemcpyAsync");
                                 },
                                 stream_, plan));
  return r;
}

StatusOr<MemRun> GpuMemoryBench::rowSums(int64_t rows, int64_t cols, const GpuTimingPlan& plan) {
  if (rows <= 0) rows = std::min(bufferBytes() / 4 / cols, kMaxOutFloats);
  if (rows * cols * 4 > bufferBytes() || rows > kMaxOutFloats) {
    return invalidArgument("own.reduce: [" + std::to_string(rows) + ", " + std::to_string(cols) + "] is too big");
  }
  const float* x = buf_.as<float>();
  float* out = out_.as<float>();
  MemRun r;
  r.kernel = "own.reduce";
  r.what = "row sums of [" + std::to_string(rows) + ", " + std::to_string(cols) + "] (" +
           humanBytes(static_cast<double>(rows * cols * 4)) + ")";
  r.bytesPerCall = 4.0 * static_cast<double>(rows) * static_cast<double>(cols + 1);
  r.flopsPerCall = static_cast<double>(rows * cols);
  CAGR_ASSIGN_OR_RETURN(
      r.t,
      timeGpu([&] { return cudaStatus(launchRowSums(x, rows, cols, out, stream_), "own.reduce"); }, stream_, plan));
  return r;
}

StatusOr<MemRun> GpuMemoryBench::launchThroughput(const GpuTimingPlan& plan) {
  MemRun r;
  r.kernel = "cuda.launch";
  r.what = "empty kernel <<<1, 32>>>, " + std::to_string(kLaunchBatch) + " back-to-back launches per synchronise";
  CAGR_ASSIGN_OR_RETURN(r.t, timeWall(
                                 [&]() -> Status {
                                   for (int i = 0; i < kLaunchBatch; ++i)
                                     CAGR_RETURN_IF_ERROR(cudaStatus(launchEmpty(stream_), "empty kernel"));
                                   return cudaStatus(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
                                 },
                                 plan));
  r.t.median /= kLaunchBatch;
  r.t.p10 /= kLaunchBatch;
  r.t.p90 /= kLaunchBatch;
  return r;
}

StatusOr<MemRun> GpuMemoryBench::launchRoundTrip(const GpuTimingPlan& plan) {
  MemRun r;
  r.kernel = "cuda.launch_sync";
  r.what = "empty kernel launch + cudaStreamSynchronize";
  CAGR_ASSIGN_OR_RETURN(r.t, timeWall(
                                 [&]() -> Status {
                                   CAGR_RETURN_IF_ERROR(cudaStatus(launchEmpty(stream_), "empty kernel"));
                                   return cudaStatus(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
                                 },
                                 plan));
  return r;
}

StatusOr<MemRun> GpuMemoryBench::graphReplay(int nodes, const GpuTimingPlan& plan) {
  cudaGraph_t graph = nullptr;
  CAGR_CUDA_RETURN_IF_ERROR(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal));
  for (int i = 0; i < nodes; ++i) (void)launchEmpty(stream_);
  const cudaError_t capErr = cudaStreamEndCapture(stream_, &graph);
  CAGR_RETURN_IF_ERROR(cudaStatus(capErr, "cudaStreamEndCapture"));
  cudaGraphExec_t exec = nullptr;
  const cudaError_t instErr = cudaGraphInstantiate(&exec, graph, 0);
  cudaGraphDestroy(graph);
  CAGR_RETURN_IF_ERROR(cudaStatus(instErr, "cudaGraphInstantiate"));
  MemRun r;
  r.kernel = "cuda.graph_node";
  r.what = "CUDA Graph of " + std::to_string(nodes) + " empty kernels, " + std::to_string(kGraphReplays) +
           " replays per synchronise";
  auto timing = timeWall(
      [&]() -> Status {
        for (int i = 0; i < kGraphReplays; ++i) CAGR_CUDA_RETURN_IF_ERROR(cudaGraphLaunch(exec, stream_));
        return cudaStatus(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
      },
      plan);
  cudaGraphExecDestroy(exec);
  if (!timing.isOk()) return timing.status();
  r.t = *timing;
  const double perNode = 1.0 / (kGraphReplays * static_cast<double>(nodes));
  r.t.median *= perNode;
  r.t.p10 *= perNode;
  r.t.p90 *= perNode;
  return r;
}

}  // namespace cagr::cuda
