// nvrtc.cin's f32, tf32 and bf16 kernel on Hopper's warpgroup MMA (sm_90a
// only): cagr_cin_wg_step. The same product as cagr_cin_x3_step
// (codegen_cin_x3.cc) — per K step rows of xk, A[(b,d), k] = xk[b,h,d] *
// x0[b,m,d] built in registers, B = W's O x K slice of those rows — but each
// warp's 25 n8 MMAs per k8 (mma.sync, B fragments through registers) become
// one wgmma.m64nOkK per warpgroup with B read by the tensor cores straight
// from shared memory, so no thread loads or splits a B fragment.
//
// A stage is one xk row h (f32 and tf32 math: k = m, TF32 k8 MMAs) or two,
// h and h + 1 (bf16 math: k = m, then M + m, bf16 k16 MMAs), its K padded
// to the MMA's K and at most 128 bytes. B's layout: wgmma reads these
// operands K-major, so W goes up as its stages, [stage][PLANES][O][128
// bytes] (WeightFormat::group with swizzle128: each row's 16-byte chunks
// in the 128-byte swizzle's order, zeros past K): f32 math as two TF32
// planes, hi (x with its low 13 mantissa bits cleared) and lo (x - hi) —
// the split the 3xTF32 kernels do per fragment is done once on upload —,
// tf32 math as one plane rounded to nearest, bf16 math as one plane of
// bf16. Thread 0 moves a stage with one bulk copy (cp.async.bulk,
// completing on the stage's mbarrier); NS stages in flight, one barrier per
// stage.
// The A registers are double-buffered: stage s's wgmma group reads one set
// while the threads build stage s + 1's in the other, after waiting for
// group s - 1 (which read it). One accumulator takes all H * M products,
// as in cagr_cin_x3_step (the GEMM tile, gemm_wgmma.h, sums K in chunks
// instead): xDeepFM fp32 at 4096 rows measured 8.9e-8 absolute / 1.4e-7
// relative against PyTorch eager fp32 on either kernel (H100 side by side).
//
// Block: two warpgroups of 64 columns (b, d) each, BN = 128; every thread
// keeps O / 2 accumulators (one m64nO tile per warpgroup), stored through
// `put` as cagr_cin_x3_step stores them (the same fragment layout: c0, c1
// row g, outputs 2t, 2t + 1; c2, c3 row g + 8), pooled the same way, and
// split over a cluster of C blocks along y for small launches.
#include <string>

#include "backends/cuda/codegen_kernel.h"
#include "backends/cuda/gemm_wgmma.h"

namespace cagr::cuda::gen {

const char* cinWgSource() {
  return R"CUDA(
#ifndef CAGR_CIN_WG_COMMON
#define CAGR_CIN_WG_COMMON
#if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM90_ALL)
#error "cagr_cin_wg_step needs sm_90a (wgmma)"
#endif
// The operand layout and descriptor: cagr_wg_swz / cagr_wg_desc
// (gemm_wgmma.cc wgmmaOperandSource, before this in the module).
// d (+)= a * b: one m64nOk8 TF32 wgmma, or m64nOk16 bf16 one, A from
// registers (defined per O and type by the generator, cinWgMma).
template <int O, bool BF16>
__device__ __forceinline__ void cagr_cwg_mma(float (&d)[1][O / 8][4], const unsigned (&a)[4], unsigned long long b,
                                             int scaleD);
template <int NT>
__device__ __forceinline__ void cagr_cwg_fence(float (&d)[1][NT][4]) {
#pragma unroll
  for (int j = 0; j < NT; ++j)
#pragma unroll
    for (int c = 0; c < 4; ++c) asm volatile("" : "+f"(d[0][j][c])::"memory");
}
template <int N>
__device__ __forceinline__ void cagr_cwg_keep(unsigned (&a)[N][4]) {
#pragma unroll
  for (int i = 0; i < N; ++i)
#pragma unroll
    for (int c = 0; c < 4; ++c) asm volatile("" : "+r"(a[i][c])::"memory");
}

// Stage s0 + s: W is stored as its stages (WeightFormat::group with
// swizzle128: for each stage its planes' O rows of 128 bytes, already
// swizzled), so thread 0 moves one with a single bulk copy into buffer
// s % NS, completing on that buffer's mbarrier (nothing past s1).
template <int O, int PLANES, int NS>
__device__ __forceinline__ void cagr_cwg_load(unsigned sbase, unsigned bars, const float* __restrict__ wk, int s,
                                              int s0, int s1) {
  constexpr unsigned BYTES = PLANES * O * 128;
  if (s0 + s >= s1) return;
  const unsigned bar = bars + (s % NS) * 8;
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(BYTES) : "memory");
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(
                   sbase + (s % NS) * BYTES),
               "l"(wk + (long long)(s0 + s) * (PLANES * O * 32)), "r"(BYTES), "r"(bar)
               : "memory");
}
// Until phase `parity` of the mbarrier at `bar` has completed.
__device__ __forceinline__ void cagr_cwg_wait(unsigned bar, unsigned parity) {
  unsigned done = 0;
  do {
    asm volatile(
        "{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\nselp.u32 %0, 1, 0, p;\n}\n"
        : "=r"(done)
        : "r"(bar), "r"(parity)
        : "memory");
  } while (!done);
}

