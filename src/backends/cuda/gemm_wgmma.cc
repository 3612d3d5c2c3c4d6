// CAGR's f32 wgmma GEMM tile (see gemm_wgmma.h): the kernels' source, the
// eligibility of a library call, the weights as it reads them and the launch.
#include "backends/cuda/gemm_wgmma.h"

#include <algorithm>
#include <cstdlib>

#include "backends/cuda/codegen.h"

namespace cagr::cuda {

const char* wgmmaOperandSource() {
  return R"CUDA(
#ifndef CAGR_WG_OPERAND
#define CAGR_WG_OPERAND
// Byte offset of 16-byte unit u of row r in a tile of 128-byte rows stored
// with the 128-byte swizzle (the tile 1024-byte aligned).
__device__ __forceinline__ unsigned cagr_wg_swz(int r, int u) { return r * 128 + ((u ^ (r & 7)) << 4); }
// Matrix descriptor of a K-major operand with the 128-byte swizzle: 8-row
// groups 1024 bytes apart.
__device__ __forceinline__ unsigned long long cagr_wg_desc(unsigned addr) {
  return (unsigned long long)((addr & 0x3FFFF) >> 4) | (1ull << 16) | ((1024ull >> 4) << 32) | (1ull << 62);
}
#endif
)CUDA";
}

std::string gemmWgmmaSource() {
  return std::string(wgmmaOperandSource()) + R"CUDA(
// Rounds to TF32 (nearest, ties away), as an f32 bit pattern.
__device__ __forceinline__ float cagr_wg_tf32(float x) {
  unsigned u;
  asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(u) : "f"(x));
  return __uint_as_float(u);
}
__device__ __forceinline__ void cagr_wg_fence(float (&d)[32]) {
#pragma unroll
  for (int i = 0; i < 32; ++i) asm volatile("" : "+f"(d[i])::"memory");
}
// d (+)= a * b, one m64n64k8 TF32 wgmma (scaleD 0: d = a * b).
__device__ __forceinline__ void cagr_wg_mma(float (&d)[32], unsigned long long a, unsigned long long b, int scaleD) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n64k8.f32.tf32.tf32 "
      "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, "
      "%32, %33, p, 1, 1;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
        "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
        "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
        "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
      : "l"(a), "l"(b), "r"(scaleD));
}

constexpr int CAGR_WG_AB = 128 * 32 * 4, CAGR_WG_WB = 64 * 32 * 4, CAGR_WG_STAGE = 2 * CAGR_WG_AB + 2 * CAGR_WG_WB;

struct CagrWgChunk {
  float4 a[4];          // X: rows t / 8 + 32 i, 16-byte unit t % 8 of the chunk
  float4 w[2];  // W (K-major): rows (output columns) t / 8 + 32 i
};

template <bool VEC>
__device__ __forceinline__ void cagr_wg_load(CagrWgChunk& g, const float* X, long long ldx, long long M, int K,
                                             const float* W, long long ldw, int N, long long m0, int n0, int k0,
                                             int t) {
  const int k = k0 + 4 * (t & 7);
  const float4 z = make_float4(0.f, 0.f, 0.f, 0.f);
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const long long r = m0 + (t >> 3) + 32 * i;
    const float* p = X + r * ldx + k;
    if (VEC) {
      g.a[i] = r < M && k < K ? __ldg(reinterpret_cast<const float4*>(p)) : z;
    } else {
      const bool in = r < M;
      g.a[i] = make_float4(in && k < K ? __ldg(p) : 0.f, in && k + 1 < K ? __ldg(p + 1) : 0.f,
                           in && k + 2 < K ? __ldg(p + 2) : 0.f, in && k + 3 < K ? __ldg(p + 3) : 0.f);
    }
  }
#pragma unroll
  for (int i = 0; i < 2; ++i) {  // W's rows are 16-byte aligned, zeros past K to the next 4
    const long long n = n0 + (t >> 3) + 32 * i;
    g.w[i] = n < N && k < K ? __ldg(reinterpret_cast<const float4*>(W + n * ldw + k)) : z;
  }
}

