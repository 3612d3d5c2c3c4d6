// onednn.matmul: a GEMM group on oneDNN's matmul primitive (brgemm kernels
// on AVX-512 / AVX2) with the longest prefix of the epilogue it can fuse as
// bias / eltwise / binary post-ops; the rest runs in the epilogue loop.
// Primitives are created per shape (M follows the batch) and cached; a
// constant weight with layout `packed` is reordered once into the layout
// the primitive asks for. Shapes oneDNN only has a reference kernel for are
// left to own.gemm (run() says so).
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "backends/cpu/gemm_epilogue.h"
#include "backends/cpu/gemm_kernel.h"

namespace cagr::cpu {

class OneDnnGemm {
 public:
  /// `constB`: B's data when it is a constant shared by every batch (null
  /// otherwise); with `packed` it is held in the primitive's own layout,
  /// reordered now for shape `nominal` (inputs read with `patterns`). `epi`
  /// must outlive the engine.
  static StatusOr<std::unique_ptr<OneDnnGemm>> create(const Epilogue& epi, std::shared_ptr<const Tensor> constB,
                                                      bool packed, const GemmShape& nominal,
                                                      const std::vector<FlatPattern>& patterns);
  ~OneDnnGemm();

  /// Computes the product and the fused prefix of the epilogue into
  /// epi.target(bind, k) and returns k, the number of instructions applied;
  /// -1 when oneDNN has no fast kernel for this shape (nothing was written).
  StatusOr<int> run(const GemmShape& s, const float* a, const float* b, const EpiBinding& bind);
  /// The number of instructions fused at shape `s` with input patterns `p`.
  StatusOr<int> fusedCount(const GemmShape& s, const std::vector<FlatPattern>& p);

 private:
  struct Impl;
  explicit OneDnnGemm(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace cagr::cpu
