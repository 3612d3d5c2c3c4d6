// 16-bit activation storage for bf16 / f16 plans (see cuda_program.h,
// storeReducedActivations): a lowering step of the CUDA backend, like
// lower/pad_gemm_dims.h — not a policy decision.
//
// A bf16 plan computed its GEMMs in bf16 but kept every activation in f32,
// so its arena held twice the bytes eager PyTorch under autocast holds
// (DeepFM bf16 4096: 20.4 MB against eager's 14.9 on the H200). A value is
// stored in 16 bits in two cases only:
//  - every element already is a value of that type: a lookup with one id
//    per bag (no offsets, no per-id weights) whose tables there are stored
//    in it writes table rows unchanged (sum, mean and max of one row are the
//    row) — exact;
//  - every reader rounds it to that type before use: the A / B operand of a
//    GEMM run by cuBLASLt in that math, which converts its f32 operands
//    anyway (the reference executor rounds them the same way). The writer
//    is then a cuBLASLt GEMM whose operands are stored so (cuBLASLt writes a
//    16-bit D only from 16-bit A and B), and cuBLASLt takes that call's bias
//    in D's type: the bias is rounded to bf16 / f16 — as PyTorch's autocast
//    rounds it — the one value this step changes (tests hold the result to
//    the reference run with those biases rounded).
// Every reader must read the type: a cuBLASLt GEMM in that math (its
// constant operand is then uploaded in the type, exact for the same reason)
// or, for the lookups' exact values, the interaction / FM kernels, which
// read their inputs through the code generator's typed loads. The lookup
// kernel writes 16-bit rows (its output or the column slices it writes).
// Lone views (reshapes) share their input's bytes and take its storage.
// Graph inputs and outputs stay f32. Groups are visited in kernel order, so
// a GEMM sees its input's decision before its own output is considered:
// DeepFM's embeddings, then each hidden layer that another bf16 GEMM reads.
#include <cstdlib>
#include <cstring>

#include "backends/cuda/codegen_kernel.h"
#include "backends/cuda/cuda_program.h"
#include "backends/plan_memory.h"
#include "ir/graph_queries.h"

namespace cagr::cuda {
namespace {

bool reduced(Precision p) { return p == Precision::kBF16 || p == Precision::kF16; }

class ReducedActivations {
 public:
  ReducedActivations(Graph& g, const Target& t, std::vector<std::vector<NodeId>> groups)
      : g_(g), t_(t), uses_(valueUses(g)), groups_(std::move(groups)), groupOf_(g.nodes().size(), -1) {
    for (size_t i = 0; i < groups_.size(); ++i) {
      for (NodeId n : groups_[i]) groupOf_[static_cast<size_t>(n)] = static_cast<int>(i);
    }
  }

  int run() {
    int marked = 0;
    for (const auto& members : groups_) {
      bool exact = false;
      for (auto [v, p] : candidates(members, exact)) {
        if (reduced(p)) marked += mark(v, p, exact);
      }
    }
    return marked;
  }

 private:
  // The values group `members` writes that may be stored reduced, each with
  // its type: a lookup's output or slices (`exact`: rows of tables stored
  // so), or a cuBLASLt GEMM's output whose operands are stored reduced.
  std::vector<std::pair<ValueId, Precision>> candidates(const std::vector<NodeId>& members, bool& exact) {
    if (isLookupGroup(g_, members)) {
      exact = true;
      auto li = gen::lookupInfo(g_, members[0]);
      if (!li.isOk() || li->gather || li->pooling != 1 || li->offsets != kNoValue || li->weights != kNoValue) return {};
      if (members.size() == 1) return {{g_.node(members[0]).outputs[0], rowType(*li, 0, li->width)}};
      std::vector<std::pair<ValueId, Precision>> slices;
      for (size_t i = 1; i < members.size(); ++i) {
        auto r = columnSlice(g_, members[i]);
        if (r) slices.emplace_back(g_.node(members[i]).outputs[0], rowType(*li, r->begin, r->end));
      }
      return slices;
    }
    exact = false;
    auto lib = library(members);
    if (!lib.isOk() || !reduced(lib->operands) || lib->addend != kNoValue || !lib->rest.empty()) return {};
    return {{lib->out, lib->operands}};
  }