// x -> hi (TF32) and lo (the remainder, TF32 again) at unit u of row r of
// the hi / lo tiles.
__device__ __forceinline__ void cagr_wg_split4(char* hi, char* lo, int r, int u, float4 v) {
  const float4 h = make_float4(cagr_wg_tf32(v.x), cagr_wg_tf32(v.y), cagr_wg_tf32(v.z), cagr_wg_tf32(v.w));
  *reinterpret_cast<float4*>(hi + cagr_wg_swz(r, u)) = h;
  *reinterpret_cast<float4*>(lo + cagr_wg_swz(r, u)) =
      make_float4(cagr_wg_tf32(v.x - h.x), cagr_wg_tf32(v.y - h.y), cagr_wg_tf32(v.z - h.z), cagr_wg_tf32(v.w - h.w));
}

__device__ __forceinline__ void cagr_wg_store(const CagrWgChunk& g, char* stage, int t) {
  char* wh = stage + 2 * CAGR_WG_AB;
#pragma unroll
  for (int i = 0; i < 4; ++i) cagr_wg_split4(stage, stage + CAGR_WG_AB, (t >> 3) + 32 * i, t & 7, g.a[i]);
#pragma unroll
  for (int i = 0; i < 2; ++i) cagr_wg_split4(wh, wh + CAGR_WG_WB, (t >> 3) + 32 * i, t & 7, g.w[i]);
}

// One chunk of 32 K from `stage` into acc, fresh: the small cross products
// first, then hi x hi.
__device__ __forceinline__ void cagr_wg_chunk(float (&acc)[32], const char* stage, int wg) {
  const unsigned base = static_cast<unsigned>(__cvta_generic_to_shared(stage));
  const unsigned ah = base + wg * 64 * 128, al = ah + CAGR_WG_AB, wh = base + 2 * CAGR_WG_AB, wl = wh + CAGR_WG_WB;
  cagr_wg_fence(acc);
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#pragma unroll
  for (int kk = 0; kk < 4; ++kk) {
    const unsigned o = kk * 32;  // 8 tf32 along K
    cagr_wg_mma(acc, cagr_wg_desc(al + o), cagr_wg_desc(wh + o), kk > 0);
    cagr_wg_mma(acc, cagr_wg_desc(ah + o), cagr_wg_desc(wl + o), 1);
    cagr_wg_mma(acc, cagr_wg_desc(ah + o), cagr_wg_desc(wh + o), 1);
  }
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
  cagr_wg_fence(acc);
}

