// Library GEMM steps on the GPU: one cuBLASLt matmul (bias / ReLU / GELU
// epilogue, addend as beta*C, the plan's math mode as the compute type,
// algorithm from cublasLtMatmulAlgoGetHeuristic cached per shape) or one
// cuBLAS strided-batched GEMM, prepared once per batch size with its
// device pointers and enqueued into the CUDA graph being captured.
#pragma once

#include <cublasLt.h>
#include <cublas_v2.h>

#include <map>
#include <memory>
#include <string>

#include "backends/cuda/cuda_gemm.h"
#include "cagr/status.h"

namespace cagr::cuda {

/// The library handles of one executable and the algorithms chosen so far.
class BlasContext {
 public:
  static StatusOr<std::unique_ptr<BlasContext>> create();
  ~BlasContext();
  BlasContext(const BlasContext&) = delete;
  BlasContext& operator=(const BlasContext&) = delete;

  cublasLtHandle_t lt() const { return lt_; }
  cublasHandle_t blas() const { return blas_; }
  /// Heuristic results by call description (one heuristic query per shape).
  std::map<std::string, cublasLtMatmulAlgo_t>& algos() { return algos_; }

 private:
  BlasContext() = default;
  cublasLtHandle_t lt_ = nullptr;
  cublasHandle_t blas_ = nullptr;
  std::map<std::string, cublasLtMatmulAlgo_t> algos_;
};

/// Device pointers of one call, in the row-major product's terms.
struct GemmBuffers {
  const void* a = nullptr;  // Y = A * B
  const void* b = nullptr;
  const void* bias = nullptr;
  const void* addend = nullptr;
  void* out = nullptr;
};

/// A library GEMM ready to enqueue: descriptors, pointers and algorithm.
class PreparedGemm {
 public:
  /// `where` names the step in errors ("step 3 'fc1' (Gemm)").
  static StatusOr<std::unique_ptr<PreparedGemm>> create(BlasContext& ctx, const LibraryGemm& p,
                                                        const ColumnMajorGemm& c, const GemmBuffers& buf,
                                                        size_t workspaceBytes, const std::string& where);
  ~PreparedGemm();
  PreparedGemm(const PreparedGemm&) = delete;
  PreparedGemm& operator=(const PreparedGemm&) = delete;

  /// Enqueues the call on `stream` with `workspace` (one per stream).
  Status enqueue(cudaStream_t stream, void* workspace) const;

 private:
  PreparedGemm() = default;
  Status prepareLt(BlasContext& ctx, const LibraryGemm& p, const ColumnMajorGemm& c);

  BlasContext* ctx_ = nullptr;
  GemmLibrary library_ = GemmLibrary::kCublasLt;
  ColumnMajorGemm call_;
  cublasComputeType_t compute_ = CUBLAS_COMPUTE_32F;
  float alpha_ = 1, beta_ = 0;
  const void* a_ = nullptr;  // the call's A and B (the product's B and A)
  const void* b_ = nullptr;
  const void* c_ = nullptr;
  void* d_ = nullptr;
  size_t workspaceBytes_ = 0;
  cublasLtMatmulDesc_t desc_ = nullptr;
  cublasLtMatrixLayout_t layoutA_ = nullptr, layoutB_ = nullptr, layoutC_ = nullptr, layoutD_ = nullptr;
  cublasLtMatmulAlgo_t algo_{};
  std::string where_;
};

/// cuBLAS compute type of a plan math precision (tf32 -> FAST_TF32, bf16 ->
/// FAST_16BF, f16 -> FAST_16F: f32 operands, f32 accumulation).
cublasComputeType_t computeType(Precision math);

}  // namespace cagr::cuda
