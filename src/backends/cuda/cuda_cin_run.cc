// A cublaslt.cin step on the GPU (see cuda_cin_run.h).
#include "backends/cuda/cuda_cin_run.h"

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <string>

#include "backends/cuda/cuda_device.h"

namespace cagr::cuda {
namespace {

Status checkLt(cublasStatus_t s, const std::string& what) {
  if (s == CUBLAS_STATUS_SUCCESS) return Status::ok();
  return internalError(what + ": " + cublasGetStatusName(s) + ": " + cublasGetStatusString(s));
}

size_t alignUp(size_t n) {
  return (n + 255) / 256 * 256;
}

Status makeLayout(cublasLtMatrixLayout_t* l, cudaDataType_t t, int64_t rows, int64_t cols, int64_t ld,
                  const std::string& where) {
  return checkLt(cublasLtMatrixLayoutCreate(l, t, static_cast<uint64_t>(rows), static_cast<uint64_t>(cols), ld),
                 where + ": cublasLtMatrixLayoutCreate");
}

bool cinTuning() {
  const char* env = std::getenv("CAGR_CIN_TUNE");
  return env == nullptr || std::string(env) != "0";
}

}  // namespace

int cinLanes() {
  const char* env = std::getenv("CAGR_CIN_PIPELINE");
  if (env == nullptr || *env == '\0') return kCinDefaultLanes;
  long n = std::strtol(env, nullptr, 10);
  return static_cast<int>(std::clamp<long>(n, 1, 8));
}

size_t cinChunkBudget(int lanes, size_t l2Bytes, size_t elementBytes) {
  const char* env = std::getenv("CAGR_CIN_CHUNK_KB");
  if (env != nullptr) {
    long kb = std::strtol(env, nullptr, 10);
    if (kb > 0) return static_cast<size_t>(kb) << 10;
  }
  if (lanes <= 1) return elementBytes >= 4 ? kCinChunkBudgetF32 : kCinChunkBudget;
  auto share = static_cast<size_t>(static_cast<double>(l2Bytes) * kCinL2Share / lanes);
  return std::max(share, size_t{1} << 20);
}

PreparedCin::~PreparedCin() {
  for (cublasLtMatrixLayout_t l : {layoutW_, layoutZ_[0], layoutZ_[1], layoutY_[0], layoutY_[1]}) {
    if (l != nullptr) cublasLtMatrixLayoutDestroy(l);
  }
  if (desc_ != nullptr) cublasLtMatmulDescDestroy(desc_);
}

StatusOr<std::unique_ptr<PreparedCin>> PreparedCin::create(BlasContext& ctx, const CinGemm& c, Kernels k,
                                                           const Buffers& buf, int64_t batch, size_t workspaceLimit,
                                                           size_t chunkBudget, bool slice, const std::string& where) {
  std::unique_ptr<PreparedCin> p(new PreparedCin());
  p->ctx_ = &ctx;
  p->c_ = c;
  p->k_ = std::move(k);
  p->buf_ = buf;
  p->batch_ = batch;
  p->where_ = where;
  if ((c.math != Precision::kF32 && p->k_.w == nullptr) || p->k_.z == nullptr || p->k_.out == nullptr) {
    return internalError(where + ": a cublaslt.cin kernel is missing from the module");
  }
  int device = 0, l2 = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device) != cudaSuccess) {
    cudaGetLastError();
    l2 = 50 << 20;
  }
  p->lanes_ = batch > 0 ? cinLanes() : 1;
  p->sliced_ = slice && c.sliceH > 0 && p->k_.zSlice != nullptr && p->lanes_ == 1;
  const size_t budget =
      chunkBudget > 0 ? chunkBudget : cinChunkBudget(p->lanes_, static_cast<size_t>(l2), c.elementBytes);
  p->budget_ = budget;
  p->rows_ = c.chunkRows(batch, budget, p->sliced_);
  const int64_t chunks = (std::max<int64_t>(batch, 1) + p->rows_ - 1) / p->rows_;
  p->lanes_ = static_cast<int>(std::min<int64_t>(p->lanes_, chunks));
  // Lane GEMMs run at once, each with its own workspace: a smaller limit.
  const size_t limit = p->lanes_ > 1 ? std::min(workspaceLimit, kCinLaneWorkspace) : workspaceLimit;
  if (p->lanes_ > 1) {
    CAGR_ASSIGN_OR_RETURN(p->fork_, newEvent(false));
    for (int i = 1; i < p->lanes_; ++i) {
      CAGR_ASSIGN_OR_RETURN(StreamPtr s, newStream());
      CAGR_ASSIGN_OR_RETURN(EventPtr e, newEvent(false));
      p->laneStreams_.push_back(std::move(s));
      p->laneDone_.push_back(std::move(e));
    }
  }
  if (batch == 0) {
    p->placeScratch(budget);
    return p;
  }
  switch (c.math) {
    case Precision::kTF32:
      p->compute_ = CUBLAS_COMPUTE_32F_FAST_TF32;
      break;
    case Precision::kBF16:
      p->element_ = CUDA_R_16BF;
      break;
    case Precision::kF16:
      p->element_ = CUDA_R_16F;
      break;
    default:
      break;
  }
  const std::string& w = p->where_;
  CAGR_RETURN_IF_ERROR(
      checkLt(cublasLtMatmulDescCreate(&p->desc_, p->compute_, CUDA_R_32F), w + ": cublasLtMatmulDescCreate"));
  const cublasOperation_t t = CUBLAS_OP_T, n = CUBLAS_OP_N;
  CAGR_RETURN_IF_ERROR(checkLt(cublasLtMatmulDescSetAttribute(p->desc_, CUBLASLT_MATMUL_DESC_TRANSA, &t, sizeof(t)),
                               w + ": cublasLtMatmulDescSetAttribute"));
  CAGR_RETURN_IF_ERROR(checkLt(cublasLtMatmulDescSetAttribute(p->desc_, CUBLASLT_MATMUL_DESC_TRANSB, &n, sizeof(n)),
                               w + ": cublasLtMatmulDescSetAttribute"));
  // Column-major: Y^T [O x rows*D] = op(W) [O x K'] * Z^T [K' x rows*D], W
  // read as K' x O (pitch ldz for Wq, K for f32's dense W); K' = gemmK():
  // the zero padding of Wq and Z included where there is one; sliced, one
  // slice's K (its W the columns at the slice's offset, Z its rows).
  const int64_t ldw = c.math == Precision::kF32 ? c.K() : c.ldz;
  CAGR_RETURN_IF_ERROR(makeLayout(&p->layoutW_, p->element_, c.gemmK(p->sliced_), c.O, ldw, w));
  CAGR_ASSIGN_OR_RETURN(p->workspaceBytes_, p->prepareGemm(0, p->rows_, limit));
  const int64_t last = batch % p->rows_;
  if (last != 0) {
    CAGR_ASSIGN_OR_RETURN(size_t need, p->prepareGemm(1, last, limit));
    p->workspaceBytes_ = std::max(p->workspaceBytes_, need);
  }
  p->placeScratch(budget);
  return p;
}

