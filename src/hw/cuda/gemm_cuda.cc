// cuBLAS / cuBLASLt GEMM runners, the shape lists and the correctness check.
#include "hw/cuda/gemm_cuda.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "cost/kernel_class.h"
#include "hw/cuda/kernels.h"

namespace cagr::cuda {

const char* gemmKindName(GemmKind k) {
  switch (k) {
    case GemmKind::kSgemm:
      return "cublas.sgemm";
    case GemmKind::kSgemmTf32:
      return "cublas.sgemm_tf32";
    case GemmKind::kLtBiasRelu:
      return "cublaslt.matmul";
    case GemmKind::kBf16:
      return "cublas.gemm_bf16";
  }
  return "?";
}

std::vector<GemmKind> allGemmKinds() {
  return {GemmKind::kSgemm, GemmKind::kSgemmTf32, GemmKind::kLtBiasRelu, GemmKind::kBf16};
}

const char* gemmKindDtype(GemmKind k) {
  if (k == GemmKind::kSgemmTf32) return "tf32";
  if (k == GemmKind::kBf16) return "bf16";
  return "fp32";
}

double gemmElementBytes(GemmKind k) {
  return k == GemmKind::kBf16 ? 2.0 : 4.0;
}

std::string GemmDims::label() const {
  return "m" + std::to_string(m) + " n" + std::to_string(n) + " k" + std::to_string(k);
}

double GemmDims::bytes(double elementBytes) const {
  const double mm = static_cast<double>(m), nn = static_cast<double>(n), kk = static_cast<double>(k);
  return elementBytes * (mm * kk + kk * nn + mm * nn);
}

std::string gemmClassOf(const GemmDims& d) {
  return gemmShapeClass(static_cast<double>(d.m), static_cast<double>(d.n), static_cast<double>(d.k));
}

std::vector<GemmDims> profileGemmShapes(bool quick) {
  // {m, n, k}. The CPU profiler's list (src/hw/microbench_gemm.cc, written
  // there as {m, k, n}), then 4096^3 and batch-4096 MLP layers (DLRM-style
  // 13 -> 512 bottom layer, 512 -> 256, 256 -> 1 top layer).
  if (quick) {
    return {{16, 16, 16},   {32, 32, 64},  {256, 128, 64},     {256, 512, 512}, {1000, 77, 333}, {1024, 1024, 1024},
            {4096, 1, 512}, {1, 512, 512}, {4096, 4096, 4096}, {4096, 512, 13}, {4096, 256, 512}};
  }
  return {
      {16, 16, 16},       {32, 32, 64},       {64, 64, 32},    {8, 8, 128},      {24, 56, 40},     {256, 128, 64},
      {128, 256, 256},    {512, 128, 128},    {256, 256, 256}, {63, 129, 1000},  {100, 300, 200},  {256, 512, 512},
      {1024, 256, 512},   {512, 512, 1024},   {1000, 77, 333}, {777, 333, 555},  {2047, 513, 129}, {4096, 1024, 1024},
      {1024, 2048, 1024}, {1500, 999, 1000},  {4096, 512, 1},  {4096, 1, 512},   {1, 512, 512},    {2, 1024, 1024},
      {4096, 4, 256},     {4096, 4096, 4096}, {4096, 512, 13}, {4096, 256, 512}, {4096, 1, 256},
  };
}

std::vector<GemmDims> misalignedGemmShapes(bool quick) {
  // {m, n, k}: odd N or K (misaligned for tf32 and bf16) and N or K = 4 mod 8
  // (misaligned for bf16 only), 6.6e4 to 1.4e11 FLOPs.
  if (quick) return {{128, 127, 128}, {1024, 1020, 512}, {4096, 1024, 1019}};
  return {{32, 33, 32},       {64, 64, 61},       {128, 127, 128},    {256, 250, 128},    {256, 256, 255},
          {512, 509, 512},    {4096, 129, 13},    {1024, 1020, 512},  {1024, 1023, 1024}, {4096, 500, 300},
          {2048, 2047, 1024}, {4096, 1024, 1019}, {4096, 4092, 4096}, {4096, 4095, 4096}};
}

bool tensorCoreKind(GemmKind k) {
  return std::string(gemmKindDtype(k)) != "fp32";
}

bool misalignedFor(GemmKind k, const GemmDims& d, int alignElements) {
  const int align = matrixUnitAlignment(alignElements, gemmKindDtype(k));
  return misalignedGemm(align, static_cast<double>(d.n), static_cast<double>(d.k));
}

std::vector<GemmDims> allProfileGemmShapes(bool quick) {
  std::vector<GemmDims> all = profileGemmShapes(quick);
  for (const GemmDims& d : misalignedGemmShapes(quick)) all.push_back(d);
  return all;
}

std::vector<GemmDims> validationGemmShapes() {
  // The last four: larger misaligned (N or K odd) and aligned tensor-core
  // shapes, so that the tensor-core kernels' rank is not decided by the
  // seven calls that sit at the ~7-12 us launch floor.
  return {{3000, 700, 300},   {4096, 367, 512},   {4096, 512, 400},  {256, 200, 484},
          {48, 40, 56},       {20, 100, 30},      {4096, 3, 256},    {1, 1024, 512},
          {2048, 2048, 2048}, {8192, 1024, 479},  {512, 64, 2000},   {4096, 128, 1024},
          {8192, 511, 512},   {1024, 4093, 1024}, {3072, 1536, 765}, {6144, 1000, 1000}};
}

// ------------------------------------------------------------------ bench

struct GemmBench::LtPlan {
  const CublasApi* api = nullptr;
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t la = nullptr, lb = nullptr, lc = nullptr;
  cublasLtMatmulHeuristicResult_t heuristic{};
  ~LtPlan() {
    if (api == nullptr) return;
    if (desc != nullptr) api->ltDescDestroy(desc);
    for (cublasLtMatrixLayout_t l : {la, lb, lc})
      if (l != nullptr) api->ltLayoutDestroy(l);
  }
};

GemmBench::~GemmBench() {
  if (api_ == nullptr) return;
  for (cublasHandle_t h : {fp32_, tf32_, bf16_})
    if (h != nullptr) api_->destroy(h);
  if (lt_ != nullptr) api_->ltDestroy(lt_);
}

StatusOr<std::unique_ptr<GemmBench>> GemmBench::create(const std::vector<GemmDims>& shapes, cudaStream_t stream) {
  std::unique_ptr<GemmBench> g(new GemmBench());
  CAGR_ASSIGN_OR_RETURN(g->api_, loadCublas());
  g->stream_ = stream;
  const CublasApi& api = *g->api_;
  CAGR_RETURN_IF_ERROR(cublasStatus(api.create(&g->fp32_), "cublasCreate"));
  CAGR_RETURN_IF_ERROR(cublasStatus(api.create(&g->tf32_), "cublasCreate"));
  CAGR_RETURN_IF_ERROR(cublasStatus(api.create(&g->bf16_), "cublasCreate"));
  CAGR_RETURN_IF_ERROR(cublasStatus(api.ltCreate(&g->lt_), "cublasLtCreate"));
  CAGR_RETURN_IF_ERROR(cublasStatus(api.setMathMode(g->fp32_, CUBLAS_DEFAULT_MATH), "cublasSetMathMode fp32"));
  CAGR_RETURN_IF_ERROR(cublasStatus(api.setMathMode(g->tf32_, CUBLAS_TF32_TENSOR_OP_MATH), "cublasSetMathMode tf32"));
  CAGR_RETURN_IF_ERROR(cublasStatus(api.setMathMode(g->bf16_, CUBLAS_DEFAULT_MATH), "cublasSetMathMode bf16"));
  for (cublasHandle_t h : {g->fp32_, g->tf32_, g->bf16_})
    CAGR_RETURN_IF_ERROR(cublasStatus(api.setStream(h, stream), "cublasSetStream"));

  int64_t maxA = 1, maxB = 1, maxC = 1, maxN = 1;
  for (const GemmDims& d : shapes) {
    maxA = std::max(maxA, d.m * d.k);
    maxB = std::max(maxB, d.k * d.n);
    maxC = std::max(maxC, d.m * d.n);
    maxN = std::max(maxN, d.n);
  }
  CAGR_ASSIGN_OR_RETURN(g->a_, DeviceBuffer::alloc(4 * maxA, "GEMM A"));
  CAGR_ASSIGN_OR_RETURN(g->b_, DeviceBuffer::alloc(4 * maxB, "GEMM B"));
  CAGR_ASSIGN_OR_RETURN(g->c_, DeviceBuffer::alloc(4 * maxC, "GEMM C"));
  CAGR_ASSIGN_OR_RETURN(g->bias_, DeviceBuffer::alloc(4 * maxN, "GEMM bias"));
  CAGR_ASSIGN_OR_RETURN(g->abf_, DeviceBuffer::alloc(2 * maxA, "GEMM A bf16"));
  CAGR_ASSIGN_OR_RETURN(g->bbf_, DeviceBuffer::alloc(2 * maxB, "GEMM B bf16"));
  CAGR_ASSIGN_OR_RETURN(g->cbf_, DeviceBuffer::alloc(2 * maxC, "GEMM C bf16"));
  CAGR_ASSIGN_OR_RETURN(g->workspace_, DeviceBuffer::alloc(size_t{32} << 20, "cuBLASLt workspace"));
  CAGR_RETURN_IF_ERROR(cudaStatus(launchFillUniform(g->a_.as<float>(), maxA, 11, -1.f, 1.f, stream), "fill A"));
  CAGR_RETURN_IF_ERROR(cudaStatus(launchFillUniform(g->b_.as<float>(), maxB, 12, -1.f, 1.f, stream), "fill B"));
  CAGR_RETURN_IF_ERROR(cudaStatus(launchFillUniform(g->bias_.as<float>(), maxN, 13, -1.f, 1.f, stream), "fill bias"));
  CAGR_RETURN_IF_ERROR(cudaStatus(launchFillUniform(g->c_.as<float>(), maxC, 14, -1.f, 1.f, stream), "fill C"));
  CAGR_RETURN_IF_ERROR(cudaStatus(launchToBf16(g->a_.as<float>(), g->abf_.get(), maxA, stream), "A to bf16"));
  CAGR_RETURN_IF_ERROR(cudaStatus(launchToBf16(g->b_.as<float>(), g->bbf_.get(), maxB, stream), "B to bf16"));
  CAGR_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream));
  return g;
}

