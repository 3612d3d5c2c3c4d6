// SpMM with a CSR matrix (graph models such as NGCF): out[r, :] =
// sum_p values[p] * dense[col_idx[p], :] over row r's entries.
//
// Load-balanced over the entries, whatever the skew of the row lengths:
// block b owns the rows whose first entry lies in its equal share
// [b * chunk, (b + 1) * chunk) of the nnz (found by a 32-ary search of
// row_ptr in warps 0 and 1; the first block also owns leading rows, the
// last one trailing empty rows), so every output row has one writer and
// no atomics or zeroing pass are needed. Inside a block, groups of L lanes
// (V-wide row loads of the dense operand, float4 when K % 4 == 0) take the
// rows of at most T entries one each, accumulating in registers; a longer
// row is split over all the block's groups (each takes every G-th entry)
// and their partial sums are added in shared memory in a fixed order. So
// NGCF's row of 554 entries costs ~554 / G steps instead of 554.
// Row pointers are clamped to [0, nnz] and entries with a column outside
// [0, C) are skipped, so a malformed CSR cannot read out of bounds (the
// reference executor rejects it).
#include "backends/cuda/codegen_kernel.h"

namespace cagr::cuda::gen {
namespace {

void replaceAll(std::string& s, const std::string& from, const std::string& to) {
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
    s.replace(at, from.size(), to);
}

// The kernel body; $-names are substituted by generateSpmm.
constexpr const char* kBody = R"(  constexpr int V = $V, L = $L, G = 256 / L;
  constexpr long long T = $T;
  const long long R = $R, E = $E, C = $C;
  const $PT* __restrict__ rp = $RP;
  const $IT* __restrict__ ci = $CI;
  const float* __restrict__ va = $VA;
  const float* __restrict__ x = $X;
  float* __restrict__ y = $Y;
  __shared__ long long own[2];
  __shared__ long long longRow[256];
  __shared__ int nLong;
  __shared__ float part[256 * V];
  const int sub = threadIdx.x % L, grp = threadIdx.x / L, lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  long long chunk = (E + gridDim.x - 1) / gridDim.x;
  if (chunk < 1) chunk = 1;
  if (warp < 2) {
    // First row whose row_ptr >= target (R if none): the answer stays in [a, b].
    const long long target = ((long long)blockIdx.x + warp) * chunk;
    const bool edge = warp == 0 ? blockIdx.x == 0 : blockIdx.x + 1 == gridDim.x;
    long long a = 0, b = R;
    while (!edge && a < b) {
      const long long step = (b - a + 31) / 32, pos = a + (long long)lane * step;
      const unsigned m = __ballot_sync(0xffffffffu, pos < b && rp[pos] < target);
      const int c = m == 0 ? 0 : 32 - __clz(m);
      if (c == 0) { b = a; break; }
      const long long next = a + (long long)c * step;
      a = a + (long long)(c - 1) * step + 1;
      if (c < 32 && next < b) b = next;
    }
    if (lane == 0) own[warp] = edge ? (warp == 0 ? 0 : R) : a;
  }
  if (threadIdx.x == 0) nLong = 0;
  __syncthreads();
  const long long rb = own[0], re = own[1];
  // Rows of at most T entries: one group each, serially.
  for (long long row = rb + grp; row < re; row += G) {
    long long p0 = rp[row], p1 = rp[row + 1];
    p0 = p0 < 0 ? 0 : p0;
    p1 = p1 > E ? E : p1;
    if (p1 - p0 > T) continue;
    for (int c = sub * V; c < $K; c += L * V) {
      float acc[V] = {};
#pragma unroll 4
      for (long long p = p0; p < p1; ++p) {
        const long long cc = ci[p];
        if ((unsigned long long)cc >= (unsigned long long)C) continue;
        const float v = __ldg(va + p);
        float d[V];
        cagr_row<V>(x, $K, cc, c, d);
#pragma unroll
        for (int q = 0; q < V; ++q) acc[q] = fmaf(v, d[q], acc[q]);
      }
#pragma unroll
      for (int q = 0; q < V; ++q) y[row * $K + c + q] = acc[q];
    }
  }
  // Longer rows: found 256 at a time, each split over all G groups.
  for (long long base = rb; base < re; base += 256) {
    const long long r = base + threadIdx.x;
    if (r < re) {
      long long p0 = rp[r], p1 = rp[r + 1];
      p0 = p0 < 0 ? 0 : p0;
      p1 = p1 > E ? E : p1;
      if (p1 - p0 > T) longRow[atomicAdd(&nLong, 1)] = r;
    }
    __syncthreads();
    const int n = nLong;
    for (int i = 0; i < n; ++i) {
      const long long row = longRow[i];
      long long p0 = rp[row], p1 = rp[row + 1];
      p0 = p0 < 0 ? 0 : p0;
      p1 = p1 > E ? E : p1;
      for (int c0 = 0; c0 < $K; c0 += L * V) {
        const int c = c0 + sub * V;
        float acc[V] = {};
        if (c < $K) {
#pragma unroll 4
          for (long long p = p0 + grp; p < p1; p += G) {
            const long long cc = ci[p];
            if ((unsigned long long)cc >= (unsigned long long)C) continue;
            const float v = __ldg(va + p);
            float d[V];
            cagr_row<V>(x, $K, cc, c, d);
#pragma unroll
            for (int q = 0; q < V; ++q) acc[q] = fmaf(v, d[q], acc[q]);
          }
        }
#pragma unroll
        for (int q = 0; q < V; ++q) part[threadIdx.x * V + q] = acc[q];
        __syncthreads();
        if (threadIdx.x < L * V && c0 + (int)threadIdx.x < $K) {
          const int s = threadIdx.x / V, q = threadIdx.x % V;
          float sum = 0.f;
          for (int gi = 0; gi < G; ++gi) sum += part[(gi * L + s) * V + q];
          y[row * $K + c0 + threadIdx.x] = sum;
        }
        __syncthreads();
      }
    }
    if (threadIdx.x == 0) nLong = 0;
    __syncthreads();
  }
)";

}  // namespace

