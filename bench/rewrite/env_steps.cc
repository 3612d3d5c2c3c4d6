// Environment throughput: steps per second of Env::step on a zoo graph (the
// RL training loop's inner cost), on one core. Each episode resets the env
// on the imported model and takes uniformly random legal actions until the
// policy stops (1/8 per step) or nothing is left. Prints measured figures.
//
//   cagr_bench_env [--model zoo/onnx/dlrm_criteo.dynamo.onnx] [--target h200] [--seconds 5]
#include <chrono>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>

#include "cagr/importer.h"
#include "cagr/policy.h"

using namespace cagr;

int main(int argc, char** argv) {
  std::string model = std::string(CAGR_SOURCE_DIR) + "/zoo/onnx/dlrm_criteo.dynamo.onnx", platform = "h200";
  double seconds = 5;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--model")) model = argv[i + 1];
    if (!std::strcmp(argv[i], "--target")) platform = argv[i + 1];
    if (!std::strcmp(argv[i], "--seconds")) seconds = std::atof(argv[i + 1]);
  }
  auto g = importOnnx(model);
  auto t = resolveTarget(platform);
  if (!g.isOk() || !t.isOk()) {
    std::fprintf(stderr, "%s\n", (!g.isOk() ? g.status() : t.status()).message().c_str());
    return 1;
  }
  std::mt19937_64 rng(1);
  using Clock = std::chrono::steady_clock;
  double stepS = 0, resetS = 0, cloneS = 0, legalSum = 0;
  long steps = 0, resets = 0, clones = 0;
  auto begin = Clock::now();
  while (std::chrono::duration<double>(Clock::now() - begin).count() < seconds) {
    Env env;
    auto t0 = Clock::now();
    Status s = env.reset(*g, *t);
    resetS += std::chrono::duration<double>(Clock::now() - t0).count();
    ++resets;
    if (!s.isOk()) return std::fprintf(stderr, "%s\n", s.message().c_str()), 1;
    while (!env.done()) {
      size_t n = env.legalActions().size() - 1;
      legalSum += static_cast<double>(n);
      bool stop = n == 0 || rng() % 8 == 0;
      size_t pick = stop ? n : rng() % n;
      if (rng() % 16 == 0) {
        auto c0 = Clock::now();
        Env copy = env.clone();
        cloneS += std::chrono::duration<double>(Clock::now() - c0).count();
        ++clones;
      }
      // A step as a learner sees it: apply + re-price + the next state's legal actions.
      auto s0 = Clock::now();
      auto r = env.step(pick);
      if (r.isOk() && !env.done()) env.legalActions();
      stepS += std::chrono::duration<double>(Clock::now() - s0).count();
      ++steps;
      if (!r.isOk()) return std::fprintf(stderr, "step: %s\n", r.status().message().c_str()), 1;
    }
  }
  std::printf("model %s, target %s, %zu nodes\n", model.c_str(), platform.c_str(), g->nodes().size());
  std::printf("env.step + legalActions: %ld steps, %.1f us/step, %.0f steps/s (measured, one core, this host)\n", steps,
              1e6 * stepS / static_cast<double>(steps), static_cast<double>(steps) / stepS);
  std::printf("env.reset: %.1f us; env.clone: %.1f us; mean legal actions per state: %.1f\n",
              1e6 * resetS / static_cast<double>(resets), clones ? 1e6 * cloneS / static_cast<double>(clones) : 0.0,
              legalSum / static_cast<double>(steps));
  return 0;
}
