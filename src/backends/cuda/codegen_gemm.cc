// nvrtc.gemm_small: a generated GEMM for shapes where a library call's
// overhead dominates, with any elementwise epilogue fused (Gemm with
// alpha / beta / C, MatMul with batch broadcasting and 1-D promotion,
// Conv1x1 with bias; f32 math, or tf32 / bf16 / f16 emulated by rounding
// the operands as the reference executor does). The tile shape follows the
// static N and K: 32x128 tiles for wide outputs (a K <= 32 layer is bound by
// its coalesced stores), narrower column tiles with more row lanes for N of
// 8..64, and one warp per output row with lanes splitting K for N <= 4;
// 256 threads; blocks walk the (batch, row tile, column tile) space with a
// grid-stride loop, so one module serves every batch size.
#include <algorithm>

#include "backends/cuda/codegen_kernel.h"
#include "ir/dims.h"

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
)CUDA";

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

}  // namespace

StatusOr<GeneratedKernel> generateGemm(const CodegenRequest& r, std::string& src) {
  const Graph& g = r.g;
  NodeId a = r.shape.anchor >= 0 ? r.shape.anchor : r.members.front();
  const Node& n = g.node(a);
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
  std::string A = k.in(d.a), B = k.in(d.b);
  k.body += "  auto la = [&](long long bi, long long m, long long k) { return " + round + "(cagr_ld(" + A + ", " +
            d.aIndex + ")); };\n" + "  auto lb = [&](long long bi, long long k, long long n) { return " + round +
            "(cagr_ld(" + B + ", " + d.bIndex + ")); };\n" +
            "  auto epi = [&](long long bi, long long m, long long n, float acc) {\n" + epi + "  };\n";
  const TileShape t = tileShape(d.n, d.kd);
  std::string M = k.dim(d.m), N = k.dim(d.n), K = k.dim(d.kd), shapeName;
  LaunchRule rule;
  rule.work = d.batch;
  rule.work.push_back(d.m);
  rule.maxBlocks = 65536;
  if (t.dotColumns > 0) {
    k.body += "  cagr_gemm_dot<" + std::to_string(t.dotColumns) + ">(" + k.size(d.batch) + ", " + M + ", " + K +
              ", la, lb, epi);\n";
    rule.perBlock = 8;  // rows: one per warp
    shapeName = ", row dots";
  } else {
    auto i = [](int v) { return std::to_string(v); };
    k.body += "  cagr_gemm_tile<" + i(t.bm) + ", " + i(t.bn) + ", " + i(t.bk) + ", " + i(t.tm) + ", " + i(t.tn) + ", " +
              (d.kMajorB ? "true" : "false") + ">(" + k.size(d.batch) + ", " + M + ", " + N + ", " + K +
              ", la, lb, epi);\n";
    // Whole column tiles when N is static, so the grid covers every tile.
    rule.work.push_back(isSymbolic(d.n) ? d.n : (d.n + t.bn - 1) / t.bn * t.bn);
    rule.perBlock = int64_t{t.bm} * t.bn;
    rule.minBlocksPerSm = t.tm == 8 ? 2 : 3;  // caps registers (128 / 85): resident blocks hide the loads
    shapeName = ", " + i(t.bm) + "x" + i(t.bn) + " tiles";
  }
  CAGR_RETURN_IF_ERROR(tail.emitSideCopies(k, k.body));
  return k.finish(src, rule,
                  std::string("nvrtc.gemm_small[") + opInfo(n.op).mnemonic + shapeName + "]" + tail.suffix(g), kGemm,
                  "CAGR_GEMM_SMALL");
}

}  // namespace cagr::cuda::gen
