// Issuing a compiled plan on the GPU (see cuda_executable.h): the steps on
// their streams with events for cross-stream dependencies, the capture of
// that into one CUDA graph per batch size (after a warm-up run that syncs
// after each step, so lazy loading stays out of the capture and a faulting
// kernel is named), its replay, and the event-timed measurements -- among
// them chooseBatch's, which keeps the library workspace variant of a batch
// size that trades replay time against device bytes best (at the reward's
// lambda_m), or the finer CIN chunks
// (CAGR_CUDA_WORKSPACE_CHOICE=0: always the heuristics'; =log: the choice on
// stderr).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "backends/cuda/cuda_executable_batch.h"

namespace cagr::cuda {
namespace {

Status record(const EventPtr& e, cudaStream_t s) {
  return checkCuda(cudaEventRecord(e.get(), s), "cudaEventRecord");
}
Status wait(cudaStream_t s, const EventPtr& e) {
  return checkCuda(cudaStreamWaitEvent(s, e.get(), 0), "cudaStreamWaitEvent");
}

StatusOr<double> elapsedMs(const EventPtr& a, const EventPtr& b) {
  float ms = 0;
  CAGR_RETURN_IF_ERROR(checkCuda(cudaEventElapsedTime(&ms, a.get(), b.get()), "cudaEventElapsedTime"));
  return static_cast<double>(ms);
}

const char* workspaceChoiceEnv() { return std::getenv("CAGR_CUDA_WORKSPACE_CHOICE"); }

bool workspaceChoice() {
  static const bool kOn = workspaceChoiceEnv() == nullptr || std::strcmp(workspaceChoiceEnv(), "0") != 0;
  return kOn;
}

// CAGR_CUDA_WORKSPACE_CHOICE=log: each variant's time and bytes on stderr.
bool workspaceChoiceLog() {
  static const bool kLog = workspaceChoiceEnv() != nullptr && std::strcmp(workspaceChoiceEnv(), "log") == 0;
  return kLog;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

StatusOr<std::vector<std::pair<EventPtr, EventPtr>>> timingPairs(size_t n) {
  std::vector<std::pair<EventPtr, EventPtr>> ev;
  for (size_t i = 0; i < n; ++i) {
    CAGR_ASSIGN_OR_RETURN(EventPtr a, newEvent(true));
    CAGR_ASSIGN_OR_RETURN(EventPtr b, newEvent(true));
    ev.emplace_back(std::move(a), std::move(b));
  }
  return ev;
}

}  // namespace

Status CudaExecutable::enqueueStep(Batch& bt, size_t s) {
  const ProgramStep& st = prog_.steps[s];
  cudaStream_t stream = streams_[static_cast<size_t>(st.stream)].get();
  if (st.kind == StepKind::kCinGemm) {
    const size_t at = bt.cinScratchOffset[static_cast<size_t>(st.stream)];
    return bt.cin[s]->enqueue(stream, static_cast<std::byte*>(bt.cinScratch.get()) + at);
  }
  if (st.kind == StepKind::kLibraryGemm) return bt.gemm[s]->enqueue(stream);
  const Launch& l = bt.launch[s];
  if (static_cast<uint64_t>(l.grid[0]) * l.grid[1] * l.grid[2] == 0) return Status::ok();  // nothing to compute
  dim3 grid(l.grid[0], l.grid[1], l.grid[2]), block(l.block[0], l.block[1], l.block[2]);
  // A cudaKernel_t passes as the function pointer of cudaLaunchKernel.
  const void* fn = reinterpret_cast<const void*>(kernels_[static_cast<size_t>(st.kernel)]);
  cudaLaunchAttribute attrs[2];
  unsigned n = 0;
  if (l.clusterY > 1) {  // blocks along y form clusters (the kernel splits its work across them)
    attrs[n].id = cudaLaunchAttributeClusterDimension;
    attrs[n].val.clusterDim.x = 1;
    attrs[n].val.clusterDim.y = l.clusterY;
    attrs[n].val.clusterDim.z = 1;
    ++n;
  }
  // A programmatic dependent of the kernel before it on this stream: launched
  // as that one's blocks start, it waits in CAGR_GRID_DEPS() for its end.
  if (gridDeps_ && prog_.kernels[static_cast<size_t>(st.kernel)].gridDeps) {
    attrs[n].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attrs[n].val.programmaticStreamSerializationAllowed = 1;
    ++n;
  }
  if (n > 0) {
    cudaLaunchConfig_t c{};
    c.gridDim = grid;
    c.blockDim = block;
    c.dynamicSmemBytes = l.sharedBytes;
    c.stream = stream;
    c.attrs = attrs;
    c.numAttrs = n;
    return checkCuda(cudaLaunchKernelExC(&c, fn, bt.args[s].data()), stepWhere(s) + ": cudaLaunchKernelExC");
  }
  return checkCuda(cudaLaunchKernel(fn, grid, block, bt.args[s].data(), l.sharedBytes, stream),
                   stepWhere(s) + ": cudaLaunchKernel");
}

Status CudaExecutable::issue(Batch& bt, bool sync, StepEvents* events) {
  cudaStream_t s0 = streams_[0].get();
  if (streams_.size() > 1) {  // the other streams start from stream 0 (which a capture runs on)
    CAGR_RETURN_IF_ERROR(record(bt.fork, s0));
    for (size_t i = 1; i < streams_.size(); ++i) CAGR_RETURN_IF_ERROR(wait(streams_[i].get(), bt.fork));
  }
  for (size_t s = 0; s < prog_.steps.size(); ++s) {
    const ProgramStep& st = prog_.steps[s];
    cudaStream_t stream = streams_[static_cast<size_t>(st.stream)].get();
    for (int w : prog_.waits[s]) {
      if (prog_.steps[static_cast<size_t>(w)].stream != st.stream) {
        CAGR_RETURN_IF_ERROR(wait(stream, bt.done[static_cast<size_t>(w)]));
      }
    }
    if (events != nullptr) CAGR_RETURN_IF_ERROR(record((*events)[s].first, stream));
    CAGR_RETURN_IF_ERROR(enqueueStep(bt, s));
    if (events != nullptr) CAGR_RETURN_IF_ERROR(record((*events)[s].second, stream));
    if (bt.done[s]) CAGR_RETURN_IF_ERROR(record(bt.done[s], stream));
    if (sync) CAGR_RETURN_IF_ERROR(checkCuda(cudaStreamSynchronize(stream), stepWhere(s)));
  }
  for (size_t i = 1; i < streams_.size(); ++i) {  // stream 0 ends after all of them
    CAGR_RETURN_IF_ERROR(record(bt.join[i - 1], streams_[i].get()));
    CAGR_RETURN_IF_ERROR(wait(s0, bt.join[i - 1]));
  }
  return Status::ok();
}

Status CudaExecutable::capture(Batch& bt) {
  cudaStream_t s0 = streams_[0].get();
  CAGR_RETURN_IF_ERROR(
      checkCuda(cudaStreamBeginCapture(s0, cudaStreamCaptureModeThreadLocal), "cudaStreamBeginCapture"));
  Status issued = issue(bt, false, nullptr);
  cudaGraph_t graph = nullptr;
  cudaError_t ended = cudaStreamEndCapture(s0, &graph);
  if (!issued.isOk()) {
    if (graph != nullptr) cudaGraphDestroy(graph);
    cudaGetLastError();
    return issued.withContext("capturing the CUDA graph");
  }
  CAGR_RETURN_IF_ERROR(checkCuda(ended, "cudaStreamEndCapture"));
  cudaGraphExec_t exec = nullptr;
  cudaError_t made = cudaGraphInstantiate(&exec, graph, 0);
  cudaGraphDestroy(graph);
  CAGR_RETURN_IF_ERROR(checkCuda(made, "cudaGraphInstantiate"));
  bt.graph.reset(exec);
  return Status::ok();
}

Status CudaExecutable::execute(Batch& bt) {
  if (syncEachStep_) return issue(bt, true, nullptr);
  if (!bt.graph) {
    CAGR_RETURN_IF_ERROR(issue(bt, true, nullptr).withContext("first run at this batch size"));
    CAGR_RETURN_IF_ERROR(shrinkCinScratch(bt));
    CAGR_RETURN_IF_ERROR(capture(bt));
  }
  return checkCuda(cudaGraphLaunch(bt.graph.get(), streams_[0].get()), "cudaGraphLaunch");
}

StatusOr<std::vector<KernelTiming>> CudaExecutable::profile(const std::vector<std::pair<std::string, Tensor>>& inputs,
                                                            int repeats) {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  CAGR_RETURN_IF_ERROR(run(inputs).status());  // warm: state built, graph captured
  Batch& bt = *last_;
  const size_t n = prog_.steps.size();
  CAGR_ASSIGN_OR_RETURN(StepEvents ev, timingPairs(n));
  std::vector<std::vector<double>> ms(n);
  for (int r = 0; r < std::max(repeats, 1); ++r) {
    CAGR_RETURN_IF_ERROR(issue(bt, false, &ev));
    CAGR_RETURN_IF_ERROR(checkCuda(cudaStreamSynchronize(streams_[0].get()), "profiling run"));
    for (size_t s = 0; s < n; ++s) {
      CAGR_ASSIGN_OR_RETURN(double t, elapsedMs(ev[s].first, ev[s].second));
      ms[s].push_back(t);
    }
  }
  std::vector<std::string> names = kernelReport();
  std::vector<KernelTiming> out;
  for (size_t s = 0; s < n; ++s) {
    KernelTiming k;
    k.kernel = names[s];
    for (NodeId m : prog_.steps[s].nodes) {
      NodeId planNode = planNodes_.empty() ? m : planNodes_[static_cast<size_t>(m)];
      if (planNode >= 0) k.nodes.push_back(planNode);
    }
    k.medianMs = median(ms[s]);
    k.minMs = *std::min_element(ms[s].begin(), ms[s].end());
    k.cpuMs = 0;  // device time: the host only enqueues
    out.push_back(std::move(k));
  }
  return out;
}

StatusOr<std::vector<double>> CudaExecutable::replayTimes(Batch& bt, int replays) {
  if (!bt.graph) {
    CAGR_RETURN_IF_ERROR(execute(bt));
    if (!bt.graph) return unsupported("CAGR_CUDA_SYNC=1 runs the plan without a CUDA graph: nothing to replay");
  }
  cudaStream_t s0 = streams_[0].get();
  CAGR_ASSIGN_OR_RETURN(StepEvents ev, timingPairs(static_cast<size_t>(std::max(replays, 1))));
  for (auto& [a, b] : ev) {  // back to back: the GPU timeline, not the host's enqueue rate
    CAGR_RETURN_IF_ERROR(record(a, s0));
    CAGR_RETURN_IF_ERROR(checkCuda(cudaGraphLaunch(bt.graph.get(), s0), "cudaGraphLaunch"));
    CAGR_RETURN_IF_ERROR(record(b, s0));
  }
  CAGR_RETURN_IF_ERROR(checkCuda(cudaStreamSynchronize(s0), "timed replays"));
  std::vector<double> out;
  for (auto& [a, b] : ev) {
    CAGR_ASSIGN_OR_RETURN(double ms, elapsedMs(a, b));
    out.push_back(ms);
  }
  return out;
}

StatusOr<std::unique_ptr<CudaExecutable::Batch>> CudaExecutable::chooseBatch(const SymbolBindings& b,
                                                                             const std::vector<Tensor>& given) {
  CAGR_ASSIGN_OR_RETURN(std::unique_ptr<Batch> first, makeBatch(b, kWorkspaceLimit, kWorkspaceLimit));
  // CIN chunks of half and a quarter of the first's largest (CAGR_CIN_CHUNK_KB
  // fixes the chunk: none then): the outer products' scratch shrinks with them.
  const size_t chunk = std::getenv("CAGR_CIN_CHUNK_KB") == nullptr ? first->largestCinChunk() : 0;
  if (syncEachStep_ || (first->largestGemmWorkspace() == 0 && first->largestCinWorkspace() == 0 && chunk == 0) ||
      !workspaceChoice()) {
    return first;
  }
  // Variants by falling workspace limit; one whose limit the previous
  // variant already keeps to would be the same plan.
  std::vector<std::unique_ptr<Batch>> v;
  v.push_back(std::move(first));
  // Library calls' workspace first (the CIN GEMMs' split-K kernels are what
  // make a small batch's CIN fast), then none anywhere.
  const std::pair<size_t, size_t> limits[] = {
      {kSmallWorkspaceLimit, kWorkspaceLimit}, {0, kWorkspaceLimit}, {0, 0}};
  for (auto [gemm, cin] : limits) {
    if (v.back()->largestGemmWorkspace() <= gemm && v.back()->largestCinWorkspace() <= cin) continue;
    StatusOr<std::unique_ptr<Batch>> bt = makeBatch(b, gemm, cin);
    if (bt.isOk()) v.push_back(std::move(*bt));  // else some call has no algorithm within the limit
  }
  // The CIN GEMMs in K slices (the outer product one slice at a time).
  if (chunk > 0 && !v[0]->anyCinSliced()) {
    StatusOr<std::unique_ptr<Batch>> bt = makeBatch(b, kWorkspaceLimit, kWorkspaceLimit, 0, true);
    if (bt.isOk() && (*bt)->anyCinSliced()) v.push_back(std::move(*bt));
  }
  size_t last = chunk;
  for (size_t part : {2, 4}) {
    if (chunk / part == 0) break;
    StatusOr<std::unique_ptr<Batch>> bt = makeBatch(b, kWorkspaceLimit, kWorkspaceLimit, chunk / part);
    if (!bt.isOk()) continue;
    const size_t got = (*bt)->largestCinChunk();
    if (got >= last) break;  // a sample a chunk already: no finer
    last = got;
    v.push_back(std::move(*bt));
  }
  if (v.size() == 1) return std::move(v[0]);
  for (auto& bt : v) CAGR_RETURN_IF_ERROR(upload(*bt, given));
  // The first run tunes each library call, the wgmma tile against cuBLASLt
  // among it: a variant whose arena holds workspace for a call the tile then
  // runs gets a copy without it (DCN-v2 at 4096 on an H100: 8 MiB for its
  // 4096x400x400 layer), timed with the others (that variant's algorithms, a
  // smaller arena).
  for (size_t i = 0, made = v.size(); i < made; ++i) {
    CAGR_RETURN_IF_ERROR(execute(*v[i]));
    if (!v[i]->holdsUnusedWorkspace()) continue;
    StatusOr<std::unique_ptr<Batch>> bt =
        makeBatch(b, v[i]->gemmWorkspaceLimit, v[i]->cinWorkspaceLimit, v[i]->cinChunkBudget, v[i]->cinSlices);
    if (!bt.isOk()) continue;
    CAGR_RETURN_IF_ERROR(upload(**bt, given));
    v.push_back(std::move(*bt));
  }
  // Interleaved, so a clock or L2 drift falls on all alike.
  std::vector<std::vector<double>> ms(v.size());
  for (int round = 0; round < kWorkspaceChoiceRounds; ++round) {
    for (size_t i = 0; i < v.size(); ++i) {
      CAGR_ASSIGN_OR_RETURN(std::vector<double> t, replayTimes(*v[i], kWorkspaceChoiceReplays));
      ms[i].insert(ms[i].end(), t.begin(), t.end());
    }
  }
  std::vector<double> med;
  std::vector<size_t> bytes;
  for (size_t i = 0; i < v.size(); ++i) {
    med.push_back(median(ms[i]));
    bytes.push_back(weightBytes_ + v[i]->plan.size + v[i]->cinScratchBytes);
  }
  const int keep =
      pickWorkspaceVariant(med, bytes, memoryWeight_, kWorkspaceChoiceTolerance, baselineMs_, baselineBytes_);
  for (size_t i = 0; i < v.size() && workspaceChoiceLog(); ++i) {
    std::fprintf(stderr,
                 "workspace variant %zu: GEMMs %zu B and CIN GEMMs %zu B of workspace, CIN chunks of %zu B%s, %zu B "
                 "on the device, replay median %.4f ms%s\n",
                 i, v[i]->largestGemmWorkspace(), v[i]->largestCinWorkspace(), v[i]->largestCinChunk(),
                 v[i]->anyCinSliced() ? " (K slices)" : "", bytes[i], med[i],
                 static_cast<int>(i) == keep ? " (kept)" : "");
    for (size_t st = 0; st < prog_.steps.size(); ++st) {  // where its library workspace goes
      if (v[i]->gemmWorkspace[st] == 0) continue;
      std::fprintf(stderr, "  %s%s: %zu B of workspace%s\n", stepWhere(st).c_str(), v[i]->shapes[st].c_str(),
                   v[i]->gemmWorkspace[st], v[i]->gemm[st]->runsWgmma() ? " (unused: the wgmma tile runs it)" : "");
    }
  }
  return std::move(v[static_cast<size_t>(std::max(keep, 0))]);
}

StatusOr<ReplayTiming> CudaExecutable::timeReplays(const std::vector<std::pair<std::string, Tensor>>& inputs,
                                                   int replays, int transfers) {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  CAGR_RETURN_IF_ERROR(run(inputs).status());  // inputs on the device, graph captured
  Batch& bt = *last_;
  if (!bt.graph) return unsupported("CAGR_CUDA_SYNC=1 runs the plan without a CUDA graph: nothing to replay");
  cudaStream_t s0 = streams_[0].get();
  ReplayTiming t;
  CAGR_ASSIGN_OR_RETURN(t.replayMs, replayTimes(bt, replays));
  CAGR_ASSIGN_OR_RETURN(StepEvents io, timingPairs(3));
  std::vector<double> up, down;
  for (int i = 0; i < std::max(transfers, 1); ++i) {
    CAGR_RETURN_IF_ERROR(record(io[0].first, s0));
    CAGR_RETURN_IF_ERROR(copyIn(bt));
    CAGR_RETURN_IF_ERROR(record(io[1].first, s0));
    CAGR_RETURN_IF_ERROR(copyOut(bt));
    CAGR_RETURN_IF_ERROR(record(io[2].first, s0));
    CAGR_RETURN_IF_ERROR(checkCuda(cudaStreamSynchronize(s0), "timed copies"));
    CAGR_ASSIGN_OR_RETURN(double u, elapsedMs(io[0].first, io[1].first));
    CAGR_ASSIGN_OR_RETURN(double d, elapsedMs(io[1].first, io[2].first));
    up.push_back(u);
    down.push_back(d);
  }
  t.uploadMs = median(up);
  t.downloadMs = median(down);
  t.memory = memoryBreakdown();
  t.peakBytes = t.memory.total();
  const DeviceInfo& dev = deviceInfo();
  t.device = dev.name + " (sm_" + std::to_string(dev.major) + std::to_string(dev.minor) + ")";
  return t;
}

}  // namespace cagr::cuda
