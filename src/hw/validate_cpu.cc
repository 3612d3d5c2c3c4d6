// validateCpu (`cagr profile --target cpu --validate`): times held-out
// kernels and shapes, none of them used by profileCpu's fit, with the same
// timing harness, step plumbing and thread settings (bench_steps.h), and
// returns them as ValidationRecords for the cost-model accuracy benchmark.
// Each record counts its work as cost_rules.cc does: a GEMM reads A, B (and
// the bias) and writes C; a gather reads the rows it touches and the ids and
// writes the output; eltwise and reductions read inputs and write outputs.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <memory>
#include <utility>

#include "hw/bench_steps.h"
#include "hw/microbench.h"
#include "hw/own_kernels.h"
#include "hw/profiler.h"

namespace cagr {
namespace {

using hw::BenchStep;
using hw::GemmKernel;
using hw::GemmShape;
using hw::TimingPlan;
using hw::ValidationRecord;

constexpr int64_t kMiB = int64_t{1} << 20;
constexpr double kZipfA = 1.1;  // the profile's skew (microbench_memory.cc)
constexpr const char* kTool = "cagr profile --target cpu --validate";


std::string mib(double bytes) {
  char b[32];
  std::snprintf(b, sizeof(b), bytes < kMiB ? "%.0f KiB" : "%.0f MiB", bytes / (bytes < kMiB ? 1024.0 : kMiB));
  return b;
}

/// Held-out GEMMs, listed as C[m,n] = A[m,k] B[k,n] (hw::GemmShape is {m, k, n}).
std::vector<GemmShape> heldOutGemms(bool quick) {
  struct Mnk {
    int64_t m, n, k;
  };
  static const std::vector<Mnk> kFull = {{3000, 700, 300},   {4096, 367, 512},  {4096, 512, 400}, {256, 200, 484},
                                         {48, 40, 56},       {20, 100, 30},     {4096, 3, 256},   {1, 1024, 512},
                                         {2048, 2048, 2048}, {8192, 1024, 479}, {512, 64, 2000},  {4096, 128, 1024}};
  static const std::vector<Mnk> kQuick = {{48, 40, 56}, {20, 100, 30}, {256, 200, 484}, {1, 1024, 512}};
  std::vector<GemmShape> out;
  for (const Mnk& d : quick ? kQuick : kFull) out.push_back({d.m, d.k, d.n});
  return out;
}

ValidationRecord record(std::string kernel, std::string shapeClass, std::string config, double flops, double bytes,
                        const hw::Timing& t) {
  ValidationRecord v;
  v.kernel = std::move(kernel);
  v.shapeClass = std::move(shapeClass);
  v.config = std::move(config);
  v.flops = flops;
  v.bytes = bytes;
  v.measuredS = t.median;
  v.spread = t.spread();
  v.samples = t.samples;
  return v;
}

/// cost_rules.cc costGemm: 2mnk FLOP (+ mn for the bias add); reads A, B
/// (and the bias row), writes C; fp32.
ValidationRecord gemmRecord(GemmKernel k, const GemmShape& s, const hw::Timing& t) {
  const bool bias = k == GemmKernel::kOneDnnRelu;
  const double m = static_cast<double>(s.m), n = static_cast<double>(s.n), kk = static_cast<double>(s.k);
  const std::string config = "m" + std::to_string(s.m) + " n" + std::to_string(s.n) + " k" + std::to_string(s.k) +
                             (bias ? " fp32 +bias relu" : " fp32");
  ValidationRecord v = record(hw::gemmKernelName(k), hw::gemmShapeClass(s), config, 2 * m * n * kk + (bias ? m * n : 0),
                              4 * (m * kk + kk * n + m * n + (bias ? n : 0)), t);
  v.m = s.m;
  v.n = s.n;
  v.k = s.k;
  return v;
}

// ------------------------------------------------------------------ memory

struct GatherCase {
  bool zipf;
  int64_t dim, pooling, bags;
  std::string label() const { return hw::GatherConfig{zipf, dim, pooling}.label(); }
};

/// Sizes of the memory-bound held-out set: a buffer of >= 4x LLC (the
/// gather table and the DRAM-sized eltwise / reduction work on it), gathers
/// at configurations the profile does not fit, eltwise inside L2, inside
/// the LLC and in DRAM, reductions at three sizes.
struct MemoryPlan {
  int64_t bufferBytes = 0;
  std::vector<GatherCase> gathers;
  std::vector<int64_t> eltwiseBytes;                    // working sets (a, b, y together)
  std::vector<std::pair<int64_t, int64_t>> reductions;  // [rows, cols]
};

MemoryPlan memoryPlan(const hw::MachineInfo& m, bool quick) {
  int64_t l2 = kMiB;
  for (const hw::CacheLevel& c : m.caches)
    if (c.level == 2) l2 = c.totalBytes;
  MemoryPlan p;
  if (quick) {
    p.bufferBytes = 32 * kMiB;
    p.gathers = {{false, 32, 5, 2000}, {true, 16, 1, 5000}};
    p.eltwiseBytes = {l2 * 3 / 8};
    p.reductions = {{4096, 64}};
    return p;
  }
  // 5x LLC (the profile streams 4x): DRAM-sized, and a size the fit never saw.
  p.bufferBytes = std::clamp<int64_t>(5 * m.llcBytes(), 96 * kMiB, 1536 * kMiB);
  p.gathers = {{false, 32, 5, 20000}, {true, 32, 5, 20000}, {false, 16, 1, 50000}, {true, 16, 1, 50000}};
  p.eltwiseBytes = {l2 * 3 / 8, m.llcBytes() * 3 / 8, p.bufferBytes};
  p.reductions = {{4096, 64}, {60000, 100}, {p.bufferBytes / 4 / 128, 128}};
  return p;
}

/// One 64-byte aligned buffer, first-touched by the kernel threads (as the
/// profile's MemoryBench does), and an output buffer.
class HeldOutMemory {
 public:
  static StatusOr<std::unique_ptr<HeldOutMemory>> create(const MemoryPlan& p) {
    int64_t outFloats = 16;
    for (const GatherCase& g : p.gathers) outFloats = std::max(outFloats, g.bags * g.dim);
    for (const auto& [rows, cols] : p.reductions) outFloats = std::max(outFloats, rows);
    std::unique_ptr<HeldOutMemory> mb(new HeldOutMemory());
    mb->floats_ = p.bufferBytes / 4 / 48 * 48;
    mb->buf_.reset(alloc(mb->floats_));
    mb->out_.reset(alloc(outFloats));
    if (!mb->buf_ || !mb->out_) {
      return internalError("cannot allocate the " + mib(static_cast<double>(p.bufferBytes)) + " held-out buffer");
    }
    hw::ownFill(mb->buf_.get(), mb->floats_, 0.25f);
    hw::ownFill(mb->out_.get(), outFloats, 0.0f);
    return mb;
  }

