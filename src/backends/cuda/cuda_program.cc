// Lowering a plan to the CUDA backend's steps (see cuda_program.h): GEMM
// groups to cuBLASLt / cuBLAS with what their epilogue runs, everything else
// (and what a library epilogue leaves over) to the code generator, lone
// views to aliases; then the streams, the waits between steps and the
// happens-before order the arena planner relies on.
#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>

#include "backends/cuda/cuda_program.h"
#include "backends/cuda/gemm_wgmma.h"
#include "backends/plan_memory.h"
#include "ir/graph_queries.h"
#include "lower/op_sets.h"
#include "lower/pad_gemm_dims.h"
#include "lower/split_concat_gemm.h"

namespace cagr::cuda {
namespace {

constexpr int64_t kNominalSymbol = 7;  // symbol value a GEMM's layout is checked at when lowering

// Whether a CIN layer whose plan kernel is `k` runs on cublaslt.cin:
// $CAGR_CUDA_CIN=cublaslt / nvrtc overrides the plan for every layer (a
// side-by-side of the two kernels on one plan), else the plan decides; an
// unassigned layer (k = 0) runs on cuBLASLt in bf16 / f16 math (before
// sm_90 nvrtc.cin has only its wmma kernel there, 49 TFLOP/s on the H200 in
// bf16 against cublaslt.cin's 203; on sm_90 its bf16 warpgroup kernel is
// faster, which greedy finds in the profile's nvrtc.cin_bf16 and assigns)
// and on nvrtc.cin's step kernels in f32 and tf32 (the
// cost model prices it so: plan_cost.cc memberTime; xDeepFM's 200x200x22
// layers probed on one H100 in tf32 at 191 TFLOP/s on the warpgroup kernel
// against cublaslt.cin's 119). A plan still chooses either by its kernel.
bool cinOnCublasLt(KernelId k, Precision math) {
  const char* env = std::getenv("CAGR_CUDA_CIN");
  std::string force = env != nullptr ? env : "";
  if (force == "cublaslt" || force == "nvrtc") return force == "cublaslt";
  if (k == 0) return math != Precision::kF32 && math != Precision::kTF32;
  return std::string(kernelInfo(k).name) == "cublaslt.cin";
}

bool isLookup(const Node& n) { return n.op == OpKind::kEmbeddingBag || n.op == OpKind::kEmbeddingBags; }

// A group mergeColumnSlices made: a lookup, then column slices of its output.
bool isLookupWithSlices(const Graph& g, const std::vector<NodeId>& members) {
  if (members.size() < 2 || !isLookup(g.node(members[0]))) return false;
  ValueId out = g.node(members[0]).outputs[0];
  return std::all_of(members.begin() + 1, members.end(),
                     [&](NodeId m) { return columnSlice(g, m) && g.node(m).inputs[0] == out; });
}

// The call's layout at a nominal batch: operands that are no BLAS layout
// go to the code generator now rather than fail at run time.
Status checkLayout(const Graph& g, const LibraryGemm& p) {
  SymbolBindings b;
  b.values.assign(std::max<size_t>(g.symbols().size(), 2), kNominalSymbol);
  CAGR_ASSIGN_OR_RETURN(auto as, b.resolve(g.type(p.anchor.a).dims));
  CAGR_ASSIGN_OR_RETURN(auto bs, b.resolve(g.type(p.anchor.b).dims));
  CAGR_ASSIGN_OR_RETURN(cpu::GemmShape s, gemmShape(p, as, bs));
  return columnMajor(s).status();
}

class Lowering {
 public:
  Lowering(const Graph& g, const Target& t, int sm, int sms, Program& p)
      : g_(g), t_(t), sm_(sm), sms_(sms), uses_(valueUses(g)), p_(p) {
    p_.aliasOf.assign(g.numValues(), kNoValue);
  }

