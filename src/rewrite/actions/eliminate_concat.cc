// eliminate_concat: a Concat whose inputs come each from a node of their own
// -> "in_place": its kernel becomes the backend's Pattern::kConcatInPlace one
// (producers write into its buffer); a Concat of consecutive slices of one
// tensor -> "fold": one Slice (+ Reshape), or nothing. Pays: the copy goes.
// Needs: in_place, non-view producers used only by the concat, no graph I/O.
#include <algorithm>
#include <optional>

#include "ir/dims.h"
#include "ir/graph_queries.h"
#include "ir/op_table.h"
#include "ir/shape_util.h"
#include "lower/op_sets.h"
#include "rewrite/actions.h"

namespace cagr::rewrites {
namespace {

const char* const kInPlace = "in_place";
const char* const kFold = "fold";

Candidate candidate(NodeId concat, const char* choice, std::string reason = "") {
  Candidate c;
  c.action.kind = ActionKind::kEliminateConcat;
  c.action.nodes = {concat};
  c.action.choice = choice;
  c.reason = std::move(reason);
  return c;
}

std::string valueWhere(const Graph& g, ValueId v) {
  return "'" + g.value(v).name + "'";
}

// ---------------------------------------------------------------------------
// In place.

// The target's in-place concat kernel, or 0 when its backend has none.
KernelId inPlaceKernel(const Target& t) {
  const auto& cat = kernelCatalog();
  for (size_t id = 1; id < cat.size(); ++id) {
    if (cat[id].backend == t.backend && cat[id].pattern == Pattern::kConcatInPlace) return static_cast<KernelId>(id);
  }
  return 0;
}

// Why the producers of `concat`'s inputs cannot write into its buffer.
Status inPlaceLegal(const Graph& g, const ValueUses& uses, NodeId concat, KernelId kernel) {
  const Node& c = g.node(concat);
  std::string at = nodeWhere(g, concat);
  if (kernel == 0) return invalidArgument(at + ": the target's backend has no in-place concat kernel");
  if (c.mir.kernel == kernel) return invalidArgument(at + " already runs in place");
  if (c.mir.group >= 0) return invalidArgument(at + " is in a fusion group");
  for (ValueId v : c.inputs) {
    std::string in = at + "'s input " + valueWhere(g, v);
    NodeId p = g.value(v).producer;
    if (g.isConstant(v)) return invalidArgument(in + " is a constant");
    if (p < 0) return invalidArgument(in + " is a graph input");
    if (ops::in(ops::kViews, g.node(p).op)) {
      return invalidArgument(in + " is a view (" + opInfo(g.node(p).op).name + "), not a kernel's own output");
    }
    if (uses.isOutput[static_cast<size_t>(v)]) return invalidArgument(in + " is a graph output");
    for (NodeId u : uses.consumers[static_cast<size_t>(v)]) {
      if (u != concat) return invalidArgument(in + " is also used by " + nodeWhere(g, u));
    }
    if (uses.consumers[static_cast<size_t>(v)].size() > 1) return invalidArgument(in + " is concatenated twice");
  }
  return Status::ok();
}

// ---------------------------------------------------------------------------
// Fold.

// One concat input read as `src[start:end]` along the concat axis, either
// directly or through a view that inserts the concat axis ("wrapped": the
// slice's axis follows it, so the pieces are rows of a [k, width] reshape).
struct Piece {
  ValueId src = kNoValue;
  int64_t axis = 0;  // slice axis in src
  int64_t start = 0, end = 0;
  bool wrapped = false;
  int64_t width() const { return end - start; }
};

// `v`'s dims with a 1 inserted at `axis` equal `out`'s.
bool insertsAxis(const std::vector<Dim>& in, const std::vector<Dim>& out, int64_t axis) {
  if (out.size() != in.size() + 1 || out[static_cast<size_t>(axis)] != 1) return false;
  std::vector<Dim> rest = out;
  rest.erase(rest.begin() + axis);
  return rest == in;
}

// A Slice along exactly one axis with step 1 on a static dim.
std::optional<Piece> asSlice(const Graph& g, NodeId p) {
  if (p < 0 || g.node(p).op != OpKind::kSlice || g.node(p).mir.group >= 0) return std::nullopt;
  const Node& n = g.node(p);
  auto params = sliceParams(n);
  const TensorType& src = g.type(n.inputs[0]);
  if (!params.isOk()) return std::nullopt;
  std::optional<Piece> piece;
  for (size_t i = 0; i < params->axes.size(); ++i) {
    auto axis = normAxis(params->axes[i], src.rank());
    if (!axis) return std::nullopt;
    if (isFullSlice(params->starts[i], params->ends[i], params->steps[i])) continue;
    Dim d = src.dims[static_cast<size_t>(*axis)];
    if (piece || params->steps[i] != 1 || isSymbolic(d)) return std::nullopt;
    SliceRange r = normalizeSlice(params->starts[i], params->ends[i], 1, d);
    piece = Piece{n.inputs[0], *axis, r.start, r.start + r.count};
  }
  return piece;
}

std::optional<Piece> asPiece(const Graph& g, ValueId v, int64_t axis) {
  NodeId p = g.value(v).producer;
  if (p < 0) return std::nullopt;
  const Node& n = g.node(p);
  bool view = n.op == OpKind::kUnsqueeze || n.op == OpKind::kReshape;
  if (view && n.mir.group < 0 && insertsAxis(g.type(n.inputs[0]).dims, g.type(v).dims, axis)) {
    auto piece = asSlice(g, g.value(n.inputs[0]).producer);
    if (!piece || piece->axis != axis) return std::nullopt;
    piece->wrapped = true;
    return piece;
  }
  auto piece = asSlice(g, p);
  if (!piece || piece->axis != axis) return std::nullopt;
  return piece;
}

// Inputs [first, last) of the concat, read as one piece of src; wrapped
// pieces all have the width of the first.
struct Run {
  size_t first = 0, last = 0;
  Piece merged;
  int64_t unit = 0;
  size_t size() const { return last - first; }
};

// Maximal runs of adjacent inputs that continue each other (same source,
// same form, touching ranges; wrapped pieces of equal width).
std::vector<Run> runsOf(const Graph& g, const Node& concat) {
  int64_t axis = *normAxis(intAttr(concat, "axis"), g.type(concat.outputs[0]).rank());
  std::vector<Run> runs;
  for (size_t i = 0; i < concat.inputs.size(); ++i) {
    auto p = asPiece(g, concat.inputs[i], axis);
    if (p && !runs.empty() && runs.back().last == i) {
      Piece& m = runs.back().merged;
      bool next = p->src == m.src && p->wrapped == m.wrapped && p->start == m.end &&
                  (!p->wrapped || p->width() == runs.back().unit);
      if (next) {
        m.end = p->end;
        runs.back().last = i + 1;
        continue;
      }
    }
    if (p) runs.push_back(Run{i, i + 1, *p, p->width()});
  }
  return runs;
}

// Why `concat` has nothing to fold: it has one input, or a run of slices.
Status foldLegal(const Graph& g, NodeId concat) {
  const Node& c = g.node(concat);
  std::string at = nodeWhere(g, concat);
  if (c.mir.group >= 0) return invalidArgument(at + " is in a fusion group");
  if (c.inputs.size() == 1) return Status::ok();
  for (const Run& r : runsOf(g, c)) {
    if (r.size() >= 2) return Status::ok();
  }
  return invalidArgument(at + ": no two adjacent inputs are consecutive slices of one tensor along axis " +
                         std::to_string(*normAxis(intAttr(c, "axis"), g.type(c.outputs[0]).rank())));
}

// `base`, or `base.1`, `base.2`... whichever no node of `g` is named.
std::string unusedName(const Graph& g, const std::string& base) {
  auto taken = [&](const std::string& s) {
    return std::any_of(g.nodes().begin(), g.nodes().end(), [&](const Node& n) { return n.name == s; });
  };
  std::string name = base;
  for (int i = 1; taken(name); ++i) name = base + "." + std::to_string(i);
  return name;
}

// One value for the inputs of run `r`: src (or its slice), reshaped to
// [..., k, width, ...] when the pieces were wrapped.
StatusOr<ValueId> mergeRun(Graph& h, const std::string& concatName, const Run& r) {
  const Piece& m = r.merged;
  ValueId v = m.src;
  std::string base = unusedName(h, concatName + ".fold");
  if (m.start != 0 || m.end != h.type(m.src).dims[static_cast<size_t>(m.axis)]) {
    Attrs a;
    a.set("starts", std::vector<int64_t>{m.start});
    a.set("ends", std::vector<int64_t>{m.end});
    a.set("axes", std::vector<int64_t>{m.axis});
    CAGR_ASSIGN_OR_RETURN(v, h.add(OpKind::kSlice, {v}, std::move(a), base));
  }
  if (!m.wrapped) return v;
  std::vector<Dim> dims = h.type(v).dims;
  std::vector<int64_t> shape(static_cast<size_t>(m.axis), 0);  // leading dims copied
  shape.push_back(static_cast<int64_t>(r.size()));
  shape.push_back(r.unit);
  for (size_t i = static_cast<size_t>(m.axis) + 1; i < dims.size(); ++i)
    shape.push_back(isSymbolic(dims[i]) ? -1 : dims[i]);
  Attrs a;
  a.set("shape", std::move(shape));
  return h.add(OpKind::kReshape, {v}, std::move(a), unusedName(h, base + ".reshape"));
}

// Forwards `to` in place of the concat's output `from`. A graph output keeps
// its name: `to` takes it, or an Identity does when `to` is an input, a
// constant or an output already.
Status forward(Graph& h, ValueId from, ValueId to, const std::string& concatName) {
  const auto& outs = h.outputs();
  if (std::find(outs.begin(), outs.end(), from) != outs.end()) {
    bool named = h.value(to).producer < 0 || std::find(outs.begin(), outs.end(), to) != outs.end();
    if (named) {
      CAGR_ASSIGN_OR_RETURN(to, h.add(OpKind::kIdentity, {to}, {}, unusedName(h, concatName + ".fold")));
    }
    h.mutableValue(to).name = h.value(from).name;
  }
  h.replaceAllUses(from, to);
  return Status::ok();
}

Status fold(Graph& h, NodeId concat) {
  const Node c = h.node(concat);  // a copy: adding nodes reallocates
  std::vector<ValueId> inputs;
  size_t next = 0;
  for (const Run& r : runsOf(h, c)) {
    if (r.size() < 2) continue;
    while (next < r.first) inputs.push_back(c.inputs[next++]);
    CAGR_ASSIGN_OR_RETURN(ValueId v, mergeRun(h, c.name, r));
    inputs.push_back(v);
    next = r.last;
  }
  while (next < c.inputs.size()) inputs.push_back(c.inputs[next++]);
  if (inputs.size() == 1) {
    CAGR_RETURN_IF_ERROR(forward(h, c.outputs[0], inputs[0], c.name));
  } else {
    // New producers: whether they may write in place is in_place's question again.
    Node& n = h.mutableNodes()[static_cast<size_t>(concat)];
    n.inputs = std::move(inputs);
    if (kernelInfo(n.mir.kernel).pattern == Pattern::kConcatInPlace) n.mir.kernel = 0;
  }
  h.eraseDeadNodes();
  CAGR_RETURN_IF_ERROR(h.topoSort());
  h.compact();
  return h.verify();
}

class EliminateConcat : public Rewrite {
 public:
  ActionKind kind() const override { return ActionKind::kEliminateConcat; }

