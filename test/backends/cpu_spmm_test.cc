// The CPU backend's SpMM step (own.spmm): matches the reference executor
// on one- and multi-threaded sizes, i32 and i64 indices, empty rows and a
// skewed degree distribution; bad CSR arrays are errors naming the node;
// reduced-precision operands go to the reference fallback.
#include <gtest/gtest.h>

#include "backends/cpu/step.h"
#include "cagr/backend.h"
#include "cpu_test_util.h"

namespace cagr {
namespace {

using rectest::Builder;
using rectest::uniform;

// A CSR matrix [rows, cols] where row r has (r * 7) % (maxDegree + 1)
// entries, plus one hub row holding every column.
struct Csr {
  Tensor rowPtr, col, vals;
};
Csr makeCsr(int64_t rows, int64_t cols, int maxDegree, DType index) {
  std::vector<int64_t> rp{0}, ci;
  for (int64_t r = 0; r < rows; ++r) {
    int64_t deg = r == rows / 2 ? cols : (r * 7) % (maxDegree + 1);
    for (int64_t k = 0; k < deg; ++k) ci.push_back((r * 13 + k * 5) % cols);
    rp.push_back(static_cast<int64_t>(ci.size()));
  }
  auto make = [&](const std::vector<int64_t>& v) {
    Tensor t(index, {static_cast<int64_t>(v.size())});
    for (size_t i = 0; i < v.size(); ++i) {
      if (index == DType::kI64)
        t.data<int64_t>()[i] = v[i];
      else
        t.data<int32_t>()[i] = static_cast<int32_t>(v[i]);
    }
    return t;
  };
  return {make(rp), make(ci), uniform({static_cast<int64_t>(ci.size())}, 7)};
}

Graph spmmGraph(int64_t rows, int64_t cols, int64_t k, int64_t nnz, DType index, Precision storage = Precision::kF32) {
  Builder b;
  ValueId rp = b.input("row_ptr", index, {rows + 1});
  ValueId ci = b.input("col_idx", index, {nnz});
  ValueId va = b.input("vals", DType::kF32, {nnz});
  ValueId dense = b.g.addConstant("x", uniform({cols, k}, 3));
  b.g.mutableValue(dense).mir.storage = storage;
  b.g.addOutput(b.op(OpKind::kSpMM, {rp, ci, va, dense}, "adj_x", rectest::attrs({{"rows", rows}, {"cols", cols}})),
                "y");
  return b.g;
}

TEST(CpuSpmmTest, MatchesTheReferenceAndRunsOwnKernel) {
  for (DType index : {DType::kI64, DType::kI32}) {
    for (auto [rows, cols, k, deg] :
         {std::tuple<int64_t, int64_t, int64_t, int>{5, 4, 3, 2}, {700, 300, 64, 12}, {300, 200, 100, 9}}) {
      Csr m = makeCsr(rows, cols, deg, index);
      Graph g = spmmGraph(rows, cols, k, m.col.numel(), index);
      auto report = rectest::runBoth(g, {{"row_ptr", m.rowPtr}, {"col_idx", m.col}, {"vals", m.vals}}, 1e-5);
      rectest::expectKernel(report, "own.spmm");
    }
  }
}

TEST(CpuSpmmTest, BadCsrNamesTheNode) {
  Graph g = spmmGraph(3, 4, 2, 3, DType::kI64);
  Tensor vals = uniform({3}, 1);
  auto err = [&](std::vector<int64_t> rp, std::vector<int64_t> ci) {
    return rectest::cpuRunError(
               g, {{"row_ptr", rectest::ids({4}, rp)}, {"col_idx", rectest::ids({3}, ci)}, {"vals", vals}})
        .message();
  };
  std::string bad = err({0, 1, 2, 3}, {0, 4, 1});
  EXPECT_NE(bad.find("'adj_x'"), std::string::npos) << bad;
  EXPECT_NE(bad.find("col_idx[1] = 4 is out of range [0, 4)"), std::string::npos) << bad;
  bad = err({0, 2, 1, 3}, {0, 1, 2});
  EXPECT_NE(bad.find("row_ptr[2] = 1 must be non-decreasing"), std::string::npos) << bad;
  bad = err({0, 1, 2, 5}, {0, 1, 2});
  EXPECT_NE(bad.find("<= nnz = 3"), std::string::npos) << bad;
}

TEST(CpuSpmmTest, ReducedPrecisionGoesToTheFallback) {
  Graph g = spmmGraph(6, 4, 3, 5, DType::kI64, Precision::kBF16);
  Target t = *resolveTarget("x86-64");
  std::vector<NodeId> members{0};
  cpu::StepRequest r{g, members, *classifyGroup(g, members), 0, {g.node(0).outputs[0]}, t.hw};
  EXPECT_EQ(cpu::makeSpmmStep(r).status().code(), ErrorCode::kUnsupported);
}

}  // namespace
}  // namespace cagr