  Status addGroup(const std::vector<NodeId>& members) {
    if (isLookupWithSlices(g_, members)) {
      CAGR_ASSIGN_OR_RETURN(GroupShape shape, classifyGroup(g_, {members[0]}));
      Status st = addGenerated(members, shape, g_.node(members[0]).mir.kernel, groupOutputs(g_, uses_, members), "");
      if (st.code() != ErrorCode::kUnsupported) return st;
      for (NodeId m : members) CAGR_RETURN_IF_ERROR(addGroup({m}));  // the lookup kernel cannot: kernels of their own
      return Status::ok();
    }
    if (isAliasGroup(g_, members)) {  // a lone view: no kernel, its output shares its input's bytes
      recordAlias(g_, members[0], p_.aliasOf);
      return Status::ok();
    }
    CAGR_ASSIGN_OR_RETURN(GroupShape shape, classifyGroup(g_, members));
    KernelId k = g_.node(shape.anchor).mir.kernel;
    std::string note;
    if (shape.pattern == Pattern::kCin && cinOnCublasLt(k, g_.node(shape.anchor).mir.math)) {
      auto cin = addCinGemm(members, shape);
      if (cin.isOk() || cin.code() != ErrorCode::kUnsupported) return cin;
      note = " (plan asked cublaslt.cin: " + cin.message() + ")";
      k = 0;
    }
    if (shape.pattern == Pattern::kGemm) {
      auto lib = libraryFor(members, shape.anchor, k);
      if (lib.isOk()) return addLibraryGemm(std::move(*lib));
      if (lib.status().code() != ErrorCode::kUnsupported) return lib.status();
      if (k != 0 && std::string(kernelInfo(k).name) != "nvrtc.gemm_small") {
        note = " (plan asked " + std::string(kernelInfo(k).name) + ": " + lib.status().message() + ")";
      }
    }
    Status st = addGenerated(members, shape, k, groupOutputs(g_, uses_, members), note);
    if (st.code() == ErrorCode::kUnsupported && shape.pattern == Pattern::kGemm) {
      // A GEMM chain the generator cannot run as one kernel (the narrow
      // kernel needs sm_80+): each layer with its epilogue as a kernel of its
      // own, the first layer's rows written between them.
      auto second = std::find_if(members.begin() + 1, members.end(),
                                 [&](NodeId m) { return ops::in(ops::kGemmLike, g_.node(m).op); });
      if (second != members.end()) {
        CAGR_RETURN_IF_ERROR(addGroup(std::vector<NodeId>(members.begin(), second)));
        return addGroup(std::vector<NodeId>(second, members.end()));
      }
    }
    return st;
  }

  void finish() {
    assignStreams();
    orderSteps();
    launchWaitersEarly();
    for (const ProgramStep& s : p_.steps) {
      for (const WeightFormat& f : s.constants) {
        if (std::find(p_.weights.begin(), p_.weights.end(), f) == p_.weights.end()) p_.weights.push_back(f);
      }
    }
    if (p_.kernels.empty()) p_.moduleSource.clear();
  }

 private:
  StatusOr<LibraryGemm> libraryFor(const std::vector<NodeId>& members, NodeId anchor, KernelId k) {
    return libraryGemmFor(g_, uses_, t_, members, anchor, k, sm_);
  }

  Status addLibraryGemm(LibraryGemm lg) {
    ProgramStep s;
    s.kind = StepKind::kLibraryGemm;
    s.nodes = lg.fused;
    s.gemm = static_cast<int>(p_.gemms.size());
    s.name = libraryGemmName(lg) + lg.note;
    const WeightFormat formats[] = {{lg.anchor.a, true, lg.padA, false, lg.operands},
                                    {lg.anchor.b, true, lg.padB, lg.flipB, lg.operands},
                                    {lg.bias, true, 0, false, lg.output},  // cuBLASLt: the bias has D's type
                                    {lg.addend, true, 0}};
    for (WeightFormat f : formats) {
      if (f.value == kNoValue) continue;
      s.reads.push_back(f.value);
      f.value = p_.root(f.value);
      if (g_.isConstant(f.value)) s.constants.push_back(f);
    }
    s.writes = {lg.out};
    std::vector<std::vector<NodeId>> rest = lg.rest;
    p_.gemms.push_back(std::move(lg));
    p_.steps.push_back(std::move(s));
    for (const auto& piece : rest) {  // what the epilogue does not run: elementwise kernels of their own
      if (isAliasGroup(g_, piece)) {
        recordAlias(g_, piece[0], p_.aliasOf);
        continue;
      }
      CAGR_ASSIGN_OR_RETURN(GroupShape shape, classifyGroup(g_, piece));
      CAGR_ASSIGN_OR_RETURN(KernelId eltwise, kernelByName("nvrtc.eltwise"));
      CAGR_RETURN_IF_ERROR(addGenerated(piece, shape, eltwise, groupOutputs(g_, uses_, piece), ""));
    }
    return Status::ok();
  }

