// GEMM micro-benchmarks for the kernels CAGR's CUDA backend chooses from:
// cublas.sgemm (fp32, no TF32), cublas.sgemm_tf32, cublaslt.matmul (fp32
// with the bias + ReLU epilogue) and cublas.gemm_bf16 (bf16 in, fp32
// accumulate, bf16 out). All compute the row-major C[M,N] = A[M,K] B[K,N].
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "hw/cuda/cublas_api.h"
#include "hw/cuda/cuda_common.h"

namespace cagr::cuda {

enum class GemmKind { kSgemm, kSgemmTf32, kLtBiasRelu, kBf16 };
const char* gemmKindName(GemmKind k);  // "cublas.sgemm", ...
std::vector<GemmKind> allGemmKinds();
/// The peak_flops dtype a kernel's best rate stands for: fp32, tf32, bf16.
const char* gemmKindDtype(GemmKind k);

struct GemmDims {
  int64_t m = 1, n = 1, k = 1;
  std::string label() const;  // "m4096 n512 k13"
  double flops() const { return 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k); }
  /// A, B read once and C written once, in `elementBytes`-byte elements.
  double bytes(double elementBytes) const;
};

/// The cost model's class (cost/kernel_class.cc gemmShapeClass(m, n, k)).
std::string gemmClassOf(const GemmDims& d);
/// Profile shapes: the CPU profiler's list, 4096^3 and batch-4096 MLP layers.
std::vector<GemmDims> profileGemmShapes(bool quick);
/// Extra profile shapes for the tensor-core kernels (tf32, bf16): N or K
/// not a multiple of 4 (odd, or 4 mod 8), tiny to large, so that their
/// slow-down is measured apart from the aligned shapes that make the
/// size-class curves (none of them is a validation shape).
std::vector<GemmDims> misalignedGemmShapes(bool quick);
/// Whether kernel `k` runs on tensor cores (tf32, bf16).
bool tensorCoreKind(GemmKind k);
/// Whether N or K of `d` is misaligned for kernel `k` on a matrix unit that
/// wants `alignElements` 16-bit elements (cost/kernel_class.h
/// matrixUnitAlignment); false for fp32 kernels.
bool misalignedFor(GemmKind k, const GemmDims& d, int alignElements);
/// profileGemmShapes then, for buffer sizing, misalignedGemmShapes.
std::vector<GemmDims> allProfileGemmShapes(bool quick);
/// Held-out shapes for --validate (none of them is in profileGemmShapes).
std::vector<GemmDims> validationGemmShapes();
double gemmElementBytes(GemmKind k);

/// cuBLAS handles, cuBLASLt workspace and device buffers big enough for a
/// list of shapes, inputs uniform in [-1, 1] (fp32 and bf16 copies).
class GemmBench {
 public:
  ~GemmBench();
  static StatusOr<std::unique_ptr<GemmBench>> create(const std::vector<GemmDims>& shapes, cudaStream_t stream);

  /// Plans the call (cuBLASLt: descriptors and heuristic algorithm) outside
  /// the timing, then times it per call inside a CUDA-graph replay of
  /// back-to-back calls (CUDA events), as CAGR's CUDA backend runs plans: no
  /// host issue cost hides the GPU time of small calls. Where the library
  /// refuses stream capture, back-to-back launches instead (said on stderr).
  StatusOr<hw::Timing> time(GemmKind k, const GemmDims& d, const GpuTimingPlan& plan);
  /// Runs the largest shape of `shapes` with cublas.sgemm for about
  /// `seconds`, so that clocks have ramped up before the first measurement.
  Status warmUp(const std::vector<GemmDims>& shapes, double seconds);
  /// Every kernel at one odd shape against a float64 host reference
  /// (relative Frobenius error; fp32 1e-5, tf32 5e-3, bf16 3e-2).
  Status checkAll();
  /// "cublas" / "cublaslt" -> "13.1.0 (/usr/local/cuda/lib64/libcublas.so.13)".
  std::vector<std::pair<std::string, std::string>> versions() const;

 private:
  GemmBench() = default;
  struct LtPlan;
  Status makeLtPlan(const GemmDims& d, LtPlan* plan);
  Status enqueue(GemmKind k, const GemmDims& d, const LtPlan* lt);
  /// `calls` back-to-back calls captured into an instantiated graph.
  StatusOr<cudaGraphExec_t> capture(GemmKind k, const GemmDims& d, const LtPlan* lt, int calls);

  const CublasApi* api_ = nullptr;
  cudaStream_t stream_ = nullptr;
  cublasHandle_t fp32_ = nullptr, tf32_ = nullptr, bf16_ = nullptr;
  cublasLtHandle_t lt_ = nullptr;
  DeviceBuffer a_, b_, c_, bias_, abf_, bbf_, cbf_, workspace_;
};

}  // namespace cagr::cuda
