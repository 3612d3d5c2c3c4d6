// The CPU backend: compiles a MIR plan into one Step per kernel (fast steps
// where a factory accepts the group, the reference fallback otherwise) and
// runs them over one activation arena. The memory plan is static per batch
// size: each buffer lives from the step that writes it to its last reader,
// and buffers whose lifetimes do not overlap share arena space. A concat's
// producers that can write their rows straight into its buffer do (that
// buffer then lives from the first of them) and get none of their own.
#include <omp.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <mutex>

#include "backends/cpu/step.h"
#include "backends/plan_memory.h"
#include "backends/cpu/step_profile.h"
#include "cagr/backend.h"
#include "cagr/reference.h"
#include "ir/dims.h"
#include "ir/graph_queries.h"
#include "ir/op_table.h"

namespace cagr::cpu {
namespace {

constexpr size_t kAlign = 64;

size_t alignUp(size_t n) { return (n + kAlign - 1) / kAlign * kAlign; }

struct AlignedFree {
  void operator()(std::byte* p) const { std::free(p); }
};

class Context : public RunContext {
 public:
  const Buffer& buffer(ValueId v) const override { return buffers[static_cast<size_t>(v)]; }
  int threads() const override { return numThreads; }
  std::vector<Buffer> buffers;
  int numThreads = 1;
};

class CpuExecutable : public Executable {
 public:
  // `plan` is the graph the steps were built from (they may keep references into it).
  CpuExecutable(std::shared_ptr<const Graph> plan, std::vector<std::unique_ptr<Step>> steps, std::vector<int> writer,
                std::vector<std::vector<ValueId>> reads, std::vector<ValueId> aliasOf,
                std::vector<std::vector<NodeId>> members, int threads)
      : owned_(std::move(plan)), g_(*owned_), steps_(std::move(steps)), writer_(std::move(writer)), readsOf_(std::move(reads)),
        aliasOf_(std::move(aliasOf)), members_(std::move(members)), threads_(threads) {
    ValueUses uses = valueUses(g_);
    lastReader_.assign(g_.numValues(), -1);
    for (size_t s = 0; s < steps_.size(); ++s) {
      for (ValueId v : readsOf_[s]) lastReader_[static_cast<size_t>(v)] = static_cast<int>(s);
    }
    for (size_t v = 0; v < g_.numValues(); ++v) {
      if (uses.isOutput[v]) lastReader_[v] = static_cast<int>(steps_.size());
      if (g_.isConstant(static_cast<ValueId>(v)) && uses.count(static_cast<ValueId>(v)) > 0) {
        weightBytes_ += static_cast<int64_t>(g_.constant(static_cast<ValueId>(v))->byteSize());
      }
    }
    // A view's readers keep the buffer it aliases alive.
    for (size_t v = 0; v < g_.numValues(); ++v) {
      ValueId root = aliasOf_[v];
      if (root != kNoValue) lastReader_[static_cast<size_t>(root)] = std::max(lastReader_[static_cast<size_t>(root)], lastReader_[v]);
    }
  }

  StatusOr<std::vector<Tensor>> run(const std::vector<std::pair<std::string, Tensor>>& inputs) override {
    std::lock_guard<std::mutex> lock(mutex_);  // one arena: runs take turns (backend.h)
    std::vector<Tensor> given;
    Context ctx;
    CAGR_RETURN_IF_ERROR(bind(inputs, given, ctx));
    for (const auto& step : steps_) CAGR_RETURN_IF_ERROR(step->run(ctx).withContext(step->kernelName()));
    std::vector<Tensor> out;
    for (ValueId v : g_.outputs()) {
      const Buffer& buf = ctx.buffers[static_cast<size_t>(v)];
      Tensor t(buf.dtype, buf.shape);
      std::copy_n(buf.data, t.byteSize(), t.rawData());
      out.push_back(std::move(t));
    }
    return out;
  }

  StatusOr<std::vector<KernelTiming>> profile(const std::vector<std::pair<std::string, Tensor>>& inputs,
                                              int repeats) override {
    std::lock_guard<std::mutex> lock(mutex_);
    std::vector<Tensor> given;
    Context ctx;
    CAGR_RETURN_IF_ERROR(bind(inputs, given, ctx));
    return timeSteps(steps_, members_, ctx, repeats);
  }

