// The CUDA backend. Without a GPU (CI): which groups become cuBLASLt /
// cuBLAS calls and with which epilogue, the column-major call of every
// GEMM form checked by emulating cuBLAS's definition on the host against
// the reference executor, the device weight formats, the step list,
// streams and the arena plan across streams, and a clean failure without a
// device. With a GPU: small plans compiled and run against the reference
// (the zoo runs in conformance_test.cc). GPU tests skip with the reason.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "../rewrite/rewrite_test_util.h"
#include "backends/cpu_test_util.h"
#include "backends/cuda_test_util.h"
#include "cagr/backend.h"
#include "cagr/policy.h"
#include "cagr/reference.h"

#ifdef CAGR_HAVE_CUDA
#include "backends/cuda/cuda_program.h"
#include "backends/cuda/cuda_timing.h"
#include "backends/cuda/cuda_weights.h"
#include "ir/graph_queries.h"
#include "runtime/reference/precision.h"
#endif

namespace cagr {
namespace {

using rectest::attrs;
using rectest::Builder;
using rectest::uniform;

#ifdef CAGR_HAVE_CUDA
using cuda::Activation;
using cuda::ColumnMajorGemm;
using cuda::GemmLibrary;
using cuda::LibraryGemm;

std::vector<NodeId> allNodes(const Graph& g) {
  std::vector<NodeId> m;
  for (size_t i = 0; i < g.nodes().size(); ++i) m.push_back(static_cast<NodeId>(i));
  return m;
}

StatusOr<LibraryGemm> planAll(const Graph& g, GemmLibrary lib = GemmLibrary::kCublasLt, int64_t align = 8) {
  std::vector<NodeId> m = allNodes(g);
  return cuda::planLibraryGemm(g, valueUses(g), m, m.front(), lib, align);
}

// D = act(alpha * op(A) op(B) + beta * C + bias) for column-major operands,
// as cuBLAS / cuBLASLt define the call (bias indexed by row of D).
std::vector<float> emulate(const ColumnMajorGemm& c, const LibraryGemm& p, const float* a, const float* b,
                           const float* bias, const float* addend) {
  std::vector<float> d(static_cast<size_t>(c.batch * c.m * c.n));
  for (int64_t bi = 0; bi < c.batch; ++bi) {
    for (int64_t j = 0; j < c.n; ++j) {
      for (int64_t i = 0; i < c.m; ++i) {
        double acc = 0;
        for (int64_t k = 0; k < c.k; ++k) {
          double x = a[bi * c.strideA + (c.transA ? k + i * c.lda : i + k * c.lda)];
          double y = b[bi * c.strideB + (c.transB ? j + k * c.ldb : k + j * c.ldb)];
          acc += x * y;
        }
        const int64_t at = bi * c.strideD + i + j * c.ldd;
        double v = p.alpha * acc + (addend != nullptr ? p.beta * addend[at] : 0.0) + (bias != nullptr ? bias[i] : 0.0);
        if (p.act == Activation::kRelu) v = std::max(v, 0.0);
        if (p.act == Activation::kGelu) v = 0.5 * v * (1 + std::tanh(0.7978845608028654 * (v + 0.044715 * v * v * v)));
        d[static_cast<size_t>(at)] = static_cast<float>(v);
      }
    }
  }
  return d;
}

// An operand as the library reads it: a constant in its device format, or
// the input tensor bound to it.
std::vector<float> operand(const Graph& g, ValueId v, int64_t pitch, const rectest::Inputs& in,
                           bool transposed = false) {
  if (g.isConstant(v)) {
    cuda::WeightFormat f{v, true, pitch, transposed};
    std::vector<float> out(cuda::weightBytes(g, f) / 4);
    EXPECT_TRUE(cuda::writeWeight(g, f, reinterpret_cast<std::byte*>(out.data())).isOk());
    return out;
  }
  for (const auto& [name, t] : in) {
    if (name == g.value(v).name) return {t.data<float>(), t.data<float>() + t.numel()};
  }
  ADD_FAILURE() << "no input " << g.value(v).name;
  return {};
}

// Plans the whole graph as one group, emulates the column-major call and
// compares it with the reference executor's output (the fused chain's end).
void expectCallMatchesReference(const Graph& g, const rectest::Inputs& in, const std::string& name) {
  auto p = planAll(g);
  ASSERT_TRUE(p.isOk()) << p.status().message();
  ASSERT_TRUE(p->rest.empty()) << "members left over";
  EXPECT_EQ(cuda::libraryGemmName(*p), name);
  ASSERT_EQ(g.outputs().size(), 1u);
  ASSERT_EQ(p->out, g.outputs()[0]);
  std::vector<std::vector<int64_t>> shapes;
  auto given = matchGraphInputs(g, in);
  ASSERT_TRUE(given.isOk());
  for (const Tensor& t : *given) shapes.push_back(t.shape());
  auto b = g.bindSymbols(shapes);
  ASSERT_TRUE(b.isOk());
  auto as = b->resolve(g.type(p->anchor.a).dims), bs = b->resolve(g.type(p->anchor.b).dims);
  auto s = cuda::gemmShape(*p, *as, *bs);
  ASSERT_TRUE(s.isOk()) << s.status().message();
  auto call = cuda::columnMajor(*s);
  ASSERT_TRUE(call.isOk()) << call.status().message();
  std::vector<float> a = operand(g, p->anchor.a, p->padA, in), bm = operand(g, p->anchor.b, p->padB, in, p->flipB);
  std::vector<float> bias = p->bias != kNoValue ? operand(g, p->bias, 0, in) : std::vector<float>{};
  std::vector<float> add = p->addend != kNoValue ? operand(g, p->addend, 0, in) : std::vector<float>{};
  // The call's A is the product's B.
  std::vector<float> d =
      emulate(*call, *p, bm.data(), a.data(), bias.empty() ? nullptr : bias.data(), add.empty() ? nullptr : add.data());
  auto want = runReference(g, in);
  ASSERT_TRUE(want.isOk()) << want.status().message();
  ASSERT_EQ(static_cast<int64_t>(d.size()), (*want)[0].numel());
  Tensor got(DType::kF32, (*want)[0].shape());
  std::memcpy(got.rawData(), d.data(), got.byteSize());
  auto cmp = compareTensors(got, (*want)[0], 1e-5, 1e-5);
  EXPECT_TRUE(cmp.close) << cmp.message;
}

TEST(CudaGemm, GemmWithBiasReluAndPaddedWeightIsOneCublasLtCall) {
  // fp32: the [10, 13] Linear weight goes up as its transpose [13, 10], rows
  // padded to 16; tf32: as it is, rows of 13 padded to 16.
  for (Precision math : {Precision::kF32, Precision::kTF32}) {
    Builder b;
    ValueId x = b.input("x", DType::kF32, {kBatch, 13});
    ValueId w = b.constant("w", {10, 13}, 1);
    b.g.mutableValue(w).mir.layout = Layout::kPadded;
    ValueId y = b.op(OpKind::kGemm, {x, w, b.constant("bias", {10}, 2)}, "fc", attrs({{"transB", int64_t{1}}}));
    b.g.addOutput(b.op(OpKind::kRelu, {y}, "relu"));
    for (Node& n : b.g.mutableNodes()) n.mir.math = math;
    auto p = planAll(b.g);
    ASSERT_TRUE(p.isOk());
    EXPECT_EQ(p->flipB, math == Precision::kF32);
    EXPECT_EQ(p->padB, 16);
    EXPECT_EQ(p->act, Activation::kRelu);
    if (math != Precision::kF32) continue;  // the emulation multiplies in f32
    expectCallMatchesReference(b.g, {{"x", uniform({5, 13}, 3)}}, "cublaslt.matmul+bias+relu");
    auto call = cuda::columnMajor(*cuda::gemmShape(*p, {5, 13}, {10, 13}));
    ASSERT_TRUE(call.isOk());
    EXPECT_FALSE(call->transA);  // the call reads the weight as it is stored
    EXPECT_EQ(call->lda, 16);
  }
}

TEST(CudaGemm, OneOutputColumnKeepsItsBias) {
  Builder b;
  ValueId x = b.input("x", DType::kF32, {kBatch, 6});
  b.g.addOutput(b.op(OpKind::kGemm, {x, b.constant("w", {1, 6}, 1), b.constant("bias", {1}, 2)}, "head",
                     attrs({{"transB", int64_t{1}}})));
  expectCallMatchesReference(b.g, {{"x", uniform({5, 6}, 3)}}, "cublaslt.matmul+bias");
}

TEST(CudaGemm, TransposedGemmWithScaledFullAddend) {
  Builder b;
  ValueId x = b.input("xt", DType::kF32, {6, kBatch});
  ValueId c = b.input("c", DType::kF32, {kBatch, 4});
  ValueId y = b.op(OpKind::kGemm, {x, b.constant("w", {6, 4}, 1), c}, "fc",
                   attrs({{"transA", int64_t{1}}, {"alpha", 2.0}, {"beta", 0.5}}));
  b.g.addOutput(y);
  expectCallMatchesReference(b.g, {{"xt", uniform({6, 5}, 3)}, {"c", uniform({5, 4}, 4)}}, "cublaslt.matmul+add");
}

TEST(CudaGemm, BatchedMatMulWithBiasAndTanhGelu) {
  Builder b;
  ValueId x = b.input("x", DType::kF32, {kBatch, 3, 4, 5});
  ValueId y = b.input("y", DType::kF32, {kBatch, 3, 5, 6});
  ValueId m = b.op(OpKind::kMatMul, {x, y}, "bmm");
  ValueId s = b.op(OpKind::kAdd, {b.constant("bias", {6}, 2), m}, "add");
  b.g.addOutput(b.op(OpKind::kGelu, {s}, "gelu", attrs({{"approximate", std::string("tanh")}})));
  expectCallMatchesReference(b.g, {{"x", uniform({5, 3, 4, 5}, 3)}, {"y", uniform({5, 3, 5, 6}, 4)}},
                             "cublaslt.matmul+bias+gelu_tanh");
}

TEST(CudaGemm, SharedWeightFoldsTheBatchIntoRowsAndViewsFuse) {
  Builder b;
  ValueId x = b.input("x", DType::kF32, {kBatch, 7, 5});
  ValueId m = b.op(OpKind::kMatMul, {x, b.constant("w", {5, 6}, 1)}, "mm");
  b.g.addOutput(b.op(OpKind::kReshape, {m}, "flat", attrs({{"shape", std::vector<int64_t>{0, 42}}})));
  expectCallMatchesReference(b.g, {{"x", uniform({5, 7, 5}, 3)}}, "cublaslt.matmul");
  auto p = planAll(b.g);
  auto s = cuda::gemmShape(*p, {5, 7, 5}, {5, 6});
  EXPECT_TRUE(s->batch.empty());
  EXPECT_EQ(s->m, 35);
}

TEST(CudaGemm, WeightTimesBatchedInputBroadcastsTheWeight) {
  Builder b;
  ValueId x = b.input("x", DType::kF32, {kBatch, 5, 3});
  b.g.addOutput(b.op(OpKind::kMatMul, {b.constant("w", {6, 5}, 1), x}, "mm"));
  expectCallMatchesReference(b.g, {{"x", uniform({4, 5, 3}, 3)}}, "cublaslt.matmul");
  auto s = cuda::gemmShape(*planAll(b.g), {6, 5}, {4, 5, 3});
  auto call = cuda::columnMajor(*s);
  EXPECT_EQ(call->batch, 4);
  EXPECT_EQ(call->strideB, 0);  // the call's B is the weight, shared by every batch
}

TEST(CudaGemm, Conv1x1WithoutBiasIsABatchedCall) {
  Builder b;
  ValueId x = b.input("x", DType::kF32, {kBatch, 4, 7});
  b.g.addOutput(b.op(OpKind::kConv1x1, {x, b.constant("w", {6, 4, 1}, 1)}, "conv"));
  expectCallMatchesReference(b.g, {{"x", uniform({3, 4, 7}, 3)}}, "cublaslt.matmul");
}

TEST(CudaGemm, EinsumContractionRunsOnTheLibrary) {
  Builder b;
  ValueId x = b.input("x", DType::kF32, {kBatch, 3, 4});
  ValueId y = b.input("y", DType::kF32, {kBatch, 4, 2});
  b.g.addOutput(b.op(OpKind::kEinsum, {x, y}, "ein", attrs({{"equation", std::string("bij,bjk->bik")}})));
  expectCallMatchesReference(b.g, {{"x", uniform({5, 3, 4}, 3)}, {"y", uniform({5, 4, 2}, 4)}}, "cublaslt.matmul");
}

TEST(CudaGemm, EpilogueStopsWhereCublasLtCannotGo) {
  Builder b;
  ValueId x = b.input("x", DType::kF32, {kBatch, 8});
  ValueId y = b.op(OpKind::kGemm, {x, b.constant("w", {8, 8}, 1), b.constant("bias", {8}, 2)}, "fc");
  ValueId g = b.op(OpKind::kGelu, {y}, "gelu_erf");  // exact GELU: not cuBLASLt's tanh form
  ValueId r = b.op(OpKind::kLeakyRelu, {g}, "lrelu");
  b.g.addOutput(b.op(OpKind::kAdd, {r, b.constant("c", {8}, 3)}, "add"));
  auto p = planAll(b.g);
  ASSERT_TRUE(p.isOk());
  EXPECT_EQ(cuda::libraryGemmName(*p), "cublaslt.matmul+bias");
  EXPECT_EQ(p->out, y);
  ASSERT_EQ(p->rest.size(), 1u);  // gelu -> lrelu -> add: one elementwise kernel
  EXPECT_EQ(p->rest[0].size(), 3u);
}

TEST(CudaGemm, AValueUsedTwiceEndsTheFusedChainAndBiasAfterActDoesNotFuse) {
  Builder b;
  ValueId x = b.input("x", DType::kF32, {kBatch, 8});
  ValueId m = b.op(OpKind::kMatMul, {x, b.constant("w", {8, 8}, 1)}, "mm");
  ValueId r = b.op(OpKind::kRelu, {m}, "relu");
  ValueId a = b.op(OpKind::kAdd, {r, b.constant("bias", {8}, 2)}, "add_after_relu");
  b.g.addOutput(a);
  b.g.addOutput(r);
  auto p = planAll(b.g);
  ASSERT_TRUE(p.isOk());
  EXPECT_EQ(p->out, r);  // relu fused, its output leaves the group
  EXPECT_EQ(cuda::libraryGemmName(*p), "cublaslt.matmul+relu");
  ASSERT_EQ(p->rest.size(), 1u);

  Builder c;
  ValueId x2 = c.input("x", DType::kF32, {kBatch, 8});
  ValueId m2 = c.op(OpKind::kMatMul, {x2, c.constant("w", {8, 8}, 1)}, "mm");
  ValueId r2 = c.op(OpKind::kRelu, {m2}, "relu");
  c.g.addOutput(c.op(OpKind::kMul, {m2, r2}, "mul"));  // the product feeds two members
  auto q = planAll(c.g);
  ASSERT_TRUE(q.isOk());
  EXPECT_EQ(q->out, m2);
  EXPECT_EQ(q->rest.size(), 1u);
}

TEST(CudaGemm, WhatTheLibrariesRefuse) {
  Builder b;
  ValueId x = b.input("x", DType::kF32, {kBatch, 4, 7});
  b.g.addOutput(b.op(OpKind::kConv1x1, {x, b.constant("w", {6, 4, 1}, 1), b.constant("b", {6}, 2)}, "conv"));
  auto conv = planAll(b.g);
  ASSERT_FALSE(conv.isOk());
  EXPECT_EQ(conv.status().code(), ErrorCode::kUnsupported);
  EXPECT_NE(conv.status().message().find("'conv'"), std::string::npos) << conv.status().message();

  Builder c;
  ValueId x2 = c.input("x", DType::kF32, {kBatch, 8});
  c.g.addOutput(c.op(OpKind::kGemm, {x2, c.constant("w", {8, 8}, 1), c.constant("bias", {8}, 2)}, "fc"));
  EXPECT_EQ(planAll(c.g, GemmLibrary::kCublas).status().code(), ErrorCode::kUnsupported);  // no epilogue in cuBLAS
  EXPECT_TRUE(planAll(c.g, GemmLibrary::kCublasLt).isOk());

  cpu::GemmShape s;  // batch dims that do not merge into one stride
  s.m = 2, s.n = 2, s.k = 2, s.ars = 2, s.brs = 2;
  s.batch = {{3, 100, 0}, {4, 7, 4}};
  EXPECT_FALSE(cuda::columnMajor(s).isOk());
}

TEST(CudaWeights, DeviceFormatsFollowTheCodegenContract) {
  Builder b;
  ValueId t = b.table("t", 3, 5, 7, Precision::kInt8Rowwise);
  ValueId h = b.table("h", 2, 3, 8, Precision::kBF16);
  const Tensor& tv = *b.g.constant(t);
  cuda::WeightFormat f{t, false, 0};
  ASSERT_EQ(cuda::weightBytes(b.g, f), 3 * cuda::int8RowStride(5));
  std::vector<std::byte> bytes(cuda::weightBytes(b.g, f));
  ASSERT_TRUE(cuda::writeWeight(b.g, f, bytes.data()).isOk());
  Tensor want = ref::quantizeRowwiseInt8(tv);
  for (int64_t r = 0; r < 3; ++r) {
    const std::byte* row = bytes.data() + r * static_cast<int64_t>(cuda::int8RowStride(5));
    float scale = 0, bias = 0;
    std::memcpy(&scale, row + 8, 4);  // 5 codes padded to 8, then scale and bias
    std::memcpy(&bias, row + 12, 4);
    for (int64_t c = 0; c < 5; ++c) {
      float v = static_cast<float>(std::to_integer<uint8_t>(row[c])) * scale + bias;
      EXPECT_NEAR(v, want.data<float>()[r * 5 + c], 1e-6) << r << "," << c;
    }
  }
  cuda::WeightFormat hf{h, false, 0};
  ASSERT_EQ(cuda::weightBytes(b.g, hf), 12u);
  std::vector<uint16_t> half(6);
  ASSERT_TRUE(cuda::writeWeight(b.g, hf, reinterpret_cast<std::byte*>(half.data())).isOk());
  EXPECT_EQ(half[4], floatToBf16(b.g.constant(h)->data<float>()[4]));
  cuda::WeightFormat lib{h, true, 8};  // library f32: bf16-rounded values, rows padded with zeros
  std::vector<float> padded(cuda::weightBytes(b.g, lib) / 4);
  ASSERT_EQ(padded.size(), 16u);
  ASSERT_TRUE(cuda::writeWeight(b.g, lib, reinterpret_cast<std::byte*>(padded.data())).isOk());
  EXPECT_EQ(padded[8 + 1], ref::roundToBF16(b.g.constant(h)->data<float>()[3 + 1]));
  EXPECT_EQ(padded[5], 0.0f);
}

// x -> a (s0) -> c (s0) -> d = c W + e (s0); x -> b (s1) -> e (s1).
Graph twoStreamGraph(bool twoStreams) {
  Builder b;
  ValueId x = b.input("x", DType::kF32, {kBatch, 16});
  ValueId a = b.op(OpKind::kMatMul, {x, b.constant("w1", {16, 16}, 1)}, "a");
  ValueId bb = b.op(OpKind::kMatMul, {x, b.constant("w2", {16, 16}, 2)}, "b");
  ValueId c = b.op(OpKind::kMatMul, {a, b.constant("w3", {16, 16}, 3)}, "c");
  ValueId e = b.op(OpKind::kMatMul, {bb, b.constant("w5", {16, 16}, 5)}, "e");
  b.g.addOutput(b.op(OpKind::kGemm, {c, b.constant("w4", {16, 16}, 4), e}, "d"));
  if (twoStreams) {
    for (Node& n : b.g.mutableNodes()) n.mir.stream = n.name == "b" || n.name == "e" ? 1 : 0;
  }
  return b.g;
}

TEST(CudaProgram, LibraryStepsStreamsWaitsAndArenaAcrossStreams) {
  auto t = resolveTarget("h200");
  ASSERT_TRUE(t.isOk());
  Graph g2 = twoStreamGraph(true);
  ASSERT_TRUE(verifyPlan(g2, *t).isOk()) << verifyPlan(g2, *t).message();
  auto p = cuda::lowerPlan(g2, *t);
  ASSERT_TRUE(p.isOk()) << p.status().message();
  ASSERT_EQ(p->steps.size(), 5u);
  EXPECT_EQ(p->numStreams(), 2);
  EXPECT_TRUE(p->moduleSource.empty());  // library calls only: nothing for NVRTC
  std::vector<std::string> names;
  for (const auto& s : p->steps) names.push_back(s.name);
  EXPECT_EQ(names.back(), "cublaslt.matmul+add");
  EXPECT_EQ(p->steps[1].stream, 1);                  // b
  EXPECT_EQ(p->waits[3], std::vector<int>{1});       // e waits for b (its stream's previous step)
  EXPECT_EQ(p->waits[4], (std::vector<int>{2, 3}));  // d waits for c and e
  EXPECT_FALSE(p->after[3][2]);                      // e may overlap c ...
  EXPECT_TRUE(p->after[4][0]);                       // ... d follows everything
  EXPECT_EQ(p->weights.size(), 5u);

  SymbolBindings b;
  b.values = {0, 64};
  auto two = cuda::planArena(g2, *p, b);
  ASSERT_TRUE(two.isOk()) << two.status().message();
  auto overlap = [&](const cuda::ArenaPlan& a, ValueId u, ValueId v) {
    size_t iu = static_cast<size_t>(u), iv = static_cast<size_t>(v);
    return a.offset[iu] < a.offset[iv] + a.bytes[iv] && a.offset[iv] < a.offset[iu] + a.bytes[iu];
  };
  ValueId a = g2.node(0).outputs[0], e = g2.node(3).outputs[0];
  // In issue order e comes after a's last reader, but on its own stream it
  // may run while a is still read: it must not take a's bytes.
  EXPECT_FALSE(overlap(*two, a, e));

  Graph g1 = twoStreamGraph(false);
  auto p1 = cuda::lowerPlan(g1, *t);
  ASSERT_TRUE(p1.isOk());
  EXPECT_EQ(p1->numStreams(), 1);
  auto one = cuda::planArena(g1, *p1, b);
  ASSERT_TRUE(one.isOk());
  EXPECT_LT(one->size, two->size);               // one stream: more reuse
  for (size_t v = 0; v < g1.numValues(); ++v) {  // what is in the arena: 16x64 floats, aligned
    if (one->inArena[v]) {
      EXPECT_EQ(one->bytes[v], 64u * 16 * 4);
    }
  }
  // The warm-up run and every graph replay read the once-uploaded input
  // again: it shares bytes with nothing.
  ValueId x = g1.inputs()[0];
  for (size_t v = 0; v < g1.numValues(); ++v) {
    if (one->inArena[v] && static_cast<ValueId>(v) != x) {
      EXPECT_FALSE(overlap(*one, x, static_cast<ValueId>(v))) << v;
    }
  }
}

TEST(CudaProgram, LoneViewsAliasAndExplicitKernelsAreHonoured) {
  auto t = resolveTarget("h200");
  Builder b;
  ValueId x = b.input("x", DType::kF32, {kBatch, 4, 8});
  ValueId f = b.op(OpKind::kFlatten, {x}, "flat", attrs({{"axis", int64_t{1}}}));
  ValueId y = b.op(OpKind::kMatMul, {f, b.constant("w", {32, 8}, 1)}, "mm");
  b.g.addOutput(b.op(OpKind::kMatMul, {y, b.constant("w2", {8, 4}, 2)}, "mm2"));
  b.group({"mm"}, 0, "cublas.sgemm");
  b.group({"mm2"}, 1, "cublaslt.matmul");
  ASSERT_TRUE(verifyPlan(b.g, *t).isOk());
  auto p = cuda::lowerPlan(b.g, *t);
  ASSERT_TRUE(p.isOk()) << p.status().message();
  ASSERT_EQ(p->steps.size(), 2u);
  EXPECT_EQ(p->steps[0].name, "cublas.sgemm");
  EXPECT_EQ(p->steps[1].name, "cublaslt.matmul");
  EXPECT_EQ(p->root(f), x);  // the flatten is no kernel
  EXPECT_EQ(p->steps[0].reads[0], f);
  EXPECT_EQ(p->gemms[0].library, GemmLibrary::kCublas);
}

TEST(CudaProgram, GroupsForTheGeneratorCarryItsVerdict) {
  auto t = resolveTarget("h200");
  Builder b;
  ValueId x = b.input("x", DType::kF32, {kBatch, 8});
  b.g.addOutput(b.op(OpKind::kSoftmax, {x}, "sm", attrs({{"axis", int64_t{-1}}})));
  auto p = cuda::lowerPlan(b.g, *t);
  if (p.isOk()) {  // the code generator runs it: one generated step in the module
    ASSERT_EQ(p->steps.size(), 1u);
    EXPECT_EQ(p->steps[0].kind, cuda::StepKind::kGenerated);
    EXPECT_FALSE(p->moduleSource.empty());
  } else {  // it does not: the error names the group, nothing falls back
    EXPECT_NE(p.status().message().find("'sm'"), std::string::npos) << p.status().message();
  }
}

// Every zoo model, as imported and as the greedy H200 plan, lowers: each
// node runs in exactly one step or is a lone view, and every GEMM of the
// imported model (no kernel decisions) is a library call.
TEST(CudaProgram, EveryZooPlanLowersToLibraryCallsAndGeneratedKernels) {
  auto t = resolveTarget("h200");
  ASSERT_TRUE(t.isOk());
  auto greedy = makePolicy("greedy");
  for (const char* model :
       {"dlrm_criteo", "dlrm_avazu", "deepfm", "xdeepfm", "dcnv2", "wide_deep", "autoint", "ngcf"}) {
    Graph hir = rwtest::zoo(model);
    EnvConfig cfg;
    cfg.batch = 256;
    auto opt = optimize(hir, *t, **greedy, cfg);
    ASSERT_TRUE(opt.isOk()) << model << ": " << opt.status().message();
    for (const Graph* g : {&hir, &opt->plan}) {
      std::string which = std::string(model) + (g == &hir ? " (imported)" : " (greedy)");
      auto p = cuda::lowerPlan(*g, *t);
      ASSERT_TRUE(p.isOk()) << which << ": " << p.status().message();
      std::vector<int> runs(g->nodes().size(), 0);
      for (const auto& s : p->steps) {
        for (NodeId n : s.nodes) ++runs[static_cast<size_t>(n)];
      }
      int gemms = 0;
      for (size_t n = 0; n < runs.size(); ++n) {
        const Node& node = g->nodes()[n];
        bool view = p->aliasOf[static_cast<size_t>(node.outputs[0])] != kNoValue;
        EXPECT_EQ(runs[n] + (view ? 1 : 0), 1) << which << ": " << nodeWhere(*g, static_cast<NodeId>(n));
        gemms += node.op == OpKind::kGemm || node.op == OpKind::kMatMul ? 1 : 0;
      }
      std::string generated;  // GEMMs the libraries left to the generator
      for (const auto& s : p->steps) {
        for (NodeId n : s.nodes) {
          OpKind k = g->node(n).op;
          bool gemm = k == OpKind::kGemm || k == OpKind::kMatMul;
          if (gemm && s.kind == cuda::StepKind::kGenerated) generated += " " + nodeWhere(*g, n) + ": " + s.name;
        }
      }
      if (g == &hir) {
        EXPECT_EQ(static_cast<int>(p->gemms.size()), gemms) << which << generated;
      }
      EXPECT_EQ(p->moduleSource.empty(), p->kernels.empty()) << which;
    }
  }
}

TEST(CudaBackend, ReportsWhyItIsUnavailableAndFailsCleanly) {
  auto backend = makeBackend("cuda");
  ASSERT_TRUE(backend.isOk()) << backend.status().message();
  BackendCapabilities caps = (*backend)->capabilities();
  EXPECT_EQ(caps.family, Backend::kCuda);
  if (caps.available) GTEST_SKIP() << "a GPU is present (" << caps.note << "): nothing to fail";
  EXPECT_EQ(caps.note.rfind("no CUDA device", 0), 0u) << caps.note;
  Builder b;
  ValueId x = b.input("x", DType::kF32, {kBatch, 8});
  b.g.addOutput(b.op(OpKind::kMatMul, {x, b.constant("w", {8, 8}, 1)}, "mm"));
  auto exe = (*backend)->compile(b.g);
  ASSERT_FALSE(exe.isOk());
  EXPECT_EQ(exe.status().code(), ErrorCode::kUnsupported);
  EXPECT_EQ(exe.status().message().rfind("no CUDA device: ", 0), 0u) << exe.status().message();
}

// ---- on a GPU ----

using cudatest::gpuOrSkip;

void expectRunsLikeReference(ExecutionBackend& backend, const Graph& g, int64_t batch, double rtol) {
  auto exe = backend.compile(g);
  ASSERT_TRUE(exe.isOk()) << exe.status().message();
  rectest::Inputs in{{"x", uniform({batch, 16}, 9)}};
  for (int rep = 0; rep < 2; ++rep) {  // first run captures the graph, the second replays it
    auto got = (*exe)->run(in);
    ASSERT_TRUE(got.isOk()) << got.status().message();
    auto want = runReference(g, in);
    auto cmp = compareTensors((*got)[0], (*want)[0], 1e-5, rtol);
    EXPECT_TRUE(cmp.close) << "run " << rep << ": " << cmp.message;
  }
  EXPECT_GT((*exe)->peakMemoryBytes(), 0);
}

TEST(CudaBackendGpu, LibraryPlansOnOneAndTwoStreamsMatchTheReference) {
  std::string why;
  auto backend = gpuOrSkip(why);
  if (!backend) GTEST_SKIP() << why;
  for (bool two : {false, true}) {
    for (int64_t batch : {1, 300}) expectRunsLikeReference(*backend, twoStreamGraph(two), batch, 1e-4);
  }
}

// cuBLAS's FAST_TF32 / FAST_16BF / FAST_16F compute types on f32 operands
// against the fp32 model and against the reference executor's emulation of
// the same plan (inputs rounded to nearest even, wide accumulation): both
// within set_precision's stated bound, max|out' - out| <= bound * max|out|.
TEST(CudaBackendGpu, ReducedMathModesStayWithinTheirStatedBounds) {
  std::string why;
  auto backend = gpuOrSkip(why);
  if (!backend) GTEST_SKIP() << why;
  const Graph hir = twoStreamGraph(false);
  rectest::Inputs in{{"x", uniform({256, 16}, 9)}};
  for (auto [math, bound] : {std::pair{Precision::kTF32, 1e-2}, {Precision::kBF16, 5e-2}, {Precision::kF16, 1e-2}}) {
    Graph g = hir;
    for (Node& n : g.mutableNodes()) n.mir.math = math;
    auto exe = backend->compile(g);
    ASSERT_TRUE(exe.isOk()) << exe.status().message();
    auto got = (*exe)->run(in);
    ASSERT_TRUE(got.isOk()) << got.status().message();
    for (const Graph* oracle : {&hir, static_cast<const Graph*>(&g)}) {
      auto want = runReference(*oracle, in);
      ASSERT_TRUE(want.isOk()) << want.status().message();
      double scale = 0;
      for (float v : (*want)[0].values<float>()) scale = std::max(scale, static_cast<double>(std::fabs(v)));
      auto cmp = compareTensors((*got)[0], (*want)[0], bound * scale, 0);
      EXPECT_TRUE(cmp.close) << precisionName(math) << (oracle == &hir ? " vs fp32: " : " vs emulation: ")
                             << cmp.message;
    }
  }
}

TEST(CudaBackendGpu, ReplaysAreTimedOnTheDevice) {
  std::string why;
  auto backend = gpuOrSkip(why);
  if (!backend) GTEST_SKIP() << why;
  auto exe = backend->compile(twoStreamGraph(true));
  ASSERT_TRUE(exe.isOk()) << exe.status().message();
  auto* timed = dynamic_cast<cuda::DeviceTimed*>(exe->get());
  ASSERT_NE(timed, nullptr);
  auto t = timed->timeReplays({{"x", uniform({64, 16}, 9)}}, 5, 2);
  ASSERT_TRUE(t.isOk()) << t.status().message();
  EXPECT_EQ(t->replayMs.size(), 5u);
  EXPECT_GT(t->peakBytes, 0);
  EXPECT_EQ((*exe)->kernelReport().size(), 5u);
  EXPECT_NE((*exe)->kernelReport()[4].find("[64x16x16 f32]"), std::string::npos) << (*exe)->kernelReport()[4];
}

#else

TEST(CudaBackend, ThisBuildHasNone) {
  auto backend = makeBackend("cuda");
  ASSERT_FALSE(backend.isOk());
  EXPECT_NE(backend.status().message().find("no CUDA backend"), std::string::npos);
}

#endif

}  // namespace
}  // namespace cagr
