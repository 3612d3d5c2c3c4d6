// One CIN layer (Pattern::kCin, kernel nvrtc.cin) as a GEMM whose B operand
// is never materialised: out[b,o,d] = bias[o] + sum_k W[o,k] * Z[k,(b,d)]
// with Z[h*M+m, (b,d)] = xk[b,h,d] * x0[b,m,d] built tile by tile in shared
// memory (N = B*D columns, M = O rows, K = H*M). One block tile spans all
// of O where it fits (O <= 256), so each Z tile is built once. f32 math:
// for O % 8 == 0 in [64, 256] with W a constant, one h per K step with W
// uploaded transposed and cp.async double buffers: on tensor cores as
// 3xTF32 from sm_80 on (cagr_cin_x3_step, codegen_cin_x3.cc), else FFMA
// (cagr_cin_ffma_step: 36 TFLOP/s on xDeepFM's layers on the H200 against
// the general kernel's 26); other shapes FFMA with 8x8 register tiles.
// tf32 / bf16 / f16 math: tensor cores via
// nvcuda::wmma, operands rounded exactly as the reference executor rounds
// them (xk, x0 and W to the math precision; the exact product then rounds
// once more to enter the MMA), f32 accumulation. Each output element goes
// through the group's elementwise tail (TailChain) before it is stored.
// A pooled tail (a ReduceSum over D ending the group, groups.cc) adds each
// tail value into the block's row sums in shared memory (the block's tile
// holds whole samples: BN is a multiple of D); the block then writes them,
// and the layer's map only where a later kernel reads it. The shared-memory
// atomics leave the order of a row's D terms, so its last bit, to chance.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "backends/cuda/codegen_kernel.h"

namespace cagr::cuda::gen {
namespace {

// Helpers both CIN kernels use (emitted once per module).
const char* const kCinCommon = R"CUDA(
#ifndef CAGR_CIN_COMMON
#define CAGR_CIN_COMMON
// The block's x0 columns n0 + j (j < BN) as x0s[m * BN + j], rounded by `round`.
template <int M, int D, int BN, typename R>
__device__ __forceinline__ void cagr_cin_x0(float* x0s, const float* __restrict__ x0, long long n0, long long NTOT,
                                            int threads, R round) {
  for (int e = threadIdx.x; e < M * BN; e += threads) {
    const int m = e / BN, j = e % BN;
    const long long n = n0 + j, b = n / D;
    x0s[e] = n < NTOT ? round(__ldg(x0 + (b * M + m) * D + (n - b * D))) : 0.f;
  }
  __syncthreads();
}
// put(l, v + bias[o]) for out[b, o, d]'s linear index l, column n = b * D + d,
// inside the bounds (put stores it, through the group's elementwise tail).
template <int O, int D, bool BIAS, typename P>
__device__ __forceinline__ void cagr_cin_put(P& put, const float* __restrict__ bias, int o, long long n, long long NTOT,
                                             float v) {
  if (o >= O || n >= NTOT) return;
  const long long b = n / D;
  put((b * O + o) * D + (n - b * D), v + (BIAS ? __ldg(bias + o) : 0.f));
}
// The pooled tail: the block's row sums pool[i * S + s] (row o0 + i of its
// S = BN / D samples) start at zero; each tail value of out[b, o, d]
// (linear index l) adds into its row; then the block stores its rows.
template <int BM, int S>
__device__ __forceinline__ void cagr_cin_pool_zero(float* pool) {
  for (int e = threadIdx.x; e < BM * S; e += blockDim.x) pool[e] = 0.f;
  __syncthreads();
}
template <int O, int D, int BM, int S>
__device__ __forceinline__ void cagr_cin_pool_add(float* pool, long long l, float v) {
  const long long b = l / ((long long)O * D);
  const int o = (int)(l / D % O);
  atomicAdd(pool + (o - (int)blockIdx.y * BM) * S + (int)(b - (long long)blockIdx.x * S), v);
}
// 16 bytes global -> shared without a register stop (sm_80+).
__device__ __forceinline__ void cagr_cp16(void* s, const void* g) {
  const unsigned a = static_cast<unsigned>(__cvta_generic_to_shared(s));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(a), "l"(g));
}
template <int O, int BM, int S, typename ST>
__device__ __forceinline__ void cagr_cin_pool_store(const float* pool, long long B, ST store) {
  __syncthreads();
  for (int e = threadIdx.x; e < BM * S; e += blockDim.x) {
    const int s = e / BM, i = e - s * BM, o = (int)blockIdx.y * BM + i;
    const long long b = (long long)blockIdx.x * S + s;
    if (o < O && b < B) store(b * O + o, pool[i * S + s]);
  }
}
#endif
)CUDA";

const char* const kFfma = R"CUDA(
// CIN layer with FFMA. Thread tile 8x8: rows ty*4.. and BM/2+ty*4.., columns
// tx*4.. and BN/2+tx*4.., so shared-memory reads are conflict-free float4s.
// BK = 16. The next W tile is fetched into registers while the current one
// is multiplied; the block's x0 columns sit in shared memory; each Z-tile
// thread owns one column (b, d) of the tile.
template <int O, int K, int BM, int BK, int THREADS, int NA>
__device__ __forceinline__ void cagr_cin_fetch_w(float4 (&pa)[NA], const float* __restrict__ w, int o0, int k0) {
#pragma unroll
  for (int r = 0; r < NA; ++r) {
    const int e = threadIdx.x + r * THREADS, i = e / (BK / 4), k = k0 + (e % (BK / 4)) * 4, o = o0 + i;
    pa[r] = make_float4(0.f, 0.f, 0.f, 0.f);
    if (e >= BM * BK / 4 || o >= O) continue;
    const float* src = w + (long long)o * K + k;
    if constexpr (K % 4 == 0) {
      if (k < K) pa[r] = __ldg(reinterpret_cast<const float4*>(src));
    } else {
      pa[r].x = k < K ? __ldg(src) : 0.f;
      pa[r].y = k + 1 < K ? __ldg(src + 1) : 0.f;
      pa[r].z = k + 2 < K ? __ldg(src + 2) : 0.f;
      pa[r].w = k + 3 < K ? __ldg(src + 3) : 0.f;
    }
  }
}

