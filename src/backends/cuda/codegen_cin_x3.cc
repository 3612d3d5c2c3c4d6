// nvrtc.cin's f32 and tf32 kernel on tensor cores (sm_80+). f32 math:
// 3xTF32. Each operand splits into x = hi + lo, hi x truncated to TF32 and
// lo the remainder (exact in f32), which the MMA truncates to TF32 once
// more; each product is then lo*hi + hi*lo + hi*hi from three TF32 MMAs
// accumulated in f32, which leaves out lo*lo and lo's low bits: about 2^-20
// per product against f32 FFMA's 2^-24, f32 accumulation either way (the
// GPU test holds both kernels to the same bound against the reference
// executor). The exact-product FFMA kernel stays selectable with
// CAGR_CUDA_CIN_F32=ffma. tf32 math (TERMS = 1): xk and x0 rounded to TF32
// as the reference executor rounds them, W to nearest on upload (WeightFormat::tf32), their
// exact product truncated to TF32 by the MMA, one MMA per product — the
// same kernel with a third of the MMAs and no split, where the wmma kernel
// (codegen_cin.cc) ran at 29.8 TFLOP/s on the H200 against the 3xTF32
// one's 46.3. Each warp's K loop is compiled for its own number of n8
// tiles (no predicated MMA) and keeps xk two steps ahead in registers.
//
// The MMA's M is the (b, d) columns and its N the O output rows, so O % 8 ==
// 0 leaves no padding (xDeepFM's O = 200 is 25 n8 tiles). Per K step one h
// as in cagr_cin_ffma_step: Wt's M x O slice (W uploaded transposed)
// arrives by cp.async in NS stages of HS slices, rows M..MP-1 (MP = M
// rounded up to 8) zero; the A operand Z[(b,d), m] = xk[b,h,d] * x0[b,m,d] never
// touches shared memory: a thread's fragment rows are fixed columns, so it
// holds their x0 values (m = t, t+4, ...: MP / 2 per pair of rows) in
// registers from the start and one xk value per column and h. Block: 8
// warps, WO along O (each NTW n8 tiles) x 8 / WO along columns (MT m16
// tiles each), BN = 128 * MT / WO columns. A pooled tail adds a fragment's 16
// rows (one sample's, or a part of one, when D % 16 == 0) across the warp
// before one shared-memory atomic; else one atomic per value.
#include "backends/cuda/codegen_kernel.h"