void PreparedCin::placeScratch(size_t budget) {
  scratch_ = c_.scratchBytes(batch_, budget, lanes_, workspaceBytes_, sliced_);
  laneOffset_ = alignUp(c_.weightBytes());
  yOffset_ = alignUp(static_cast<size_t>(rows_ * c_.D * c_.zPitch(sliced_)) * c_.elementBytes);
  wsOffset_ = yOffset_ + alignUp(static_cast<size_t>(rows_ * c_.D * c_.O) * 4);
  laneBytes_ = wsOffset_ + alignUp(workspaceBytes_);
}

StatusOr<size_t> PreparedCin::prepareGemm(int part, int64_t rows, size_t limit) {
  const std::string& w = where_;
  const int64_t cols = rows * c_.D;
  const int64_t k = c_.gemmK(sliced_), ldz = c_.zPitch(sliced_);
  CAGR_RETURN_IF_ERROR(makeLayout(&layoutZ_[part], element_, k, cols, ldz, w));
  CAGR_RETURN_IF_ERROR(makeLayout(&layoutY_[part], CUDA_R_32F, c_.O, cols, c_.O, w));
  std::string key = "cin," + std::to_string(c_.O) + "," + std::to_string(k) + "," + std::to_string(ldz) +
                    "," + std::to_string(cols) + "," + std::to_string(static_cast<int>(c_.math)) + "," +
                    std::to_string(limit);
  keys_[part] = key;
  auto tuned = ctx_->algos().find(key + ",tuned");
  if (tuned != ctx_->algos().end()) {
    algo_[part] = tuned->second.algo;
    partWorkspace_[part] = tuned->second.workspace;
    return tuned->second.workspace;
  }
  CAGR_ASSIGN_OR_RETURN(std::vector<cublasLtMatmulHeuristicResult_t> results,
                        heuristicResults(ctx_->lt(), desc_, layoutW_, layoutZ_[part], layoutY_[part], layoutY_[part],
                                         limit, kCinTuneCandidates, w + " (CIN GEMM)"));
  algo_[part] = results[0].algo;  // the heuristic's first choice, until tune() times the others
  partWorkspace_[part] = results[0].workspaceSize;
  for (const cublasLtMatmulHeuristicResult_t& r : results) candidates_[part].push_back({r.algo, r.workspaceSize});
  // tune() may keep any candidate: room for the one that needs the most.
  return cinTuning() ? workspaceForAll(algoOptions(results)) : results[0].workspaceSize;
}