// Stage s's A fragments. MATH 0 / 1 (k8: a0 (g, t), a1 (g+8, t), a2 (g,
// t+4), a3 (g+8, t+4) of each k8 step; rows are columns (b, d), k = m): hi
// and lo of each product for 3 terms, the product itself for one (the MMA
// truncates it to TF32). MATH 2 (k16: a0 row g, k 2t and 2t+1; a1 row g+8;
// a2, a3 the same at k + 8; two bf16 a register, the lower k in the low
// half): each product, of xk's row h or h + 1 (bit q of hsel), rounded to
// bf16. x0r[r][q] is fragment row r's x0 value at the q-th k the thread
// holds (cagr_cin_wg_step).
template <int KS, int MATH>
__device__ __forceinline__ void cagr_cwg_build(unsigned (&a)[KS * (MATH == 0 ? 2 : 1)][4],
                                               const float (&xv)[2][MATH == 2 ? 2 : 1],
                                               const float (&x0r)[2][KS * (MATH == 2 ? 4 : 2)], unsigned hsel) {
#pragma unroll
  for (int ks = 0; ks < KS; ++ks) {
    if constexpr (MATH == 2) {
      float p[2][4];
#pragma unroll
      for (int r = 0; r < 2; ++r)
#pragma unroll
        for (int i = 0; i < 4; ++i) p[r][i] = ((hsel >> (4 * ks + i)) & 1u ? xv[r][1] : xv[r][0]) * x0r[r][4 * ks + i];
#pragma unroll
      for (int c = 0; c < 4; ++c) {
        const __nv_bfloat162 v = __floats2bfloat162_rn(p[c % 2][2 * (c / 2)], p[c % 2][2 * (c / 2) + 1]);
        a[ks][c] = *reinterpret_cast<const unsigned*>(&v);
      }
    } else {
      const float p[4] = {xv[0][0] * x0r[0][2 * ks], xv[1][0] * x0r[1][2 * ks], xv[0][0] * x0r[0][2 * ks + 1],
                          xv[1][0] * x0r[1][2 * ks + 1]};
#pragma unroll
      for (int c = 0; c < 4; ++c) {
        if constexpr (MATH == 0) {
          cagr_split_tf32(p[c], a[2 * ks][c], a[2 * ks + 1][c]);
        } else {
          a[ks][c] = __float_as_uint(p[c]);
        }
      }
    }
  }
}