  int64_t peakMemoryBytes() const override {
    std::lock_guard<std::mutex> lock(mutex_);
    return lastArena_ == 0 && !ran_ ? 0 : static_cast<int64_t>(lastArena_) + weightBytes_;
  }

  std::vector<std::string> kernelReport() const override {
    std::vector<std::string> out;
    for (const auto& s : steps_) out.push_back(s->kernelName());
    return out;
  }

 private:
  // The buffers of one run: `inputs` (kept alive in `given`), constants and
  // the arena planned for their batch; sets the thread count.
  Status bind(const std::vector<std::pair<std::string, Tensor>>& inputs, std::vector<Tensor>& given, Context& ctx) {
    CAGR_ASSIGN_OR_RETURN(given, matchGraphInputs(g_, inputs));
    std::vector<std::vector<int64_t>> shapes;
    for (const Tensor& t : given) shapes.push_back(t.shape());
    CAGR_ASSIGN_OR_RETURN(SymbolBindings b, g_.bindSymbols(shapes));
    ctx.numThreads = threads_;
    ctx.buffers.resize(g_.numValues());
    for (size_t i = 0; i < given.size(); ++i) {
      Buffer& buf = ctx.buffers[static_cast<size_t>(g_.inputs()[i])];
      buf = Buffer{given[i].rawData(), given[i].shape(), given[i].dtype()};
    }
    for (size_t v = 0; v < g_.numValues(); ++v) {
      if (const Tensor* c = g_.constant(static_cast<ValueId>(v))) {
        ctx.buffers[v] = Buffer{const_cast<std::byte*>(c->rawData()), c->shape(), c->dtype()};
      }
    }
    CAGR_RETURN_IF_ERROR(placeIntermediates(b, ctx));
    omp_set_num_threads(threads_);
    return Status::ok();
  }

  // Sizes, lifetimes and arena offsets of every buffer a step writes, for
  // the batch `b` binds (re-planned only when the shapes change).
  Status placeIntermediates(const SymbolBindings& b, Context& ctx) {
    size_t nv = g_.numValues();
    std::vector<size_t> size(nv, 0);
    std::vector<int> birth(nv, 0), death(nv, 0);
    std::vector<std::vector<int64_t>> shape(nv);
    for (size_t v = 0; v < nv; ++v) {
      if (writer_[v] < 0) continue;
      CAGR_ASSIGN_OR_RETURN(shape[v], b.resolve(g_.type(static_cast<ValueId>(v)).dims));
      int64_t n = 1;
      for (int64_t d : shape[v]) n *= d;
      size[v] = alignUp(static_cast<size_t>(n) * dtypeSize(g_.type(static_cast<ValueId>(v)).dtype));
      birth[v] = writer_[v];
      death[v] = std::max(writer_[v], lastReader_[v]);
    }
    if (b.values != planFor_) {
      size_t total = planOffsets(size, intervalConflict(birth, death), offsets_);
      if (total > arenaSize_) {
        arena_.reset(static_cast<std::byte*>(std::aligned_alloc(kAlign, alignUp(std::max<size_t>(total, 1)))));
        if (!arena_) return internalError("cannot allocate a " + std::to_string(total) + "-byte arena");
        arenaSize_ = total;
      }
      planFor_ = b.values;
      lastArena_ = total;
    }
    ran_ = true;
    for (size_t v = 0; v < nv; ++v) {
      if (writer_[v] < 0) continue;
      ctx.buffers[v] = Buffer{arena_.get() + offsets_[v], shape[v], g_.type(static_cast<ValueId>(v)).dtype};
    }
    for (size_t v = 0; v < nv; ++v) {  // views: the root's bytes under their own shape
      ValueId root = aliasOf_[v];
      if (root == kNoValue) continue;
      CAGR_ASSIGN_OR_RETURN(auto s, b.resolve(g_.type(static_cast<ValueId>(v)).dims));
      ctx.buffers[v] = Buffer{ctx.buffers[static_cast<size_t>(root)].data, std::move(s), g_.type(static_cast<ValueId>(v)).dtype};
    }
    return Status::ok();
  }

