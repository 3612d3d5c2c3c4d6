// Probe (bench/cuda/README.md): an f32 GEMM on Hopper's warpgroup tensor-core
// instructions (wgmma, tf32), as accurate as IEEE SGEMM, against cuBLASLt's
// SGEMM on DLRM's layers. Row-major Y[M,N] = relu(X[M,K] W[K,N] + b).
//
// 3xTF32: x = hi + lo with hi = x rounded to tf32 and lo = the remainder
// (tf32 again), so x w ~ hi_x hi_w + hi_x lo_w + lo_x hi_w. The tensor core
// adds a sum's terms after aligning them to the largest, dropping bits below
// it, so one accumulator over all of K loses accuracy as K grows; here each
// 32-wide K chunk sums into a fresh accumulator (scale-d 0 on its first
// wgmma) that f32 FADDs then add to the running sum, as the CIN kernel does
// (codegen_cin_x3.cc). W's hi / lo halves are constants, split once and
// stored K-major ([N][K]: tf32 wgmma reads both operands K-major); X is split
// on the way into shared memory.
//
// Block: 128 x 64 outputs, two warpgroups of m64n64 (256 threads); K chunks
// of 32 floats = one 128-byte row per matrix row, stored with the 128-byte
// swizzle (16-byte unit u of row r at u ^ (r % 8)); two shared stages: while
// the tensor cores run a chunk, the threads split and store the next one and
// load the one after into registers.
//
// nvcc -O3 -arch=sm_90a -std=c++17 gemm_x3_wgmma.cu -o gemm_x3_wgmma -lcublasLt
#include <cmath>

#include "probe_util.cuh"

namespace {

constexpr int BM = 128, BN = 64, BK = 32, THREADS = 256;
constexpr int A_BYTES = BM * BK * 4, B_BYTES = BN * BK * 4;
constexpr int STAGE_BYTES = 2 * A_BYTES + 2 * B_BYTES;  // A hi, A lo, W hi, W lo
constexpr int SMEM_BYTES = 2 * STAGE_BYTES + 1024;      // two stages, 1024-byte alignment slack

__device__ __forceinline__ float tf32Round(float x) {
  unsigned u;
  asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(u) : "f"(x));
  return __uint_as_float(u);
}

// Byte offset of 16-byte unit u of row r in a 128-byte-swizzled tile.
__device__ __forceinline__ unsigned swz(int r, int u) { return r * 128 + ((u ^ (r & 7)) << 4); }

// K-major operand, 128-byte swizzle: 8-row groups 1024 bytes apart.
__device__ __forceinline__ unsigned long long descriptor(unsigned smemAddr) {
  return static_cast<unsigned long long>((smemAddr & 0x3FFFF) >> 4) | (1ull << 16) | ((1024ull >> 4) << 32) |
         (1ull << 62);
}

__device__ __forceinline__ void wgmma(float (&d)[32], unsigned long long a, unsigned long long b, int scaleD) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n64k8.f32.tf32.tf32 "
      "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, "
      "%32, %33, p, 1, 1;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
        "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
        "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
        "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
      : "l"(a), "l"(b), "r"(scaleD));
}

// Keeps the compiler from moving accumulator accesses across the wgmma
// pipeline's fences and waits.
__device__ __forceinline__ void fenceOperands(float (&acc)[32]) {
#pragma unroll
  for (int i = 0; i < 32; ++i) asm volatile("" : "+f"(acc[i])::"memory");
}

struct Regs {
  float4 a[4];       // X: rows t / 8 + 32 i, unit t % 8
  float4 wh[2], wl[2];  // W hi / lo: rows (output columns) t / 8 + 32 i
};

__device__ __forceinline__ void loadChunk(Regs& g, const float* X, const float* Wh, const float* Wl, long m0, int n0,
                                          int k0, int K, int t) {
  const int k = k0 + 4 * (t & 7);
  const bool in = k < K;  // K % 4 == 0: a unit is all in or all out
  const float4 z = make_float4(0.f, 0.f, 0.f, 0.f);
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const long r = m0 + (t >> 3) + 32 * i;
    g.a[i] = in ? __ldg(reinterpret_cast<const float4*>(X + r * K + k)) : z;
  }
#pragma unroll
  for (int i = 0; i < 2; ++i) {
    const long n = n0 + (t >> 3) + 32 * i;
    g.wh[i] = in ? __ldg(reinterpret_cast<const float4*>(Wh + n * K + k)) : z;
    g.wl[i] = in ? __ldg(reinterpret_cast<const float4*>(Wl + n * K + k)) : z;
  }
}