  // A cublaslt.cin layer: its three generated kernels (two for f32) in the
  // module and one step that runs them around cuBLASLt per batch chunk; the
  // group's elementwise tail runs in the transpose kernel, whose output is
  // the group's.
  Status addCinGemm(const std::vector<NodeId>& members, const GroupShape& shape) {
    if (p_.kernels.empty() && p_.moduleSource.empty()) p_.moduleSource = moduleHeader();
    CodegenRequest r{g_, members, shape, g_.node(shape.anchor).mir.kernel, groupOutputs(g_, uses_, members), sm_, sms_};
    r.batch = g_.meta().getInt("batch");
    std::string src = p_.moduleSource;
    std::vector<GeneratedKernel> kernels;
    CAGR_ASSIGN_OR_RETURN(CinGemm c, gen::generateCinGemm(r, src, kernels));
    p_.moduleSource = std::move(src);
    ProgramStep s;
    s.kind = StepKind::kCinGemm;
    s.nodes = members;
    s.cin = static_cast<int>(p_.cins.size());
    s.name = kernels.back().name.substr(0, kernels.back().name.find(',')) + ", " + precisionName(c.math) + "]" + c.tail;
    int next = static_cast<int>(p_.kernels.size());
    if (c.math != Precision::kF32) c.wKernel = next++;
    c.zKernel = next++;
    c.outKernel = next++;
    if (c.sliceH > 0) c.zSliceKernel = next;
    for (GeneratedKernel& k : kernels) p_.kernels.push_back(std::move(k));
    for (ValueId v : {c.xk, c.x0, c.w, c.bias}) {
      if (v == kNoValue) continue;
      s.reads.push_back(v);
      if (g_.isConstant(p_.root(v))) s.constants.push_back({p_.root(v), false, 0});
    }
    s.writes = c.outputs();
    p_.cins.push_back(c);
    p_.steps.push_back(std::move(s));
    return Status::ok();
  }

  Status addGenerated(const std::vector<NodeId>& members, const GroupShape& shape, KernelId k,
                      std::vector<ValueId> outputs, const std::string& note) {
    if (p_.kernels.empty() && p_.moduleSource.empty()) p_.moduleSource = moduleHeader();
    CodegenRequest r{g_, members, shape, k, std::move(outputs), sm_, sms_};
    r.batch = g_.meta().getInt("batch");
    const int8_t stream = g_.node(members.front()).mir.stream;
    for (auto s = p_.steps.rbegin(); s != p_.steps.rend(); ++s) {
      if (g_.node(s->nodes.front()).mir.stream != stream) continue;
      r.afterGenerated = s->kind == StepKind::kGenerated;
      break;
    }
    auto gk = generateKernel(r, p_.moduleSource);
    if (!gk.isOk()) {
      return gk.status().withContext("cuda backend: no kernel runs the " + std::string(patternName(shape.pattern)) +
                                     " group of " + nodeWhere(g_, members.front()) + note);
    }
    ProgramStep s;
    s.kind = StepKind::kGenerated;
    s.nodes = members;
    s.kernel = static_cast<int>(p_.kernels.size());
    s.name = gk->name + note;
    size_t reads = gk->params.size() - static_cast<size_t>(gk->numOutputs);
    for (size_t i = 0; i < gk->params.size(); ++i) {
      ValueId v = gk->params[i];
      (i < reads ? s.reads : s.writes).push_back(v);
      if (i >= reads || !g_.isConstant(p_.root(v))) continue;
      // A transposed constant takes the library's layout: [C, R] f32 as stored.
      const bool t = std::find(gk->transposed.begin(), gk->transposed.end(), v) != gk->transposed.end();
      const bool tf32 = std::find(gk->tf32.begin(), gk->tf32.end(), v) != gk->tf32.end();
      auto grouped = std::find_if(gk->grouped.begin(), gk->grouped.end(), [&](const auto& c) { return c.value == v; });
      if (grouped != gk->grouped.end()) {
        s.constants.push_back({p_.root(v), true, grouped->pitch, false, grouped->element, tf32, grouped->group,
                               grouped->split, grouped->swizzle128});
        continue;
      }
      s.constants.push_back({p_.root(v), t, 0, t, Precision::kF32, tf32});
    }
    p_.kernels.push_back(std::move(*gk));
    p_.steps.push_back(std::move(s));
    return Status::ok();
  }

