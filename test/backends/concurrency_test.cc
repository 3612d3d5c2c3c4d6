// The Executable thread-safety contract (include/cagr/backend.h): one
// compiled plan run from many threads at once, with mixed batch sizes,
// returns exactly what single-threaded runs return (issue 40: a shared CPU
// arena gave 165-178 wrong outputs of 200 and use-after-free). CPU backend
// here; the CUDA backend's case skips without a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <thread>

#include "../rewrite/rewrite_test_util.h"
#include "cagr/backend.h"
#include "cagr/policy.h"

namespace cagr {
namespace {

using Inputs = std::vector<std::pair<std::string, Tensor>>;

bool sameBits(const std::vector<Tensor>& a, const std::vector<Tensor>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].shape() != b[i].shape() || a[i].byteSize() != b[i].byteSize()) return false;
    if (std::memcmp(a[i].rawData(), b[i].rawData(), a[i].byteSize()) != 0) return false;
  }
  return true;
}

// `threads` workers x `requests` runs each over batches 1, 7, 64 and 256 in
// turn; returns how many results differ from the single-threaded ones.
int mismatches(Executable& exe, const std::vector<Inputs>& batches, int threads, int requests) {
  std::vector<std::vector<Tensor>> want;
  for (const Inputs& in : batches) {
    auto r = exe.run(in);
    EXPECT_TRUE(r.isOk()) << r.status().message();
    want.push_back(r.isOk() ? std::move(*r) : std::vector<Tensor>{});
  }
  std::atomic<int> bad{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      for (int i = 0; i < requests; ++i) {
        size_t k = static_cast<size_t>(t + i) % batches.size();
        auto r = exe.run(batches[k]);
        if (!r.isOk() || !sameBits(*r, want[k])) ++bad;
        (void)exe.peakMemoryBytes();
      }
    });
  }
  for (std::thread& th : pool) th.join();
  return bad.load();
}

void stress(const std::string& backendName, const std::string& platform) {
  auto backend = makeBackend(backendName);
  ASSERT_TRUE(backend.isOk()) << backend.status().message();
  BackendCapabilities caps = (*backend)->capabilities();
  if (!caps.available) GTEST_SKIP() << caps.name << ": " << caps.note;
  for (const char* model : {"deepfm", "dlrm_criteo"}) {
    Graph g = rwtest::zoo(model, "ts");
    auto policy = makePolicy("greedy");
    auto r = optimize(g, rwtest::target(platform), **policy, EnvConfig{});
    ASSERT_TRUE(r.isOk()) << r.status().message();
    CompileOptions opts;
    opts.threads = 1;
    auto exe = (*backend)->compile(r->plan, opts);
    ASSERT_TRUE(exe.isOk()) << exe.status().message();
    std::vector<Inputs> batches;
    for (int64_t b : {1, 7, 64, 256}) batches.push_back(synthesizeInputs(g, b, static_cast<uint64_t>(b)));
    EXPECT_EQ(mismatches(**exe, batches, 8, 25), 0) << model;
  }
}

TEST(Concurrency, CpuExecutableRunsFromManyThreadsMatchSingleThreadedRuns) { stress("cpu", "x86-64"); }

TEST(Concurrency, CudaExecutableRunsFromManyThreadsMatchSingleThreadedRuns) {
  std::vector<std::string> names = backendNames();
  if (std::find(names.begin(), names.end(), "cuda") == names.end()) GTEST_SKIP() << "built without CUDA";
  stress("cuda", "h200");
}

}  // namespace
}  // namespace cagr
