// nvrtc.gemm_small's kernel for narrow f32 layers with many rows (DLRM's
// 256 -> 64 and 64 -> 16 at batch 4096): N of 16, 32 or 64 columns, a static
// K of at most 256 (a multiple of 4), A row-major, B as [K][N]. A block of
// 512 threads holds all of B in shared memory (64 KB at 256 x 64, copied
// once per block) and computes 32 whole rows of C at a time: the rows' 32 x
// K slice of A arrives by cp.async in the same round trip as B (16 bytes at
// a time, zeros past M), then each of four parts of 128 threads sums a
// quarter of K — thread (ty, tx) of a part keeps rows ty * TM .. + TM - 1 by
// columns 4 tx .. 4 tx + 3 in registers, 16 sums for every 8 shared-memory
// loads of a k quad at N = 64 — and the parts' sums meet in shared memory.
// With 32 rows per block a 4096-row layer is 128 blocks, one per SM of an
// H200. Measured there (ncu, DLRM's inputs) on the way to this form: K in
// chunks of 32 through a 3-stage cp.async ring, one part of 128 threads:
// 4096x64x256 + bias + ReLU 11.8 us against cuBLASLt's 12.6, 4096x16x64 4.9
// against 6.0 (0.39 warps issued per scheduler cycle); two parts 11.0 and
// 4.5-4.9; four parts 10.4 and 5.1-5.3 — about as long for one block as
// for 128 (the probe's 4-row call), so the time was the chunks' round
// trips, one block's chain, which staging all of K at once removes.
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
// Shared floats of cagr_gemm_narrow<N, K>: A's row tile (or the parts'
// exchange, whichever is larger) and all of W.
template <int N, int K>
struct CagrNarrowShape {
  static constexpr int H = 4, TG = 128, T = H * TG, BM = 32, LN = N / 4, TM = BM * LN / TG, KP = K + 4;
  static constexpr int RED = (H - 1) * TM * 4 * TG, AS = BM * KP > RED ? BM * KP : RED;
};
// C(m, n) = sum_k A[m * K + k] * W[k * N + n]; epi(0, m, n, acc) stores.
template <int N, int K, typename EPI>
__device__ __forceinline__ void cagr_gemm_narrow(long long M, const float* __restrict__ A,
                                                 const float* __restrict__ W, EPI epi) {
  using S = CagrNarrowShape<N, K>;
  constexpr int H = S::H, TG = S::TG, T = S::T, BM = S::BM, LN = S::LN, TM = S::TM, KP = S::KP, Q = K / 4;
  static_assert(N % 16 == 0 && N <= 64 && K % 4 == 0 && TM * TG == BM * LN, "cagr_gemm_narrow: shape");
  extern __shared__ __align__(16) float cagr_narrow_smem[];
  float* As = cagr_narrow_smem;  // [BM][KP], then the parts' exchange
  float* Ws = cagr_narrow_smem + S::AS;  // [K][N]
  // Part h (128 threads) sums k quads [h Q / H, (h + 1) Q / H).
  const int tid = threadIdx.x, h = tid / TG, tg = tid % TG, tx = tg % LN, ty = tg / LN;
  const int q0 = h * Q / H, q1 = (h + 1) * Q / H;
  const bool vecA = (reinterpret_cast<unsigned long long>(A) & 15ull) == 0;
  if ((long long)blockIdx.x * BM >= M) return;  // no row tile: no copies left in flight
  if ((reinterpret_cast<unsigned long long>(W) & 15ull) == 0) {
    for (int e = tid; e < K * LN; e += T) cagr_narrow_cp<16>(Ws + 4 * e, W + 4 * e, true);
  } else {
    for (int e = tid; e < K * N; e += T) cagr_narrow_cp<4>(Ws + e, W + e, true);
  }
  for (long long m0 = (long long)blockIdx.x * BM; m0 < M; m0 += (long long)gridDim.x * BM) {
    if (vecA) {
      for (int e = tid; e < BM * Q; e += T) {
        const int i = e / Q, q = e - i * Q;
        const bool ok = m0 + i < M;
        cagr_narrow_cp<16>(As + i * KP + 4 * q, ok ? A + (m0 + i) * K + 4 * q : A, ok);
      }
    } else {
      for (int e = tid; e < BM * K; e += T) {
        const int i = e / K, k = e - i * K;
        const bool ok = m0 + i < M;
        cagr_narrow_cp<4>(As + i * KP + k, ok ? A + (m0 + i) * K + k : A, ok);
      }
    }
    cagr_narrow_commit();
    cagr_narrow_wait<0>();
    __syncthreads();
    float acc[TM][4];
#pragma unroll
    for (int i = 0; i < TM; ++i) acc[i][0] = acc[i][1] = acc[i][2] = acc[i][3] = 0.f;
    const float *as = As + ty * TM * KP, *ws = Ws + 4 * tx;
#pragma unroll 4
    for (int q = q0; q < q1; ++q) {
      float4 w[4];
#pragma unroll
      for (int j = 0; j < 4; ++j) w[j] = *reinterpret_cast<const float4*>(ws + (4 * q + j) * N);
#pragma unroll
      for (int i = 0; i < TM; ++i) {
        const float4 a = *reinterpret_cast<const float4*>(as + i * KP + 4 * q);
        const float av[4] = {a.x, a.y, a.z, a.w};
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          acc[i][0] = fmaf(av[j], w[j].x, acc[i][0]);
          acc[i][1] = fmaf(av[j], w[j].y, acc[i][1]);
          acc[i][2] = fmaf(av[j], w[j].z, acc[i][2]);
          acc[i][3] = fmaf(av[j], w[j].w, acc[i][3]);
        }
      }
    }
    __syncthreads();  // every part is done with A's tile: parts 1.. leave their sums there
    if (h > 0) {
#pragma unroll
      for (int e = 0; e < TM * 4; ++e) As[((h - 1) * TM * 4 + e) * TG + tg] = acc[e / 4][e % 4];
    }
    __syncthreads();
    if (h == 0) {
#pragma unroll
      for (int p = 0; p < H - 1; ++p)
#pragma unroll
        for (int e = 0; e < TM * 4; ++e) acc[e / 4][e % 4] += As[(p * TM * 4 + e) * TG + tg];
#pragma unroll
      for (int i = 0; i < TM; ++i) {
        const long long m = m0 + ty * TM + i;
        if (m < M) {
#pragma unroll
          for (int j = 0; j < 4; ++j) epi(0ll, m, (long long)(4 * tx + j), acc[i][j]);
        }
      }
    }
    __syncthreads();  // the next row tile's copies overwrite the exchange
  }
}
)CUDA";
}

}  // namespace cagr::cuda::gen