  // A generated kernel that waits late (GeneratedKernel::waitsLate: an
  // interaction doing its lookups first) is launched while the generated
  // kernel before it on its stream runs: that one starts with
  // CAGR_GRID_LAUNCH(), so the dependent's blocks start as soon as all of
  // its own have (and fill the SMs beside them). Only an entry no other step
  // launches is changed.
  void launchWaitersEarly() {
    std::map<int, int> last;  // stream -> its latest step
    std::map<std::string, int> launches;
    for (const ProgramStep& s : p_.steps) {
      if (s.kind == StepKind::kGenerated) ++launches[p_.kernels[static_cast<size_t>(s.kernel)].entry];
    }
    for (size_t t = 0; t < p_.steps.size(); ++t) {
      const ProgramStep& s = p_.steps[t];
      auto found = last.find(s.stream);
      const int prev = found == last.end() ? -1 : found->second;
      last[s.stream] = static_cast<int>(t);
      if (prev < 0 || s.kind != StepKind::kGenerated || !p_.kernels[static_cast<size_t>(s.kernel)].waitsLate) continue;
      const ProgramStep& before = p_.steps[static_cast<size_t>(prev)];
      if (before.kind != StepKind::kGenerated) continue;
      const std::string& entry = p_.kernels[static_cast<size_t>(before.kernel)].entry;
      const size_t at = p_.moduleSource.find(" " + entry + "(");
      const size_t open = at == std::string::npos ? at : p_.moduleSource.find("{\n", at);
      if (launches[entry] != 1 || open == std::string::npos) continue;
      p_.moduleSource.insert(open + 2, "  CAGR_GRID_LAUNCH();\n");
      p_.steps[static_cast<size_t>(prev)].name += " (launches the next early)";
    }
  }

  // CUDA stream indices in order of the plan's stream numbers.
  void assignStreams() {
    std::vector<int8_t> used;
    for (const ProgramStep& s : p_.steps) used.push_back(g_.node(s.nodes.front()).mir.stream);
    std::sort(used.begin(), used.end());
    used.erase(std::unique(used.begin(), used.end()), used.end());
    if (used.empty()) used.push_back(0);
    p_.streamValues = used;
    for (ProgramStep& s : p_.steps) {
      int8_t v = g_.node(s.nodes.front()).mir.stream;
      s.stream = static_cast<int>(std::find(used.begin(), used.end(), v) - used.begin());
    }
  }

  // waits: the writers of what a step reads and its stream's previous
  // step; after: their transitive closure.
  void orderSteps() {
    const size_t n = p_.steps.size();
    std::vector<int> writer(g_.numValues(), -1);
    std::map<int, int> lastOnStream;
    p_.waits.assign(n, {});
    p_.after.assign(n, std::vector<char>(n, 0));
    for (size_t t = 0; t < n; ++t) {
      std::vector<int>& w = p_.waits[t];
      for (ValueId v : p_.steps[t].reads) {
        int s = writer[static_cast<size_t>(p_.root(v))];
        if (s >= 0) w.push_back(s);
      }
      auto prev = lastOnStream.find(p_.steps[t].stream);
      if (prev != lastOnStream.end()) w.push_back(prev->second);
      std::sort(w.begin(), w.end());
      w.erase(std::unique(w.begin(), w.end()), w.end());
      for (int s : w) {
        p_.after[t][static_cast<size_t>(s)] = 1;
        for (size_t u = 0; u < n; ++u) p_.after[t][u] |= p_.after[static_cast<size_t>(s)][u];
      }
      for (ValueId v : p_.steps[t].writes) writer[static_cast<size_t>(v)] = static_cast<int>(t);
      lastOnStream[p_.steps[t].stream] = static_cast<int>(t);
    }
  }

