// CAGR's own straightforward CPU kernels (f32, OpenMP over all threads):
// the "own.*" kernel family that `cagr profile` measures next to OpenBLAS
// and oneDNN. Honest and simple on purpose: a cache-blocked GEMM with a
// register tile the compiler vectorises, streaming loops for the rest. The
// CPU backend replaces them with tuned code later.
#pragma once

#include <cstdint>
#include <string>

namespace cagr::hw {

/// C[M,N] = A[M,K] * B[K,N]; row-major, contiguous, no aliasing.
void ownGemm(int64_t m, int64_t k, int64_t n, const float* a, const float* b, float* c);

/// Which instruction set the GEMM micro-kernel runs with ("avx512", "avx2+fma", "baseline").
std::string ownGemmIsa();

/// out[bag, :] = sum over p < pooling of table[ids[bag*pooling + p], :]; table is [rows, dim].
void ownGatherSum(const float* table, int64_t dim, const int64_t* ids, int64_t bags, int64_t pooling, float* out);

/// y = relu(a + b) over n elements, `passes` times. Each thread owns one
/// contiguous chunk (the same split as ownFill), so small working sets stay
/// in that core's caches across passes.
void ownEltwiseAddRelu(const float* a, const float* b, float* y, int64_t n, int passes);

/// c = a (STREAM copy) and a = b + s * c (STREAM triad), same chunking.
void ownCopy(const float* a, float* c, int64_t n);
void ownTriad(float* a, const float* b, const float* c, float s, int64_t n);

/// out[r] = sum of x[r, 0:cols]; x is [rows, cols].
void ownRowSums(const float* x, int64_t rows, int64_t cols, float* out);

/// Fills p[0:n] with `value` + a small index pattern, thread-chunked like the
/// streaming kernels (first touch puts each chunk on its thread's node).
void ownFill(float* p, int64_t n, float value);

/// An empty parallel region over all threads (the fork/join cost).
void ownEmptyParallel();

/// Threads the own kernels (and oneDNN, which shares the OpenMP runtime) use.
int ownThreads();
void setOwnThreads(int threads);

}  // namespace cagr::hw
