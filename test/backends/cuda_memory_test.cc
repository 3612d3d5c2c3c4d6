// The CUDA backend's device memory, the parts that need no GPU: which
// cuBLASLt heuristic result a library call takes and how much workspace
// that asks for (cuda_blas.h), the library workspaces placed in the arena
// as step scratch that shares bytes only with what cannot run at the same
// time (cuda_program.h), and a cublaslt.cin layer's scratch sized to a
// small batch rather than to the chunk budget (cuda_cin.h). What the
// executable allocates on a GPU is reported by `cagr bench --target cuda
// --json` (peak_memory_breakdown); CudaMemoryGpu checks it on a GPU and
// skips without one.
#include <gtest/gtest.h>

#ifdef CAGR_HAVE_CUDA

#include <cstdio>

#include "backends/cpu_test_util.h"
#include "backends/cuda_test_util.h"
#include "backends/cuda/cuda_blas.h"
#include "backends/cuda/cuda_cin.h"
#include "backends/cuda/cuda_program.h"
#include "backends/cuda/cuda_timing.h"
#include "../rewrite/rewrite_test_util.h"
#include "lower/op_sets.h"
#include "cagr/text.h"
#include "cagr/analysis.h"
#include "cagr/policy.h"
#include "backends/plan_memory.h"
#include "support/scoped_env.h"
#include "cagr/backend.h"
#include "cagr/env.h"
#include "cagr/reference.h"