  void candidates(const Graph& g, const Target& t, bool explain, std::vector<Candidate>& out) const override {
    ValueUses uses;
    KernelId kernel = inPlaceKernel(t);
    for (NodeId id = 0; id < static_cast<NodeId>(g.nodes().size()); ++id) {
      if (g.node(id).op != OpKind::kConcat) continue;
      if (uses.consumers.empty()) uses = valueUses(g);
      Status inPlace = inPlaceLegal(g, uses, id, kernel);
      if (inPlace.isOk() || explain) out.push_back(candidate(id, kInPlace, inPlace.isOk() ? "" : inPlace.message()));
      Status folds = foldLegal(g, id);
      if (folds.isOk() || explain) out.push_back(candidate(id, kFold, folds.isOk() ? "" : folds.message()));
    }
  }

  Status apply(Graph& g, const Target& t, const Action& a) const override {
    NodeId id = a.nodes.size() == 1 ? a.nodes[0] : -1;
    if (id < 0 || static_cast<size_t>(id) >= g.nodes().size() || g.node(id).op != OpKind::kConcat) {
      return invalidArgument("eliminate_concat acts on one Concat node of this graph");
    }
    if (a.choice == kInPlace) {
      KernelId kernel = inPlaceKernel(t);
      CAGR_RETURN_IF_ERROR(inPlaceLegal(g, valueUses(g), id, kernel));
      g.mutableNodes()[static_cast<size_t>(id)].mir.kernel = kernel;
      return Status::ok();
    }
    if (a.choice != kFold)
      return invalidArgument("eliminate_concat: choice must be in_place or fold, not '" + a.choice + "'");
    CAGR_RETURN_IF_ERROR(foldLegal(g, id));
    Graph h = g;
    CAGR_RETURN_IF_ERROR(fold(h, id));
    g = std::move(h);
    return Status::ok();
  }
};

}  // namespace

const Rewrite* eliminateConcat() {
  static const EliminateConcat r;
  return &r;
}

}  // namespace cagr::rewrites
