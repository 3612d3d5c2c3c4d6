// Probe (bench/cuda/FINDINGS.md): a register-blocked FFMA SGEMM (C = relu(A B + bias), A [M,K] row-major,
// B [K,N] row-major, fp32 IEEE, the sum over k in order) against cuBLASLt's first heuristic pick on
// the zoo's fp32 layers, each timed as 20 back-to-back calls in a CUDA graph (median of 15 replays).
// nvcc -O3 -arch=sm_90a -std=c++20 sgemm_ffma.cu -o sgemm_ffma -lcublasLt
#include <cmath>

#include "probe_util.cuh"

// Four floats of shared memory (16-byte aligned) into registers.
__device__ __forceinline__ void load4(const float* from, float* to) {
  const float4 v = *reinterpret_cast<const float4*>(from);
  to[0] = v.x;
  to[1] = v.y;
  to[2] = v.z;
  to[3] = v.w;
}

// 256 threads; LN = BN / TN threads along n, LM = 256 / LN along m. A thread owns rows
// ty*4 + q*4*LM + {0..3} (q < TM/4) and columns tx*4 + p*4*LN + {0..3} (p < TN/4), so each
// fragment is float4 loads from shared memory. BK-deep stages, two shared buffers, the next
// stage's global loads held in registers while the current one is multiplied.
template <int BM, int BN, int BK, int TM, int TN, int MINB>
__global__ void __launch_bounds__(256, MINB)
    sgemm(const float* __restrict__ A, const float* __restrict__ B, const float* __restrict__ bias,
          float* __restrict__ C, int M, int N, int K) {
  constexpr int LN = BN / TN, LM = 256 / LN;
  static_assert(LM * TM == BM, "tile");
  constexpr int RA = BM * BK / 256, RB = BK * BN / 256;
  __shared__ __align__(16) float As[2][BK][BM + 4];
  __shared__ __align__(16) float Bs[2][BK][BN + 4];
  const int tid = threadIdx.x, tx = tid % LN, ty = tid / LN;
  const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
  float ra[RA], rb[RB];
  auto gload = [&](int k0) {
#pragma unroll
    for (int r = 0; r < RA; ++r) {
      const int e = tid + r * 256, kk = e % BK, i = e / BK, m = m0 + i, k = k0 + kk;
      ra[r] = (m < M && k < K) ? __ldg(A + (long long)m * K + k) : 0.f;
    }
#pragma unroll
    for (int r = 0; r < RB; ++r) {
      const int e = tid + r * 256, j = e % BN, kk = e / BN, n = n0 + j, k = k0 + kk;
      rb[r] = (n < N && k < K) ? __ldg(B + (long long)k * N + n) : 0.f;
    }
  };
  auto sstore = [&](int buf) {
#pragma unroll
    for (int r = 0; r < RA; ++r) {
      const int e = tid + r * 256;
      As[buf][e % BK][e / BK] = ra[r];
    }
#pragma unroll
    for (int r = 0; r < RB; ++r) {
      const int e = tid + r * 256;
      Bs[buf][e / BN][e % BN] = rb[r];
    }
  };
  float acc[TM][TN] = {};
  gload(0);
  sstore(0);
  __syncthreads();
  int cur = 0;
  for (int k0 = 0; k0 < K; k0 += BK) {
    const bool more = k0 + BK < K;
    if (more) gload(k0 + BK);
#pragma unroll
    for (int kk = 0; kk < BK; ++kk) {
      float a[TM], b[TN];
#pragma unroll
      for (int q = 0; q < TM / 4; ++q) {
        load4(&As[cur][kk][ty * 4 + q * 4 * LM], a + 4 * q);
      }
#pragma unroll
      for (int p = 0; p < TN / 4; ++p) {
        load4(&Bs[cur][kk][tx * 4 + p * 4 * LN], b + 4 * p);
      }
#pragma unroll
      for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
    }
    if (more) sstore(cur ^ 1);
    __syncthreads();
    cur ^= 1;
  }
#pragma unroll
  for (int i = 0; i < TM; ++i) {
    const int m = m0 + ty * 4 + (i / 4) * 4 * LM + i % 4;
    if (m >= M) continue;
#pragma unroll
    for (int j = 0; j < TN; ++j) {
      const int n = n0 + tx * 4 + (j / 4) * 4 * LN + j % 4;
      if (n < N) C[(long long)m * N + n] = fmaxf(acc[i][j] + bias[n], 0.f);
    }
  }
}