// One block: columns blockIdx.x * 128 .., the stages of its part of them
// (cluster rank blockIdx.y of gridDim.y). MATH: 0 f32 (3xTF32), 1 tf32, 2
// bf16. Dynamic shared memory: 1024 bytes of alignment slack plus the
// larger of NS stages (PLANES * O * 128 bytes each) and the cluster
// exchange (O / 8 * 4 * 256 floats).
template <int O, int H, int M, int D, bool BIAS, int MATH, int NS, typename P>
__device__ __forceinline__ void cagr_cin_wg_step(const float* __restrict__ xk, const float* __restrict__ x0,
                                                 const float* __restrict__ wk, const float* __restrict__ bias, P put,
                                                 long long B, float* pool) {
  constexpr int THREADS = 256, BN = 128, NT8 = O / 8, HS = MATH == 2 ? 2 : 1, KW = MATH == 2 ? 16 : 8;
  constexpr int KS = (HS * M + KW - 1) / KW, NQ = MATH == 2 ? 4 * KS : 2 * KS, SH = (H + HS - 1) / HS;
  constexpr int PLANES = MATH == 0 ? 2 : 1, NA = KS * PLANES;
  static_assert(O % 8 == 0 && O <= 256 && KS * 32 <= 128 && MATH >= 0 && MATH <= 2 && NS >= 3,
                "O % 8 == 0, O <= 256, a stage's K in 128 bytes, f32 / tf32 / bf16 math, 3+ stages");
  auto rnd = [](float x) {
    if constexpr (MATH == 1) return cagr_tf32(x);
    if constexpr (MATH == 2) return __bfloat162float(__float2bfloat16_rn(x));
    return x;
  };
  extern __shared__ char cagr_cwg_raw[];
  char* stages = reinterpret_cast<char*>((reinterpret_cast<unsigned long long>(cagr_cwg_raw) + 1023) & ~1023ull);
  const unsigned sbase = static_cast<unsigned>(__cvta_generic_to_shared(stages));
  __shared__ alignas(8) unsigned long long cagr_cwg_bars[NS];  // buffer b's copy done
  const unsigned bars = static_cast<unsigned>(__cvta_generic_to_shared(cagr_cwg_bars));
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32, g = lane / 4, t = lane % 4;
  const long long NTOT = B * D, nb = (long long)blockIdx.x * BN, n0 = nb + warp * 16;
  const int C = (int)gridDim.y, SC = (SH + C - 1) / C, rank = (int)blockIdx.y;
  const int s0 = rank * SC, s1 = min(SH, s0 + SC);
  // Fragment row r is column n0 + g + 8 r; x0r[r][q] its x0 value at the
  // q-th k the thread holds: m = t + 4 q (k8), else k = 16 (q / 4) + 2 t +
  // {0, 1, 8, 9}[q % 4] of the stage's two rows (m = k, or k - M of row h
  // + 1: bit q of hsel).
  const float* xkp[2];
  bool ok[2];
  float x0r[2][NQ];
  auto kOf = [t](int q) { return MATH == 2 ? 16 * (q / 4) + 2 * t + q % 2 + 8 * (q % 4 / 2) : t + 4 * q; };
  unsigned hsel = 0;
#pragma unroll
  for (int q = 0; q < NQ; ++q) {
    if (MATH == 2 && kOf(q) >= M && kOf(q) < 2 * M) hsel |= 1u << q;
  }
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    const long long n = n0 + g + 8 * r, b = n / D, d = n - b * D;
    ok[r] = n < NTOT;
    xkp[r] = xk + b * H * D + d;
#pragma unroll
    for (int q = 0; q < NQ; ++q) {
      const int k = kOf(q), m = (hsel >> q) & 1u ? k - M : k;
      x0r[r][q] = ok[r] && k < HS * M ? rnd(__ldg(x0 + (b * M + m) * D + d)) : 0.f;
    }
  }
  float acc[1][NT8][4];
#pragma unroll
  for (int j = 0; j < NT8; ++j)
#pragma unroll
    for (int c = 0; c < 4; ++c) acc[0][j][c] = 0.f;
  if (tid == 0) {
#pragma unroll
    for (int b = 0; b < NS; ++b) asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;\n" ::"r"(bars + 8 * b));
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  }
  __syncthreads();
  if (tid == 0) {
#pragma unroll
    for (int s = 0; s < NS - 2; ++s) cagr_cwg_load<O, PLANES, NS>(sbase, bars, wk, s, s0, s1);
  }
  // xk two stages deep, as in cagr_cin_x3_loop: stage s's rows (rounded),
  // s + 1's and s + 2's.
  auto xrow = [&](int r, int s, int i) {
    const int h = s * HS + i;
    return ok[r] && s < s1 && h < H ? __ldg(xkp[r] + h * D) : 0.f;
  };
  float xv[2][HS], xn[2][HS];
#pragma unroll
  for (int r = 0; r < 2; ++r)
#pragma unroll
    for (int i = 0; i < HS; ++i) {
      xv[r][i] = rnd(xrow(r, s0, i));
      xn[r][i] = xrow(r, s0 + 1, i);
    }
  // The two A sets as named arrays (a runtime index would put them in local memory).
  unsigned a0[NA][4], a1[NA][4];
  cagr_cwg_build<KS, MATH>(a0, xv, x0r, hsel);
  auto step = [&](int st, unsigned (&cur)[NA][4], unsigned (&nxt)[NA][4]) {
    const int s = st - s0;
    __syncthreads();  // every warp is done with stage s - 2 (it waited for group s - 2)
    if (tid == 0) cagr_cwg_load<O, PLANES, NS>(sbase, bars, wk, s + NS - 2, s0, s1);
    cagr_cwg_wait(bars + (s % NS) * 8, (s / NS) & 1);  // stage s is in
    const unsigned sb = sbase + (s % NS) * (PLANES * O * 128);
    cagr_cwg_fence<NT8>(acc);
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#pragma unroll
    for (int ks = 0; ks < KS; ++ks) {
      const unsigned long long bh = cagr_wg_desc(sb + ks * 32);
      if constexpr (MATH == 0) {
        const unsigned long long bl = cagr_wg_desc(sb + O * 128 + ks * 32);
        cagr_cwg_mma<O, false>(acc, cur[2 * ks + 1], bh, 1);  // lo x hi, hi x lo, then hi x hi
        cagr_cwg_mma<O, false>(acc, cur[2 * ks], bl, 1);
        cagr_cwg_mma<O, false>(acc, cur[2 * ks], bh, 1);
      } else {
        cagr_cwg_mma<O, MATH == 2>(acc, cur[ks], bh, 1);
      }
    }
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
    cagr_cwg_fence<NT8>(acc);
    float xnn[2][HS];
#pragma unroll
    for (int r = 0; r < 2; ++r)
#pragma unroll
      for (int i = 0; i < HS; ++i) xnn[r][i] = xrow(r, st + 2, i);
    asm volatile("wgmma.wait_group.sync.aligned 1;\n" ::: "memory");  // group s - 1 read nxt
    cagr_cwg_keep<NA>(nxt);
#pragma unroll
    for (int r = 0; r < 2; ++r)
#pragma unroll
      for (int i = 0; i < HS; ++i) {
        xv[r][i] = rnd(xn[r][i]);
        xn[r][i] = xnn[r][i];
      }
    if (st + 1 < s1) cagr_cwg_build<KS, MATH>(nxt, xv, x0r, hsel);
    cagr_cwg_keep<NA>(cur);
  };
  for (int st = s0; st < s1; st += 2) {
    step(st, a0, a1);
    if (st + 1 < s1) step(st + 1, a1, a0);
  }
  asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
  cagr_cwg_fence<NT8>(acc);
  if (C > 1) {  // every copy issued was waited for
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
    __syncthreads();  // the stages are free: they hold the exchange
    cagr_cluster_sum<1, NT8, THREADS>(acc, reinterpret_cast<float*>(stages), C, rank);
    if (rank > 0) return;
  }
  constexpr int S = BN / D;
