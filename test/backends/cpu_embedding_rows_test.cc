// The CPU lookup step's row-copy path (rec_lookup.cc): an EmbeddingBags with
// one id per bag and table ([N, S] ids, f32 tables, no weights), as
// batch_embeddings makes of DeepFM's fields, copies each bag row's table rows
// in one pass over the batch. Widths with constant-size copies (1, 4, 8, 16,
// 32, 64) and others, tables sharing a slot, i64 and i32 ids, batches that
// run on one thread and on several; each compared with the reference
// executor. A bad id still names the node, the table and its slot. Lookups
// feeding an in-place concat (own.concat_inplace) write their rows straight
// into its buffer (through views of equal shape, planned in place or not);
// the concat copies only the other inputs.
#include <algorithm>

#include "backends/cpu/step.h"
#include "cpu_test_util.h"

namespace cagr {
namespace {

using rectest::attrs;
using rectest::Builder;
using rectest::expectKernel;
using rectest::randomIds;
using rectest::runBoth;

const std::vector<int64_t> kDims = {16, 1, 4, 5, 8, 32, 64, 3, 16, 1};

// Ten tables over four id slots of [N, 4] ids (table t reads slot t % 4).
Builder rowCopies(DType idType) {
  Builder b;
  std::vector<ValueId> in;
  std::vector<int64_t> slots;
  for (size_t t = 0; t < kDims.size(); ++t) {
    in.push_back(b.table("t" + std::to_string(t), 20 + static_cast<int64_t>(t), kDims[t], 60 + static_cast<unsigned>(t)));
    slots.push_back(static_cast<int64_t>(t % 4));
  }
  in.push_back(b.input("ids", idType, {kBatch, 4}));
  Attrs a = attrs({{"num_tables", static_cast<int64_t>(kDims.size())}, {"mode", std::string("sum")}, {"slots", slots}});
  b.g.addOutput(b.op(OpKind::kEmbeddingBags, in, "tbe", a), "y");
  return b;
}

Tensor asI32(const Tensor& t) {
  Tensor out(DType::kI32, t.shape());
  for (int64_t i = 0; i < t.numel(); ++i) out.data<int32_t>()[i] = static_cast<int32_t>(t.data<int64_t>()[i]);
  return out;
}

TEST(CpuEmbeddingRows, EveryWidthSlotAndIdType) {
  for (DType idType : {DType::kI64, DType::kI32}) {
    Builder b = rowCopies(idType);
    for (int64_t batch : {1, 7, 600, 20000}) {
      Tensor in = randomIds({batch, 4}, 20, 70 + static_cast<unsigned>(batch));
      auto report = runBoth(b.g, {{"ids", idType == DType::kI32 ? asI32(in) : in}});
      expectKernel(report, "own.embedding:embedding_bags");
    }
  }
}

TEST(CpuEmbeddingRows, BadIdNamesTheNodeTableAndSlot) {
  Builder b = rowCopies(DType::kI64);
  for (int64_t batch : {3, 20000}) {
    Tensor in = randomIds({batch, 4}, 20, 80);
    in.data<int64_t>()[(batch - 1) * 4 + 2] = 21;  // last bag, slot 2: table 2 (22 rows) takes it, table 6 (26) too
    in.data<int64_t>()[(batch - 1) * 4 + 3] = -1;  // slot 3: no table takes a negative id
    std::string msg = rectest::cpuRunError(b.g, {{"ids", in}}).message();
    EXPECT_NE(msg.find("'tbe'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("table 3 (slot 3)"), std::string::npos) << msg;
    EXPECT_NE(msg.find("= -1 (bag " + std::to_string(batch - 1) + ")"), std::string::npos) << msg;
  }
}

// dense | gather | embedding_bags | gather+relu | gather (also an output),
// concatenated in place along the last axis: the plain gather and the bags
// write into the concat; the dense input, the lookup with a tail and the
// lookup that is a graph output are copied.
TEST(CpuEmbeddingRows, LookupsWriteIntoAnInPlaceConcat) {
  Builder b;
  ValueId dense = b.input("dense", DType::kF32, {kBatch, 3});
  ValueId idx = b.input("ids", DType::kI64, {kBatch, 2});
  ValueId col0 = b.g.addConstant("col0", rectest::ids({}, {0}));
  ValueId sel = b.op(OpKind::kGather, {idx, col0}, "select", attrs({{"axis", int64_t{1}}}));
  ValueId g0 = b.op(OpKind::kGather, {b.table("t0", 20, 16, 90), sel}, "gather0");
  Attrs bags = attrs({{"num_tables", int64_t{2}}, {"mode", std::string("sum")}});
  ValueId tbe = b.op(OpKind::kEmbeddingBags, {b.table("t1", 20, 4, 91), b.table("t2", 20, 1, 92), idx}, "tbe", bags);
  ValueId g1 = b.op(OpKind::kGather, {b.table("t3", 20, 8, 93), sel}, "gather1");
  ValueId r1 = b.op(OpKind::kRelu, {g1}, "relu");
  ValueId g2 = b.op(OpKind::kGather, {b.table("t4", 20, 2, 94), sel}, "gather2");
  ValueId cat = b.op(OpKind::kConcat, {dense, g0, tbe, r1, g2}, "cat", attrs({{"axis", int64_t{1}}}));
  b.g.addOutput(cat, "z");
  b.g.addOutput(g2, "g2");
  b.group({"gather1", "relu"}, 0, "own.embedding");
  b.group({"cat"}, -1, "own.concat_inplace");
  for (int64_t batch : {1, 300, 20000}) {
    auto report = runBoth(b.g, {{"dense", rectest::uniform({batch, 3}, 95)}, {"ids", randomIds({batch, 2}, 20, 96)}});
    auto count = [&](const std::string& k) { return std::count(report.begin(), report.end(), k); };
    EXPECT_EQ(count("own.embedding:gather(into concat)"), 1);
    EXPECT_EQ(count("own.embedding:embedding_bags(into concat)"), 1);
    EXPECT_EQ(count("own.embedding:gather+relu"), 1);
    EXPECT_EQ(count("own.embedding:gather"), 1);
    EXPECT_EQ(count("own.concat_inplace(copy 3 of 5)"), 1);
  }
}

// DCN-v2's front after batch_embeddings: concat(dense, reshape(reshape(bags)))
// as a plain concat — the bags write through the views into it; a second
// concat of a lookup whose view is also read elsewhere copies it.
TEST(CpuEmbeddingRows, LookupsWriteThroughViewsIntoAPlainConcat) {
  Builder b;
  ValueId dense = b.input("dense", DType::kF32, {kBatch, 3});
  ValueId idx = b.input("ids", DType::kI64, {kBatch, 2});
  Attrs bags = attrs({{"num_tables", int64_t{2}}, {"mode", std::string("sum")}});
  ValueId tbe = b.op(OpKind::kEmbeddingBags, {b.table("t1", 20, 4, 97), b.table("t2", 20, 4, 98), idx}, "tbe", bags);
  ValueId v1 = b.op(OpKind::kReshape, {tbe}, "stack", attrs({{"shape", std::vector<int64_t>{0, 2, 4}}}));
  ValueId v2 = b.op(OpKind::kReshape, {v1}, "flat", attrs({{"shape", std::vector<int64_t>{-1, 8}}}));
  b.g.addOutput(b.op(OpKind::kConcat, {dense, v2}, "cat", attrs({{"axis", int64_t{1}}})), "z");
  ValueId other = b.op(OpKind::kEmbeddingBags, {b.table("t3", 20, 4, 99), b.table("t4", 20, 2, 100), idx}, "tbe2", bags);
  ValueId view = b.op(OpKind::kReshape, {other}, "view", attrs({{"shape", std::vector<int64_t>{-1, 6}}}));
  b.g.addOutput(b.op(OpKind::kConcat, {view, dense}, "cat2", attrs({{"axis", int64_t{1}}})), "z2");
  b.g.addOutput(b.op(OpKind::kRelu, {view}, "relu"), "r");
  for (int64_t batch : {1, 300, 20000}) {
    auto report = runBoth(b.g, {{"dense", rectest::uniform({batch, 3}, 101)}, {"ids", randomIds({batch, 2}, 20, 102)}});
    auto count = [&](const std::string& k) { return std::count(report.begin(), report.end(), k); };
    EXPECT_EQ(count("own.embedding:embedding_bags(into concat)"), 1);
    EXPECT_EQ(count("own.embedding:embedding_bags"), 1);
    EXPECT_EQ(count("own.movement:concat(copy 1 of 2)"), 1);
    EXPECT_EQ(count("own.movement:concat"), 1);
  }
}

}  // namespace
}  // namespace cagr