template <int O, int H, int M, int D, int MT, int NT, bool BIAS, typename P>
__device__ __forceinline__ void cagr_cin_ffma(const float* __restrict__ xk, const float* __restrict__ x0,
                                              const float* __restrict__ w, const float* __restrict__ bias, P put,
                                              long long B) {
  constexpr int K = H * M, BM = 8 * MT, BN = 8 * NT, BK = 16, THREADS = MT * NT;
  constexpr int NA = (BM * BK / 4 + THREADS - 1) / THREADS;  // float4s of W per thread and step
  constexpr int ZR = THREADS / BN;                            // Z-tile threads per column
  constexpr bool X0S = M * BN * 4 <= 16384;
  __shared__ __align__(16) float As[BK][BM];
  __shared__ __align__(16) float Bs[BK][BN];
  __shared__ float x0s[X0S ? M * BN : 1];
  const int tid = threadIdx.x, tx = tid % NT, ty = tid / NT;
  const long long NTOT = B * D, n0 = (long long)blockIdx.x * BN;
  const int o0 = blockIdx.y * BM;
  const int zj = tid % BN, zk = tid / BN;  // this thread's Z column
  const long long zn = n0 + zj, zb = zn / D;
  const int zd = (int)(zn - zb * D);
  const bool zok = zk < ZR && zn < NTOT;
  const float* xkp = xk + zb * H * D + zd;
  if constexpr (X0S) cagr_cin_x0<M, D, BN>(x0s, x0, n0, NTOT, THREADS, [](float v) { return v; });
  float4 pa[NA];
  float acc[8][8];
#pragma unroll
  for (int i = 0; i < 8; ++i)
#pragma unroll
    for (int j = 0; j < 8; ++j) acc[i][j] = 0.f;
  cagr_cin_fetch_w<O, K, BM, BK, THREADS>(pa, w, o0, 0);
  for (int k0 = 0; k0 < K; k0 += BK) {
#pragma unroll
    for (int r = 0; r < NA; ++r) {
      const int e = tid + r * THREADS, i = e / (BK / 4), kk = (e % (BK / 4)) * 4;
      if (e >= BM * BK / 4) continue;
      As[kk][i] = pa[r].x;
      As[kk + 1][i] = pa[r].y;
      As[kk + 2][i] = pa[r].z;
      As[kk + 3][i] = pa[r].w;
    }
    if constexpr (ZR > 0) {
      for (int kk = zk; zk < ZR && kk < BK; kk += ZR) {
        const int k = k0 + kk, h = k / M, m = k - h * M;
        float z = 0.f;
        if (zok && k < K) z = __ldg(xkp + h * D) * (X0S ? x0s[m * BN + zj] : __ldg(x0 + (zb * M + m) * D + zd));
        Bs[kk][zj] = z;
      }
    } else {  // fewer threads than columns (small O): element by element
      for (int e = tid; e < BK * BN; e += THREADS) {
        const int kk = e / BN, j = e % BN, k = k0 + kk, h = k / M, m = k - h * M;
        const long long n = n0 + j, b = n / D;
        float z = 0.f;
        if (k < K && n < NTOT) {
          z = __ldg(xk + (b * H + h) * D + (n - b * D)) * (X0S ? x0s[m * BN + j] : __ldg(x0 + (b * M + m) * D + (n - b * D)));
        }
        Bs[kk][j] = z;
      }
    }
    __syncthreads();
    if (k0 + BK < K) cagr_cin_fetch_w<O, K, BM, BK, THREADS>(pa, w, o0, k0 + BK);
#pragma unroll
    for (int kk = 0; kk < BK; ++kk) {
      float a[8], c[8];
      const float4 a0 = *reinterpret_cast<const float4*>(&As[kk][ty * 4]);
      const float4 a1 = *reinterpret_cast<const float4*>(&As[kk][BM / 2 + ty * 4]);
      const float4 b0 = *reinterpret_cast<const float4*>(&Bs[kk][tx * 4]);
      const float4 b1 = *reinterpret_cast<const float4*>(&Bs[kk][BN / 2 + tx * 4]);
      a[0] = a0.x; a[1] = a0.y; a[2] = a0.z; a[3] = a0.w; a[4] = a1.x; a[5] = a1.y; a[6] = a1.z; a[7] = a1.w;
      c[0] = b0.x; c[1] = b0.y; c[2] = b0.z; c[3] = b0.w; c[4] = b1.x; c[5] = b1.y; c[6] = b1.z; c[7] = b1.w;
      cagr_fma_tile(acc, a, c);
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < 8; ++i)
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      const int o = o0 + (i < 4 ? ty * 4 + i : BM / 2 + ty * 4 + i - 4);
      cagr_cin_put<O, D, BIAS>(put, bias, o, n0 + (j < 4 ? tx * 4 + j : BN / 2 + tx * 4 + j - 4), NTOT, acc[i][j]);
    }
}
)CUDA";

