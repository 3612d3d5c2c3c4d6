// Shared harness of the rewrite tests (one test file per action): IR text in,
// candidates of one action kind, apply, golden IR text out, and the numerical
// check — the rewritten graph on the reference executor matches the original.
#pragma once

#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "cagr/importer.h"
#include "cagr/mir.h"
#include "cagr/npz.h"
#include "cagr/reference.h"
#include "cagr/rewrite.h"
#include "cagr/text.h"
#include "common/golden.h"

namespace cagr::rwtest {

inline std::string repoPath(const std::string& rel) { return std::string(CAGR_SOURCE_DIR) + "/" + rel; }

/// Parses IR text (ADD_FAILURE and an empty graph on error).
inline Graph parse(const std::string& text) {
  auto g = parseGraph(text, "<test>");
  if (!g.isOk()) {
    ADD_FAILURE() << g.status().message();
    return Graph();
  }
  return std::move(*g);
}

/// A built-in platform as a target ("x86-64", "h200", "mi250x", "tpu-v4", ...).
inline Target target(const std::string& name) {
  auto t = resolveTarget(name);
  if (!t.isOk()) {
    ADD_FAILURE() << t.status().message();
    return Target();
  }
  return std::move(*t);
}

/// The H200 datasheet target, resolved once (the CUDA backend tests' platform).
inline const Target& h200() {
  static const Target t = target("h200");
  return t;
}

/// A zoo model (small, imported); `exporter` is "ts" or "dynamo".
inline Graph zoo(const std::string& model, const std::string& exporter = "dynamo") {
  auto g = importOnnx(repoPath("zoo/onnx/" + model + "." + exporter + ".onnx"));
  if (!g.isOk()) {
    ADD_FAILURE() << g.status().message();
    return Graph();
  }
  return std::move(*g);
}

/// The committed batch-4 inputs of a zoo model (zoo/ref/<model>.b4.inputs.npz).
inline std::vector<std::pair<std::string, Tensor>> zooInputs(const std::string& model, int batch = 4) {
  auto in = readNpz(repoPath("zoo/ref/" + model + ".b" + std::to_string(batch) + ".inputs.npz"));
  if (!in.isOk()) ADD_FAILURE() << in.status().message();
  return in.isOk() ? std::move(*in) : std::vector<std::pair<std::string, Tensor>>{};
}

/// Candidates of one kind (legal only unless `explain`).
inline std::vector<Candidate> candidatesOf(const Graph& g, const Target& t, ActionKind k, bool explain = false) {
  std::vector<Candidate> out;
  const Rewrite* r = rewriteFor(k);
  if (r != nullptr) r->candidates(g, t, explain, out);
  return out;
}

/// Applies `a` to a copy of `g` through the engine (which also runs verifyPlan).
inline Graph applied(const Graph& g, const Target& t, const Action& a) {
  Graph h = g;
  Status st = applyAction(h, t, a);
  if (!st.isOk()) ADD_FAILURE() << st.message();
  return h;
}

/// Compares the printed graph (weights elided) with test/rewrite/golden/<name>;
/// CAGR_UPDATE_GOLDEN=1 rewrites the file.
inline void expectGolden(const Graph& g, const std::string& name) {
  PrintOptions opts;
  opts.elideWeights = true;
  cagr::testing::expectGoldenText(printGraph(g, opts), repoPath("test/rewrite/golden/" + name));
}

/// Applies the first legal candidate of `kind` until none is left (at most
/// `cap` times, re-enumerating after each apply since ids change); returns
/// how many were applied.
inline int applyAll(Graph& g, const Target& t, ActionKind kind, int cap = 1000) {
  int applied = 0;
  for (; applied < cap; ++applied) {
    auto cs = candidatesOf(g, t, kind);
    if (cs.empty()) break;
    Status st = applyAction(g, t, cs.front().action);
    if (!st.isOk()) {
      ADD_FAILURE() << st.message();
      break;
    }
  }
  return applied;
}

/// Random inputs for `g` at batch `batch`: floats uniform in [-1, 1), integer
/// inputs uniform in [0, idBound) (keep idBound <= the smallest table), other
/// symbols bound to batch.
inline std::vector<std::pair<std::string, Tensor>> randomInputs(const Graph& g, int64_t batch, int64_t idBound,
                                                               unsigned seed = 7) {
  std::mt19937 rng(seed);
  std::vector<std::pair<std::string, Tensor>> out;
  for (ValueId v : g.inputs()) {
    std::vector<int64_t> shape;
    for (Dim d : g.type(v).dims) shape.push_back(isSymbolic(d) ? batch * dimCoef(d) : d);
    Tensor t(g.type(v).dtype, shape);
    for (int64_t i = 0; i < t.numel(); ++i) {
      if (t.dtype() == DType::kI64) {
        t.data<int64_t>()[i] = std::uniform_int_distribution<int64_t>(0, idBound - 1)(rng);
      } else if (t.dtype() == DType::kF32) {
        t.data<float>()[i] = std::uniform_real_distribution<float>(-1, 1)(rng);
      }
    }
    out.emplace_back(g.value(v).name, std::move(t));
  }
  return out;
}

/// Runs both graphs on `inputs` and expects every output within atol + rtol*|want|.
inline void expectSameOutputs(const Graph& before, const Graph& after,
                              const std::vector<std::pair<std::string, Tensor>>& inputs, double atol = 1e-5,
                              double rtol = 1e-4) {
  auto want = runReference(before, inputs);
  auto got = runReference(after, inputs);
  ASSERT_TRUE(want.isOk()) << want.status().message();
  ASSERT_TRUE(got.isOk()) << got.status().message();
  ASSERT_EQ(want->size(), got->size());
  for (size_t i = 0; i < want->size(); ++i) {
    auto cmp = compareTensors((*got)[i], (*want)[i], atol, rtol);
    EXPECT_TRUE(cmp.close) << "output " << i << ": " << cmp.message;
  }
}

}  // namespace cagr::rwtest
