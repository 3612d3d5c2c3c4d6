// Shared scaffolding of the GEMM probes (sgemm_ffma.cu, gemm_splitk_inplace.cu):
// error checks, random operands, the cuBLASLt descriptors of a row-major
// Y[M,N] = relu(X[M,K] W[K,N] + b) and timing as back-to-back calls in a CUDA graph.
#pragma once
#include <cublasLt.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CK(x)                                                \
  do {                                                       \
    auto e_ = (x);                                           \
    if (e_ != 0) {                                           \
      printf("ERR %s:%d %d\n", __FILE__, __LINE__, (int)e_); \
      exit(1);                                               \
    }                                                        \
  } while (0)

// A cuBLASLt handle, a stream and a workspace of `workspaceBytes`.
struct ProbeContext {
  cublasLtHandle_t lt;
  cudaStream_t s;
  void* ws;
  size_t workspaceBytes;
  explicit ProbeContext(size_t bytes = size_t{32} << 20) : workspaceBytes(bytes) {
    CK(cublasLtCreate(&lt));
    CK(cudaStreamCreate(&s));
    CK(cudaMalloc(&ws, bytes));
  }
};

// n uniform values in [-1, 1] (steps of 1e-3) on the host and a device copy.
inline std::vector<float> randomOn(size_t n, float** device) {
  std::vector<float> h(n);
  for (auto& v : h) v = (rand() % 2001 - 1000) / 1000.f;
  CK(cudaMalloc(device, n * 4));
  CK(cudaMemcpy(*device, h.data(), n * 4, cudaMemcpyHostToDevice));
  return h;
}

// cuBLASLt fp32 + bias + ReLU for row-major Y = X W + b with W stored [K, N]:
// column-major Y^T (N x M) = W^T (N x K, ld N) X^T (K x M).
struct BiasReluGemm {
  cublasLtMatmulDesc_t desc;
  cublasLtMatrixLayout_t a, b, c;
  BiasReluGemm(long M, long N, long K, const float* bias) {
    CK(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    cublasOperation_t n = CUBLAS_OP_N;
    CK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &n, sizeof(n)));
    CK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, &n, sizeof(n)));
    cublasLtEpilogue_t ep = CUBLASLT_EPILOGUE_RELU_BIAS;
    CK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &ep, sizeof(ep)));
    CK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof(bias)));
    CK(cublasLtMatrixLayoutCreate(&a, CUDA_R_32F, N, K, N));
    CK(cublasLtMatrixLayoutCreate(&b, CUDA_R_32F, K, M, K));
    CK(cublasLtMatrixLayoutCreate(&c, CUDA_R_32F, N, M, N));
  }
};

// cuBLASLt's first heuristic pick for `g` under a workspace limit of `limit` bytes.
inline cublasLtMatmulHeuristicResult_t firstPick(cublasLtHandle_t lt, const BiasReluGemm& g, uint64_t limit) {
  cublasLtMatmulPreference_t p;
  CK(cublasLtMatmulPreferenceCreate(&p));
  CK(cublasLtMatmulPreferenceSetAttribute(p, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &limit, sizeof(limit)));
  cublasLtMatmulHeuristicResult_t hr[1];
  int found = 0;
  CK(cublasLtMatmulAlgoGetHeuristic(lt, g.desc, g.a, g.b, g.c, g.c, p, 1, hr, &found));
  CK(cublasLtMatmulPreferenceDestroy(p));
  return hr[0];
}

// Per-call microseconds of `calls` back-to-back `call()`s captured in one
// CUDA graph, each of `reps` replays timed with CUDA events; sorted.
template <typename F>
std::vector<float> graphTimesUs(cudaStream_t s, F&& call, int calls = 20, int reps = 15) {
  call();
  CK(cudaStreamSynchronize(s));
  cudaGraph_t g;
  cudaGraphExec_t ge;
  CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  for (int i = 0; i < calls; ++i) call();
  CK(cudaStreamEndCapture(s, &g));
  CK(cudaGraphInstantiate(&ge, g, 0));
  CK(cudaGraphLaunch(ge, s));
  CK(cudaStreamSynchronize(s));
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  std::vector<float> t;
  for (int r = 0; r < reps; ++r) {
    CK(cudaEventRecord(a, s));
    CK(cudaGraphLaunch(ge, s));
    CK(cudaEventRecord(b, s));
    CK(cudaEventSynchronize(b));
    float ms;
    CK(cudaEventElapsedTime(&ms, a, b));
    t.push_back(ms * 1000 / calls);
  }
  std::sort(t.begin(), t.end());
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  cudaGraphExecDestroy(ge);
  cudaGraphDestroy(g);
  return t;
}
