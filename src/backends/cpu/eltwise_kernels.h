// Tile kernels of the CPU elementwise program: one op over n contiguous
// elements (a tile the program keeps in L1/L2), plain loops the compiler
// vectorises. Semantics follow the reference kernels (runtime/reference/
// eltwise.cc): transcendental maps are computed in double like the reference,
// except e^x in f32 (Exp, Sigmoid, Softmax), which uses a vectorisable
// polynomial accurate to about 1 ulp. Precondition: eltOpSupport(op) is empty.
#pragma once

#include <bit>
#include <cstdint>
#include <string>

#include "cagr/graph.h"

/// Hot loops get an AVX2 clone next to the baseline build; the dynamic
/// loader picks one per host (GCC function multi-versioning), so the
/// project still compiles without -march flags.
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
#define CAGR_CPU_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define CAGR_CPU_CLONES
#endif

namespace cagr::cpu {

/// e^x in f32: Cephes' degree-5 polynomial after a branch-free range
/// reduction (so loops over it vectorise); 0 below ~-86.6, inf above
/// ln(FLT_MAX), NaN stays NaN.
inline float fastExp(float x) {
  constexpr float kHi = 88.72283905206835f, kLo = -86.6f;
  float xc = x < kHi ? x : kHi;  // NaN -> kHi: the arithmetic below stays finite
  xc = xc > kLo ? xc : kLo;
  float t = xc * 1.44269504088896341f;
  float n = (t + 12582912.0f) - 12582912.0f;  // round to nearest (|t| < 2^22)
  float r = xc - n * 0.693359375f;
  r = r - n * -2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  float y = p * r * r + r + 1.0f;
  // 2^n as 2^(n-1) * 2 keeps n = 128 representable.
  float scale = std::bit_cast<float>(static_cast<uint32_t>(static_cast<int32_t>(n) + 126) << 23);
  y = y * scale * 2.0f;
  y = x > kHi ? __builtin_inff() : y;
  y = x < kLo ? 0.0f : y;
  return x != x ? x : y;
}

/// One operand of a tile op: n elements at p, or p[0] repeated (scalar).
struct TileIn {
  const void* p = nullptr;
  bool scalar = false;
};

/// One elementwise op with its attributes, copied from its node.
struct EltOp {
  OpKind op = OpKind::kIdentity;
  DType in = DType::kF32;   // operand 0's element type (the condition's for Where: operand 1's)
  DType out = DType::kF32;  // the result's
  double a = 0, b = 0;      // LeakyRelu alpha; Clip min, max
  bool tanhGelu = false;
};

/// Empty when runTile supports `op` on its element types, else why not.
std::string eltOpSupport(const EltOp& op);

/// y[0, n) = op(in[0], in[1], in[2]) for the unary, binary, Where, Cast and
/// Identity ops. False on an integer division by zero (y is then partial).
bool runTile(const EltOp& op, const TileIn* in, void* y, int64_t n);

/// Inference BatchNorm over a tile of x [N, C, inner...] starting at flat
/// element `first`: y = (x - mean[c]) * mul[c] + bias[c], computed in double.
void batchNormTile(DType t, const void* x, void* y, int64_t n, int64_t first, int64_t channels, int64_t inner,
                   const double* mean, const double* mul, const double* bias);

/// Rounds f32 y[0, n) to a reduced storage precision (bf16, f16) in place.
void roundTile(float* y, int64_t n, Precision p);

}  // namespace cagr::cpu
