// Executable::profile on the CPU backend (per-kernel timings behind `cagr
// bench --breakdown`): one timing per kernel in run order, named as the
// kernel report names it, covering every node that runs exactly once; bad
// repeat counts and inputs are errors; the reference backend says it cannot.
#include <set>

#include "../rewrite/rewrite_test_util.h"
#include "cpu_test_util.h"

namespace cagr {
namespace {

using rectest::Builder;
using rectest::uniform;

// x -> Gemm + Relu (one fused group) -> Sigmoid -> Reshape (a view, no kernel).
Graph smallPlan() {
  Builder b;
  ValueId x = b.input("x", DType::kF32, {kBatch, 24});
  ValueId w = b.constant("w", {24, 40}, 1);
  ValueId c = b.constant("c", {40}, 2);
  ValueId y = b.op(OpKind::kGemm, {x, w, c}, "fc");
  ValueId r = b.op(OpKind::kRelu, {y}, "relu");
  ValueId s = b.op(OpKind::kSigmoid, {r}, "sig");
  ValueId f = b.op(OpKind::kFlatten, {s}, "flat");
  b.g.addOutput(f, "out");
  b.group({"fc", "relu"}, 1, "onednn.matmul");
  return b.g;
}

TEST(CpuProfileTest, TimesEachKernelOnceInRunOrder) {
  Graph g = smallPlan();
  auto exe = (*makeBackend("cpu"))->compile(g);
  ASSERT_TRUE(exe.isOk()) << exe.status().message();
  rectest::Inputs in = {{"x", uniform({64, 24}, 3)}};
  auto prof = (*exe)->profile(in, 4);
  ASSERT_TRUE(prof.isOk()) << prof.status().message();
  std::vector<std::string> report = (*exe)->kernelReport();
  ASSERT_EQ(prof->size(), report.size());
  std::multiset<NodeId> covered;
  for (size_t i = 0; i < prof->size(); ++i) {
    const KernelTiming& k = (*prof)[i];
    EXPECT_EQ(k.kernel, report[i]);
    EXPECT_FALSE(k.nodes.empty()) << k.kernel;
    EXPECT_GE(k.minMs, 0.0);
    EXPECT_GE(k.medianMs, k.minMs) << k.kernel;
    EXPECT_GE(k.cpuMs, 0.0);
    covered.insert(k.nodes.begin(), k.nodes.end());
  }
  // fc and relu in one kernel, sig in another; the Flatten view runs no kernel.
  EXPECT_EQ(covered.size(), 3u);
  for (const char* name : {"fc", "relu", "sig"}) {
    auto n = std::find_if(g.nodes().begin(), g.nodes().end(), [&](const Node& x) { return x.name == name; });
    ASSERT_NE(n, g.nodes().end());
    EXPECT_EQ(covered.count(static_cast<NodeId>(n - g.nodes().begin())), 1u) << name;
  }
  EXPECT_EQ((*prof)[0].nodes.size(), 2u);  // the fused Gemm + Relu
  // A profile run leaves the executable usable, with the same results.
  auto got = (*exe)->run(in);
  auto want = runReference(g, in);
  ASSERT_TRUE(got.isOk() && want.isOk());
  EXPECT_TRUE(compareTensors((*got)[0], (*want)[0], 1e-6, 1e-5).close);
}

TEST(CpuProfileTest, RejectsBadRepeatsAndInputs) {
  auto exe = (*makeBackend("cpu"))->compile(smallPlan());
  ASSERT_TRUE(exe.isOk());
  auto zero = (*exe)->profile({{"x", uniform({8, 24}, 3)}}, 0);
  EXPECT_EQ(zero.status().code(), ErrorCode::kInvalidArgument);
  auto missing = (*exe)->profile({{"y", uniform({8, 24}, 3)}}, 2);
  EXPECT_FALSE(missing.isOk());
}

TEST(CpuProfileTest, ReferenceBackendSaysItCannot) {
  auto exe = (*makeBackend("reference"))->compile(smallPlan());
  ASSERT_TRUE(exe.isOk());
  auto prof = (*exe)->profile({{"x", uniform({8, 24}, 3)}}, 2);
  EXPECT_EQ(prof.status().code(), ErrorCode::kUnsupported);
}

}  // namespace
}  // namespace cagr
