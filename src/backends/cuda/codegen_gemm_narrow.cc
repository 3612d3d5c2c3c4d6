// nvrtc.gemm_small's kernel for narrow f32 layers with many rows (DLRM's
// 256 -> 64 and 64 -> 16 at batch 4096): N of 16, 32 or 64 columns, a static
// K of at most 256 (a multiple of 4), A row-major, B as [K][N]. A block of
// 512 threads holds all of B in shared memory (64 KB at 256 x 64, copied
// once per block) and computes BM = 32 (or 16) whole rows of C at a time:
// the rows' BM x K slice of A arrives by cp.async in the same round trip as
// B (16 bytes at a time, zeros past M), then each of H parts of 512 / H
// threads sums a slice of K — thread (ty, tx) of a part keeps rows ty * TM
// .. + TM - 1 by columns 4 tx .. 4 tx + 3 in registers (H = 4: 16 sums for
// every 8 shared-memory loads of a k quad at N = 64; H = 8: 32 for 12) —
// and the parts' sums meet in shared memory, where all 512 threads add them
// and run the epilogue. H is 4 (CAGR_GEMM_NARROW_PARTS=8: eight).
// With 32 rows per block a 4096-row layer is 128 blocks, one per SM of an
// H200; launches of fewer rows than 16 per SM take 16-row tiles (BM, picked
// by the caller at run time: codegen_gemm.cc narrowCall), twice the blocks.
// Measured there (ncu, DLRM's inputs) on the way to this form: K in
// chunks of 32 through a 3-stage cp.async ring, one part of 128 threads:
// 4096x64x256 + bias + ReLU 11.8 us against cuBLASLt's 12.6, 4096x16x64 4.9
// against 6.0 (0.39 warps issued per scheduler cycle); two parts 11.0 and
// 4.5-4.9; four parts 10.4 and 5.1-5.3 — about as long for one block as
// for 128 (the probe's 4-row call), so the time was the chunks' round
// trips, one block's chain, which staging all of K at once removes.
// A GEMM chain (groups.cc checkGemmChain: DLRM's 256 -> 64 -> 16) runs as
// this kernel with N2 > 0: the first layer's 32 x N rows, through its
// activation (`act`), stay in shared memory, where every thread of the block
// multiplies them by the second layer's [N][N2] weights (copied with W) and
// stores through the second layer's epilogue — one launch, and the
// intermediate rows never reach memory.
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
// Shared floats of cagr_gemm_narrow_core<N, K, N2, H>: A's row tile (or the
// H parts' sums, whichever is larger), all of W, and for a chain (N2 > 0)
// the second layer's weights W2 [N][N2] and the first layer's rows [BM][HP].
template <int N, int K, int N2 = 0, int H = 4, int BM_ = 32>
struct CagrNarrowShape {
  static constexpr int T = 512, TG = T / H, BM = BM_, LN = N / 4, TM = BM * LN / TG, KP = K + 4, HP = N + 4;
  static constexpr int RED = H * BM * N, AS = BM * KP > RED ? BM * KP : RED;
  static constexpr int FLOATS = AS + K * N + (N2 > 0 ? N * N2 + BM * HP : 0);
};
// C(m, n) = sum_k A[m * K + k] * W[k * N + n]; epi(0, m, n, acc) stores.
// Chain (N2 > 0): act(0, m, n, acc) is the first layer's value as the second
// reads it; D(m, c) = sum_n act(m, n) * W2[n * N2 + c], epi(0, m, c, D) stores.
// H parts of 512 / H threads each sum a slice of K; their sums meet in
// shared memory, where every thread adds four outputs' H partial sums (in
// part order) and runs their epilogue.
template <int N, int K, int N2, int H, int BM_, typename EPI, typename ACT>
__device__ __forceinline__ void cagr_gemm_narrow_core(long long M, const float* __restrict__ A,
                                                      const float* __restrict__ W, const float* __restrict__ W2,
                                                      ACT act, EPI epi) {
  using S = CagrNarrowShape<N, K, N2, H, BM_>;
  constexpr int TG = S::TG, T = S::T, BM = S::BM, LN = S::LN, TM = S::TM, KP = S::KP, Q = K / 4;
  static_assert(N % 16 == 0 && N <= 64 && K % 4 == 0 && TM >= 1 && TM * TG == BM * LN, "cagr_gemm_narrow: shape");
  static_assert(N2 >= 0 && N2 <= 64, "cagr_gemm_narrow: a chain's second layer has at most 64 columns");
  extern __shared__ __align__(16) float cagr_narrow_smem[];
  float* As = cagr_narrow_smem;  // [BM][KP], then the parts' sums [H][BM][N]
  float* Ws = cagr_narrow_smem + S::AS;  // [K][N]
  float* W2s = Ws + K * N;  // chain: [N][N2]
  float* Hs = W2s + N * N2;  // chain: [BM][HP]
  // Part h (TG threads) sums k quads [h Q / H, (h + 1) Q / H).
  const int tid = threadIdx.x, h = tid / TG, tg = tid % TG, tx = tg % LN, ty = tg / LN;
  const int q0 = h * Q / H, q1 = (h + 1) * Q / H;
  const bool vecA = (reinterpret_cast<unsigned long long>(A) & 15ull) == 0;
  if ((long long)blockIdx.x * BM >= M) return;  // no row tile: no copies left in flight
  if ((reinterpret_cast<unsigned long long>(W) & 15ull) == 0) {
    for (int e = tid; e < K * LN; e += T) cagr_narrow_cp<16>(Ws + 4 * e, W + 4 * e, true);
  } else {
    for (int e = tid; e < K * N; e += T) cagr_narrow_cp<4>(Ws + e, W + e, true);
  }
  if constexpr (N2 > 0) {
    for (int e = tid; e < N * N2; e += T) cagr_narrow_cp<4>(W2s + e, W2 + e, true);
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
    __syncthreads();  // every part is done with A's tile: the parts' sums go there
#pragma unroll
    for (int i = 0; i < TM; ++i) {
      *reinterpret_cast<float4*>(As + (h * BM + ty * TM + i) * N + 4 * tx) =
          make_float4(acc[i][0], acc[i][1], acc[i][2], acc[i][3]);
    }
    __syncthreads();
    for (int o = 4 * tid; o < BM * N; o += 4 * T) {
      float4 s = *reinterpret_cast<const float4*>(As + o);
#pragma unroll
      for (int p = 1; p < H; ++p) {
        const float4 x = *reinterpret_cast<const float4*>(As + p * BM * N + o);
        s.x += x.x, s.y += x.y, s.z += x.z, s.w += x.w;
      }
      const float v[4] = {s.x, s.y, s.z, s.w};
      const int i = o / N, n = o - i * N;
      const long long m = m0 + i;
      if constexpr (N2 > 0) {  // rows past M: zeros, never stored
#pragma unroll
        for (int j = 0; j < 4; ++j) Hs[i * S::HP + n + j] = m < M ? act(0ll, m, (long long)(n + j), v[j]) : 0.f;
      } else if (m < M) {
#pragma unroll
        for (int j = 0; j < 4; ++j) epi(0ll, m, (long long)(n + j), v[j]);
      }
    }
    __syncthreads();  // the next row tile's copies overwrite the sums; a chain's rows are complete
    if constexpr (N2 > 0) {
      for (int o = tid; o < BM * N2; o += T) {
        const int i = o / N2, c = o - i * N2;
        const float* hr = Hs + i * S::HP;
        float d = 0.f;
#pragma unroll 16
        for (int n = 0; n < N; ++n) d = fmaf(hr[n], W2s[n * N2 + c], d);
        if (m0 + i < M) epi(0ll, m0 + i, (long long)c, d);
      }
      __syncthreads();  // the next tile's first layer rewrites the rows
    }
  }
}
template <int N, int K, int H, int BM, typename EPI>
__device__ __forceinline__ void cagr_gemm_narrow(long long M, const float* __restrict__ A,
                                                 const float* __restrict__ W, EPI epi) {
  cagr_gemm_narrow_core<N, K, 0, H, BM>(
      M, A, W, nullptr, [](long long, long long, long long, float v) { return v; }, epi);
}
)CUDA";
}

}  // namespace cagr::cuda::gen
