// The conformance suite every backend passes (DESIGN §7): every zoo model,
// as imported (HIR), as the greedy plan for the backend's family (cpu: the
// x86-64 profile; cuda: the H200's, skipped without a GPU) — f32, as every
// default plan is — and as greedy's plan with every reduced precision
// allowed (greedy_reduced), at batch 1, 256 and 4096, matches the reference
// executor on the HIR: relative error <= 1e-4 for f32 plans, the stated bound
// of set_precision for reduced ones. The models score every sample on its
// own, so at batch 4096 the reference runs on a slice of rows (the first and
// the last 32) and the backend's rows there must match: the reference
// executor is the oracle, not a fast path (xDeepFM alone is ~350 GFLOP at
// 4096). cuda adds two plan forms: DLRM's GEMMs on the generated small GEMM,
// and every model's f32 greedy plan with the wgmma tile forced.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>

#include "../rewrite/rewrite_test_util.h"
#include "cagr/backend.h"
#include "cagr/policy.h"
#include "support/scoped_env.h"

namespace cagr {
namespace {

// Ids are drawn below the largest id the committed inputs of the model use
// (zoo/ref/<model>.b{4,7}.inputs.npz, made by data/gen.py), per input and
// field (column of [N, F] ids, row of DLRM's [T, L]): always valid ids,
// whatever the model adds to them (NGCF offsets items by the user count).
using Bounds = std::map<std::string, std::vector<int64_t>>;

int64_t fieldOf(const std::vector<int64_t>& shape, bool tableMajor, int64_t i) {
  if (shape.size() < 2) return 0;
  return tableMajor ? i / shape[1] : i % shape[1];
}

Bounds idBounds(const std::string& model) {
  Bounds bound;
  for (int b : {4, 7}) {
    for (const auto& [name, t] : rwtest::zooInputs(model, b)) {
      if (t.dtype() != DType::kI64) continue;
      std::vector<int64_t>& m = bound[name];
      bool tableMajor = name == "sparse_indices" || name == "sparse_offsets";
      m.resize(t.rank() < 2 ? 1 : static_cast<size_t>(t.dim(tableMajor ? 0 : 1)), 1);
      for (int64_t i = 0; i < t.numel(); ++i) {
        int64_t& f = m[static_cast<size_t>(fieldOf(t.shape(), tableMajor, i))];
        f = std::max(f, t.data<int64_t>()[i] + 1);
      }
    }
  }
  return bound;
}

// Inputs in the zoo's formats (data/gen.py): dense features, one id per
// field, DLRM's table-major [T, L] ids with [T, N] offsets (one id per bag),
// NGCF's users / items.
std::vector<std::pair<std::string, Tensor>> inputsFor(const Graph& g, const std::string& model, int64_t batch,
                                                     unsigned seed) {
  std::mt19937 rng(seed);
  Bounds bounds = idBounds(model);
  std::vector<std::pair<std::string, Tensor>> out;
  for (ValueId v : g.inputs()) {
    const std::string& name = g.value(v).name;
    std::vector<int64_t> shape;
    for (Dim d : g.type(v).dims) shape.push_back(isSymbolic(d) ? batch * dimCoef(d) : d);
    Tensor t(g.type(v).dtype, shape);
    for (int64_t i = 0; i < t.numel(); ++i) {
      if (t.dtype() == DType::kF32) {
        t.data<float>()[i] = std::uniform_real_distribution<float>(0, 2)(rng);
      } else if (name == "sparse_offsets") {
        t.data<int64_t>()[i] = i % shape.back();
      } else {
        bool tableMajor = name == "sparse_indices";
        int64_t hi = bounds[name].at(static_cast<size_t>(fieldOf(shape, tableMajor, i)));
        t.data<int64_t>()[i] = std::uniform_int_distribution<int64_t>(0, hi - 1)(rng);
      }
    }
    out.emplace_back(name, std::move(t));
  }
  return out;
}

// Rows [lo, hi) of every batch-major input (DLRM's [T, N] offsets and [T, L]
// ids: the columns of those bags, re-based).
std::vector<std::pair<std::string, Tensor>> sliceRows(const std::vector<std::pair<std::string, Tensor>>& in,
                                                      int64_t lo, int64_t hi) {
  std::vector<std::pair<std::string, Tensor>> out;
  for (const auto& [name, t] : in) {
    bool tableMajor = name == "sparse_indices" || name == "sparse_offsets";
    std::vector<int64_t> shape = t.shape();
    int64_t axis = tableMajor ? 1 : 0;
    int64_t inner = 1;
    for (size_t d = static_cast<size_t>(axis) + 1; d < shape.size(); ++d) inner *= shape[d];
    int64_t outer = 1;
    for (int64_t d = 0; d < axis; ++d) outer *= shape[static_cast<size_t>(d)];
    int64_t len = shape[static_cast<size_t>(axis)];
    shape[static_cast<size_t>(axis)] = hi - lo;
    Tensor s(t.dtype(), shape);
    size_t es = dtypeSize(t.dtype());
    for (int64_t o = 0; o < outer; ++o) {
      std::copy_n(t.rawData() + ((o * len + lo) * inner) * static_cast<int64_t>(es), (hi - lo) * inner * static_cast<int64_t>(es),
                  s.rawData() + (o * (hi - lo) * inner) * static_cast<int64_t>(es));
    }
    if (name == "sparse_offsets") {
      for (int64_t i = 0; i < s.numel(); ++i) s.data<int64_t>()[i] -= lo;
    }
    out.emplace_back(name, std::move(s));
  }
  return out;
}

Tensor rowsOf(const Tensor& t, int64_t lo, int64_t hi) {
  std::vector<int64_t> shape = t.shape();
  int64_t inner = t.numel() / shape[0];
  shape[0] = hi - lo;
  Tensor s(t.dtype(), shape);
  size_t bytes = static_cast<size_t>(inner) * dtypeSize(t.dtype());
  std::copy_n(t.rawData() + static_cast<size_t>(lo) * bytes, static_cast<size_t>(hi - lo) * bytes, s.rawData());
  return s;
}

struct Case {
  std::string backend, model, plan;  // plan: "none", "greedy", or (cuda) "greedy_gemm_small" / "greedy_f32_wgmma"
  int64_t batch;
};

// greedy_gemm_small: every GEMM group of the greedy plan on the generated
// nvrtc.gemm_small kernel in f32 math (DLRM's K = 13 and narrow layers).
// greedy_f32_wgmma: the greedy plan without precision changes, its f32
// library GEMMs over weights run on the wgmma tile wherever it can run them
// (CAGR_GEMM_WGMMA=force; on sm_90: backends/cuda/gemm_wgmma.h), at every
// batch size, one-row launches included.
void setGemmSmall(Graph& g) {
  KernelId small = *kernelByName("nvrtc.gemm_small");
  for (Node& a : g.mutableNodes()) {
    if (a.op != OpKind::kGemm && a.op != OpKind::kMatMul) continue;
    a.mir.math = Precision::kF32;
    for (Node& m : g.mutableNodes()) {
      if (&m == &a || (a.mir.group >= 0 && m.mir.group == a.mir.group)) m.mir.kernel = small;
    }
  }
}

void PrintTo(const Case& c, std::ostream* os) { *os << c.backend << "/" << c.model << "/" << c.plan << "/b" << c.batch; }

class Conformance : public ::testing::TestWithParam<Case> {};

TEST_P(Conformance, MatchesTheReferenceExecutor) {
  const Case& c = GetParam();
  auto backend = makeBackend(c.backend);
  ASSERT_TRUE(backend.isOk()) << backend.status().message();
  BackendCapabilities caps = (*backend)->capabilities();
  if (!caps.available) GTEST_SKIP() << caps.name << ": " << caps.note;
  Graph hir = rwtest::zoo(c.model);
  Graph plan = hir;
  bool reduced = false;
  if (c.plan != "none") {
    auto policy = makePolicy(c.plan.rfind("greedy", 0) == 0 ? "greedy" : c.plan);
    auto t = resolveTarget(caps.family == Backend::kCuda ? "h200" : "x86-64");
    EnvConfig cfg;
    cfg.batch = std::max<int64_t>(c.batch, 64);
    // greedy_reduced: every precision the target runs, unmeasured, so the
    // backends' reduced-precision kernels stay covered (users get them only
    // under a measured budget).
    if (c.plan == "greedy_reduced") cfg.precision = unrestrictedPrecision();
    auto r = optimize(hir, *t, **policy, cfg);
    ASSERT_TRUE(r.isOk()) << r.status().message();
    plan = r->plan;
    if (c.plan == "greedy_gemm_small") setGemmSmall(plan);
    for (const Decision& d : r->decisions) reduced = reduced || d.action.kind == ActionKind::kSetPrecision;
  }
  ScopedEnv tile("CAGR_GEMM_WGMMA", c.plan == "greedy_f32_wgmma" ? "force" : nullptr);
  auto exe = (*backend)->compile(plan);
  ASSERT_TRUE(exe.isOk()) << exe.status().message();
  auto inputs = inputsFor(hir, c.model, c.batch, 11);
  auto got = (*exe)->run(inputs);
  ASSERT_TRUE(got.isOk()) << got.status().message();
  EXPECT_GT((*exe)->peakMemoryBytes(), 0);
  std::vector<std::pair<int64_t, int64_t>> ranges = {{0, c.batch}};
  if (c.batch > 256) ranges = {{0, 32}, {c.batch - 32, c.batch}};
  double tol = reduced ? 5e-2 : 1e-4;
  for (auto [lo, hi] : ranges) {
    auto want = runReference(hir, sliceRows(inputs, lo, hi));
    ASSERT_TRUE(want.isOk()) << want.status().message();
    for (size_t i = 0; i < want->size(); ++i) {
      auto cmp = compareTensors(rowsOf((*got)[i], lo, hi), (*want)[i], reduced ? tol : 1e-6, tol);
      EXPECT_TRUE(cmp.close) << "rows " << lo << ".." << hi << " of output " << i << ": " << cmp.message;
    }
  }
}

std::vector<Case> cases() {
  std::vector<Case> out;
  std::vector<std::string> names = backendNames();
  for (const char* backend : {"cpu", "cuda"}) {
    if (std::find(names.begin(), names.end(), backend) == names.end()) continue;  // not in this build
    for (const char* model : {"dlrm_criteo", "dlrm_avazu", "deepfm", "xdeepfm", "dcnv2", "wide_deep", "autoint", "ngcf"}) {
      for (int64_t batch : {1, 256, 4096}) {
        for (const char* plan : {"none", "greedy", "greedy_reduced"}) out.push_back({backend, model, plan, batch});
        if (backend == std::string("cuda") && std::string(model).rfind("dlrm", 0) == 0) {
          out.push_back({backend, model, "greedy_gemm_small", batch});
        }
        if (backend == std::string("cuda")) out.push_back({backend, model, "greedy_f32_wgmma", batch});
      }
    }
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(Zoo, Conformance, ::testing::ValuesIn(cases()), [](const auto& info) {
  const Case& c = info.param;
  return c.backend + "_" + c.model + "_" + c.plan + "_b" + std::to_string(c.batch);
});

}  // namespace
}  // namespace cagr
