// Probe (bench/cuda/FINDINGS.md): cuBLAS's FP32 emulation on BF16 tensor cores
// (CUBLAS_COMPUTE_32F_EMULATED_16BFX9, emulation strategy EAGER) against IEEE
// SGEMM and plain TF32 on DLRM / DeepFM / xDeepFM GEMM shapes: time per call
// inside a CUDA graph of 20 back-to-back calls, and the largest and mean
// error against a DGEMM reference.
// nvcc -O2 -arch=sm_90a gemm_bf16x9_emulation.cu -o gemm_bf16x9_emulation -lcublas
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cmath>
#include <algorithm>
#define CK(x) do { auto e_ = (x); if (e_ != 0) { printf("ERR %s:%d %d\n", __FILE__, __LINE__, (int)e_); exit(1);} } while (0)
__global__ void fill(float* p, long n, unsigned seed, float sc) { long i = blockIdx.x * (long)blockDim.x + threadIdx.x; if (i < n) { unsigned h = (unsigned)i * 2654435761u ^ seed; h ^= h >> 13; h *= 0x5bd1e995; h ^= h >> 15; p[i] = ((h & 0xffffff) / 16777216.0f - 0.5f) * sc; } }
__global__ void tod(const float* a, double* b, long n) { long i = blockIdx.x * (long)blockDim.x + threadIdx.x; if (i < n) b[i] = a[i]; }
int main() {
  cublasHandle_t h; CK(cublasCreate(&h)); cudaStream_t s; cudaStreamCreate(&s); CK(cublasSetStream(h, s));
  void* ws; CK(cudaMalloc(&ws, 64 << 20)); CK(cublasSetWorkspace(h, ws, 64 << 20));
  long shapes[][3] = {{4096, 256, 512}, {4096, 512, 367}, {4096, 512, 13}, {4096, 64, 256}, {4096, 400, 400}, {256, 400, 400}, {65536, 200, 484}};
  cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
  for (auto& sh : shapes) {
    long M = sh[0], N = sh[1], K = sh[2];
    float *x, *w, *y; double *xd, *wd, *yd;
    CK(cudaMalloc(&x, M * K * 4)); CK(cudaMalloc(&w, N * K * 4)); CK(cudaMalloc(&y, M * N * 4));
    CK(cudaMalloc(&xd, M * K * 8)); CK(cudaMalloc(&wd, N * K * 8)); CK(cudaMalloc(&yd, M * N * 8));
    fill<<<(M * K + 255) / 256, 256>>>(x, M * K, 1, 2.f); fill<<<(N * K + 255) / 256, 256>>>(w, N * K, 2, 0.2f);
    tod<<<(M * K + 255) / 256, 256>>>(x, xd, M * K); tod<<<(N * K + 255) / 256, 256>>>(w, wd, N * K);
    double one = 1, zero = 0; float onef = 1, zerof = 0;
    // row-major Y[M,N] = X[M,K] W[N,K]^T  ==  col-major Y^T[N,M] = W^T... : C(N x M) = op(A)=W (N x K, stored K x N col-major => T) * B = X^T (K x M)
    CK(cublasDgemm(h, CUBLAS_OP_T, CUBLAS_OP_N, N, M, K, &one, wd, K, xd, K, &zero, yd, N));
    std::vector<double> ref(M * N); std::vector<float> got(M * N);
    CK(cudaMemcpy(ref.data(), yd, M * N * 8, cudaMemcpyDeviceToHost));
    const char* names[] = {"SGEMM", "BF16x9 eager", "TF32"};
    for (int mode = 0; mode < 3; ++mode) {
      cublasComputeType_t ct = mode == 0 ? CUBLAS_COMPUTE_32F : mode == 1 ? CUBLAS_COMPUTE_32F_EMULATED_16BFX9 : CUBLAS_COMPUTE_32F_FAST_TF32;
      if (mode == 1) CK(cublasSetEmulationStrategy(h, CUBLAS_EMULATION_STRATEGY_EAGER));
      auto call = [&]() { return cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, N, M, K, &onef, w, CUDA_R_32F, K, x, CUDA_R_32F, K, &zerof, y, CUDA_R_32F, N, ct, CUBLAS_GEMM_DEFAULT); };
      cublasStatus_t st = call();
      if (st != 0) { printf("%ldx%ldx%ld %s: status %d\n", M, N, K, names[mode], (int)st); continue; }
      CK(cudaStreamSynchronize(s));
      CK(cudaMemcpy(got.data(), y, M * N * 4, cudaMemcpyDeviceToHost));
      double mx = 0, mean = 0;
      for (long i = 0; i < M * N; ++i) { double e = fabs(got[i] - ref[i]); mx = fmax(mx, e); mean += e; }
      mean /= M * N;
      cudaGraph_t g; cudaGraphExec_t ge;
      CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
      for (int i = 0; i < 20; ++i) call();
      CK(cudaStreamEndCapture(s, &g)); CK(cudaGraphInstantiate(&ge, g, 0));
      std::vector<float> ts;
      for (int r = 0; r < 25; ++r) { cudaEventRecord(a, s); cudaGraphLaunch(ge, s); cudaEventRecord(b, s); cudaEventSynchronize(b); float ms; cudaEventElapsedTime(&ms, a, b); ts.push_back(ms * 1000 / 20); }
      std::sort(ts.begin(), ts.end());
      printf("%ldx%ldx%ld %-13s %7.2f us %6.1f TFLOP/s  max err %.2e mean %.2e\n", M, N, K, names[mode], ts[12], 2.0 * M * N * K / ts[12] / 1e6, mx, mean);
      if (mode == 1) CK(cublasSetEmulationStrategy(h, CUBLAS_EMULATION_STRATEGY_DEFAULT));
    }
    cudaFree(x); cudaFree(w); cudaFree(y); cudaFree(xd); cudaFree(wd); cudaFree(yd);
  }
}
