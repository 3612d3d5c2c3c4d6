// A plan compiled for the GPU: weights uploaded once in the formats its
// steps read, the NVRTC module loaded (cudaLibraryLoadData), and per batch
// size one device arena plus the whole plan captured into one CUDA graph
// on its first run there (steps on their streams, events for cross-stream
// dependencies) and replayed after. Inputs go up and outputs come back
// through pinned staging buffers around the replay. The library calls'
// cuBLASLt workspaces are step scratch in the arena, each as large as its
// chosen algorithm needs (cuda_blas.h).
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "backends/cuda/codegen.h"
#include "backends/cuda/cuda_blas.h"
#include "backends/cuda/cuda_device.h"
#include "backends/cuda/cuda_program.h"
#include "backends/cuda/cuda_timing.h"
#include "cagr/backend.h"

namespace cagr::cuda {

/// chooseBatch: replays timed per variant (kWorkspaceChoiceRounds rounds of
/// kWorkspaceChoiceReplays, interleaved), and how far above the best score
/// (relative median time + the memory weight x relative device bytes,
/// cuda_blas.h) a variant with fewer bytes may be and still be kept.
/// Measured on the H200 (bench/cuda/FINDINGS.md): without workspace DLRM's
/// fp32 plan at batch 4096 replays in 136 us instead of 152 and DeepFM's in
/// 152 instead of 174, while DCN-v2's at 256 slows from 52 to 76.
constexpr int kWorkspaceChoiceRounds = 3;
constexpr int kWorkspaceChoiceReplays = 10;
constexpr double kWorkspaceChoiceTolerance = 0.01;

class CudaExecutable final : public Executable, public DeviceTimed {
 public:
  /// Uploads the weights, loads `module` (may be null when the program has
  /// no generated kernels) and creates the streams and library handles;
  /// `options` say what chooseBatch weighs device bytes with and against
  /// which baseline (CompileOptions::memoryWeight, baselineLatencyMs / Bytes).
  static StatusOr<std::unique_ptr<CudaExecutable>> create(std::shared_ptr<const Graph> plan, Program program,
                                                          const CompiledModule* module, CompileStats stats,
                                                          const CompileOptions& options = {});
  ~CudaExecutable() override;

  StatusOr<std::vector<Tensor>> run(const std::vector<std::pair<std::string, Tensor>>& inputs) override;
  int64_t peakMemoryBytes() const override;
  /// Where peakMemoryBytes() goes (the batch size run last).
  MemoryBreakdown memoryBreakdown() const;
  std::vector<std::string> kernelReport() const override;
  /// Each step timed with events on its stream, the steps issued one by
  /// one (no graph): where the time of a replay goes.
  StatusOr<std::vector<KernelTiming>> profile(const std::vector<std::pair<std::string, Tensor>>& inputs,
                                              int repeats) override;
  /// The plan's node for each node of the graph this runs (prepareGraph's
  /// result; -1 for nodes its steps added): profile() reports plan nodes.
  void setPlanNodes(std::vector<NodeId> planNodes) { planNodes_ = std::move(planNodes); }

  StatusOr<ReplayTiming> timeReplays(const std::vector<std::pair<std::string, Tensor>>& inputs, int replays,
                                     int transfers) override;
  const CompileStats& compileStats() const override { return stats_; }

 private:
  struct Batch;
  using StepEvents = std::vector<std::pair<EventPtr, EventPtr>>;

  CudaExecutable(std::shared_ptr<const Graph> plan, Program program, CompileStats stats);
  // Serialises run / profile / timeReplays / peakMemoryBytes across threads
  // (recursive: timing calls run()).
  mutable std::recursive_mutex mutex_;
  Status uploadWeights();
  Status loadModule(const CompiledModule& module);
  Status createStreams();
  // Offers CAGR's f32 wgmma GEMM tile (gemm_wgmma.h) to the library GEMMs on sm_90a.
  Status offerWgmmaTile();

