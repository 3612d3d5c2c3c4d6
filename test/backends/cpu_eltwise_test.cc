// The CPU backend's eltwise step (src/backends/cpu/eltwise_*.cc): fused
// elementwise groups, reductions with a prologue and data movement, each
// compared with the reference executor, with the kernel report checked so a
// fallback to the reference kernels fails the test.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "../rewrite/rewrite_test_util.h"
#include "cpu_test_util.h"
#include "backends/cpu/step.h"
#include "cagr/backend.h"

namespace cagr {
namespace {

using rectest::attrs;
using rectest::Builder;
using rectest::Inputs;
using rectest::runBoth;

void expectKernels(const std::vector<std::string>& report, const std::vector<std::string>& want) {
  for (const std::string& k : want) {
    EXPECT_NE(std::find(report.begin(), report.end(), k), report.end()) << "no kernel " << k;
  }
  for (const std::string& k : report) EXPECT_EQ(k.find("reference:"), std::string::npos) << k;
}

Inputs randomIn(const Graph& g, int64_t batch, unsigned seed = 7) {
  return rwtest::randomInputs(g, batch, 4, seed);
}

// x [N,2,C] + b [C] (a row read in place), * s [N,1,1], - scalar, relu,
// sigmoid: one kernel, every operand shape.
TEST(CpuEltwise, FusedChainWithBroadcastsIsOneKernel) {
  Builder b;
  ValueId x = b.input("x", DType::kF32, {kBatch, 2, 70});
  ValueId bias = b.input("b", DType::kF32, {70});
  ValueId s = b.input("s", DType::kF32, {kBatch, 1, 1});
  ValueId c = b.input("c", DType::kF32, {});
  ValueId v = b.op(OpKind::kAdd, {x, bias}, "add");
  v = b.op(OpKind::kMul, {v, s}, "mul");
  v = b.op(OpKind::kSub, {v, c}, "sub");
  v = b.op(OpKind::kRelu, {v}, "relu");
  v = b.op(OpKind::kSigmoid, {v}, "sig");
  b.g.addOutput(v, "y");
  b.group({"add", "mul", "sub", "relu", "sig"}, 0, "own.eltwise");
  for (int64_t batch : {1, 5, 8000}) {  // tiles start mid-row; 8000 runs on threads
    auto report = runBoth(b.g, randomIn(b.g, batch));
    EXPECT_EQ(report.size(), 1u);
    expectKernels(report, {"own.eltwise:add+mul+sub+relu+sigmoid"});
  }
}

// A value smaller than the iteration space computed in the group ([N,1]),
// an output used inside the group too, and a view of a computed value.
TEST(CpuEltwise, SmallIntermediatesAndSideOutputs) {
  Builder b;
  ValueId x = b.input("x", DType::kF32, {kBatch, 3, 8});
  ValueId s = b.input("s", DType::kF32, {kBatch, 1, 1});
  ValueId sq = b.op(OpKind::kMul, {s, s}, "sq");  // [N,1,1], materialised
  ValueId t = b.op(OpKind::kTanh, {x}, "tanh");   // [N,3,8], also an output
  ValueId m = b.op(OpKind::kMul, {t, sq}, "scale");
  ValueId r = b.op(OpKind::kReshape, {m}, "view", attrs({{"shape", std::vector<int64_t>{-1, 24}}}));
  ValueId y = b.op(OpKind::kAbs, {r}, "abs");
  b.g.addOutput(y, "y");
  b.g.addOutput(t, "t");
  b.g.addOutput(sq, "sq");
  b.group({"sq", "tanh", "scale", "view", "abs"}, 0);
  for (int64_t batch : {1, 3000}) {
    expectKernels(runBoth(b.g, randomIn(b.g, batch)), {"own.eltwise:mul+tanh+mul+reshape+abs"});
  }
}

TEST(CpuEltwise, EveryUnaryOpMatchesReference) {
  std::vector<std::pair<OpKind, Attrs>> ops = {
      {OpKind::kRelu, {}},     {OpKind::kLeakyRelu, attrs({{"alpha", 0.1}})},
      {OpKind::kSigmoid, {}},  {OpKind::kTanh, {}},
      {OpKind::kGelu, {}},     {OpKind::kGelu, attrs({{"approximate", std::string("tanh")}})},
      {OpKind::kExp, {}},      {OpKind::kLog, {}},
      {OpKind::kNeg, {}},      {OpKind::kAbs, {}},
      {OpKind::kSqrt, {}},     {OpKind::kReciprocal, {}},
      {OpKind::kErf, {}},      {OpKind::kSoftplus, {}},
      {OpKind::kIdentity, {}}, {OpKind::kClip, attrs({{"min", -0.5}, {"max", 0.25}})}};
  for (const auto& [k, a] : ops) {
    Builder b;
    ValueId x = b.input("x", DType::kF32, {kBatch, 7});
    ValueId ten = b.input("ten", DType::kF32, {1});
    ValueId big = b.op(OpKind::kMul, {x, ten}, "scale");  // inputs in [-10, 10]
    b.g.addOutput(b.op(k, {big}, "op", a), "y");
    b.group({"scale", "op"}, 0);
    Inputs in = randomIn(b.g, 20000);
    in[1].second.data<float>()[0] = 10.0f;
    expectKernels(runBoth(b.g, in), {std::string("own.eltwise:mul+") + opInfo(k).mnemonic});
  }
}

TEST(CpuEltwise, BinaryOpsBroadcastEveryWay) {
  for (OpKind k : {OpKind::kAdd, OpKind::kSub, OpKind::kMul, OpKind::kDiv, OpKind::kPow, OpKind::kMax, OpKind::kMin}) {
    Builder b;
    ValueId x = b.input("x", DType::kF32, {kBatch, 1, 3});
    ValueId y = b.input("y", DType::kF32, {kBatch, 4, 1});
    ValueId w = b.input("w", DType::kF32, {4, 1});
    ValueId c = b.input("c", DType::kF32, {});
    ValueId xy = b.op(k, {x, y}, "xy");               // both broadcast: [N,4,3]
    ValueId xyw = b.op(k, {w, xy}, "xyw");            // left operand broadcast
    b.g.addOutput(b.op(k, {xyw, c}, "xywc"), "out");  // scalar operand
    b.group({"xy", "xyw", "xywc"}, 0);
    for (int64_t batch : {1, 9000}) {
      Inputs in = randomIn(b.g, batch);
      if (k == OpKind::kPow) {
        for (auto& [name, t] : in) {
          for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = 0.5f + std::abs(t.data<float>()[i]);
        }
      }
      std::string m = opInfo(k).mnemonic;
      expectKernels(runBoth(b.g, in), {"own.eltwise:" + m + "+" + m + "+" + m});
    }
  }
}

// NGCF's id arithmetic: i64 ids + an i64 scalar; integer division by zero
// fails like the reference.
TEST(CpuEltwise, IntegerArithmeticAndDivisionByZero) {
  Builder b;
  ValueId ids = b.input("ids", DType::kI64, {kBatch});
  ValueId off = b.input("off", DType::kI64, {});
  ValueId sum = b.op(OpKind::kAdd, {ids, off}, "add");
  ValueId q = b.op(OpKind::kDiv, {sum, off}, "div");
  b.g.addOutput(b.op(OpKind::kRelu, {b.op(OpKind::kNeg, {q}, "neg")}, "relu"), "y");
  b.group({"add", "div", "neg", "relu"}, 0);
  Inputs in = randomIn(b.g, 100);
  in[1].second.data<int64_t>()[0] = 3;
  expectKernels(runBoth(b.g, in), {"own.eltwise:add+div+neg+relu"});
  in[1].second.data<int64_t>()[0] = 0;
  auto exe = (*makeBackend("cpu"))->compile(b.g);
  ASSERT_TRUE(exe.isOk());
  auto r = (*exe)->run(in);
  ASSERT_FALSE(r.isOk());
  EXPECT_NE(r.status().message().find("integer division by zero"), std::string::npos) << r.status().message();
}

TEST(CpuEltwise, WhereCastAndBatchNorm) {
  Builder b;
  ValueId cond = b.input("cond", DType::kBool, {kBatch, 1, 5});
  ValueId x = b.input("x", DType::kF32, {kBatch, 3, 5});
  ValueId z = b.input("z", DType::kF32, {5});
  ValueId picked = b.op(OpKind::kWhere, {cond, x, z}, "where");
  ValueId asInt =
      b.op(OpKind::kCast, {b.op(OpKind::kMul, {picked, z}, "mul")}, "toint", attrs({{"to", std::string("i64")}}));
  ValueId back = b.op(OpKind::kCast, {asInt}, "tof32", attrs({{"to", std::string("f32")}}));
  ValueId condF = b.op(OpKind::kCast, {cond}, "condf", attrs({{"to", std::string("f32")}}));
  ValueId sum = b.op(OpKind::kAdd, {back, condF}, "add");
  std::vector<ValueId> p;
  for (int i = 0; i < 4; ++i) p.push_back(b.constant("bn" + std::to_string(i), {3}, static_cast<unsigned>(i)));
  b.g.addOutput(b.op(OpKind::kBatchNorm, {sum, p[0], p[1], p[2], p[3]}, "bn"), "y");
  b.group({"where", "mul", "toint", "tof32", "condf", "add", "bn"}, 0);
  for (int64_t batch : {2, 6000}) {
    Inputs in = randomIn(b.g, batch);
    for (auto& [name, t] : in) {
      for (int64_t i = 0; i < t.numel(); ++i) {
        if (name == "cond") t.data<uint8_t>()[i] = i % 3 == 0;
        if (name == "x") t.data<float>()[i] *= 20.0f;
      }
    }
    expectKernels(runBoth(b.g, in), {"own.eltwise:where+mul+cast+cast+cast+add+batch_norm"});
  }
}

// A view alone is a copy; inside a group it shares storage; leaving the
// group it is written out.
TEST(CpuEltwise, ViewsAloneAndInGroups) {
  Builder b;
  ValueId x = b.input("x", DType::kF32, {kBatch, 6});
  ValueId u = b.op(OpKind::kUnsqueeze, {x}, "unsq", attrs({{"axes", std::vector<int64_t>{1}}}));
  ValueId f = b.op(OpKind::kFlatten, {u}, "flat");
  ValueId e = b.op(OpKind::kExp, {f}, "exp");
  ValueId sq =
      b.op(OpKind::kSqueeze, {b.op(OpKind::kReshape, {e}, "re", attrs({{"shape", std::vector<int64_t>{-1, 1, 6}}}))},
           "squeeze", attrs({{"axes", std::vector<int64_t>{1}}}));
  b.g.addOutput(sq, "y");
  b.g.addOutput(u, "u");
  b.group({"flat", "exp", "re"}, 0);
  // Lone views run no kernel: the engine aliases their input's bytes.
  auto report = runBoth(b.g, randomIn(b.g, 50));
  expectKernels(report, {"own.eltwise:flatten+exp+reshape"});
  EXPECT_EQ(report.size(), 1u);
}

// Reduced storage: a bf16 intermediate and output, an f16 and an int8
// row-wise constant operand, rounded where the reference rounds them.
TEST(CpuEltwise, ReducedPrecisionStorage) {
  Builder b;
  ValueId x = b.input("x", DType::kF32, {kBatch, 6});
  ValueId half = b.constant("half", {6}, 1);
  ValueId q = b.constant("q", {3, 6}, 2);
  ValueId v = b.op(OpKind::kMul, {x, half}, "mul");
  v = b.op(OpKind::kTanh, {v}, "tanh");
  ValueId r = b.op(OpKind::kReshape, {v}, "re", attrs({{"shape", std::vector<int64_t>{-1, 1, 6}}}));
  ValueId y = b.op(OpKind::kAdd, {r, q}, "add");
  b.g.addOutput(y, "y");
  b.group({"mul", "tanh", "re", "add"}, 0);
  b.g.mutableValue(half).mir.storage = Precision::kF16;
  b.g.mutableValue(q).mir.storage = Precision::kInt8Rowwise;
  b.g.mutableValue(v).mir.storage = Precision::kBF16;
  b.g.mutableValue(r).mir.storage = Precision::kBF16;
  b.g.mutableValue(y).mir.storage = Precision::kBF16;
  expectKernels(runBoth(b.g, randomIn(b.g, 3000), 1e-6), {"own.eltwise:mul+tanh+reshape+add"});
}

Graph reduction(OpKind k, std::vector<Dim> dims, Attrs a, bool prologue) {
  Builder b;
  ValueId x = b.input("x", DType::kF32, dims);
  ValueId in = prologue ? b.op(OpKind::kMul, {x, x}, "sq") : x;
  std::vector<ValueId> operands{in};
  if (k == OpKind::kLayerNorm) {
    int64_t axis = std::get<int64_t>(*a.find("axis"));
    std::vector<Dim> norm(dims.begin() + (axis < 0 ? static_cast<int64_t>(dims.size()) + axis : axis), dims.end());
    operands.push_back(b.input("scale", DType::kF32, norm));
    operands.push_back(b.input("bias", DType::kF32, {norm.back()}));
  }
  b.g.addOutput(b.op(k, operands, "red", std::move(a)), "y");
  if (prologue) b.g.addOutput(in, "sq");
  if (prologue) b.group({"sq", "red"}, 0, "own.reduce");
  return std::move(b.g);
}

TEST(CpuReduce, ReductionsOverAnyAxes) {
  std::vector<std::vector<int64_t>> axesList = {{1}, {-1}, {0, 2}, {}, {1, 2}, {0}};
  for (OpKind k : {OpKind::kReduceSum, OpKind::kReduceMean, OpKind::kReduceMax}) {
    for (const auto& axes : axesList) {
      for (int64_t keep : {0, 1}) {
        Graph g = reduction(k, {kBatch, 6, 5}, attrs({{"axes", axes}, {"keepdims", keep}}), keep == 1);
        for (int64_t batch : {1, 3000}) {
          std::string name = std::string("own.reduce:") + (keep == 1 ? "mul+" : "") + opInfo(k).mnemonic;
          expectKernels(runBoth(g, randomIn(g, batch)), {name});
        }
      }
    }
  }
}

// Reducing an empty axis writes the reduction's identity (0, NaN for the
// mean, -inf for the max), as the reference does.
TEST(CpuReduce, EmptyReducedAxis) {
  for (OpKind k : {OpKind::kReduceSum, OpKind::kReduceMean, OpKind::kReduceMax}) {
    Graph g = reduction(k, {kBatch, 0, 3}, attrs({{"axes", std::vector<int64_t>{1}}, {"keepdims", int64_t{0}}}), false);
    expectKernels(runBoth(g, randomIn(g, 4)), {std::string("own.reduce:") + opInfo(k).mnemonic});
  }
}

TEST(CpuReduce, SoftmaxAndLayerNorm) {
  for (int64_t axis : {-1, 1}) {
    for (bool prologue : {false, true}) {
      Graph sm = reduction(OpKind::kSoftmax, {kBatch, 4, 22}, attrs({{"axis", axis}}), prologue);
      Graph ln = reduction(OpKind::kLayerNorm, {kBatch, 4, 22}, attrs({{"axis", axis}}), prologue);
      for (int64_t batch : {1, 2000}) {
        Inputs in = randomIn(sm, batch);
        for (int64_t i = 0; i < in[0].second.numel(); ++i) in[0].second.data<float>()[i] *= 30.0f;
        std::string pre = prologue ? "mul+" : "";
        expectKernels(runBoth(sm, in), {"own.reduce:" + pre + "softmax"});
        expectKernels(runBoth(ln, randomIn(ln, batch)), {"own.reduce:" + pre + "layer_norm"});
      }
    }
  }
}

TEST(CpuMovement, ConcatSplitSliceTransposeExpand) {
  Builder b;
  ValueId x = b.input("x", DType::kF32, {kBatch, 4, 6});
  ValueId one = b.input("one", DType::kF32, {kBatch, 1, 6});
  ValueId cat1 = b.op(OpKind::kConcat, {x, one, x}, "cat1", attrs({{"axis", int64_t{1}}}));
  ValueId cat2 = b.op(OpKind::kConcat, {cat1, cat1}, "cat2", attrs({{"axis", int64_t{-1}}}));
  auto parts = b.g.addNode(OpKind::kSplit, {cat2}, attrs({{"axis", int64_t{2}}, {"split", std::vector<int64_t>{5, 7}}}),
                           "split", 2);
  ASSERT_TRUE(parts.isOk()) << parts.status().message();
  ValueId sl = b.op(OpKind::kSlice, {(*parts)[1]}, "slice",
                    attrs({{"starts", std::vector<int64_t>{-1, 1}},
                           {"ends", std::vector<int64_t>{-100, 100}},
                           {"axes", std::vector<int64_t>{2, 1}},
                           {"steps", std::vector<int64_t>{-2, 3}}}));
  ValueId tr = b.op(OpKind::kTranspose, {sl}, "tr", attrs({{"perm", std::vector<int64_t>{2, 0, 1}}}));
  ValueId ex = b.op(OpKind::kExpand, {one}, "expand", attrs({{"shape", std::vector<int64_t>{1, 3, 1}}}));
  for (ValueId v : {(*parts)[0], tr, ex}) b.g.addOutput(v, "out" + std::to_string(v));
  for (int64_t batch : {1, 5000}) {
    expectKernels(runBoth(b.g, randomIn(b.g, batch)),
                  {"own.movement:concat", "own.movement:split", "own.movement:slice", "own.movement:transpose",
                   "own.movement:expand"});
  }
}

// The zoo's id-column select (Gather(ids [N,22], scalar, axis=1)), a float
// Gather along axis 1 and NGCF's GatherND; an id out of range fails like
// the reference.
TEST(CpuMovement, GatherAndGatherND) {
  Builder b;
  ValueId ids = b.input("ids", DType::kI64, {kBatch, 22});
  ValueId col = b.input("col", DType::kI64, {});
  ValueId x = b.input("x", DType::kF32, {kBatch, 5, 3});
  ValueId pick = b.input("pick", DType::kI64, {2});
  ValueId table = b.input("table", DType::kF32, {6, 8});
  ValueId sel = b.op(OpKind::kGather, {ids, col}, "select", attrs({{"axis", int64_t{1}}}));
  ValueId g1 = b.op(OpKind::kGather, {x, pick}, "g1", attrs({{"axis", int64_t{-2}}}));
  ValueId nd =
      b.op(OpKind::kGatherND,
           {table, b.op(OpKind::kUnsqueeze, {sel}, "unsq", attrs({{"axes", std::vector<int64_t>{-1}}}))}, "gnd");
  for (ValueId v : {sel, g1, nd}) b.g.addOutput(v, "out" + std::to_string(v));
  for (int64_t batch : {1, 4000}) {
    Inputs in = randomIn(b.g, batch);
    in[1].second.data<int64_t>()[0] = -3;
    in[3].second.data<int64_t>()[1] = -5;
    expectKernels(runBoth(b.g, in), {"own.movement:gather", "own.movement:gather_nd"});
    in[3].second.data<int64_t>()[0] = 5;
    auto r = (*(*makeBackend("cpu"))->compile(b.g))->run(in);
    ASSERT_FALSE(r.isOk());
    EXPECT_NE(r.status().message().find("out of range"), std::string::npos) << r.status().message();
  }
}

TEST(CpuMovement, ConcatInPlaceKernelIsACopy) {
  Builder b;
  ValueId x = b.input("x", DType::kF32, {kBatch, 1});
  ValueId y = b.input("y", DType::kF32, {kBatch, 3});
  b.g.addOutput(b.op(OpKind::kConcat, {x, y, x}, "cat", attrs({{"axis", int64_t{1}}})), "z");
  b.group({"cat"}, -1, "own.concat_inplace");
  expectKernels(runBoth(b.g, randomIn(b.g, 300)), {"own.concat_inplace(copy)"});
}

// Inputs large enough that each kind of step splits its work over threads
// (cpu::kParallelWork element operations).
TEST(CpuEltwise, LargeInputsRunOnThreads) {
  Graph red = reduction(OpKind::kReduceSum, {kBatch, 64}, attrs({{"axes", std::vector<int64_t>{1}}}), true);
  expectKernels(runBoth(red, randomIn(red, 40000)), {"own.reduce:mul+reduce_sum"});
  Graph sm = reduction(OpKind::kSoftmax, {kBatch, 22}, attrs({{"axis", int64_t{-1}}}), true);
  expectKernels(runBoth(sm, randomIn(sm, 25000)), {"own.reduce:mul+softmax"});
  Builder b;
  ValueId x = b.input("x", DType::kF32, {kBatch, 64});
  ValueId t = b.op(OpKind::kTranspose, {x}, "tr");
  ValueId s = b.op(OpKind::kSigmoid, {b.op(OpKind::kExp, {t}, "exp")}, "sig");
  b.g.addOutput(b.op(OpKind::kMul, {s, s}, "sq"), "y");
  b.group({"exp", "sig", "sq"}, 0);
  expectKernels(runBoth(b.g, randomIn(b.g, 70000)), {"own.movement:transpose", "own.eltwise:exp+sigmoid+mul"});
}

// The factory declines GEMMs and element types it has no kernel for; the
// engine then runs the reference step.
TEST(CpuEltwise, DeclinesWhatItDoesNotRun) {
  Builder b;
  ValueId x = b.input("x", DType::kF32, {kBatch, 4});
  ValueId w = b.input("w", DType::kF32, {4, 4});
  ValueId e = b.input("e", DType::kI64, {kBatch, 4});
  ValueId mm = b.op(OpKind::kMatMul, {x, w}, "mm");
  b.g.addOutput(b.op(OpKind::kPow, {mm, e}, "pow"), "y");
  auto shape = classifyGroup(b.g, {0});
  ASSERT_TRUE(shape.isOk());
  Target t = rwtest::target("x86-64");
  cpu::StepRequest r{b.g, {0}, *shape, 0, {mm}, t.hw};
  auto s = cpu::makeEltwiseStep(r);
  ASSERT_FALSE(s.isOk());
  EXPECT_EQ(s.status().code(), ErrorCode::kUnsupported);
  auto report = runBoth(b.g, randomIn(b.g, 3));
  EXPECT_NE(std::find(report.begin(), report.end(), "reference:Pow"), report.end());
}

}  // namespace
}  // namespace cagr