StatusOr<GeneratedKernel> generateSpmm(const CodegenRequest& r, std::string& src) {
  const Graph& g = r.g;
  NodeId id = r.members.front();
  const Node& n = g.node(id);
  if (n.op != OpKind::kSpMM || r.members.size() != 1) return unsupportedAt(g, id, "an SpMM kernel runs one SpMM node");
  ValueId rowPtr = n.inputs[0], col = n.inputs[1], val = n.inputs[2], dense = n.inputs[3];
  const auto& dd = g.type(dense).dims;
  if (dd.size() != 2 || isSymbolic(dd[1]) || g.type(dense).dtype != DType::kF32 || g.type(val).dtype != DType::kF32 ||
      g.value(dense).mir.storage != Precision::kF32 || g.value(val).mir.storage != Precision::kF32) {
    return unsupportedAt(g, id, "operands are not f32 values and an f32 [C, K] matrix with static K");
  }
  auto index = [&](ValueId v) {
    return (g.type(v).dtype == DType::kI64 || g.type(v).dtype == DType::kI32) && g.type(v).rank() == 1;
  };
  if (!index(rowPtr) || !index(col)) return unsupportedAt(g, id, "row_ptr and col_idx are not i64 / i32 vectors");
  int64_t K = dd[1];
  int vec = K % 4 == 0 ? 4 : K % 2 == 0 ? 2 : 1, lanes = 1;
  while (lanes < 32 && lanes * vec < K) lanes *= 2;
  int groups = 256 / lanes;
  KernelBuilder k(r, "spmm", src);
  const auto& outDims = g.type(n.outputs[0]).dims;
  std::string body = kBody;
  // Serial rows up to 32 entries; each block's share of the nnz is ~8 entries per group.
  int64_t perBlock = 8LL * groups;
  // Longer names first ($RP before $R, $CI before $C, $VA before $V); the index types before all.
  replaceAll(body, "$PT", storageType(g, rowPtr));
  replaceAll(body, "$IT", storageType(g, col));
  replaceAll(body, "$RP", k.in(rowPtr));
  replaceAll(body, "$CI", k.in(col));
  replaceAll(body, "$VA", k.in(val));
  replaceAll(body, "$V", std::to_string(vec));
  replaceAll(body, "$L", std::to_string(lanes));
  replaceAll(body, "$T", "32");
  replaceAll(body, "$X", k.in(dense));
  replaceAll(body, "$Y", k.out(n.outputs[0]));
  replaceAll(body, "$R", k.dim(outDims[0]));
  replaceAll(body, "$E", k.dim(g.type(col).dims[0]));
  replaceAll(body, "$C", k.dim(dd[0]));
  replaceAll(body, "$K", std::to_string(K) + "LL");
  k.body += body;
  LaunchRule rule;
  rule.work = {g.type(col).dims[0]};
  rule.perBlock = perBlock;
  return k.finish(src, rule, "nvrtc.spmm[" + std::to_string(K) + " columns]");
}

}  // namespace cagr::cuda::gen