  /// The batch state for these inputs' shapes (built on first use), inputs uploaded.
  StatusOr<Batch*> bind(const std::vector<std::pair<std::string, Tensor>>& inputs);
  /// The batch state with library calls limited to `gemmWorkspace` bytes of
  /// workspace each, CIN GEMMs to `cinWorkspace` and their chunks to
  /// `cinChunk` bytes of Z and Y (0: cinChunkBudget's), in K slices where
  /// they have them with `cinSlices` (or $CAGR_CIN_SLICE=1).
  StatusOr<std::unique_ptr<Batch>> makeBatch(const SymbolBindings& b, size_t gemmWorkspace, size_t cinWorkspace,
                                             size_t cinChunk = 0, bool cinSlices = false);
  /// makeBatch with the heuristics' workspace limit, kSmallWorkspaceLimit or
  /// none for library calls (CIN GEMMs keep theirs), then none anywhere,
  /// then the first with its CIN GEMMs in K slices, then with its largest
  /// CIN chunk halved and quartered (where a chunk holds more than one
  /// sample): when the first uses workspace, can slice or can chunk finer,
  /// the variant pickWorkspaceVariant takes (replay time against device
  /// bytes at the reward's lambda_m; all timed on `given`, interleaved,
  /// cuda_launch.cc).
  StatusOr<std::unique_ptr<Batch>> chooseBatch(const SymbolBindings& b, const std::vector<Tensor>& given);
  /// The library calls' algorithms and workspace needs (before the arena is placed).
  Status chooseGemms(Batch& bt, size_t gemmWorkspace);
  Status prepareSteps(Batch& bt);
  Status prepareLaunch(Batch& bt, size_t step);
  Status prepareCin(Batch& bt, size_t step);  // a kCinGemm step (cuda_executable_cin.cc)
  Status allocateCinScratch(Batch& bt);       // after every step is prepared
  Status shrinkCinScratch(Batch& bt);         // after the first run tuned the CIN GEMMs
  /// Stages `given` in pinned memory and copies it to the device (stream 0).
  Status upload(Batch& bt, const std::vector<Tensor>& given);
  Status copyIn(Batch& bt);   // staged inputs -> device
  Status copyOut(Batch& bt);  // outputs -> staging
  /// copyOut, waits for stream 0, and returns the outputs.
  StatusOr<std::vector<Tensor>> download(Batch& bt);
  size_t outputBytes(const Batch& bt, size_t output) const;
  /// Enqueues every step on its stream with the cross-stream waits; with
  /// `sync`, waits after each step so a failure names it; with `events`,
  /// records a pair around each step.
  Status issue(Batch& bt, bool sync, StepEvents* events);
  Status enqueueStep(Batch& bt, size_t step);
  Status capture(Batch& bt);
  Status execute(Batch& bt);
  /// Milliseconds of `replays` back-to-back graph replays of `bt` (captured first if needed).
  StatusOr<std::vector<double>> replayTimes(Batch& bt, int replays);

  void* weightPtr(const WeightFormat& f) const;
  /// Device pointer step `s` reads `v` through (constants in the step's format).
  void* operandPtr(const Batch& bt, size_t s, ValueId v) const;
  std::string stepWhere(size_t s) const;

  std::shared_ptr<const Graph> owned_;
  const Graph& g_;
  Program prog_;
  std::vector<NodeId> planNodes_;  // empty: the graph is the plan
  CompileStats stats_;
  std::unique_ptr<BlasContext> blas_;
  LibraryPtr library_;
  std::vector<cudaKernel_t> kernels_;  // per Program::kernels
  std::vector<StreamPtr> streams_;     // per CUDA stream index
  DevicePtr weights_;
  size_t weightBytes_ = 0;
  std::vector<size_t> weightOffset_;  // per Program::weights
  std::map<std::vector<int64_t>, std::unique_ptr<Batch>> batches_;  // by symbol values
  Batch* last_ = nullptr;
  bool syncEachStep_ = false;  // CAGR_CUDA_SYNC=1: no graph, a failing kernel is named
  // Generated kernels launched as programmatic dependents (sm_90+ modules;
  // CAGR_CUDA_PDL=0: never).
  bool gridDeps_ = false;
  double memoryWeight_ = kWorkspaceMemoryWeight;  // chooseBatch's lambda_m
  double baselineMs_ = 0, baselineBytes_ = 0;      // and the reward's L0 / M0 (0: the fastest variant's)
};

}  // namespace cagr::cuda
