// cuBLAS and cuBLASLt, loaded at run time (dlopen) so that cagr-profile-cuda
// links nothing but the static CUDA runtime: the binary starts on a machine
// without cuBLAS on its loader path (and reports "no CUDA device" on one
// without a GPU) and finds libcublas.so.13 where the CUDA toolkit or the
// nvidia-cublas Python wheel put it.
#pragma once

#include <cublasLt.h>
#include <cublas_v2.h>

#include <string>

#include "cagr/status.h"

namespace cagr::cuda {

/// The entry points the profiler uses; types come from the headers.
struct CublasApi {
  decltype(&cublasCreate_v2) create = nullptr;
  decltype(&cublasDestroy_v2) destroy = nullptr;
  decltype(&cublasSetStream_v2) setStream = nullptr;
  decltype(&cublasSetMathMode) setMathMode = nullptr;
  decltype(&cublasGetVersion_v2) getVersion = nullptr;
  decltype(&cublasSgemm_v2) sgemm = nullptr;
  // cublasGemmEx is overloaded in C++ (a legacy cudaDataType computeType
  // variant): the exported C entry point is this one.
  using GemmExFn = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int, const void*,
                                      const void*, cudaDataType, int, const void*, cudaDataType, int, const void*,
                                      void*, cudaDataType, int, cublasComputeType_t, cublasGemmAlgo_t);
  GemmExFn gemmEx = nullptr;

  decltype(&cublasLtCreate) ltCreate = nullptr;
  decltype(&cublasLtDestroy) ltDestroy = nullptr;
  decltype(&cublasLtGetVersion) ltGetVersion = nullptr;
  decltype(&cublasLtMatmul) ltMatmul = nullptr;
  decltype(&cublasLtMatmulDescCreate) ltDescCreate = nullptr;
  decltype(&cublasLtMatmulDescDestroy) ltDescDestroy = nullptr;
  decltype(&cublasLtMatmulDescSetAttribute) ltDescSetAttribute = nullptr;
  decltype(&cublasLtMatrixLayoutCreate) ltLayoutCreate = nullptr;
  decltype(&cublasLtMatrixLayoutDestroy) ltLayoutDestroy = nullptr;
  decltype(&cublasLtMatmulPreferenceCreate) ltPrefCreate = nullptr;
  decltype(&cublasLtMatmulPreferenceDestroy) ltPrefDestroy = nullptr;
  decltype(&cublasLtMatmulPreferenceSetAttribute) ltPrefSetAttribute = nullptr;
  decltype(&cublasLtMatmulAlgoGetHeuristic) ltAlgoGetHeuristic = nullptr;

  std::string cublasPath;  // the file dlopen loaded
  std::string cublasLtPath;
};

/// Loads libcublasLt.so.13 and libcublas.so.13 once (later calls return the
/// same table). Search order: $CAGR_CUBLAS_DIR, the loader path, $CUDA_HOME
/// and $CUDA_PATH, /usr/local/cuda*/lib64, the nvidia-cublas wheel under
/// the Python site-packages folders. The error lists every place tried.
StatusOr<const CublasApi*> loadCublas();

/// "13.0.2" from a cublasGetVersion / cublasLtGetVersion number.
std::string cublasVersionString(int v);

/// Status for a cuBLAS / cuBLASLt return code.
Status cublasStatus(cublasStatus_t s, const std::string& what);

}  // namespace cagr::cuda
