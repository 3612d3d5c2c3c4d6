// nvrtc.gemm_small's f32 tile on tensor cores (sm_80+, opt-in with
// CAGR_CUDA_GEMM_F32=x3: codegen_gemm.cc says why it is not the default):
// 3xTF32, as the f32 CIN kernel (codegen_cin_x3.cc): each operand split into
// a TF32 high part and the f32 remainder, each product lo*hi + hi*lo + hi*hi
// from three m16n8k8 TF32 MMAs accumulated in f32 — about 2^-20 relative
// per product against FFMA's 2^-24, f32 accumulation either way.
//
// A block computes a BM x BN tile of C with (BM / WM) x (BN / WN) warps, each
// a WM x WN part as (WM / 16) x (WN / 8) MMA tiles. K runs in chunks of 32:
// the next chunk's A and B elements are read into registers (through the
// same element lambdas as the FFMA tile: any transpose, broadcast or batch)
// while the MMAs consume the current one from shared memory, A as [m][k]
// and B as [n][k] (k contiguous in memory) or [k][n], each padded so a
// warp's fragment loads and its stores hit 32 different banks. Operands are
// split into hi / lo as fragments are loaded; dependent MMAs (one
// accumulator) stand MT * NT apart. The MMAs of one chunk sum into a fresh
// accumulator that an f32 add then adds to the tile's: the tensor core
// truncates each sum to the magnitude of its largest addend (C included),
// so one accumulator over all of K drifts toward zero — measured on the
// H200 at 3e-4 absolute on sums of 512 products of magnitude ~1 (1e-4 on
// 256), where FFMA stays within 1e-5. Inf or NaN operands give NaN (the
// split subtracts inf from inf), where FFMA could give inf.
#include "backends/cuda/codegen_kernel.h"

namespace cagr::cuda::gen {

const char* tf32x3Helpers() {
  return R"CUDA(
#ifndef CAGR_TF32X3_HELPERS
#define CAGR_TF32X3_HELPERS
// hi: x with its low 13 mantissa bits cleared (a TF32 value); lo = x - hi,
// exact in f32, which the MMA reads truncated to TF32.
__device__ __forceinline__ void cagr_split_tf32(float x, unsigned& hi, unsigned& lo) {
  hi = __float_as_uint(x) & 0xffffe000u;
  lo = __float_as_uint(x - __uint_as_float(hi));
}
// c += a * b, one m16n8k8 TF32 MMA (a row-major 16x8, b column-major 8x8).
__device__ __forceinline__ void cagr_mma_tf32(float (&c)[4], const unsigned (&a)[4], unsigned b0, unsigned b1) {
  asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
// Thread-block clusters (sm_90): wait for every block of the cluster, and
// load a float at a shared-memory address of block `rank`.
// (Only launched so on sm_90: the PTX exists from there on.)
__device__ __forceinline__ void cagr_cluster_sync() {
#if __CUDA_ARCH__ >= 900
  asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;\n" ::: "memory");
#endif
}
__device__ __forceinline__ unsigned cagr_cluster_addr(const float* p, unsigned rank) {
  unsigned r = 0;
#if __CUDA_ARCH__ >= 900
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n"
               : "=r"(r)
               : "r"(static_cast<unsigned>(__cvta_generic_to_shared(p))), "r"(rank));
#endif
  return r;
}
__device__ __forceinline__ float cagr_cluster_ld(unsigned a) {
  float v = 0.f;
#if __CUDA_ARCH__ >= 900
  asm volatile("ld.shared::cluster.f32 %0, [%1];\n" : "=f"(v) : "r"(a) : "memory");
#endif
  return v;
}
// The C blocks of a cluster hold partial sums acc of the same tile: blocks
// 1.. leave theirs in `smem` (THREADS * A * B * 4 floats, free), block 0
// adds them; every block returns once block 0 has read them all.
template <int A, int B, int THREADS>
__device__ __forceinline__ void cagr_cluster_sum(float (&acc)[A][B][4], float* smem, int C, int rank) {
  constexpr int E = A * B * 4;
  const int tid = threadIdx.x;
  if (rank > 0) {
#pragma unroll
    for (int e = 0; e < E; ++e) smem[e * THREADS + tid] = acc[e / (B * 4)][e / 4 % B][e % 4];
  }
  cagr_cluster_sync();
  if (rank == 0) {
    for (int q = 1; q < C; ++q) {
      const unsigned base = cagr_cluster_addr(smem + tid, q);
#pragma unroll
      for (int e = 0; e < E; ++e) acc[e / (B * 4)][e / 4 % B][e % 4] += cagr_cluster_ld(base + e * THREADS * 4);
    }
  }
  cagr_cluster_sync();
}
#endif
)CUDA";
}