const char* const kFfmaStep = R"CUDA(
// CIN layer with FFMA, one h per K step (BK = M): the A tile is W's rows
// h*M .. h*M+M-1 of its transpose Wt [K, O] (uploaded so), M*O contiguous
// floats that cp.async copies into a double buffer while the previous step
// multiplies; the B tile Z[m, j] = xk[b_j, h, d_j] * x0s[m, j] is built from
// one xk value per column and the block's x0 columns (resident in shared
// memory) into a double buffer too: one barrier per step. Block: all O rows
// by 64 columns, O threads, 8x8 thread tiles (rows ty*4.. and O/2+ty*4..,
// columns tx*4.. and 32+tx*4..). put(l, v) stores an element through the
// group's tail and returns the value a pooled tail sums (0 without one);
// pool[o * S + s] gathers sample s's sums (S = 64 / D). Staging the tile
// through shared memory for whole-row stores measured 3 % slower (the
// probe in bench/cuda/probes/cin_fused.cu). Shared memory is dynamic:
// (2*M*O + 3*M*64) floats. Needs O % 8 == 0 and O >= 64.
template <int O, int H, int M, int D, bool BIAS, typename P>
__device__ __forceinline__ void cagr_cin_ffma_step(const float* __restrict__ xk, const float* __restrict__ x0,
                                                   const float* __restrict__ wt, const float* __restrict__ bias,
                                                   P put, long long B, float* pool) {
  constexpr int BN = 64, THREADS = O, AQ = M * O / 4, ZR = THREADS / BN, ZROWS = (M + ZR - 1) / ZR;
  static_assert(O % 8 == 0 && ZR >= 1, "O % 8 == 0, O >= 64");
  extern __shared__ __align__(16) float cagr_cin_dyn[];
  float* As = cagr_cin_dyn;      // [2][M][O]
  float* Bs = As + 2 * M * O;    // [2][M][BN]
  float* x0s = Bs + 2 * M * BN;  // [M][BN]
  const int tid = threadIdx.x, tx = tid % 8, ty = tid / 8;
  const long long NTOT = B * D, n0 = (long long)blockIdx.x * BN;
  const int zj = tid % BN, zr = tid / BN;  // this thread's Z column and first row
  const long long zn = n0 + zj, zb = zn / D;
  const bool zok = zr < ZR && zn < NTOT;
  const float* xkp = xk + zb * H * D + (zn - zb * D);
  auto loadA = [&](int buf, int h) {
    const float4* src = reinterpret_cast<const float4*>(wt + (long long)h * M * O);
    float4* dst = reinterpret_cast<float4*>(As + buf * M * O);
    for (int e = tid; e < AQ; e += THREADS) cagr_cp16(dst + e, src + e);
    asm volatile("cp.async.commit_group;\n" ::);
  };
  auto buildB = [&](int buf, float xv) {
    if (!zok) return;
    float* dst = Bs + buf * M * BN;
#pragma unroll
    for (int r = 0; r < ZROWS; ++r) {
      const int m = zr + r * ZR;
      if (m < M) dst[m * BN + zj] = xv * x0s[m * BN + zj];
    }
  };
  loadA(0, 0);
  cagr_cin_x0<M, D, BN>(x0s, x0, n0, NTOT, THREADS, [](float v) { return v; });
  buildB(0, zok ? __ldg(xkp) : 0.f);
  float acc[8][8];
#pragma unroll
  for (int i = 0; i < 8; ++i)
#pragma unroll
    for (int j = 0; j < 8; ++j) acc[i][j] = 0.f;
  asm volatile("cp.async.wait_group 0;\n" ::);
  __syncthreads();
  for (int h = 0; h < H; ++h) {
    const int cur = h & 1;
    float xv = 0.f;
    if (h + 1 < H) {
      loadA(cur ^ 1, h + 1);
      if (zok) xv = __ldg(xkp + (h + 1) * D);
    }
    const float* A = As + cur * M * O;
    const float* Bt = Bs + cur * M * BN;
#pragma unroll
    for (int kk = 0; kk < M; ++kk) {
      const float4 a0 = *reinterpret_cast<const float4*>(A + kk * O + ty * 4);
      const float4 a1 = *reinterpret_cast<const float4*>(A + kk * O + O / 2 + ty * 4);
      const float4 b0 = *reinterpret_cast<const float4*>(Bt + kk * BN + tx * 4);
      const float4 b1 = *reinterpret_cast<const float4*>(Bt + kk * BN + BN / 2 + tx * 4);
      const float a[8] = {a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w};
      const float c[8] = {b0.x, b0.y, b0.z, b0.w, b1.x, b1.y, b1.z, b1.w};
      cagr_fma_tile(acc, a, c);
    }
    if (h + 1 < H) buildB(cur ^ 1, xv);
    asm volatile("cp.async.wait_group 0;\n" ::);
    __syncthreads();
  }
  // G consecutive columns of a thread are one sample's (D a power of two
  // when pooling): their pooled values add in registers, one atomic per G.
  constexpr int G = D % 4 == 0 ? 4 : (D % 2 == 0 ? 2 : 1);
  const int S = BN / D;
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    const int o = i < 4 ? ty * 4 + i : O / 2 + ty * 4 + i - 4;
    const float bo = BIAS ? __ldg(bias + o) : 0.f;
#pragma unroll
    for (int j0 = 0; j0 < 8; j0 += G) {
      float t = 0.f;
#pragma unroll
      for (int q = 0; q < G; ++q) {
        const int j = j0 + q, c = j < 4 ? tx * 4 + j : BN / 2 + tx * 4 + j - 4;
        const long long n = n0 + c, b = n / D;
        if (n < NTOT) t += put((b * O + o) * D + (n - b * D), acc[i][j] + bo);
      }
      const int c0 = j0 < 4 ? tx * 4 + j0 : BN / 2 + tx * 4 + j0 - 4;
      if (pool != nullptr) atomicAdd(pool + o * S + c0 / D, t);
    }
  }
}
)CUDA";

