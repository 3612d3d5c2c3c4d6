// The CPU backend's rec steps (src/backends/cpu/rec_step.cc, rec_fused.cc,
// rec_kernels.cc): Interaction, FM and CIN alone, the fused lookups +
// concat + interaction / FM kernels fuse_interaction builds (with reduced
// tables, member values written out, bad ids), each compared with the
// reference executor, with the kernel report checked so a fallback to the
// reference kernels fails the test.
#include "../rewrite/rewrite_test_util.h"
#include "cpu_test_util.h"

namespace cagr {
namespace {

using rectest::attrs;
using rectest::Builder;
using rectest::expectKernel;
using rectest::randomIds;
using rectest::runBoth;
using rectest::uniform;

TEST(CpuRecTest, InteractionAlone) {
  for (int64_t self : {0, 1}) {
    for (int64_t fields : {5, 27}) {
      Builder b;
      ValueId x = b.input("x", DType::kF32, {kBatch, fields, 16});
      b.g.addOutput(b.op(OpKind::kInteraction, {x}, "dot", attrs({{"self_interaction", self}})), "y");
      for (int64_t batch : {1, 333, 2000})
        expectKernel(runBoth(b.g, {{"x", uniform({batch, fields, 16}, 1)}}), "own.interaction");
    }
  }
}

// Odd dims and field counts (the 16-lane column blocks and 8-row groups of
// the kernel end mid-block), one field with self-interaction, odd batches.
TEST(CpuRecTest, InteractionBlockEdges) {
  for (int64_t self : {0, 1}) {
    for (auto [fields, dim] : {std::pair<int64_t, int64_t>{1, 16}, {2, 7}, {17, 3}, {9, 33}, {27, 16}}) {
      if (fields == 1 && self == 0) continue;  // no pairs
      Builder b;
      ValueId x = b.input("x", DType::kF32, {kBatch, fields, dim});
      b.g.addOutput(b.op(OpKind::kInteraction, {x}, "dot", attrs({{"self_interaction", self}})), "y");
      for (int64_t batch : {15, 16, 17, 48, 67})
        expectKernel(runBoth(b.g, {{"x", uniform({batch, fields, dim}, 7)}}), "own.interaction");
    }
  }
}

TEST(CpuRecTest, FmAlone) {
  for (int64_t reduce : {0, 1}) {
    for (int64_t dim : {16, 70}) {
      Builder b;
      ValueId x = b.input("x", DType::kF32, {kBatch, 6, dim});
      b.g.addOutput(b.op(OpKind::kFM, {x}, "fm", attrs({{"reduce", reduce}})), "y");
      for (int64_t batch : {1, 257}) expectKernel(runBoth(b.g, {{"x", uniform({batch, 6, dim}, 2)}}), "own.fm");
    }
  }
}

// A CIN layer: constant (bf16-stored) or run-time weights, with and without
// bias, batch 1, a partial tile and several tiles over two threads.
TEST(CpuRecTest, CinLayer) {
  for (Precision storage : {Precision::kF32, Precision::kBF16}) {
    for (bool bias : {false, true}) {
      Builder b;
      ValueId xk = b.input("xk", DType::kF32, {kBatch, 7, 16});
      ValueId x0 = b.input("x0", DType::kF32, {kBatch, 5, 16});
      ValueId w = b.table("w", 9, 35, 3, storage);
      std::vector<ValueId> in = {xk, x0, w};
      if (bias) in.push_back(b.input("bias", DType::kF32, {9}));
      b.g.addOutput(b.op(OpKind::kCIN, in, "cin"), "y");
      for (int64_t batch : {1, 21, 130}) {
        rectest::Inputs inputs = {{"xk", uniform({batch, 7, 16}, 4)}, {"x0", uniform({batch, 5, 16}, 5)}};
        if (bias) inputs.emplace_back("bias", uniform({9}, 6));
        expectKernel(runBoth(b.g, inputs, 1e-4), "own.cin");
      }
    }
  }
}

TEST(CpuRecTest, CinWithRuntimeWeights) {
  Builder b;
  ValueId x0 = b.input("x0", DType::kF32, {kBatch, 3, 8});
  ValueId w = b.input("w", DType::kF32, {4, 9});
  b.g.addOutput(b.op(OpKind::kCIN, {x0, x0, w}, "cin"), "y");
  expectKernel(runBoth(b.g, {{"x0", uniform({50, 3, 8}, 7)}, {"w", uniform({4, 9}, 8)}}, 1e-4), "own.cin");
}

// DLRM-like: bottom Gemm, three EmbeddingBags (one int8, one f16), concat
// with the dense vector, reshape, interaction, concat with the dense vector;
// fuse_interaction makes the lookups .. join one own.interaction kernel.
Graph dlrmLike() {
  Builder b;
  ValueId dense = b.input("dense", DType::kF32, {kBatch, 4});
  ValueId bottom = b.op(OpKind::kGemm, {dense, b.g.addConstant("wb", uniform({4, 4}, 10))}, "bottom",
                        attrs({{"transB", int64_t{1}}}));
  std::vector<ValueId> stack = {bottom};
  const Precision storages[] = {Precision::kF32, Precision::kInt8Rowwise, Precision::kF16};
  for (int t = 0; t < 3; ++t) {
    std::string k = std::to_string(t);
    ValueId idx = b.input("ids" + k, DType::kI64, {kBatch, 2});
    stack.push_back(b.op(OpKind::kEmbeddingBag, {b.table("t" + k, 10, 4, 11 + t, storages[t]), idx}, "bag" + k));
  }
  ValueId cat = b.op(OpKind::kConcat, stack, "stack", attrs({{"axis", int64_t{1}}}));
  ValueId view = b.op(OpKind::kReshape, {cat}, "view", attrs({{"shape", std::vector<int64_t>{0, -1, 4}}}));
  ValueId dot = b.op(OpKind::kInteraction, {view}, "interact");
  ValueId join = b.op(OpKind::kConcat, {bottom, dot}, "join", attrs({{"axis", int64_t{1}}}));
  b.g.addOutput(
      b.op(OpKind::kGemm, {join, b.g.addConstant("wt", uniform({1, 10}, 14))}, "top", attrs({{"transB", int64_t{1}}})),
      "y");
  return b.g;
}

rectest::Inputs dlrmInputs(int64_t batch, int64_t idBound = 10) {
  rectest::Inputs in = {{"dense", uniform({batch, 4}, 20)}};
  for (int t = 0; t < 3; ++t) in.emplace_back("ids" + std::to_string(t), randomIds({batch, 2}, idBound, 21 + t));
  return in;
}

TEST(CpuRecTest, FusedInteractionGroup) {
  Graph g = dlrmLike();
  ASSERT_EQ(rwtest::applyAll(g, rwtest::target("x86-64"), ActionKind::kFuseInteraction), 1);
  for (int64_t batch : {1, 100, 5000}) {
    expectKernel(runBoth(g, dlrmInputs(batch)),
                 "own.interaction+3xembedding_bag,embedding_bag[f16],embedding_bag[int8_rowwise]+concat");
  }
}

// The same group, hand-made so that member values leave it: the stacked
// embeddings, one bag and the interaction are graph outputs too, written
// by the kernel.
TEST(CpuRecTest, FusedGroupWritesMemberValues) {
  Graph g = dlrmLike();
  for (Node& n : g.mutableNodes()) {
    if (n.op != OpKind::kGemm) n.mir.group = 0;
  }
  for (const Node& n : g.nodes()) {
    if (n.name == "stack" || n.name == "bag1" || n.name == "interact") g.addOutput(n.outputs[0], n.name);
  }
  g.mutableValue(g.nodes()[1].outputs[0]).mir.storage = Precision::kBF16;  // bag0's output
  auto report = runBoth(g, dlrmInputs(300), 1e-2);
  expectKernel(report, "own.interaction+3x");
}

// Gathers -> unsqueeze -> concat -> FM, fused by fuse_interaction.
TEST(CpuRecTest, FusedFmGroup) {
  Builder b;
  std::vector<ValueId> stack;
  for (int t = 0; t < 3; ++t) {
    std::string k = std::to_string(t);
    ValueId idx = b.input("ids" + k, DType::kI64, {kBatch});
    ValueId e = b.op(OpKind::kGather, {b.table("t" + k, 10, 4, 30 + t, Precision::kBF16), idx}, "emb" + k);
    stack.push_back(b.op(OpKind::kUnsqueeze, {e}, "u" + k, attrs({{"axes", std::vector<int64_t>{1}}})));
  }
  ValueId cat = b.op(OpKind::kConcat, stack, "stack", attrs({{"axis", int64_t{1}}}));
  b.g.addOutput(b.op(OpKind::kFM, {cat}, "fm"), "y");
  ASSERT_EQ(rwtest::applyAll(b.g, rwtest::target("x86-64"), ActionKind::kFuseInteraction), 1);
  for (int64_t batch : {1, 2000}) {
    rectest::Inputs in;
    for (int t = 0; t < 3; ++t) in.emplace_back("ids" + std::to_string(t), randomIds({batch}, 10, 40 + t));
    expectKernel(runBoth(b.g, in), "own.fm+3xgather[bf16]");
  }
}

TEST(CpuRecTest, FusedGroupReportsBadIds) {
  Graph g = dlrmLike();
  rwtest::applyAll(g, rwtest::target("x86-64"), ActionKind::kFuseInteraction);
  std::string msg = rectest::cpuRunError(g, dlrmInputs(64, 11)).message();
  EXPECT_NE(msg.find("(EmbeddingBag)"), std::string::npos) << msg;
  EXPECT_NE(msg.find("is out of range [0, 9] for a table of 10 rows"), std::string::npos) << msg;
}

// The zoo's xDeepFM: three CIN layers on the stacked field embeddings.
TEST(CpuRecTest, XDeepFmCinLayers) {
  Graph g = rwtest::zoo("xdeepfm");
  auto report = runBoth(g, rwtest::zooInputs("xdeepfm", 7), 1e-4);
  EXPECT_EQ(std::count(report.begin(), report.end(), "own.cin"), 3);
}

}  // namespace
}  // namespace cagr
