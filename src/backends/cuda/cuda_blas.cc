// Library GEMM steps on the GPU (see cuda_blas.h).
#include "backends/cuda/cuda_blas.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "backends/cuda/cuda_device.h"

namespace cagr::cuda {
namespace {

Status checkBlas(cublasStatus_t s, const std::string& what) {
  if (s == CUBLAS_STATUS_SUCCESS) return Status::ok();
  return internalError(what + ": " + cublasGetStatusName(s) + ": " + cublasGetStatusString(s));
}

cublasLtEpilogue_t epilogueOf(const LibraryGemm& p) {
  const bool bias = p.bias != kNoValue;
  switch (p.act) {
    case Activation::kRelu:
      return bias ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_RELU;
    case Activation::kGelu:
      return bias ? CUBLASLT_EPILOGUE_GELU_BIAS : CUBLASLT_EPILOGUE_GELU;
    case Activation::kNone:
      break;
  }
  return bias ? CUBLASLT_EPILOGUE_BIAS : CUBLASLT_EPILOGUE_DEFAULT;
}

template <typename T>
Status setDesc(cublasLtMatmulDesc_t d, cublasLtMatmulDescAttributes_t attr, const T& v, const std::string& where) {
  return checkBlas(cublasLtMatmulDescSetAttribute(d, attr, &v, sizeof(v)), where + ": cublasLtMatmulDescSetAttribute");
}

// The device element type of a LibraryGemm's operands or output.
cudaDataType_t dataType(Precision p) {
  return p == Precision::kBF16 ? CUDA_R_16BF : p == Precision::kF16 ? CUDA_R_16F : CUDA_R_32F;
}

// A column-major rows x cols matrix of `type` with leading dimension ld, batched.
Status makeLayout(cublasLtMatrixLayout_t* l, cudaDataType_t type, int64_t rows, int64_t cols, int64_t ld,
                  int64_t batch, int64_t stride, const std::string& where) {
  CAGR_RETURN_IF_ERROR(
      checkBlas(cublasLtMatrixLayoutCreate(l, type, static_cast<uint64_t>(rows), static_cast<uint64_t>(cols), ld),
                where + ": cublasLtMatrixLayoutCreate"));
  if (batch <= 1) return Status::ok();
  auto count = static_cast<int32_t>(batch);
  CAGR_RETURN_IF_ERROR(checkBlas(
      cublasLtMatrixLayoutSetAttribute(*l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof(count)), where));
  return checkBlas(
      cublasLtMatrixLayoutSetAttribute(*l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof(stride)),
      where);
}

// What the heuristic's answer depends on (with its workspace limit, appended by the caller).
std::string algoKey(const LibraryGemm& p, const ColumnMajorGemm& c) {
  std::string k;
  for (int64_t x :
       {c.m, c.n, c.k, int64_t{c.transA}, int64_t{c.transB}, c.lda, c.ldb, c.ldd, c.batch, c.strideA, c.strideB,
        c.strideD, int64_t{static_cast<int>(p.math)}, int64_t{epilogueOf(p)}, int64_t{p.addend != kNoValue},
        int64_t{static_cast<int>(p.operands)}, int64_t{static_cast<int>(p.output)}}) {
    k += std::to_string(x) + ",";
  }
  return k;
}

// Whether a library GEMM in `math` is tuned: f32 (IEEE) math by default;
// CAGR_GEMM_TUNE=all also tensor-core math, =0 none. Measured on the H200
// (2026-12-02, side by side): tuning DLRM's tf32 / bf16 4096 plans made them
// 16 % slower (0.067 against 0.058 ms: the fastest of three timed calls
// was not the fastest inside the graph), DeepFM's 1.5 % faster.
bool gemmTuning(cublasComputeType_t compute) {
  const char* env = std::getenv("CAGR_GEMM_TUNE");
  const std::string v = env == nullptr ? "" : env;
  return v != "0" && (compute == CUBLAS_COMPUTE_32F || v == "all");
}

// Milliseconds per call of `call` (enqueued on `stream`): a warm-up, then
// three calls between two events.
StatusOr<float> msPerCall(cudaStream_t stream, const std::function<Status()>& call, const std::string& where) {
  CAGR_ASSIGN_OR_RETURN(EventPtr begin, newEvent(true));
  CAGR_ASSIGN_OR_RETURN(EventPtr end, newEvent(true));
  CAGR_RETURN_IF_ERROR(call());
  CAGR_RETURN_IF_ERROR(checkCuda(cudaEventRecord(begin.get(), stream), where + ": cudaEventRecord"));
  for (int r = 0; r < 3; ++r) CAGR_RETURN_IF_ERROR(call());
  CAGR_RETURN_IF_ERROR(checkCuda(cudaEventRecord(end.get(), stream), where + ": cudaEventRecord"));
  CAGR_RETURN_IF_ERROR(checkCuda(cudaEventSynchronize(end.get()), where + ": timing a GEMM"));
  float ms = 0;
  CAGR_RETURN_IF_ERROR(
      checkCuda(cudaEventElapsedTime(&ms, begin.get(), end.get()), where + ": cudaEventElapsedTime"));
  return ms / 3;
}

}  // namespace

StatusOr<int> fastestAlgo(const std::vector<ChosenAlgo>& candidates, cudaStream_t stream,
                          const std::function<cublasStatus_t(const cublasLtMatmulAlgo_t&)>& call,
                          const std::string& where, float margin) {
  float best = -1, first = -1;
  int chosen = -1;
  for (size_t i = 0; i < candidates.size(); ++i) {
    bool ok = true;  // an algorithm that refuses (its warm-up call first) is skipped
    CAGR_ASSIGN_OR_RETURN(float ms, msPerCall(
                                        stream,
                                        [&] {
                                          ok = ok && call(candidates[i].algo) == CUBLAS_STATUS_SUCCESS;
                                          return Status::ok();
                                        },
                                        where + ": timing cuBLASLt's algorithms"));
    if (ok && i == 0) first = ms;
    if (ok && (best < 0 || ms < best)) {
      best = ms;
      chosen = static_cast<int>(i);
    }
  }
  return chosen > 0 && first >= 0 && best > first * (1 - margin) ? 0 : chosen;
}

int pickAlgo(const std::vector<AlgoOption>& options, bool small) {
  auto first = std::find_if(options.begin(), options.end(), [](const AlgoOption& o) { return o.usable; });
  if (first == options.end()) return -1;
  if (small && first->workspace > 0) {
    const float tolerance = 1e-3f * std::max(first->waves, 1.0f);
    for (auto o = first + 1; o != options.end(); ++o) {
      if (o->usable && o->workspace == 0 && std::fabs(o->waves - first->waves) <= tolerance) {
        return static_cast<int>(o - options.begin());
      }
    }
  }
  return static_cast<int>(first - options.begin());
}

size_t workspaceForAll(const std::vector<AlgoOption>& options) {
  size_t most = 0;
  for (const AlgoOption& o : options) {
    if (o.usable) most = std::max(most, o.workspace);
  }
  return most;
}

int pickWorkspaceVariant(const std::vector<double>& medianMs, const std::vector<size_t>& bytes, double memoryWeight,
                         double tolerance, double baselineMs, double baselineBytes) {
  if (medianMs.empty() || medianMs.size() != bytes.size()) return -1;
  const size_t fast = static_cast<size_t>(std::min_element(medianMs.begin(), medianMs.end()) - medianMs.begin());
  const bool given = baselineMs > 0 && baselineBytes > 0;
  const double l0 = given ? baselineMs : std::max(medianMs[fast], 1e-12);
  const double m0 = given ? baselineBytes : static_cast<double>(std::max<size_t>(bytes[fast], 1));
  tolerance *= std::max(medianMs[fast], 1e-12) / l0;  // a share of the fastest variant's time: timing noise
  std::vector<double> score;
  for (size_t i = 0; i < medianMs.size(); ++i) {
    score.push_back(medianMs[i] / l0 + memoryWeight * static_cast<double>(bytes[i]) / m0);
  }
  const double best = *std::min_element(score.begin(), score.end());
  int keep = -1;
  for (size_t i = 0; i < score.size(); ++i) {
    if (score[i] <= best + tolerance && (keep < 0 || bytes[i] < bytes[static_cast<size_t>(keep)])) {
      keep = static_cast<int>(i);
    }
  }
  return keep;
}

StatusOr<std::vector<cublasLtMatmulHeuristicResult_t>> heuristicResults(
    cublasLtHandle_t lt, cublasLtMatmulDesc_t desc, cublasLtMatrixLayout_t a, cublasLtMatrixLayout_t b,
    cublasLtMatrixLayout_t c, cublasLtMatrixLayout_t d, size_t limit, int count, const std::string& where) {
  cublasLtMatmulPreference_t pref = nullptr;
  CAGR_RETURN_IF_ERROR(checkBlas(cublasLtMatmulPreferenceCreate(&pref), where + ": cublasLtMatmulPreferenceCreate"));
  uint64_t ws = limit;
  cublasStatus_t st =
      cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof(ws));
  std::vector<cublasLtMatmulHeuristicResult_t> results(static_cast<size_t>(std::max(count, 1)));
  int found = 0;
  if (st == CUBLAS_STATUS_SUCCESS) {
    st = cublasLtMatmulAlgoGetHeuristic(lt, desc, a, b, c, d, pref, static_cast<int>(results.size()), results.data(),
                                        &found);
  }
  cublasLtMatmulPreferenceDestroy(pref);
  CAGR_RETURN_IF_ERROR(checkBlas(st, where + ": cublasLtMatmulAlgoGetHeuristic"));
  results.resize(static_cast<size_t>(std::max(found, 0)));
  std::erase_if(results, [](const cublasLtMatmulHeuristicResult_t& r) { return r.state != CUBLAS_STATUS_SUCCESS; });
  if (results.empty()) return unsupported(where + ": cuBLASLt has no algorithm for this call");
  return results;
}

