// nvrtc.gemm_small's kernel for narrow f32 layers with many rows (DLRM's
// 256 -> 64 and 64 -> 16 at batch 4096): N of 16, 32 or 64 columns, a static
// K of at most 256 (a multiple of 4), A row-major, B as [K][N]. A block of
// 256 threads computes 32 whole rows of C, K in chunks of 32: each chunk's
// 32 x 32 slice of A and 32 x N slice of B arrive in shared memory by
// cp.async (16 bytes at a time, zeros past M and K) two chunks ahead of the
// one being summed, so a block with no other block on its SM is not bound
// by one L2 round trip per chunk. Each of four parts of the block (128
// threads) sums a quarter of every chunk: thread (ty, tx) of a part keeps
// rows ty * TM .. + TM - 1 by columns 4 tx .. 4 tx + 3 in registers (16 sums
// for every 8 shared-memory loads of a k quad at N = 64), and the parts'
// sums meet in shared memory at the end. With 32 rows per block a 4096-row
// layer is 128 blocks, one per SM of an H200, 16 warps each. Measured on
// the H200 (ncu, DLRM's inputs): one part of 128 threads ran 4096x64x256 +
// bias + ReLU in 11.8 us against cuBLASLt's 12.6 and 4096x16x64 in 4.9
// against 6.0, at 0.39 warps issued per scheduler cycle; two parts 11.0 and
// 4.5-4.9 (0.48): the time is one block's chain of dependent loads and
// sums (the probe's one-block call takes as long as 128 blocks), which more
// parts cut.
#include "backends/cuda/codegen_kernel.h"

namespace cagr::cuda::gen {

const char* gemmNarrowSource() {
  return R"CUDA(
// 16 (or 4) bytes global -> shared, zeros when !ok (sm_80+: cp.async).
template <int BYTES>
__device__ __forceinline__ void cagr_narrow_cp(float* s, const float* g, bool ok) {
#if __CUDA_ARCH__ >= 800
  const unsigned a = static_cast<unsigned>(__cvta_generic_to_shared(s));
  if constexpr (BYTES == 16) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(a), "l"(g), "r"(ok ? 16 : 0));
  } else {
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(a), "l"(g), "r"(ok ? 4 : 0));
  }
#else
#pragma unroll
  for (int q = 0; q < BYTES / 4; ++q) s[q] = ok ? __ldg(g + q) : 0.f;
