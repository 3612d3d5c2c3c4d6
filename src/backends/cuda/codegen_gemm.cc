// nvrtc.gemm_small: a generated GEMM for shapes where a library call's
// overhead dominates, with any elementwise epilogue fused (Gemm with
// alpha / beta / C, MatMul with batch broadcasting and 1-D promotion,
// Conv1x1 with bias; f32 math, or tf32 / bf16 / f16 emulated by rounding
// the operands as the reference executor does). The tile shape follows the
// static N and K: 32x128 tiles for wide outputs (a K <= 32 layer is bound by
// its coalesced stores), narrower column tiles with more row lanes for N of
// 8..64, and one warp per output row with lanes splitting K for N <= 4;
// 256 threads; blocks walk the (batch, row tile, column tile) space with a
// grid-stride loop, so one module serves every batch size. A static K <=
// 16 with N a multiple of 32 takes up to 128 threads per output row
// instead, each with its columns' weights in registers (cagr_gemm_rowk);
// CAGR_CUDA_GEMM_F32=x3 the 3xTF32 tiles (codegen_gemm_x3.cc).
#include <algorithm>
#include <optional>

#include "backends/cuda/codegen_kernel.h"
#include "ir/dims.h"
#include "lower/generated_gemm.h"
#include "lower/op_sets.h"

