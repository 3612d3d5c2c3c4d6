// A plan compiled for the GPU (see cuda_executable.h): creation (weights,
// module, streams, workspace), the per-batch state (arena, pointers,
// prepared library calls, kernel arguments, events) and the host side of
// a run. Issuing the steps, graph capture and timing: cuda_launch.cc.
#include "backends/cuda/cuda_executable.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "backends/cuda/cuda_executable_batch.h"
#include "backends/cuda/cuda_weights.h"
#include "cagr/reference.h"

namespace cagr::cuda {
namespace {

constexpr unsigned kDefaultSharedLimit = 48 * 1024;  // dynamic shared memory without opting in

size_t alignUp(size_t n) {
  return (n + kDeviceAlign - 1) / kDeviceAlign * kDeviceAlign;
}

// 90 for "sm_90a" / "compute_90", 0 when unreadable.
int archNumber(const std::string& arch) {
  size_t u = arch.find('_');
  return u == std::string::npos ? 0 : std::atoi(arch.c_str() + u + 1);
}

}  // namespace

CudaExecutable::CudaExecutable(std::shared_ptr<const Graph> plan, Program program, CompileStats stats)
    : owned_(std::move(plan)), g_(*owned_), prog_(std::move(program)), stats_(stats) {
  const char* sync = std::getenv("CAGR_CUDA_SYNC");
  syncEachStep_ = sync != nullptr && std::string(sync) == "1";
}

CudaExecutable::~CudaExecutable() {
  for (const StreamPtr& s : streams_) cudaStreamSynchronize(s.get());  // nothing in flight
  batches_.clear();  // graphs and arenas before the streams and the module they use
}

StatusOr<std::unique_ptr<CudaExecutable>> CudaExecutable::create(std::shared_ptr<const Graph> plan, Program program,
                                                                 const CompiledModule* module, CompileStats stats,
                                                                 const CompileOptions& options) {
  auto t0 = std::chrono::steady_clock::now();
  if (!(options.memoryWeight >= 0)) return invalidArgument("a negative memory weight (lambda_m)");
  if (!(options.baselineLatencyMs >= 0 && options.baselineBytes >= 0)) {
    return invalidArgument("a negative baseline latency or memory");
  }
  std::unique_ptr<CudaExecutable> e(new CudaExecutable(std::move(plan), std::move(program), stats));
  e->memoryWeight_ = options.memoryWeight;
  e->baselineMs_ = options.baselineLatencyMs;
  e->baselineBytes_ = options.baselineBytes;
  CAGR_RETURN_IF_ERROR(checkCuda(cudaSetDevice(deviceInfo().device), "cudaSetDevice"));
  CAGR_RETURN_IF_ERROR(e->uploadWeights());
  if (!e->prog_.kernels.empty()) {
    if (module == nullptr) return internalError("cuda backend: generated kernels but no compiled module");
    CAGR_RETURN_IF_ERROR(e->loadModule(*module));
  }
  CAGR_RETURN_IF_ERROR(e->createStreams());
  CAGR_ASSIGN_OR_RETURN(e->blas_, BlasContext::create());
  CAGR_RETURN_IF_ERROR(e->offerWgmmaTile());
  e->stats_.loadSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  e->stats_.totalSeconds = e->stats_.lowerSeconds + e->stats_.nvrtcSeconds + e->stats_.loadSeconds;
  return e;
}

Status CudaExecutable::uploadWeights() {
  weightBytes_ = weightOffsets(g_, prog_.weights, weightOffset_);
  std::vector<std::byte> host(weightBytes_);
  for (size_t i = 0; i < prog_.weights.size(); ++i) {
    CAGR_RETURN_IF_ERROR(writeWeight(g_, prog_.weights[i], host.data() + weightOffset_[i]));
  }
  CAGR_ASSIGN_OR_RETURN(weights_, deviceAlloc(weightBytes_, "the weights"));
  return checkCuda(cudaMemcpy(weights_.get(), host.data(), weightBytes_, cudaMemcpyHostToDevice),
                   "uploading " + std::to_string(weightBytes_) + " bytes of weights");
}

Status CudaExecutable::loadModule(const CompiledModule& module) {
  // CUBIN for this GPU; PTX (null-terminated) is JIT-compiled by the runtime.
  const void* image = !module.cubin.empty() ? static_cast<const void*>(module.cubin.data())
                                            : static_cast<const void*>(module.ptx.c_str());
  cudaLibrary_t lib = nullptr;
  CAGR_RETURN_IF_ERROR(checkCuda(
      cudaLibraryLoadData(&lib, image, nullptr, nullptr, 0, nullptr, nullptr, 0),
      "cudaLibraryLoadData (" + module.arch + " module of " + std::to_string(prog_.kernels.size()) + " kernels)"));
  library_.reset(lib);
  const char* pdl = std::getenv("CAGR_CUDA_PDL");
  gridDeps_ = archNumber(module.arch) >= 90 && (pdl == nullptr || std::string(pdl) != "0");
  for (const GeneratedKernel& k : prog_.kernels) {
    cudaKernel_t h = nullptr;
    CAGR_RETURN_IF_ERROR(checkCuda(cudaLibraryGetKernel(&h, lib, k.entry.c_str()), "cudaLibraryGetKernel " + k.entry));
    kernels_.push_back(h);
  }
  return Status::ok();
}

Status CudaExecutable::offerWgmmaTile() {
  const std::string arch = deviceInfo().arch();
  if (wgmmaMode() == WgmmaMode::kOff || arch != "sm_90a") return Status::ok();
  bool any = false;  // an f32 library GEMM over a weight (the rest wgmmaGemmRejection checks per call)
  for (const LibraryGemm& p : prog_.gemms) {
    any = any || (p.library == GemmLibrary::kCublasLt && p.math == Precision::kF32 &&
                  p.operands == Precision::kF32 && g_.isConstant(prog_.root(p.anchor.b)));
  }
  if (!any) return Status::ok();
  // Compiled here (NVRTC, cached by content): its time is part of loadSeconds.
  StatusOr<std::unique_ptr<WgmmaGemm>> w = WgmmaGemm::create(arch);
  if (!w.isOk()) {  // the library GEMMs still run; say why the tile is not offered
    std::fprintf(stderr, "cagr: CUDA: the f32 wgmma GEMM tile is not offered: %s\n", w.status().message().c_str());
    return Status::ok();
  }
  blas_->setWgmma(std::move(*w));
  return Status::ok();
}

Status CudaExecutable::createStreams() {
  for (int i = 0; i < prog_.numStreams(); ++i) {
    CAGR_ASSIGN_OR_RETURN(StreamPtr s, newStream());
    streams_.push_back(std::move(s));
  }
  return Status::ok();
}

void* CudaExecutable::weightPtr(const WeightFormat& f) const {
  auto it = std::find(prog_.weights.begin(), prog_.weights.end(), f);
  if (it == prog_.weights.end()) return nullptr;
  return static_cast<std::byte*>(weights_.get()) + weightOffset_[static_cast<size_t>(it - prog_.weights.begin())];
}

void* CudaExecutable::operandPtr(const Batch& bt, size_t s, ValueId v) const {
  ValueId root = prog_.root(v);
  if (!g_.isConstant(root)) return bt.ptr[static_cast<size_t>(root)];
  for (const WeightFormat& f : prog_.steps[s].constants) {
    if (f.value == root) return weightPtr(f);
  }
  return nullptr;
}

std::string CudaExecutable::stepWhere(size_t s) const {
  const ProgramStep& st = prog_.steps[s];
  return "step " + std::to_string(s) + " (" + st.name + ", " + nodeWhere(g_, st.nodes.front()) + ")";
}

StatusOr<std::unique_ptr<CudaExecutable::Batch>> CudaExecutable::makeBatch(const SymbolBindings& b,
                                                                           size_t gemmWorkspace, size_t cinWorkspace,
                                                                           size_t cinChunk, bool cinSlices) {
  auto bt = std::make_unique<Batch>();
  bt->bindings = b;
  bt->gemmWorkspaceLimit = gemmWorkspace;
  bt->cinWorkspaceLimit = cinWorkspace;
  bt->cinChunkBudget = cinChunk;
  const char* slice = std::getenv("CAGR_CIN_SLICE");
  bt->cinSlices = cinSlices || (slice != nullptr && std::string(slice) == "1");
  CAGR_ASSIGN_OR_RETURN(bt->plan, arenaShapes(g_, prog_, b));
  CAGR_RETURN_IF_ERROR(chooseGemms(*bt, gemmWorkspace));
  // Each library call's workspace is scratch of its step in the arena: it
  // shares bytes with buffers and calls it cannot overlap in time. A call
  // the wgmma tile runs (already chosen for its shape) needs none.
  std::vector<size_t>& workspace = bt->gemmWorkspace;
  workspace.assign(prog_.steps.size(), 0);
  for (size_t s = 0; s < workspace.size(); ++s) {
    if (bt->gemm[s] && !bt->gemm[s]->runsWgmma()) workspace[s] = bt->gemm[s]->workspaceBytes();
  }
  ArenaPlan bare = bt->plan;
  placeArena(g_, prog_, {}, bare);
  placeArena(g_, prog_, workspace, bt->plan);
  bt->workspaceBytes = bt->plan.size > bare.size ? bt->plan.size - bare.size : 0;
  CAGR_ASSIGN_OR_RETURN(bt->arena, deviceAlloc(bt->plan.size, "the activation arena"));
  bt->ptr.assign(g_.numValues(), nullptr);
  for (size_t v = 0; v < g_.numValues(); ++v) {
    if (bt->plan.inArena[v]) bt->ptr[v] = static_cast<std::byte*>(bt->arena.get()) + bt->plan.offset[v];
  }
  size_t staging = 0;
  for (ValueId v : g_.inputs()) {
    bt->inOffset.push_back(staging);
    staging += alignUp(bt->plan.bytes[static_cast<size_t>(v)]);
    bt->inputBytes += alignUp(bt->plan.bytes[static_cast<size_t>(v)]);
  }
  for (size_t i = 0; i < g_.outputs().size(); ++i) {
    bt->outOffset.push_back(staging);
    staging += alignUp(outputBytes(*bt, i));
  }
  CAGR_ASSIGN_OR_RETURN(bt->staging, pinnedAlloc(staging, "the input / output staging buffer"));
  CAGR_RETURN_IF_ERROR(prepareSteps(*bt));
  return bt;
}

Status CudaExecutable::chooseGemms(Batch& bt, size_t gemmWorkspace) {
  bt.gemm.resize(prog_.steps.size());
  bt.shapes.assign(prog_.steps.size(), "");
  for (size_t s = 0; s < prog_.steps.size(); ++s) {
    const ProgramStep& st = prog_.steps[s];
    if (st.kind != StepKind::kLibraryGemm) continue;
    const LibraryGemm& p = prog_.gemms[static_cast<size_t>(st.gemm)];
    const auto& shape = [&](ValueId v) -> const std::vector<int64_t>& { return bt.plan.shape[static_cast<size_t>(v)]; };
    CAGR_ASSIGN_OR_RETURN(cpu::GemmShape gs, gemmShape(p, shape(p.anchor.a), shape(p.anchor.b)));
    auto call = columnMajor(gs);
    if (!call.isOk()) return call.status().withContext(stepWhere(s));
    const bool constantB = g_.isConstant(prog_.root(p.anchor.b));
    CAGR_ASSIGN_OR_RETURN(bt.gemm[s],
                          PreparedGemm::create(*blas_, p, *call, stepWhere(s), gemmWorkspace, constantB));
    bt.shapes[s] = " " + gemmShapeText(gs, p.math);
  }
  return Status::ok();
}

Status CudaExecutable::prepareSteps(Batch& bt) {
  const size_t n = prog_.steps.size();
  bt.launch.resize(n);
  bt.pointerArgs.resize(n);
  bt.extentArgs.resize(n);
  bt.args.resize(n);
  bt.done.resize(n);
  for (size_t s = 0; s < n; ++s) {
    const ProgramStep& st = prog_.steps[s];
    for (int w : prog_.waits[s]) {  // another stream waits for step w: it records an event
      if (prog_.steps[static_cast<size_t>(w)].stream != st.stream && !bt.done[static_cast<size_t>(w)]) {
        CAGR_ASSIGN_OR_RETURN(bt.done[static_cast<size_t>(w)], newEvent(false));
      }
    }
    if (st.kind == StepKind::kGenerated) {
      CAGR_RETURN_IF_ERROR(prepareLaunch(bt, s));
      continue;
    }
    if (st.kind == StepKind::kCinGemm) {
      CAGR_RETURN_IF_ERROR(prepareCin(bt, s));
      continue;
    }
    const LibraryGemm& p = prog_.gemms[static_cast<size_t>(st.gemm)];
    GemmBuffers buf{operandPtr(bt, s, p.anchor.a), operandPtr(bt, s, p.anchor.b),
                    p.bias != kNoValue ? operandPtr(bt, s, p.bias) : nullptr,
                    p.addend != kNoValue ? operandPtr(bt, s, p.addend) : nullptr, bt.ptr[static_cast<size_t>(p.out)]};
    if (buf.a == nullptr || buf.b == nullptr || buf.out == nullptr || (p.bias != kNoValue && buf.bias == nullptr) ||
        (p.addend != kNoValue && buf.addend == nullptr)) {
      return internalError(stepWhere(s) + ": an operand has no device buffer");
    }
    void* ws = bt.gemmWorkspace[s] > 0 ? static_cast<std::byte*>(bt.arena.get()) + bt.plan.stepOffset.at(s) : nullptr;
    CAGR_RETURN_IF_ERROR(bt.gemm[s]->bind(buf, ws));
  }
  CAGR_RETURN_IF_ERROR(allocateCinScratch(bt));
  if (prog_.numStreams() > 1) {
    CAGR_ASSIGN_OR_RETURN(bt.fork, newEvent(false));
    for (int i = 1; i < prog_.numStreams(); ++i) {
      CAGR_ASSIGN_OR_RETURN(EventPtr e, newEvent(false));
      bt.join.push_back(std::move(e));
    }
  }
  return Status::ok();
}

// A generated kernel's argument array: its buffers, then its extents.
Status CudaExecutable::prepareLaunch(Batch& bt, size_t s) {
  const GeneratedKernel& k = prog_.kernels[static_cast<size_t>(prog_.steps[s].kernel)];
  std::vector<void*>& ptrs = bt.pointerArgs[s];
  std::vector<long long>& ext = bt.extentArgs[s];
  for (ValueId v : k.params) {
    void* p = operandPtr(bt, s, v);
    if (p == nullptr) return internalError(stepWhere(s) + ": no device buffer for %" + g_.value(v).name);
    ptrs.push_back(p);
  }
  std::vector<int64_t> extents;
  for (const ExtentRef& r : k.extents) {
    const auto& shape = bt.plan.shape[static_cast<size_t>(k.params.at(static_cast<size_t>(r.param)))];
    if (r.dim < 0 || static_cast<size_t>(r.dim) >= shape.size()) {
      return internalError(stepWhere(s) + ": extent of dim " + std::to_string(r.dim) + " of parameter " +
                           std::to_string(r.param) + " out of range");
    }
    extents.push_back(shape[static_cast<size_t>(r.dim)]);
    ext.push_back(static_cast<long long>(extents.back()));
  }
  for (void*& p : ptrs) bt.args[s].push_back(&p);
  for (long long& e : ext) bt.args[s].push_back(&e);
  bt.launch[s] = k.launch(extents);
  unsigned shared = bt.launch[s].sharedBytes;
  if (shared > kDefaultSharedLimit) {
    CAGR_RETURN_IF_ERROR(checkCuda(cudaKernelSetAttributeForDevice(kernels_[static_cast<size_t>(prog_.steps[s].kernel)],
                                                                   cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                                   static_cast<int>(shared), deviceInfo().device),
                                   stepWhere(s) + ": " + std::to_string(shared) + " bytes of shared memory"));
  }
  return Status::ok();
}

StatusOr<CudaExecutable::Batch*> CudaExecutable::bind(const std::vector<std::pair<std::string, Tensor>>& inputs) {
  CAGR_ASSIGN_OR_RETURN(std::vector<Tensor> given, matchGraphInputs(g_, inputs));
  std::vector<std::vector<int64_t>> shapes;
  for (const Tensor& t : given) shapes.push_back(t.shape());
  CAGR_ASSIGN_OR_RETURN(SymbolBindings b, g_.bindSymbols(shapes));
  auto it = batches_.find(b.values);
  if (it == batches_.end()) {
    CAGR_ASSIGN_OR_RETURN(std::unique_ptr<Batch> bt, chooseBatch(b, given));
    it = batches_.emplace(b.values, std::move(bt)).first;
  }
  last_ = it->second.get();
  CAGR_RETURN_IF_ERROR(upload(*last_, given));
  return last_;
}

Status CudaExecutable::upload(Batch& bt, const std::vector<Tensor>& given) {
  for (size_t i = 0; i < given.size(); ++i) {
    auto v = static_cast<size_t>(g_.inputs()[i]);
    if (given[i].byteSize() != bt.plan.bytes[v]) {
      return invalidArgument("input '" + g_.value(g_.inputs()[i]).name + "': " + std::to_string(given[i].byteSize()) +
                             " bytes where the device buffer holds " + std::to_string(bt.plan.bytes[v]));
    }
    std::memcpy(static_cast<std::byte*>(bt.staging.get()) + bt.inOffset[i], given[i].rawData(), given[i].byteSize());
  }
  return copyIn(bt);
}

Status CudaExecutable::copyIn(Batch& bt) {
  for (size_t i = 0; i < g_.inputs().size(); ++i) {
    auto v = static_cast<size_t>(g_.inputs()[i]);
    CAGR_RETURN_IF_ERROR(
        checkCuda(cudaMemcpyAsync(bt.ptr[v], static_cast<std::byte*>(bt.staging.get()) + bt.inOffset[i],
                                  bt.plan.bytes[v], cudaMemcpyHostToDevice, streams_[0].get()),
                  "copying input '" + g_.value(g_.inputs()[i]).name + "' to the device"));
  }
  return Status::ok();
}

Status CudaExecutable::copyOut(Batch& bt) {
  for (size_t i = 0; i < g_.outputs().size(); ++i) {
    ValueId root = prog_.root(g_.outputs()[i]);
    if (g_.isConstant(root)) continue;  // a constant output never reaches the device
    CAGR_RETURN_IF_ERROR(checkCuda(
        cudaMemcpyAsync(static_cast<std::byte*>(bt.staging.get()) + bt.outOffset[i], bt.ptr[static_cast<size_t>(root)],
                        outputBytes(bt, i), cudaMemcpyDeviceToHost, streams_[0].get()),
        "copying output '" + g_.value(g_.outputs()[i]).name + "' to the host"));
  }
  return Status::ok();
}

size_t CudaExecutable::outputBytes(const Batch& bt, size_t i) const {
  ValueId v = g_.outputs()[i];
  int64_t n = 1;
  for (int64_t d : bt.plan.shape[static_cast<size_t>(v)]) n *= d;
  return static_cast<size_t>(n) * deviceElementBytes(g_, v);
}

StatusOr<std::vector<Tensor>> CudaExecutable::download(Batch& bt) {
  CAGR_RETURN_IF_ERROR(copyOut(bt));
  CAGR_RETURN_IF_ERROR(checkCuda(cudaStreamSynchronize(streams_[0].get()),
                                 "running the plan (CAGR_CUDA_SYNC=1 runs it step by step and names the failing one)"));
  std::vector<Tensor> out;
  for (size_t i = 0; i < g_.outputs().size(); ++i) {
    ValueId v = g_.outputs()[i];
    Tensor t(g_.type(v).dtype, bt.plan.shape[static_cast<size_t>(v)]);
    const Tensor* c = g_.constant(prog_.root(v));
    const std::byte* src = c != nullptr ? c->rawData() : static_cast<std::byte*>(bt.staging.get()) + bt.outOffset[i];
    std::memcpy(t.rawData(), src, std::min(t.byteSize(), c != nullptr ? c->byteSize() : outputBytes(bt, i)));
    out.push_back(std::move(t));
  }
  return out;
}

StatusOr<std::vector<Tensor>> CudaExecutable::run(const std::vector<std::pair<std::string, Tensor>>& inputs) {
  std::lock_guard<std::recursive_mutex> lock(mutex_);  // one batch state in use at a time (backend.h)
  CAGR_ASSIGN_OR_RETURN(Batch * bt, bind(inputs));
  CAGR_RETURN_IF_ERROR(execute(*bt));
  return download(*bt);
}

MemoryBreakdown CudaExecutable::memoryBreakdown() const {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  MemoryBreakdown m;
  m.weightBytes = static_cast<int64_t>(weightBytes_);
  if (blas_ != nullptr && blas_->wgmma() != nullptr) {  // the wgmma tile's K-major copies of weights
    m.weightBytes += static_cast<int64_t>(blas_->wgmma()->copyBytes());
  }
  if (last_ == nullptr) return m;
  m.arenaBytes = static_cast<int64_t>(last_->plan.size);
  m.inputBytes = static_cast<int64_t>(last_->inputBytes);
  m.workspaceBytes = static_cast<int64_t>(last_->workspaceBytes);
  m.scratchBytes = static_cast<int64_t>(last_->cinScratchBytes);
  return m;
}

int64_t CudaExecutable::peakMemoryBytes() const {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  return last_ == nullptr ? 0 : memoryBreakdown().total();
}

std::vector<std::string> CudaExecutable::kernelReport() const {
  std::vector<std::string> out;
  for (size_t s = 0; s < prog_.steps.size(); ++s) {
    std::string stream = prog_.numStreams() > 1 ? "[stream " + std::to_string(prog_.steps[s].stream) + "] " : "";
    const bool tile = last_ != nullptr && last_->gemm.size() > s && last_->gemm[s] && last_->gemm[s]->runsWgmma();
    out.push_back(stream + prog_.steps[s].name + (last_ != nullptr ? last_->shapes[s] : "") +
                  (tile ? " on CAGR's 3xTF32 wgmma tile" : ""));
  }
  return out;
}

}  // namespace cagr::cuda