const char* const kMma = R"CUDA(
#include <mma.h>
// Tensor-core CIN: 4 warps (2 along O x 2 along N), each FM x 2 fragments of
// 16x16; BN = 64. Traits: r() rounds an operand to the math precision as
// the reference does, e() converts a float to the MMA element (rounding
// once), e4() stores four of them.
template <int P> struct cagr_mma;
template <> struct cagr_mma<1> {
  using E = float;
  using F = nvcuda::wmma::precision::tf32;
  static constexpr int KF = 8, BK = 16, PAD = 4;
  static __device__ __forceinline__ float r(float x) { return cagr_tf32(x); }
  static __device__ __forceinline__ E e(float x) { return cagr_tf32(x); }
  static __device__ __forceinline__ void e4(E* d, float4 v) {
    *reinterpret_cast<float4*>(d) = make_float4(cagr_tf32(v.x), cagr_tf32(v.y), cagr_tf32(v.z), cagr_tf32(v.w));
  }
};
__device__ __forceinline__ __nv_bfloat16 cagr_cvt(float x, __nv_bfloat16) { return __float2bfloat16_rn(x); }
__device__ __forceinline__ __half cagr_cvt(float x, __half) { return __float2half_rn(x); }
template <typename H> struct cagr_mma16 {
  using E = H;
  using F = H;
  static constexpr int KF = 16, BK = 32, PAD = 8;
  static __device__ __forceinline__ E e(float x) { return cagr_cvt(x, H()); }
  static __device__ __forceinline__ float r(float x) {
    const E t = e(x);
    return cagr_ld(&t, 0);
  }
  static __device__ __forceinline__ void e4(E* d, float4 v) {
    d[0] = e(v.x);
    d[1] = e(v.y);
    d[2] = e(v.z);
    d[3] = e(v.w);
  }
};
template <> struct cagr_mma<2> : cagr_mma16<__nv_bfloat16> {};
template <> struct cagr_mma<3> : cagr_mma16<__half> {};

template <int O, int H, int M, int D, int P, int FM, bool BIAS, typename PUT>
__device__ __forceinline__ void cagr_cin_mma(const float* __restrict__ xk, const float* __restrict__ x0,
                                             const float* __restrict__ w, const float* __restrict__ bias, PUT put,
                                             long long B) {
  using namespace nvcuda;
  using T = cagr_mma<P>;
  using E = typename T::E;
  constexpr int K = H * M, BM = 32 * FM, BN = 64, BK = T::BK, KF = T::KF;
  constexpr int LDA = BK + T::PAD, LDB = BN + T::PAD;
  constexpr bool X0S = M <= 48;  // the block's x0 columns, rounded once, stay in shared memory
  __shared__ __align__(32) E As[BM * LDA];
  __shared__ __align__(32) E Bs[BK * LDB];
  __shared__ __align__(32) float Cs[4][256];
  __shared__ float x0s[X0S ? M * BN : 1];
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32, wm = warp / 2, wn = warp % 2;
  const long long NTOT = B * D, n0 = (long long)blockIdx.x * BN;
  const int o0 = blockIdx.y * BM;
  // This thread's Z column (b, d) and its half of the tile's rows.
  const int zj = tid % BN, zk = tid / BN;
  const long long zn = n0 + zj, zb = zn / D;
  const int zd = (int)(zn - zb * D);
  const bool zok = zn < NTOT;
  const float* xkp = xk + zb * H * D + zd;
  if constexpr (X0S) cagr_cin_x0<M, D, BN>(x0s, x0, n0, NTOT, 128, [](float v) { return T::r(v); });
  wmma::fragment<wmma::accumulator, 16, 16, KF, float> acc[FM][2];
#pragma unroll
  for (int i = 0; i < FM; ++i)
#pragma unroll
    for (int j = 0; j < 2; ++j) wmma::fill_fragment(acc[i][j], 0.f);
  for (int k0 = 0; k0 < K; k0 += BK) {
    if constexpr (K % 4 == 0) {
      for (int e = tid; e < BM * (BK / 4); e += 128) {
        const int i = e / (BK / 4), kk = (e % (BK / 4)) * 4, o = o0 + i, k = k0 + kk;
        float4 v = make_float4(0.f, 0.f, 0.f, 0.f);
        if (o < O && k < K) v = __ldg(reinterpret_cast<const float4*>(w + (long long)o * K + k));
        T::e4(As + i * LDA + kk, v);
      }
    } else {
      for (int e = tid; e < BM * BK; e += 128) {
        const int i = e / BK, kk = e % BK, o = o0 + i, k = k0 + kk;
        As[i * LDA + kk] = T::e((o < O && k < K) ? __ldg(w + (long long)o * K + k) : 0.f);
      }
    }
    for (int kk = zk; kk < BK; kk += 2) {  // two threads per Z column
      const int k = k0 + kk, h = k / M, m = k - h * M;
      float z = 0.f;
      if (zok && k < K) {
        const float a0 = X0S ? x0s[m * BN + zj] : T::r(__ldg(x0 + (zb * M + m) * D + zd));
        z = T::r(__ldg(xkp + h * D)) * a0;
      }
      Bs[kk * LDB + zj] = T::e(z);
    }
    __syncthreads();
#pragma unroll
    for (int ks = 0; ks < BK; ks += KF) {
      wmma::fragment<wmma::matrix_b, 16, 16, KF, typename T::F, wmma::row_major> fb[2];
#pragma unroll
      for (int j = 0; j < 2; ++j) wmma::load_matrix_sync(fb[j], Bs + ks * LDB + wn * 32 + j * 16, LDB);
#pragma unroll
      for (int i = 0; i < FM; ++i) {
        wmma::fragment<wmma::matrix_a, 16, 16, KF, typename T::F, wmma::row_major> fa;
        wmma::load_matrix_sync(fa, As + (wm * FM * 16 + i * 16) * LDA + ks, LDA);
#pragma unroll
        for (int j = 0; j < 2; ++j) wmma::mma_sync(acc[i][j], fa, fb[j], acc[i][j]);
      }
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < FM; ++i) {
#pragma unroll
    for (int j = 0; j < 2; ++j) {
      wmma::store_matrix_sync(Cs[warp], acc[i][j], 16, wmma::mem_row_major);
      __syncwarp();
#pragma unroll 1
      for (int e = lane; e < 256; e += 32) {
        cagr_cin_put<O, D, BIAS>(put, bias, o0 + wm * FM * 16 + i * 16 + e / 16, n0 + wn * 32 + j * 16 + e % 16, NTOT,
                                 Cs[warp][e]);
      }
      __syncwarp();
    }
  }
}
)CUDA";