// Block (x: 64-column tile, y: 128-row tile) of 256 threads.
template <bool VEC>
__device__ __forceinline__ void cagr_wg_gemm(const float* __restrict__ X, long long ldx, const float* __restrict__ W,
                                             long long ldw, const float* __restrict__ bias,
                                             float* __restrict__ Y, long long ldy, long long M, int N, int K,
                                             int relu) {
  extern __shared__ char cagr_wg_raw[];
  char* smem = reinterpret_cast<char*>((reinterpret_cast<unsigned long long>(cagr_wg_raw) + 1023) & ~1023ull);
  const int t = threadIdx.x, wg = t >> 7;
  const long long m0 = static_cast<long long>(blockIdx.y) * 128;
  const int n0 = blockIdx.x * 64;
  const int chunks = (K + 31) / 32;
  float sum[32], acc[32];
#pragma unroll
  for (int i = 0; i < 32; ++i) sum[i] = acc[i] = 0.f;
  CagrWgChunk g;
  cagr_wg_load<VEC>(g, X, ldx, M, K, W, ldw, N, m0, n0, 0, t);
  cagr_wg_store(g, smem, t);
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
  __syncthreads();
  if (chunks > 1) cagr_wg_load<VEC>(g, X, ldx, M, K, W, ldw, N, m0, n0, 32, t);
  for (int c = 0; c < chunks; ++c) {
    cagr_wg_chunk(acc, smem + (c & 1) * CAGR_WG_STAGE, wg);
    // While the tensor cores run: the next chunk into the other stage (its
    // readers, chunk c - 1's wgmmas, finished before the last barrier) and
    // the one after into registers.
    if (c + 1 < chunks) cagr_wg_store(g, smem + ((c + 1) & 1) * CAGR_WG_STAGE, t);
    if (c + 2 < chunks) cagr_wg_load<VEC>(g, X, ldx, M, K, W, ldw, N, m0, n0, (c + 2) * 32, t);
    asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
    cagr_wg_fence(acc);
#pragma unroll
    for (int i = 0; i < 32; ++i) sum[i] += acc[i];
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
    __syncthreads();
  }
  // D of m64nN: warp w of the warpgroup holds rows 16 w .. + 15; lane l rows
  // l / 4 and l / 4 + 8, columns 8 j + 2 (l % 4) + {0, 1}: stored in pairs
  // where Y's rows allow 8-byte stores (measured: 4096x256x512 27.1 us
  // against 29.8 one float at a time).
  const int w = (t & 127) >> 5, l = t & 31;
  const long long r0 = m0 + wg * 64 + w * 16 + (l >> 2);
  const bool pairs = (N & 1) == 0 && (ldy & 1) == 0 && (reinterpret_cast<unsigned long long>(Y) & 7) == 0;
#pragma unroll
  for (int j = 0; j < 8; ++j) {
    const int col = n0 + 8 * j + 2 * (l & 3);
    const float b0 = bias != nullptr && col < N ? bias[col] : 0.f;
    const float b1 = bias != nullptr && col + 1 < N ? bias[col + 1] : 0.f;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const long long r = r0 + 8 * h;
      if (r >= M) continue;
      float v0 = sum[4 * j + 2 * h] + b0, v1 = sum[4 * j + 2 * h + 1] + b1;
      if (relu) v0 = fmaxf(v0, 0.f), v1 = fmaxf(v1, 0.f);
      if (pairs && col + 1 < N) {
        *reinterpret_cast<float2*>(Y + r * ldy + col) = make_float2(v0, v1);
      } else {
        if (col < N) Y[r * ldy + col] = v0;
        if (col + 1 < N) Y[r * ldy + col + 1] = v1;
      }
    }
  }
}

// Entries: X rows by 16 bytes (v4) or by float (v1), for one block per SM
// (_1: up to 255 registers) or two (_2: 128).
#define CAGR_WG_ENTRY(NAME, VEC, BLOCKS)                                                                          \
  extern "C" __global__ void __launch_bounds__(256, BLOCKS)                                                       \
      NAME(const float* X, long long ldx, const float* W, long long ldw, const float* bias, float* Y,             \
           long long ldy, long long M, int N, int K, int relu) {                                                 \
    cagr_wg_gemm<VEC>(X, ldx, W, ldw, bias, Y, ldy, M, N, K, relu);                                             \
  }
CAGR_WG_ENTRY(cagr_wgmma_x3_v4_1, true, 1)
CAGR_WG_ENTRY(cagr_wgmma_x3_v4_2, true, 2)
CAGR_WG_ENTRY(cagr_wgmma_x3_v1_1, false, 1)
CAGR_WG_ENTRY(cagr_wgmma_x3_v1_2, false, 2)
// W (the product's B: [K][N] with row pitch ldw, or [N][K] when kmajor) ->
// [N][kp] (K-major), zeros past K.
extern "C" __global__ void cagr_wgmma_kmajor(const float* W, long long ldw, int kmajor, int N, int K, int kp,
                                             float* out) {
  const long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (i >= static_cast<long long>(N) * kp) return;
  const int n = static_cast<int>(i / kp), k = static_cast<int>(i % kp);
  out[i] = k < K ? (kmajor ? W[n * ldw + k] : W[k * ldw + n]) : 0.f;
}
)CUDA";
}

