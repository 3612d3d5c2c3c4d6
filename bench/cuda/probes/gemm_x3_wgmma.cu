// Probe (bench/cuda/FINDINGS.md): the backend's f32 wgmma GEMM tile
// (src/backends/cuda/gemm_wgmma.cc, 3xTF32 with a fresh accumulator per
// 32-wide K chunk) against cuBLASLt's SGEMM on DLRM's and DeepFM's layers:
// row-major Y[M,N] = relu(X[M,K] W + b), W a Linear's [N][K] weight, each
// as 20 calls in a CUDA graph; error = largest |y - fp64| / largest |fp64|
// over every 7th row. The kernels are the backend's own source, cut out of
// gemm_wgmma.cc first (from the repository root):
//
//   python3 -c "s=open('src/backends/cuda/gemm_wgmma.cc').read(); \
//     print(s[s.index('R\"CUDA(')+7:s.index(')CUDA\"')])" > /tmp/gemm_wgmma_kernels.cuh
//   nvcc -O3 -gencode arch=compute_90a,code=sm_90a -std=c++17 -I/tmp \
//     bench/cuda/probes/gemm_x3_wgmma.cu -o gemm_x3_wgmma -lcublasLt
#include <cmath>

#include "gemm_wgmma_kernels.cuh"
#include "probe_util.cuh"

namespace {

constexpr unsigned kShared = 2 * (2 * 128 * 32 + 2 * 64 * 32) * 4 + 1024;  // kWgmmaSharedBytes

double relError(const std::vector<float>& y, const std::vector<float>& x, const std::vector<float>& wNK,
                const std::vector<float>& b, long M, long N, long K) {
  double worst = 0, scale = 0;
  for (long r = 0; r < M; r += 7) {
    for (long n = 0; n < N; ++n) {
      double s = b[n];
      for (long k = 0; k < K; ++k) s += static_cast<double>(x[r * K + k]) * wNK[n * K + k];
      s = s > 0 ? s : 0;
      worst = std::max(worst, std::fabs(s - y[r * N + n]));
      scale = std::max(scale, std::fabs(s));
    }
  }
  return worst / scale;
}

}  // namespace

int main() {
  ProbeContext ctx;
  for (auto k : {cagr_wgmma_x3_v4_1, cagr_wgmma_x3_v4_2, cagr_wgmma_x3_v1_1, cagr_wgmma_x3_v1_2}) {
    CK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, kShared));
  }
  int sms = 0;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  struct Shape { long M, N, K; } shapes[] = {{4096, 256, 512}, {4096, 512, 367}, {4096, 512, 256}, {4096, 400, 400},
                                             {4096, 64, 256}, {256, 256, 512}};
  for (const Shape& s : shapes) {
    float *x, *w, *b, *y, *wk;
    std::vector<float> hx = randomOn(s.M * s.K, &x), hw = randomOn(s.N * s.K, &w), hb = randomOn(s.N, &b);
    CK(cudaMalloc(&y, s.M * s.N * 4));
    // cuBLASLt reads W as [K][N] (the backend's flipped f32 weight); the tile [N][K], K padded to 4.
    std::vector<float> wkn(s.K * s.N);
    for (long n = 0; n < s.N; ++n)
      for (long k = 0; k < s.K; ++k) wkn[k * s.N + n] = hw[n * s.K + k];
    CK(cudaMemcpy(w, wkn.data(), s.K * s.N * 4, cudaMemcpyHostToDevice));
    const long pitch = (s.K + 3) / 4 * 4;
    CK(cudaMalloc(&wk, s.N * pitch * 4));
    {
      long long ld = s.N;
      int kmajor = 0, n = static_cast<int>(s.N), k = static_cast<int>(s.K), kp = static_cast<int>(pitch);
      cagr_wgmma_kmajor<<<(s.N * pitch + 255) / 256, 256, 0, ctx.s>>>(w, ld, kmajor, n, k, kp, wk);
    }
    BiasReluGemm lib(s.M, s.N, s.K, b);
    cublasLtMatmulHeuristicResult_t pick = firstPick(ctx.lt, lib, ctx.workspaceBytes);
    const float one = 1, zero = 0;
    auto sgemm = [&] {
      CK(cublasLtMatmul(ctx.lt, lib.desc, &one, w, lib.a, x, lib.b, &zero, y, lib.c, y, lib.c, &pick.algo, ctx.ws,
                        ctx.workspaceBytes, ctx.s));
    };
    const dim3 grid(static_cast<unsigned>((s.N + 63) / 64), static_cast<unsigned>((s.M + 127) / 128));
    const bool oneWave = static_cast<long>(grid.x) * grid.y <= sms, vec = s.K % 4 == 0;
    auto kernel = vec ? (oneWave ? cagr_wgmma_x3_v4_1 : cagr_wgmma_x3_v4_2)
                      : (oneWave ? cagr_wgmma_x3_v1_1 : cagr_wgmma_x3_v1_2);
    auto tile = [&] {
      kernel<<<grid, 256, kShared, ctx.s>>>(x, s.K, wk, pitch, b, y, s.N, s.M, static_cast<int>(s.N),
                                            static_cast<int>(s.K), 1);
    };
    std::vector<float> out(s.M * s.N);
    double err[2];
    for (int which = 0; which < 2; ++which) {
      CK(cudaMemset(y, 0xFF, s.M * s.N * 4));
      if (which == 0) sgemm(); else tile();
      CK(cudaStreamSynchronize(ctx.s));
      CK(cudaGetLastError());
      CK(cudaMemcpy(out.data(), y, s.M * s.N * 4, cudaMemcpyDeviceToHost));
      err[which] = relError(out, hx, hw, hb, s.M, s.N, s.K);
    }
    std::vector<float> tl = graphTimesUs(ctx.s, sgemm), tt = graphTimesUs(ctx.s, tile);
    const double flop = 2.0 * s.M * s.N * s.K;
    printf("%ldx%ldx%ld: cuBLASLt SGEMM %.1f us (%.1f TFLOP/s, error %.1e) | wgmma 3xTF32 tile (%s, %d block%s/SM) "
           "%.1f us (%.1f TFLOP/s, error %.1e)\n",
           s.M, s.N, s.K, tl[tl.size() / 2], flop / tl[tl.size() / 2] * 1e-6, err[0], vec ? "16-byte X" : "float X",
           oneWave ? 1 : 2, oneWave ? "" : "s", tt[tt.size() / 2], flop / tt[tt.size() / 2] * 1e-6, err[1]);
    cudaFree(x); cudaFree(w); cudaFree(b); cudaFree(y); cudaFree(wk);
  }
  return 0;
}