// Shared memory (dynamic and pooled row sums) of one cagr_cin_ffma_step
// block at most: two fit an sm_90 SM, one an sm_86 one.
constexpr int64_t kCinStepSharedLimit = 96 * 1024;
// Warps along O of one cagr_cin_x3_step block (8 warps, 256 / WO columns,
// WO / 2 blocks per SM at most WO = 4): 4, or CAGR_CIN_X3_WO=2 / 8. On
// xDeepFM fp32 (H200) WO = 4 ran the 200x200x22 layer at 46.8 TFLOP/s at
// batch 4096 against WO = 2's 40.3 (17.5 against 10.4 at batch 256).
// Small launches of cagr_cin_x3_step (fewer than two blocks of columns per
// SM: CodegenRequest::sms) run as clusters of 2 blocks, each half of H
// (sm_90). xDeepFM fp32 on the H200 (132 SMs), 200x200x22 layer: batch 256
// (64 blocks) 33.3 TFLOP/s split against 17.5; batch 4096 (1024 blocks)
// 45.6 against 46.7 unsplit; 4-way splits measured slower at both.
// CAGR_CIN_X3_SPLIT=1 turns it off.
int64_t cinX3Split() {
  const std::string v = envValue("CAGR_CIN_X3_SPLIT");
  return v == "1" ? 1 : v == "4" ? 4 : 2;
}
// Stages of W slices cagr_cin_x3_step keeps in flight: CAGR_CIN_X3_STAGES
// (2..4), else 2; fewer where shared memory runs short. Slices per stage
// (h steps per barrier): CAGR_CIN_X3_HSTEP (1 or 2), else 2 (measured
// faster in both math modes, bench/cuda/FINDINGS.md).
int64_t cinX3Stages() {
  const std::string v = envValue("CAGR_CIN_X3_STAGES");
  return v == "3" ? 3 : v == "4" ? 4 : 2;
}
int64_t cinX3HStep() { return envValue("CAGR_CIN_X3_HSTEP") == "1" ? 1 : 2; }
// m16 column tiles per warp: CAGR_CIN_X3_MT (1 or 2), else 2; one halves the
// block's columns (twice the blocks for a small batch).
int64_t cinX3Tiles() { return envValue("CAGR_CIN_X3_MT") == "1" ? 1 : 2; }
// Whether every value of an f32 constant is finite (the one-term kernel
// rounds W with an integer add, which would turn a NaN into a number).
bool allFinite(const Tensor* t) {
  if (t == nullptr || t->dtype() != DType::kF32) return false;
  for (float x : t->values<float>()) {
    if (!std::isfinite(x)) return false;
  }
  return true;
}
int64_t cinX3WarpsAlongO() {
  const std::string v = envValue("CAGR_CIN_X3_WO");
  return v == "2" ? 2 : v == "8" ? 8 : 4;
}

// cagr_cin_wg_step: the shared memory one block may take (an sm_90 SM
// has 227 KiB for one block).
constexpr int64_t kCinWgSharedLimit = 227 * 1024;
// Launches of cagr_cin_wg_step with fewer blocks of columns than half the
// SMs run as clusters of CAGR_CIN_WG_SPLIT (1, 2 or 4; default 2) blocks,
// each a part of H. xDeepFM on one H100 (cagr bench, whole plan, ms):
// batch 256 (32 blocks) fp32 0.4889 unsplit, 0.2956 in 2, 0.3446 in 4;
// tf32 0.2884, 0.1964, 0.2439; batch 1024 (128 blocks, never split) fp32
// 0.5446, 0.5390 and 0.5458 with the split forced.
int64_t cinWgSplit() {
  const std::string v = envValue("CAGR_CIN_WG_SPLIT");
  return v == "1" ? 1 : v == "4" ? 4 : 2;
}

// f32 CIN layers run on FFMA (every product exact in f32): the 3xTF32
// tensor-core kernel measured less accurate on xDeepFM's layers (max abs
// error 14x FFMA's; test/backends/cuda_f32_accuracy_test.cc), so it is not
// a lossless default. CAGR_CUDA_CIN_F32=3xtf32 selects it for experiments.
bool f32CinOnFfma() { return envValue("CAGR_CUDA_CIN_F32") != "3xtf32"; }
// CAGR_CUDA_CIN_TF32=wmma keeps tf32 CIN layers on the wmma kernel
// (cagr_cin_mma) where cagr_cin_x3_step's one-term form would run.
bool tf32CinOnWmma() { return envValue("CAGR_CUDA_CIN_TF32") == "wmma"; }

}  // namespace

int mathCode(Precision p) {
  switch (p) {
    case Precision::kTF32:
      return 1;
    case Precision::kBF16:
      return 2;
    case Precision::kF16:
      return 3;
    default:
      return 0;
  }
}