std::vector<AlgoOption> algoOptions(const std::vector<cublasLtMatmulHeuristicResult_t>& results) {
  std::vector<AlgoOption> out;
  for (const cublasLtMatmulHeuristicResult_t& r : results) {
    out.push_back({r.workspaceSize, r.wavesCount, r.state == CUBLAS_STATUS_SUCCESS});
  }
  return out;
}

cublasComputeType_t computeType(Precision math) {
  switch (math) {
    case Precision::kTF32:
      return CUBLAS_COMPUTE_32F_FAST_TF32;
    case Precision::kBF16:
      return CUBLAS_COMPUTE_32F_FAST_16BF;
    case Precision::kF16:
      return CUBLAS_COMPUTE_32F_FAST_16F;
    default:
      return CUBLAS_COMPUTE_32F;
  }
}

StatusOr<std::unique_ptr<BlasContext>> BlasContext::create() {
  std::unique_ptr<BlasContext> c(new BlasContext());
  CAGR_RETURN_IF_ERROR(checkBlas(cublasLtCreate(&c->lt_), "cublasLtCreate"));
  CAGR_RETURN_IF_ERROR(checkBlas(cublasCreate(&c->blas_), "cublasCreate"));
  return c;
}

BlasContext::~BlasContext() {
  if (blas_ != nullptr) cublasDestroy(blas_);
  if (lt_ != nullptr) cublasLtDestroy(lt_);
}