  std::shared_ptr<const Graph> owned_;
  const Graph& g_;
  std::vector<std::unique_ptr<Step>> steps_;
  std::vector<int> writer_;      // value -> step that writes it (-1: none)
  std::vector<std::vector<ValueId>> readsOf_;
  std::vector<ValueId> aliasOf_;  // value -> the buffer a view output shares (kNoValue: its own)
  std::vector<std::vector<NodeId>> members_;  // step -> the plan nodes it runs
  std::vector<int> lastReader_;  // value -> last step reading it (steps.size() for graph outputs)
  int threads_;
  int64_t weightBytes_ = 0;
  std::unique_ptr<std::byte, AlignedFree> arena_;
  size_t arenaSize_ = 0, lastArena_ = 0;
  std::vector<size_t> offsets_;
  std::vector<int64_t> planFor_;
  bool ran_ = false;
  mutable std::mutex mutex_;  // guards the arena and its plan across threads
};

// The value whose bytes concat input `v` is: v, or the root of the lone
// views it is, when v and those views have no other use than this one input
// of `concat` (kNoValue otherwise).
ValueId placeableRoot(const Graph& plan, const ValueUses& uses, const std::vector<ValueId>& aliasOf, NodeId concat,
                      ValueId v) {
  const Node& c = plan.node(concat);
  if (std::count(c.inputs.begin(), c.inputs.end(), v) != 1) return kNoValue;
  const ValueId root = aliasOf[static_cast<size_t>(v)] == kNoValue ? v : aliasOf[static_cast<size_t>(v)];
  if (plan.type(root).dims != plan.type(v).dims) return kNoValue;
  for (size_t u = 0; u < plan.numValues(); ++u) {  // root and every view of it
    if (u != static_cast<size_t>(root) && aliasOf[u] != root) continue;
    if (uses.isOutput[u]) return kNoValue;
    for (NodeId n : uses.consumers[u]) {
      const Node& m = plan.node(n);
      bool view = !m.outputs.empty() && aliasOf[static_cast<size_t>(m.outputs[0])] == root;
      if (!(view || (n == concat && static_cast<ValueId>(u) == v))) return kNoValue;
    }
  }
  return root;
}

// Concats along their last, static axis (planned in place or not): each
// input that is f32 and has no other use (directly or through lone views),
// whose step can write it as columns of the concat's buffer, does so; the
// concat copies the rest. `writer` is updated: placed values have no
// buffer, the concat's is born with its first placed producer.
void placeConcatInputs(const Graph& plan, const ValueUses& uses, const std::vector<ValueId>& aliasOf,
                       const std::vector<std::vector<NodeId>>& members, std::vector<std::unique_ptr<Step>>& steps,
                       std::vector<int>& writer) {
  for (size_t s = 0; s < steps.size(); ++s) {
    if (members[s].size() != 1) continue;
    const NodeId cid = members[s][0];
    const Node& c = plan.node(cid);
    if (c.op != OpKind::kConcat) continue;
    const ValueId out = c.outputs[0];
    const TensorType& ot = plan.type(out);
    const int64_t last = static_cast<int64_t>(ot.rank()) - 1;
    auto axis = normAxis(intAttr(c, "axis"), ot.rank());
    bool f32 = ot.dtype == DType::kF32 && plan.value(out).mir.storage == Precision::kF32;
    if (!f32 || !axis || *axis != last || last < 1 || isSymbolic(ot.dims[static_cast<size_t>(last)])) continue;
    std::vector<int64_t> extent(c.inputs.size(), 0);
    if (!steps[s]->skipInputs(extent)) continue;  // this concat step copies every input
    int64_t pos = 0;
    bool any = false;
    for (size_t k = 0; k < c.inputs.size(); ++k) {
      const ValueId v = c.inputs[k];
      const Dim e = plan.type(v).dims.back();
      const ValueId root = isSymbolic(e) ? kNoValue : placeableRoot(plan, uses, aliasOf, cid, v);
      const auto r = static_cast<size_t>(root);
      bool own = root != kNoValue && writer[r] >= 0 && plan.type(root).dtype == DType::kF32 &&
                 plan.value(root).mir.storage == Precision::kF32 && plan.value(v).mir.storage == Precision::kF32;
      if (own && steps[static_cast<size_t>(writer[r])]->placeOutput(root, out, pos, ot.dims[static_cast<size_t>(last)])) {
        extent[k] = e;
        writer[static_cast<size_t>(out)] = std::min(writer[static_cast<size_t>(out)], writer[r]);
        writer[r] = -1;
        any = true;
      }
      pos += e;
    }
    if (any) steps[s]->skipInputs(extent);
  }
}

StatusOr<std::unique_ptr<Step>> buildStep(const StepRequest& r) {
  for (StepFactory f : {makeGemmStep, makeEmbeddingStep, makeRecStep, makeEltwiseStep, makeSpmmStep, makeReferenceStep}) {
    auto s = f(r);
    if (s.isOk()) return s;
    if (s.status().code() != ErrorCode::kUnsupported) return s.status();
  }
  return internalError("no step runs the group of " + nodeWhere(r.g, r.members.front()));
}

class CpuBackend : public ExecutionBackend {
 public:
  BackendCapabilities capabilities() const override {
    BackendCapabilities c;
    c.name = "cpu";
    c.family = Backend::kCpu;
    c.threads = omp_get_max_threads();
    c.storage = {Precision::kF32, Precision::kBF16, Precision::kF16, Precision::kInt8Rowwise};
    c.math = {Precision::kF32};
    c.note = "oneDNN / OpenBLAS / own kernels on this host; reference kernels for what they do not cover";
    for (const KernelInfo& k : kernelCatalog()) {
      if (k.backend == Backend::kCpu && k.pattern != Pattern::kSingle) c.kernels.push_back(k.name);
    }
    return c;
  }