  ValidationRecord gather(const GatherCase& g, const TimingPlan& plan) {
    const int64_t rows = floats_ / g.dim, lookups = g.bags * g.pooling;
    const uint64_t seed = 7000 + static_cast<uint64_t>(g.dim * 100 + g.pooling) + (g.zipf ? 7 : 0);
    const std::vector<int64_t> ids =
        g.zipf ? hw::zipfIds(lookups, rows, kZipfA, seed) : hw::uniformIds(lookups, rows, seed);
    const float* table = buf_.get();
    float* out = out_.get();
    const hw::Timing t = hw::timeIt([&] { hw::ownGatherSum(table, g.dim, ids.data(), g.bags, g.pooling, out); }, plan);
    const double rowsRead = 4.0 * static_cast<double>(lookups * g.dim);
    const double idBytes = static_cast<double>(sizeof(int64_t)) * static_cast<double>(lookups);
    const double written = 4.0 * static_cast<double>(g.bags * g.dim);
    return record(
        "own.gather", g.zipf ? "gather.zipf" : "gather.uniform",
        g.label() + ", " + std::to_string(g.bags) + " bags, table " + mib(static_cast<double>(rows * g.dim * 4)),
        static_cast<double>(lookups * g.dim), rowsRead + idBytes + written, t);
  }

  /// y = relu(a + b), one pass over a working set of `bytes` (a, b, y).
  ValidationRecord eltwise(int64_t bytes, const TimingPlan& plan) {
    const int64_t n = std::clamp<int64_t>(bytes / 12 / 16 * 16, 16, floats_ / 3);
    const float* a = buf_.get();
    const float* b = a + n;
    float* y = buf_.get() + 2 * n;
    const hw::Timing t = hw::timeIt([&] { hw::ownEltwiseAddRelu(a, b, y, n, 1); }, plan);
    return record("own.eltwise", "eltwise.stream",
                  "y=relu(a+b), 3 x " + mib(4.0 * static_cast<double>(n)) + " (" + std::to_string(n) + " floats)",
                  2.0 * static_cast<double>(n), 12.0 * static_cast<double>(n), t);
  }

  ValidationRecord rowSums(int64_t rows, int64_t cols, const TimingPlan& plan) {
    rows = std::min(rows, floats_ / cols);
    const float* x = buf_.get();
    float* out = out_.get();
    const hw::Timing t = hw::timeIt([&] { hw::ownRowSums(x, rows, cols, out); }, plan);
    const double elems = static_cast<double>(rows) * static_cast<double>(cols);
    return record("own.reduce", "reduce.rows",
                  "row sums of [" + std::to_string(rows) + ", " + std::to_string(cols) + "] (" + mib(4 * elems) + ")",
                  elems, 4.0 * (elems + static_cast<double>(rows)), t);
  }

