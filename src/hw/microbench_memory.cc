// Memory-bound micro-benchmarks: embedding gathers (uniform and Zipf ids),
// the streaming elementwise kernel at every cache level and in DRAM, STREAM
// copy/triad, and row reductions. All on own.* kernels, all threads.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>

#include "hw/microbench.h"
#include "hw/own_kernels.h"

namespace cagr::hw {

namespace {

constexpr int64_t kMiB = int64_t{1} << 20;
constexpr int64_t kOneHotBags = 65536;
constexpr int64_t kPooledBags = 4096;
constexpr int64_t kMaxGatherDim = 64;
constexpr int64_t kReduceCols = 64;
constexpr double kZipfA = 1.1;

std::string mib(double bytes) {
  char b[32];
  std::snprintf(b, sizeof(b), "%.0f MiB", bytes / static_cast<double>(kMiB));
  return b;
}

/// 64-byte aligned, uninitialised; nullptr when out of memory.
float* allocFloats(int64_t n) {
  const size_t bytes = (static_cast<size_t>(n) * 4 + 63) / 64 * 64;
  return static_cast<float*>(std::aligned_alloc(64, bytes));
}

}  // namespace

void MemoryBench::Free::operator()(float* p) const {
  std::free(p);
}

std::string GatherConfig::label() const {
  return std::string(zipf ? "zipf" : "uniform") + " dim" + std::to_string(dim) + " p" + std::to_string(pooling);
}

std::vector<int64_t> uniformIds(int64_t count, int64_t rows, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int64_t> dist(0, rows - 1);
  std::vector<int64_t> ids(count);
  for (int64_t& id : ids) id = dist(rng);
  return ids;
}

std::vector<int64_t> zipfIds(int64_t count, int64_t rows, double a, uint64_t seed) {
  // Inverse CDF of the continuous power law x^-a on [1, rows + 1): rank
  // floor(x) - 1 is Zipf(a)-distributed up to the discretisation of the head.
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u01(0.0, 1.0);
  const double oneMinusA = 1.0 - a;
  const double top = std::pow(static_cast<double>(rows) + 1.0, oneMinusA);
  // Hot ranks land on scattered rows (a bijection: multiply by a prime > rows).
  const uint64_t prime = 2654435761ULL;
  std::vector<int64_t> ids(count);
  for (int64_t& id : ids) {
    const double x = std::pow((top - 1.0) * u01(rng) + 1.0, 1.0 / oneMinusA);
    const uint64_t rank = std::min<uint64_t>(static_cast<uint64_t>(x) - 1, static_cast<uint64_t>(rows - 1));
    id = static_cast<int64_t>((rank * prime + 12345) % static_cast<uint64_t>(rows));
  }
  return ids;
}

StatusOr<std::unique_ptr<MemoryBench>> MemoryBench::create(int64_t llcBytes, bool quick) {
  const int64_t cap = quick ? 256 * kMiB : 1024 * kMiB;
  const int64_t bytes = std::clamp<int64_t>(4 * llcBytes, 64 * kMiB, cap);
  std::unique_ptr<MemoryBench> mb(new MemoryBench());
  mb->floats_ = bytes / 4 / 48 * 48;  // three equal arrays, each a multiple of 16 floats
  mb->outFloats_ = std::max(kOneHotBags * kMaxGatherDim, mb->floats_ / kReduceCols);
  // aligned_alloc leaves the pages untouched; ownFill first-touches them
  // from the threads that stream them later.
  mb->buf_.reset(allocFloats(mb->floats_));
  mb->out_.reset(allocFloats(mb->outFloats_));
  if (!mb->buf_ || !mb->out_) {
    return internalError("cagr profile: cannot allocate the " + mib(static_cast<double>(bytes)) +
                         " memory-benchmark buffer");
  }
  ownFill(mb->buf_.get(), mb->floats_, 0.25f);
  ownFill(mb->out_.get(), mb->outFloats_, 0.0f);
  return mb;
}

MemResult MemoryBench::gather(const GatherConfig& c, const TimingPlan& plan) {
  const int64_t rows = floats_ / c.dim;
  const int64_t bags = c.pooling == 1 ? kOneHotBags : kPooledBags;
  const uint64_t seed = 1000 + static_cast<uint64_t>(c.dim * 100 + c.pooling) + (c.zipf ? 7 : 0);
  const std::vector<int64_t> ids =
      c.zipf ? zipfIds(bags * c.pooling, rows, kZipfA, seed) : uniformIds(bags * c.pooling, rows, seed);
  const float* table = buf_.get();
  float* out = out_.get();
  MemResult r;
  r.kernel = "own.gather";
  r.what = c.label() + ", " + std::to_string(bags) + " bags, table " + mib(static_cast<double>(rows * c.dim * 4));
  r.bytesPerCall = static_cast<double>(bags * c.pooling * c.dim * 4);  // rows read
  r.flopsPerCall = static_cast<double>(bags * c.pooling * c.dim);
  r.t = timeIt([&] { ownGatherSum(table, c.dim, ids.data(), bags, c.pooling, out); }, plan);
  return r;
}

MemResult MemoryBench::eltwise(int64_t workingSetBytes, const TimingPlan& plan) {
  int64_t n = floats_ / 3;
  if (workingSetBytes > 0) n = std::clamp<int64_t>(workingSetBytes / 12 / 16 * 16, 16, floats_ / 3);
  const int64_t bytesPerPass = 12 * n;  // read a, b; write y (write-allocate not counted)
  const int passes = static_cast<int>(std::max<int64_t>(1, (64 * kMiB + bytesPerPass - 1) / bytesPerPass));
  const float* a = buf_.get();
  const float* b = a + n;
  float* y = buf_.get() + 2 * n;
  MemResult r;
  r.kernel = "own.eltwise";
  r.what = "y=relu(a+b), working set " + std::to_string(bytesPerPass / 1024) + " KiB x " + std::to_string(passes) +
           " passes";
  r.bytesPerCall = static_cast<double>(bytesPerPass) * passes;
  r.flopsPerCall = 2.0 * static_cast<double>(n) * passes;
  r.t = timeIt([&] { ownEltwiseAddRelu(a, b, y, n, passes); }, plan);
  return r;
}

MemResult MemoryBench::copy(const TimingPlan& plan) {
  const int64_t n = floats_ / 3;
  const float* a = buf_.get();
  float* c = buf_.get() + 2 * n;
  MemResult r;
  r.kernel = "own.copy";
  r.what = "STREAM copy c=a, 2 x " + mib(static_cast<double>(n) * 4);
  r.bytesPerCall = 8.0 * static_cast<double>(n);
  r.t = timeIt([&] { ownCopy(a, c, n); }, plan);
  return r;
}

MemResult MemoryBench::triad(const TimingPlan& plan) {
  const int64_t n = floats_ / 3;
  float* a = buf_.get();
  const float* b = a + n;
  const float* c = a + 2 * n;
  MemResult r;
  r.kernel = "own.triad";
  r.what = "STREAM triad a=b+s*c, 3 x " + mib(static_cast<double>(n) * 4);
  r.bytesPerCall = 12.0 * static_cast<double>(n);
  r.flopsPerCall = 2.0 * static_cast<double>(n);
  r.t = timeIt([&] { ownTriad(a, b, c, 3.0f, n); }, plan);
  return r;
}

MemResult MemoryBench::rowSums(const TimingPlan& plan) {
  const int64_t rows = floats_ / kReduceCols;
  const float* x = buf_.get();
  float* out = out_.get();
  MemResult r;
  r.kernel = "own.reduce";
  r.what = "row sums of [" + std::to_string(rows) + ", " + std::to_string(kReduceCols) + "] (" +
           mib(static_cast<double>(rows * kReduceCols * 4)) + ")";
  r.bytesPerCall = static_cast<double>(rows) * (kReduceCols + 1) * 4;
  r.flopsPerCall = static_cast<double>(rows) * kReduceCols;
  r.t = timeIt([&] { ownRowSums(x, rows, kReduceCols, out); }, plan);
  return r;
}

}  // namespace cagr::hw