PreparedGemm::~PreparedGemm() {
  for (cublasLtMatrixLayout_t l : {layoutA_, layoutB_, layoutC_, layoutD_}) {
    if (l != nullptr) cublasLtMatrixLayoutDestroy(l);
  }
  if (desc_ != nullptr) cublasLtMatmulDescDestroy(desc_);
}

StatusOr<std::unique_ptr<PreparedGemm>> PreparedGemm::create(BlasContext& ctx, const LibraryGemm& p,
                                                             const ColumnMajorGemm& c, const std::string& where,
                                                             size_t limit, bool constantB) {
  std::unique_ptr<PreparedGemm> g(new PreparedGemm());
  g->ctx_ = &ctx;
  g->library_ = p.library;
  g->call_ = c;
  // 16-bit operands: plain f32 accumulation (the FAST_* modes take f32 operands).
  g->compute_ = p.operands == Precision::kF32 ? computeType(p.math) : CUBLAS_COMPUTE_32F;
  g->alpha_ = p.alpha;
  g->beta_ = p.addend != kNoValue ? p.beta : 0.0f;
  g->hasBias_ = p.bias != kNoValue;
  g->hasAddend_ = p.addend != kNoValue;
  g->where_ = where;
  if (p.library == GemmLibrary::kCublas) {
    for (int64_t x : {c.m, c.n, c.k, c.lda, c.ldb, c.ldd, c.batch}) {
      if (x > INT_MAX) return unsupported(where + ": a dimension beyond cuBLAS's 32-bit range");
    }
  }
  Status lt = g->prepareLt(ctx, p, c, limit);
  if (p.library == GemmLibrary::kCublasLt) {
    CAGR_RETURN_IF_ERROR(lt);
    const WgmmaMode mode = wgmmaMode();
    if (ctx.wgmma() != nullptr && mode != WgmmaMode::kOff && wgmmaGemmRejection(p, c, constantB).empty()) {
      g->relu_ = p.act == Activation::kRelu;
      auto chosen = ctx.wgmmaChosen().find(g->tunedKey_);
      if (mode == WgmmaMode::kForced) {
        g->useWgmma_ = true;
      } else if (chosen != ctx.wgmmaChosen().end()) {  // timed by an earlier call of this shape
        g->useWgmma_ = chosen->second;
      } else if (g->tuning_) {
        g->wgmmaOffered_ = true;
        g->tuned_ = false;
      }
      // The tile from the start: cuBLASLt never runs this call, so its
      // algorithms are not timed and it gets no workspace (makeBatch).
      if (g->useWgmma_) g->tuned_ = true;
    }
    return g;
  }
  // cuBLAS cannot be asked what it needs: what cuBLASLt chooses for the
  // same product (its descriptors are built only for that), at least
  // kCublasMinWorkspace, or the limit when that is less (down to 16 KiB).
  g->workspaceBytes_ =
      std::max(lt.isOk() ? g->workspaceBytes_ : 0, std::clamp(limit, kCublasLeastWorkspace, kCublasMinWorkspace));
  return g;
}