__device__ __forceinline__ void storeChunk(const Regs& g, char* stage, int t) {
  char* ah = stage;
  char* al = stage + A_BYTES;
  char* wh = stage + 2 * A_BYTES;
  char* wl = wh + B_BYTES;
  const int u = t & 7;
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const int r = (t >> 3) + 32 * i;
    const float4 v = g.a[i];
    float4 h = make_float4(tf32Round(v.x), tf32Round(v.y), tf32Round(v.z), tf32Round(v.w));
    float4 l = make_float4(tf32Round(v.x - h.x), tf32Round(v.y - h.y), tf32Round(v.z - h.z), tf32Round(v.w - h.w));
    *reinterpret_cast<float4*>(ah + swz(r, u)) = h;
    *reinterpret_cast<float4*>(al + swz(r, u)) = l;
  }
#pragma unroll
  for (int i = 0; i < 2; ++i) {
    const int r = (t >> 3) + 32 * i;
    *reinterpret_cast<float4*>(wh + swz(r, u)) = g.wh[i];
    *reinterpret_cast<float4*>(wl + swz(r, u)) = g.wl[i];
  }
}

// The chunk in `stage` into acc (fresh): small cross products first, then hi x hi.
__device__ __forceinline__ void mmaChunk(float (&acc)[32], const char* stage, int wg) {
  const unsigned base = static_cast<unsigned>(__cvta_generic_to_shared(stage));
  const unsigned ah = base + wg * 64 * 128, al = ah + A_BYTES, wh = base + 2 * A_BYTES, wl = wh + B_BYTES;
  fenceOperands(acc);
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#pragma unroll
  for (int kk = 0; kk < BK / 8; ++kk) {
    const unsigned o = kk * 32;  // 8 tf32 along K
    wgmma(acc, descriptor(al + o), descriptor(wh + o), kk > 0);
    wgmma(acc, descriptor(ah + o), descriptor(wl + o), 1);
    wgmma(acc, descriptor(ah + o), descriptor(wh + o), 1);
  }
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
  fenceOperands(acc);
}

template <int PENDING>
__device__ __forceinline__ void mmaWait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(PENDING) : "memory");
}

__device__ __forceinline__ void addInto(float (&sum)[32], float (&acc)[32]) {
  fenceOperands(acc);
#pragma unroll
  for (int i = 0; i < 32; ++i) sum[i] += acc[i];
  fenceOperands(acc);
}

#ifndef MIN_BLOCKS
#define MIN_BLOCKS 1
#endif
__global__ void __launch_bounds__(THREADS, MIN_BLOCKS) gemmX3(const float* __restrict__ X, const float* __restrict__ Wh,
                                                  const float* __restrict__ Wl, const float* __restrict__ bias,
                                                  float* __restrict__ Y, int N, int K) {
  extern __shared__ char raw[];
  char* smem = reinterpret_cast<char*>((reinterpret_cast<unsigned long long>(raw) + 1023) & ~1023ull);
  const int t = threadIdx.x, wg = t >> 7;
  const long m0 = static_cast<long>(blockIdx.y) * BM;
  const int n0 = blockIdx.x * BN;
  const int chunks = (K + BK - 1) / BK;
  float sum[32], acc[32];
#pragma unroll
  for (int i = 0; i < 32; ++i) sum[i] = acc[i] = 0.f;
  Regs g;
  loadChunk(g, X, Wh, Wl, m0, n0, 0, K, t);
  storeChunk(g, smem, t);
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
  __syncthreads();
  if (chunks > 1) loadChunk(g, X, Wh, Wl, m0, n0, BK, K, t);
  for (int c = 0; c < chunks; ++c) {
    char* stage = smem + (c & 1) * STAGE_BYTES;
    char* next = smem + ((c + 1) & 1) * STAGE_BYTES;
    mmaChunk(acc, stage, wg);
    // While the tensor cores run: the next chunk into the other stage (its
    // last readers, chunk c - 1's wgmmas, finished before the last barrier),
    // and the one after into registers.
    if (c + 1 < chunks) storeChunk(g, next, t);
    if (c + 2 < chunks) loadChunk(g, X, Wh, Wl, m0, n0, (c + 2) * BK, K, t);
    mmaWait<0>();
    addInto(sum, acc);
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
    __syncthreads();
  }
  // D fragment of m64nN: warp w of the warpgroup has rows 16 w .. + 15; lane l
  // rows l / 4 and l / 4 + 8, columns 8 j + 2 (l % 4) + {0, 1}.
  const int w = (t & 127) >> 5, l = t & 31;
  const long r0 = m0 + wg * 64 + w * 16 + (l >> 2);
#pragma unroll
  for (int j = 0; j < 8; ++j) {
    const int col = n0 + 8 * j + 2 * (l & 3);
    const float b0 = bias[col], b1 = bias[col + 1];
    *reinterpret_cast<float2*>(Y + r0 * N + col) =
        make_float2(fmaxf(sum[4 * j] + b0, 0.f), fmaxf(sum[4 * j + 1] + b1, 0.f));
    *reinterpret_cast<float2*>(Y + (r0 + 8) * N + col) =
        make_float2(fmaxf(sum[4 * j + 2] + b0, 0.f), fmaxf(sum[4 * j + 3] + b1, 0.f));
  }
}

