// The per-batch-size state of a CudaExecutable, shared by the files that
// build it (cuda_executable.cc) and issue it (cuda_launch.cc).
#pragma once

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "backends/cuda/cuda_cin_run.h"
#include "backends/cuda/cuda_executable.h"

namespace cagr::cuda {

struct CudaExecutable::Batch {
  SymbolBindings bindings;
  ArenaPlan plan;                                   // library workspaces placed in it as step scratch
  DevicePtr arena;                                  // plan.size bytes
  size_t gemmWorkspaceLimit = 0;                    // the most workspace one library call may ask for
  size_t cinWorkspaceLimit = 0;                     // the most workspace one CIN GEMM may ask for
  size_t cinChunkBudget = 0;                        // the most Z and Y bytes of one CIN chunk (0: the default)
  bool cinSlices = false;                           // CIN GEMMs in K slices where they have them
  size_t workspaceBytes = 0;                        // what the workspaces add to the arena's size
  size_t inputBytes = 0;                            // the graph inputs' arena bytes
  std::vector<void*> ptr;                           // value -> its device bytes (arena values; views use their root)
  PinnedPtr staging;                                // inputs, then outputs
  std::vector<size_t> inOffset, outOffset;          // per graph input / output, in staging
  std::vector<std::unique_ptr<PreparedGemm>> gemm;  // per step: the library call (library steps)
  std::vector<size_t> gemmWorkspace;                // per step: its call's workspace in the arena (none for the tile)
  std::vector<Launch> launch;                       // per step: grid, block, shared memory (generated steps)
  std::vector<std::vector<void*>> pointerArgs;      // per step: its buffers' device pointers
  std::vector<std::vector<long long>> extentArgs;   // per step: its extents
  std::vector<std::vector<void*>> args;             // per step: cudaLaunchKernel's argument array
  std::vector<EventPtr> done;                       // per step: recorded after it when another stream waits for it
  EventPtr fork;                                    // streams > 0 start after stream 0 reaches it
  std::vector<EventPtr> join;                       // per stream > 0: stream 0 waits for its end
  GraphExecPtr graph;                               // captured on the first run at this size
  std::vector<std::string> shapes;                  // per step: " [MxNxK f32]" for library GEMMs
  std::vector<std::unique_ptr<PreparedCin>> cin;    // per step: the cublaslt.cin layer (kCinGemm steps)
  DevicePtr cinScratch;                             // the CIN steps' outer-product chunks, a slice per stream
  std::vector<size_t> cinScratchOffset;             // per stream: its slice's offset
  size_t cinScratchBytes = 0;

  /// The most workspace any one library call / CIN GEMM was given.
  size_t largestGemmWorkspace() const {
    return gemmWorkspace.empty() ? 0 : *std::max_element(gemmWorkspace.begin(), gemmWorkspace.end());
  }
  /// Whether the arena holds workspace for a call the wgmma tile runs
  /// (chosen on the first run, after the arena was placed).
  bool holdsUnusedWorkspace() const {
    for (size_t s = 0; s < gemm.size(); ++s) {
      if (gemm[s] && gemm[s]->runsWgmma() && gemmWorkspace[s] > 0) return true;
    }
    return false;
  }
  size_t largestCinWorkspace() const {
    size_t most = 0;
    for (const auto& c : cin) most = std::max(most, c ? c->workspaceBytes() : 0);
    return most;
  }
  bool anyCinSliced() const {
    return std::any_of(cin.begin(), cin.end(), [](const auto& c) { return c && c->sliced(); });
  }
  /// The largest chunk (Z and Y bytes) of any CIN GEMM.
  size_t largestCinChunk() const {
    size_t most = 0;
    for (const auto& c : cin) most = std::max(most, c ? c->chunkBytes() : 0);
    return most;
  }
};

}  // namespace cagr::cuda