// Largest |Y - fp64 reference| over sampled rows, and the largest |reference| there.
void sampledError(const std::vector<float>& out, const std::vector<float>& hx, const std::vector<float>& hw,
                  const std::vector<float>& hb, int M, int N, int K, double* err, double* scale) {
  *err = *scale = 0;
  for (int m = 0; m < M; m += std::max(1, M / 64))
    for (int n = 0; n < N; ++n) {
      double acc = hb[n];
      for (int k = 0; k < K; ++k) acc += (double)hx[(size_t)m * K + k] * hw[(size_t)k * N + n];
      acc = std::max(acc, 0.0);
      *scale = std::max(*scale, std::fabs(acc));
      *err = std::max(*err, std::fabs(acc - out[(size_t)m * N + n]));
    }
}

int main() {
  const auto [lt, s, ws, WSB] = ProbeContext();  // handle, stream, workspace and its bytes
  struct {
    int M, N, K;
  } shapes[] = {{4096, 256, 512}, {4096, 512, 367}, {4096, 512, 256}, {4096, 400, 400},
                {4096, 400, 352}, {4096, 64, 256},  {256, 400, 400},  {256, 256, 512}};
  for (auto sh : shapes) {
    const int M = sh.M, N = sh.N, K = sh.K;
    const double gf = 2.0 * M * N * K;
    float *x, *w, *y, *yr, *bias;
    std::vector<float> hx = randomOn((size_t)M * K, &x), hw = randomOn((size_t)N * K, &w), hb = randomOn(N, &bias);
    CK(cudaMalloc(&y, (size_t)M * N * 4));
    CK(cudaMalloc(&yr, (size_t)M * N * 4));
    BiasReluGemm g(M, N, K, bias);
    const cublasLtMatmulHeuristicResult_t hr[1] = {firstPick(lt, g, WSB)};
    float al = 1, be = 0;
    auto lib = [&] { cublasLtMatmul(lt, g.desc, &al, w, g.a, x, g.b, &be, yr, g.c, yr, g.c, &hr[0].algo, ws, WSB, s); };
    std::vector<float> tls = graphTimesUs(s, lib);
    const float tl = tls[tls.size() / 2];
    std::vector<float> ref((size_t)M * N), out((size_t)M * N);
    CK(cudaMemcpy(ref.data(), yr, ref.size() * 4, cudaMemcpyDeviceToHost));
    double eLt, scale;
    sampledError(ref, hx, hw, hb, M, N, K, &eLt, &scale);
    printf("%dx%dx%d cublasLt %.2f us (%.1f TF) err %.1e |", M, N, K, tl, gf / tl / 1e6, eLt / scale);
    auto mine = [&](auto kern, int bm, int bn, const char* name) {
      dim3 grid((N + bn - 1) / bn, (M + bm - 1) / bm);
      std::vector<float> ts = graphTimesUs(s, [&] { kern<<<grid, 256, 0, s>>>(x, w, bias, y, M, N, K); });
      const float t = ts[ts.size() / 2];
      CK(cudaGetLastError());
      CK(cudaMemcpy(out.data(), y, out.size() * 4, cudaMemcpyDeviceToHost));
      double e, sc;
      sampledError(out, hx, hw, hb, M, N, K, &e, &sc);
      printf(" %s %.2f us (%.1f TF) err %.1e |", name, t, gf / t / 1e6, e / scale);
    };
    mine(sgemm<128, 64, 16, 8, 4, 2>, 128, 64, "128x64k16");
    mine(sgemm<128, 64, 8, 8, 4, 2>, 128, 64, "128x64k8");
    mine(sgemm<128, 128, 8, 8, 8, 1>, 128, 128, "128x128k8");
    mine(sgemm<64, 64, 16, 4, 4, 3>, 64, 64, "64x64k16");
    mine(sgemm<128, 32, 16, 4, 4, 3>, 128, 32, "128x32k16");
    printf("\n");
    fflush(stdout);
    for (float* q : {x, w, y, yr, bias}) cudaFree(q);
  }
}