namespace cagr::cuda::gen {
namespace {

const char* const kGemm = R"CUDA(
// C[bi](m, n) = sum_k A(bi, m, k) * B(bi, k, n) for every (bi, m, n); epi(bi, m, n, acc) stores.
// 256 threads: LN = BN / TN along n, each thread's columns n0 + tx + LN * j (a warp's stores
// and its B reads are consecutive), 256 / LN along m, rows m0 + ty * TM + i (A read as float4
// broadcasts). K in chunks of BK staged in shared memory, zero-padded past M, N and K; the sum
// runs over k in order. KMAJOR_B: B's k index is the contiguous one (load B tiles along k).
template <int BM, int BN, int BK, int TM, int TN, bool KMAJOR_B, typename LA, typename LB, typename EPI>
__device__ __forceinline__ void cagr_gemm_tile(long long batch, long long M, long long N, long long K, LA la, LB lb,
                                               EPI epi) {
  constexpr int LN = BN / TN;
  static_assert((256 / LN) * TM == BM, "cagr_gemm_tile: 256 threads cover the tile");
  __shared__ __align__(16) float As[BK][BM + 4];
  __shared__ float Bs[BK][BN + 1];
  const int tid = threadIdx.x, tx = tid % LN, ty = tid / LN;
  const long long mt = (M + BM - 1) / BM, nt = (N + BN - 1) / BN, tiles = batch * mt * nt;
  for (long long tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    const long long bi = tile / (mt * nt), rem = tile % (mt * nt), m0 = rem / nt * BM, n0 = rem % nt * BN;
    float acc[TM][TN] = {};
    for (long long k0 = 0; k0 < K; k0 += BK) {
#pragma unroll
      for (int r = 0; r < (BM * BK + 255) / 256; ++r) {
        const int e = tid + r * 256, i = e / BK, kk = e % BK;
        if (e >= BM * BK) break;
        const long long m = m0 + i, k = k0 + kk;
        As[kk][i] = (m < M && k < K) ? la(bi, m, k) : 0.f;
      }
#pragma unroll
      for (int r = 0; r < (BN * BK + 255) / 256; ++r) {
        const int e = tid + r * 256;
        if (e >= BN * BK) break;
        const int j = KMAJOR_B ? e / BK : e % BN, kk = KMAJOR_B ? e % BK : e / BN;
        const long long n = n0 + j, k = k0 + kk;
        Bs[kk][j] = (n < N && k < K) ? lb(bi, k, n) : 0.f;
      }
      __syncthreads();
#pragma unroll
      for (int kk = 0; kk < BK; ++kk) {
        float a[TM], b[TN];
        if constexpr (TM % 4 == 0) {
#pragma unroll
          for (int q = 0; q < TM / 4; ++q) {
            const float4 v = *reinterpret_cast<const float4*>(&As[kk][ty * TM + 4 * q]);
            a[4 * q] = v.x; a[4 * q + 1] = v.y; a[4 * q + 2] = v.z; a[4 * q + 3] = v.w;
          }
        } else {
#pragma unroll
          for (int q = 0; q < TM; ++q) a[q] = As[kk][ty * TM + q];
        }
#pragma unroll
        for (int q = 0; q < TN; ++q) b[q] = Bs[kk][tx + q * LN];
        cagr_fma_tile(acc, a, b);
      }
      __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
      for (int j = 0; j < TN; ++j) {
        const long long m = m0 + ty * TM + i, n = n0 + tx + j * LN;
        if (m < M && n < N) epi(bi, m, n, acc[i][j]);
      }
  }
}
// Few columns (NN <= 4): one warp per output row, lanes split k (coalesced
// loads of A's row), partial sums reduced across the warp.
template <int NN, typename LA, typename LB, typename EPI>
__device__ __forceinline__ void cagr_gemm_dot(long long batch, long long M, long long K, LA la, LB lb, EPI epi) {
  const int lane = threadIdx.x % 32;
  const long long rows = batch * M, step = (long long)gridDim.x * (blockDim.x / 32);
  for (long long r = (long long)blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32; r < rows; r += step) {
    const long long bi = r / M, m = r - bi * M;
    float acc[NN] = {};
#pragma unroll 4
    for (long long k = lane; k < K; k += 32) {
      const float a = la(bi, m, k);
#pragma unroll
      for (int n = 0; n < NN; ++n) acc[n] = fmaf(a, lb(bi, k, (long long)n), acc[n]);
    }
#pragma unroll
    for (int n = 0; n < NN; ++n) acc[n] = cagr_wsum<32>(acc[n]);
    if (lane == 0) {
#pragma unroll
      for (int n = 0; n < NN; ++n) epi(bi, m, (long long)n, acc[n]);
    }
  }
}
// Small static K, N a multiple of 32 (DLRM's 13 -> 512 layer: bound by its
// stores): a row of C is computed by TC threads (128, 64 or 32, the largest
// dividing N), thread t's columns t + TC j held with their K weights in
// registers (loaded once per block: no shared memory, no staging wait), so a
// row costs K shuffles and K * J FMAs per thread and each store instruction
// writes 32 consecutive floats; lane k < K of each warp reads A's element k
// of the row, two rows ahead of the one being summed.
template <int N>
struct CagrRowkShape {
  static constexpr int TC = N % 128 == 0 ? 128 : N % 64 == 0 ? 64 : 32, J = N / TC;
};
template <int K, int N, int T, typename LA, typename LB, typename EPI>
__device__ __forceinline__ void cagr_gemm_rowk(long long M, LA la, LB lb, EPI epi) {
  constexpr int TC = CagrRowkShape<N>::TC, J = CagrRowkShape<N>::J, S = T / TC;
  static_assert(N % 32 == 0 && T % TC == 0 && K <= 32, "cagr_gemm_rowk: shape");
  const int t = threadIdx.x % TC, lane = threadIdx.x % 32;
  float w[K][J];
#pragma unroll
  for (int k = 0; k < K; ++k)
#pragma unroll
    for (int j = 0; j < J; ++j) w[k][j] = lb(0ll, (long long)k, (long long)(t + TC * j));
  const long long step = (long long)gridDim.x * S;
  long long r = (long long)blockIdx.x * S + threadIdx.x / TC;
  auto row = [&](long long i) { return i < M && lane < K ? la(0ll, i, (long long)lane) : 0.f; };
  float x0 = row(r), x1 = row(r + step);
  for (; r < M; r += step) {
    const float x2 = row(r + 2 * step);
    float acc[J];
#pragma unroll
    for (int j = 0; j < J; ++j) acc[j] = 0.f;
#pragma unroll
    for (int k = 0; k < K; ++k) {
      const float a = __shfl_sync(0xffffffffu, x0, k);
#pragma unroll
      for (int j = 0; j < J; ++j) acc[j] = fmaf(a, w[k][j], acc[j]);
    }
#pragma unroll
    for (int j = 0; j < J; ++j) epi(0ll, r, (long long)(t + TC * j), acc[j]);
    x0 = x1;
    x1 = x2;
  }
}
)CUDA";

// Static K <= 16 and N = 32 q <= 512 with at most 64 weights a thread
// (gemm_forms::rowShape; CagrRowkShape in the kernel), no batch: cagr_gemm_rowk. CAGR_GEMM_ROWK=0
// keeps the tiles. Measured on the H200 (DLRM's 4096x512x13 + bias + ReLU,
// per kernel with CUDA events) in the previous form (B staged in shared
// memory, one warp per row, 16 shared loads per k): 14-15 us against the
// 32x128 FFMA tiles' 18 and cuBLASLt's 16-19.
// Blocks of cagr_gemm_rowk per SM in its grid: 2 (CAGR_GEMM_ROWK_BLOCKS = 1
// .. 8 for measurements; rows past the grid loop in it).
int rowkBlocksPerSm() {
  const std::string v = envValue("CAGR_GEMM_ROWK_BLOCKS");
  return v.size() == 1 && v[0] >= '1' && v[0] <= '8' ? v[0] - '0' : 2;
}

bool rowKernel(const std::vector<Dim>& batch, Dim n, Dim kd) {
  if (!batch.empty() || isSymbolic(n) || isSymbolic(kd) || envValue("CAGR_GEMM_ROWK") == "0") return false;
  return gemm_forms::rowShape(n, kd);
}

// Tile shape of the generated GEMM for static N / K (symbolic: large).
struct TileShape {
  int bm = 32, bn = 128, bk = 32, tm = 4, tn = 4;
  int dotColumns = 0;  // > 0: the one-warp-per-row kernel for N = dotColumns
};

TileShape tileShape(Dim n, Dim kd) {
  TileShape t;
  int64_t N = isSymbolic(n) ? 1 << 20 : n, K = isSymbolic(kd) ? 1 << 20 : kd;
  if (N <= 4) {
    t.dotColumns = static_cast<int>(std::max<int64_t>(N, 1));
    return t;
  }
  t.bk = K <= 16 ? 16 : 32;
  if (N >= 128) {
    t.bn = 128, t.tn = 4;
    t.tm = K <= 64 ? 4 : 8;  // 8 lanes along m
  } else if (N >= 64) {
    t.bn = 64, t.tn = 2, t.tm = 4;
  } else if (N >= 32) {
    t.bn = 32, t.tn = 1, t.tm = 4;
  } else if (N >= 16) {
    t.bn = 16, t.tn = 1, t.tm = 1;  // 16 lanes along m
  } else {
    t.bn = 8, t.tn = 1, t.tm = 1;  // 32 lanes along m
  }
  t.bm = 256 / (t.bn / t.tn) * t.tm;
  return t;
}

// The 3xTF32 tensor-core tiles (codegen_gemm_x3.cc), opt-in with
// CAGR_CUDA_GEMM_F32=x3, for an f32 GEMM on sm_80+ of N >= 32 and K >= 32
// (narrower or shallower ones keep the FFMA tiles, bound by their stores
// or their launch): BM x BN blocks of WM x WN warp tiles, 64 x 128 (four
// 32 x 64 warps) for N > 64, else 64 x 64 (four 32 x 32);
// CAGR_GEMM_X3_TILE = 64x64 / 64x128 / 128x64 / 128x128 picks one (64-row
// warp tiles at BM = 128, eight 64 x 32 warps at 128 x 128),
// CAGR_GEMM_X3_WARPS=8 eight warps. Not the default: measured on the H200
// (DLRM's 4096x256x512, 4096x512x367, 4096x512x256 at 23.6-25.4 TFLOP/s
// against cuBLASLt's 29-39, every tile and split tried slower) it would
// only replace the FFMA tiles where a plan picks this kernel for its fused
// epilogue, and the profile's one probe of the class (aligned K) priced
// DCN-v2's K = 429 layers, copied one float at a time, far too cheaply.
struct X3Tile {
  int bm = 64, bn = 128, wm = 32, wn = 64;
  int threads() const { return 32 * (bm / wm) * (bn / wn); }
};

std::optional<X3Tile> x3Tile(const CodegenRequest& r, Precision math, const TileShape& t, Dim n, Dim kd) {
  const bool wide = (isSymbolic(n) || n >= 32) && (isSymbolic(kd) || kd >= 32);
  if (math != Precision::kF32 || r.sm < 80 || t.dotColumns > 0 || !wide || envValue("CAGR_CUDA_GEMM_F32") != "x3") {
    return std::nullopt;
  }
  X3Tile x;
  std::string v = envValue("CAGR_GEMM_X3_TILE");
  if (v != "64x64" && v != "64x128" && v != "128x64" && v != "128x128") v = !isSymbolic(n) && n <= 64 ? "64x64" : "";
  if (!v.empty()) {
    x.bm = v[0] == '1' ? 128 : 64;
    x.bn = v.substr(v.find('x') + 1) == "128" ? 128 : 64;
    x.wm = x.bm == 128 ? 64 : 32;
    x.wn = x.bn == 128 && x.bm == 64 ? 64 : 32;
  }
  if (envValue("CAGR_GEMM_X3_WARPS") == "8") x.wm = 32, x.wn = x.bn * x.bm / 256;
  return x;
}

// Launches of the cp.async kernel with fewer blocks than 2 per SM
// (CodegenRequest::sms) split K over clusters of two blocks (sm_90);
// CAGR_GEMM_X3_SPLIT = 1 / 4 sets the split.
unsigned gemmX3Split(int sm) {
  const std::string v = envValue("CAGR_GEMM_X3_SPLIT");
  return sm < 90 || v == "1" ? 1u : v == "4" ? 4u : 2u;
}

// The 3xTF32 kernel with both operands read by cp.async (cagr_gemm_x3_kk):
// A row-major with no batch of its own beyond M's (a Gemm without transA, a
// MatMul of [..., M, K] by a 2-D B, its batch folded into M), B k-contiguous
// (transB) or a 2-D constant, uploaded transposed. Empty where the
// element-lambda kernel (cagr_gemm_x3) has to run.
struct KkOperands {
  std::string a, bt, m;
};

std::optional<KkOperands> kkOperands(KernelBuilder& k, const Node& n, bool kMajorB, const std::vector<Dim>& batch,
                                     Dim m) {
  const Graph& g = k.g();
  const bool gemm = n.op == OpKind::kGemm && n.attrs.getInt("transA", 0) == 0;
  const bool matmul =
      n.op == OpKind::kMatMul && g.type(n.inputs[1]).rank() == 2 && g.type(n.inputs[0]).rank() >= 2;
  if (!gemm && !matmul) return std::nullopt;
  ValueId b = n.inputs[1];
  if (!kMajorB && !(g.isConstant(b) && g.type(b).rank() == 2)) return std::nullopt;
  KkOperands o;
  o.a = k.in(n.inputs[0]);
  o.bt = kMajorB ? k.in(b) : k.inTransposed(b);
  o.m = batch.empty() ? k.dim(m) : "(" + k.size(batch) + " * " + k.dim(m) + ")";
  return o;
}

// The anchor as a batched GEMM: element addressing of A and B, sizes, and
// what the anchor itself adds after the product.
struct GemmDesc {
  ValueId a = kNoValue, b = kNoValue;
  std::vector<Dim> batch;
  Dim m = 1, n = 1, kd = 1;
  std::string aIndex, bIndex;  // over bi, m, k / bi, k, n
  bool kMajorB = false;
  std::string extra;  // added to alpha * acc: C or bias, over bi, m, n
  double alpha = 1;
};

std::string mul(const std::string& a, const std::string& b) {
  return "(" + a + ") * (" + b + ")";
}

StatusOr<GemmDesc> describeGemm(KernelBuilder& k, NodeId id) {
  const Graph& g = k.g();
  const Node& n = g.node(id);
  GemmDesc d;
  d.a = n.inputs[0];
  d.b = n.inputs[1];
  std::vector<Dim> as = g.type(d.a).dims, bs = g.type(d.b).dims;
  if (n.op == OpKind::kGemm) {
    bool ta = n.attrs.getInt("transA", 0) != 0, tb = n.attrs.getInt("transB", 0) != 0;
    d.m = as[ta ? 1 : 0];
    d.kd = as[ta ? 0 : 1];
    d.n = bs[tb ? 0 : 1];
    std::string M = k.dim(d.m), K = k.dim(d.kd), N = k.dim(d.n);
    d.aIndex = ta ? "k * " + M + " + m" : "m * " + K + " + k";
    d.bIndex = tb ? "n * " + K + " + k" : "k * " + N + " + n";
    d.kMajorB = tb;
    d.alpha = n.attrs.getFloat("alpha", 1);
    if (n.inputs.size() > 2 && n.inputs[2] != kNoValue) {
      std::string c = broadcastIndex(k, {d.m, d.n}, "m * " + N + " + n", g.type(n.inputs[2]).dims);
      d.extra = literal(n.attrs.getFloat("beta", 1), DType::kF32) + " * cagr_ld(" + k.in(n.inputs[2]) + ", " + c + ")";
    }
    return d;
  }
  if (n.op == OpKind::kConv1x1) {
    d.a = n.inputs[1];
    d.b = n.inputs[0];
    d.batch = {as[0]};
    d.m = bs[0];
    d.kd = as[1];
    d.n = as[2];
    d.aIndex = "m * " + k.dim(d.kd) + " + k";
    d.bIndex = "bi * " + k.size({d.kd, d.n}) + " + k * " + k.dim(d.n) + " + n";
    if (n.inputs.size() > 2 && n.inputs[2] != kNoValue) d.extra = "cagr_ld(" + k.in(n.inputs[2]) + ", m)";
    return d;
  }
  if (n.op != OpKind::kMatMul) return unsupportedAt(g, id, "no generated GEMM for this op");
  bool a1 = as.size() == 1, b1 = bs.size() == 1;
  if (a1) as.insert(as.begin(), 1);
  if (b1) bs.push_back(1);
  d.m = as[as.size() - 2];
  d.kd = as.back();
  d.n = bs.back();
  const auto& od = g.type(n.outputs[0]).dims;
  d.batch.assign(od.begin(), od.end() - (a1 ? 0 : 1) - (b1 ? 0 : 1));
  std::vector<Dim> ab(as.begin(), as.end() - 2), bb(bs.begin(), bs.end() - 2);
  std::string K = k.dim(d.kd), N = k.dim(d.n);
  d.aIndex = mul(broadcastIndex(k, d.batch, "bi", ab), k.size({d.m, d.kd})) + " + m * " + K + " + k";
  d.bIndex = mul(broadcastIndex(k, d.batch, "bi", bb), k.size({d.kd, d.n})) + " + k * " + N + " + n";
  return d;
}

// B's C name as a row-major [K][N] array: a 2-D B as stored, or a k-major
// one ([N, K], transB) when it is a constant, uploaded transposed; empty
// otherwise.
std::optional<std::string> kByNB(KernelBuilder& k, const GemmDesc& d) {
  const Graph& g = k.g();
  if (g.type(d.b).rank() != 2) return std::nullopt;
  if (!d.kMajorB) return k.in(d.b);
  if (!g.isConstant(d.b)) return std::nullopt;
  return k.inTransposed(d.b);
}

// The narrow-layer kernel (codegen_gemm_narrow.cc): f32 math on sm_80+, no
// batch, N of 16 / 32 / 64, a static K <= 256 in multiples of 4, A row-major
// (a Gemm without transA, a MatMul of a 2-D A), B read as [K][N] (a k-major
// B only when it is a 2-D constant, uploaded transposed). Returns B's C name;
// empty where it does not apply. CAGR_GEMM_NARROW=0 keeps the FFMA tiles.
std::optional<std::string> narrowB(KernelBuilder& k, const Node& n, const GemmDesc& d) {
  const Graph& g = k.g();
  if (n.mir.math != Precision::kF32 || k.req().sm < 80 || !d.batch.empty() || isSymbolic(d.n) ||
      isSymbolic(d.kd) || envValue("CAGR_GEMM_NARROW") == "0") {
    return std::nullopt;
  }
  if (!gemm_forms::narrowShape(d.n, d.kd)) return std::nullopt;
  const bool rowMajorA = n.op == OpKind::kGemm ? n.attrs.getInt("transA", 0) == 0
                                               : n.op == OpKind::kMatMul && g.type(d.a).rank() == 2;
  return rowMajorA ? kByNB(k, d) : std::nullopt;
}

// The narrow kernel's parts (threads summing one slice of K): 4, or 8 with
// CAGR_GEMM_NARROW_PARTS=8.
int narrowParts() { return envValue("CAGR_GEMM_NARROW_PARTS") == "8" ? 8 : 4; }
// The narrow kernel's row tile: 32 rows, or 16 for launches of fewer than
// 16 x SMs rows where every part's threads still get a whole row (N >= 32):
// half the tile, twice the blocks. Measured on the H200 (DLRM fp32, its
// 256 -> 64 -> 16 chain, three interleaved rounds, `cagr bench --json`): at
// batch 256 the plan took 0.0453 ms with 16-row tiles (16 blocks) against
// 0.0474 with 32 (8 blocks); at 4096, 0.1225 against 0.1209 (256 blocks of
// 16 rows, two per SM, against 128 of 32), so large launches keep 32.
// CAGR_GEMM_NARROW_ROWS=32 keeps 32 rows at every size.
int64_t narrowSmallTile(int64_t n) { return n >= 32 && envValue("CAGR_GEMM_NARROW_ROWS") != "32" ? 16 : 32; }

// "16 or 32" / "32": the row tiles of a narrow kernel of N = `n` (kernel names).
std::string narrowRowsText(int64_t n) { return narrowSmallTile(n) == 16 ? "16 or 32" : "32"; }

// The call of cagr_gemm_narrow(_core) with `args` for `m` rows: the 16-row
// tile below 16 x SMs rows when the shape has it, else the 32-row one.
std::string narrowCall(const CodegenRequest& r, const std::string& fn, const std::string& params, int64_t n,
                       const std::string& m, const std::string& args) {
  auto call = [&](int64_t bm) { return fn + "<" + params + ", " + std::to_string(bm) + ">(" + args + ");\n"; };
  if (narrowSmallTile(n) == 32) return "  " + call(32);
  return "  if (" + m + " < " + std::to_string(16 * int64_t{r.sms}) + "LL) " + call(16) + "  else " + call(32);
}

// The narrow kernel's launch: a block per row tile of the smaller size the
// shape has (narrowCall: the kernel takes 32-row tiles from 16 x SMs rows,
// leaving the blocks past them idle), 512 threads, at most two blocks per
// SM (each copies all of B); shared memory for the 32-row tile plus
// `extraFloats` beyond CagrNarrowShape<N, K>'s own.
LaunchRule narrowRule(const CodegenRequest& r, const GemmDesc& d, int64_t extraFloats) {
  LaunchRule rule;
  rule.work = {d.m};
  const int64_t bm = narrowSmallTile(d.n);  // rows of a block at the smallest launches (narrowCall)
  rule.roundTo = {bm};
  rule.perBlock = bm;
  rule.threads = 512;
  rule.maxBlocks = std::max(2 * int64_t{r.sms}, int64_t{1});  // B is copied once per block
  const int64_t sums = narrowParts() * 32 * d.n;  // CagrNarrowShape<N, K, N2, H, 32>: the larger tile's
  rule.sharedBytes = static_cast<unsigned>((std::max(32 * (d.kd + 4), sums) + d.kd * d.n + extraFloats) * 4);
  return rule;
}

// The second GEMM of a chain group (groups.cc checkGemmChain), or -1.
NodeId chainSecond(const CodegenRequest& r, NodeId a) {
  for (NodeId m : r.members) {
    if (m != a && ops::in(ops::kGemmLike, r.g.node(m).op)) return m;
  }
  return -1;
}

// A GEMM chain as one narrow kernel (cagr_gemm_narrow_core with N2 > 0):
// the first layer's value through the members up to the second layer's A
// (`act`), the second layer with its own tail as the epilogue.
StatusOr<GeneratedKernel> generateGemmChain(const CodegenRequest& r, std::string& src, NodeId a, NodeId b) {
  const Graph& g = r.g;
  KernelBuilder k(r, "gemm", src);
  CAGR_ASSIGN_OR_RETURN(GemmDesc d1, describeGemm(k, a));
  CAGR_ASSIGN_OR_RETURN(GemmDesc d2, describeGemm(k, b));
  const std::optional<std::string> b1 = narrowB(k, g.node(a), d1);
  if (!b1) return unsupportedAt(g, a, "a GEMM chain's first layer runs only on the narrow kernel (f32, sm_80+)");
  const std::optional<std::string> b2 = kByNB(k, d2);
  if (!b2 || isSymbolic(d2.n) || d2.n > 64 || d2.kd != d1.n || g.node(b).mir.math != Precision::kF32) {
    return unsupportedAt(g, b, "cannot follow the narrow kernel's rows as a chain's second layer");
  }
  auto value = [&](const GemmDesc& d) {
    const std::string extra = d.extra.empty() ? "" : " + " + d.extra;
    return "    const float v = " + literal(d.alpha, DType::kF32) + " * acc" + extra + ";\n";
  };
  std::string act = "  auto act = [&](long long bi, long long m, long long n, float acc) -> float {\n" +
                    std::string("    const long long l = m * ") + k.dim(d1.n) + " + n;\n    (void)l;\n" + value(d1);
  ValueEmitter e(k, act, "    ");
  e.bind(g.node(a).outputs[0], "l", "v");
  CAGR_ASSIGN_OR_RETURN(std::string x, e.at(g.node(b).inputs[0], "l"));
  act += "    return " + x + ";\n  };\n";
  std::string mid;
  for (NodeId m : r.members) {
    if (m > a && m < b && !ops::in(ops::kViews, g.node(m).op)) mid += std::string("+") + opInfo(g.node(m).op).mnemonic;
  }
  CAGR_ASSIGN_OR_RETURN(TailChain tail, TailChain::plan(k, b));
  std::string epi = "    const long long l = m * " + k.dim(d2.n) + " + n;\n" + value(d2);
  CAGR_RETURN_IF_ERROR(tail.emit(k, "v", "l", epi, "    "));
  k.body += act + "  auto epi = [&](long long bi, long long m, long long n, float acc) {\n" + epi + "  };\n";
  auto i = [](int64_t v) { return std::to_string(v); };
  k.body += narrowCall(r, "cagr_gemm_narrow_core", i(d1.n) + ", " + i(d1.kd) + ", " + i(d2.n) + ", " + i(narrowParts()),
                       d1.n, k.dim(d1.m), k.dim(d1.m) + ", " + k.in(d1.a) + ", " + *b1 + ", " + *b2 + ", act, epi");
  CAGR_RETURN_IF_ERROR(tail.emitSideCopies(k, k.body));
  const LaunchRule rule = narrowRule(r, d1, d1.n * d2.n + 32 * (d1.n + 4));
  return k.finish(src, rule,
                  "nvrtc.gemm_small[gemm" + mid + "+gemm, " + narrowRowsText(d1.n) + " rows of " + i(d1.n) + " then " +
                      i(d2.n) + "]" +
                      tail.suffix(g),
                  gemmNarrowSource(), "CAGR_GEMM_NARROW");
}

}  // namespace

StatusOr<GeneratedKernel> generateGemm(const CodegenRequest& r, std::string& src) {
  const Graph& g = r.g;
  NodeId a = r.shape.anchor >= 0 ? r.shape.anchor : r.members.front();
  const Node& n = g.node(a);
  if (NodeId b = chainSecond(r, a); b >= 0) return generateGemmChain(r, src, a, b);
  for (ValueId v : n.inputs) {
    if (v != kNoValue && (g.type(v).dtype != DType::kF32 || g.value(v).mir.storage != Precision::kF32)) {
      return unsupportedAt(g, a, "operand '" + g.value(v).name + "' is not stored as f32");
    }
  }
  KernelBuilder k(r, "gemm", src);
  CAGR_ASSIGN_OR_RETURN(GemmDesc d, describeGemm(k, a));
  CAGR_ASSIGN_OR_RETURN(TailChain tail, TailChain::plan(k, a));
  std::string epi = "      const long long l = (bi * " + k.dim(d.m) + " + m) * " + k.dim(d.n) + " + n;\n" +
                    "      const float v = " + literal(d.alpha, DType::kF32) + " * acc" +
                    (d.extra.empty() ? "" : " + " + d.extra) + ";\n";
  CAGR_RETURN_IF_ERROR(tail.emit(k, "v", "l", epi, "      "));
  // Reduced math: operands rounded as the reference executor rounds them, f32 accumulation.
  std::string round = n.mir.math == Precision::kTF32   ? "cagr_tf32"
                      : n.mir.math == Precision::kBF16 ? "cagr_bf16r"
                      : n.mir.math == Precision::kF16  ? "cagr_f16r"
                                                       : "";
  const TileShape t = tileShape(d.n, d.kd);
  const std::optional<X3Tile> x3 = x3Tile(r, n.mir.math, t, d.n, d.kd);
  const std::optional<KkOperands> kk = x3 ? kkOperands(k, n, d.kMajorB, d.batch, d.m) : std::nullopt;
  const std::optional<std::string> narrow = x3 ? std::nullopt : narrowB(k, n, d);
  const bool rowk = !x3 && !narrow && rowKernel(d.batch, d.n, d.kd);
  // The row kernel's threads load their weights once each: read as [K][N], a
  // warp's loads of a k are 32 consecutive floats (as [N, K], 32 strided ones).
  const std::optional<std::string> rowkB = rowk ? kByNB(k, d) : std::nullopt;
  if (!kk && !narrow) {
    std::string A = k.in(d.a), B = rowkB ? *rowkB : k.in(d.b);
    const std::string bIndex = rowkB ? "k * " + k.dim(d.n) + " + n" : d.bIndex;
    k.body += "  auto la = [&](long long bi, long long m, long long k) { return " + round + "(cagr_ld(" + A + ", " +
              d.aIndex + ")); };\n" + "  auto lb = [&](long long bi, long long k, long long n) { return " + round +
              "(cagr_ld(" + B + ", " + bIndex + ")); };\n";
  }
  k.body += "  auto epi = [&](long long bi, long long m, long long n, float acc) {\n" + epi + "  };\n";
  std::string M = k.dim(d.m), N = k.dim(d.n), K = k.dim(d.kd), shapeName;
  LaunchRule rule;
  rule.work = d.batch;
  rule.work.push_back(d.m);
  rule.maxBlocks = 65536;
  auto i = [](int v) { return std::to_string(v); };
  std::string prefix = kGemm, guard = "CAGR_GEMM_SMALL";
  if (x3) {
    const std::string tile = i(x3->bm) + ", " + i(x3->bn) + ", " + i(x3->wm) + ", " + i(x3->wn);
    if (kk) {
      constexpr int kStages = 3, kRow = 40;  // cagr_gemm_x3_kk's ring and row pitch (floats)
      k.body += "  cagr_gemm_x3_kk<" + tile + ", " + i(kStages) + ">(" + kk->m + ", " + N + ", " + K + ", " + kk->a +
                ", " + kk->bt + ", epi);\n";
      rule.sharedBytes = static_cast<unsigned>(kStages * (x3->bm + x3->bn) * kRow * 4);
      rule.splitY = gemmX3Split(r.sm);
      rule.splitBelow = 2 * int64_t{r.sms};
    } else {
      k.body += "  cagr_gemm_x3<" + tile + ", " + (d.kMajorB ? "true" : "false") + ">(" + k.size(d.batch) + ", " + M +
                ", " + N + ", " + K + ", la, lb, epi);\n";
    }
    rule.work.push_back(isSymbolic(d.n) ? d.n : (d.n + x3->bn - 1) / x3->bn * x3->bn);
    rule.roundTo.assign(rule.work.size() - 1, 1);
    rule.roundTo.back() = x3->bm;  // whole row tiles: as many blocks as tiles
    rule.perBlock = int64_t{x3->bm} * x3->bn;
    rule.threads = static_cast<unsigned>(x3->threads());
    shapeName = ", 3xtf32 " + i(x3->bm) + "x" + i(x3->bn) + (kk ? " cp.async" : "") + " tiles";
    prefix = std::string(tf32x3Helpers()) + gemmX3Source();
    guard = "CAGR_GEMM_X3";
  } else if (narrow) {
    k.body += narrowCall(r, "cagr_gemm_narrow",
                         N.substr(0, N.size() - 2) + ", " + K.substr(0, K.size() - 2) + ", " +
                             std::to_string(narrowParts()),
                         d.n, M, M + ", " + k.in(d.a) + ", " + *narrow + ", epi");
    rule = narrowRule(r, d, 0);
    shapeName = ", " + narrowRowsText(d.n) + " rows of " + N.substr(0, N.size() - 2);
    prefix = gemmNarrowSource();
    guard = "CAGR_GEMM_NARROW";
  } else if (rowk) {
    rule.threads = 256;
    // Rows in flight per block; each block loads its weights once.
    rule.perBlock = rule.threads / gemm_forms::rowThreadsPerRow(d.n);
    rule.minBlocksPerSm = 2;
    rule.maxBlocks = std::max(rowkBlocksPerSm() * int64_t{r.sms}, int64_t{1});
    k.body += "  cagr_gemm_rowk<" + std::to_string(d.kd) + ", " + std::to_string(d.n) + ", " +
              std::to_string(rule.threads) + ">(" + M + ", la, lb, epi);\n";
    shapeName = ", rows of " + std::to_string(d.n);
  } else if (t.dotColumns > 0) {
    k.body += "  cagr_gemm_dot<" + std::to_string(t.dotColumns) + ">(" + k.size(d.batch) + ", " + M + ", " + K +
              ", la, lb, epi);\n";
    rule.perBlock = 8;  // rows: one per warp
    shapeName = ", row dots";
  } else {
    k.body += "  cagr_gemm_tile<" + i(t.bm) + ", " + i(t.bn) + ", " + i(t.bk) + ", " + i(t.tm) + ", " + i(t.tn) + ", " +
              (d.kMajorB ? "true" : "false") + ">(" + k.size(d.batch) + ", " + M + ", " + N + ", " + K +
              ", la, lb, epi);\n";
    // Whole column tiles when N is static, so the grid covers every tile.
    rule.work.push_back(isSymbolic(d.n) ? d.n : (d.n + t.bn - 1) / t.bn * t.bn);
    rule.roundTo.assign(rule.work.size() - 1, 1);
    rule.roundTo.back() = t.bm;
    rule.perBlock = int64_t{t.bm} * t.bn;
    rule.minBlocksPerSm = t.tm == 8 ? 2 : 3;  // caps registers (128 / 85): resident blocks hide the loads
    shapeName = ", " + i(t.bm) + "x" + i(t.bn) + " tiles";
  }
  CAGR_RETURN_IF_ERROR(tail.emitSideCopies(k, k.body));
  return k.finish(src, rule,
                  std::string("nvrtc.gemm_small[") + opInfo(n.op).mnemonic + shapeName + "]" + tail.suffix(g), prefix,
                  guard);
}

}  // namespace cagr::cuda::gen
