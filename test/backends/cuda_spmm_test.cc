// The CUDA backend's load-balanced SpMM (codegen_spmm.cc) on CSR matrices
// that stress its row ownership: NGCF-like skew (a row of 554 entries, mean
// ~17), a hub row spanning many blocks between runs of empty rows, i32
// indices, K of 3 / 6 / 64 / 200 (scalar, float2 and float4 loads, a partial
// column tile). Without a GPU: every case lowers and compiles with NVRTC
// (sm_90a). On a GPU: matches the reference executor (fp32 rel err <= 1e-4).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "../rewrite/rewrite_test_util.h"
#include "cagr/backend.h"
#include "cagr/reference.h"
#include "cpu_test_util.h"

#ifdef CAGR_HAVE_CUDA
#include "backends/cuda/codegen.h"
#include "backends/cuda/cuda_program.h"
#endif

namespace cagr {
namespace {

using rectest::Builder;
using rectest::uniform;

struct Case {
  std::string name;
  int64_t rows, cols, k;
  DType index;
  std::vector<int64_t> degree;  // entries per row
};

Tensor indexTensor(const std::vector<int64_t>& v, DType t) {
  Tensor out(t, {static_cast<int64_t>(v.size())});
  for (size_t i = 0; i < v.size(); ++i) {
    if (t == DType::kI64)
      out.data<int64_t>()[i] = v[i];
    else
      out.data<int32_t>()[i] = static_cast<int32_t>(v[i]);
  }
  return out;
}

// The SpMM of a constant CSR matrix (as NGCF's) with a [cols, k] input.
Graph spmmGraph(const Case& c) {
  std::vector<int64_t> rp{0}, ci;
  for (int64_t r = 0; r < c.rows; ++r) {
    for (int64_t e = 0; e < c.degree[static_cast<size_t>(r)]; ++e) ci.push_back((r * 131 + e * 7) % c.cols);
    rp.push_back(static_cast<int64_t>(ci.size()));
  }
  Builder b;
  ValueId x = b.input("x", DType::kF32, {c.cols, c.k});
  ValueId rpv = b.g.addConstant("row_ptr", indexTensor(rp, c.index));
  ValueId civ = b.g.addConstant("col_idx", indexTensor(ci, c.index));
  ValueId va = b.g.addConstant("vals", uniform({static_cast<int64_t>(ci.size())}, 5));
  b.g.addOutput(b.op(OpKind::kSpMM, {rpv, civ, va, x}, "adj_x", rectest::attrs({{"rows", c.rows}, {"cols", c.cols}})),
                "y");
  return b.g;
}

std::vector<Case> cases() {
  std::vector<Case> out;
  {  // NGCF-like: 2000 nodes, mean ~17 entries, one row of 554, a few of 100-300
    Case c{"ngcf_like", 2000, 2000, 64, DType::kI64, {}};
    for (int64_t r = 0; r < c.rows; ++r) c.degree.push_back(r == 17 ? 554 : r % 97 == 0 ? 100 + r % 200 : 5 + r % 20);
    out.push_back(c);
  }
  {  // empty rows around a hub of 20000 entries (many blocks' shares), K = 200
    Case c{"hub_between_empty_rows", 5000, 3000, 200, DType::kI64, {}};
    for (int64_t r = 0; r < c.rows; ++r) c.degree.push_back(r < 300 || r > 4700 ? 0 : r == 2500 ? 20000 : r % 3);
    out.push_back(c);
  }
  {  // i32 indices, K = 3 (scalar loads), rows of 0..40 entries
    Case c{"i32_k3", 700, 300, 3, DType::kI32, {}};
    for (int64_t r = 0; r < c.rows; ++r) c.degree.push_back((r * 7) % 41);
    out.push_back(c);
  }
  {  // one row of 1000 entries, K = 6 (float2 loads)
    Case c{"one_long_row_k6", 1, 50, 6, DType::kI64, {1000}};
    out.push_back(c);
  }
  return out;
}

#ifdef CAGR_HAVE_CUDA
TEST(CudaSpmm, EveryCaseCompilesWithNvrtc) {
  const Target t = rwtest::target("h200");
  std::string dir = (std::filesystem::temp_directory_path() / "cagr-cuda-spmm-test").string();
  for (const Case& c : cases()) {
    Graph g = spmmGraph(c);
    auto p = cuda::lowerPlan(g, t);
    ASSERT_TRUE(p.isOk()) << c.name << ": " << p.status().message();
    ASSERT_NE(p->moduleSource.find("cagr_spmm"), std::string::npos) << c.name;
    cuda::NvrtcOptions o;
    o.arch = "sm_90a";
    o.cacheDir = dir;
    auto m = cuda::compileModule(p->moduleSource, o);
    ASSERT_TRUE(m.isOk()) << c.name << ": " << m.status().message();
  }
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
}
#endif

TEST(CudaSpmmGpu, MatchesTheReferenceOnSkewedAndEmptyRows) {
  auto backend = makeBackend("cuda");
  if (!backend.isOk()) GTEST_SKIP() << "no CUDA backend in this build: " << backend.status().message();
  BackendCapabilities caps = (*backend)->capabilities();
  if (!caps.available) GTEST_SKIP() << caps.name << ": " << caps.note;
  for (const Case& c : cases()) {
    Graph g = spmmGraph(c);
    std::vector<std::pair<std::string, Tensor>> in = {{"x", uniform({c.cols, c.k}, 3)}};
    auto exe = (*backend)->compile(g);
    ASSERT_TRUE(exe.isOk()) << c.name << ": " << exe.status().message();
    auto got = (*exe)->run(in);
    ASSERT_TRUE(got.isOk()) << c.name << ": " << got.status().message();
    auto want = runReference(g, in);
    ASSERT_TRUE(want.isOk()) << c.name << ": " << want.status().message();
    const Tensor& a = (*got)[0];
    const Tensor& b = (*want)[0];
    ASSERT_EQ(a.shape(), b.shape()) << c.name;
    double worst = 0, scale = 0;
    for (int64_t i = 0; i < b.numel(); ++i) scale = std::max(scale, std::abs(static_cast<double>(b.data<float>()[i])));
    for (int64_t i = 0; i < b.numel(); ++i) {
      worst = std::max(worst, std::abs(static_cast<double>(a.data<float>()[i]) - b.data<float>()[i]));
    }
    EXPECT_LE(worst, 1e-4 * std::max(scale, 1.0)) << c.name;
  }
}

}  // namespace
}  // namespace cagr