// W [K][N] -> hi / lo [N][K] (K-major).
__global__ void splitW(const float* W, float* hi, float* lo, int K, int N) {
  const long i = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x;
  if (i >= static_cast<long>(K) * N) return;
  const int k = static_cast<int>(i / N), n = static_cast<int>(i % N);
  const float v = W[i], h = tf32Round(v);
  hi[static_cast<long>(n) * K + k] = h;
  lo[static_cast<long>(n) * K + k] = tf32Round(v - h);
}

// Largest |y - reference| over every 7th row, relative to the largest |reference|.
double relError(const std::vector<float>& y, const std::vector<float>& x, const std::vector<float>& w,
                const std::vector<float>& b, long M, long N, long K) {
  double worst = 0, scale = 0;
  for (long r = 0; r < M; r += 7) {
    for (long n = 0; n < N; ++n) {
      double s = b[n];
      for (long k = 0; k < K; ++k) s += static_cast<double>(x[r * K + k]) * w[k * N + n];
      s = s > 0 ? s : 0;
      worst = std::max(worst, std::fabs(s - y[r * N + n]));
      scale = std::max(scale, std::fabs(s));
    }
  }
  return worst / scale;
}

}  // namespace

int main() {
  ProbeContext ctx;
  CK(cudaFuncSetAttribute(gemmX3, cudaFuncAttributeMaxDynamicSharedMemorySize, SMEM_BYTES));
  struct Shape { long M, N, K; } shapes[] = {{4096, 256, 512}, {4096, 512, 368}, {4096, 512, 256}, {4096, 64, 256},
                                             {256, 256, 512}, {4096, 400, 400}};
  for (const Shape& s : shapes) {
    if (s.N % BN != 0 || s.M % BM != 0 || s.K % 4 != 0) {
      printf("%ldx%ldx%ld: needs M %% %d, N %% %d, K %% 4 == 0 (skipped)\n", s.M, s.N, s.K, BM, BN);
      continue;
    }
    float *x, *w, *b, *y, *wh, *wl;
    std::vector<float> hx = randomOn(s.M * s.K, &x), hw = randomOn(s.K * s.N, &w), hb = randomOn(s.N, &b);
    CK(cudaMalloc(&y, s.M * s.N * 4));
    CK(cudaMalloc(&wh, s.K * s.N * 4));
    CK(cudaMalloc(&wl, s.K * s.N * 4));
    splitW<<<(s.K * s.N + 255) / 256, 256, 0, ctx.s>>>(w, wh, wl, static_cast<int>(s.K), static_cast<int>(s.N));
    BiasReluGemm lib(s.M, s.N, s.K, b);
    cublasLtMatmulHeuristicResult_t pick = firstPick(ctx.lt, lib, ctx.workspaceBytes);
    const float one = 1, zero = 0;
    auto sgemm = [&] {
      CK(cublasLtMatmul(ctx.lt, lib.desc, &one, w, lib.a, x, lib.b, &zero, y, lib.c, y, lib.c, &pick.algo, ctx.ws,
                        ctx.workspaceBytes, ctx.s));
    };
    const dim3 grid(static_cast<unsigned>(s.N / BN), static_cast<unsigned>(s.M / BM));
    auto x3 = [&] {
      gemmX3<<<grid, THREADS, SMEM_BYTES, ctx.s>>>(x, wh, wl, b, y, static_cast<int>(s.N), static_cast<int>(s.K));
    };
    std::vector<float> out(s.M * s.N);
    double err[2];
    int i = 0;
    for (int which = 0; which < 2; ++which) {
      CK(cudaMemset(y, 0xFF, s.M * s.N * 4));
      if (which == 0) sgemm(); else x3();
      CK(cudaStreamSynchronize(ctx.s));
      CK(cudaGetLastError());
      CK(cudaMemcpy(out.data(), y, s.M * s.N * 4, cudaMemcpyDeviceToHost));
      err[i++] = relError(out, hx, hw, hb, s.M, s.N, s.K);
    }
    std::vector<float> tl = graphTimesUs(ctx.s, sgemm), tx = graphTimesUs(ctx.s, x3);
    const double flop = 2.0 * s.M * s.N * s.K;
    printf("%ldx%ldx%ld: cuBLASLt SGEMM %.1f us (%.1f TFLOP/s, error %.1e) | wgmma 3xTF32 %.1f us (%.1f TFLOP/s, "
           "error %.1e)\n",
           s.M, s.N, s.K, tl[tl.size() / 2], flop / tl[tl.size() / 2] * 1e-6, err[0], tx[tx.size() / 2],
           flop / tx[tx.size() / 2] * 1e-6, err[1]);
    cudaFree(x); cudaFree(w); cudaFree(b); cudaFree(y); cudaFree(wh); cudaFree(wl);
  }
  return 0;
}
