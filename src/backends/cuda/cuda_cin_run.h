// A cublaslt.cin step on the GPU (see cuda_cin.h): prepared once per batch
// size (chunk size, cuBLASLt descriptors and algorithms for the full and
// the last chunk), then enqueued into the CUDA graph being captured: W
// rounded once, then per chunk the outer-product kernel, one cuBLASLt
// matmul and the transpose + bias kernel, all on the step's stream, in a
// scratch buffer the executable shares between the CIN steps of a stream.
#pragma once

#include <cublasLt.h>
#include <cuda_runtime.h>

#include <functional>
#include <memory>
#include <string>

#include "backends/cuda/cuda_blas.h"
#include "backends/cuda/cuda_cin.h"

namespace cagr::cuda {

/// Chunk budget in bytes: $CAGR_CIN_CHUNK_KB KiB when set (> 0), else kCinChunkBudget.
size_t cinChunkBudget();

class PreparedCin {
 public:
  struct Kernels {  // the module's functions and launch rules (Program::kernels)
    cudaKernel_t w = nullptr, z = nullptr, out = nullptr;
    std::function<Launch(const std::vector<int64_t>&)> wLaunch, zLaunch, outLaunch;
  };
  struct Buffers {
    const void* xk = nullptr;
    const void* x0 = nullptr;
    const void* w = nullptr;
    const void* bias = nullptr;  // nullptr: no bias
    void* out = nullptr;
  };
  /// `where` names the step in errors.
  static StatusOr<std::unique_ptr<PreparedCin>> create(BlasContext& ctx, const CinGemm& c, Kernels k,
                                                       const Buffers& buf, int64_t batch, size_t workspaceBytes,
                                                       const std::string& where);
  ~PreparedCin();
  PreparedCin(const PreparedCin&) = delete;
  PreparedCin& operator=(const PreparedCin&) = delete;

  /// Bytes of scratch enqueue() needs.
  size_t scratchBytes() const { return scratch_; }
  /// " [4096 x (16x4400 -> 200) bf16, 19 chunks of 218]" for kernelReport.
  std::string shapeText() const;
  /// Enqueues the layer on `stream` with the stream's cuBLASLt `workspace`
  /// and `scratch` (scratchBytes(), 256-aligned).
  Status enqueue(cudaStream_t stream, void* workspace, void* scratch) const;

 private:
  PreparedCin() = default;
  Status prepareGemm(int part, int64_t rows);
  Status launch(cudaKernel_t fn, const Launch& l, void** args, cudaStream_t s, const std::string& what) const;

  BlasContext* ctx_ = nullptr;
  CinGemm c_;
  Kernels k_;
  Buffers buf_;
  int64_t batch_ = 0, rows_ = 0;  // samples in all, per chunk
  size_t workspaceBytes_ = 0, scratch_ = 0;
  size_t zOffset_ = 0, yOffset_ = 0;  // in the scratch (Wq first)
  cublasComputeType_t compute_ = CUBLAS_COMPUTE_32F;
  cudaDataType_t element_ = CUDA_R_32F;
  cublasLtMatmulDesc_t desc_ = nullptr;
  cublasLtMatrixLayout_t layoutW_ = nullptr;
  cublasLtMatrixLayout_t layoutZ_[2] = {nullptr, nullptr}, layoutY_[2] = {nullptr, nullptr};  // full, last chunk
  cublasLtMatmulAlgo_t algo_[2] = {};
  std::string where_;
};

}  // namespace cagr::cuda
