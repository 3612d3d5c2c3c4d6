// Probe (bench/cuda/FINDINGS.md): every cuBLASLt fp32 (CUBLAS_COMPUTE_32F) algorithm configuration on a shape, vs the heuristic's first.
// nvcc -O2 -arch=sm_90a -std=c++17 gemm_algo_sweep.cu -o gemm_algo_sweep -lcublasLt
#include <cublasLt.h>
#include <cuda_runtime.h>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <algorithm>
#define CK(x) do { auto e_ = (x); if (e_ != 0) { printf("ERR %s:%d %d\n", __FILE__, __LINE__, (int)e_); exit(1);} } while (0)
void* WS; const size_t WSB = 32 << 20;
struct Cfg { int id, tile, stages, swz, custom, splitk; float us; };
int main() {
  cublasLtHandle_t lt; CK(cublasLtCreate(&lt)); cudaStream_t s; cudaStreamCreate(&s); CK(cudaMalloc(&WS, WSB));
  // row-major Y[M,N] = X[M,K] W^T ; flip=0: W stored [N,K] (call's A transposed), flip=1: W stored [K,N]
  struct Sh { long M, N, K; int flip; } shapes[] = {{32768, 200, 4400, 0}, {32768, 200, 4400, 1}, {65536, 200, 484, 0},
      {4096, 256, 512, 1}, {4096, 512, 367, 1}, {4096, 512, 256, 1}, {4096, 400, 400, 1}, {256, 400, 400, 1}};
  int ids[256], nid = 0;
  CK(cublasLtMatmulAlgoGetIds(lt, CUBLAS_COMPUTE_32F, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, 256, ids, &nid));
  printf("%d algo ids\n", nid);
  cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
  for (auto& sh : shapes) {
    float *x, *w, *y; CK(cudaMalloc(&x, sh.M * sh.K * 4)); CK(cudaMalloc(&w, sh.N * sh.K * 4)); CK(cudaMalloc(&y, sh.M * sh.N * 4));
    cudaMemset(x, 0, sh.M * sh.K * 4); cudaMemset(w, 0, sh.N * sh.K * 4);
    cublasLtMatmulDesc_t d; CK(cublasLtMatmulDescCreate(&d, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    cublasOperation_t ta = sh.flip ? CUBLAS_OP_N : CUBLAS_OP_T, tn = CUBLAS_OP_N;
    CK(cublasLtMatmulDescSetAttribute(d, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof(ta)));
    CK(cublasLtMatmulDescSetAttribute(d, CUBLASLT_MATMUL_DESC_TRANSB, &tn, sizeof(tn)));
    cublasLtMatrixLayout_t la, lb, lc;
    if (sh.flip) CK(cublasLtMatrixLayoutCreate(&la, CUDA_R_32F, sh.N, sh.K, sh.N)); else CK(cublasLtMatrixLayoutCreate(&la, CUDA_R_32F, sh.K, sh.N, sh.K));
    CK(cublasLtMatrixLayoutCreate(&lb, CUDA_R_32F, sh.K, sh.M, sh.K)); CK(cublasLtMatrixLayoutCreate(&lc, CUDA_R_32F, sh.N, sh.M, sh.N));
    float al = 1, be = 0;
    int reps = sh.M * sh.N * sh.K > 1e10 ? 3 : 20;
    auto timeAlgo = [&](const cublasLtMatmulAlgo_t& algo) -> float {
      if (cublasLtMatmul(lt, d, &al, w, la, x, lb, &be, y, lc, y, lc, &algo, WS, WSB, s) != 0) return 1e30f;
      cudaStreamSynchronize(s); float best = 1e30f;
      for (int r = 0; r < 3; ++r) { cudaEventRecord(a, s);
        for (int i = 0; i < reps; ++i) cublasLtMatmul(lt, d, &al, w, la, x, lb, &be, y, lc, y, lc, &algo, WS, WSB, s);
        cudaEventRecord(b, s); cudaEventSynchronize(b); float ms; cudaEventElapsedTime(&ms, a, b); best = std::min(best, ms * 1000 / reps); }
      return best; };
    cublasLtMatmulPreference_t p; CK(cublasLtMatmulPreferenceCreate(&p)); uint64_t ws = WSB;
    CK(cublasLtMatmulPreferenceSetAttribute(p, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof(ws)));
    cublasLtMatmulHeuristicResult_t hr[8]; int f = 0; CK(cublasLtMatmulAlgoGetHeuristic(lt, d, la, lb, lc, lc, p, 8, hr, &f));
    float h0 = timeAlgo(hr[0].algo), hbest = h0; for (int i = 1; i < f; ++i) hbest = std::min(hbest, timeAlgo(hr[i].algo));
    std::vector<Cfg> all; int tried = 0;
    for (int k = 0; k < nid; ++k) {
      cublasLtMatmulAlgo_t algo; if (cublasLtMatmulAlgoInit(lt, CUBLAS_COMPUTE_32F, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, ids[k], &algo) != 0) continue;
      size_t sz = 0; uint32_t tiles[128]; int nt = 0, ns = 0; uint32_t stages[64];
      cublasLtMatmulAlgoCapGetAttribute(&algo, CUBLASLT_ALGO_CAP_TILE_IDS, tiles, sizeof(tiles), &sz); nt = sz / 4; if (nt == 0) { tiles[0] = 0; nt = 1; }
      cublasLtMatmulAlgoCapGetAttribute(&algo, CUBLASLT_ALGO_CAP_STAGES_IDS, stages, sizeof(stages), &sz); ns = sz / 4; if (ns == 0) { stages[0] = 0; ns = 1; }
      int swzMax = 0, custMax = 0; cublasLtMatmulAlgoCapGetAttribute(&algo, CUBLASLT_ALGO_CAP_CTA_SWIZZLING_SUPPORT, &swzMax, sizeof(int), &sz);
      cublasLtMatmulAlgoCapGetAttribute(&algo, CUBLASLT_ALGO_CAP_CUSTOM_OPTION_MAX, &custMax, sizeof(int), &sz);
      for (int t = 0; t < nt; ++t) for (int st = 0; st < ns; ++st) for (int sw = 0; sw <= swzMax; ++sw) for (int cu = 0; cu <= std::min(custMax, 3); ++cu)
      for (int sk : {1, 2}) {
        cublasLtMatmulAlgoConfigSetAttribute(&algo, CUBLASLT_ALGO_CONFIG_TILE_ID, &tiles[t], 4);
        cublasLtMatmulAlgoConfigSetAttribute(&algo, CUBLASLT_ALGO_CONFIG_STAGES_ID, &stages[st], 4);
        cublasLtMatmulAlgoConfigSetAttribute(&algo, CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING, &sw, 4);
        cublasLtMatmulAlgoConfigSetAttribute(&algo, CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION, &cu, 4);
        cublasLtMatmulAlgoConfigSetAttribute(&algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &sk, 4);
        cublasLtMatmulHeuristicResult_t chk; if (cublasLtMatmulAlgoCheck(lt, d, la, lb, lc, lc, &algo, &chk) != 0 || chk.workspaceSize > WSB) continue;
        ++tried; float us = timeAlgo(algo); all.push_back({ids[k], (int)tiles[t], (int)stages[st], sw, cu, sk, us});
      }
    }
    std::sort(all.begin(), all.end(), [](const Cfg& p, const Cfg& q) { return p.us < q.us; });
    double gf = 2.0 * sh.M * sh.N * sh.K / 1e3;
    printf("%ldx%ldx%ld flip%d: heuristic first %.1f us (%.1f TF) best-of-%d %.1f | sweep %d configs, best:", sh.M, sh.N, sh.K, sh.flip, h0, gf / h0 / 1e3, f, hbest, tried);
    for (int i = 0; i < std::min<int>(4, all.size()); ++i) printf(" [id%d tile%d st%d sw%d cu%d sk%d %.1f us %.1f TF]", all[i].id, all[i].tile, all[i].stages, all[i].swz, all[i].custom, all[i].splitk, all[i].us, gf / all[i].us / 1e3);
    printf("\n"); fflush(stdout);
    cudaFree(x); cudaFree(w); cudaFree(y);
  }
}
