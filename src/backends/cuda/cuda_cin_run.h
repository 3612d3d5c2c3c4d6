// A cublaslt.cin step on the GPU (see cuda_cin.h): prepared once per batch
// size (chunking, lanes, cuBLASLt descriptors and algorithms for the full
// and the last chunk), then enqueued into the CUDA graph being captured: W
// rounded once, then per chunk the outer-product kernel, one cuBLASLt
// matmul and the transpose + bias (+ tail) kernel, on the step's stream or,
// pipelined, spread over lanes forked from it and joined back by events, in
// a scratch buffer the executable shares between the CIN steps of a stream.
// The scratch holds Wq, then per lane one chunk's Z and Y and the cuBLASLt
// workspace its GEMMs need (for the first run, which times the candidates,
// the most any of them needs, cuda_blas.h; then what the chosen ones need:
// keepChosenWorkspace), all sized to the batch: a small batch is one chunk
// of exactly its rows.
#pragma once

#include <cublasLt.h>
#include <cuda_runtime.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "backends/cuda/cuda_blas.h"
#include "backends/cuda/cuda_cin.h"
#include "backends/cuda/cuda_device.h"

namespace cagr::cuda {

/// Lanes of the pipeline: $CAGR_CIN_PIPELINE (0 or 1: none; 2..8 lanes),
/// else kCinDefaultLanes.
int cinLanes();
/// Chunk budget in bytes for `lanes` lanes on a GPU with `l2Bytes` of L2:
/// $CAGR_CIN_CHUNK_KB KiB when set (> 0); else, without a pipeline,
/// kCinChunkBudget for Z elements of `elementBytes` 2 and kCinChunkBudgetF32
/// for 4, and with one each lane's share of kCinL2Share of the L2 (at
/// least 1 MiB), so the Z a lane's kernel writes is read back from L2.
size_t cinChunkBudget(int lanes, size_t l2Bytes, size_t elementBytes);
/// Without a pipeline unless $CAGR_CIN_PIPELINE asks for one: big chunks
/// are what the H200 measured fastest so far (see kCinChunkBudget); lanes of
/// L2-sized chunks are the alternative to time (CAGR_CIN_PIPELINE=2 / 4).
constexpr int kCinDefaultLanes = 1;
/// cuBLASLt heuristic results timed on the first run of each GEMM shape
/// (CAGR_CIN_TUNE=0: the heuristic's first choice, untimed).
constexpr int kCinTuneCandidates = 8;

class PreparedCin {
 public:
  struct Kernels {  // the module's functions and launch rules (Program::kernels)
    cudaKernel_t w = nullptr, z = nullptr, out = nullptr, zSlice = nullptr;  // zSlice: nullptr without one
    std::function<Launch(const std::vector<int64_t>&)> wLaunch, zLaunch, outLaunch, zSliceLaunch;
  };
  struct Buffers {
    const void* xk = nullptr;
    const void* x0 = nullptr;
    const void* w = nullptr;
    const void* bias = nullptr;  // nullptr: no bias
    void* out = nullptr;     // nullptr: the layer's map is not written (pooled only)
    void* pooled = nullptr;  // nullptr: no pooled tail
  };
  /// `workspaceLimit`: the most cuBLASLt workspace a GEMM may ask for
  /// (pipelined lanes ask for at most kCinLaneWorkspace); `chunkBudget`: the
  /// most bytes of Z and Y one chunk may take (0: cinChunkBudget's);
  /// `slice`: the layer's K slices one after another where it has them
  /// (CinGemm::sliceH) and runs without a pipeline (Z holds one slice);
  /// `where` names the step in errors.
  static StatusOr<std::unique_ptr<PreparedCin>> create(BlasContext& ctx, const CinGemm& c, Kernels k,
                                                       const Buffers& buf, int64_t batch, size_t workspaceLimit,
                                                       size_t chunkBudget, bool slice, const std::string& where);
  ~PreparedCin();
  PreparedCin(const PreparedCin&) = delete;
  PreparedCin& operator=(const PreparedCin&) = delete;

