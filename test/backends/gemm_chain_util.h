// Two MLP layers for the GEMM-chain tests (groups.cc checkGemmChain): x [B,
// k] -> Gemm (bias) -> ReLU -> Gemm (bias) -> ReLU / Sigmoid, the weights
// as stored by PyTorch ([N, K], transB) or as [K, N]; nodes g1 r1 g2 r2.
// With `kernel`, g1 + r1 and g2 + r2 are two groups on it, or one (`fused`).
#pragma once

#include "cpu_test_util.h"

namespace cagr::rectest {

struct ChainShape {
  int64_t k = 256, n1 = 64, n2 = 16;
  bool transB = true;
  OpKind last = OpKind::kRelu;
};

inline Graph gemmChain(const ChainShape& s, const std::string& kernel = "", bool fused = false) {
  Builder b;
  const Attrs t = s.transB ? attrs({{"transB", int64_t{1}}}) : Attrs{};
  auto w = [&](const char* name, int64_t k, int64_t n, unsigned seed) {
    std::vector<int64_t> shape = s.transB ? std::vector<int64_t>{n, k} : std::vector<int64_t>{k, n};
    return b.g.addConstant(name, uniform(std::move(shape), seed, -0.2f, 0.2f));
  };
  ValueId x = b.input("x", DType::kF32, {kBatch, s.k});
  ValueId y1 = b.op(OpKind::kGemm, {x, w("w1", s.k, s.n1, 1), b.constant("c1", {s.n1}, 2)}, "g1", t);
  ValueId r1 = b.op(OpKind::kRelu, {y1}, "r1");
  ValueId y2 = b.op(OpKind::kGemm, {r1, w("w2", s.n1, s.n2, 3), b.constant("c2", {s.n2}, 4)}, "g2", t);
  b.g.addOutput(b.op(s.last, {y2}, "r2"));
  if (!kernel.empty()) {
    b.group({"g1", "r1"}, 0, kernel);
    b.group({"g2", "r2"}, fused ? 0 : 1, kernel);
  }
  return b.g;
}

}  // namespace cagr::rectest
