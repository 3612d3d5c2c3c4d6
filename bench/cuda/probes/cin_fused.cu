// Probe (bench/cuda/FINDINGS.md): a fused fp32 CIN layer (FFMA, the outer
// product never in memory) against the materialised outer product + cuBLAS
// SGEMM, on xDeepFM's layers at batch 4096 (N = B*D = 65536 columns).
// nvcc -O3 -arch=sm_90a -std=c++17 -Xptxas -v cin_fused.cu -o cin_fused -lcublas
//
// out[b,o,d] = relu(bias[o] + sum_{h,m} W[o, h*M+m] * xk[b,h,d] * x0[b,m,d])
// One K step is one h (BK = M): the B tile Z[m, j] = xk[b_j,h,d_j] * x0[b_j,m,d_j]
// is built in shared memory from the block's x0 columns (resident) and one
// xk value per column; W is read pre-transposed, Wt[k][o], so each step's
// A tile is M*O contiguous floats (cp.async into a double buffer).
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "probe_util.cuh"  // CK

__device__ __forceinline__ void cp16(void* s, const void* g) {
  unsigned a = static_cast<unsigned>(__cvta_generic_to_shared(s));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(a), "l"(g));
}
__device__ __forceinline__ void cpCommit() { asm volatile("cp.async.commit_group;\n" ::); }
__device__ __forceinline__ void cpWait() { asm volatile("cp.async.wait_group 0;\n" ::); }

