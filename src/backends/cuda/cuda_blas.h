// Library GEMM steps on the GPU: one cuBLASLt matmul (bias / ReLU / GELU
// epilogue, addend as beta*C, the plan's math mode as the compute type,
// algorithm from cublasLtMatmulAlgoGetHeuristic cached per shape) or one
// cuBLAS strided-batched GEMM, prepared once per batch size: first the
// algorithm and the workspace it needs (so the executable can size the
// workspace, in its arena, to what the chosen algorithms use), then its
// device pointers; enqueued into the CUDA graph being captured.
//
// Workspace sizing (shared with the cublaslt.cin GEMMs, cuda_cin_run.h):
// the heuristic is asked for up to kHeuristicResults algorithms that fit
// kWorkspaceLimit; pickAlgo takes its first, or for a small problem a
// workspace-free one of equal rank; a call then gets exactly the chosen
// algorithm's workspaceSize (0 when it needs none), not the limit.
#pragma once

#include <cublasLt.h>
#include <cublas_v2.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "backends/cuda/cuda_gemm.h"
#include "backends/cuda/gemm_wgmma.h"
#include "cagr/status.h"

namespace cagr::cuda {

/// The most workspace one call may ask for: the heuristics' limit (NVIDIA's
/// recommendation for Hopper). What is allocated is what the chosen
/// algorithms need, not this.
constexpr size_t kWorkspaceLimit = size_t{32} << 20;
/// The middle variant chooseBatch times (cuda_executable.h): enough for the
/// split-K kernels of a small batch (a few splits of a 256 x 432 f32 tile),
/// a thirtieth of the heuristics' limit.
constexpr size_t kSmallWorkspaceLimit = size_t{1} << 20;
/// The least workspace a cuBLAS call gets: cuBLAS cannot say what it needs
/// (16 KiB avoids its allocation failures; less than NVIDIA's 4 MiB
/// recommendation before Hopper may cost it speed).
constexpr size_t kCublasMinWorkspace = size_t{4} << 20;
/// Below this cuBLAS calls fail to allocate.
constexpr size_t kCublasLeastWorkspace = size_t{16} << 10;
/// Heuristic results asked for per call (in the heuristic's order).
constexpr int kHeuristicResults = 8;
/// A GEMM with at most this many output elements (m * n * batch) is small:
/// pickAlgo may trade the heuristic's first choice for a workspace-free one.
constexpr int64_t kSmallGemmOutputs = int64_t{1} << 20;

/// What the sizing needs of one heuristic result (GPU-free, so it is unit-tested).
struct AlgoOption {
  size_t workspace = 0;  // cublasLtMatmulHeuristicResult_t::workspaceSize
  float waves = 0;       // ::wavesCount, the heuristic's own estimate (its rank)
  bool usable = true;    // ::state == CUBLAS_STATUS_SUCCESS
};

/// Index of the result to use (-1: none usable): the first usable one; for
/// a `small` problem whose first choice needs workspace, the first usable
/// one of equal rank (the same wavesCount, within 0.001 or 0.1 %) that needs none.
int pickAlgo(const std::vector<AlgoOption>& options, bool small);
/// The most workspace any usable option needs (a call that times them all, as the CIN's, needs this much).
size_t workspaceForAll(const std::vector<AlgoOption>& options);

/// The default weight of device memory against replay time when chooseBatch
/// (cuda_executable.h) picks a workspace variant: the reward's default
/// lambda_m (include/cagr/env.h), so the backend trades bytes for time at
/// the rate the optimizer does (CompileOptions::memoryWeight sets it).
constexpr double kWorkspaceMemoryWeight = 0.1;
/// chooseBatch's pick among a batch size's workspace variants, each timed
/// (`medianMs`) and sized (`bytes`: weights, arena, CIN scratch): the one
/// with the least score L / L0 + memoryWeight * M / M0 (the reward's
/// relative terms; L0 and M0 the unoptimized plan's, `baselineMs` and
/// `baselineBytes`, where given (> 0), else the fastest variant's); of the
/// variants whose score is within `tolerance` (a share of the fastest
/// variant's time, its timing noise) of that least, the one with the fewest
/// bytes. -1 when there is none or the sizes differ.
int pickWorkspaceVariant(const std::vector<double>& medianMs, const std::vector<size_t>& bytes, double memoryWeight,
                         double tolerance, double baselineMs = 0, double baselineBytes = 0);

/// An algorithm and the workspace it needs.
struct ChosenAlgo {
  cublasLtMatmulAlgo_t algo{};
  size_t workspace = 0;
};

/// Times each candidate (`call(algo)` enqueues one call on `stream`): a
/// warm-up call, then three between two events. The index of the fastest
/// that ran (-1: none did); the first candidate stays unless another beats
/// it by more than `margin` (a share of its time). Library GEMMs (margin
/// kTuneMargin) and the CIN's GEMMs (0) tune with it.
StatusOr<int> fastestAlgo(const std::vector<ChosenAlgo>& candidates, cudaStream_t stream,
                          const std::function<cublasStatus_t(const cublasLtMatmulAlgo_t&)>& call,
                          const std::string& where, float margin = 0);
/// A library GEMM leaves the heuristic's pick only for an algorithm this
/// much faster on its first run: measured on the H200 (2026-12-02, CUDA
/// events), DLRM's 4096x256x512 calls gained 3 % that way while DeepFM's
/// 400-wide layers moved within timing noise and ran 0.3 % slower in the plan.
constexpr float kTuneMargin = 0.015f;

/// A cuBLASLt call of at least this many FLOPs is tuned: the heuristic's
/// results are timed on its first run and the fastest kept (those under it
/// run in a few microseconds, where the timing's noise is the difference).
constexpr double kTunedGemmFlops = 1e8;

/// The usable results of cublasLtMatmulAlgoGetHeuristic for one call, at
/// most `count`, each fitting `limit` bytes of workspace, in its order; an
/// error naming `where` when it fails or offers none.
StatusOr<std::vector<cublasLtMatmulHeuristicResult_t>> heuristicResults(
    cublasLtHandle_t lt, cublasLtMatmulDesc_t desc, cublasLtMatrixLayout_t a, cublasLtMatrixLayout_t b,
    cublasLtMatrixLayout_t c, cublasLtMatrixLayout_t d, size_t limit, int count, const std::string& where);
/// The sizing's view of `results`.
std::vector<AlgoOption> algoOptions(const std::vector<cublasLtMatmulHeuristicResult_t>& results);

/// The library handles of one executable and the algorithms chosen so far.
class BlasContext {
 public:
  static StatusOr<std::unique_ptr<BlasContext>> create();
  ~BlasContext();
  BlasContext(const BlasContext&) = delete;
  BlasContext& operator=(const BlasContext&) = delete;