Status PreparedCin::tune(cudaStream_t stream, const void* wq, void* z, void* y, void* ws) const {
  tuned_ = true;
  if (!cinTuning()) return Status::ok();
  const float alpha = 1.0f, beta = 0.0f;
  for (int part = 0; part < 2; ++part) {
    if (candidates_[part].size() < 2) continue;
    const auto call = [&](const cublasLtMatmulAlgo_t& algo) {
      return cublasLtMatmul(ctx_->lt(), desc_, &alpha, wq, layoutW_, z, layoutZ_[part], &beta, y, layoutY_[part], y,
                            layoutY_[part], &algo, ws, workspaceBytes_, stream);
    };
    CAGR_ASSIGN_OR_RETURN(int best, fastestAlgo(candidates_[part], stream, call, where_ + " (CIN GEMM)"));
    const ChosenAlgo chosen = candidates_[part][static_cast<size_t>(std::max(best, 0))];  // none ran: the first
    algo_[part] = chosen.algo;
    partWorkspace_[part] = chosen.workspace;
    ctx_->algos()[keys_[part] + ",tuned"] = chosen;
  }
  return Status::ok();
}

bool PreparedCin::keepChosenWorkspace() {
  if (!tuned_ || batch_ == 0) return false;
  const size_t need = std::max(partWorkspace_[0], batch_ % rows_ != 0 ? partWorkspace_[1] : 0);
  if (need >= workspaceBytes_) return false;
  workspaceBytes_ = need;
  placeScratch(budget_);
  return true;
}

std::string PreparedCin::shapeText() const {
  int64_t chunks = rows_ > 0 ? (batch_ + rows_ - 1) / rows_ : 0;
  return " [" + std::to_string(batch_) + " x (" + std::to_string(c_.D) + "x" + std::to_string(c_.K()) + " -> " +
         std::to_string(c_.O) + ") " + precisionName(c_.math) + ", " + std::to_string(chunks) + " chunks of " +
         std::to_string(rows_) + (lanes_ > 1 ? ", " + std::to_string(lanes_) + " lanes" : std::string()) +
         (sliced_ ? ", " + std::to_string(c_.slices()) + " K slices" : std::string()) + "]";
}

Status PreparedCin::launch(cudaKernel_t fn, const Launch& l, void** args, cudaStream_t s,
                           const std::string& what) const {
  if (static_cast<uint64_t>(l.grid[0]) * l.grid[1] * l.grid[2] == 0) return Status::ok();
  dim3 grid(l.grid[0], l.grid[1], l.grid[2]), block(l.block[0], l.block[1], l.block[2]);
  return checkCuda(cudaLaunchKernel(reinterpret_cast<const void*>(fn), grid, block, args, l.sharedBytes, s),
                   where_ + ": cudaLaunchKernel (" + what + ")");
}

