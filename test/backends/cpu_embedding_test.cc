// The CPU backend's lookup step (src/backends/cpu/embedding_step.cc and
// rec_lookup / rec_tables / rec_tail): Gather, EmbeddingBag and EmbeddingBags
// in every form, tables stored in f32 / bf16 / f16 / int8 row-wise, fused
// elementwise tails, the groups it declines, and its errors — each compared
// with the reference executor, with the kernel report checked so a fallback
// to the reference kernels fails the test.
#include "backends/cpu/step.h"
#include "cpu_test_util.h"

namespace cagr {
namespace {

using rectest::attrs;
using rectest::Builder;
using rectest::expectKernel;
using rectest::ids;
using rectest::randomIds;
using rectest::runBoth;
using rectest::uniform;

const std::vector<Precision> kStorages = {Precision::kF32, Precision::kBF16, Precision::kF16, Precision::kInt8Rowwise};

std::string reducedLabel(const std::string& op, Precision p) {
  return p == Precision::kF32 ? op : op + "[" + precisionName(p) + "]";
}

TEST(CpuEmbeddingTest, GatherRowsInEveryStorage) {
  for (Precision p : kStorages) {
    Builder b;
    ValueId idx = b.input("ids", DType::kI64, {kBatch, 3});
    ValueId y = b.op(OpKind::kGather, {b.table("t", 50, 16, 1, p), idx}, "emb", attrs({{"axis", int64_t{0}}}));
    b.g.addOutput(y, "y");
    for (int64_t batch : {1, 5, 12000}) {
      Tensor in = randomIds({batch, 3}, 100, 3);
      for (int64_t i = 0; i < in.numel(); ++i) in.data<int64_t>()[i] -= 50;  // negative ids wrap
      expectKernel(runBoth(b.g, {{"ids", in}}), "own.embedding:" + reducedLabel("gather", p));
    }
  }
}

// Every mode, storage and width: 16 / 32 / 64 take the vector-register
// path, 24 and 1 the element loop.
TEST(CpuEmbeddingTest, EmbeddingBagFixedPoolingModes) {
  for (const char* mode : {"sum", "mean", "max"}) {
    for (Precision p : kStorages) {
      for (int64_t dim : {1, 16, 24, 32, 64}) {
        Builder b;
        ValueId idx = b.input("ids", DType::kI64, {kBatch, 4});
        ValueId y = b.op(OpKind::kEmbeddingBag, {b.table("t", 30, dim, 2, p), idx}, "bag",
                         attrs({{"mode", std::string(mode)}}));
        b.g.addOutput(y, "y");
        auto report = runBoth(b.g, {{"ids", randomIds({37, 4}, 30, 4)}});
        expectKernel(report, "own.embedding:" + reducedLabel("embedding_bag", p));
      }
    }
  }
}

TEST(CpuEmbeddingTest, EmbeddingBagPerSampleWeights) {
  Builder b;
  ValueId idx = b.input("ids", DType::kI64, {kBatch, 3});
  ValueId w = b.input("w", DType::kF32, {kBatch, 3});
  ValueId y = b.op(OpKind::kEmbeddingBag, {b.table("t", 20, 16, 5, Precision::kInt8Rowwise), idx, kNoValue, w}, "bag");
  b.g.addOutput(y, "y");
  auto report = runBoth(b.g, {{"ids", randomIds({9, 3}, 20, 6)}, {"w", uniform({9, 3}, 7)}});
  expectKernel(report, "own.embedding:embedding_bag[int8_rowwise]");
}

// Offsets form: empty bags, ids before offsets[0] in no bag, and
// include_last_offset (ids after the last offset unused).
TEST(CpuEmbeddingTest, EmbeddingBagOffsets) {
  for (const char* mode : {"sum", "mean", "max"}) {
    Builder b;
    int len = b.g.addSymbol("L");
    ValueId idx = b.input("ids", DType::kI64, {symDim(len)});
    ValueId off = b.input("off", DType::kI64, {kBatch});
    ValueId t = b.table("t", 12, 16, 8, Precision::kF16);
    b.g.addOutput(b.op(OpKind::kEmbeddingBag, {t, idx, off}, "bag", attrs({{"mode", std::string(mode)}})), "y");
    ValueId off5 = b.input("off5", DType::kI64, {5});
    b.g.addOutput(b.op(OpKind::kEmbeddingBag, {t, idx, off5}, "bag_last",
                       attrs({{"mode", std::string(mode)}, {"include_last_offset", int64_t{1}}})),
                  "z");
    Tensor in = ids({10}, {3, 11, 0, 5, 5, 7, 1, 2, 9, 4});
    auto report = runBoth(b.g, {{"ids", in}, {"off", ids({4}, {2, 2, 5, 9})}, {"off5", ids({5}, {0, 3, 3, 7, 8})}});
    expectKernel(report, "own.embedding:embedding_bag[f16]");
  }
}

// i32 ids and offsets read as i64 ones.
TEST(CpuEmbeddingTest, Int32IdsAndOffsets) {
  Builder b;
  int len = b.g.addSymbol("L");
  ValueId idx = b.input("ids", DType::kI32, {symDim(len)});
  ValueId off = b.input("off", DType::kI32, {kBatch});
  ValueId t = b.table("t", 12, 16, 9, Precision::kBF16);
  b.g.addOutput(b.op(OpKind::kEmbeddingBag, {t, idx, off}, "bag"), "y");
  b.g.addOutput(b.op(OpKind::kGather, {t, idx}, "emb"), "z");
  Tensor in = ids({6}, {3, 11, 0, 5, 2, 7}).cast(DType::kI32);
  Tensor offsets = ids({3}, {0, 1, 4}).cast(DType::kI32);
  auto report = runBoth(b.g, {{"ids", in}, {"off", offsets}});
  expectKernel(report, "own.embedding:embedding_bag[bf16]");
  expectKernel(report, "own.embedding:gather[bf16]");
}

// Three tables over two id slots (table 2 reads slot 0 again), widths
// 16 + 8 + 4 and three storages in one kernel. Ids are [N, 2] (pooling 0),
// [N, 2, pooling], or multi-hot [2, L] with offsets [2, N] (pooling < 0).
Builder tableBatched(int64_t pooling, const std::string& mode) {
  Builder b;
  std::vector<ValueId> in = {b.table("t0", 40, 16, 11), b.table("t1", 25, 8, 12, Precision::kInt8Rowwise),
                             b.table("t2", 40, 4, 13, Precision::kBF16)};
  if (pooling < 0) {
    in.push_back(b.input("ids", DType::kI64, {2, symDim(b.g.addSymbol("L"))}));
    in.push_back(b.input("off", DType::kI64, {2, kBatch}));
  } else {
    in.push_back(
        b.input("ids", DType::kI64, pooling == 0 ? std::vector<Dim>{kBatch, 2} : std::vector<Dim>{kBatch, 2, pooling}));
  }
  Attrs a = attrs({{"num_tables", int64_t{3}}, {"mode", mode}, {"slots", std::vector<int64_t>{0, 1, 0}}});
  b.g.addOutput(b.op(OpKind::kEmbeddingBags, in, "tbe", a), "y");
  return b;
}

TEST(CpuEmbeddingTest, EmbeddingBagsFixedPooling) {
  Builder one = tableBatched(0, "sum");
  Builder pooled = tableBatched(3, "mean");
  for (int64_t batch : {1, 600}) {
    expectKernel(runBoth(one.g, {{"ids", randomIds({batch, 2}, 25, 14)}}),
                 "own.embedding:embedding_bags[bf16,int8_rowwise]");
    expectKernel(runBoth(pooled.g, {{"ids", randomIds({batch, 2, 3}, 25, 15)}}), "own.embedding:embedding_bags");
  }
}

TEST(CpuEmbeddingTest, EmbeddingBagsMultiHot) {
  for (const char* mode : {"sum", "max"}) {
    Builder m = tableBatched(-1, mode);
    // Slot 0: bags [0,2) [2,2) [2,5) [5,6); slot 1: [1,3) [3,6) [6,6) [6,6).
    auto report = runBoth(m.g, {{"ids", randomIds({2, 6}, 25, 16)}, {"off", ids({2, 4}, {0, 2, 2, 5, 1, 3, 6, 6})}});
    expectKernel(report, "own.embedding:embedding_bags");
  }
}

// bag -> relu -> mul [D] -> batch_norm -> sub (constant first) -> reshape in
// one kernel; the bag itself is a graph output too.
TEST(CpuEmbeddingTest, ElementwiseTailRunsInTheKernel) {
  Builder b;
  ValueId idx = b.input("ids", DType::kI64, {kBatch, 2});
  ValueId bag = b.op(OpKind::kEmbeddingBag, {b.table("t", 30, 16, 20), idx}, "bag");
  ValueId r = b.op(OpKind::kRelu, {bag}, "relu");
  ValueId m = b.op(OpKind::kMul, {r, b.g.addConstant("scale", uniform({16}, 21))}, "mul");
  std::vector<ValueId> bn = {m};
  for (unsigned s = 0; s < 4; ++s)
    bn.push_back(b.g.addConstant("bn" + std::to_string(s), uniform({16}, 22 + s, 0.5f, 1.5f)));
  ValueId n = b.op(OpKind::kBatchNorm, bn, "bn");
  ValueId d = b.op(OpKind::kSub, {b.g.addConstant("one", uniform({1}, 26)), n}, "sub");
  ValueId y = b.op(OpKind::kReshape, {d}, "view", attrs({{"shape", std::vector<int64_t>{-1, 4, 4}}}));
  b.g.addOutput(bag, "bag");
  b.g.addOutput(y, "y");
  b.group({"bag", "relu", "mul", "bn", "sub", "view"}, 0, "own.embedding");
  for (int64_t batch : {1, 25000}) {
    auto report = runBoth(b.g, {{"ids", randomIds({batch, 2}, 30, 27)}});
    EXPECT_EQ(report.size(), 1u);
    expectKernel(report, "own.embedding:embedding_bag+relu+mul+batch_norm+sub");
  }
}

// Every tail op, and binary ops with the constant on either side.
TEST(CpuEmbeddingTest, EveryTailOp) {
  struct Case {
    OpKind op;
    Attrs a;
    int constant;  // -1: unary; 0 / 1: operand index of the [D] constant
  };
  std::vector<Case> cases = {{OpKind::kSigmoid, {}, -1},
                             {OpKind::kTanh, {}, -1},
                             {OpKind::kExp, {}, -1},
                             {OpKind::kNeg, {}, -1},
                             {OpKind::kAbs, {}, -1},
                             {OpKind::kLeakyRelu, attrs({{"alpha", 0.2}}), -1},
                             {OpKind::kClip, attrs({{"min", -0.3}, {"max", 0.4}}), -1}};
  for (OpKind k : {OpKind::kAdd, OpKind::kSub, OpKind::kDiv, OpKind::kMax, OpKind::kMin}) {
    cases.push_back({k, {}, 0});
    cases.push_back({k, {}, 1});
  }
  for (const Case& c : cases) {
    Builder b;
    ValueId bag =
        b.op(OpKind::kEmbeddingBag, {b.table("t", 30, 16, 60), b.input("ids", DType::kI64, {kBatch, 2})}, "bag");
    std::vector<ValueId> in = {bag};
    if (c.constant >= 0) {
      ValueId k = b.g.addConstant("k", uniform({16}, 61, 0.5f, 1.5f));
      in.insert(in.begin() + c.constant, k);
    }
    b.g.addOutput(b.op(c.op, in, "tail", c.a), "y");
    b.group({"bag", "tail"}, 0);
    std::string name = opInfo(c.op).mnemonic;
    expectKernel(runBoth(b.g, {{"ids", randomIds({40, 2}, 30, 62)}}), "own.embedding:embedding_bag+" + name);
  }
}

// Values stored in bf16 inside the group are rounded where they are produced.
TEST(CpuEmbeddingTest, TailRoundsReducedStorage) {
  Builder b;
  ValueId idx = b.input("ids", DType::kI64, {kBatch});
  ValueId g = b.op(OpKind::kGather, {b.table("t", 30, 8, 30), idx}, "emb");
  ValueId y = b.op(OpKind::kAdd, {g, b.g.addConstant("bias", uniform({1, 8}, 31))}, "add");
  b.g.mutableValue(g).mir.storage = Precision::kBF16;
  b.g.mutableValue(y).mir.storage = Precision::kF16;
  b.g.addOutput(y, "y");
  b.group({"emb", "add"}, 0);
  expectKernel(runBoth(b.g, {{"ids", randomIds({15}, 30, 32)}}, 2e-3), "own.embedding:gather+add");
}

std::vector<ValueId> outputsOf(const Graph& g, const std::vector<NodeId>& members) {
  std::vector<ValueId> out;
  for (NodeId m : members) out.push_back(g.node(m).outputs[0]);
  return out;
}

// Selecting an id column from int data is not a lookup; a tail with a
// non-constant operand is not a chain this kernel runs. Both are declined
// (kUnsupported), and the backend still matches the reference.
TEST(CpuEmbeddingTest, DeclinesOtherGathersAndTails) {
  Builder b;
  ValueId sparse = b.input("sparse", DType::kI64, {kBatch, 3});
  ValueId col = b.g.addConstant("col", ids({}, {1}));
  ValueId ids1 = b.op(OpKind::kGather, {sparse, col}, "select", attrs({{"axis", int64_t{1}}}));
  ValueId bag = b.op(OpKind::kGather, {b.table("t", 10, 16, 40), ids1}, "emb");
  ValueId dense = b.input("dense", DType::kF32, {kBatch, 16});
  b.g.addOutput(b.op(OpKind::kAdd, {bag, dense}, "add"), "y");
  b.group({"emb", "add"}, 0);
  Target t = *resolveTarget("x86-64");
  for (const std::vector<NodeId>& members : {std::vector<NodeId>{0}, std::vector<NodeId>{1, 2}}) {
    cpu::StepRequest r{b.g, members, *classifyGroup(b.g, members), 0, outputsOf(b.g, {members.back()}), t.hw};
    auto step = cpu::makeEmbeddingStep(r);
    EXPECT_EQ(step.status().code(), ErrorCode::kUnsupported) << b.g.node(members[0]).name;
  }
  runBoth(b.g, {{"sparse", randomIds({6, 3}, 10, 41)}, {"dense", uniform({6, 16}, 42)}});
}

TEST(CpuEmbeddingTest, BadIdsAndOffsetsNameTheNode) {
  Builder b;
  ValueId idx = b.input("ids", DType::kI64, {kBatch, 2});
  ValueId off = b.input("off", DType::kI64, {kBatch});
  ValueId flat = b.input("flat", DType::kI64, {4});
  ValueId t = b.table("t", 10, 16, 50);
  b.g.addOutput(b.op(OpKind::kEmbeddingBag, {t, idx}, "fixed_bag"), "a");
  b.g.addOutput(b.op(OpKind::kEmbeddingBag, {t, flat, off}, "offset_bag"), "b");
  auto run = [&](Tensor fixed, Tensor offsets) {
    return rectest::cpuRunError(b.g, {{"ids", fixed}, {"off", offsets}, {"flat", ids({4}, {0, 1, 2, 3})}}).message();
  };
  std::string bad = run(ids({2, 2}, {1, 2, 3, 10}), ids({2}, {0, 2}));
  EXPECT_NE(bad.find("'fixed_bag'"), std::string::npos) << bad;
  EXPECT_NE(bad.find("indices[3] = 10 (bag 1) is out of range [0, 9]"), std::string::npos) << bad;
  std::string offsets = run(ids({2, 2}, {1, 2, 3, 4}), ids({2}, {3, 1}));
  EXPECT_NE(offsets.find("'offset_bag'"), std::string::npos) << offsets;
  EXPECT_NE(offsets.find("non-decreasing"), std::string::npos) << offsets;
}

}  // namespace
}  // namespace cagr