// Row-major C[M,N] = A[M,K] B[K,N] is column-major C^T[N,M] = B^T[N,K] A^T[K,M]:
// cuBLAS sees (m, n, k) = (N, M, K), first operand B (ld N), second A (ld K).
Status GemmBench::makeLtPlan(const GemmDims& d, LtPlan* p) {
  const CublasApi& api = *api_;
  p->api = api_;
  CAGR_RETURN_IF_ERROR(cublasStatus(api.ltDescCreate(&p->desc, CUBLAS_COMPUTE_32F, CUDA_R_32F), "LtMatmulDescCreate"));
  const cublasLtEpilogue_t epi = CUBLASLT_EPILOGUE_RELU_BIAS;
  const void* bias = bias_.get();
  CAGR_RETURN_IF_ERROR(
      cublasStatus(api.ltDescSetAttribute(p->desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof(epi)), "set epilogue"));
  CAGR_RETURN_IF_ERROR(cublasStatus(
      api.ltDescSetAttribute(p->desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof(bias)), "set bias"));
  CAGR_RETURN_IF_ERROR(cublasStatus(api.ltLayoutCreate(&p->la, CUDA_R_32F, d.n, d.k, d.n), "layout B^T"));
  CAGR_RETURN_IF_ERROR(cublasStatus(api.ltLayoutCreate(&p->lb, CUDA_R_32F, d.k, d.m, d.k), "layout A^T"));
  CAGR_RETURN_IF_ERROR(cublasStatus(api.ltLayoutCreate(&p->lc, CUDA_R_32F, d.n, d.m, d.n), "layout C^T"));
  cublasLtMatmulPreference_t pref = nullptr;
  CAGR_RETURN_IF_ERROR(cublasStatus(api.ltPrefCreate(&pref), "LtMatmulPreferenceCreate"));
  const size_t ws = workspace_.bytes();
  cublasStatus_t st = api.ltPrefSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof(ws));
  int found = 0;
  if (st == CUBLAS_STATUS_SUCCESS) {
    st = api.ltAlgoGetHeuristic(lt_, p->desc, p->la, p->lb, p->lc, p->lc, pref, 1, &p->heuristic, &found);
  }
  api.ltPrefDestroy(pref);
  CAGR_RETURN_IF_ERROR(cublasStatus(st, "cublasLtMatmulAlgoGetHeuristic " + d.label()));
  if (found < 1) return unsupported("cuBLASLt has no algorithm for bias+ReLU fp32 " + d.label());
  return Status::ok();
}

