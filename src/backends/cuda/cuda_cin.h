// One CIN layer on cuBLASLt (catalog kernel cublaslt.cin, issue 6), the part
// that needs no GPU: out[b,o,d] = bias[o] + sum_k W[o,k] Z[(b,d),k] with the
// outer product Z[(b,d), h*M+m] = xk[b,h,d] * x0[b,m,d] materialised, a
// chunk of the batch at a time, in a bounded scratch buffer, in the GEMM's
// input element type (f32 for f32 / tf32 math, bf16, f16): xk, x0 and W
// rounded to the math precision as the reference executor rounds them, the
// exact product once more to the element type (as nvrtc.cin's wmma path;
// the reference keeps it exact). Per chunk of `rows` samples:
//
//   zKernel  Z[rows*D, ldz]  <- outer product         (generated)
//   GEMM     Y[rows*D, O]    =  Z * Wq^T, f32 out     (cuBLASLt, tensor cores
//                                                       for tf32 / bf16 / f16)
//   outKernel out[b, o, d]   <- Y[(b,d), o] + bias[o] (generated transpose)
//
// wKernel (not for f32 math) writes Wq [O, ldz], W rounded to the element
// type, once per run before the first chunk. The three generated kernels
// live in the plan's NVRTC module but do not follow codegen.h's parameter
// contract (the runtime launches them itself, cuda_cin_run.h):
//   wKernel(const float* w, E* wq)                           grid launch({})
//   zKernel(const float* xk, const float* x0, E* z, long long rows)
//   outKernel(const float* y, const float* bias, float* out, long long rows)
// with xk / x0 / out already offset to the chunk's first sample and bias
// nullptr without one; zKernel and outKernel launch with launch({rows}).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "backends/cuda/codegen.h"

namespace cagr::cuda {

struct CinGemm {
  NodeId node = -1;
  ValueId xk = kNoValue, x0 = kNoValue, w = kNoValue, bias = kNoValue, out = kNoValue;
  int64_t O = 0, H = 0, M = 0, D = 0;
  int64_t ldz = 0;  // row pitch of Z and Wq in elements (K rounded up to 16 bytes)
  Precision math = Precision::kF32;
  size_t elementBytes = 4;  // Z / Wq element: 4 (f32, tf32), 2 (bf16, f16)
  int wKernel = -1;         // indices into Program::kernels (-1: f32 math uses W as it is)
  int zKernel = -1;
  int outKernel = -1;

  int64_t K() const { return H * M; }
  /// Scratch bytes of Wq (0 for f32 math).
  size_t weightBytes() const;
  /// Scratch bytes of one sample's Z and Y rows.
  size_t bytesPerSample() const;
  /// Samples per chunk for `batch` so Z and Y fit `budget` bytes (>= 1).
  int64_t chunkRows(int64_t batch, size_t budget) const;
  /// Scratch bytes a run at `batch` needs (Wq, then Z and Y of one chunk, each 256-aligned).
  size_t scratchBytes(int64_t batch, size_t budget) const;
};

/// Default bound on one chunk's Z and Y (CAGR_CIN_CHUNK_KB, in KiB, overrides it at
/// run time): under the H200's 50 MB L2, so the GEMM reads back the Z that
/// zKernel just wrote mostly from L2.
constexpr size_t kCinChunkBudget = size_t{32} << 20;

namespace gen {
/// Generates the kernels of the CIN node `r` runs on cublaslt.cin into
/// `moduleSource` (shared by CIN layers of the same shape); returns the
/// layer's description with the kernels in `kernels` order: wKernel (not
/// for f32), zKernel, outKernel (indices filled by the caller).
StatusOr<CinGemm> generateCinGemm(const CodegenRequest& r, std::string& moduleSource,
                                  std::vector<GeneratedKernel>& kernels);
}  // namespace gen

}  // namespace cagr::cuda