// O rows in one block (BM = O), BN columns; each thread a TM x TN tile:
// TM/4 groups of 4 rows O/(TM/4) apart, TN/4 groups of 4 columns BN/(TN/4)
// apart, so shared-memory reads are float4s. HS values of h per K step
// (BK = HS * M, one barrier per step). LEAVE = 1 leaves the per-step A / B
// tile refresh out (wrong results: times the multiply loop alone). Block
// 0's thread 0 records clock64 and %globaltimer around its loop in
// clk[0..1] (the SM clock).
template <int O, int H, int M, int D, int BN, int TM, int TN, int MINB, int LEAVE, int STAGE = 0, int HS = 1>
__global__ void __launch_bounds__((O / TM) * (BN / TN), MINB)
    cin_fused(const float* __restrict__ xk, const float* __restrict__ x0, const float* __restrict__ wt,
              const float* __restrict__ bias, float* __restrict__ out, long long B, long long* clk) {
  constexpr int RG = TM / 4, CG = TN / 4, RS = O / RG, CS = BN / CG;  // groups and their strides
  constexpr int MT = O / TM, NT = BN / TN, THREADS = MT * NT, BK = HS * M, AQ = BK * O / 4;
  constexpr int ZR = THREADS / BN;  // Z threads per column
  constexpr int ZROWS = (M + ZR - 1) / ZR;
  static_assert(ZR >= 1 && O % TM == 0 && BN % TN == 0 && RS % 4 == 0 && CS % 4 == 0 && H % HS == 0, "tile");
  extern __shared__ __align__(16) float smem[];
  float* As = smem;               // [2][BK][O]
  float* Bs = As + 2 * BK * O;    // [2][BK][BN]
  float* x0s = Bs + 2 * BK * BN;  // [M][BN]
  const int tid = threadIdx.x, tx = tid % NT, ty = tid / NT;
  const long long NTOT = B * D, n0 = (long long)blockIdx.x * BN;
  const int zj = tid % BN, zr = tid / BN;
  const long long zn = n0 + zj, zb = zn / D;
  const int zd = (int)(zn - zb * D);
  const bool zok = zr < ZR && zn < NTOT;
  const float* xkp = xk + zb * H * D + zd;
  for (int e = tid; e < M * BN; e += THREADS) {
    const int m = e / BN, j = e % BN;
    const long long n = n0 + j, b = n / D;
    x0s[e] = n < NTOT ? __ldg(x0 + (b * M + m) * D + (n - b * D)) : 0.f;
  }
  auto loadA = [&](int buf, int step) {
    const float4* src = reinterpret_cast<const float4*>(wt + (long long)step * BK * O);
    float4* dst = reinterpret_cast<float4*>(As + buf * BK * O);
    for (int e = tid; e < AQ; e += THREADS) cp16(dst + e, src + e);
    cpCommit();
  };
  auto loadX = [&](int step, float (&xv)[HS]) {
#pragma unroll
    for (int q = 0; q < HS; ++q) xv[q] = zok ? __ldg(xkp + (step * HS + q) * D) : 0.f;
  };
  auto buildB = [&](int buf, const float (&xv)[HS]) {
    if (!zok) return;
    float* dst = Bs + buf * BK * BN;
#pragma unroll
    for (int r = 0; r < ZROWS; ++r) {
      const int m = zr + r * ZR;
      if (m >= M) continue;
      const float x0v = x0s[m * BN + zj];
#pragma unroll
      for (int q = 0; q < HS; ++q) dst[(q * M + m) * BN + zj] = xv[q] * x0v;
    }
  };
  constexpr int STEPS = H / HS;
  float xv[HS];
  loadA(0, 0);
  __syncthreads();  // x0s
  loadX(0, xv);
  buildB(0, xv);
  float acc[TM][TN];
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TN; ++j) acc[i][j] = 0.f;
  cpWait();
  __syncthreads();
  long long c0 = clock64(), t0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  for (int st = 0; st < STEPS; ++st) {
    const int cur = LEAVE ? 0 : st & 1;
    if (!LEAVE && st + 1 < STEPS) {
      loadA(cur ^ 1, st + 1);
      loadX(st + 1, xv);
    }
    const float* A = As + cur * BK * O;
    const float* Bt = Bs + cur * BK * BN;
#pragma unroll
    for (int kk = 0; kk < BK; ++kk) {
      float a[TM], c[TN];
#pragma unroll
      for (int g = 0; g < RG; ++g) {
        const float4 v = *reinterpret_cast<const float4*>(A + kk * O + g * RS + ty * 4);
        a[g * 4] = v.x, a[g * 4 + 1] = v.y, a[g * 4 + 2] = v.z, a[g * 4 + 3] = v.w;
      }
#pragma unroll
      for (int g = 0; g < CG; ++g) {
        const float4 v = *reinterpret_cast<const float4*>(Bt + kk * BN + g * CS + tx * 4);
        c[g * 4] = v.x, c[g * 4 + 1] = v.y, c[g * 4 + 2] = v.z, c[g * 4 + 3] = v.w;
      }
#pragma unroll
      for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] = fmaf(a[i], c[j], acc[i][j]);
    }
    if (!LEAVE && st + 1 < STEPS) buildB(cur ^ 1, xv);
    if (!LEAVE) cpWait();
    __syncthreads();
  }
  if (blockIdx.x == 0 && tid == 0) {
    long long t1;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t1));
    clk[0] = clock64() - c0;
    clk[1] = t1 - t0;
  }
  if constexpr (STAGE) {  // the tile through shared memory, then whole rows per warp (as codegen_cin.cc)
    constexpr int CP = BN + 4;
    float* Cs = smem;
#pragma unroll
    for (int i = 0; i < TM; ++i) {
      const int o = (i / 4) * RS + ty * 4 + i % 4;
#pragma unroll
      for (int g = 0; g < CG; ++g)
        *reinterpret_cast<float4*>(Cs + o * CP + g * CS + tx * 4) =
            make_float4(acc[i][g * 4], acc[i][g * 4 + 1], acc[i][g * 4 + 2], acc[i][g * 4 + 3]);
    }
    __syncthreads();
    const int lane = tid % 32, warps = THREADS / 32;
    for (int o = tid / 32; o < O && tid < warps * 32; o += warps) {
      const float bo = __ldg(bias + o);
#pragma unroll
      for (int half = 0; half < BN / 32; ++half) {
        const int j = half * 32 + lane;
        const long long n = n0 + j, b = n / D;
        if (n < NTOT) out[(b * O + o) * D + (n - b * D)] = fmaxf(Cs[o * CP + j] + bo, 0.f);
      }
    }
  } else {
#pragma unroll
  for (int i = 0; i < TM; ++i) {
    const int o = (i / 4) * RS + ty * 4 + i % 4;
    const float bo = __ldg(bias + o);
#pragma unroll
    for (int g = 0; g < CG; ++g) {
      const long long n = n0 + g * CS + tx * 4;
      if (n >= NTOT) continue;  // D % 4 == 0: four columns of one sample
      const long long b = n / D;
      const float4 v = make_float4(fmaxf(acc[i][g * 4] + bo, 0.f), fmaxf(acc[i][g * 4 + 1] + bo, 0.f),
                                   fmaxf(acc[i][g * 4 + 2] + bo, 0.f), fmaxf(acc[i][g * 4 + 3] + bo, 0.f));
      *reinterpret_cast<float4*>(out + (b * O + o) * D + (n - b * D)) = v;
    }
  }
  }
}

