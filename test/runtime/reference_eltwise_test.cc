// Reference kernels of the elementwise ops against hand-computed values or
// the C library functions they are defined by.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "runtime/ref_test_util.h"

namespace cagr {
namespace {

using namespace reftest;

const std::vector<double> kXs = {-3.0, -1.0, -0.25, 0.0, 0.5, 2.0, 4.0};

struct UnaryCase {
  OpKind op;
  Attrs attrs;
  std::function<double(double)> f;
  std::vector<double> xs = kXs;
};

TEST(RefEltwise, UnaryOpsMatchTheirDefinitions) {
  Attrs leaky = attrs("alpha", 0.2);
  Attrs clip;
  clip.set("min", -0.5);
  clip.set("max", 1.0);
  std::vector<double> positive = {0.125, 0.5, 1.0, 2.0, 9.0};
  std::vector<UnaryCase> cases = {
      {OpKind::kRelu, {}, [](double x) { return x > 0 ? x : 0; }},
      {OpKind::kLeakyRelu, leaky, [](double x) { return x >= 0 ? x : 0.2 * x; }},
      {OpKind::kLeakyRelu, {}, [](double x) { return x >= 0 ? x : 0.01 * x; }},  // default alpha
      {OpKind::kSigmoid, {}, [](double x) { return 1 / (1 + std::exp(-x)); }},
      {OpKind::kTanh, {}, [](double x) { return std::tanh(x); }},
      {OpKind::kExp, {}, [](double x) { return std::exp(x); }},
      {OpKind::kLog, {}, [](double x) { return std::log(x); }, positive},
      {OpKind::kNeg, {}, [](double x) { return -x; }},
      {OpKind::kAbs, {}, [](double x) { return std::fabs(x); }},
      {OpKind::kSqrt, {}, [](double x) { return std::sqrt(x); }, positive},
      {OpKind::kReciprocal, {}, [](double x) { return 1 / x; }, positive},
      {OpKind::kErf, {}, [](double x) { return std::erf(x); }},
      {OpKind::kSoftplus, {}, [](double x) { return std::log(1 + std::exp(x)); }},
      {OpKind::kIdentity, {}, [](double x) { return x; }},
      {OpKind::kClip, clip, [](double x) { return std::min(std::max(x, -0.5), 1.0); }},
  };
  for (const UnaryCase& c : cases) {
    std::vector<double> want;
    for (double x : c.xs) want.push_back(c.f(x));
    int64_t n = static_cast<int64_t>(c.xs.size());
    SCOPED_TRACE(opInfo(c.op).name);
    expectClose(run1(c.op, {f32({n}, c.xs)}, c.attrs), f32({n}, want), 1e-6, 1e-6);
  }
}

TEST(RefEltwise, GeluExactAndTanhApproximation) {
  // Reference values: PyTorch gelu(x) and gelu(x, approximate='tanh').
  Tensor x = f32({4}, {-1, 0, 1, 2});
  expectClose(run1(OpKind::kGelu, {x}), f32({4}, {-0.15865525, 0, 0.84134475, 1.95449974}), 1e-6);
  expectClose(run1(OpKind::kGelu, {x}, attrs("approximate", std::string("tanh"))),
              f32({4}, {-0.15880801, 0, 0.84119199, 1.95459769}), 1e-6);
  expectError(runOp(OpKind::kGelu, {x}, attrs("approximate", std::string("erf"))), {"approximate", "'erf'"});
}

TEST(RefEltwise, UnaryOpsKeepF64Precision) {
  Tensor x = f64({2}, {1e-12, 1.0});
  Tensor y = run1(OpKind::kExp, {x});
  ASSERT_EQ(y.dtype(), DType::kF64);
  EXPECT_DOUBLE_EQ(y.data<double>()[0], std::exp(1e-12));
  EXPECT_DOUBLE_EQ(y.data<double>()[1], std::exp(1.0));
}

TEST(RefEltwise, IntegerReluNegAbsClip) {
  Tensor x = i64({4}, {-5, -1, 0, 7});
  EXPECT_EQ(run1(OpKind::kRelu, {x}).values<int64_t>()[0], 0);
  EXPECT_EQ(run1(OpKind::kNeg, {x}).values<int64_t>()[3], -7);
  EXPECT_EQ(run1(OpKind::kAbs, {x}).values<int64_t>()[0], 5);
  Attrs clip;
  clip.set("min", -2.0);
  clip.set("max", 3.0);
  Tensor c = run1(OpKind::kClip, {x}, clip);
  EXPECT_EQ(std::vector<int64_t>(c.values<int64_t>().begin(), c.values<int64_t>().end()),
            (std::vector<int64_t>{-2, -1, 0, 3}));
  expectError(runOp(OpKind::kExp, {x}), {"i64"});
}

TEST(RefEltwise, CastConvertsEveryDirection) {
  Tensor x = f32({4}, {-1.75, 0, 0.5, 3.9});
  Tensor toI64 = run1(OpKind::kCast, {x}, attrs("to", std::string("i64")));
  ASSERT_EQ(toI64.dtype(), DType::kI64);
  EXPECT_EQ(std::vector<int64_t>(toI64.values<int64_t>().begin(), toI64.values<int64_t>().end()),
            (std::vector<int64_t>{-1, 0, 0, 3}));  // truncation toward zero
  Tensor toBool = run1(OpKind::kCast, {x}, attrs("to", std::string("i1")));
  EXPECT_EQ(std::vector<uint8_t>(toBool.values<uint8_t>().begin(), toBool.values<uint8_t>().end()),
            (std::vector<uint8_t>{1, 0, 1, 1}));
  expectClose(run1(OpKind::kCast, {i64({2}, {-3, 1 << 20})}, attrs("to", std::string("f32"))), f32({2}, {-3, 1 << 20}));
  Tensor toF64 = run1(OpKind::kCast, {x}, attrs("to", std::string("f64")));
  EXPECT_EQ(toF64.dtype(), DType::kF64);
  EXPECT_DOUBLE_EQ(toF64.data<double>()[0], -1.75);
}

TEST(RefEltwise, BinaryOpsBroadcastLikeNumpy) {
  Tensor a = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor row = f32({3}, {10, 20, 30});
  Tensor col = f32({2, 1}, {2, 4});
  expectClose(run1(OpKind::kAdd, {a, row}), f32({2, 3}, {11, 22, 33, 14, 25, 36}));
  expectClose(run1(OpKind::kSub, {row, a}), f32({2, 3}, {9, 18, 27, 6, 15, 24}));
  expectClose(run1(OpKind::kMul, {a, col}), f32({2, 3}, {2, 4, 6, 16, 20, 24}));
  expectClose(run1(OpKind::kDiv, {a, col}), f32({2, 3}, {0.5, 1, 1.5, 1, 1.25, 1.5}));
  expectClose(run1(OpKind::kPow, {a, col}), f32({2, 3}, {1, 4, 9, 256, 625, 1296}));
  expectClose(run1(OpKind::kMax, {a, f32({1}, {3.5})}), f32({2, 3}, {3.5, 3.5, 3.5, 4, 5, 6}));
  expectClose(run1(OpKind::kMin, {a, f32({1}, {3.5})}), f32({2, 3}, {1, 2, 3, 3.5, 3.5, 3.5}));
  // [2,1] x [1,3] -> [2,3] (both operands broadcast).
  expectClose(run1(OpKind::kAdd, {col, f32({1, 3}, {0, 1, 2})}), f32({2, 3}, {2, 3, 4, 4, 5, 6}));
  // Rank-3 against rank-1.
  Tensor cube = run1(OpKind::kMul, {f32({2, 1, 2}, {1, 2, 3, 4}), f32({3, 1}, {1, 10, 100})});
  expectClose(cube, f32({2, 3, 2}, {1, 2, 10, 20, 100, 200, 3, 4, 30, 40, 300, 400}));
}

TEST(RefEltwise, PowTakesAnExponentOfAnotherType) {
  expectClose(run1(OpKind::kPow, {f32({3}, {2, 3, 4}), i64({1}, {2})}), f32({3}, {4, 9, 16}));
  // An integer base with a fractional exponent computes in f64, then truncates to i64.
  Tensor p = run1(OpKind::kPow, {i64({2}, {9, 10}), f32({1}, {0.5})});
  ASSERT_EQ(p.dtype(), DType::kI64);
  EXPECT_EQ(p.data<int64_t>()[0], 3);
  EXPECT_EQ(p.data<int64_t>()[1], 3);
}

TEST(RefEltwise, MaxMinPropagateNan) {
  Tensor a = f32({2}, {NAN, 1});
  Tensor b = f32({2}, {0, NAN});
  Tensor mx = run1(OpKind::kMax, {a, b});
  Tensor mn = run1(OpKind::kMin, {a, b});
  EXPECT_TRUE(std::isnan(mx.data<float>()[0]) && std::isnan(mx.data<float>()[1]));
  EXPECT_TRUE(std::isnan(mn.data<float>()[0]) && std::isnan(mn.data<float>()[1]));
}

TEST(RefEltwise, IntegerArithmeticAndDivisionByZero) {
  Tensor a = i64({3}, {7, -7, 9});
  Tensor b = i64({3}, {2, 2, 3});
  Tensor q = run1(OpKind::kDiv, {a, b});
  EXPECT_EQ(std::vector<int64_t>(q.values<int64_t>().begin(), q.values<int64_t>().end()),
            (std::vector<int64_t>{3, -3, 3}));
  Tensor s = run1(OpKind::kAdd, {i32({2}, {1, 2}), i32({1}, {40})});
  EXPECT_EQ(s.dtype(), DType::kI32);
  EXPECT_EQ(s.data<int32_t>()[1], 42);
  expectError(runOp(OpKind::kDiv, {a, i64({1}, {0})}), {"division by zero"});
}

TEST(RefEltwise, WhereBroadcastsConditionAndValues) {
  Tensor cond = boolean({2, 1}, {1, 0});
  Tensor a = f32({1, 3}, {1, 2, 3});
  Tensor b = f32({2, 3}, {-1, -2, -3, -4, -5, -6});
  expectClose(run1(OpKind::kWhere, {cond, a, b}), f32({2, 3}, {1, 2, 3, -4, -5, -6}));
  // Any element type moves through Where.
  Tensor w = run1(OpKind::kWhere, {boolean({2}, {0, 1}), i64({2}, {1, 2}), i64({2}, {3, 4})});
  EXPECT_EQ(w.data<int64_t>()[0], 3);
  EXPECT_EQ(w.data<int64_t>()[1], 2);
}

}  // namespace
}  // namespace cagr