Status GemmBench::enqueue(GemmKind k, const GemmDims& d, const LtPlan* lt) {
  const CublasApi& api = *api_;
  const float one = 1.0f, zero = 0.0f;
  const int m = static_cast<int>(d.m), n = static_cast<int>(d.n), kk = static_cast<int>(d.k);
  cublasStatus_t st = CUBLAS_STATUS_SUCCESS;
  switch (k) {
    case GemmKind::kSgemm:
    case GemmKind::kSgemmTf32:
      st = api.sgemm(k == GemmKind::kSgemm ? fp32_ : tf32_, CUBLAS_OP_N, CUBLAS_OP_N, n, m, kk, &one, b_.as<float>(), n,
                     a_.as<float>(), kk, &zero, c_.as<float>(), n);
      break;
    case GemmKind::kBf16:
      st = api.gemmEx(bf16_, CUBLAS_OP_N, CUBLAS_OP_N, n, m, kk, &one, bbf_.get(), CUDA_R_16BF, n, abf_.get(),
                      CUDA_R_16BF, kk, &zero, cbf_.get(), CUDA_R_16BF, n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
      break;
    case GemmKind::kLtBiasRelu:
      st = api.ltMatmul(lt_, lt->desc, &one, b_.get(), lt->la, a_.get(), lt->lb, &zero, c_.get(), lt->lc, c_.get(),
                        lt->lc, &lt->heuristic.algo, workspace_.get(), workspace_.bytes(), stream_);
      break;
  }
  return cublasStatus(st, std::string(gemmKindName(k)) + " " + d.label());
}

StatusOr<cudaGraphExec_t> GemmBench::capture(GemmKind k, const GemmDims& d, const LtPlan* lt, int calls) {
  cudaGraph_t graph = nullptr;
  CAGR_CUDA_RETURN_IF_ERROR(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal));
  Status st = Status::ok();
  for (int i = 0; i < calls && st.isOk(); ++i) st = enqueue(k, d, lt);
  const cudaError_t capErr = cudaStreamEndCapture(stream_, &graph);
  if (!st.isOk()) {
    if (graph != nullptr) cudaGraphDestroy(graph);
    return st;
  }
  CAGR_RETURN_IF_ERROR(cudaStatus(capErr, "cudaStreamEndCapture"));
  cudaGraphExec_t exec = nullptr;
  const cudaError_t instErr = cudaGraphInstantiate(&exec, graph, 0);
  cudaGraphDestroy(graph);
  CAGR_RETURN_IF_ERROR(cudaStatus(instErr, "cudaGraphInstantiate"));
  return exec;
}