// Z[n][k] = xk[b,h,d] * x0[b,m,d] (row-major N x K) for the cuBLAS path.
template <int H, int M, int D>
__global__ void zKernel(const float* xk, const float* x0, float* z, long long B) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  constexpr int K = H * M;
  if (i >= B * D * K) return;
  long long n = i / K;
  int k = (int)(i - n * K), h = k / M, m = k - h * M;
  long long b = n / D;
  int d = (int)(n - b * D);
  z[i] = xk[(b * H + h) * D + d] * x0[(b * M + m) * D + d];
}

template <class F>
float timeIt(F f, int reps) {
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  f();
  f();
  CK(cudaDeviceSynchronize());
  std::vector<float> t;
  for (int r = 0; r < reps; ++r) {
    CK(cudaEventRecord(a));
    f();
    CK(cudaEventRecord(b));
    CK(cudaEventSynchronize(b));
    float ms;
    CK(cudaEventElapsedTime(&ms, a, b));
    t.push_back(ms);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

template <int O, int H, int M, int D>
struct Layer {
  long long B;
  std::vector<float> hxk, hx0, hw, hb;
  float *xk, *x0, *w, *wt, *bias, *out, *z = nullptr, *y = nullptr;
  long long* clk;
  explicit Layer(long long b) : B(b) {
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> u(-1.f, 1.f);
    hxk.resize(B * H * D);
    hx0.resize(B * M * D);
    hw.resize((size_t)O * H * M);
    hb.resize(O);
    for (auto& v : hxk) v = u(rng);
    for (auto& v : hx0) v = u(rng);
    for (auto& v : hw) v = u(rng) * 0.05f;
    for (auto& v : hb) v = u(rng);
    std::vector<float> hwt(hw.size());
    for (int o = 0; o < O; ++o)
      for (int k = 0; k < H * M; ++k) hwt[(size_t)k * O + o] = hw[(size_t)o * H * M + k];
    CK(cudaMalloc(&xk, hxk.size() * 4));
    CK(cudaMalloc(&x0, hx0.size() * 4));
    CK(cudaMalloc(&w, hw.size() * 4));
    CK(cudaMalloc(&wt, hw.size() * 4));
    CK(cudaMalloc(&bias, O * 4));
    CK(cudaMalloc(&out, (size_t)B * O * D * 4));
    CK(cudaMalloc(&clk, 16));
    CK(cudaMemcpy(xk, hxk.data(), hxk.size() * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(x0, hx0.data(), hx0.size() * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(w, hw.data(), hw.size() * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(wt, hwt.data(), hwt.size() * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(bias, hb.data(), O * 4, cudaMemcpyHostToDevice));
  }
  double flop() const { return 2.0 * O * H * M * (double)B * D; }
  // Largest error over sampled outputs against an fp64 reference, relative to the largest |output|.
  double check() const {
    std::vector<float> got((size_t)B * O * D);
    CK(cudaMemcpy(got.data(), out, got.size() * 4, cudaMemcpyDeviceToHost));
    std::mt19937 rng(3);
    double err = 0, big = 1e-30;
    for (int s = 0; s < 4000; ++s) {
      long long b = rng() % B;
      int o = rng() % O, d = rng() % D;
      double a = hb[o];
      for (int h = 0; h < H; ++h)
        for (int m = 0; m < M; ++m)
          a += (double)hw[(size_t)o * H * M + h * M + m] * hxk[(b * H + h) * D + d] * hx0[(b * M + m) * D + d];
      a = std::max(a, 0.0);
      err = std::max(err, std::fabs(a - got[(b * O + o) * D + d]));
      big = std::max(big, std::fabs(a));
    }
    return err / big;
  }
  template <int BN, int TM, int TN, int MINB, int LEAVE = 0, int STAGE = 0, int HS = 1>
  void fused(const char* tag) {
    constexpr int THREADS = (O / TM) * (BN / TN);
    const size_t sh = std::max(2 * HS * M * O + 2 * HS * M * BN + M * BN, STAGE ? (BN + 4) * O : 0) * 4;
    auto k = cin_fused<O, H, M, D, BN, TM, TN, MINB, LEAVE, STAGE, HS>;
    CK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)sh));
    cudaFuncAttributes fa;
    CK(cudaFuncGetAttributes(&fa, k));
    int occ = 0;
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, k, THREADS, sh));
    const unsigned grid = (unsigned)((B * D + BN - 1) / BN);
    CK(cudaMemset(out, 0, (size_t)B * O * D * 4));
    float ms = timeIt([&] { k<<<grid, THREADS, sh>>>(xk, x0, wt, bias, out, B, clk); }, 15);
    CK(cudaGetLastError());
    long long hc[2];
    CK(cudaMemcpy(hc, clk, 16, cudaMemcpyDeviceToHost));
    printf("%-28s O=%d H=%d M=%d B=%lld BN=%3d %dx%d hs=%d thr=%3d regs=%3d spill=%zu smem=%zu occ=%d  %8.1f us  %5.1f TFLOP/s  err %.1e  SM clock %.0f MHz\n",
           tag, O, H, M, B, BN, TM, TN, HS, THREADS, fa.numRegs, fa.localSizeBytes, sh, occ, ms * 1e3, flop() / ms / 1e9,
           check(), hc[1] > 0 ? 1e3 * hc[0] / hc[1] : 0.0);
  }
  void cublasPath(cublasHandle_t hd) {
    constexpr int K = H * M;
    if (!z) {
      CK(cudaMalloc(&z, (size_t)B * D * K * 4));
      CK(cudaMalloc(&y, (size_t)B * D * O * 4));
    }
    const float one = 1.f, zero = 0.f;
    const long long tot = B * D * K;
    const int n = (int)(B * D);
    float zms = timeIt([&] { zKernel<H, M, D><<<(unsigned)((tot + 255) / 256), 256>>>(xk, x0, z, B); }, 10);
    float gms = timeIt(
        [&] { CK(cublasSgemm(hd, CUBLAS_OP_T, CUBLAS_OP_N, O, n, K, &one, w, K, z, K, &zero, y, O)); }, 10);
    printf("%-28s O=%d H=%d M=%d B=%lld  z %8.1f us + sgemm %8.1f us = %8.1f us  sgemm %5.1f TFLOP/s, both %5.1f\n",
           "materialised+cublasSgemm", O, H, M, B, zms * 1e3, gms * 1e3, (zms + gms) * 1e3, flop() / gms / 1e9,
           flop() / (zms + gms) / 1e9);
    CK(cudaFree(z));
    CK(cudaFree(y));
    z = y = nullptr;
  }
};

int main(int argc, char** argv) {
  long long B = argc > 1 ? atoll(argv[1]) : 4096;
  cublasHandle_t hd;
  CK(cublasCreate(&hd));
  {
    Layer<200, 200, 22, 16> L(B);
    L.fused<64, 8, 8, 2>("8x8 BN64 x2");
    L.fused<64, 8, 8, 2, 1>("8x8 BN64 x2 multiply only");
    L.fused<64, 8, 8, 2, 0, 0, 2>("8x8 BN64 x2, 2 h per step");
    L.fused<64, 8, 8, 2, 1, 0, 2>("8x8 BN64 x2, 2 h multiply only");
    L.fused<64, 8, 8, 1, 0, 0, 4>("8x8 BN64 x1, 4 h per step");
    L.fused<128, 8, 8, 1, 0, 0, 2>("8x8 BN128 x1, 2 h per step");
    L.cublasPath(hd);
  }
  {
    Layer<200, 22, 22, 16> L(B);
    L.fused<64, 8, 8, 2>("8x8 BN64 x2 (layer 1)");
    L.fused<64, 8, 8, 2, 0, 0, 2>("8x8 BN64 x2, 2 h (layer 1)");
    L.cublasPath(hd);
  }
  return 0;
}
