// Helpers for the reference-executor tests: tensor literals, a one-node graph
// runner and closeness assertions.
#pragma once

#include <gtest/gtest.h>

#include <optional>
#include <random>
#include <string>
#include <vector>

#include "cagr/graph.h"
#include "cagr/reference.h"

namespace cagr::reftest {

/// f32 tensor holding 0, 1, 2, ... in row-major order.
inline Tensor iota(std::vector<int64_t> shape) {
  Tensor t(DType::kF32, std::move(shape));
  for (int64_t i = 0; i < t.numel(); ++i) t.setF64(i, static_cast<double>(i));
  return t;
}

inline Tensor f32(std::vector<int64_t> shape, const std::vector<double>& values) {
  Tensor t(DType::kF32, std::move(shape));
  EXPECT_EQ(static_cast<size_t>(t.numel()), values.size()) << "literal size";
  for (size_t i = 0; i < values.size() && static_cast<int64_t>(i) < t.numel(); ++i) {
    t.setF64(static_cast<int64_t>(i), values[i]);
  }
  return t;
}

template <typename T>
Tensor typed(DType dt, std::vector<int64_t> shape, const std::vector<T>& values) {
  Tensor t(dt, std::move(shape));
  EXPECT_EQ(static_cast<size_t>(t.numel()), values.size()) << "literal size";
  for (size_t i = 0; i < values.size() && static_cast<int64_t>(i) < t.numel(); ++i) {
    t.data<T>()[i] = values[i];
  }
  return t;
}

inline Tensor i64(std::vector<int64_t> shape, const std::vector<int64_t>& v) { return typed(DType::kI64, shape, v); }
inline Tensor i32(std::vector<int64_t> shape, const std::vector<int32_t>& v) { return typed(DType::kI32, shape, v); }
inline Tensor f64(std::vector<int64_t> shape, const std::vector<double>& v) { return typed(DType::kF64, shape, v); }
inline Tensor boolean(std::vector<int64_t> shape, const std::vector<uint8_t>& v) {
  return typed(DType::kBool, shape, v);
}

/// Deterministic pseudo-random f32 values in [-1, 1).
inline Tensor randomF32(std::vector<int64_t> shape, unsigned seed) {
  Tensor t(DType::kF32, std::move(shape));
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = dist(rng);
  return t;
}

/// Element (flat index i) as double, for hand-written expectations.
inline double at(const Tensor& t, int64_t i) { return t.getF64(i); }

/// Builds a graph whose only node applies `op` to graph inputs in0, in1, ...
/// (std::nullopt operands become kNoValue) and runs it on the reference executor.
inline StatusOr<std::vector<Tensor>> runOp(OpKind op, const std::vector<std::optional<Tensor>>& operands,
                                           Attrs attrs = {}, int numOutputs = 1) {
  Graph g;
  std::vector<ValueId> ids;
  std::vector<std::pair<std::string, Tensor>> feeds;
  for (size_t i = 0; i < operands.size(); ++i) {
    if (!operands[i]) {
      ids.push_back(kNoValue);
      continue;
    }
    std::string name = "in" + std::to_string(i);
    ids.push_back(g.addInput(name, TensorType{operands[i]->dtype(), operands[i]->shape()}));
    feeds.emplace_back(name, *operands[i]);
  }
  CAGR_ASSIGN_OR_RETURN(auto outs, g.addNode(op, ids, std::move(attrs), "op", numOutputs));
  for (ValueId v : outs) g.addOutput(v);
  return runReference(g, feeds);
}

/// runOp for a single-output op; records a test failure on error.
inline Tensor run1(OpKind op, const std::vector<std::optional<Tensor>>& operands, Attrs attrs = {}) {
  auto r = runOp(op, operands, std::move(attrs));
  if (!r.isOk()) {
    ADD_FAILURE() << r.status().message();
    return Tensor();
  }
  return r->front();
}

/// Asserts closeness with compareTensors' report as the failure message.
inline void expectClose(const Tensor& got, const Tensor& want, double atol = 1e-5, double rtol = 1e-5) {
  TensorComparison c = compareTensors(got, want, atol, rtol);
  EXPECT_TRUE(c.close) << c.message;
}

/// Asserts that `r` failed with a message containing every one of `parts`.
template <typename T>
void expectError(const StatusOr<T>& r, const std::vector<std::string>& parts) {
  ASSERT_FALSE(r.isOk()) << "expected an error";
  for (const std::string& p : parts) {
    EXPECT_NE(r.status().message().find(p), std::string::npos) << "'" << p << "' not in: " << r.status().message();
  }
}

template <typename T>
Attrs attrs(const char* name, T value) {
  Attrs a;
  a.set(name, AttrValue(value));
  return a;
}

}  // namespace cagr::reftest
