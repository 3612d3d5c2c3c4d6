// Two chained CIN layers with sum-pooled outputs, as xDeepFM pools its
// layers once the importer pushed the sum through their concat; shared by
// the pooled-tail tests (rewrite, codegen, GPU).
#pragma once

#include <string>

#include "cpu_test_util.h"

namespace cagr::rectest {

inline Attrs sumOverLastAxis() {
  Attrs a;
  a.set("axes", std::vector<int64_t>{-1});
  a.set("keepdims", int64_t{0});
  return a;
}

// x [B, 6, d]; c1 = CIN(x, x, w1 [o1, 36], b1) [B, o1, d]; r1 = Relu(c1); p1 = sum_d r1 [B, o1];
// c2 = CIN(r1, x, w2 [o2, 6 * o1]) [B, o2, d]; p2 = sum_d c2 [B, o2]; out = Concat(p1, p2) [B, o1 + o2].
// With `kernel` ("nvrtc.cin" / "cublaslt.cin"): {c1, r1, p1} and {c2, p2} fused on it, CINs in `math`
// (r1 stays a group output: c2 reads it; c2's map is never written).
inline Graph pooledCinLayers(int64_t d = 8, const std::string& kernel = "", Precision math = Precision::kF32,
                             int64_t o1 = 40, int64_t o2 = 24) {
  Builder b;
  ValueId x = b.input("x", DType::kF32, {kBatch, 6, d});
  ValueId c1 = b.op(OpKind::kCIN, {x, x, b.constant("w1", {o1, 36}, 1), b.constant("b1", {o1}, 2)}, "c1");
  ValueId r1 = b.op(OpKind::kRelu, {c1}, "r1");
  ValueId p1 = b.op(OpKind::kReduceSum, {r1}, "p1", sumOverLastAxis());
  ValueId c2 = b.op(OpKind::kCIN, {r1, x, b.constant("w2", {o2, 6 * o1}, 3)}, "c2");
  ValueId p2 = b.op(OpKind::kReduceSum, {c2}, "p2", sumOverLastAxis());
  Attrs cat;
  cat.set("axis", int64_t{1});
  b.g.addOutput(b.op(OpKind::kConcat, {p1, p2}, "out", cat));
  if (kernel.empty()) return b.g;
  b.group({"c1", "r1", "p1"}, 0, kernel);
  b.group({"c2", "p2"}, 1, kernel);
  for (Node& n : b.g.mutableNodes()) {
    if (n.op == OpKind::kCIN) n.mir.math = math;
  }
  return b.g;
}

}  // namespace cagr::rectest