  const Graph& g_;
  const Target& t_;
  int sm_, sms_;
  ValueUses uses_;
  Program& p_;
};

// Merges into a lone EmbeddingBag(s) group the lone column Slices that are
// the only readers of its [N, W] output (DeepFM's embeddings and
// first-order weights cut out of one table-batched lookup): the lookup
// kernel writes each slice's columns into the slice's buffer, so the
// W-wide output takes no memory and no copy kernel runs.
void mergeColumnSlices(const Graph& g, std::vector<std::vector<NodeId>>& order) {
  ValueUses uses = valueUses(g);
  std::vector<int> groupOf(g.nodes().size(), -1);
  for (size_t i = 0; i < order.size(); ++i) {
    for (NodeId n : order[i]) groupOf[static_cast<size_t>(n)] = static_cast<int>(i);
  }
  std::vector<char> merged(order.size(), 0);
  for (auto& group : order) {
    if (group.size() != 1) continue;
    const Node& lookup = g.node(group[0]);
    if (!isLookup(lookup)) continue;
    auto out = static_cast<size_t>(lookup.outputs[0]);
    const auto& readers = uses.consumers[out];
    bool cut = !uses.isOutput[out] && !readers.empty() && std::all_of(readers.begin(), readers.end(), [&](NodeId c) {
      return columnSlice(g, c) && order[static_cast<size_t>(groupOf[static_cast<size_t>(c)])].size() == 1;
    });
    if (!cut) continue;
    for (NodeId c : readers) merged[static_cast<size_t>(groupOf[static_cast<size_t>(c)])] = 1;
    group.insert(group.end(), readers.begin(), readers.end());
    std::sort(group.begin(), group.end());
  }
  size_t kept = 0;
  for (size_t i = 0; i < order.size(); ++i) {
    if (merged[i]) continue;
    if (kept != i) order[kept] = std::move(order[i]);
    ++kept;
  }
  order.resize(kept);
}

}  // namespace

bool isLookupGroup(const Graph& g, const std::vector<NodeId>& members) {
  return (members.size() == 1 && isLookup(g.node(members[0]))) || isLookupWithSlices(g, members);
}

StatusOr<LibraryGemm> libraryGemmFor(const Graph& g, const ValueUses& uses, const Target& t,
                                     const std::vector<NodeId>& members, NodeId anchor, KernelId k, int sm) {
  std::string name = kernelInfo(k).name;
  if (k != 0 && name != "cublaslt.matmul" && name != "cublas.sgemm") return unsupported("generated GEMM kernel");
  int64_t align = std::max(t.hw.matrixUnit.alignElements, 4);
  GemmLibrary lib = name == "cublas.sgemm" ? GemmLibrary::kCublas : GemmLibrary::kCublasLt;
  const bool kMajor = sm == 90 && wgmmaMode() != WgmmaMode::kOff;
  auto p = planLibraryGemm(g, uses, members, anchor, lib, align, kMajor);
  if (!p.isOk() && lib == GemmLibrary::kCublas && p.status().code() == ErrorCode::kUnsupported) {
    std::string why = p.status().message();
    p = planLibraryGemm(g, uses, members, anchor, GemmLibrary::kCublasLt, align, kMajor);
    if (p.isOk()) p->note = " (plan asked cublas.sgemm: " + why + ")";
  }
  if (!p.isOk()) return p.status();
  CAGR_RETURN_IF_ERROR(checkLayout(g, *p));
  return p;
}

StatusOr<std::vector<std::vector<NodeId>>> loweredGroups(const Graph& plan) {
  CAGR_ASSIGN_OR_RETURN(auto order, scheduleKernels(plan));
  mergeColumnSlices(plan, order);
  return order;
}

StatusOr<Graph> prepareGraph(const Graph& given, const Target& t) {
  CAGR_ASSIGN_OR_RETURN(Graph padded, padGemmDims(given, t.hw.matrixUnit.alignElements));
  CAGR_ASSIGN_OR_RETURN(Graph split, splitConcatGemms(padded, kSplitConcatGemmMaxN));
  CAGR_RETURN_IF_ERROR(storeReducedActivations(split, t).status());
  return split;
}

std::vector<NodeId> planNodeIds(const Graph& given, const Graph& prepared) {
  std::map<std::string, NodeId> byName;
  for (size_t n = 0; n < given.nodes().size(); ++n) {
    auto [it, fresh] = byName.emplace(given.nodes()[n].name, static_cast<NodeId>(n));
    if (!fresh) it->second = -1;  // a name used twice matches nothing
  }
  std::vector<NodeId> out;
  for (const Node& n : prepared.nodes()) {
    auto it = byName.find(n.name);
    out.push_back(it != byName.end() && it->second >= 0 && given.node(it->second).op == n.op ? it->second : -1);
  }
  return out;
}

StatusOr<Program> lowerPlan(const Graph& plan, const Target& t, int sm, int sms) {
  CAGR_ASSIGN_OR_RETURN(auto order, loweredGroups(plan));
  Program p;
  Lowering lowering(plan, t, sm, sms, p);
  for (const auto& members : order) CAGR_RETURN_IF_ERROR(lowering.addGroup(members));
  lowering.finish();
  // CAGR_CUDA_DUMP=FILE: the generated module's CUDA source, for reading and
  // for profiler source views.
  if (const char* dump = std::getenv("CAGR_CUDA_DUMP"); dump != nullptr && *dump != '\0') {
    std::ofstream f(dump, std::ios::binary);
    f << p.moduleSource;
    if (!f) return Status(ErrorCode::kInvalidArgument, std::string("CAGR_CUDA_DUMP: cannot write '") + dump + "'");
  }
  return p;
}

}  // namespace cagr::cuda