const char* gemmX3Source() {
  return R"CUDA(
// A warp's MT x NT MMA tiles (4 floats per thread each): zeroed, the three
// 3xTF32 terms of one k8 step over all of them (dependent MMAs MT * NT
// apart), one block added into another, and stored through epi — c0, c1:
// row g, columns 2t, 2t+1; c2, c3: row g + 8 — from the warp's first row
// m0 and column n0.
template <int MT, int NT>
__device__ __forceinline__ void cagr_x3_zero(float (&a)[MT][NT][4]) {
#pragma unroll
  for (int i = 0; i < MT; ++i)
#pragma unroll
    for (int j = 0; j < NT; ++j)
#pragma unroll
      for (int c = 0; c < 4; ++c) a[i][j][c] = 0.f;
}
// An A fragment (a0 .. a3) split into its TF32 high parts and remainders.
__device__ __forceinline__ void cagr_x3_split_a(float a0, float a1, float a2, float a3, unsigned (&hi)[4],
                                                unsigned (&lo)[4]) {
  cagr_split_tf32(a0, hi[0], lo[0]);
  cagr_split_tf32(a1, hi[1], lo[1]);
  cagr_split_tf32(a2, hi[2], lo[2]);
  cagr_split_tf32(a3, hi[3], lo[3]);
}
template <int MT, int NT>
__device__ __forceinline__ void cagr_x3_mma3(float (&part)[MT][NT][4], const unsigned (&ah)[MT][4],
                                             const unsigned (&al)[MT][4], const unsigned (&bh)[NT][2],
                                             const unsigned (&bl)[NT][2]) {
#pragma unroll
  for (int term = 0; term < 3; ++term)
#pragma unroll
    for (int i = 0; i < MT; ++i)
#pragma unroll
      for (int j = 0; j < NT; ++j) {
        if (term == 0) cagr_mma_tf32(part[i][j], al[i], bh[j][0], bh[j][1]);
        if (term == 1) cagr_mma_tf32(part[i][j], ah[i], bl[j][0], bl[j][1]);
        if (term == 2) cagr_mma_tf32(part[i][j], ah[i], bh[j][0], bh[j][1]);
      }
}
template <int MT, int NT>
__device__ __forceinline__ void cagr_x3_add(float (&acc)[MT][NT][4], const float (&part)[MT][NT][4]) {
#pragma unroll
  for (int i = 0; i < MT; ++i)
#pragma unroll
    for (int j = 0; j < NT; ++j)
#pragma unroll
      for (int c = 0; c < 4; ++c) acc[i][j][c] += part[i][j][c];
}
template <int MT, int NT, typename EPI>
__device__ __forceinline__ void cagr_x3_store(const float (&acc)[MT][NT][4], long long bi, long long m0, long long n0,
                                              long long M, long long N, EPI epi) {
  const int g = threadIdx.x % 32 / 4, t = threadIdx.x % 4;
#pragma unroll
  for (int i = 0; i < MT; ++i)
#pragma unroll
    for (int j = 0; j < NT; ++j)
#pragma unroll
      for (int c = 0; c < 4; ++c) {
        const long long m = m0 + 16 * i + g + 8 * (c / 2), n = n0 + 8 * j + 2 * t + c % 2;
        if (m < M && n < N) epi(bi, m, n, acc[i][j][c]);
      }
}
// C[bi](m, n) = sum_k A(bi, m, k) * B(bi, k, n) on tensor cores, 3xTF32;
// epi(bi, m, n, acc) stores. KMAJOR_B: B's k index is the contiguous one.
template <int BM, int BN, int WM, int WN, bool KMAJOR_B, typename LA, typename LB, typename EPI>
__device__ __forceinline__ void cagr_gemm_x3(long long batch, long long M, long long N, long long K, LA la, LB lb,
                                             EPI epi) {
  constexpr int BK = 32, THREADS = 32 * (BM / WM) * (BN / WN), MT = WM / 16, NT = WN / 8;
  constexpr int LDA = BK + 4, LDB = KMAJOR_B ? BK + 4 : BN + 8;
  constexpr int AE = BM * BK / THREADS, BE = BN * BK / THREADS;
  static_assert(AE * THREADS == BM * BK && BE * THREADS == BN * BK, "cagr_gemm_x3: threads cover the chunk");
  __shared__ __align__(16) float As[BM * LDA];
  __shared__ __align__(16) float Bs[KMAJOR_B ? BN * LDB : BK * LDB];
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32, g = lane / 4, t = lane % 4;
  const int wm = warp % (BM / WM), wn = warp / (BM / WM);
  const long long mt = (M + BM - 1) / BM, nt = (N + BN - 1) / BN, tiles = batch * mt * nt;
  for (long long tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    const long long bi = tile / (mt * nt), rem = tile % (mt * nt), m0 = rem / nt * BM, n0 = rem % nt * BN;
    float ra[AE], rb[BE];
    auto fetch = [&](long long k0) {
#pragma unroll
      for (int r = 0; r < AE; ++r) {
        const int e = tid + r * THREADS, i = e / BK, kk = e % BK;
        const long long m = m0 + i, k = k0 + kk;
        ra[r] = (m < M && k < K) ? la(bi, m, k) : 0.f;
      }
#pragma unroll
      for (int r = 0; r < BE; ++r) {
        const int e = tid + r * THREADS, j = KMAJOR_B ? e / BK : e % BN, kk = KMAJOR_B ? e % BK : e / BN;
        const long long n = n0 + j, k = k0 + kk;
        rb[r] = (n < N && k < K) ? lb(bi, k, n) : 0.f;
      }
    };
    float acc[MT][NT][4];
    cagr_x3_zero(acc);
    fetch(0);
    for (long long k0 = 0; k0 < K; k0 += BK) {
      __syncthreads();  // every warp is done with the previous chunk (or tile)
#pragma unroll
      for (int r = 0; r < AE; ++r) {
        const int e = tid + r * THREADS;
        As[e / BK * LDA + e % BK] = ra[r];
      }
#pragma unroll
      for (int r = 0; r < BE; ++r) {
        const int e = tid + r * THREADS;
        Bs[KMAJOR_B ? e / BK * LDB + e % BK : e / BN * LDB + e % BN] = rb[r];
      }
      __syncthreads();
      if (k0 + BK < K) fetch(k0 + BK);  // in flight while the MMAs run
      float part[MT][NT][4];
      cagr_x3_zero(part);
#pragma unroll
      for (int ks = 0; ks < BK / 8; ++ks) {
        unsigned ah[MT][4], al[MT][4], bh[NT][2], bl[NT][2];
#pragma unroll
        for (int i = 0; i < MT; ++i) {  // a0 (g, t), a1 (g+8, t), a2 (g, t+4), a3 (g+8, t+4)
          const float* a = As + (wm * WM + 16 * i + g) * LDA + 8 * ks + t;
          cagr_x3_split_a(a[0], a[8 * LDA], a[4], a[8 * LDA + 4], ah[i], al[i]);
        }
#pragma unroll
        for (int j = 0; j < NT; ++j) {  // b0 (k t, n g), b1 (k t+4, n g)
          const int n = wn * WN + 8 * j + g, k = 8 * ks + t;
          cagr_split_tf32(Bs[KMAJOR_B ? n * LDB + k : k * LDB + n], bh[j][0], bl[j][0]);
          cagr_split_tf32(Bs[KMAJOR_B ? n * LDB + k + 4 : (k + 4) * LDB + n], bh[j][1], bl[j][1]);
        }
        cagr_x3_mma3(part, ah, al, bh, bl);
      }
      cagr_x3_add(acc, part);
    }
    cagr_x3_store(acc, bi, m0 + wm * WM, n0 + wn * WN, M, N, epi);
  }
}

// Both operands k-contiguous in memory: C(m, n) = sum_k A[m * K + k] * Bt[n * K + k]
// (a weight stored [N, K], or uploaded transposed). Chunks arrive by
// cp.async in a STAGES-deep ring (16-byte copies where K % 4 == 0 and both
// operands are 16-byte aligned, else one float each; zero-filled past M, N
// and K), rows LD = 40 floats apart. Within each group of 8 k, MMA slot t
// takes k = 2t and slot t + 4 takes k = 2t + 1 (a sum does not care which k
// sits in which slot as long as A and B agree), so a thread's two values
// per row are one 8-byte load, and 40-float rows keep a half-warp's loads
// on 32 different banks.
// One chunk of A's rows m0.. and Bt's rows n0.. (k0..k0+BK) into shared
// memory, W floats per copy.
template <int W, int BM, int BN, int BK, int LD, int THREADS>
__device__ __forceinline__ void cagr_x3_load(float* as, float* bs, const float* A, const float* Bt, long long m0,
                                             long long n0, long long k0, long long M, long long N, long long K) {
  constexpr int PER = BK / W;
  for (int e = threadIdx.x; e < (BM + BN) * PER; e += THREADS) {
    const bool b = e >= BM * PER;
    const int row = (b ? e - BM * PER : e) / PER, kk = (e % PER) * W;
    const long long r = (b ? n0 : m0) + row, k = k0 + kk;
    const bool ok = r < (b ? N : M) && k < K;
    const float* base = b ? Bt : A;
    const unsigned d = static_cast<unsigned>(__cvta_generic_to_shared((b ? bs : as) + row * LD + kk));
    const float* src = ok ? base + r * K + k : base;
    if constexpr (W == 4) {
      asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(d), "l"(src), "r"(ok ? 16 : 0));
    } else {
      asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(d), "l"(src), "r"(ok ? 4 : 0));
    }
  }
}
template <int BM, int BN, int WM, int WN, int STAGES, typename EPI>
__device__ __forceinline__ void cagr_gemm_x3_kk(long long M, long long N, long long K, const float* __restrict__ A,
                                                const float* __restrict__ Bt, EPI epi) {
  constexpr int BK = 32, LD = BK + 8, THREADS = 32 * (BM / WM) * (BN / WN), MT = WM / 16, NT = WN / 8;
  extern __shared__ __align__(16) float cagr_x3_smem[];
  float* As = cagr_x3_smem;                     // [STAGES][BM][LD]
  float* Bs = cagr_x3_smem + STAGES * BM * LD;  // [STAGES][BN][LD]
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32, g = lane / 4, t = lane % 4;
  const int wm = warp % (BM / WM), wn = warp / (BM / WM);
  const bool vec = K % 4 == 0 && ((reinterpret_cast<unsigned long long>(A) | reinterpret_cast<unsigned long long>(Bt)) &
                                  15ull) == 0;
  const long long mt = (M + BM - 1) / BM, nt = (N + BN - 1) / BN, kchunks = (K + BK - 1) / BK;
  // gridDim.y = C > 1 (clusters of C blocks along y, sm_90): block y sums
  // chunks [y * per, (y + 1) * per); block 0 adds the others' sums, read
  // from their shared memory, and stores.
  const int C = (int)gridDim.y, rank = (int)blockIdx.y;
  const long long per = (kchunks + C - 1) / C, first = rank * per, chunks = min(kchunks, first + per);
  for (long long tile = blockIdx.x; tile < mt * nt; tile += gridDim.x) {
    const long long m0 = tile / nt * BM, n0 = tile % nt * BN;
    // One commit group per call, empty past the last chunk (wait_group counts groups).
    auto load = [&](int stage, long long c) {
      if (c < chunks) {
        float *as = As + stage * BM * LD, *bs = Bs + stage * BN * LD;
        if (vec) {
          cagr_x3_load<4, BM, BN, BK, LD, THREADS>(as, bs, A, Bt, m0, n0, c * BK, M, N, K);
        } else {
          cagr_x3_load<1, BM, BN, BK, LD, THREADS>(as, bs, A, Bt, m0, n0, c * BK, M, N, K);
        }
      }
      asm volatile("cp.async.commit_group;\n" ::);
    };
#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) load(s, first + s);
    float acc[MT][NT][4];
    cagr_x3_zero(acc);
    for (long long c = first; c < chunks; ++c) {
      asm volatile("cp.async.wait_group %0;\n" ::"n"(STAGES - 2));
      __syncthreads();  // chunk c is in; every warp is done with chunk c - 1's stage
      load(static_cast<int>((c - first + STAGES - 1) % STAGES), c + STAGES - 1);
      const int stage = static_cast<int>((c - first) % STAGES);
      const float* as = As + stage * BM * LD + (wm * WM + g) * LD + 2 * t;
      const float* bs = Bs + stage * BN * LD + (wn * WN + g) * LD + 2 * t;
      float part[MT][NT][4];
      cagr_x3_zero(part);
#pragma unroll
      for (int ks = 0; ks < BK / 8; ++ks) {
        unsigned ah[MT][4], al[MT][4], bh[NT][2], bl[NT][2];
#pragma unroll
        for (int i = 0; i < MT; ++i) {  // a0 (g, slot t), a1 (g+8, t), a2 (g, t+4), a3 (g+8, t+4)
          const float2 r0 = *reinterpret_cast<const float2*>(as + 16 * i * LD + 8 * ks);
          const float2 r8 = *reinterpret_cast<const float2*>(as + (16 * i + 8) * LD + 8 * ks);
          cagr_x3_split_a(r0.x, r8.x, r0.y, r8.y, ah[i], al[i]);
        }
#pragma unroll
        for (int j = 0; j < NT; ++j) {  // b0 (slot t, n g), b1 (slot t+4, n g)
          const float2 v = *reinterpret_cast<const float2*>(bs + 8 * j * LD + 8 * ks);
          cagr_split_tf32(v.x, bh[j][0], bl[j][0]);
          cagr_split_tf32(v.y, bh[j][1], bl[j][1]);
        }
        cagr_x3_mma3(part, ah, al, bh, bl);
      }
      cagr_x3_add(acc, part);
    }
    asm volatile("cp.async.wait_group 0;\n" ::);
    __syncthreads();  // the next tile's first loads (or the exchange) overwrite the stages
    if (C > 1) {
      cagr_cluster_sum<MT, NT, THREADS>(acc, As, C, rank);  // the stages (A's and B's rings) hold the exchange
      if (rank > 0) continue;
    }
    cagr_x3_store(acc, 0ll, m0 + wm * WM, n0 + wn * WN, M, N, epi);
  }
}
)CUDA";
}

}  // namespace cagr::cuda::gen