std::string wgmmaPlanRejection(const LibraryGemm& p) {
  if (p.library != GemmLibrary::kCublasLt) return "not a cuBLASLt call";
  if (p.math != Precision::kF32 || p.operands != Precision::kF32 || p.output != Precision::kF32) {
    return "not f32 math on f32 operands";
  }
  if (p.alpha != 1.0f || p.addend != kNoValue) return "a scale or an addend";
  if (p.act != Activation::kNone && p.act != Activation::kRelu) return "an activation other than ReLU";
  return "";
}

std::string wgmmaGemmRejection(const LibraryGemm& p, const ColumnMajorGemm& c, bool constantB) {
  if (std::string why = wgmmaPlanRejection(p); !why.empty()) return why;
  if (c.batch != 1) return "a batch of products";
  if (c.transB) return "its A is not row-major";
  if (!constantB) return "its B is not a constant";
  if (c.m > (int64_t{1} << 30) || c.k > (int64_t{1} << 30)) return "too large";
  if (c.n > int64_t{65535} * kWgmmaRows) return "over 65535 row tiles";
  return "";
}

WgmmaMode wgmmaMode() {
  // Off unless asked: the tile's 3xTF32 products measured up to 10 % less
  // accurate than cuBLASLt's SGEMM on a DCN-v2 layer (H100, max abs error
  // 1.53e-5 vs 1.38e-5; test/backends/cuda_f32_accuracy_test.cc), so it is
  // not a lossless default.
  const char* v = std::getenv("CAGR_GEMM_WGMMA");
  if (v == nullptr) return WgmmaMode::kOff;
  const std::string s = v;
  return s == "force" ? WgmmaMode::kForced : s == "1" || s == "timed" ? WgmmaMode::kTimed : WgmmaMode::kOff;
}

StatusOr<std::unique_ptr<WgmmaGemm>> WgmmaGemm::create(const std::string& arch, double* compileSeconds) {
  if (arch != "sm_90a") return unsupported("the wgmma GEMM tile is built for sm_90a, not " + arch);
  NvrtcOptions o;
  o.arch = arch;
  CAGR_ASSIGN_OR_RETURN(CompiledModule m, compileModule(gemmWgmmaSource(), o));
  if (compileSeconds != nullptr) *compileSeconds = m.compileSeconds;
  std::unique_ptr<WgmmaGemm> w(new WgmmaGemm());
  cudaLibrary_t lib = nullptr;
  CAGR_RETURN_IF_ERROR(checkCuda(cudaLibraryLoadData(&lib, m.cubin.data(), nullptr, nullptr, 0, nullptr, nullptr, 0),
                                 "cudaLibraryLoadData (the wgmma GEMM tile)"));
  w->library_.reset(lib);
  const std::pair<cudaKernel_t*, const char*> entries[] = {
      {&w->gemm_[0][0], "cagr_wgmma_x3_v1_1"}, {&w->gemm_[0][1], "cagr_wgmma_x3_v1_2"},
      {&w->gemm_[1][0], "cagr_wgmma_x3_v4_1"}, {&w->gemm_[1][1], "cagr_wgmma_x3_v4_2"},
      {&w->kMajor_, "cagr_wgmma_kmajor"}};
  for (auto [k, name] : entries) {
    CAGR_RETURN_IF_ERROR(checkCuda(cudaLibraryGetKernel(k, lib, name), std::string("cudaLibraryGetKernel ") + name));
  }
  for (cudaKernel_t k : {w->gemm_[0][0], w->gemm_[0][1], w->gemm_[1][0], w->gemm_[1][1]}) {
    CAGR_RETURN_IF_ERROR(checkCuda(cudaKernelSetAttributeForDevice(k, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                                   static_cast<int>(kWgmmaSharedBytes),
                                                                   deviceInfo().device),
                                   "the wgmma GEMM tile's shared memory"));
  }
  return w;
}