#pragma unroll
  for (int j = 0; j < NT8; ++j) {
#pragma unroll
    for (int c = 0; c < 2; ++c) {
      const int o = j * 8 + 2 * t + c;
      const float bo = BIAS ? __ldg(bias + o) : 0.f;
      float v[2];
#pragma unroll
      for (int r = 0; r < 2; ++r) {
        const long long n = n0 + g + 8 * r, b = n / D;
        v[r] = ok[r] ? put((b * O + o) * D + (n - b * D), acc[0][j][2 * r + c] + bo) : 0.f;
      }
      if (pool == nullptr) continue;
      if constexpr (D % 16 == 0) {
        float u = v[0] + v[1];
        u += __shfl_xor_sync(0xffffffffu, u, 4);
        u += __shfl_xor_sync(0xffffffffu, u, 8);
        u += __shfl_xor_sync(0xffffffffu, u, 16);
        if (g == 0) atomicAdd(pool + o * S + (int)(n0 - nb) / D, u);
      } else {
#pragma unroll
        for (int r = 0; r < 2; ++r) {
          if (ok[r]) atomicAdd(pool + o * S + (int)(n0 + g + 8 * r - nb) / D, v[r]);
        }
      }
    }
  }
}
#endif
)CUDA";
}

std::string cinWgOperands() { return wgmmaOperandSource(); }

std::string cinWgMma(int O, bool bf16) {
  const int n = O / 2;  // accumulators per thread
  std::string outs, regs;
  for (int i = 0; i < n; ++i) {
    regs += (i ? ", %" : "%") + std::to_string(i);
    outs += std::string(i ? ", " : "") + "\"+f\"(d[0][" + std::to_string(i / 4) + "][" + std::to_string(i % 4) + "])";
  }
  const std::string o = std::to_string(O), type = bf16 ? "true" : "false";
  const std::string op = bf16 ? "k16.f32.bf16.bf16" : "k8.f32.tf32.tf32", imm = bf16 ? "1, 1, 0" : "1, 1";
  const std::string guard = "CAGR_CWG_MMA_" + o + (bf16 ? "_BF16" : "");
  return "#ifndef " + guard + "\n#define " + guard +
         "\ntemplate <>\n__device__ __forceinline__ void cagr_cwg_mma<" + o + ", " + type + ">(float (&d)[1][" +
         std::to_string(O / 8) +
         "][4], const unsigned (&a)[4], unsigned long long b, int scaleD) {\n"
         "  asm volatile(\n"
         "      \"{\\n.reg .pred p;\\nsetp.ne.b32 p, %" + std::to_string(n + 5) + ", 0;\\n\"\n"
         "      \"wgmma.mma_async.sync.aligned.m64n" + o + op + " {" + regs + "}, {%" +
         std::to_string(n) + ", %" + std::to_string(n + 1) + ", %" + std::to_string(n + 2) + ", %" +
         std::to_string(n + 3) + "}, %" + std::to_string(n + 4) + ", p, " + imm + ";\\n}\\n\"\n"
         "      : " + outs + "\n"
         "      : \"r\"(a[0]), \"r\"(a[1]), \"r\"(a[2]), \"r\"(a[3]), \"l\"(b), \"r\"(scaleD));\n}\n#endif\n";
}

}  // namespace cagr::cuda::gen