Status PreparedGemm::bind(const GemmBuffers& buf, void* workspace) {
  a_ = buf.b;  // column-major: the call's A is the product's B
  b_ = buf.a;
  d_ = buf.out;
  c_ = hasAddend_ ? buf.addend : buf.out;
  workspace_ = workspace;
  bias_ = hasBias_ ? buf.bias : nullptr;
  if (hasBias_ && library_ == GemmLibrary::kCublasLt) {
    CAGR_RETURN_IF_ERROR(setDesc(desc_, CUBLASLT_MATMUL_DESC_BIAS_POINTER, buf.bias, where_));
  }
  if (useWgmma_) {  // chosen before this call ran: the weight as the tile reads it, now (outside any capture)
    CAGR_ASSIGN_OR_RETURN(weight_, ctx_->wgmma()->weight(a_, call_.m, call_.k, call_.lda, call_.transA, nullptr));
  }
  return Status::ok();
}

Status PreparedGemm::prepareLt(BlasContext& ctx, const LibraryGemm& p, const ColumnMajorGemm& c, size_t limit) {
  const std::string& w = where_;
  CAGR_RETURN_IF_ERROR(
      checkBlas(cublasLtMatmulDescCreate(&desc_, compute_, CUDA_R_32F), w + ": cublasLtMatmulDescCreate"));
  const cublasOperation_t ta = c.transA ? CUBLAS_OP_T : CUBLAS_OP_N, tb = c.transB ? CUBLAS_OP_T : CUBLAS_OP_N;
  CAGR_RETURN_IF_ERROR(setDesc(desc_, CUBLASLT_MATMUL_DESC_TRANSA, ta, w));
  CAGR_RETURN_IF_ERROR(setDesc(desc_, CUBLASLT_MATMUL_DESC_TRANSB, tb, w));
  CAGR_RETURN_IF_ERROR(setDesc(desc_, CUBLASLT_MATMUL_DESC_EPILOGUE, epilogueOf(p), w));
  const cudaDataType_t in = dataType(p.operands), out = dataType(p.output);
  CAGR_RETURN_IF_ERROR(
      makeLayout(&layoutA_, in, c.transA ? c.k : c.m, c.transA ? c.m : c.k, c.lda, c.batch, c.strideA, w));
  CAGR_RETURN_IF_ERROR(
      makeLayout(&layoutB_, in, c.transB ? c.n : c.k, c.transB ? c.k : c.n, c.ldb, c.batch, c.strideB, w));
  CAGR_RETURN_IF_ERROR(makeLayout(&layoutC_, out, c.m, c.n, c.ldd, c.batch, c.strideD, w));
  CAGR_RETURN_IF_ERROR(makeLayout(&layoutD_, out, c.m, c.n, c.ldd, c.batch, c.strideD, w));
  std::string key = algoKey(p, c) + std::to_string(limit);
  const double flops = 2.0 * static_cast<double>(c.m) * static_cast<double>(c.n) * static_cast<double>(c.k) *
                       static_cast<double>(std::max<int64_t>(c.batch, 1));
  const bool tuning = gemmTuning(compute_) && flops >= kTunedGemmFlops;
  tuning_ = tuning;
  tunedKey_ = key + ",tuned";
  if (auto tuned = ctx.algos().find(tunedKey_); tuning && tuned != ctx.algos().end()) {
    algo_ = tuned->second.algo;
    workspaceBytes_ = tuned->second.workspace;
    tuned_ = true;
    return Status::ok();
  }
  auto cached = ctx.algos().find(key);
  std::vector<cublasLtMatmulHeuristicResult_t> results;
  if (cached == ctx.algos().end() || tuning) {
    CAGR_ASSIGN_OR_RETURN(results, heuristicResults(ctx.lt(), desc_, layoutA_, layoutB_, layoutC_, layoutD_, limit,
                                                    kHeuristicResults, w));
  }
  if (cached == ctx.algos().end()) {
    const bool small = c.m * c.n * std::max<int64_t>(c.batch, 1) <= kSmallGemmOutputs;
    const int pick = pickAlgo(algoOptions(results), small);
    if (pick < 0) return unsupported(w + ": cuBLASLt has no algorithm for this call");
    const cublasLtMatmulHeuristicResult_t& r = results[static_cast<size_t>(pick)];
    cached = ctx.algos().emplace(key, ChosenAlgo{r.algo, r.workspaceSize}).first;
  }
  algo_ = cached->second.algo;
  workspaceBytes_ = cached->second.workspace;
  if (tuning) {  // the pick first (kept on ties), then the others that fit its workspace
    candidates_.push_back(cached->second);
    for (const cublasLtMatmulHeuristicResult_t& r : results) {
      const bool pick = std::memcmp(&r.algo, &algo_, sizeof(algo_)) == 0;
      if (!pick && r.workspaceSize <= workspaceBytes_) candidates_.push_back({r.algo, r.workspaceSize});
    }
  }
  tuned_ = candidates_.size() < 2;  // nothing to choose from
  return Status::ok();
}