StatusOr<hw::Timing> GemmBench::time(GemmKind k, const GemmDims& d, const GpuTimingPlan& plan) {
  LtPlan lt;
  if (k == GemmKind::kLtBiasRelu) CAGR_RETURN_IF_ERROR(makeLtPlan(d, &lt));
  // Outside the capture first: heuristics, lazy workspaces, module loads;
  // then one call's time sizes the graph (~300 us of calls, 1 to 32).
  for (int i = 0; i < 2; ++i) CAGR_RETURN_IF_ERROR(enqueue(k, d, &lt));
  CAGR_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream_));
  const double t0 = hw::nowSeconds();
  CAGR_RETURN_IF_ERROR(enqueue(k, d, &lt));
  CAGR_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream_));
  const double one = hw::nowSeconds() - t0;  // an upper bound (host round trip included)
  const int calls = std::clamp(static_cast<int>(300e-6 / std::max(1e-7, one)), 1, 32);
  StatusOr<cudaGraphExec_t> exec = capture(k, d, &lt, calls);
  if (!exec.isOk()) {
    cudaGetLastError();  // a refused capture leaves a sticky-free error behind
    std::fprintf(stderr, "cagr-profile-cuda: %s %s: no CUDA graph (%s); timed as back-to-back launches\n",
                 gemmKindName(k), d.label().c_str(), exec.status().message().c_str());
    return timeGpu([&] { return enqueue(k, d, &lt); }, stream_, plan);
  }
  StatusOr<hw::Timing> t =
      timeGpu([&] { return cudaStatus(cudaGraphLaunch(*exec, stream_), "cudaGraphLaunch"); }, stream_, plan);
  cudaGraphExecDestroy(*exec);
  if (!t.isOk()) return t.status();
  hw::Timing per = *t;
  for (double* v : {&per.median, &per.p10, &per.p90}) *v /= calls;
  return per;
}