WgmmaGemm::~WgmmaGemm() = default;

StatusOr<const WgmmaGemm::Weight*> WgmmaGemm::weight(const void* w, int64_t n, int64_t k, int64_t ldw, bool kMajor,
                                                     cudaStream_t stream) {
  if (auto it = weights_.find(w); it != weights_.end()) return &it->second;
  Weight s;
  s.n = n;
  s.k = k;
  if (kMajor && k % 4 == 0 && ldw % 4 == 0 && reinterpret_cast<uintptr_t>(w) % 16 == 0) {
    s.data = static_cast<const float*>(w);
    s.pitch = ldw;
    return &weights_.emplace(w, std::move(s)).first->second;
  }
  s.pitch = (k + 3) / 4 * 4;
  CAGR_ASSIGN_OR_RETURN(s.copy, deviceAlloc(static_cast<size_t>(n * s.pitch * 4), "the wgmma tile's K-major weight"));
  const float* src = static_cast<const float*>(w);
  long long ld = ldw;
  int km = kMajor ? 1 : 0, ni = static_cast<int>(n), ki = static_cast<int>(k), kp = static_cast<int>(s.pitch);
  float* out = static_cast<float*>(s.copy.get());
  void* args[] = {&src, &ld, &km, &ni, &ki, &kp, &out};
  const unsigned blocks = static_cast<unsigned>((n * s.pitch + 255) / 256);
  CAGR_RETURN_IF_ERROR(checkCuda(
      cudaLaunchKernel(reinterpret_cast<const void*>(kMajor_), dim3(blocks), dim3(256), args, 0, stream),
      "a K-major copy of a weight for the wgmma tile"));
  CAGR_RETURN_IF_ERROR(checkCuda(cudaStreamSynchronize(stream), "a K-major copy of a weight for the wgmma tile"));
  s.data = out;
  return &weights_.emplace(w, std::move(s)).first->second;
}

void WgmmaGemm::release(const void* w) {
  weights_.erase(w);
}

size_t WgmmaGemm::copyBytes() const {
  size_t b = 0;
  for (const auto& [w, s] : weights_) b += s.bytes();
  return b;
}

Status WgmmaGemm::launch(const Weight& w, const float* x, int64_t ldx, const float* bias, float* y, int64_t ldy,
                         int64_t m, bool relu, cudaStream_t stream, const std::string& where) const {
  const bool vec = ldx % 4 == 0 && w.k % 4 == 0 && reinterpret_cast<uintptr_t>(x) % 16 == 0;
  const float* wd = w.data;
  long long ldx64 = ldx, ldw = w.pitch, ldy64 = ldy, m64 = m;
  int n = static_cast<int>(w.n), k = static_cast<int>(w.k), act = relu ? 1 : 0;
  void* args[] = {&x, &ldx64, &wd, &ldw, &bias, &y, &ldy64, &m64, &n, &k, &act};
  const int64_t rowTiles = (m + kWgmmaRows - 1) / kWgmmaRows;
  if (rowTiles > 65535) return unsupported(where + ": over 65535 x 128 rows for the wgmma GEMM tile");
  const dim3 grid(static_cast<unsigned>((w.n + kWgmmaCols - 1) / kWgmmaCols), static_cast<unsigned>(rowTiles));
  // One wave at a block per SM: the 255-register form (4096x256x512 20.7 us
  // against 27.1 with two blocks' 128 registers); more blocks: two per SM
  // (4096x512x368 29.2 against 32.7).
  const bool oneWave = static_cast<int64_t>(grid.x) * grid.y <= std::max(deviceInfo().sms, 1);
  const void* fn = reinterpret_cast<const void*>(gemm_[vec ? 1 : 0][oneWave ? 0 : 1]);
  return checkCuda(cudaLaunchKernel(fn, grid, dim3(kWgmmaThreads), args, kWgmmaSharedBytes, stream),
                   where + ": the wgmma GEMM tile");
}

}  // namespace cagr::cuda
