// Probe (bench/cuda/FINDINGS.md): cuBLASLt fp32 GEMM + bias + ReLU at small batch, heuristic picks by
// workspace limit and reduction-scheme mask (out-of-place split-K needs splits x M x N floats of
// workspace; in-place split-K sums into the output and needs only counters); each pick timed as 20
// back-to-back calls in a CUDA graph (best of 5 replays), its largest difference from the first pick.
// nvcc -O2 -arch=sm_90a -std=c++20 gemm_splitk_inplace.cu -o gemm_splitk_inplace -lcublasLt
#include <cmath>

#include "probe_util.cuh"

int main() {
  const auto [lt, s, ws, WSB] = ProbeContext();  // handle, stream, workspace and its bytes
  struct {
    long M, N, K;
  } shapes[] = {{256, 400, 352}, {256, 400, 400}, {256, 512, 13}, {256, 256, 512}, {256, 512, 367}};
  for (auto& sh : shapes) {
    float *x, *w, *y, *bias;
    randomOn(sh.M * sh.K, &x);
    randomOn(sh.N * sh.K, &w);
    randomOn(sh.N, &bias);
    CK(cudaMalloc(&y, sh.M * sh.N * 4));
    BiasReluGemm g(sh.M, sh.N, sh.K, bias);
    float al = 1, be = 0;
    std::vector<float> ref;
    auto run = [&](const cublasLtMatmulAlgo_t& algo, size_t wsb, float* errOut) -> float {
      auto call = [&] {
        return cublasLtMatmul(lt, g.desc, &al, w, g.a, x, g.b, &be, y, g.c, y, g.c, &algo, ws, wsb, s);
      };
      if (call() != 0) return 1e30f;
      CK(cudaStreamSynchronize(s));
      std::vector<float> h(sh.M * sh.N);
      CK(cudaMemcpy(h.data(), y, h.size() * 4, cudaMemcpyDeviceToHost));
      if (ref.empty()) ref = h;
      float e = 0;
      for (size_t i = 0; i < h.size(); ++i) e = std::max(e, std::fabs(h[i] - ref[i]));
      *errOut = e;
      return graphTimesUs(s, call, 20, 5).front();  // as in a plan: back to back in a CUDA graph
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
      cublasLtMatmulAlgoGetHeuristic(lt, g.desc, g.a, g.b, g.c, g.c, p, 8, hr, &f);
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
      const cublasLtMatmulHeuristicResult_t hr[1] = {firstPick(lt, g, WSB)};
      printf("%ldx%ldx%ld forced inplace:", sh.M, sh.N, sh.K);
      for (int sk : {2, 3, 4, 6, 8})
        for (int red : {(int)CUBLASLT_REDUCTION_SCHEME_INPLACE, (int)CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE}) {
          cublasLtMatmulAlgo_t al2 = hr[0].algo;
          cublasLtMatmulAlgoConfigSetAttribute(&al2, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &sk, 4);
          cublasLtMatmulAlgoConfigSetAttribute(&al2, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, &red, 4);
          cublasLtMatmulHeuristicResult_t chk;
          if (cublasLtMatmulAlgoCheck(lt, g.desc, g.a, g.b, g.c, g.c, &al2, &chk) != 0) {
            printf(" [sk%d red%d n/a]", sk, red);
            continue;
          }
          float err = 0;
          float us = run(al2, WSB, &err);
          printf(" [sk%d red%d ws%zuB %.2fus err%.1e]", sk, red, chk.workspaceSize, us, err);
        }
      printf("\n");
    }
    fflush(stdout);
    for (float* q : {x, w, y, bias}) cudaFree(q);
  }
}
