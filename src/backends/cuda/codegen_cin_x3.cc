// nvrtc.cin's f32 kernel on tensor cores (sm_80+): 3xTF32. Each operand
// splits into x = hi + lo, hi x truncated to TF32 and lo the remainder
// (exact in f32), which the MMA truncates to TF32 once more; each product
// is then lo*hi + hi*lo + hi*hi from three TF32 MMAs accumulated in f32,
// which leaves out lo*lo and lo's low bits: about 2^-20 per product against
// f32 FFMA's 2^-24, f32 accumulation either way (the GPU test holds both
// kernels to the same bound against the reference executor). The
// exact-product FFMA kernel stays selectable with CAGR_CUDA_CIN_F32=ffma.
//
// The MMA's M is the (b, d) columns and its N the O output rows, so O % 8 ==
// 0 leaves no padding (xDeepFM's O = 200 is 25 n8 tiles). Per K step one h
// as in cagr_cin_ffma_step: Wt's M x O slice (W uploaded transposed)
// arrives by cp.async in a double buffer, rows M..MP-1 (MP = M rounded up
// to 8) zero; the A operand Z[(b,d), m] = xk[b,h,d] * x0[b,m,d] never
// touches shared memory: a thread's fragment rows are fixed columns, so it
// holds their x0 values (m = t, t+4, ...: MP / 2 per pair of rows) in
// registers from the start and one xk value per column and h. Block: 8
// warps, WO along O (each NTW n8 tiles) x 8 / WO along columns (two m16
// tiles each), BN = 256 / WO columns. A pooled tail adds a fragment's 16
// rows (one sample's, or a part of one, when D % 16 == 0) across the warp
// before one shared-memory atomic; else one atomic per value.
#include "backends/cuda/codegen_kernel.h"

