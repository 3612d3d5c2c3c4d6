// The generated kernels around cublaslt.cin's GEMM (see cuda_cin.h): W
// rounded to the GEMM's element type, the outer product of a chunk of the
// batch in (b,d)-major rows, and the transpose of the GEMM's [(b,d), o]
// result into the plan's [b, o, d] with the bias and the group's activation
// tail (e.g. ReLU; views pass through), and a pooled tail's row sums. xk, x0 and W round to the
// math precision as the reference executor's emulation does; the exact
// product (two <= 11-bit significands) rounds once more to the element
// type, as nvrtc.cin's wmma path does (the reference keeps it exact).
#include <algorithm>
#include <cstdio>
#include <functional>

#include "backends/cuda/codegen_kernel.h"
#include "backends/cuda/cuda_cin.h"
#include "lower/op_sets.h"

namespace cagr::cuda {

std::vector<ValueId> CinGemm::outputs() const {
  std::vector<ValueId> v;
  for (ValueId x : {out, pooled}) {
    if (x != kNoValue) v.push_back(x);
  }
  return v;
}

size_t CinGemm::weightBytes() const {
  return math == Precision::kF32 ? 0 : static_cast<size_t>(O * ldz) * elementBytes;
}

int64_t sliceRows(int64_t H, int64_t M, int64_t ldz, size_t elementBytes) {
  if (ldz != H * M) return 0;
  for (int64_t s = 2; s <= kCinMaxSlices && s <= H; ++s) {
    if (H % s == 0 && (H / s) * M * static_cast<int64_t>(elementBytes) % 16 == 0) return H / s;
  }
  return 0;
}

size_t CinGemm::bytesPerSample(bool sliced) const {
  return static_cast<size_t>(D) *
         (static_cast<size_t>(zPitch(sliced)) * elementBytes + static_cast<size_t>(O) * 4);
}

int64_t CinGemm::chunkRows(int64_t batch, size_t budget, bool sliced) const {
  const int64_t all = std::max<int64_t>(batch, 1);
  auto most =
      std::clamp<int64_t>(static_cast<int64_t>(budget / std::max<size_t>(bytesPerSample(sliced), 1)), 1, all);
  const int64_t chunks = (all + most - 1) / most;
  return (all + chunks - 1) / chunks;  // <= most: the same number of chunks, evened out
}

size_t CinGemm::scratchBytes(int64_t batch, size_t budget, int lanes, size_t laneWorkspace, bool sliced) const {
  const auto up = [](size_t n) { return (n + 255) / 256 * 256; };
  auto rows = static_cast<size_t>(chunkRows(batch, budget, sliced));
  const auto d = static_cast<size_t>(D);
  const size_t lane = up(rows * d * static_cast<size_t>(zPitch(sliced)) * elementBytes) +
                      up(rows * d * static_cast<size_t>(O) * 4) + up(laneWorkspace);
  return up(weightBytes()) + static_cast<size_t>(std::max(lanes, 1)) * lane;
}

namespace gen {
namespace {

const char* const kCinGemmCommon = R"CUDA(
#ifndef CAGR_CING_COMMON
#define CAGR_CING_COMMON
// Element type of the GEMM's inputs and the roundings: r() to the math
// precision (as the reference rounds xk, x0, W), e() to the element.
template <int P> struct cagr_cing;
template <> struct cagr_cing<0> {
  using E = float;
  static __device__ __forceinline__ float r(float x) { return x; }
  static __device__ __forceinline__ E e(float x) { return x; }
};
template <> struct cagr_cing<1> {
  using E = float;
  static __device__ __forceinline__ float r(float x) { return cagr_tf32(x); }
  static __device__ __forceinline__ E e(float x) { return cagr_tf32(x); }
};
template <> struct cagr_cing<2> {
  using E = __nv_bfloat16;
  static __device__ __forceinline__ float r(float x) { return cagr_bf16r(x); }
  static __device__ __forceinline__ E e(float x) { return __float2bfloat16_rn(x); }
};
template <> struct cagr_cing<3> {
  using E = __half;
  static __device__ __forceinline__ float r(float x) { return cagr_f16r(x); }
  static __device__ __forceinline__ E e(float x) { return __float2half_rn(x); }
};

// wq[o, k] = W[o, k] as the element type, rows of LDZ (padding zero).
template <int O, int K, int LDZ, int P>
__device__ __forceinline__ void cagr_cing_w(const float* __restrict__ w, typename cagr_cing<P>::E* __restrict__ wq) {
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < (long long)O * LDZ;
       i += (long long)gridDim.x * blockDim.x) {
    const int o = (int)(i / LDZ), k = (int)(i % LDZ);
    wq[i] = cagr_cing<P>::e(k < K ? __ldg(w + (long long)o * K + k) : 0.f);
  }
}

// One block per sample b: z[(b*D + d) * LDZ + h*M + m] = e(r(xk[b,h,d]) * r(x0[b,m,d])),
// written in address order, 16 bytes per store (padding columns zero); with SH the sample's rounded xk and x0 sit in
// shared memory d-major, so neighbouring threads read neighbouring words. HX: xk's rows per sample (H < HX: a K
// slice of H rows, xk pointing at the slice's first).
template <int H, int M, int D, int LDZ, int P, bool SH, int HX = H>
__device__ __forceinline__ void cagr_cing_z(const float* __restrict__ xk, const float* __restrict__ x0,
                                            typename cagr_cing<P>::E* __restrict__ z, long long rows) {
  using T = cagr_cing<P>;
  constexpr int K = H * M;
  __shared__ float xs[SH ? D * H : 1];
  __shared__ float x0s[SH ? D * M : 1];
  for (long long b = blockIdx.x; b < rows; b += gridDim.x) {
    if constexpr (SH) {
      for (int e = threadIdx.x; e < H * D; e += blockDim.x) xs[(e % D) * H + e / D] = T::r(__ldg(xk + b * HX * D + e));
      for (int e = threadIdx.x; e < M * D; e += blockDim.x) x0s[(e % D) * M + e / D] = T::r(__ldg(x0 + b * M * D + e));
      __syncthreads();
    }
    typename T::E* zb = z + b * D * LDZ;
    // V elements (16 bytes) per store: LDZ is a multiple of V, rows start 16-byte aligned.
    constexpr int V = 16 / sizeof(typename T::E);
    for (int e = threadIdx.x * V; e < D * LDZ; e += blockDim.x * V) {
      const int d = e / LDZ, k0 = e - d * LDZ;
      __align__(16) typename T::E pk[V];
#pragma unroll
      for (int j = 0; j < V; ++j) {
        const int k = k0 + j, h = k / M, m = k - h * M;
        float v = 0.f;
        if (k < K) {
          v = SH ? xs[d * H + h] * x0s[d * M + m]
                 : T::r(__ldg(xk + (b * HX + h) * D + d)) * T::r(__ldg(x0 + (b * M + m) * D + d));
        }
        pk[j] = T::e(v);
      }
      *reinterpret_cast<uint4*>(zb + e) = *reinterpret_cast<const uint4*>(pk);
    }
    if constexpr (SH) __syncthreads();
  }
}

// One block per sample b: out[b, o, d] = f(y[(b*D + d) * O + o] + bias[o])
// (f: the group's elementwise tail), through shared memory (padded rows)
// when the sample's D x O tile fits; with MAP the map is stored, with POOL
// each row's sum over d goes to pooled[b, o] (one thread per row, d in
// order: the same bits every run).
template <int O, int D, bool BIAS, bool SH, bool MAP, bool POOL, typename F>
__device__ __forceinline__ void cagr_cing_out(const float* __restrict__ y, const float* __restrict__ bias,
                                              float* __restrict__ out, float* __restrict__ pooled, long long rows,
                                              F f) {
  __shared__ float ys[SH ? D * (O + 1) : 1];
  for (long long b = blockIdx.x; b < rows; b += gridDim.x) {
    const float* yb = y + b * D * O;
    if constexpr (SH) {
      for (int e = threadIdx.x; e < D * O; e += blockDim.x) ys[(e / O) * (O + 1) + e % O] = yb[e];
      __syncthreads();
    }
    const auto at = [&](int o, int d) {
      return f((SH ? ys[d * (O + 1) + o] : yb[d * O + o]) + (BIAS ? __ldg(bias + o) : 0.f));
    };
    if constexpr (MAP) {
      float* ob = out + b * O * D;
      for (int e = threadIdx.x; e < O * D; e += blockDim.x) ob[e] = at(e / D, e % D);
    }
    if constexpr (POOL) {
      for (int o = threadIdx.x; o < O; o += blockDim.x) {
        float s = 0.f;
        for (int d = 0; d < D; ++d) s += at(o, d);
        pooled[b * O + o] = s;
      }
    }
    if constexpr (SH) __syncthreads();
  }
}
#endif
)CUDA";

constexpr unsigned kThreads = 256;
constexpr int64_t kMaxGrid = int64_t{1} << 20;  // blocks loop over the samples beyond

const char* elementType(int p) {
  return p == 2 ? "__nv_bfloat16" : p == 3 ? "__half" : "float";
}

// One sample per block: a grid of `rows` blocks (capped), none for no rows.
Launch perSample(const std::vector<int64_t>& e) {
  Launch l;
  int64_t rows = e.empty() ? 0 : e[0];
  l.grid[0] = static_cast<unsigned>(std::clamp<int64_t>(rows, 0, kMaxGrid));
  l.block[0] = kThreads;
  return l;
}

// Appends `entry` with `body` unless the module has it already (same shape).
void appendEntry(std::string& src, const std::string& entry, const std::string& params, const std::string& body) {
  if (src.find(" " + entry + "(") != std::string::npos) return;
  src += "extern \"C\" __global__ void __launch_bounds__(" + std::to_string(kThreads) + ") " + entry + "(" + params +
         ") {\n  " + body + "\n}\n";
}

// The group's elementwise tail as outKernel applies it: members after the
// CIN that are views or elementwise ops reading only the previous value
// (ReLU, sigmoid, ...), f32 all the way, ending in the group's one output
// or, pooled, in the operand of the group's last member, a ReduceSum over D
// (groups.cc checkCinPooling): `pooled` its output, `out` the chain's end
// only where it is a group output too. Fills the lambda body over `v`
// ("" none) and the name suffix.
Status tailOf(const CodegenRequest& r, NodeId anchor, ValueId& out, ValueId& pooled, std::string& body,
              std::string& suffix) {
  const Graph& g = r.g;
  const NodeId sum = r.members.size() > 1 && g.node(r.members.back()).op == OpKind::kReduceSum ? r.members.back() : -1;
  ValueId cur = g.node(anchor).outputs[0];
  std::string var = "v";
  int n = 0;
  for (NodeId m : r.members) {
    if (m == anchor || m == sum) continue;
    if (m < anchor) return unsupportedAt(g, m, "comes before the CIN in its group");
    const Node& node = g.node(m);
    if (!ops::in(ops::kEltwise | ops::kViews, node.op)) return unsupportedAt(g, m, "is no elementwise op or view");
    int reads = 0;
    const bool view = ops::in(ops::kViews, node.op);
    if (view && !node.inputs.empty() && node.inputs[0] == cur) reads = 1;  // (a shape operand aside)
    for (ValueId v : node.inputs) {
      if (v == kNoValue || view) continue;
      if (v != cur)
        return unsupportedAt(g, m, "reads a value other than the previous one (cublaslt.cin's tail is a chain)");
      ++reads;
    }
    if (reads != 1 || node.outputs.size() != 1) return unsupportedAt(g, m, "is not a one-operand op");
    ValueId o = node.outputs[0];
    if (g.type(o).dtype != DType::kF32 || g.value(o).mir.storage != Precision::kF32 ||
        !sameSize(g.type(o).dims, g.type(cur).dims)) {
      return unsupportedAt(g, m, "does not map f32 elements one to one");
    }
    if (std::find(r.outputs.begin(), r.outputs.end(), cur) != r.outputs.end()) {
      return unsupportedAt(g, m, "its operand is also a group output");
    }
    cur = o;
    if (view) continue;
    CAGR_ASSIGN_OR_RETURN(std::string e, opExpr(g, m, {var}));
    var = "t" + std::to_string(n++);
    body += "const float " + var + " = " + e + "; ";
    suffix += std::string("+") + opInfo(node.op).mnemonic;
  }
  if (!body.empty()) body += "return " + var + ";";
  const auto isOut = [&](ValueId v) { return std::find(r.outputs.begin(), r.outputs.end(), v) != r.outputs.end(); };
  if (sum < 0) {
    if (r.outputs.size() != 1 || r.outputs[0] != cur) {
      return unsupportedAt(g, anchor, "its group has outputs besides the end of its tail");
    }
    out = cur;
    return Status::ok();
  }
  pooled = g.node(sum).outputs[0];
  if (g.node(sum).inputs[0] != cur || g.value(pooled).mir.storage != Precision::kF32 || !isOut(pooled)) {
    return unsupportedAt(g, sum, "does not sum the end of the CIN's tail into an f32 group output");
  }
  out = isOut(cur) ? cur : kNoValue;
  if (r.outputs.size() != (out != kNoValue ? 2u : 1u)) {
    return unsupportedAt(g, anchor, "its group has outputs besides its map and its row sums");
  }
  suffix += "+sum";
  return Status::ok();
}

// A C identifier for the tail (kernel entries with different tails differ).
std::string tailTag(const std::string& body) {
  if (body.empty()) return "";
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(std::hash<std::string>{}(body)));
  return std::string("_t") + hex;
}

}  // namespace

