// The CUDA lowering's merge of column Slices into the table lookup they
// cut (cuda_program.cc mergeColumnSlices): when lone slices along the last
// axis are the only readers of an EmbeddingBags' [N, W] output, the lookup
// kernel writes each slice's columns into the slice's buffer; the W-wide
// output takes no arena bytes and no copy kernel runs. Without a GPU: which
// plans merge, the step, the arena and the NVRTC compile. With one: the
// values against the reference executor (skips without).
#include <gtest/gtest.h>

#ifdef CAGR_HAVE_CUDA

#include <algorithm>

#include "../rewrite/rewrite_test_util.h"
#include "backends/cpu_test_util.h"
#include "backends/cuda/codegen.h"
#include "backends/cuda/cuda_program.h"
#include "backends/cuda_test_util.h"
#include "cagr/policy.h"
#include "cagr/reference.h"
#include "lower/pad_gemm_dims.h"

namespace cagr {
namespace {

using rectest::attrs;
using rectest::Builder;

using rwtest::h200;

ValueId columns(Builder& b, ValueId x, int64_t begin, int64_t end, const std::string& name) {
  return b.op(OpKind::kSlice, {x}, name,
              attrs({{"starts", std::vector<int64_t>{begin}},
                     {"ends", std::vector<int64_t>{end}},
                     {"axes", std::vector<int64_t>{1}}}));
}

// ids [N, 3] -> tbe of three 4-wide tables [N, 12] -> slices [0, 4) (float4
// stores), [2, 9) (overlaps both neighbours, scalar stores) and [8, 12).
// `extra`: a Relu reads the lookup too; `output`: the lookup is a graph
// output as well.
Graph lookupWithSlices(bool extra, bool output) {
  Builder b;
  ValueId ids = b.input("ids", DType::kI64, {kBatch, 3});
  Attrs bags = attrs({{"num_tables", int64_t{3}}, {"mode", std::string("sum")}});
  ValueId tbe = b.op(OpKind::kEmbeddingBags,
                     {b.table("t0", 50, 4, 1), b.table("t1", 60, 4, 2), b.table("t2", 70, 4, 3), ids}, "tbe", bags);
  b.g.addOutput(columns(b, tbe, 0, 4, "s0"), "y0");
  b.g.addOutput(columns(b, tbe, 2, 9, "s1"), "y1");
  b.g.addOutput(b.op(OpKind::kRelu, {columns(b, tbe, 8, 12, "s2")}, "r2"), "y2");
  if (extra) b.g.addOutput(b.op(OpKind::kRelu, {tbe}, "r"), "r");
  if (output) b.g.addOutput(tbe, "tbe");
  return b.g;
}

const cuda::ProgramStep* stepOf(const cuda::Program& p, const Graph& g, const std::string& node) {
  for (const auto& s : p.steps) {
    for (NodeId n : s.nodes) {
      if (g.node(n).name == node) return &s;
    }
  }
  return nullptr;
}

TEST(CudaLookupSlices, ColumnRangesOfSlices) {
  Graph g = lookupWithSlices(false, false);
  auto range = [&](const std::string& name) {
    for (size_t n = 0; n < g.nodes().size(); ++n) {
      if (g.nodes()[n].name == name) return cuda::columnSlice(g, static_cast<NodeId>(n));
    }
    return std::optional<cuda::ColumnRange>();
  };
  ASSERT_TRUE(range("s1").has_value());
  EXPECT_EQ(range("s1")->begin, 2);
  EXPECT_EQ(range("s1")->end, 9);
  EXPECT_FALSE(range("r2").has_value());  // no slice
  Builder b;
  ValueId x = b.input("x", DType::kF32, {4, 8});
  ValueId rows = b.op(OpKind::kSlice, {x}, "rows",
                      attrs({{"starts", std::vector<int64_t>{1}},
                             {"ends", std::vector<int64_t>{3}},
                             {"axes", std::vector<int64_t>{0}}}));
  ValueId strided = b.op(OpKind::kSlice, {x}, "strided",
                         attrs({{"starts", std::vector<int64_t>{0}},
                                {"ends", std::vector<int64_t>{8}},
                                {"axes", std::vector<int64_t>{1}},
                                {"steps", std::vector<int64_t>{2}}}));
  EXPECT_FALSE(cuda::columnSlice(b.g, b.g.value(rows).producer).has_value());     // cuts rows
  EXPECT_FALSE(cuda::columnSlice(b.g, b.g.value(strided).producer).has_value());  // step 2
}

TEST(CudaLookupSlices, TheLookupKernelWritesTheSlicesAndTheWholeOutputTakesNoBytes) {
  Graph g = lookupWithSlices(false, false);
  ASSERT_TRUE(verifyPlan(g, h200()).isOk()) << verifyPlan(g, h200()).message();
  auto p = cuda::lowerPlan(g, h200());
  ASSERT_TRUE(p.isOk()) << p.status().message();
  ASSERT_EQ(p->steps.size(), 2u);  // the lookup with its three slices, the relu
  const cuda::ProgramStep& s = p->steps[0];
  EXPECT_EQ(s.nodes.size(), 4u);
  EXPECT_EQ(s.writes.size(), 3u);
  EXPECT_NE(s.name.find("+3 column slices"), std::string::npos) << s.name;
  ValueId tbe = g.node(s.nodes[0]).outputs[0];
  EXPECT_EQ(std::count(s.writes.begin(), s.writes.end(), tbe), 0);
  SymbolBindings b;
  b.values = {0, 64};
  auto a = cuda::planArena(g, *p, b);
  ASSERT_TRUE(a.isOk()) << a.status().message();
  EXPECT_FALSE(a->inArena[static_cast<size_t>(tbe)]);
  for (ValueId w : s.writes) EXPECT_TRUE(a->inArena[static_cast<size_t>(w)]);
  // [0, 4) and [8, 12) take whole float4s of the pooled row; [2, 9) is
  // stored element by element inside its window.
  EXPECT_NE(p->moduleSource.find("if (col >= 8LL && col < 12LL) *reinterpret_cast<float4*>"), std::string::npos)
      << p->moduleSource;
  EXPECT_NE(p->moduleSource.find("if (cq >= 2LL && cq < 9LL)"), std::string::npos);
  cuda::NvrtcOptions o;
  o.useCache = false;
  auto m = cuda::compileModule(p->moduleSource, o);
  ASSERT_TRUE(m.isOk()) << m.status().message();
  EXPECT_NE(m->ptx.find("st.global.v4.f32"), std::string::npos);
}

TEST(CudaLookupSlices, OtherReadersOrAGraphOutputKeepTheCopies) {
  for (auto [extra, output] : {std::pair{true, false}, std::pair{false, true}}) {
    Graph g = lookupWithSlices(extra, output);
    auto p = cuda::lowerPlan(g, h200());
    ASSERT_TRUE(p.isOk()) << p.status().message();
    const cuda::ProgramStep* lookup = stepOf(*p, g, "tbe");
    ASSERT_NE(lookup, nullptr);
    EXPECT_EQ(lookup->nodes.size(), 1u) << "extra " << extra << " output " << output;
    EXPECT_NE(stepOf(*p, g, "s1"), lookup);
  }
}

// DeepFM and xDeepFM cut their embeddings and first-order weights out of
// one batched lookup; Wide&Deep its wide and deep columns. Greedy's H200
// plans, padded and lowered as the backend does: no slice runs a kernel of
// its own and the batched output is never stored.
TEST(CudaLookupSlices, ZooLookupsWriteTheirSlicesDirectly) {
  for (const char* model : {"deepfm", "xdeepfm", "wide_deep"}) {
    auto policy = makePolicy("greedy");
    EnvConfig cfg;
    cfg.batch = 4096;
    auto r = optimize(rwtest::zoo(model), h200(), **policy, cfg);
    ASSERT_TRUE(r.isOk()) << model << ": " << r.status().message();
    auto plan = padGemmDims(r->plan, h200().hw.matrixUnit.alignElements);
    ASSERT_TRUE(plan.isOk()) << model << ": " << plan.status().message();
    auto p = cuda::lowerPlan(*plan, h200());
    ASSERT_TRUE(p.isOk()) << model << ": " << p.status().message();
    int merged = 0;
    for (const auto& s : p->steps) {
      bool lone = s.nodes.size() == 1 && plan->node(s.nodes[0]).op == OpKind::kSlice;
      EXPECT_FALSE(lone && cuda::columnSlice(*plan, s.nodes[0]) &&
                   plan->node(plan->value(plan->node(s.nodes[0]).inputs[0]).producer).op == OpKind::kEmbeddingBags)
          << model << ": " << s.name;
      if (s.name.find("+2 column slices") != std::string::npos) ++merged;
    }
    EXPECT_EQ(merged, 1) << model;
  }
}

TEST(CudaLookupSlicesGpu, SlicesWrittenByTheLookupMatchTheReference) {
  std::string why;
  auto backend = cudatest::gpuOrSkip(why);
  if (!backend) GTEST_SKIP() << why;
  Graph g = lookupWithSlices(false, false);
  auto exe = backend->compile(g);
  ASSERT_TRUE(exe.isOk()) << exe.status().message();
  for (int64_t batch : {1, 300}) {
    rectest::Inputs in{{"ids", rectest::randomIds({batch, 3}, 50, 7)}};
    for (int rep = 0; rep < 2; ++rep) {  // captured, then replayed
      auto got = (*exe)->run(in);
      ASSERT_TRUE(got.isOk()) << got.status().message();
      auto want = runReference(g, in);
      ASSERT_TRUE(want.isOk()) << want.status().message();
      ASSERT_EQ(got->size(), want->size());
      for (size_t i = 0; i < want->size(); ++i) {
        auto cmp = compareTensors((*got)[i], (*want)[i], 1e-6, 1e-6);
        EXPECT_TRUE(cmp.close) << "batch " << batch << " output " << i << ": " << cmp.message;
      }
    }
  }
}

}  // namespace
}  // namespace cagr

#endif  // CAGR_HAVE_CUDA