namespace cagr::cuda::gen {

const char* cinX3Source() {
  return R"CUDA(
// gridDim.y = C > 1 (launched as clusters of C blocks along y, sm_90): the
// C blocks of a cluster share a tile of columns, block y taking h in
// [y * HC, (y + 1) * HC); blocks 1.. leave their sums in shared memory,
// block 0 adds them and stores. Dynamic shared memory: the larger of the
// stages and 2 * NTW * 4 * 256 floats.
template <int O, int H, int M, int D, int WO, bool BIAS, typename P>
__device__ __forceinline__ void cagr_cin_x3_step(const float* __restrict__ xk, const float* __restrict__ x0,
                                                 const float* __restrict__ wt, const float* __restrict__ bias, P put,
                                                 long long B, float* pool) {
  constexpr int THREADS = 256, BN = 32 * (8 / WO), MP = (M + 7) / 8 * 8, KS = MP / 8;
  constexpr int NT8 = O / 8, NTW = (NT8 + WO - 1) / WO, OQ = O / 4, JC = 4;
  constexpr int LDA = (O % 32 == 0 || O % 32 == 16) ? O + 8 : O;  // fragment loads free of bank conflicts
  static_assert(O % 8 == 0, "O % 8 == 0");
  extern __shared__ __align__(16) float cagr_cin_dyn[];
  float* As = cagr_cin_dyn;  // [2][MP][LDA]
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32, g = lane / 4, t = lane % 4;
  const int wo = warp % WO, wn = warp / WO;
  const long long NTOT = B * D, nb = (long long)blockIdx.x * BN, n0 = nb + wn * 32;
  const int C = (int)gridDim.y, HC = (H + C - 1) / C, rank = (int)blockIdx.y;
  const int h0 = rank * HC, h1 = min(H, h0 + HC);
  for (int e = tid; e < 2 * (MP - M) * LDA; e += THREADS) {
    const int s = e / ((MP - M) * LDA);
    As[s * MP * LDA + M * LDA + (e - s * (MP - M) * LDA)] = 0.f;
  }
  auto loadA = [&](int buf, int h) {
    const float4* src = reinterpret_cast<const float4*>(wt + (long long)h * M * O);
    float* dst = As + buf * MP * LDA;
    for (int e = tid; e < M * OQ; e += THREADS) {
      const int m = e / OQ;
      cagr_cp16(dst + m * LDA + 4 * (e - m * OQ), src + e);
    }
    asm volatile("cp.async.commit_group;\n" ::);
  };
  if (h0 < h1) loadA(0, h0);
  // Fragment row r of m16 tile i is column n0 + 16 i + g + 8 r.
  const float* xkp[2][2];
  bool ok[2][2];
  float x0r[2][2][MP / 4], xv[2][2];
#pragma unroll
  for (int i = 0; i < 2; ++i)
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      const long long n = n0 + 16 * i + g + 8 * r, b = n / D, d = n - b * D;
      ok[i][r] = n < NTOT;
      xkp[i][r] = xk + b * H * D + d;
      xv[i][r] = ok[i][r] && h0 < h1 ? __ldg(xkp[i][r] + h0 * D) : 0.f;
#pragma unroll
      for (int q = 0; q < MP / 4; ++q) {
        const int m = t + 4 * q;
        x0r[i][r][q] = ok[i][r] && m < M ? __ldg(x0 + (b * M + m) * D + d) : 0.f;
      }
    }
  float acc[2][NTW][4];
#pragma unroll
  for (int i = 0; i < 2; ++i)
#pragma unroll
    for (int j = 0; j < NTW; ++j)
#pragma unroll
      for (int c = 0; c < 4; ++c) acc[i][j][c] = 0.f;
  for (int h = h0; h < h1; ++h) {
    asm volatile("cp.async.wait_group 0;\n" ::);
    __syncthreads();  // step h's slice is in; every warp is done with step h - 1's buffer
    if (h + 1 < h1) loadA((h + 1 - h0) & 1, h + 1);
    float xn[2][2];
#pragma unroll
    for (int i = 0; i < 2; ++i)
#pragma unroll
      for (int r = 0; r < 2; ++r) xn[i][r] = h + 1 < h1 && ok[i][r] ? __ldg(xkp[i][r] + (h + 1) * D) : 0.f;
    const float* A = As + ((h - h0) & 1) * MP * LDA + wo * NTW * 8 + g;
#pragma unroll
    for (int ks = 0; ks < KS; ++ks) {
      unsigned ahi[2][4], alo[2][4];
#pragma unroll
      for (int i = 0; i < 2; ++i) {  // a0 (g, t), a1 (g+8, t), a2 (g, t+4), a3 (g+8, t+4)
        cagr_split_tf32(xv[i][0] * x0r[i][0][2 * ks], ahi[i][0], alo[i][0]);
        cagr_split_tf32(xv[i][1] * x0r[i][1][2 * ks], ahi[i][1], alo[i][1]);
        cagr_split_tf32(xv[i][0] * x0r[i][0][2 * ks + 1], ahi[i][2], alo[i][2]);
        cagr_split_tf32(xv[i][1] * x0r[i][1][2 * ks + 1], ahi[i][3], alo[i][3]);
      }
      // JC n8 tiles at a time: their B fragments split first, then the three
      // terms over all of them, so dependent MMAs (one accumulator) stand
      // 2 * JC apart. Tiles past O (the last warp along O) are skipped by
      // the whole warp.
#pragma unroll
      for (int j0 = 0; j0 < NTW; j0 += JC) {
        unsigned bh[JC][2], bl[JC][2];  // b0 (k t, n g), b1 (k t+4, n g)
#pragma unroll
        for (int q = 0; q < JC; ++q) {
          if (j0 + q < NTW && wo * NTW + j0 + q < NT8) {
            cagr_split_tf32(A[(8 * ks + t) * LDA + 8 * (j0 + q)], bh[q][0], bl[q][0]);
            cagr_split_tf32(A[(8 * ks + t + 4) * LDA + 8 * (j0 + q)], bh[q][1], bl[q][1]);
          }
        }
#pragma unroll
        for (int term = 0; term < 3; ++term)
#pragma unroll
          for (int q = 0; q < JC; ++q) {
            if (j0 + q >= NTW || wo * NTW + j0 + q >= NT8) continue;
#pragma unroll
            for (int i = 0; i < 2; ++i) {
              if (term == 0) cagr_mma_tf32(acc[i][j0 + q], alo[i], bh[q][0], bh[q][1]);
              if (term == 1) cagr_mma_tf32(acc[i][j0 + q], ahi[i], bl[q][0], bl[q][1]);
              if (term == 2) cagr_mma_tf32(acc[i][j0 + q], ahi[i], bh[q][0], bh[q][1]);
            }
          }
      }
    }
#pragma unroll
    for (int i = 0; i < 2; ++i)
#pragma unroll
      for (int r = 0; r < 2; ++r) xv[i][r] = xn[i][r];
  }
  if (C > 1) {
    asm volatile("cp.async.wait_group 0;\n" ::);
    __syncthreads();  // the stages are free: they hold the exchange
    cagr_cluster_sum<2, NTW, THREADS>(acc, As, C, rank);
    if (rank > 0) return;
  }
  // c0, c1: row g, outputs 2t, 2t+1; c2, c3: row g+8.
  constexpr int S = BN / D;
#pragma unroll
  for (int j = 0; j < NTW; ++j) {
    if (wo * NTW + j >= NT8) break;
#pragma unroll
    for (int c = 0; c < 2; ++c) {
      const int o = (wo * NTW + j) * 8 + 2 * t + c;
      const float bo = BIAS ? __ldg(bias + o) : 0.f;
#pragma unroll
      for (int i = 0; i < 2; ++i) {
        float s[2];
#pragma unroll
        for (int r = 0; r < 2; ++r) {
          const long long n = n0 + 16 * i + g + 8 * r, b = n / D;
          s[r] = ok[i][r] ? put((b * O + o) * D + (n - b * D), acc[i][j][2 * r + c] + bo) : 0.f;
        }
        if (pool == nullptr) continue;
        const int s0 = (int)(n0 + 16 * i - nb) / D;
        if constexpr (D % 16 == 0) {
          float v = s[0] + s[1];
          v += __shfl_xor_sync(0xffffffffu, v, 4);
          v += __shfl_xor_sync(0xffffffffu, v, 8);
          v += __shfl_xor_sync(0xffffffffu, v, 16);
          if (g == 0) atomicAdd(pool + o * S + s0, v);
        } else {
#pragma unroll
          for (int r = 0; r < 2; ++r) {
            if (ok[i][r]) atomicAdd(pool + o * S + (int)(n0 + 16 * i + g + 8 * r - nb) / D, s[r]);
          }
        }
      }
    }
  }
}
)CUDA";
}

}  // namespace cagr::cuda::gen