Status GemmBench::warmUp(const std::vector<GemmDims>& shapes, double seconds) {
  if (shapes.empty()) return Status::ok();
  const GemmDims biggest = *std::max_element(
      shapes.begin(), shapes.end(), [](const GemmDims& a, const GemmDims& b) { return a.flops() < b.flops(); });
  GpuTimingPlan plan;
  plan.targetS = seconds;
  plan.minSamples = 1;
  plan.maxSamples = 3;
  StatusOr<hw::Timing> t = time(GemmKind::kSgemm, biggest, plan);
  return t.isOk() ? Status::ok() : t.status();
}

namespace {

float bf16ToFloat(uint16_t h) {
  const uint32_t bits = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &bits, sizeof(f));
  return f;
}

}  // namespace

Status GemmBench::checkAll() {
  const GemmDims d{67, 45, 33};
  std::vector<float> a(d.m * d.k), b(d.k * d.n), bias(d.n), c(d.m * d.n);
  std::vector<uint16_t> cbf(d.m * d.n);
  CAGR_CUDA_RETURN_IF_ERROR(cudaDeviceSynchronize());
  CAGR_CUDA_RETURN_IF_ERROR(cudaMemcpy(a.data(), a_.get(), 4 * a.size(), cudaMemcpyDeviceToHost));
  CAGR_CUDA_RETURN_IF_ERROR(cudaDeviceSynchronize());
  CAGR_CUDA_RETURN_IF_ERROR(cudaMemcpy(b.data(), b_.get(), 4 * b.size(), cudaMemcpyDeviceToHost));
  CAGR_CUDA_RETURN_IF_ERROR(cudaDeviceSynchronize());
  CAGR_CUDA_RETURN_IF_ERROR(cudaMemcpy(bias.data(), bias_.get(), 4 * bias.size(), cudaMemcpyDeviceToHost));
  for (GemmKind k : allGemmKinds()) {
    LtPlan lt;
    if (k == GemmKind::kLtBiasRelu) CAGR_RETURN_IF_ERROR(makeLtPlan(d, &lt));
    CAGR_RETURN_IF_ERROR(enqueue(k, d, &lt));
    CAGR_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream_));
    if (k == GemmKind::kBf16) {
      CAGR_CUDA_RETURN_IF_ERROR(cudaDeviceSynchronize());
      CAGR_CUDA_RETURN_IF_ERROR(cudaMemcpy(cbf.data(), cbf_.get(), 2 * cbf.size(), cudaMemcpyDeviceToHost));
      for (size_t i = 0; i < c.size(); ++i) c[i] = bf16ToFloat(cbf[i]);
    } else {
      CAGR_CUDA_RETURN_IF_ERROR(cudaDeviceSynchronize());
      CAGR_CUDA_RETURN_IF_ERROR(cudaMemcpy(c.data(), c_.get(), 4 * c.size(), cudaMemcpyDeviceToHost));
    }
    double num = 0, den = 0;
    for (int64_t i = 0; i < d.m; ++i) {
      for (int64_t j = 0; j < d.n; ++j) {
        double ref = 0;
        for (int64_t p = 0; p < d.k; ++p) ref += static_cast<double>(a[i * d.k + p]) * b[p * d.n + j];
        if (k == GemmKind::kLtBiasRelu) ref = std::max(ref + bias[j], 0.0);
        const double got = c[i * d.n + j];
        if (!std::isfinite(got)) return internalError(std::string(gemmKindName(k)) + " produced a non-finite value");
        num += (got - ref) * (got - ref);
        den += ref * ref;
      }
    }
    const double rel = std::sqrt(num / std::max(den, 1e-30));
    const double tol = k == GemmKind::kBf16 ? 3e-2 : (k == GemmKind::kSgemmTf32 ? 5e-3 : 1e-5);
    if (!(rel <= tol)) {
      return internalError(fmt("%s %s: relative error %.3g against the float64 reference exceeds %.0e", gemmKindName(k),
                               d.label().c_str(), rel, tol));
    }
  }
  return Status::ok();
}

std::vector<std::pair<std::string, std::string>> GemmBench::versions() const {
  int v = 0;
  api_->getVersion(fp32_, &v);
  const size_t lv = api_->ltGetVersion();
  return {{"cublas", cublasVersionString(v) + " (" + api_->cublasPath + ")"},
          {"cublaslt", cublasVersionString(static_cast<int>(lv)) + " (" + api_->cublasLtPath + ")"}};
}

}  // namespace cagr::cuda