namespace cagr::cuda::gen {

const char* cinX3Source() {
  return R"CUDA(
// Stage st (steps h0 + st * HS ..) of Wt into buffer st % NS, one commit
// group per stage (empty past h1, so the groups count alike).
template <int O, int M, int NS, int HS, int MP, int LDA, int THREADS>
__device__ __forceinline__ void cagr_cin_x3_load(float* As, const float* __restrict__ wt, int st, int h0, int h1,
                                                 int tid) {
  constexpr int OQ = O / 4;
#pragma unroll
  for (int hh = 0; hh < HS; ++hh) {
    const int h = h0 + st * HS + hh;
    if (h >= h1) break;
    const float4* src = reinterpret_cast<const float4*>(wt + (long long)h * M * O);
    float* dst = As + (st % NS * HS + hh) * MP * LDA;
    for (int e = tid; e < M * OQ; e += THREADS) {
      const int m = e / OQ;
      cagr_cp16(dst + m * LDA + 4 * (e - m * OQ), src + e);
    }
  }
  asm volatile("cp.async.commit_group;\n" ::);
}

// The K loop of one warp with NTV n8 tiles (its first NTV accumulators;
// NTV known at compile time, so no MMA is predicated; 0 for a warp past O,
// which still takes its part in the stages' loads and barriers).
template <int O, int M, int D, int TERMS, int NS, int HS, int MT, int NTW, int NTV>
__device__ __forceinline__ void cagr_cin_x3_loop(float* As, const float* __restrict__ wt,
                                                 const float* const (&xkp)[MT][2], const bool (&ok)[MT][2],
                                                 const float (&x0r)[MT][2][(M + 7) / 8 * 8 / 4],
                                                 float (&acc)[MT][NTW][4], int h0, int h1, int tid, int col0) {
  constexpr int THREADS = 256, MP = (M + 7) / 8 * 8, KS = MP / 8, JC = 4;
  constexpr int LDA = (O % 32 == 0 || O % 32 == 16) ? O + 8 : O;
  const int lane = tid % 32, g = lane / 4, t = lane % 4;
  auto rnd = [](float x) { return TERMS == 1 ? cagr_tf32(x) : x; };  // tf32 math: operands as the reference rounds them
  // An operand's MMA parts: f32 math hi and lo; tf32 math x itself, whose 13
  // low bits the MMA drops (the A operand, each product of two TF32 values:
  // truncated, NaN stays NaN; W, uploaded already rounded to nearest:
  // WeightFormat::tf32). Rounding in the kernel (cvt.rna.tf32, or the
  // reference's cagr_tf32) cost several instructions per fragment element
  // and left the kernel slower than the 3xTF32 one on the H200.
  auto part = [](float x, unsigned& hi, unsigned& lo) {
    if (TERMS == 1) {
      hi = __float_as_uint(x);
      lo = 0u;
    } else {
      cagr_split_tf32(x, hi, lo);
    }
  };
#pragma unroll
  for (int st = 0; st < NS - 1; ++st) cagr_cin_x3_load<O, M, NS, HS, MP, LDA, THREADS>(As, wt, st, h0, h1, tid);
  // xk values two steps deep: step h's (rounded), h + 1's (in flight since
  // step h - 1) and h + 2's (loaded during step h). The compiler issues a
  // load where it is first needed, at the end of the step, so one step
  // ahead left its latency exposed once per h (ncu, H200).
  float xv[MT][2], xn[MT][2];
#pragma unroll
  for (int i = 0; i < MT; ++i)
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      xv[i][r] = ok[i][r] && h0 < h1 ? rnd(__ldg(xkp[i][r] + h0 * D)) : 0.f;
      xn[i][r] = ok[i][r] && h0 + 1 < h1 ? __ldg(xkp[i][r] + (h0 + 1) * D) : 0.f;
    }
  for (int h = h0; h < h1; ++h) {
    const int st = (h - h0) / HS, hh = (h - h0) % HS;
    if (hh == 0) {
      asm volatile("cp.async.wait_group %0;\n" ::"n"(NS - 2));
      __syncthreads();  // stage st is in; every warp is done with stage st - 1
      cagr_cin_x3_load<O, M, NS, HS, MP, LDA, THREADS>(As, wt, st + NS - 1, h0, h1, tid);
    }
    float xnn[MT][2];
#pragma unroll
    for (int i = 0; i < MT; ++i)
#pragma unroll
      for (int r = 0; r < 2; ++r) xnn[i][r] = h + 2 < h1 && ok[i][r] ? __ldg(xkp[i][r] + (h + 2) * D) : 0.f;
    const float* A = As + (st % NS * HS + hh) * MP * LDA + col0 + g;
#pragma unroll
    for (int ks = 0; ks < KS; ++ks) {
      unsigned ahi[MT][4], alo[MT][4];
#pragma unroll
      for (int i = 0; i < MT; ++i) {  // a0 (g, t), a1 (g+8, t), a2 (g, t+4), a3 (g+8, t+4)
        part(xv[i][0] * x0r[i][0][2 * ks], ahi[i][0], alo[i][0]);
        part(xv[i][1] * x0r[i][1][2 * ks], ahi[i][1], alo[i][1]);
        part(xv[i][0] * x0r[i][0][2 * ks + 1], ahi[i][2], alo[i][2]);
        part(xv[i][1] * x0r[i][1][2 * ks + 1], ahi[i][3], alo[i][3]);
      }
      // JC n8 tiles at a time: their B fragments split first, then the three
      // terms over all of them, so dependent MMAs (one accumulator) stand
      // 2 * JC apart.
#pragma unroll
      for (int j0 = 0; j0 < NTV; j0 += JC) {
        unsigned bh[JC][2], bl[JC][2];  // b0 (k t, n g), b1 (k t+4, n g)
#pragma unroll
        for (int q = 0; q < JC; ++q) {
          if (j0 + q < NTV) {
            part(A[(8 * ks + t) * LDA + 8 * (j0 + q)], bh[q][0], bl[q][0]);
            part(A[(8 * ks + t + 4) * LDA + 8 * (j0 + q)], bh[q][1], bl[q][1]);
          }
        }
#pragma unroll
        for (int term = 3 - TERMS; term < 3; ++term)
#pragma unroll
          for (int q = 0; q < JC; ++q) {
            if (j0 + q >= NTV) continue;
#pragma unroll
            for (int i = 0; i < MT; ++i) {
              if (term == 0) cagr_mma_tf32(acc[i][j0 + q], alo[i], bh[q][0], bh[q][1]);
              if (term == 1) cagr_mma_tf32(acc[i][j0 + q], ahi[i], bl[q][0], bl[q][1]);
              if (term == 2) cagr_mma_tf32(acc[i][j0 + q], ahi[i], bh[q][0], bh[q][1]);
            }
          }
      }
    }
#pragma unroll
    for (int i = 0; i < MT; ++i)
#pragma unroll
      for (int r = 0; r < 2; ++r) {
        xv[i][r] = rnd(xn[i][r]);
        xn[i][r] = xnn[i][r];
      }
  }
}

// gridDim.y = C > 1 (launched as clusters of C blocks along y, sm_90): the
// C blocks of a cluster share a tile of columns, block y taking h in
// [y * HC, (y + 1) * HC); blocks 1.. leave their sums in shared memory,
// block 0 adds them and stores. Dynamic shared memory: the larger of the
// NS stages of HS slices of W each (NS x HS x MP x LDA floats: the next NS
// - 1 stages in flight while one runs; one barrier per stage) and MT * NTW
// * 4 * 256 floats.
template <int O, int H, int M, int D, int WO, bool BIAS, int TERMS, int NS, int HS, int MT, typename P>
__device__ __forceinline__ void cagr_cin_x3_step(const float* __restrict__ xk, const float* __restrict__ x0,
                                                 const float* __restrict__ wt, const float* __restrict__ bias, P put,
                                                 long long B, float* pool) {
  constexpr int THREADS = 256, BN = 16 * MT * (8 / WO), MP = (M + 7) / 8 * 8;
  constexpr int NT8 = O / 8, NTW = (NT8 + WO - 1) / WO;
  constexpr int LDA = (O % 32 == 0 || O % 32 == 16) ? O + 8 : O;  // fragment loads free of bank conflicts
  // Warps along O: the first NFULL have NTW n8 tiles, the next NREM, any after none.
  constexpr int NFULL = NT8 / NTW, NREM = NT8 - NFULL * NTW;
  static_assert(O % 8 == 0 && (TERMS == 1 || TERMS == 3) && NS >= 2 && HS >= 1 && (MT == 1 || MT == 2),
                "O % 8 == 0, 1 or 3 terms, 2+ stages, 1 or 2 m16 tiles");
  auto rnd = [](float x) { return TERMS == 1 ? cagr_tf32(x) : x; };
  extern __shared__ __align__(16) float cagr_cin_dyn[];
  float* As = cagr_cin_dyn;  // [NS * HS][MP][LDA]
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32, g = lane / 4, t = lane % 4;
  const int wo = warp % WO, wn = warp / WO;
  const long long NTOT = B * D, nb = (long long)blockIdx.x * BN, n0 = nb + wn * 16 * MT;
  const int C = (int)gridDim.y, HC = (H + C - 1) / C, rank = (int)blockIdx.y;
  const int h0 = rank * HC, h1 = min(H, h0 + HC);
  for (int e = tid; e < NS * HS * (MP - M) * LDA; e += THREADS) {
    const int s = e / ((MP - M) * LDA);
    As[s * MP * LDA + M * LDA + (e - s * (MP - M) * LDA)] = 0.f;
  }
  // Fragment row r of m16 tile i is column n0 + 16 i + g + 8 r.
  const float* xkp[MT][2];
  bool ok[MT][2];
  float x0r[MT][2][MP / 4];
#pragma unroll
  for (int i = 0; i < MT; ++i)
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      const long long n = n0 + 16 * i + g + 8 * r, b = n / D, d = n - b * D;
      ok[i][r] = n < NTOT;
      xkp[i][r] = xk + b * H * D + d;
#pragma unroll
      for (int q = 0; q < MP / 4; ++q) {
        const int m = t + 4 * q;
        x0r[i][r][q] = ok[i][r] && m < M ? rnd(__ldg(x0 + (b * M + m) * D + d)) : 0.f;
      }
    }
  float acc[MT][NTW][4];
#pragma unroll
  for (int i = 0; i < MT; ++i)
#pragma unroll
    for (int j = 0; j < NTW; ++j)
#pragma unroll
      for (int c = 0; c < 4; ++c) acc[i][j][c] = 0.f;
  const int col0 = wo * NTW * 8;
  if (wo < NFULL) {
    cagr_cin_x3_loop<O, M, D, TERMS, NS, HS, MT, NTW, NTW>(As, wt, xkp, ok, x0r, acc, h0, h1, tid, col0);
  } else if (NREM > 0 && wo == NFULL) {
    cagr_cin_x3_loop<O, M, D, TERMS, NS, HS, MT, NTW, NREM>(As, wt, xkp, ok, x0r, acc, h0, h1, tid, col0);
  } else {
    cagr_cin_x3_loop<O, M, D, TERMS, NS, HS, MT, NTW, 0>(As, wt, xkp, ok, x0r, acc, h0, h1, tid, col0);
  }
  if (C > 1) {
    asm volatile("cp.async.wait_group 0;\n" ::);
    __syncthreads();  // the stages are free: they hold the exchange
    cagr_cluster_sum<MT, NTW, THREADS>(acc, As, C, rank);
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
      for (int i = 0; i < MT; ++i) {
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