  // The type that columns [begin, end) of a one-id-per-bag lookup's rows
  // are exactly: the common reduced storage of the tables there, else f32.
  Precision rowType(const gen::LookupInfo& li, int64_t begin, int64_t end) const {
    Precision p = Precision::kF32;
    for (size_t t = 0; t < li.tables.size(); ++t) {
      if (li.colOff[t] >= end || li.colOff[t] + li.dims[t] <= begin) continue;
      const Precision s = g_.value(li.tables[t]).mir.storage;
      if (!reduced(s) || (p != Precision::kF32 && s != p)) return Precision::kF32;
      p = s;
    }
    return p;
  }

  StatusOr<LibraryGemm> library(const std::vector<NodeId>& members) const {
    auto shape = classifyGroup(g_, members);
    if (!shape.isOk() || shape->pattern != Pattern::kGemm) return unsupported("no GEMM group");
    return libraryGemmFor(g_, uses_, t_, members, shape->anchor, g_.node(shape->anchor).mir.kernel);
  }

  // Whether node `c` (outside v's group) can read value `v` stored `p`.
  bool readerTakes(NodeId c, ValueId v, Precision p, bool exact) const {
    const auto& members = groups_[static_cast<size_t>(groupOf_[static_cast<size_t>(c)])];
    auto shape = classifyGroup(g_, members);
    if (!shape.isOk()) return false;
    if (shape->pattern == Pattern::kFM || shape->pattern == Pattern::kInteraction) return exact;
    if (shape->pattern != Pattern::kGemm || shape->anchor != c) return false;
    const Node& n = g_.node(c);
    if (n.mir.math != p) return false;
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      if (n.inputs[i] == v && i > 1) return false;  // a bias or addend: added in f32
    }
    const ValueId other = n.inputs[0] == v ? n.inputs[1] : n.inputs[0];
    if (other != v && !g_.isConstant(other)) return false;
    return library(members).isOk();
  }

  // Marks `v` (and the lone views that share its bytes) as stored `p` when
  // every reader takes it; returns how many values were marked.
  int mark(ValueId v, Precision p, bool exact) {
    std::vector<ValueId> views{v};
    for (size_t i = 0; i < views.size(); ++i) {
      const auto x = static_cast<size_t>(views[i]);
      if (uses_.isOutput[x] || g_.type(views[i]).dtype != DType::kF32 || g_.isConstant(views[i])) return 0;
      if (g_.value(views[i]).producer < 0 || uses_.consumers[x].empty()) return 0;
      for (NodeId c : uses_.consumers[x]) {
        const auto& members = groups_[static_cast<size_t>(groupOf_[static_cast<size_t>(c)])];
        if (isAliasGroup(g_, members)) {
          views.push_back(g_.node(c).outputs[0]);
        } else if (!readerTakes(c, views[i], p, exact)) {
          return 0;
        }
      }
    }
    for (ValueId x : views) g_.mutableValue(x).mir.storage = p;
    return static_cast<int>(views.size());
  }

  Graph& g_;
  const Target& t_;
  ValueUses uses_;
  std::vector<std::vector<NodeId>> groups_;
  std::vector<int> groupOf_;
};

}  // namespace

StatusOr<int> storeReducedActivations(Graph& plan, const Target& t) {
  if (const char* e = std::getenv("CAGR_CUDA_REDUCED_ACTIVATIONS"); e != nullptr && std::strcmp(e, "0") == 0) return 0;
  CAGR_ASSIGN_OR_RETURN(auto groups, loweredGroups(plan));
  return ReducedActivations(plan, t, std::move(groups)).run();
}

}  // namespace cagr::cuda
