// nvrtc.gemm_small: a generated GEMM for shapes where a library call's
// overhead dominates, with any elementwise epilogue fused (Gemm with
// alpha / beta / C, MatMul with batch broadcasting and 1-D promotion,
// Conv1x1 with bias; f32 math, or tf32 / bf16 / f16 emulated by rounding
// the operands as the reference executor does). 64x64 block tiles, 256 threads with 4x4
// register tiles, BK = 16; blocks walk the (batch, row tile, column tile)
// space with a grid-stride loop, so one module serves every batch size.
#include <algorithm>

#include "backends/cuda/codegen_kernel.h"
#include "ir/dims.h"

namespace cagr::cuda::gen {
namespace {

const char* const kGemm = R"CUDA(
// C[bi](m, n) = sum_k A(bi, m, k) * B(bi, k, n) for every (bi, m, n); epi(bi, m, n, acc) stores.
// KMAJOR_B: B's k index is the contiguous one (load B tiles along k).
template <bool KMAJOR_B, typename LA, typename LB, typename EPI>
__device__ __forceinline__ void cagr_gemm_small(long long batch, long long M, long long N, long long K, LA la, LB lb,
                                                EPI epi) {
  constexpr int BM = 64, BN = 64, BK = 16;
  __shared__ float As[BK][BM + 4];
  __shared__ float Bs[BK][BN + 4];
  const int tid = threadIdx.x, tx = tid % 16, ty = tid / 16;
  const long long mt = (M + BM - 1) / BM, nt = (N + BN - 1) / BN, tiles = batch * mt * nt;
  for (long long tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    const long long bi = tile / (mt * nt), rem = tile % (mt * nt), m0 = rem / nt * BM, n0 = rem % nt * BN;
    float acc[4][4] = {};
    for (long long k0 = 0; k0 < K; k0 += BK) {
      for (int e = tid; e < BM * BK; e += 256) {
        const int i = e / BK, kk = e % BK;
        const long long m = m0 + i, k = k0 + kk;
        As[kk][i] = (m < M && k < K) ? la(bi, m, k) : 0.f;
      }
      for (int e = tid; e < BN * BK; e += 256) {
        const int j = KMAJOR_B ? e / BK : e % BN, kk = KMAJOR_B ? e % BK : e / BN;
        const long long n = n0 + j, k = k0 + kk;
        Bs[kk][j] = (n < N && k < K) ? lb(bi, k, n) : 0.f;
      }
      __syncthreads();
#pragma unroll
      for (int kk = 0; kk < BK; ++kk) {
        float a[4], b[4];
#pragma unroll
        for (int q = 0; q < 4; ++q) { a[q] = As[kk][ty * 4 + q]; b[q] = Bs[kk][tx * 4 + q]; }
        cagr_fma_tile(acc, a, b);
      }
      __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        const long long m = m0 + ty * 4 + i, n = n0 + tx * 4 + j;
        if (m < M && n < N) epi(bi, m, n, acc[i][j]);
      }
  }
}
)CUDA";

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
            "  auto epi = [&](long long bi, long long m, long long n, float acc) {\n" + epi + "  };\n" +
            "  cagr_gemm_small<" + (d.kMajorB ? "true" : "false") + ">(" + k.size(d.batch) + ", " + k.dim(d.m) + ", " +
            k.dim(d.n) + ", " + k.dim(d.kd) + ", la, lb, epi);\n";
  CAGR_RETURN_IF_ERROR(tail.emitSideCopies(k, k.body));
  LaunchRule rule;
  rule.work = d.batch;
  rule.work.push_back(d.m);
  rule.work.push_back(d.n);
  rule.perBlock = 64 * 64;
  rule.maxBlocks = 65536;
  return k.finish(src, rule, std::string("nvrtc.gemm_small[") + opInfo(n.op).mnemonic + "]" + tail.suffix(g), kGemm,
                  "CAGR_GEMM_SMALL");
}

}  // namespace cagr::cuda::gen