#endif
}
template <int PENDING>
__device__ __forceinline__ void cagr_narrow_wait() {
#if __CUDA_ARCH__ >= 800
  asm volatile("cp.async.wait_group %0;\n" ::"n"(PENDING) : "memory");
#endif
}
__device__ __forceinline__ void cagr_narrow_commit() {
#if __CUDA_ARCH__ >= 800
  asm volatile("cp.async.commit_group;\n" ::: "memory");
#endif
}
// C(m, n) = sum_k A[m * K + k] * W[k * N + n]; epi(0, m, n, acc) stores.
template <int N, int K, typename EPI>
__device__ __forceinline__ void cagr_gemm_narrow(long long M, const float* __restrict__ A,
                                                 const float* __restrict__ W, EPI epi) {
  constexpr int H = 4, T = 128 * H, TG = 128, BM = 32, BK = 32, S = 3, LN = N / 4, TM = BM * LN / TG, AP = BK + 4;
  constexpr int KC = (K + BK - 1) / BK;
  static_assert(N % 16 == 0 && N <= 64 && K % 4 == 0 && TM * TG == BM * LN, "cagr_gemm_narrow: shape");
  static_assert(S * (BM * AP + BK * N) >= (H - 1) * TM * 4 * TG, "cagr_gemm_narrow: the stages hold the exchange");
  __shared__ __align__(16) float smem[S * (BM * AP + BK * N)];
  auto As = [&](int stage) { return smem + stage * BM * AP; };
  auto Ws = [&](int stage) { return smem + S * BM * AP + stage * BK * N; };
  // H parts of 128 threads: part h sums k in [8 h, 8 h + 8) of every chunk.
  const int tid = threadIdx.x, h = tid / TG, tg = tid % TG, tx = tg % LN, ty = tg / LN;
  const bool vec = (reinterpret_cast<unsigned long long>(A) & 15ull) == 0;
  for (long long m0 = (long long)blockIdx.x * BM; m0 < M; m0 += (long long)gridDim.x * BM) {
    // One commit group per call, empty past the last chunk (wait_group counts groups).
    auto load = [&](int c) {
      if (c < KC) {
        float *as = As(c % S), *ws = Ws(c % S);
        const int k0 = c * BK;
        if (vec) {
#pragma unroll
          for (int e = tid; e < BM * BK / 4; e += T) {
            const int i = e / (BK / 4), k = k0 + 4 * (e % (BK / 4));
            const bool ok = m0 + i < M && k < K;
            cagr_narrow_cp<16>(as + i * AP + k - k0, ok ? A + (m0 + i) * K + k : A, ok);
          }
        } else {
          for (int e = tid; e < BM * BK; e += T) {
            const int i = e / BK, k = k0 + e % BK;
            const bool ok = m0 + i < M && k < K;
            cagr_narrow_cp<4>(as + i * AP + k - k0, ok ? A + (m0 + i) * K + k : A, ok);
          }
        }
#pragma unroll
        for (int e = tid; e < BK * LN; e += T) {
          const int kk = e / LN, k = k0 + kk;
          cagr_narrow_cp<16>(ws + 4 * e, k < K ? W + (long long)k * N + 4 * (e % LN) : W, k < K);
        }
      }
      cagr_narrow_commit();
    };
#pragma unroll
    for (int c = 0; c < S - 1; ++c) load(c);
    float acc[TM][4];
#pragma unroll
    for (int i = 0; i < TM; ++i) acc[i][0] = acc[i][1] = acc[i][2] = acc[i][3] = 0.f;
    for (int c = 0; c < KC; ++c) {
      cagr_narrow_wait<S - 2>();
      __syncthreads();  // chunk c is in; every thread is done with chunk c - 1's stage
      load(c + S - 1);
      const float *as = As(c % S) + ty * TM * AP, *ws = Ws(c % S) + 4 * tx;
#pragma unroll
      for (int k = h * (BK / H); k < (h + 1) * (BK / H); k += 4) {
        float4 w[4];
#pragma unroll
        for (int q = 0; q < 4; ++q) w[q] = *reinterpret_cast<const float4*>(ws + (k + q) * N);
#pragma unroll
        for (int i = 0; i < TM; ++i) {
          const float4 a = *reinterpret_cast<const float4*>(as + i * AP + k);
          const float av[4] = {a.x, a.y, a.z, a.w};
#pragma unroll
          for (int q = 0; q < 4; ++q) {
            acc[i][0] = fmaf(av[q], w[q].x, acc[i][0]);
            acc[i][1] = fmaf(av[q], w[q].y, acc[i][1]);
            acc[i][2] = fmaf(av[q], w[q].z, acc[i][2]);
            acc[i][3] = fmaf(av[q], w[q].w, acc[i][3]);
          }
        }
      }
    }
    cagr_narrow_wait<0>();
    __syncthreads();  // every chunk is summed: the stages hold the exchange
    float* red = smem;  // parts 1.. leave their sums in the stages
    if (h > 0) {
#pragma unroll
      for (int e = 0; e < TM * 4; ++e) red[((h - 1) * TM * 4 + e) * TG + tg] = acc[e / 4][e % 4];
    }
    __syncthreads();
    if (h == 0) {
#pragma unroll
      for (int q = 0; q < H - 1; ++q)
#pragma unroll
        for (int e = 0; e < TM * 4; ++e) acc[e / 4][e % 4] += red[(q * TM * 4 + e) * TG + tg];
    }
    __syncthreads();  // the next row tile's copies overwrite the stages
    if (h != 0) continue;
#pragma unroll
    for (int i = 0; i < TM; ++i) {
      const long long m = m0 + ty * TM + i;
      if (m < M) {
#pragma unroll
        for (int j = 0; j < 4; ++j) epi(0ll, m, (long long)(4 * tx + j), acc[i][j]);
      }
    }
  }
}
)CUDA";
}

}  // namespace cagr::cuda::gen