namespace {

// A pooled tail: the group's last member when it is a ReduceSum (groups.cc
// checkCinPooling allows one only over D, with D dividing 64).
NodeId pooling(const CodegenRequest& r) {
  NodeId last = r.members.back();
  return r.members.size() > 1 && r.g.node(last).op == OpKind::kReduceSum ? last : -1;
}

// The request without its pooled tail: the members before the ReduceSum,
// the outputs but its own (the map stays one only where a later kernel reads it).
CodegenRequest withoutPooling(const CodegenRequest& r, NodeId sum) {
  CodegenRequest out{r.g, r.members, r.shape, r.kernel, {}, r.sm, r.sms, r.afterGenerated, r.batch};
  out.members.pop_back();
  for (ValueId v : r.outputs) {
    if (v != r.g.node(sum).outputs[0]) out.outputs.push_back(v);
  }
  return out;
}

// Static shared memory of cagr_cin_mma (math code p >= 1) with FM fragments
// per warp along O, M x0 rows and `poolRows` floats of row sums per O row.
int64_t mmaSharedBytes(int p, int64_t fm, int64_t M, int64_t poolRows) {
  const int64_t e = p == 1 ? 4 : 2, bk = p == 1 ? 16 : 32, pad = p == 1 ? 4 : 8, bm = 32 * fm;
  return bm * (bk + pad) * e + bk * (64 + pad) * e + 4 * 256 * 4 + (M <= 48 ? M * 64 * 4 : 4) + bm * poolRows * 4;
}

}  // namespace