  StatusOr<std::unique_ptr<Executable>> compile(const Graph& given, const CompileOptions& opts) override {
    // Steps keep references into the plan: they and the executable share this copy.
    auto owned = std::make_shared<const Graph>(given);
    const Graph& plan = *owned;
    // The cpu family's target; static, so steps may keep references to its profile.
    static const StatusOr<Target> host = resolveTarget("x86-64");
    if (!host.isOk()) return host.status();
    const Target& t = *host;
    CAGR_RETURN_IF_ERROR(verifyPlan(plan, t).withContext("cpu backend: the plan is not a valid cpu plan"));
    CAGR_ASSIGN_OR_RETURN(auto order, scheduleKernels(plan));
    ValueUses uses = valueUses(plan);
    std::vector<std::unique_ptr<Step>> steps;
    std::vector<int> writer(plan.numValues(), -1);
    std::vector<std::vector<ValueId>> reads;
    std::vector<ValueId> aliasOf(plan.numValues(), kNoValue);
    std::vector<std::vector<NodeId>> stepMembers;
    for (const auto& members : order) {
      if (isAliasGroup(plan, members)) {  // a lone view: no step, its output shares its input's bytes
        recordAlias(plan, members[0], aliasOf);
        continue;
      }
      CAGR_ASSIGN_OR_RETURN(GroupShape shape, classifyGroup(plan, members));
      StepRequest r{plan, members, shape, plan.node(members.front()).mir.kernel, groupOutputs(plan, uses, members), t.hw};
      CAGR_ASSIGN_OR_RETURN(std::unique_ptr<Step> s, buildStep(r));
      for (ValueId v : s->writes()) writer[static_cast<size_t>(v)] = static_cast<int>(steps.size());
      std::vector<ValueId> in;
      for (NodeId m : members) {
        for (ValueId v : plan.node(m).inputs) {
          if (v != kNoValue) in.push_back(v);
        }
      }
      reads.push_back(std::move(in));
      steps.push_back(std::move(s));
      stepMembers.push_back(members);
    }
    placeConcatInputs(plan, uses, aliasOf, stepMembers, steps, writer);
    int threads = opts.threads > 0 ? opts.threads : omp_get_max_threads();
    return std::unique_ptr<Executable>(
        std::make_unique<CpuExecutable>(std::move(owned), std::move(steps), std::move(writer), std::move(reads),
                                        std::move(aliasOf), std::move(stepMembers), threads));
  }
};

}  // namespace

std::unique_ptr<ExecutionBackend> makeCpuBackend() { return std::make_unique<CpuBackend>(); }

}  // namespace cagr::cpu