cublasStatus_t PreparedGemm::ltMatmul(const cublasLtMatmulAlgo_t& algo, cudaStream_t stream) const {
  return cublasLtMatmul(ctx_->lt(), desc_, &alpha_, a_, layoutA_, b_, layoutB_, &beta_, c_, layoutC_, d_, layoutD_,
                        &algo, workspace_, workspaceBytes_, stream);
}

Status PreparedGemm::tune(cudaStream_t stream) const {
  tuned_ = true;
  // An addend in the output's bytes would be summed into again by every timed call.
  if (hasAddend_ && c_ == d_) return Status::ok();
  const auto call = [&](const cublasLtMatmulAlgo_t& algo) { return ltMatmul(algo, stream); };
  CAGR_ASSIGN_OR_RETURN(int best, fastestAlgo(candidates_, stream, call, where_, kTuneMargin));
  if (best >= 0) {
    algo_ = candidates_[static_cast<size_t>(best)].algo;
    ctx_->algos()[tunedKey_] = {algo_, candidates_[static_cast<size_t>(best)].workspace};
  }
  return wgmmaOffered_ ? tuneWgmma(stream) : Status::ok();
}

Status PreparedGemm::tuneWgmma(cudaStream_t stream) const {
  WgmmaGemm& w = *ctx_->wgmma();
  const bool had = w.hasWeight(a_);
  CAGR_ASSIGN_OR_RETURN(weight_, w.weight(a_, call_.m, call_.k, call_.lda, call_.transA, stream));
  const auto lt = [&] { return checkBlas(ltMatmul(algo_, stream), where_ + ": cublasLtMatmul"); };
  const auto own = [&] { return launchWgmma(stream); };
  float library = 1e30f, tile = 1e30f;
  for (int round = 0; round < 2; ++round) {  // interleaved: a clock drift falls on both
    CAGR_ASSIGN_OR_RETURN(float l, msPerCall(stream, lt, where_));
    CAGR_ASSIGN_OR_RETURN(float t, msPerCall(stream, own, where_));
    library = std::min(library, l);
    tile = std::min(tile, t);
  }
  useWgmma_ = tile < library * (1 - kTuneMargin);
  ctx_->wgmmaChosen()[tunedKey_] = useWgmma_;
  if (std::getenv("CAGR_GEMM_WGMMA_LOG") != nullptr) {
    std::fprintf(stderr, "%s: cuBLASLt %.1f us, wgmma 3xTF32 tile %.1f us: %s\n", where_.c_str(), library * 1e3,
                 tile * 1e3, useWgmma_ ? "the tile" : "cuBLASLt");
  }
  if (!useWgmma_ && !had) {
    w.release(a_);
    weight_ = nullptr;
  }
  return Status::ok();
}