 private:
  struct Free {
    void operator()(float* p) const { std::free(p); }
  };
  static float* alloc(int64_t n) {
    return static_cast<float*>(std::aligned_alloc(64, (static_cast<size_t>(n) * 4 + 63) / 64 * 64));
  }
  HeldOutMemory() = default;
  std::unique_ptr<float, Free> buf_, out_;
  int64_t floats_ = 0;
};

// ------------------------------------------------------------------ plan

/// GEMMs grouped by kernel (one library's threads at a time).
void planGemm(std::vector<BenchStep>& steps, hw::ValidationRun& run, hw::GemmBuffers& buf,
              const std::vector<GemmShape>& shapes, bool quick, double gemmS) {
  const std::vector<GemmKernel> kernels = hw::allGemmKernels();
  const double per = gemmS / static_cast<double>(shapes.size() * kernels.size());
  for (GemmKernel k : kernels) {
    for (const GemmShape& s : shapes) {
      const std::string what = "gemm m" + std::to_string(s.m) + " n" + std::to_string(s.n) + " k" +
                               std::to_string(s.k) + " " + hw::gemmKernelName(k);
      steps.push_back({what, hw::stepPlan(quick, per), [&run, &buf, k, s](const TimingPlan& plan) -> Status {
                         CAGR_ASSIGN_OR_RETURN(hw::GemmResult g, hw::benchGemm(k, s, buf, plan));
                         run.records.push_back(gemmRecord(k, s, g.t));
                         return Status::ok();
                       }});
    }
  }
}

/// Buffer setup, then gathers, eltwise and reductions.
void planMemory(std::vector<BenchStep>& steps, hw::ValidationRun& run, std::unique_ptr<HeldOutMemory>& mem,
                const MemoryPlan& mp, bool quick, double memS) {
  steps.push_back({"setup held-out memory buffer", hw::stepPlan(quick, 0), [&mem, &mp](const TimingPlan&) -> Status {
                     CAGR_ASSIGN_OR_RETURN(mem, HeldOutMemory::create(mp));
                     return Status::ok();
                   }});
  const double per = memS / static_cast<double>(mp.gathers.size() + mp.eltwiseBytes.size() + mp.reductions.size());
  auto add = [&](std::string what, std::function<ValidationRecord(const TimingPlan&)> fn) {
    steps.push_back({std::move(what), hw::stepPlan(quick, per), [&run, fn](const TimingPlan& plan) -> Status {
                       run.records.push_back(fn(plan));
                       return Status::ok();
                     }});
  };
  for (const GatherCase& g : mp.gathers) {
    add("gather " + g.label(), [&mem, g](const TimingPlan& plan) { return mem->gather(g, plan); });
  }
  for (int64_t bytes : mp.eltwiseBytes) {
    add("eltwise " + mib(static_cast<double>(bytes)),
        [&mem, bytes](const TimingPlan& plan) { return mem->eltwise(bytes, plan); });
  }
  for (const auto& [rows, cols] : mp.reductions) {
    add("reduce [" + std::to_string(rows) + ", " + std::to_string(cols) + "]",
        [&mem, rows = rows, cols = cols](const TimingPlan& plan) { return mem->rowSums(rows, cols, plan); });
  }
}

}  // namespace

StatusOr<hw::ValidationRun> validateCpu(const ProfilerOptions& opts, const ProfileProgress& progress) {
  CAGR_RETURN_IF_ERROR(hw::checkProfilerOptions(opts, kTool));
  const double start = hw::nowSeconds();
  const hw::MachineInfo machine = hw::readMachineInfo();
  hw::applyKernelThreads(opts, machine);

  hw::ValidationRun run;
  run.tool = std::string(kTool) + (opts.quick ? " --quick" : "") +
             (opts.threads > 0 ? " --threads " + std::to_string(opts.threads) : "");
  run.measuredOn = machine.hostname + " (" + machine.cpuModel + ")";
  run.date = hw::isoNow();
  for (const auto& [name, version] : hw::kernelLibraryVersions()) run.libraries[name] = version;

  // Planned benchmark time is 60% of the budget; warm-ups, set-up and the
  // calls that cannot be cut below three samples (the large GEMMs) take the rest.
  const double budget = opts.quick ? std::min(opts.budgetSeconds, 3.0) : std::min(opts.budgetSeconds, 45.0);
  const double planned = 0.6 * budget;
  const std::vector<GemmShape> shapes = heldOutGemms(opts.quick);
  hw::GemmBuffers gemmBuf = hw::makeGemmBuffers(shapes);
  const MemoryPlan mp = memoryPlan(machine, opts.quick);
  std::unique_ptr<HeldOutMemory> mem;
  std::vector<BenchStep> steps;
  planGemm(steps, run, gemmBuf, shapes, opts.quick, 0.65 * planned);
  planMemory(steps, run, mem, mp, opts.quick, 0.35 * planned);
  CAGR_RETURN_IF_ERROR(hw::runSteps(steps, budget, start, progress, kTool));
  return run;
}

}  // namespace cagr