StatusOr<CinGemm> generateCinGemm(const CodegenRequest& r, std::string& src, std::vector<GeneratedKernel>& kernels) {
  const Graph& g = r.g;
  NodeId id = r.shape.anchor >= 0 ? r.shape.anchor : r.members.front();
  const Node& n = g.node(id);
  if (n.op != OpKind::kCIN) return unsupportedAt(g, id, "a CIN kernel runs one CIN node and its elementwise tail");
  for (ValueId v : n.inputs) {
    if (v != kNoValue && (g.type(v).dtype != DType::kF32 || g.value(v).mir.storage != Precision::kF32)) {
      return unsupportedAt(g, id, "operand '" + g.value(v).name + "' is not stored as f32");
    }
  }
  if (g.value(n.outputs[0]).mir.storage != Precision::kF32) {
    return unsupportedAt(g, id, "its output is not stored as f32");
  }
  ValueId groupOut = kNoValue, pooled = kNoValue;
  std::string tailBody, tailName;
  CAGR_RETURN_IF_ERROR(tailOf(r, id, groupOut, pooled, tailBody, tailName));
  const auto& xk = g.type(n.inputs[0]).dims;
  const auto& x0 = g.type(n.inputs[1]).dims;
  const auto& w = g.type(n.inputs[2]).dims;
  bool fixed = xk.size() == 3 && x0.size() == 3 && w.size() == 2 && !isSymbolic(xk[1]) && !isSymbolic(xk[2]) &&
               !isSymbolic(x0[1]) && !isSymbolic(w[0]) && xk[0] == x0[0] && xk[2] == x0[2] && w[1] == xk[1] * x0[1];
  if (!fixed) return unsupportedAt(g, id, "operands are not [B,H,D], [B,M,D], [O,H*M] with static H, M, D, O");
  if (!g.isConstant(n.inputs[2])) return unsupportedAt(g, id, "its weight is not a constant");
  CinGemm c;
  c.node = id;
  c.xk = n.inputs[0];
  c.x0 = n.inputs[1];
  c.w = n.inputs[2];
  c.bias = n.inputs.size() > 3 ? n.inputs[3] : kNoValue;
  c.out = groupOut;
  c.pooled = pooled;
  c.tail = tailName;
  c.O = w[0];
  c.H = xk[1];
  c.M = x0[1];
  c.D = xk[2];
  c.math = n.mir.math;
  const int p = mathCode(c.math);
  c.elementBytes = p >= 2 ? 2 : 4;
  const int64_t per16 = 16 / static_cast<int64_t>(c.elementBytes);
  c.ldz = (c.K() + per16 - 1) / per16 * per16;
  if (c.O * c.D > int64_t{1} << 24 || c.ldz * c.D > int64_t{1} << 24) {
    return unsupportedAt(g, id, "one sample's outer product or output is beyond 16M elements");
  }

  if (src.find("#define CAGR_CING_COMMON") == std::string::npos) src += kCinGemmCommon;
  const std::string e = elementType(p), ps = std::to_string(p), O = std::to_string(c.O), H = std::to_string(c.H),
                    M = std::to_string(c.M), D = std::to_string(c.D), K = std::to_string(c.K()),
                    L = std::to_string(c.ldz);
  const std::string tag = O + "x" + H + "x" + M + "x" + D + "_p" + ps;
  const std::string name = "cublaslt.cin[" + O + "x" + H + "x" + M + ", " + precisionName(c.math);
  if (p != 0) {
    GeneratedKernel k;
    k.entry = "cagr_cinw_" + O + "x" + K + "_p" + ps;
    appendEntry(src, k.entry, "const float* w, " + e + "* wq",
                "cagr_cing_w<" + O + ", " + K + ", " + L + ", " + ps + ">(w, wq);");
    k.params = {c.w};
    const int64_t total = c.O * c.ldz;
    k.launch = [total](const std::vector<int64_t>&) {
      Launch l;
      l.grid[0] = static_cast<unsigned>(std::clamp<int64_t>((total + kThreads - 1) / kThreads, 1, 4096));
      l.block[0] = kThreads;
      return l;
    };
    k.name = name + ", round W]";
    kernels.push_back(std::move(k));
  }
  // The outer product, and that of one K slice where the layer has a sliced form.
  c.sliceH = sliceRows(c.H, c.M, c.ldz, c.elementBytes);
  const auto outerProduct = [&](int64_t h) {
    GeneratedKernel k;
    const std::string hs = std::to_string(h), l = h == c.H ? L : std::to_string(h * c.M);
    k.entry = "cagr_cinz_" + tag + (h == c.H ? "" : "_s" + hs);
    const bool sh = (h + c.M) * c.D * 4 <= 32 * 1024;
    appendEntry(src, k.entry, "const float* xk, const float* x0, " + e + "* z, long long rows",
                "cagr_cing_z<" + hs + ", " + M + ", " + D + ", " + l + ", " + ps + ", " + (sh ? "true" : "false") +
                    ", " + H + ">(xk, x0, z, rows);");
    k.params = {c.xk, c.x0};
    k.extents = {ExtentRef{0, 0}};
    k.launch = perSample;
    k.name = name + (h == c.H ? ", outer product]" : ", outer product of " + hs + " rows]");
    return k;
  };
  kernels.push_back(outerProduct(c.H));
  {
    GeneratedKernel k;
    const bool bias = c.bias != kNoValue, sh = c.D * (c.O + 1) * 4 <= 40 * 1024;
    const bool map = c.out != kNoValue, pool = c.pooled != kNoValue;
    k.entry = "cagr_cino_" + O + "x" + D + (bias ? "_bias" : "") + (pool ? (map ? "_mapsum" : "_sum") : "") +
              tailTag(tailBody);
    const std::string f = tailBody.empty() ? "[](float v) { return v; }" : "[](float v) { " + tailBody + " }";
    const auto flag = [](bool b) { return std::string(b ? "true" : "false"); };
    appendEntry(src, k.entry, "const float* y, const float* bias, float* out, float* pooled, long long rows",
                "cagr_cing_out<" + O + ", " + D + ", " + flag(bias) + ", " + flag(sh) + ", " + flag(map) + ", " +
                    flag(pool) + ">(y, bias, out, pooled, rows, " + f + ");");
    k.params = c.outputs();
    k.numOutputs = static_cast<int>(k.params.size());
    k.extents = {ExtentRef{0, 0}};
    k.launch = perSample;
    k.name = name + ", transpose + bias" + tailName + "]";
    kernels.push_back(std::move(k));
  }
  if (c.sliceH > 0) kernels.push_back(outerProduct(c.sliceH));
  return c;
}

}  // namespace gen
}  // namespace cagr::cuda