Status PreparedCin::enqueue(cudaStream_t stream, void* scratch) const {
  if (batch_ == 0) return Status::ok();
  auto* base = static_cast<std::byte*>(scratch);
  const void* wq = buf_.w;
  if (c_.math != Precision::kF32) {
    void* dst = base;
    const void* src = buf_.w;
    void* args[] = {&src, &dst};
    CAGR_RETURN_IF_ERROR(launch(k_.w, k_.wLaunch({}), args, stream, "round W"));
    wq = base;
  }
  if (!tuned_) {  // the first run (never captured): time the heuristic's candidates on this stream
    cudaStreamCaptureStatus capturing = cudaStreamCaptureStatusNone;
    CAGR_RETURN_IF_ERROR(checkCuda(cudaStreamIsCapturing(stream, &capturing), where_ + ": cudaStreamIsCapturing"));
    if (capturing == cudaStreamCaptureStatusNone) {
      std::byte* lane0 = base + laneOffset_;
      CAGR_RETURN_IF_ERROR(tune(stream, wq, lane0, lane0 + yOffset_, lane0 + wsOffset_));
    }
  }
  // Lanes 1.. start once W is rounded (inside a capture, waiting on the
  // fork event joins their streams to it), and the step ends after them.
  if (lanes_ > 1) {
    CAGR_RETURN_IF_ERROR(checkCuda(cudaEventRecord(fork_.get(), stream), where_ + ": cudaEventRecord"));
    for (const StreamPtr& s : laneStreams_) {
      CAGR_RETURN_IF_ERROR(checkCuda(cudaStreamWaitEvent(s.get(), fork_.get(), 0), where_ + ": cudaStreamWaitEvent"));
    }
  }
  const float alpha = 1.0f, beta = 0.0f, one = 1.0f;
  const auto* xk = static_cast<const float*>(buf_.xk);
  const auto* x0 = static_cast<const float*>(buf_.x0);
  auto* out = static_cast<float*>(buf_.out);
  auto* pooled = static_cast<float*>(buf_.pooled);
  int64_t chunk = 0;
  for (int64_t b0 = 0; b0 < batch_; b0 += rows_, ++chunk) {
    const int lane = static_cast<int>(chunk % lanes_);
    cudaStream_t s = lane == 0 ? stream : laneStreams_[static_cast<size_t>(lane - 1)].get();
    std::byte* mine = base + laneOffset_ + static_cast<size_t>(lane) * laneBytes_;
    void* z = mine;
    void* y = mine + yOffset_;
    void* ws = mine + wsOffset_;
    long long rows = std::min(rows_, batch_ - b0);
    const int part = rows == rows_ ? 0 : 1;
    const float* xkc = xk + b0 * c_.H * c_.D;
    const float* x0c = x0 + b0 * c_.M * c_.D;
    float* outc = out != nullptr ? out + b0 * c_.O * c_.D : nullptr;
    float* pooledc = pooled != nullptr ? pooled + b0 * c_.O : nullptr;
    const void* bias = buf_.bias;
    // Sliced: slice i's outer product (xk's rows i * sliceH ..) times W's
    // columns i * sliceH * M .., summed into Y.
    const int64_t slices = sliced_ ? c_.slices() : 1;
    for (int64_t i = 0; i < slices; ++i) {
      const float* xki = xkc + i * c_.sliceH * c_.D;
      void* zargs[] = {&xki, &x0c, &z, &rows};
      CAGR_RETURN_IF_ERROR(sliced_ ? launch(k_.zSlice, k_.zSliceLaunch({static_cast<int64_t>(rows)}), zargs, s,
                                            "outer product of a K slice")
                                   : launch(k_.z, k_.zLaunch({static_cast<int64_t>(rows)}), zargs, s, "outer product"));
      const void* wi = static_cast<const std::byte*>(wq) + static_cast<size_t>(i * c_.gemmK(true)) * c_.elementBytes;
      const float* addTo = i == 0 ? &beta : &one;  // the first slice writes Y, the others add to it
      CAGR_RETURN_IF_ERROR(checkLt(cublasLtMatmul(ctx_->lt(), desc_, &alpha, sliced_ ? wi : wq, layoutW_, z,
                                                  layoutZ_[part], addTo, y, layoutY_[part], y,
                                                  layoutY_[part], &algo_[part], ws, workspaceBytes_, s),
                                   where_ + ": cublasLtMatmul"));
    }
    void* oargs[] = {&y, &bias, &outc, &pooledc, &rows};
    CAGR_RETURN_IF_ERROR(launch(k_.out, k_.outLaunch({static_cast<int64_t>(rows)}), oargs, s, "transpose + bias"));
  }
  for (size_t i = 0; i < laneStreams_.size(); ++i) {
    CAGR_RETURN_IF_ERROR(
        checkCuda(cudaEventRecord(laneDone_[i].get(), laneStreams_[i].get()), where_ + ": cudaEventRecord"));
    CAGR_RETURN_IF_ERROR(
        checkCuda(cudaStreamWaitEvent(stream, laneDone_[i].get(), 0), where_ + ": cudaStreamWaitEvent"));
  }
  return Status::ok();
}

}  // namespace cagr::cuda