namespace cagr {
namespace {

using cuda::AlgoOption;
using cuda::ArenaPlan;
using rectest::Builder;

TEST(CudaMemory, PickAlgoTakesTheHeuristicsFirstUnlessASmallProblemHasAFreeEqual) {
  const std::vector<AlgoOption> splitFirst = {{4096, 0.5f}, {0, 0.25f}, {0, 0.5f}, {1 << 20, 0.5f}};
  EXPECT_EQ(cuda::pickAlgo(splitFirst, false), 0);  // large problem: the heuristic's order stands
  EXPECT_EQ(cuda::pickAlgo(splitFirst, true), 2);   // small: the workspace-free one of equal rank
  const std::vector<AlgoOption> noEqual = {{4096, 0.5f}, {0, 0.25f}, {0, 1.0f}};
  EXPECT_EQ(cuda::pickAlgo(noEqual, true), 0);  // a free one of another rank is no equal
  const std::vector<AlgoOption> freeFirst = {{0, 2.0f}, {8192, 2.0f}};
  EXPECT_EQ(cuda::pickAlgo(freeFirst, true), 0);
  const std::vector<AlgoOption> unusableFirst = {{0, 1.0f, false}, {256, 1.0f}, {0, 1.0f}};
  EXPECT_EQ(cuda::pickAlgo(unusableFirst, false), 1);
  EXPECT_EQ(cuda::pickAlgo(unusableFirst, true), 2);
  EXPECT_EQ(cuda::pickAlgo({{0, 1.0f, false}}, true), -1);
  EXPECT_EQ(cuda::pickAlgo({}, false), -1);
}

TEST(CudaMemory, WorkspaceVariantTradesTimeAgainstBytesAtTheRewardsRate) {
  const double w = cuda::kWorkspaceMemoryWeight, tol = 0.01;
  // 3.4 % slower for 36 % fewer bytes: 1.034 + 0.1 * 0.638 = 1.098 < 1 + 0.1: the lean one wins.
  EXPECT_EQ(cuda::pickWorkspaceVariant({38.0, 39.3}, {5800, 3700}, w, tol), 1);
  // 46 % slower (DCN-v2 256 without workspace): the fast one stays.
  EXPECT_EQ(cuda::pickWorkspaceVariant({52.0, 76.0}, {7200, 7000}, w, tol), 0);
  // Within 1 % in time and leaner: kept, as the tolerance says.
  EXPECT_EQ(cuda::pickWorkspaceVariant({100.0, 100.9, 100.5}, {1000, 990, 995}, w, tol), 1);
  // Faster and leaner beats everything.
  EXPECT_EQ(cuda::pickWorkspaceVariant({100.0, 90.0}, {1000, 900}, w, tol), 1);
  // The weight decides: no weight, only time (within the tolerance) counts.
  EXPECT_EQ(cuda::pickWorkspaceVariant({38.0, 39.3}, {5800, 3700}, 0.0, tol), 0);
  EXPECT_EQ(cuda::pickWorkspaceVariant({}, {}, w, tol), -1);
  // A heavier weight (cagr bench --lambda-m 0.3) takes the lean one where 0.1 does not.
  EXPECT_EQ(cuda::pickWorkspaceVariant({38.3, 40.7}, {5824000, 3691264}, w, tol), 0);
  EXPECT_EQ(cuda::pickWorkspaceVariant({38.3, 40.7}, {5824000, 3691264}, 0.3, tol), 1);
  // Against the reward's own L0 and M0 (the unoptimized plan's, as `cagr
  // bench` measures it first): DeepFM fp32 256 on the H200, 36.1 us with
  // 2.1 MB of split-K workspace or 39.2 us without, the unoptimized plan
  // 120.8 us at 3.70 MB: 8.6 % slower than the fastest variant but 2.6 % of
  // L0 for 58 % of M0: the lean one. Without the baseline, the fast one.
  EXPECT_EQ(cuda::pickWorkspaceVariant({0.0361, 0.0392}, {5824000, 3691264}, w, tol), 0);
  EXPECT_EQ(cuda::pickWorkspaceVariant({0.0361, 0.0392}, {5824000, 3691264}, w, tol, 0.1208, 3695872), 1);
  // xDeepFM fp32 256's CIN workspace (0.511 vs 0.615 ms, 109.6 vs 92.8 MB;
  // unoptimized 0.59 ms at 100 MB): 18 % of L0 outweighs 1.7 % of M0.
  EXPECT_EQ(cuda::pickWorkspaceVariant({0.511, 0.615}, {109600000, 92800000}, w, tol, 0.59, 1e8), 0);
  // The tolerance stays a share of the fastest variant's time (timing noise),
  // not of L0: 2.3 % slower for one byte less is not kept against a 5.7 ms L0.
  EXPECT_EQ(cuda::pickWorkspaceVariant({1.30, 1.33}, {1000, 999}, w, tol, 5.7, 1000), 0);
  EXPECT_EQ(cuda::pickWorkspaceVariant({1.30, 1.305}, {1000, 999}, w, tol, 5.7, 1000), 1);
  // A baseline of 0 (unknown) is the fastest variant's, as before.
  EXPECT_EQ(cuda::pickWorkspaceVariant({0.0361, 0.0392}, {5824000, 3691264}, w, tol, 0.0, 3695872), 0);
  EXPECT_DOUBLE_EQ(CompileOptions{}.baselineLatencyMs, 0.0);
  // The backend's default is the reward's default lambda_m.
  EXPECT_DOUBLE_EQ(CompileOptions{}.memoryWeight, EnvConfig{}.lambdaM);
  EXPECT_DOUBLE_EQ(cuda::kWorkspaceMemoryWeight, EnvConfig{}.lambdaM);
  EXPECT_EQ(cuda::pickWorkspaceVariant({1.0}, {1, 2}, w, tol), -1);
}

TEST(CudaMemory, WorkspaceForAllIsTheMostAnyUsableCandidateNeeds) {
  EXPECT_EQ(cuda::workspaceForAll({}), 0u);
  EXPECT_EQ(cuda::workspaceForAll({{0, 1}, {0, 2}}), 0u);
  EXPECT_EQ(cuda::workspaceForAll({{1024, 1}, {65536, 2}, {size_t{64} << 20, 1, false}}), 65536u);
  static_assert(cuda::kCublasMinWorkspace >= 16 * 1024, "cuBLAS fails with less than 16 KiB");
  static_assert(cuda::kWorkspaceLimit == size_t{32} << 20, "the limit the H200 plans were measured with");
}

// x -> a -> c -> d, three GEMMs on one stream; with `twoStreams` a second
// chain x -> b -> e on stream 1 joins at d = c W4 + e.
Graph chain(bool twoStreams) {
  Builder b;
  ValueId x = b.input("x", DType::kF32, {kBatch, 16});
  ValueId a = b.op(OpKind::kMatMul, {x, b.constant("w1", {16, 16}, 1)}, "a");
  ValueId c = b.op(OpKind::kMatMul, {a, b.constant("w3", {16, 16}, 3)}, "c");
  if (!twoStreams) {
    b.g.addOutput(b.op(OpKind::kMatMul, {c, b.constant("w4", {16, 16}, 4)}, "d"));
    return b.g;
  }
  ValueId bb = b.op(OpKind::kMatMul, {x, b.constant("w2", {16, 16}, 2)}, "b");
  ValueId e = b.op(OpKind::kMatMul, {bb, b.constant("w5", {16, 16}, 5)}, "e");
  b.g.addOutput(b.op(OpKind::kGemm, {c, b.constant("w4", {16, 16}, 4), e}, "d"));
  for (Node& n : b.g.mutableNodes()) n.mir.stream = n.name == "b" || n.name == "e" ? 1 : 0;
  return b.g;
}

struct Planned {
  Graph g;
  cuda::Program p;
  ArenaPlan bare, with;
};

Planned plan(bool twoStreams, size_t scratch) {
  Planned r{chain(twoStreams), {}, {}, {}};
  auto t = resolveTarget("h200");
  EXPECT_TRUE(t.isOk());
  auto p = cuda::lowerPlan(r.g, *t);
  EXPECT_TRUE(p.isOk()) << p.status().message();
  if (!p.isOk()) return r;
  r.p = std::move(*p);
  SymbolBindings b;
  b.values = {0, 64};
  auto shapes = cuda::arenaShapes(r.g, r.p, b);
  EXPECT_TRUE(shapes.isOk()) << shapes.status().message();
  if (!shapes.isOk()) return r;
  r.bare = r.with = *shapes;
  cuda::placeArena(r.g, r.p, {}, r.bare);
  cuda::placeArena(r.g, r.p, std::vector<size_t>(r.p.steps.size(), scratch), r.with);
  return r;
}

bool overlaps(size_t a, size_t an, size_t b, size_t bn) {
  return a < b + bn && b < a + an;
}

// No step's scratch overlaps a buffer that step touches or a graph input;
// scratch of steps that may run at once do not overlap either.
void expectSafe(const Planned& r, size_t scratch) {
  const ArenaPlan& a = r.with;
  ASSERT_EQ(a.stepOffset.size(), r.p.steps.size());
  for (size_t s = 0; s < r.p.steps.size(); ++s) {
    EXPECT_EQ(a.stepOffset[s] % cuda::kDeviceAlign, 0u) << s;
    EXPECT_LE(a.stepOffset[s] + scratch, a.size) << s;
    std::vector<ValueId> touched = r.p.steps[s].writes;
    for (ValueId v : r.p.steps[s].reads) touched.push_back(r.p.root(v));
    touched.insert(touched.end(), r.g.inputs().begin(), r.g.inputs().end());
    for (ValueId v : touched) {
      auto i = static_cast<size_t>(v);
      if (!a.inArena[i]) continue;
      EXPECT_FALSE(overlaps(a.stepOffset[s], scratch, a.offset[i], a.bytes[i])) << "step " << s << ", %" << i;
    }
    for (size_t t = 0; t < s; ++t) {
      if (r.p.after[s][t] || r.p.after[t][s]) continue;
      EXPECT_FALSE(overlaps(a.stepOffset[s], scratch, a.stepOffset[t], scratch)) << "steps " << t << ", " << s;
    }
  }
}

TEST(CudaMemory, OneStreamsWorkspacesShareOneRegionOfTheArena) {
  constexpr size_t kScratch = 1 << 20;  // far more than the 4 KiB activations
  Planned r = plan(false, kScratch);
  ASSERT_EQ(r.p.numStreams(), 1);
  ASSERT_EQ(r.p.steps.size(), 3u);
  expectSafe(r, kScratch);
  // Calls of one stream never overlap: one region serves all three, where a
  // fixed workspace per stream would have been 32 MiB.
  EXPECT_LE(r.with.size, r.bare.size + kScratch);
  EXPECT_EQ(r.with.stepOffset[0], r.with.stepOffset[1]);
  EXPECT_EQ(r.with.stepOffset[1], r.with.stepOffset[2]);
  // Buffers keep their bytes: the workspace only takes what they leave.
  for (size_t v = 0; v < r.g.numValues(); ++v) EXPECT_EQ(r.with.bytes[v], r.bare.bytes[v]);
}

TEST(CudaMemory, WorkspacesOfCallsThatMayOverlapGetTheirOwnBytes) {
  constexpr size_t kScratch = 64 * 1024;
  Planned r = plan(true, kScratch);
  ASSERT_EQ(r.p.numStreams(), 2);
  ASSERT_EQ(r.p.steps.size(), 5u);
  expectSafe(r, kScratch);
  int concurrent = 0;
  for (size_t s = 0; s < r.p.steps.size(); ++s) {
    for (size_t t = 0; t < s; ++t) concurrent += !r.p.after[s][t] && !r.p.after[t][s] ? 1 : 0;
  }
  EXPECT_GT(concurrent, 0);                            // the test means something: some calls may overlap
  EXPECT_LE(r.with.size, r.bare.size + 2 * kScratch);  // at most one region per stream
}

TEST(CudaMemory, NoScratchPlacesTheArenaAsPlanArenaDoes) {
  Planned r = plan(true, 0);
  SymbolBindings b;
  b.values = {0, 64};
  auto whole = cuda::planArena(r.g, r.p, b);
  ASSERT_TRUE(whole.isOk());
  EXPECT_EQ(whole->size, r.bare.size);
  EXPECT_EQ(whole->offset, r.bare.offset);
  EXPECT_EQ(r.with.size, r.bare.size);  // zero-byte workspaces take nothing
}

// Largest-first placement puts the late, large `cat` at 0, where the two
// short buffers b1 and b3 (which never live at once) would have shared
// bytes; placing by conflicting bytes finds the 20-byte arena.
TEST(CudaMemory, ArenaKeepsTheSmallerOfItsTwoPlacements) {
  //                   cat x0 b1 b2 b3 d1  d2
  std::vector<int> birth = {10, 1, 2, 4, 6, 1, 1};
  std::vector<int> death = {11, 8, 5, 7, 10, 9, 10};
  std::vector<size_t> size = {8, 4, 4, 4, 4, 4, 4};
  BufferConflict conflict = intervalConflict(birth, death);
  std::vector<size_t> offset;
  EXPECT_EQ(planOffsets(size, conflict, offset), 20u);
  for (size_t u = 0; u < size.size(); ++u) {
    for (size_t v = 0; v < u; ++v) {
      if (conflict(u, v)) {
        EXPECT_FALSE(overlaps(offset[u], size[u], offset[v], size[v])) << u << ", " << v;
      }
    }
  }
}

// Elementwise steps write into an operand whose every other access comes
// before them: x -> a = relu(x) -> b = neg(a) -> c = a + b -> d = relu(c).
// b may not take a's bytes (c still reads a), c may (a and b end there);
// the graph input and the graph output are never written over (d takes
// b's bytes the usual way, b being dead by then).
TEST(CudaMemory, ElementwiseStepsWriteOverAnOperandThatEndsThere) {
  Builder b;
  ValueId x = b.input("x", DType::kF32, {kBatch, 64});
  ValueId a = b.op(OpKind::kRelu, {x}, "a");
  ValueId n = b.op(OpKind::kNeg, {a}, "b");
  ValueId c = b.op(OpKind::kAdd, {a, n}, "c");
  ValueId d = b.op(OpKind::kRelu, {c}, "d");
  b.g.addOutput(d);
  auto t = resolveTarget("h200");
  ASSERT_TRUE(t.isOk());
  auto p = cuda::lowerPlan(b.g, *t);
  ASSERT_TRUE(p.isOk()) << p.status().message();
  ASSERT_EQ(p->steps.size(), 4u);
  SymbolBindings bind;
  bind.values = {0, 64};
  auto arena = cuda::planArena(b.g, *p, bind);
  ASSERT_TRUE(arena.isOk()) << arena.status().message();
  const auto at = [&](ValueId v) { return arena->offset[static_cast<size_t>(v)]; };
  const size_t bytes = 64 * 64 * 4;
  EXPECT_EQ(at(c), at(a));
  EXPECT_FALSE(overlaps(at(n), bytes, at(a), bytes));
  EXPECT_FALSE(overlaps(at(x), bytes, at(a), bytes));
  EXPECT_FALSE(overlaps(at(d), bytes, at(c), bytes)) << "a graph output keeps its own bytes";
  EXPECT_EQ(arena->size, 3 * bytes) << "x; a, then c; b, then d";
}

// Every zoo model's greedy plan on the measured H200 profile, at batch 256
// and 4096: two values share arena bytes only when every access of one
// happens before the other is written, or at that write when the writer is
// an elementwise step reading it (in place); graph inputs share with nothing.
TEST(CudaMemory, ZooArenasShareBytesOnlyAcrossTimeOrInPlace) {
  auto hw = loadProfile(rwtest::repoPath("bench/results/hw/h200-probed.json"));
  ASSERT_TRUE(hw.isOk()) << hw.status().message();
  auto t = makeTarget(*hw);
  ASSERT_TRUE(t.isOk());
  auto policy = makePolicy("greedy");
  int inPlace = 0;
  for (const char* model : {"dlrm_criteo", "deepfm", "xdeepfm", "dcnv2", "wide_deep", "autoint", "ngcf"}) {
    for (int64_t batch : {256, 4096}) {
      EnvConfig cfg;
      cfg.batch = batch;
      auto r = optimize(rwtest::zoo(model), *t, **policy, cfg);
      ASSERT_TRUE(r.isOk()) << model << ": " << r.status().message();
      const Graph& g = r->plan;
      auto p = cuda::lowerPlan(g, *t);
      ASSERT_TRUE(p.isOk()) << model << ": " << p.status().message();
      auto a = cuda::planArena(g, *p, defaultBindings(g, batch));
      ASSERT_TRUE(a.isOk()) << model << ": " << a.status().message();
      const int steps = static_cast<int>(p->steps.size());
      std::vector<int> writer(g.numValues(), -1);
      std::vector<std::vector<int>> users(g.numValues());
      for (int s = 0; s < steps; ++s) {
        for (ValueId v : p->steps[static_cast<size_t>(s)].writes) {
          writer[static_cast<size_t>(v)] = s;
          users[static_cast<size_t>(v)].push_back(s);
        }
        for (ValueId v : p->steps[static_cast<size_t>(s)].reads) users[static_cast<size_t>(p->root(v))].push_back(s);
      }
      for (ValueId v : g.outputs()) users[static_cast<size_t>(p->root(v))].push_back(steps);
      auto before = [&](int x, int y) { return x < y && p->after[static_cast<size_t>(y)][static_cast<size_t>(x)]; };
      auto elementwise = [&](int s) {
        for (NodeId n : p->steps[static_cast<size_t>(s)].nodes) {
          if (!ops::in(ops::kEltwise, g.node(n).op)) return false;
        }
        return p->steps[static_cast<size_t>(s)].kind == cuda::StepKind::kGenerated;
      };
      // u's bytes are free for v: u ends before v is written, or at that write in place.
      auto freeFor = [&](size_t u, size_t v) {
        const int w = writer[v];
        if (writer[u] < 0 || w < 0) return false;
        bool at = false;
        for (int x : users[u]) {
          if (x == w && elementwise(w)) {
            at = true;
          } else if (!before(x, w)) {
            return false;
          }
        }
        inPlace += at ? 1 : 0;
        return true;
      };
      for (size_t u = 0; u < g.numValues(); ++u) {
        for (size_t v = 0; v < u; ++v) {
          if (!a->inArena[u] || !a->inArena[v]) continue;
          if (!overlaps(a->offset[u], a->bytes[u], a->offset[v], a->bytes[v])) continue;
          EXPECT_TRUE(freeFor(u, v) || freeFor(v, u))
              << model << " batch " << batch << ": %" << u << " and %" << v << " share bytes while both are live";
        }
      }
    }
  }
  EXPECT_GT(inPlace, 0) << "no elementwise step wrote in place in any zoo plan";
}

// A CIN layer of xDeepFM's size: O = 200 maps from H = 200 maps x M = 22 fields (K = 4400), D = 16.
cuda::CinGemm cinLayer(Precision math) {
  cuda::CinGemm c;
  c.O = 200;
  c.H = 200;
  c.M = 22;
  c.D = 16;
  c.math = math;
  c.elementBytes = math == Precision::kBF16 ? 2 : 4;
  c.ldz = math == Precision::kF32
              ? c.K()
              : (c.K() * static_cast<int64_t>(c.elementBytes) + 15) / 16 * 16 / static_cast<int64_t>(c.elementBytes);
  return c;
}

TEST(CudaMemory, CinScratchIsSizedToASmallBatchNotToTheChunkBudget) {
  const auto up = [](size_t n) { return (n + 255) / 256 * 256; };
  for (Precision math : {Precision::kF32, Precision::kBF16}) {
    cuda::CinGemm c = cinLayer(math);
    const size_t budget = cuda::kCinChunkBudget;
    for (int64_t batch : {1, 4, 256}) {
      EXPECT_EQ(c.chunkRows(batch, budget), batch) << batch;  // one chunk of exactly the batch
      const auto rows = static_cast<size_t>(batch);
      const size_t z = up(rows * 16 * static_cast<size_t>(c.ldz) * c.elementBytes), y = up(rows * 16 * 200 * 4);
      EXPECT_EQ(c.scratchBytes(batch, budget), up(c.weightBytes()) + z + y) << batch;
      EXPECT_EQ(c.scratchBytes(batch, budget, 1, 4096), up(c.weightBytes()) + z + y + 4096) << batch;
      EXPECT_LT(c.scratchBytes(batch, budget), budget) << batch;
    }
    // A large batch is chunked to the budget: the scratch stays near it, not batch-sized.
    EXPECT_LE(c.scratchBytes(1 << 20, budget), up(c.weightBytes()) + budget + 2 * 256);
  }
}

// ---- on a GPU ----

using cudatest::gpuOrSkip;

// x [B, 2048] -> a (K 2048, N 16) -> c (K 16, N 2048) -> d (K 2048, N 16):
// long reductions to few outputs, the calls cuBLASLt likes to split over K
// with a workspace.
Graph longK() {
  Builder b;
  ValueId x = b.input("x", DType::kF32, {kBatch, 2048});
  ValueId a = b.op(OpKind::kMatMul, {x, b.constant("w1", {2048, 16}, 1)}, "a");
  ValueId c = b.op(OpKind::kMatMul, {a, b.constant("w2", {16, 2048}, 2)}, "c");
  b.g.addOutput(b.op(OpKind::kMatMul, {c, b.constant("w3", {2048, 16}, 3)}, "d"));
  return b.g;
}

// The workspaces share the arena's bytes with the activations: the captured
// graph's replays still match the reference, the breakdown adds up, and no
// plan pays a fixed 32 MiB per stream any more.
TEST(CudaMemoryGpu, WorkspacesInTheArenaKeepResultsAndTheBreakdownAddsUp) {
  std::string why;
  auto backend = gpuOrSkip(why);
  if (!backend) GTEST_SKIP() << why;
  for (const Graph& g : {chain(false), chain(true), longK()}) {
    const int64_t width = g.type(g.inputs()[0]).dims[1];
    rectest::Inputs in{{"x", rectest::uniform({64, width}, 9)}};
    auto exe = backend->compile(g);
    ASSERT_TRUE(exe.isOk()) << exe.status().message();
    auto want = runReference(g, in);
    ASSERT_TRUE(want.isOk()) << want.status().message();
    for (int rep = 0; rep < 3; ++rep) {  // the first run captures the graph, the others replay it
      auto got = (*exe)->run(in);
      ASSERT_TRUE(got.isOk()) << got.status().message();
      auto cmp = compareTensors((*got)[0], (*want)[0], 1e-3, 1e-4);
      EXPECT_TRUE(cmp.close) << "run " << rep << ": " << cmp.message;
    }
    auto* timed = dynamic_cast<cuda::DeviceTimed*>(exe->get());
    ASSERT_NE(timed, nullptr);
    auto t = timed->timeReplays(in, 3, 1);
    ASSERT_TRUE(t.isOk()) << t.status().message();
    const cuda::MemoryBreakdown& m = t->memory;
    EXPECT_EQ(t->peakBytes, m.total());
    EXPECT_EQ(t->peakBytes, (*exe)->peakMemoryBytes());
    EXPECT_EQ(m.inputBytes, 64 * width * 4);
    EXPECT_LE(m.inputBytes + m.workspaceBytes, m.arenaBytes);
    EXPECT_EQ(m.scratchBytes, 0);
    EXPECT_LT(m.workspaceBytes, static_cast<int64_t>(cuda::kWorkspaceLimit));
    std::printf("[ memory   ] %s: arena %lld (inputs %lld, workspaces %lld) + weights %lld bytes (allocated)\n",
                g.value(g.outputs()[0]).name.c_str(), static_cast<long long>(m.arenaBytes),
                static_cast<long long>(m.inputBytes), static_cast<long long>(m.workspaceBytes),
                static_cast<long long>(m.weightBytes));
  }
}

// DLRM-sized library GEMMs (>= kTunedGemmFlops at batch 4096): their first
// run times the heuristic's candidates on the bound operands (one with an
// addend, which timed calls must not sum into twice) and keeps the fastest;
// results match the reference on every run and with tuning off, and the
// workspace never grows past the heuristic pick's.
TEST(CudaMemoryGpu, TunedLibraryGemmsKeepResultsAndWorkspace) {
  std::string why;
  auto backend = gpuOrSkip(why);
  if (!backend) GTEST_SKIP() << why;
  Builder b;
  ValueId x = b.input("x", DType::kF32, {kBatch, 512});
  ValueId add = b.input("add", DType::kF32, {kBatch, 256});
  ValueId h = b.op(OpKind::kGemm, {x, b.constant("w1", {256, 512}, 1), b.constant("c1", {256}, 2)}, "g1",
                   rectest::attrs({{"transB", int64_t{1}}}));
  ValueId r = b.op(OpKind::kRelu, {h}, "r");
  b.g.addOutput(b.op(OpKind::kGemm, {r, b.constant("w2", {256, 256}, 3), add}, "g2",
                     rectest::attrs({{"beta", 1.0}})));
  b.group({"g1", "r"}, 0, "cublaslt.matmul");
  b.group({"g2"}, 1, "cublaslt.matmul");
  rectest::Inputs in{{"x", rectest::uniform({4096, 512}, 9)}, {"add", rectest::uniform({4096, 256}, 10)}};
  auto want = runReference(b.g, in);
  ASSERT_TRUE(want.isOk()) << want.status().message();
  std::vector<int64_t> peak;
  // cuBLASLt's own candidates only: the wgmma tile (cuda_wgmma_gemm_test.cc)
  // would add its split weight's bytes when it wins.
  ScopedEnv noTile("CAGR_GEMM_WGMMA", "0");
  for (const char* tune : {"0", "1"}) {
    ScopedEnv env("CAGR_GEMM_TUNE", tune);
    auto exe = backend->compile(b.g);
    ASSERT_TRUE(exe.isOk()) << exe.status().message();
    for (int rep = 0; rep < 3; ++rep) {
      auto got = (*exe)->run(in);
      ASSERT_TRUE(got.isOk()) << got.status().message();
      auto cmp = compareTensors((*got)[0], (*want)[0], 1e-3, 1e-4);
      EXPECT_TRUE(cmp.close) << "CAGR_GEMM_TUNE=" << tune << ", run " << rep << ": " << cmp.message;
    }
    peak.push_back((*exe)->peakMemoryBytes());
  }
  EXPECT_LE(peak[1], peak[0]);
}

}  // namespace
}  // namespace cagr

#endif  // CAGR_HAVE_CUDA