StatusOr<GeneratedKernel> generateCin(const CodegenRequest& req, std::string& src) {
  const NodeId sum = pooling(req);
  const CodegenRequest pooled = sum >= 0 ? withoutPooling(req, sum) : req;
  const CodegenRequest& r = pooled;  // the kernel over the CIN and its elementwise tail
  const Graph& g = r.g;
  NodeId id = r.shape.anchor >= 0 ? r.shape.anchor : r.members.front();
  const Node& n = g.node(id);
  if (n.op != OpKind::kCIN) return unsupportedAt(g, id, "a CIN kernel runs one CIN node and its elementwise tail");
  const auto& xk = g.type(n.inputs[0]).dims;
  const auto& x0 = g.type(n.inputs[1]).dims;
  const auto& w = g.type(n.inputs[2]).dims;
  bool bias = n.inputs.size() > 3 && n.inputs[3] != kNoValue;
  for (ValueId v : n.inputs) {
    if (v != kNoValue && (g.type(v).dtype != DType::kF32 || g.value(v).mir.storage != Precision::kF32)) {
      return unsupportedAt(g, id, "operand '" + g.value(v).name + "' is not stored as f32");
    }
  }
  bool fixed = xk.size() == 3 && x0.size() == 3 && w.size() == 2 && !isSymbolic(xk[1]) && !isSymbolic(xk[2]) &&
               !isSymbolic(x0[1]) && !isSymbolic(w[0]) && xk[0] == x0[0] && xk[2] == x0[2] && w[1] == xk[1] * x0[1];
  if (!fixed) return unsupportedAt(g, id, "operands are not [B,H,D], [B,M,D], [O,H*M] with static H, M, D, O");
  int64_t O = w[0], H = xk[1], M = x0[1], D = xk[2];
  if (sum >= 0 && (D > 64 || 64 % D != 0 || g.value(g.node(sum).outputs[0]).mir.storage != Precision::kF32)) {
    return unsupportedAt(g, sum, "pools a CIN layer whose D does not divide 64, or into a reduced-precision output");
  }
  int P = mathCode(n.mir.math);
  // f32 math on up to 256 rows, O % 8 == 0, W a constant: one h per K step,
  // W read as its transpose, from sm_80 on (cp.async): FFMA
  // (cagr_cin_ffma_step, 64 columns, two blocks per SM), or with
  // CAGR_CUDA_CIN_F32=3xtf32 on tensor cores (M <= 48, cagr_cin_x3_step). tf32 math of the
  // same shapes: cagr_cin_x3_step with one term (CAGR_CUDA_CIN_TF32=wmma:
  // cagr_cin_mma).
  const bool wideShape = O % 8 == 0 && O >= 64 && O <= 256 && g.isConstant(n.inputs[2]);
  const bool wide = P == 0 && wideShape;
  const bool x3Math =
      P == 0 ? wide && !f32CinOnFfma() : P == 1 && wideShape && !tf32CinOnWmma() && allFinite(g.constant(n.inputs[2]));
  const int64_t mp = (M + 7) / 8 * 8, lda = O % 32 == 0 || O % 32 == 16 ? O + 8 : O;
  const int64_t x3Split = r.sm >= 90 ? cinX3Split() : 1;  // cluster launches need sm_90
  const int64_t x3Wo = cinX3WarpsAlongO(), x3Mt = cinX3Tiles(), x3Columns = 128 * x3Mt / x3Wo;
  const int64_t x3Exchange = x3Split > 1 ? x3Mt * ((O / 8 + x3Wo - 1) / x3Wo) * 4 * 256 * 4 : 0;
  const int64_t x3Pool = sum >= 0 ? O * (x3Columns / D) * 4 : 0;
  int64_t x3Stages = cinX3Stages(), x3HStep = cinX3HStep();
  while (x3Stages > 2 && x3Stages * x3HStep * mp * lda * 4 + x3Pool > kCinStepSharedLimit) --x3Stages;
  if (x3Stages * x3HStep * mp * lda * 4 + x3Pool > kCinStepSharedLimit) x3HStep = 1;
  const int64_t x3Shared = std::max(x3Stages * x3HStep * mp * lda * 4, x3Exchange);
  const bool x3 = x3Math && r.sm >= 80 && M <= 48 && (sum < 0 || x3Columns % D == 0) &&
                  x3Shared + x3Pool <= kCinStepSharedLimit;
  // sm_90a: those layers with M <= 32 on warpgroup MMAs (cagr_cin_wg_step,
  // codegen_cin_wg.cc) unless CAGR_CUDA_CIN_WG=0; as many stages of W's
  // planes as fit, 4 to 8 (or the cluster exchange), 128 columns a block.
  const int64_t wgPlanes = P == 0 ? 2 : 1, wgPool = sum >= 0 ? O * (128 / D) * 4 : 0;
  const int64_t wgStages = std::clamp<int64_t>((kCinWgSharedLimit - 1024 - wgPool) / (wgPlanes * O * 128), 4, 8);
  const int64_t wgShared = std::max(wgStages * wgPlanes * O * 128, O * 512) + 1024;
  // Not for a plan priced at a batch of fewer 128-column blocks than an
  // eighth of the SMs (there cagr_cin_x3_step's smaller blocks fill more of
  // them): xDeepFM on one H100 (cagr bench, ms, the same plans on either
  // kernel): fp32 batch 64 (8 blocks) 0.2145 on cagr_cin_x3_step against
  // 0.2222, 256 (32 blocks) 0.3796 against 0.2956, 1024 1.237 against
  // 0.539, 4096 4.553 against 2.029; tf32 64 0.1521 against 0.1393, 256
  // 0.2412 against 0.1964, 4096 2.384 against 1.478. CAGR_CUDA_CIN_WG=1
  // takes it at any batch, =0 never.
  const std::string wgEnv = envValue("CAGR_CUDA_CIN_WG");
  const bool wgBatch = wgEnv == "1" || r.batch <= 0 || r.batch * D * 8 >= int64_t{128} * r.sms;
  // bf16 math: two xk rows a stage (K = 2 M, padded to 16, in 128 bytes), at
  // any batch (the wmma kernel, its alternative, is 5-10x slower at every
  // batch) unless CAGR_CUDA_CIN_BF16=wmma. xDeepFM bf16, every CIN layer on
  // nvrtc.cin, one H100 (cin_variants.py, ms / peak MB): batch 256 0.140 /
  // 15.1 against the wmma kernel's 1.364 / 17.2 and cuBLASLt's 0.157 / 61.0;
  // 4096 0.879 / 139 against 5.94 / 141 and 1.485 / 353. A plan's
  // unassigned bf16 layers still run on cuBLASLt (other GPUs have only the
  // wmma kernel); greedy moves them by the profile's nvrtc.cin_bf16.
  const bool wgBf16 = P == 2 && wideShape && envValue("CAGR_CUDA_CIN_BF16") != "wmma" && H % 2 == 0 && 2 * M <= 64;
  const bool wg = (x3 || wgBf16) && r.sm == 90 && mp <= 32 && wgEnv != "0" && (wgBatch || wgBf16) &&
                  (sum < 0 || 128 % D == 0) && wgShared + wgPool <= kCinWgSharedLimit;
  const int64_t stepShared = (2 * M * O + 3 * M * 64) * 4;
  const int64_t poolShared = sum >= 0 ? O * (64 / D) * 4 : 0;
  const bool step = wide && !x3 && r.sm >= 80 && stepShared + poolShared <= kCinStepSharedLimit;  // cp.async
  KernelBuilder k(r, "cin", src);
  // W: the step kernels read it transposed; the one-term tf32 one also rounded.
  const std::string wArg = wg            ? (P == 2 ? k.inGrouped(n.inputs[2], 2 * M, 64, false, true, Precision::kBF16)
                                                   : k.inGrouped(n.inputs[2], M, 32, P == 0, true))
                           : x3 && P == 1 ? k.inTransposedTf32(n.inputs[2])
                           : step || x3 ? k.inTransposed(n.inputs[2])
                                        : k.in(n.inputs[2]);
  std::string args = k.in(n.inputs[0]) + ", " + k.in(n.inputs[1]) + ", " + wArg + ", " +
                     (bias ? k.in(n.inputs[3]) : std::string("nullptr")) + ", put, " + k.dim(xk[0]);
  // Each output element goes through the group's elementwise tail (members
  // after the CIN) and is stored into every group output it reaches.
  CAGR_ASSIGN_OR_RETURN(TailChain tail, TailChain::plan(k, id));
  std::string put;
  CAGR_RETURN_IF_ERROR(tail.emit(k, "v", "l", put, "    "));
  // The tile: BM rows of O by BN columns (b, d) per block, BN a multiple of D when pooling.
  int64_t bm = 0, bn = 0, mt = 0, nt = 0, fm = 0;
  if (step || x3 || wg) {
    bm = O, bn = wg ? 128 : x3 ? x3Columns : 64;
  } else if (P == 0) {
    mt = (O + 7) / 8 <= 32 ? (O + 7) / 8 : 16;
    nt = std::clamp<int64_t>(256 / mt, 1, 32);
    if (sum >= 0) {  // 8 * nt columns of whole samples
      const int64_t q = D / std::gcd<int64_t>(D, 8);
      nt = std::max(q, nt / q * q);
    }
    bm = 8 * mt, bn = 8 * nt;
  } else {
    fm = (O + 31) / 32 <= 8 ? (O + 31) / 32 : 4;
    while (sum >= 0 && fm > 1 && mmaSharedBytes(P, fm, M, 64 / D) > 48 * 1024) --fm;
    bm = 32 * fm, bn = 64;
  }
  std::string prologue, epilogue;
  if (sum >= 0) {
    const std::string tile = std::to_string(bm) + ", " + std::to_string(bn / D);
    ValueEmitter e(k, put, "    ");
    e.bind(n.outputs[0], "l", "v");
    CAGR_ASSIGN_OR_RETURN(std::string t, e.at(g.node(sum).inputs[0], "l"));
    const std::string add = "    cagr_cin_pool_add<" + std::to_string(O) + ", " + std::to_string(D) + ", " + tile +
                            ">(pool, l, " + t + ");\n";
    put += step || x3 || wg ? "    return " + t + ";\n" : add;  // the step kernels pool what put returns
    prologue = "  __shared__ float pool[" + std::to_string(bm * (bn / D)) + "];\n  cagr_cin_pool_zero<" + tile +
               ">(pool);\n";
    epilogue = "  cagr_cin_pool_store<" + std::to_string(O) + ", " + tile + ">(pool, " + k.dim(xk[0]) +
               ", [&](long long i, float s) { cagr_st(" + k.out(g.node(sum).outputs[0]) + ", i, s); });\n";
  }
  // The step kernel's put returns what a pooled tail sums (0 without one).
  const bool returns = step || x3 || wg;
  k.body = prologue + "  auto put = [&](long long l, float v)" + (returns ? " -> float" : "") + " {\n" + put +
           (returns && sum < 0 ? "    return 0.f;\n" : "") + "  };\n";
  std::string shape =
      std::to_string(O) + ", " + std::to_string(H) + ", " + std::to_string(M) + ", " + std::to_string(D);
  std::string b = bias ? "true" : "false";
  LaunchRule rule;
  rule.work = {xk[0], D};
  rule.maxBlocks = int64_t{1} << 30;
  rule.perBlock = bn;
  std::string name = "nvrtc.cin[" + std::to_string(O) + "x" + std::to_string(H) + "x" + std::to_string(M) + ", " +
                     precisionName(n.mir.math);
  const std::string suffix = tail.suffix(g) + (sum >= 0 ? "+sum" : "");
  if (wg) {
    k.body += "  cagr_cin_wg_step<" + shape + ", " + b + ", " + std::to_string(P) + ", " + std::to_string(wgStages) +
              ">(" + args + (sum >= 0 ? ", pool" : ", nullptr") + ");\n" + epilogue;
    rule.threads = 256;
    rule.sharedBytes = static_cast<unsigned>(wgShared);
    rule.minBlocksPerSm = 1;
    rule.splitY = static_cast<unsigned>(cinWgSplit());
    rule.splitBelow = int64_t{r.sms} / 2;
    CAGR_RETURN_IF_ERROR(tail.emitSideCopies(k, k.body));
    return k.finish(src, rule, name + (P == 0 ? ", 3xtf32 wgmma]" : P == 2 ? ", bf16 wgmma]" : ", wgmma]") + suffix,
                    std::string(kCinCommon) + tf32x3Helpers() + cinWgOperands() + cinWgSource() +
                        cinWgMma(static_cast<int>(O), P == 2),
                    "CAGR_CIN_WG_" + std::to_string(O) + (P == 2 ? "_BF16" : ""));
  }
  if (x3) {
    k.body += "  cagr_cin_x3_step<" + shape + ", " + std::to_string(x3Wo) + ", " + b + ", " + (P == 0 ? "3" : "1") +
              ", " + std::to_string(x3Stages) + ", " + std::to_string(x3HStep) + ", " + std::to_string(x3Mt) +
              ">(" + args + (sum >= 0 ? ", pool" : ", nullptr") + ");\n" + epilogue;
    rule.threads = 256;
    rule.sharedBytes = static_cast<unsigned>(x3Shared);
    rule.minBlocksPerSm = static_cast<unsigned>(x3Wo == 8 ? 3 : x3Wo / 2);
    rule.splitY = static_cast<unsigned>(x3Split);
    rule.splitBelow = 2 * int64_t{r.sms};
    CAGR_RETURN_IF_ERROR(tail.emitSideCopies(k, k.body));
    return k.finish(src, rule, name + (P == 0 ? ", 3xtf32]" : ", mma]") + suffix,
                    std::string(kCinCommon) + tf32x3Helpers() + cinX3Source(), "CAGR_CIN_X3_STEP");
  }
  if (step) {
    k.body += "  cagr_cin_ffma_step<" + shape + ", " + b + ">(" + args + (sum >= 0 ? ", pool" : ", nullptr") + ");\n" +
              epilogue;
    rule.threads = static_cast<unsigned>(O);
    rule.sharedBytes = static_cast<unsigned>(stepShared);
    rule.minBlocksPerSm = 2;  // ptxas keeps the 8x8 tile in <= 128 registers without spills
    CAGR_RETURN_IF_ERROR(tail.emitSideCopies(k, k.body));
    return k.finish(src, rule, name + ", ffma-step]" + suffix, std::string(kCinCommon) + kFfmaStep,
                    "CAGR_CIN_FFMA_STEP");
  }
  if (P == 0) {
    k.body += "  cagr_cin_ffma<" + shape + ", " + std::to_string(mt) + ", " + std::to_string(nt) + ", " + b + ">(" +
              args + ");\n" + epilogue;
    rule.threads = static_cast<unsigned>(mt * nt);
    rule.gridY = static_cast<unsigned>((O + bm - 1) / bm);
    // Two blocks per SM, so one block's tile loads overlap the other's FFMAs
    // (ptxas then keeps the 8x8 tile in <= 128 registers, ~100 bytes spilled).
    rule.minBlocksPerSm = 2;
    CAGR_RETURN_IF_ERROR(tail.emitSideCopies(k, k.body));
    return k.finish(src, rule, name + ", ffma]" + suffix, std::string(kCinCommon) + kFfma, "CAGR_CIN_FFMA");
  }
  k.body += "  cagr_cin_mma<" + shape + ", " + std::to_string(P) + ", " + std::to_string(fm) + ", " + b + ">(" + args +
            ");\n" + epilogue;
  rule.threads = 128;
  rule.gridY = static_cast<unsigned>((O + bm - 1) / bm);
  CAGR_RETURN_IF_ERROR(tail.emitSideCopies(k, k.body));
  return k.finish(src, rule, name + ", wmma]" + suffix, std::string(kCinCommon) + kMma, "CAGR_CIN_MMA");
}

}  // namespace cagr::cuda::gen