  cublasLtHandle_t lt() const { return lt_; }
  cublasHandle_t blas() const { return blas_; }
  /// Chosen algorithms by call description (one heuristic query per shape).
  std::map<std::string, ChosenAlgo>& algos() { return algos_; }
  /// CAGR's f32 wgmma tile (gemm_wgmma.h), null where it is not offered,
  /// and which tuned calls chose it (by their tuned key).
  WgmmaGemm* wgmma() { return wgmma_.get(); }
  void setWgmma(std::unique_ptr<WgmmaGemm> w) { wgmma_ = std::move(w); }
  std::map<std::string, bool>& wgmmaChosen() { return wgmmaChosen_; }

 private:
  BlasContext() = default;
  cublasLtHandle_t lt_ = nullptr;
  cublasHandle_t blas_ = nullptr;
  std::map<std::string, ChosenAlgo> algos_;
  std::unique_ptr<WgmmaGemm> wgmma_;
  std::map<std::string, bool> wgmmaChosen_;
};

/// Device pointers of one call, in the row-major product's terms.
struct GemmBuffers {
  const void* a = nullptr;  // Y = A * B
  const void* b = nullptr;
  const void* bias = nullptr;
  const void* addend = nullptr;
  void* out = nullptr;
};

/// A library GEMM ready to enqueue: descriptors, algorithm, then pointers.
class PreparedGemm {
 public:
  /// Descriptors and algorithm (no device pointers yet); `where` names the
  /// step in errors ("step 3 'fc1' (Gemm)").
  /// `limit`: the most workspace the call may use (kWorkspaceLimit, or 0 for
  /// workspace-free cuBLASLt algorithms and the least cuBLAS accepts).
  /// `constantB`: the product's B is a weight (the wgmma tile may run it).
  static StatusOr<std::unique_ptr<PreparedGemm>> create(BlasContext& ctx, const LibraryGemm& p,
                                                        const ColumnMajorGemm& c, const std::string& where,
                                                        size_t limit = kWorkspaceLimit, bool constantB = false);
  ~PreparedGemm();
  PreparedGemm(const PreparedGemm&) = delete;
  PreparedGemm& operator=(const PreparedGemm&) = delete;

