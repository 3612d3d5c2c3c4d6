// own.gemm: CAGR's cache-blocked fp32 GEMM (the kernel `cagr profile`
// measures and the CPU backend runs). B is packed into NR-wide panels (per
// block, or once for a constant weight), an MR x NR register tile the
// vectoriser keeps in registers accumulates, and a callback sees each
// finished C block while it is still in cache (the fused epilogue).
// Preconditions: fp32, C contiguous [batch..., M, N], no aliasing.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

namespace cagr::cpu {

/// One batch dimension of a batched product: its size and the element
/// strides of A and B along it (0 where that operand is broadcast).
struct BatchDim {
  int64_t size = 1, strideA = 0, strideB = 0;
};

/// Y_b[M,N] = A_b[M,K] * B_b[K,N] for every batch index b: element (m,k) of
/// A_b at a + offA(b) + m*ars + k*acs, (k,n) of B_b likewise; Y contiguous.
struct GemmShape {
  int64_t m = 0, n = 0, k = 0;
  int64_t ars = 0, acs = 1, brs = 0, bcs = 1;
  std::vector<BatchDim> batch;  // outermost first

  int64_t batchCount() const;
  /// Element offsets of A_b and B_b for the flat batch index `bi`.
  void batchOffsets(int64_t bi, int64_t& offA, int64_t& offB) const;
  /// Drops size-1 batch dims, merges adjacent ones that stride alike, and
  /// folds the batch into M when B is shared and A's rows continue across it.
  void simplify();
};

/// A weight matrix packed once into the kernel's panel layout.
class PackedB {
 public:
  PackedB() = default;
  /// Packs B[k, n] (element (r, c) at b[r*rs + c*cs]).
  PackedB(const float* b, int64_t rs, int64_t cs, int64_t k, int64_t n);
  bool empty() const { return data_.empty(); }
  int64_t k() const { return k_; }
  int64_t n() const { return n_; }
  /// The packed panels of column block j0 and depth block k0.
  const float* block(int64_t j0, int64_t k0) const;

 private:
  std::vector<float> data_;
  int64_t k_ = 0, n_ = 0;
};

/// Called once per finished C block: batch `bi`, rows [row0, row0+rows),
/// columns [col0, col0+cols). Runs on the thread that computed the block.
using BlockDone = std::function<void(int64_t bi, int64_t row0, int64_t rows, int64_t col0, int64_t cols)>;

/// C = A * B for every batch (OpenMP over batch x blocks). `packed`, when
/// given, replaces B (then B must be the same matrix for every batch).
/// `done` (optional) runs on each finished block.
void ownGemmBatched(const GemmShape& s, const float* a, const float* b, const PackedB* packed, float* c,
                    const BlockDone* done);

/// Which instruction set the micro-kernel runs with ("avx512", "avx2+fma", "baseline").
const char* ownGemmIsaName();

}  // namespace cagr::cpu