  /// Bytes of scratch enqueue() needs.
  size_t scratchBytes() const { return scratch_; }
  /// " [4096 x (16x4400 -> 200) bf16, 3 chunks of 1366]" (", 2 lanes") for kernelReport.
  std::string shapeText() const;
  /// Bytes of Z and Y one chunk takes (its samples times CinGemm::bytesPerSample).
  size_t chunkBytes() const { return static_cast<size_t>(rows_) * c_.bytesPerSample(sliced_); }
  /// Whether the layer runs in K slices.
  bool sliced() const { return sliced_; }
  /// cuBLASLt workspace bytes each lane's GEMMs get (in the scratch).
  size_t workspaceBytes() const { return workspaceBytes_; }
  /// Enqueues the layer on `stream` with `scratch` (scratchBytes(), 256-aligned).
  Status enqueue(cudaStream_t stream, void* scratch) const;
  /// After the first enqueue has timed the candidates: the workspace (and
  /// so scratchBytes()) shrinks to what the chosen algorithms need; true
  /// when it did (the caller then gives the layer a smaller scratch).
  bool keepChosenWorkspace();

 private:
  PreparedCin() = default;
  /// Layouts and candidate algorithms of the full (part 0) or last chunk's
  /// GEMM, fitting `limit` bytes of workspace; returns the workspace they need.
  StatusOr<size_t> prepareGemm(int part, int64_t rows, size_t limit);
  void placeScratch(size_t budget);  // scratch_ and the offsets in it, once workspaceBytes_ is known
  Status launch(cudaKernel_t fn, const Launch& l, void** args, cudaStream_t s, const std::string& what) const;
  /// Times each GEMM's candidate algorithms on `stream` (not capturing) with
  /// real buffers and keeps the fastest, also for later batches of the shape.
  Status tune(cudaStream_t stream, const void* wq, void* z, void* y, void* ws) const;

  BlasContext* ctx_ = nullptr;
  CinGemm c_;
  Kernels k_;
  Buffers buf_;
  int64_t batch_ = 0, rows_ = 0;  // samples in all, per chunk
  bool sliced_ = false;           // K in c_.slices() slices (Z one slice's rows)
  size_t budget_ = 0;             // the chunk budget the scratch was placed with
  mutable size_t partWorkspace_[2] = {0, 0};  // what the full / last chunk's algorithm needs
  int lanes_ = 1;
  size_t workspaceBytes_ = 0, scratch_ = 0;  // workspaceBytes_: each lane's, in the scratch
  size_t laneOffset_ = 0, laneBytes_ = 0;    // lane i's Z at laneOffset_ + i * laneBytes_ (Wq first)
  size_t yOffset_ = 0, wsOffset_ = 0;        // Y and the lane's workspace within a lane
  std::vector<StreamPtr> laneStreams_;       // lanes 1.. (lane 0 is the step's stream)
  EventPtr fork_;                            // the lanes start after W is rounded
  std::vector<EventPtr> laneDone_;           // lanes 1..: the step's stream waits for them
  cublasComputeType_t compute_ = CUBLAS_COMPUTE_32F;
  cudaDataType_t element_ = CUDA_R_32F;
  cublasLtMatmulDesc_t desc_ = nullptr;
  cublasLtMatrixLayout_t layoutW_ = nullptr;
  cublasLtMatrixLayout_t layoutZ_[2] = {nullptr, nullptr}, layoutY_[2] = {nullptr, nullptr};  // full, last chunk
  mutable cublasLtMatmulAlgo_t algo_[2] = {};  // full, last chunk (tune() may replace them)
  std::vector<ChosenAlgo> candidates_[2];      // the heuristic's, in its order (tune() times them)
  std::string keys_[2];                        // their BlasContext::algos() keys
  mutable bool tuned_ = false;
  std::string where_;
};

}  // namespace cagr::cuda
