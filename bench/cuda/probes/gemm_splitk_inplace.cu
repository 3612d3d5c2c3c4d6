// Probe (bench/cuda/README.md): cuBLASLt fp32 GEMM + bias + ReLU at small batch, heuristic picks by
// workspace limit and reduction-scheme mask (out-of-place split-K needs splits x M x N floats of
// workspace; in-place split-K sums into the output and needs only counters).
// nvcc -O2 -arch=sm_90a -std=c++17 gemm_splitk_inplace.cu -o gemm_splitk_inplace -lcublasLt
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
int main() {
  cublasLtHandle_t lt;
  CK(cublasLtCreate(&lt));
  cudaStream_t s;
  CK(cudaStreamCreate(&s));
  const size_t WSB = 32 << 20;
  void* ws;
  CK(cudaMalloc(&ws, WSB));
  struct Sh {
    long M, N, K;
  } shapes[] = {{256, 400, 352}, {256, 400, 400}, {256, 512, 13}, {256, 256, 512}, {256, 512, 367}};
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  for (auto& sh : shapes) {
    float *x, *w, *y, *bias;
    CK(cudaMalloc(&x, sh.M * sh.K * 4));
    CK(cudaMalloc(&w, sh.N * sh.K * 4));
    CK(cudaMalloc(&y, sh.M * sh.N * 4));
    CK(cudaMalloc(&bias, sh.N * 4));
    std::vector<float> hx(sh.M * sh.K), hw(sh.N * sh.K), hb(sh.N);
    for (auto& v : hx) v = (rand() % 2001 - 1000) / 1000.f;
    for (auto& v : hw) v = (rand() % 2001 - 1000) / 1000.f;
    for (auto& v : hb) v = (rand() % 2001 - 1000) / 1000.f;
    CK(cudaMemcpy(x, hx.data(), hx.size() * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(w, hw.data(), hw.size() * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(bias, hb.data(), hb.size() * 4, cudaMemcpyHostToDevice));
    // row-major Y[M,N] = relu(X W^T + b), W stored [K,N] (flipped): column-major Y^T = W^T(N x K, ld N) X^T
    cublasLtMatmulDesc_t d;
    CK(cublasLtMatmulDescCreate(&d, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    cublasOperation_t tn = CUBLAS_OP_N;
    CK(cublasLtMatmulDescSetAttribute(d, CUBLASLT_MATMUL_DESC_TRANSA, &tn, sizeof(tn)));
    CK(cublasLtMatmulDescSetAttribute(d, CUBLASLT_MATMUL_DESC_TRANSB, &tn, sizeof(tn)));
    cublasLtEpilogue_t ep = CUBLASLT_EPILOGUE_RELU_BIAS;
    CK(cublasLtMatmulDescSetAttribute(d, CUBLASLT_MATMUL_DESC_EPILOGUE, &ep, sizeof(ep)));
    CK(cublasLtMatmulDescSetAttribute(d, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof(bias)));
    cublasLtMatrixLayout_t la, lb, lc;
    CK(cublasLtMatrixLayoutCreate(&la, CUDA_R_32F, sh.N, sh.K, sh.N));
    CK(cublasLtMatrixLayoutCreate(&lb, CUDA_R_32F, sh.K, sh.M, sh.K));
    CK(cublasLtMatrixLayoutCreate(&lc, CUDA_R_32F, sh.N, sh.M, sh.N));
    float al = 1, be = 0;
    std::vector<float> ref;
    auto run = [&](const cublasLtMatmulAlgo_t& algo, size_t wsb, float* errOut) -> float {
      if (cublasLtMatmul(lt, d, &al, w, la, x, lb, &be, y, lc, y, lc, &algo, ws, wsb, s) != 0) return 1e30f;
      CK(cudaStreamSynchronize(s));
      std::vector<float> h(sh.M * sh.N);
      CK(cudaMemcpy(h.data(), y, h.size() * 4, cudaMemcpyDeviceToHost));
      if (ref.empty()) ref = h;
      float e = 0;
      for (size_t i = 0; i < h.size(); ++i) e = std::max(e, std::fabs(h[i] - ref[i]));
      *errOut = e;
      // a CUDA graph of 20 back-to-back calls, as in a plan
      cudaGraph_t g;
      cudaGraphExec_t ge;
      CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
      for (int i = 0; i < 20; ++i) cublasLtMatmul(lt, d, &al, w, la, x, lb, &be, y, lc, y, lc, &algo, ws, wsb, s);
      CK(cudaStreamEndCapture(s, &g));
      CK(cudaGraphInstantiate(&ge, g, 0));
      CK(cudaGraphLaunch(ge, s));
      CK(cudaStreamSynchronize(s));
      float best = 1e30f;
      for (int r = 0; r < 5; ++r) {
        cudaEventRecord(a, s);
        CK(cudaGraphLaunch(ge, s));
        cudaEventRecord(b, s);
        cudaEventSynchronize(b);
        float ms;
        cudaEventElapsedTime(&ms, a, b);
        best = std::min(best, ms * 1000 / 20);
      }
      cudaGraphExecDestroy(ge);
      cudaGraphDestroy(g);
      return best;
    };
    struct V {
      const char* name;
      uint64_t limit;
      uint32_t mask;
    } vs[] = {{"any<=32MB", WSB, CUBLASLT_REDUCTION_SCHEME_MASK},
              {"none<=0", 0, CUBLASLT_REDUCTION_SCHEME_MASK},
              {"inplace<=64KB", 64 << 10, CUBLASLT_REDUCTION_SCHEME_INPLACE | CUBLASLT_REDUCTION_SCHEME_NONE},
              {"inplace<=1MB", 1 << 20, CUBLASLT_REDUCTION_SCHEME_INPLACE | CUBLASLT_REDUCTION_SCHEME_NONE},
              {"any<=1MB", 1 << 20, CUBLASLT_REDUCTION_SCHEME_MASK}};
    for (auto& v : vs) {
      cublasLtMatmulPreference_t p;
      CK(cublasLtMatmulPreferenceCreate(&p));
      CK(cublasLtMatmulPreferenceSetAttribute(p, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &v.limit, sizeof(v.limit)));
      CK(cublasLtMatmulPreferenceSetAttribute(p, CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK, &v.mask, sizeof(v.mask)));
      cublasLtMatmulHeuristicResult_t hr[8];
      int f = 0;
      cublasLtMatmulAlgoGetHeuristic(lt, d, la, lb, lc, lc, p, 8, hr, &f);
      printf("%ldx%ldx%ld %-14s:", sh.M, sh.N, sh.K, v.name);
      for (int i = 0; i < f && i < 4; ++i) {
        int sk = 0, red = 0;
        size_t sz;
        cublasLtMatmulAlgoConfigGetAttribute(&hr[i].algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &sk, 4, &sz);
        cublasLtMatmulAlgoConfigGetAttribute(&hr[i].algo, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, &red, 4, &sz);
        float err = 0;
        float us = run(hr[i].algo, v.limit, &err);
        printf(" [sk%d red%d ws%zuB %.2fus err%.1e]", sk, red, hr[i].workspaceSize, us, err);
      }
      printf("\n");
      cublasLtMatmulPreferenceDestroy(p);
    }
    // forced in-place split-K on the 32MB first pick
    {
      cublasLtMatmulPreference_t p;
      CK(cublasLtMatmulPreferenceCreate(&p));
      uint64_t l = WSB;
      CK(cublasLtMatmulPreferenceSetAttribute(p, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &l, sizeof(l)));
      cublasLtMatmulHeuristicResult_t hr[1];
      int f = 0;
      cublasLtMatmulAlgoGetHeuristic(lt, d, la, lb, lc, lc, p, 1, hr, &f);
      printf("%ldx%ldx%ld forced inplace:", sh.M, sh.N, sh.K);
      for (int sk : {2, 3, 4, 6, 8})
        for (int red : {(int)CUBLASLT_REDUCTION_SCHEME_INPLACE, (int)CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE}) {
          cublasLtMatmulAlgo_t al2 = hr[0].algo;
          cublasLtMatmulAlgoConfigSetAttribute(&al2, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &sk, 4);
          cublasLtMatmulAlgoConfigSetAttribute(&al2, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, &red, 4);
          cublasLtMatmulHeuristicResult_t chk;
          if (cublasLtMatmulAlgoCheck(lt, d, la, lb, lc, lc, &al2, &chk) != 0) {
            printf(" [sk%d red%d n/a]", sk, red);
            continue;
          }
          float err = 0;
          float us = run(al2, WSB, &err);
          printf(" [sk%d red%d ws%zuB %.2fus err%.1e]", sk, red, chk.workspaceSize, us, err);
        }
      printf("\n");
      cublasLtMatmulPreferenceDestroy(p);
    }
    fflush(stdout);
    cudaFree(x);
    cudaFree(w);
    cudaFree(y);
    cudaFree(bias);
  }
}