Status PreparedGemm::launchWgmma(cudaStream_t stream) const {
  if (weight_ == nullptr) return internalError(where_ + ": the wgmma tile runs without its weight");
  // Column-major call terms: the product's A (X, row pitch ldb) is the call's
  // B, its output rows are the call's columns (n) with pitch ldd.
  return ctx_->wgmma()->launch(*weight_, static_cast<const float*>(b_), call_.ldb, static_cast<const float*>(bias_),
                               static_cast<float*>(d_), call_.ldd, call_.n, relu_, stream, where_);
}

Status PreparedGemm::enqueue(cudaStream_t stream) const {
  const ColumnMajorGemm& c = call_;
  if (c.m == 0 || c.n == 0 || c.batch == 0) return Status::ok();
  if (library_ == GemmLibrary::kCublasLt) {
    if (!tuned_) {
      cudaStreamCaptureStatus capturing = cudaStreamCaptureStatusNone;
      CAGR_RETURN_IF_ERROR(checkCuda(cudaStreamIsCapturing(stream, &capturing), where_ + ": cudaStreamIsCapturing"));
      if (capturing == cudaStreamCaptureStatusNone) CAGR_RETURN_IF_ERROR(tune(stream));
    }
    if (useWgmma_) return launchWgmma(stream);
    return checkBlas(ltMatmul(algo_, stream), where_ + ": cublasLtMatmul");
  }
  cublasHandle_t h = ctx_->blas();
  CAGR_RETURN_IF_ERROR(checkBlas(cublasSetStream(h, stream), where_ + ": cublasSetStream"));
  CAGR_RETURN_IF_ERROR(checkBlas(cublasSetWorkspace(h, workspace_, workspaceBytes_), where_ + ": cublasSetWorkspace"));
  const auto i = [](int64_t x) { return static_cast<int>(x); };
  return checkBlas(cublasGemmStridedBatchedEx(
                       h, c.transA ? CUBLAS_OP_T : CUBLAS_OP_N, c.transB ? CUBLAS_OP_T : CUBLAS_OP_N, i(c.m), i(c.n),
                       i(c.k), &alpha_, a_, CUDA_R_32F, i(c.lda), c.strideA, b_, CUDA_R_32F, i(c.ldb), c.strideB,
                       &beta_, d_, CUDA_R_32F, i(c.ldd), c.strideD, i(c.batch), compute_, CUBLAS_GEMM_DEFAULT),
                   where_ + ": cublasGemmStridedBatchedEx");
}

}  // namespace cagr::cuda
