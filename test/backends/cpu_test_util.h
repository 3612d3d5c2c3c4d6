// Shared harness of the CPU backend step tests (eltwise, embedding, rec):
// a small graph builder, explicit tensors, and the check that the cpu
// backend matches the reference executor and ran our kernel.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "cagr/backend.h"
#include "cagr/mir.h"
#include "cagr/reference.h"

namespace cagr::rectest {

using Inputs = std::vector<std::pair<std::string, Tensor>>;

/// A tensor with values uniform in [lo, hi).
inline Tensor uniform(std::vector<int64_t> shape, unsigned seed, float lo = -1, float hi = 1) {
  Tensor t(DType::kF32, std::move(shape));
  std::mt19937 rng(seed);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = std::uniform_real_distribution<float>(lo, hi)(rng);
  return t;
}

/// An i64 tensor holding `values`.
inline Tensor ids(std::vector<int64_t> shape, const std::vector<int64_t>& values) {
  Tensor t(DType::kI64, std::move(shape));
  std::copy(values.begin(), values.end(), t.data<int64_t>());
  return t;
}

/// i64 ids of `shape` uniform in [0, bound).
inline Tensor randomIds(std::vector<int64_t> shape, int64_t bound, unsigned seed) {
  Tensor t(DType::kI64, std::move(shape));
  std::mt19937 rng(seed);
  for (int64_t i = 0; i < t.numel(); ++i)
    t.data<int64_t>()[i] = std::uniform_int_distribution<int64_t>(0, bound - 1)(rng);
  return t;
}

inline Attrs attrs(std::initializer_list<std::pair<const char*, AttrValue>> items) {
  Attrs a;
  for (const auto& [k, v] : items) a.set(k, v);
  return a;
}

/// Builds a graph node by node; group() puts named nodes into one fusion group.
struct Builder {
  Graph g;
  ValueId input(const std::string& name, DType t, std::vector<Dim> dims) {
    return g.addInput(name, {t, std::move(dims)});
  }
  ValueId table(const std::string& name, int64_t rows, int64_t dim, unsigned seed,
                Precision storage = Precision::kF32) {
    ValueId v = g.addConstant(name, uniform({rows, dim}, seed));
    g.mutableValue(v).mir.storage = storage;
    return v;
  }
  /// A constant of values in [0.5, 1.5) (safe for Div, Log, Sqrt).
  ValueId constant(const std::string& name, std::vector<int64_t> shape, unsigned seed) {
    return g.addConstant(name, uniform(std::move(shape), seed, 0.5f, 1.5f));
  }
  ValueId op(OpKind k, std::vector<ValueId> in, const std::string& name, Attrs a = {}) {
    auto v = g.add(k, std::move(in), std::move(a), name);
    EXPECT_TRUE(v.isOk()) << name << ": " << v.status().message();
    return v.isOk() ? *v : kNoValue;
  }
  void group(const std::vector<std::string>& names, int32_t label, const std::string& kernel = "") {
    KernelId k = kernel.empty() ? 0 : *kernelByName(kernel);
    for (Node& n : g.mutableNodes()) {
      if (std::find(names.begin(), names.end(), n.name) == names.end()) continue;
      n.mir.group = label;
      n.mir.kernel = k;
    }
  }
};

/// Runs `g` on the cpu backend and on the reference executor, expects every
/// output within tolerance, and returns the kernel report (empty on failure).
inline std::vector<std::string> runBoth(const Graph& g, const Inputs& in, double rtol = 1e-5) {
  auto backend = makeBackend("cpu");
  auto exe = (*backend)->compile(g);
  if (!exe.isOk()) {
    ADD_FAILURE() << exe.status().message();
    return {};
  }
  auto got = (*exe)->run(in);
  auto want = runReference(g, in);
  if (!got.isOk() || !want.isOk()) {
    ADD_FAILURE() << (got.isOk() ? want.status().message() : got.status().message());
    return {};
  }
  for (size_t i = 0; i < want->size(); ++i) {
    auto cmp = compareTensors((*got)[i], (*want)[i], 1e-6, rtol);
    EXPECT_TRUE(cmp.close) << "output " << i << ": " << cmp.message;
  }
  return (*exe)->kernelReport();
}

/// The cpu backend's error for `in` (ok if the run succeeded).
inline Status cpuRunError(const Graph& g, const Inputs& in) {
  auto exe = (*makeBackend("cpu"))->compile(g);
  if (!exe.isOk()) return exe.status();
  return (*exe)->run(in).status();
}

/// Expects a kernel whose report line starts with `prefix`.
inline void expectKernel(const std::vector<std::string>& report, const std::string& prefix) {
  bool found = std::any_of(report.begin(), report.end(), [&](const std::string& k) { return k.rfind(prefix, 0) == 0; });
  std::string all;
  for (const std::string& k : report) all += " [" + k + "]";
  EXPECT_TRUE(found) << "no kernel " << prefix << " in" << all;
}

}  // namespace cagr::rectest