  /// Workspace bytes the call needs: its cuBLASLt algorithm's; for cuBLAS
  /// (which cannot be asked) what cuBLASLt's choice for the same product needs.
  size_t workspaceBytes() const { return workspaceBytes_; }
  /// The call's operands and `workspace` (workspaceBytes(), 256-aligned; unused when 0;
  /// nullptr where the wgmma tile runs the call from the start).
  Status bind(const GemmBuffers& buf, void* workspace);
  /// Enqueues the call on `stream`. A large cuBLASLt call in f32 math first
  /// enqueued outside a graph capture first times the heuristic's results
  /// that need no more workspace than its first pick (on the bound
  /// operands) and keeps the fastest by kTuneMargin, for every later call of
  /// the same shape too (CAGR_GEMM_TUNE=0: the heuristic's pick; =all: also
  /// tf32 / bf16 / f16 math). Where the context offers the wgmma tile and
  /// the call qualifies (wgmmaGemmRejection), the tile is timed against
  /// that pick and runs the call instead when it is faster by kTuneMargin
  /// (CAGR_GEMM_WGMMA=0: never; =force: always).
  Status enqueue(cudaStream_t stream) const;
  /// Whether CAGR's wgmma tile runs the call (so far: tuning decides on the first run).
  bool runsWgmma() const { return useWgmma_; }

 private:
  PreparedGemm() = default;
  Status prepareLt(BlasContext& ctx, const LibraryGemm& p, const ColumnMajorGemm& c, size_t limit);
  Status tune(cudaStream_t stream) const;
  /// One cuBLASLt call of this GEMM with `algo` on `stream`.
  cublasStatus_t ltMatmul(const cublasLtMatmulAlgo_t& algo, cudaStream_t stream) const;
  Status tuneWgmma(cudaStream_t stream) const;
  Status launchWgmma(cudaStream_t stream) const;

  BlasContext* ctx_ = nullptr;
  GemmLibrary library_ = GemmLibrary::kCublasLt;
  ColumnMajorGemm call_;
  cublasComputeType_t compute_ = CUBLAS_COMPUTE_32F;
  float alpha_ = 1, beta_ = 0;
  bool hasBias_ = false, hasAddend_ = false;
  const void* a_ = nullptr;  // the call's A and B (the product's B and A)
  const void* b_ = nullptr;
  const void* c_ = nullptr;
  void* d_ = nullptr;
  void* workspace_ = nullptr;
  size_t workspaceBytes_ = 0;
  cublasLtMatmulDesc_t desc_ = nullptr;
  cublasLtMatrixLayout_t layoutA_ = nullptr, layoutB_ = nullptr, layoutC_ = nullptr, layoutD_ = nullptr;
  mutable cublasLtMatmulAlgo_t algo_{};
  std::vector<ChosenAlgo> candidates_;  // to time on the first run (tune)
  std::string tunedKey_;                // BlasContext::algos() key of the tuned choice
  mutable bool tuned_ = false;
  bool tuning_ = false;                 // f32 math of >= kTunedGemmFlops: tuned on the first run
  std::string where_;
  // The wgmma tile: offered (the call qualifies and tuning may pick it),
  // chosen, and the weight as it reads it (bound with the operands).
  bool wgmmaOffered_ = false;
  mutable bool useWgmma_ = false;
  bool relu_ = false;
  const void* bias_ = nullptr;
  mutable const WgmmaGemm::Weight* weight_ = nullptr;
};

/// cuBLAS compute type of a plan math precision (tf32 -> FAST_TF32, bf16 ->
/// FAST_16BF, f16 -> FAST_16F: f32 operands, f32 accumulation).
cublasComputeType_t computeType(Precision math);

}  // namespace cagr::cuda
