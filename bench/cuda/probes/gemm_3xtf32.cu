// Probe (bench/cuda/FINDINGS.md): IEEE fp32 SGEMM vs 3xTF32 (operands split into tf32 hi / lo, K tripled) on cuBLASLt.
// nvcc -O2 -arch=sm_90a -std=c++17 gemm_3xtf32.cu -o gemm_3xtf32 -lcublasLt
#include <cublasLt.h>
#include <cuda_runtime.h>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <random>
#include <algorithm>
#include <cmath>
#define CK(x) do { auto e_ = (x); if (e_ != 0) { printf("ERR %s:%d %d\n", __FILE__, __LINE__, (int)e_); exit(1);} } while (0)
__device__ __forceinline__ float tf32r(float x) { unsigned u; asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(u) : "f"(x)); return __uint_as_float(u); }
// X [M,K] -> Xs [M, 3*Kp]: hi | lo | hi  (zero pads)
__global__ void split3(const float* x, float* xs, long M, int K, int Kp) {
  long i = blockIdx.x * (long)blockDim.x + threadIdx.x; if (i >= M * (long)Kp) return;
  long r = i / Kp; int c = i % Kp;
  float v = c < K ? x[r * K + c] : 0.f; float h = tf32r(v), l = tf32r(v - h);
  float* o = xs + r * 3L * Kp; o[c] = h; o[Kp + c] = l; o[2 * Kp + c] = h;
}
__global__ void split2(const float* x, float* xs, long M, int K, int Kp) {
  long i = blockIdx.x * (long)blockDim.x + threadIdx.x; if (i >= M * (long)Kp) return;
  long r = i / Kp; int c = i % Kp;
  float v = c < K ? x[r * K + c] : 0.f; float h = tf32r(v), l = tf32r(v - h);
  float* o = xs + r * 2L * Kp; o[c] = h; o[Kp + c] = l;
}
struct Gemm { cublasLtMatmulDesc_t d; cublasLtMatrixLayout_t a, b, c; std::vector<cublasLtMatmulHeuristicResult_t> r; };
// row-major Y[M,N] = X[M,K'] W[N,K']^T  -> column-major Y^T[N,M] = W[N,K'](as col-major K'xN, transA) * X^T
Gemm make(cublasLtHandle_t lt, long M, long N, long K, long ldx, long ldw, cublasComputeType_t ct, int epi) {
  Gemm g; CK(cublasLtMatmulDescCreate(&g.d, ct, CUDA_R_32F));
  cublasOperation_t t = CUBLAS_OP_T, n = CUBLAS_OP_N;
  CK(cublasLtMatmulDescSetAttribute(g.d, CUBLASLT_MATMUL_DESC_TRANSA, &t, sizeof(t)));
  CK(cublasLtMatmulDescSetAttribute(g.d, CUBLASLT_MATMUL_DESC_TRANSB, &n, sizeof(n)));
  cublasLtEpilogue_t e = epi ? CUBLASLT_EPILOGUE_RELU : CUBLASLT_EPILOGUE_DEFAULT;
  CK(cublasLtMatmulDescSetAttribute(g.d, CUBLASLT_MATMUL_DESC_EPILOGUE, &e, sizeof(e)));
  CK(cublasLtMatrixLayoutCreate(&g.a, CUDA_R_32F, K, N, ldw));
  CK(cublasLtMatrixLayoutCreate(&g.b, CUDA_R_32F, K, M, ldx));
  CK(cublasLtMatrixLayoutCreate(&g.c, CUDA_R_32F, N, M, N));
  cublasLtMatmulPreference_t p; CK(cublasLtMatmulPreferenceCreate(&p)); uint64_t ws = 32 << 20;
  CK(cublasLtMatmulPreferenceSetAttribute(p, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof(ws)));
  g.r.resize(8); int f = 0;
  CK(cublasLtMatmulAlgoGetHeuristic(lt, g.d, g.a, g.b, g.c, g.c, p, 8, g.r.data(), &f)); g.r.resize(f);
  return g;
}
void* WS;
void run(cublasLtHandle_t lt, Gemm& g, int i, const float* w, const float* x, float* y, float beta, cudaStream_t s) {
  float al = 1;
  CK(cublasLtMatmul(lt, g.d, &al, w, g.a, x, g.b, &beta, y, g.c, y, g.c, &g.r[i].algo, WS, 32 << 20, s));
}
template <class F> float timeGraph(F f, cudaStream_t s, int reps) {
  cudaGraph_t gr; cudaGraphExec_t ge; CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  for (int i = 0; i < reps; ++i) f(); CK(cudaStreamEndCapture(s, &gr)); CK(cudaGraphInstantiate(&ge, gr, 0));
  CK(cudaGraphLaunch(ge, s)); CK(cudaStreamSynchronize(s));
  cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b); float best = 1e30;
  for (int k = 0; k < 5; ++k) { cudaEventRecord(a, s); CK(cudaGraphLaunch(ge, s)); cudaEventRecord(b, s); cudaEventSynchronize(b);
    float ms; cudaEventElapsedTime(&ms, a, b); best = std::min(best, ms / reps); }
  cudaGraphExecDestroy(ge); cudaGraphDestroy(gr); return best * 1000;  // us
}
void hostSplit(const std::vector<float>& w, std::vector<float>& o, long N, int K, int Kp, int parts /*3: hi,hi,lo  2w: hi,hi (and lo separately)*/) {
  o.assign(N * (long)parts * Kp, 0.f);
  for (long n = 0; n < N; ++n) for (int k = 0; k < K; ++k) {
    float v = w[n * K + k]; unsigned u; memcpy(&u, &v, 4); u = (u + 0x1000u) & 0xffffe000u; float h; memcpy(&h, &u, 4);
    float l = v - h; memcpy(&u, &l, 4); u = (u + 0x1000u) & 0xffffe000u; memcpy(&l, &u, 4);
    float* r = &o[n * (long)parts * Kp]; r[k] = h; r[Kp + k] = h; if (parts == 3) r[2 * Kp + k] = l;
  }
}
int main(int argc, char** argv) {
  cublasLtHandle_t lt; CK(cublasLtCreate(&lt)); cudaStream_t s; cudaStreamCreate(&s); CK(cudaMalloc(&WS, 32 << 20));
  long shapes[][3] = {{4096, 512, 367}, {4096, 256, 512}, {4096, 512, 256}, {4096, 400, 400}, {4096, 400, 352}, {4096, 1024, 512},
                      {256, 512, 367}, {256, 256, 512}, {256, 400, 400}, {16384, 200, 4400}, {65536, 200, 484}, {4096, 1, 256}};
  std::mt19937 rng(1); std::normal_distribution<float> nd(0, 1);
  for (auto& sh : shapes) {
    long M = sh[0], N = sh[1]; int K = sh[2]; int Kp = (K + 3) / 4 * 4;
    std::vector<float> hx(M * K), hw(N * K); for (auto& v : hx) v = nd(rng); for (auto& v : hw) v = nd(rng) / sqrtf(K);
    std::vector<float> w3, w2, wl(N * (long)Kp, 0.f); hostSplit(hw, w3, N, K, Kp, 3); hostSplit(hw, w2, N, K, Kp, 2);
    for (long n = 0; n < N; ++n) for (int k = 0; k < K; ++k) wl[n * Kp + k] = w3[n * 3L * Kp + 2 * Kp + k];
    float *x, *w, *xs, *w3d, *w2d, *wld, *y, *y3;
    CK(cudaMalloc(&x, M * K * 4)); CK(cudaMalloc(&w, N * K * 4)); CK(cudaMalloc(&xs, M * 3L * Kp * 4)); CK(cudaMalloc(&w3d, w3.size() * 4));
    CK(cudaMalloc(&w2d, w2.size() * 4)); CK(cudaMalloc(&wld, wl.size() * 4)); CK(cudaMalloc(&y, M * N * 4)); CK(cudaMalloc(&y3, M * N * 4));
    cudaMemcpy(x, hx.data(), M * K * 4, cudaMemcpyHostToDevice); cudaMemcpy(w, hw.data(), N * K * 4, cudaMemcpyHostToDevice);
    cudaMemcpy(w3d, w3.data(), w3.size() * 4, cudaMemcpyHostToDevice); cudaMemcpy(w2d, w2.data(), w2.size() * 4, cudaMemcpyHostToDevice);
    cudaMemcpy(wld, wl.data(), wl.size() * 4, cudaMemcpyHostToDevice);
    Gemm f = make(lt, M, N, K, K, K, CUBLAS_COMPUTE_32F, 1);
    Gemm t = make(lt, M, N, K, K, K, CUBLAS_COMPUTE_32F_FAST_TF32, 1);
    Gemm g3 = make(lt, M, N, 3L * Kp, 3L * Kp, 3L * Kp, CUBLAS_COMPUTE_32F_FAST_TF32, 1);
    Gemm g2a = make(lt, M, N, 2L * Kp, 2L * Kp, 2L * Kp, CUBLAS_COMPUTE_32F_FAST_TF32, 0);
    Gemm g2b = make(lt, M, N, Kp, 2L * Kp, Kp, CUBLAS_COMPUTE_32F_FAST_TF32, 1);
    int reps = M * N * (long)K > 4e9 ? 5 : 50; int thr = 256; long blocks = (M * Kp + thr - 1) / thr;
    float bf = 1e30, bt = 1e30, b3 = 1e30, b2 = 1e30, f0 = 0; int i3 = 0;
    for (int i = 0; i < (int)f.r.size(); ++i) { float u = timeGraph([&] { run(lt, f, i, w, x, y, 0, s); }, s, reps); if (i == 0) f0 = u; bf = std::min(bf, u); }
    for (int i = 0; i < (int)t.r.size(); ++i) bt = std::min(bt, timeGraph([&] { run(lt, t, i, w, x, y, 0, s); }, s, reps));
    for (int i = 0; i < (int)g3.r.size(); ++i) { float u = timeGraph([&] { split3<<<blocks, thr, 0, s>>>(x, xs, M, K, Kp); run(lt, g3, i, w3d, xs, y3, 0, s); }, s, reps); if (u < b3) { b3 = u; i3 = i; } }
    float sp = timeGraph([&] { split3<<<blocks, thr, 0, s>>>(x, xs, M, K, Kp); }, s, reps);
    int i2a = 0;
    for (int i = 0; i < (int)g2a.r.size(); ++i) { float u = timeGraph([&] { run(lt, g2a, i, w2d, xs, y3, 0, s); }, s, reps); if (u < b2) { b2 = u; i2a = i; } }
    float two = timeGraph([&] { split2<<<blocks, thr, 0, s>>>(x, xs, M, K, Kp); run(lt, g2a, i2a, w2d, xs, y3, 0, s); run(lt, g2b, 0, wld, xs, y3, 1, s); }, s, reps);
    // accuracy on rows sample: fp32 IEEE (bf best=algo0) and 3x vs fp64
    run(lt, f, 0, w, x, y, 0, s); cudaStreamSynchronize(s); std::vector<float> hy(M * N), hy3(M * N), hyt(M * N);
    cudaMemcpy(hy.data(), y, M * N * 4, cudaMemcpyDeviceToHost);
    split3<<<blocks, thr, 0, s>>>(x, xs, M, K, Kp); run(lt, g3, i3, w3d, xs, y3, 0, s); cudaStreamSynchronize(s);
    cudaMemcpy(hy3.data(), y3, M * N * 4, cudaMemcpyDeviceToHost);
    run(lt, t, 0, w, x, y, 0, s); cudaStreamSynchronize(s); cudaMemcpy(hyt.data(), y, M * N * 4, cudaMemcpyDeviceToHost);
    double ef = 0, e3 = 0, et = 0, sc = 0;
    for (long m = 0; m < M; m += std::max(1L, M / 64)) for (long n = 0; n < N; ++n) {
      double r = 0; for (int k = 0; k < K; ++k) r += (double)hx[m * K + k] * hw[n * K + k]; r = std::max(r, 0.0);
      ef = std::max(ef, fabs(hy[m * N + n] - r)); e3 = std::max(e3, fabs(hy3[m * N + n] - r)); et = std::max(et, fabs(hyt[m * N + n] - r)); sc = std::max(sc, fabs(r)); }
    double gf = 2.0 * M * N * K / 1e3;
    printf("%ldx%ldx%d: fp32 first %.1f best %.1f us (%.1f TF) | tf32 %.1f | 3xtf32 split+gemm %.1f (split %.1f) | 2-gemm %.1f (%.1f+..) | maxerr/scale fp32 %.2e 3x %.2e tf32 %.2e\n",
           M, N, K, f0, bf, gf / bf / 1e3, bt, b3, sp, two, b2, ef / sc, e3 / sc, et / sc);
    fflush(stdout);
    cudaFree(x); cudaFree(w); cudaFree(xs); cudaFree(w3d); cudaFree(w2d); cudaFree(wld); cudaFree(y); cudaFree(y3);
  }
}
