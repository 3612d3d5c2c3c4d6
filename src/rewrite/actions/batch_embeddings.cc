// batch_embeddings: the EmbeddingBag / row-Gather lookups that read constant
// tables -> one EmbeddingBags per compatible set (same table dtype, mode and
// ids form), or per set feeding one Concat (DeepFM's FM stack and linear
// terms: each EmbeddingBags is then that concat, with no copy); lookups of
// the same ids share one id slot, each output becomes a column slice, and the
// concats of those slices are folded at once (eliminate_concat's fold). The
// new nodes run on the lookups' stream. Pays: one kernel and one pass over
// the ids instead of one per table, and the concat copies go. Needs:
// constant tables, no per-sample weights, ids of equal types.
#include <algorithm>
#include <map>
#include <optional>
#include <unordered_set>

#include "ir/dims.h"
#include "ir/graph_queries.h"
#include "ir/op_table.h"
#include "rewrite/actions.h"

namespace cagr::rewrites {
namespace {

// EmbeddingBags takes at most 130 operands: the tables, the ids and the offsets.
constexpr size_t kMaxTables = 128;

bool isFloat(DType t) {
  return t == DType::kF32 || t == DType::kF64 || t == DType::kF16 || t == DType::kBF16;
}
bool isIndex(DType t) {
  return t == DType::kI64 || t == DType::kI32;
}

// One lookup and what decides which others it may share an EmbeddingBags with.
struct Lookup {
  NodeId node = -1;
  ValueId table = kNoValue, ids = kNoValue, offsets = kNoValue;  // offsets: multi-hot only
  std::string mode = "sum";
  bool includeLast = false;
  bool multiHot() const { return offsets != kNoValue; }
};

// A table-shaped read: every EmbeddingBag, and a Gather of a 2-D float tensor.
// Other Gathers (the ones selecting ids, say) are no lookups and no near misses.
bool looksLikeLookup(const Graph& g, const Node& n) {
  if (n.op == OpKind::kEmbeddingBag) return true;
  if (n.op != OpKind::kGather) return false;
  const TensorType& data = g.type(n.inputs[0]);
  return data.rank() == 2 && isFloat(data.dtype);
}

// Values computed from some lookup's output (their ids could not feed a batch
// that also holds that lookup without a cycle).
std::vector<char> downstreamOfLookups(const Graph& g) {
  std::vector<char> tainted(g.numValues(), 0);
  for (const Node& n : g.nodes()) {
    bool t = looksLikeLookup(g, n);
    for (ValueId v : n.inputs) t = t || (v != kNoValue && tainted[static_cast<size_t>(v)]);
    if (t) {
      for (ValueId v : n.outputs) tainted[static_cast<size_t>(v)] = 1;
    }
  }
  return tainted;
}

Candidate candidate(std::vector<NodeId> nodes, std::string reason = "") {
  Candidate c;
  c.action.kind = ActionKind::kBatchEmbeddings;
  c.action.nodes = std::move(nodes);
  c.reason = std::move(reason);
  return c;
}

// Why `id` cannot join a batch, or OK with `out` filled in.
Status asLookup(const Graph& g, NodeId id, const std::vector<char>& tainted, Lookup& out) {
  const Node& n = g.node(id);
  std::string at = nodeWhere(g, id);
  out = Lookup{id, n.inputs[0], n.inputs[1]};
  if (n.op == OpKind::kGather) {
    if (normAxis(intAttr(n, "axis"), 2) != 0) return invalidArgument(at + " gathers along axis 1, not table rows");
    if (g.type(out.ids).rank() != 1) {
      return invalidArgument(at + ": ids " + g.typeString(g.type(out.ids)) + " are not one id per bag [B]");
    }
  } else {
    if (n.inputs.size() > 3 && n.inputs[3] != kNoValue) return invalidArgument(at + " has per-sample weights");
    out.offsets = n.inputs.size() > 2 ? n.inputs[2] : kNoValue;
    out.mode = stringAttr(n, "mode");
    out.includeLast = out.multiHot() && intAttr(n, "include_last_offset") != 0;
  }
  if (!g.isConstant(out.table)) {
    return invalidArgument(at + ": table '" + g.value(out.table).name + "' is not a constant");
  }
  if (n.mir.group >= 0) return invalidArgument(at + " is in a fusion group");
  for (ValueId v : {out.ids, out.offsets}) {
    if (v != kNoValue && tainted[static_cast<size_t>(v)]) {
      return invalidArgument(at + ": its ids are computed from a lookup's output");
    }
  }
  return Status::ok();
}

// Empty when `a` and `b` fit one EmbeddingBags, else what differs ("a vs b").
std::string difference(const Graph& g, const Lookup& a, const Lookup& b) {
  DType ta = g.type(a.table).dtype, tb = g.type(b.table).dtype;
  if (ta != tb) return std::string("table type ") + dtypeName(ta) + " vs " + dtypeName(tb);
  if (a.multiHot() != b.multiHot()) {
    return a.multiHot() ? "multi-hot ids with offsets vs fixed pooling" : "fixed pooling vs multi-hot ids with offsets";
  }
  if (a.mode != b.mode) return "mode " + a.mode + " vs " + b.mode;
  if (g.type(a.ids) != g.type(b.ids)) {
    return "ids shape " + g.typeString(g.type(a.ids)) + " vs " + g.typeString(g.type(b.ids));
  }
  if (a.multiHot() && g.type(a.offsets) != g.type(b.offsets)) {
    return "offsets shape " + g.typeString(g.type(a.offsets)) + " vs " + g.typeString(g.type(b.offsets));
  }
  if (a.includeLast != b.includeLast) {
    return std::string("include_last_offset ") + (a.includeLast ? "1 vs 0" : "0 vs 1");
  }
  return "";
}

// The lookups of `g` grouped into compatibility classes (graph order), and
// the near misses of lookup-shaped nodes that cannot be batched at all.
struct Analysis {
  std::vector<std::vector<Lookup>> classes;
  std::vector<Candidate> refused;
};

Analysis analyse(const Graph& g, bool explain) {
  Analysis a;
  std::vector<char> tainted;
  for (NodeId id = 0; id < static_cast<NodeId>(g.nodes().size()); ++id) {
    if (!looksLikeLookup(g, g.node(id))) continue;
    if (tainted.empty()) tainted = downstreamOfLookups(g);
    Lookup l;
    Status st = asLookup(g, id, tainted, l);
    if (!st.isOk()) {
      if (explain) a.refused.push_back(candidate({id}, st.message()));
      continue;
    }
    auto it = std::find_if(a.classes.begin(), a.classes.end(),
                           [&](const auto& c) { return c.size() < kMaxTables && difference(g, l, c[0]).empty(); });
    if (it == a.classes.end()) {
      a.classes.push_back({l});
    } else {
      it->push_back(l);
    }
  }
  return a;
}

// Near miss of the lone lookup `l`: how it differs from the largest other class.
Candidate loneLookup(const Graph& g, const Analysis& a, const Lookup& l) {
  const std::vector<Lookup>* best = nullptr;
  for (const auto& c : a.classes) {
    if (c[0].node != l.node && (best == nullptr || c.size() > best->size())) best = &c;
  }
  if (best == nullptr) return candidate({l.node}, nodeWhere(g, l.node) + ": no other lookup to batch with");
  return candidate({l.node}, nodeWhere(g, l.node) + " cannot share an EmbeddingBags with " +
                                 nodeWhere(g, (*best)[0].node) + ": " + difference(g, l, (*best)[0]));
}

// ---------------------------------------------------------------------------
// Building the EmbeddingBags.

// Node names of the graph, to give new nodes unused ones.
class Names {
 public:
  explicit Names(const Graph& g) {
    for (const Node& n : g.nodes()) used_.insert(n.name);
  }
  std::string fresh(const std::string& base) {
    std::string name = base;
    for (int i = 1; used_.count(name) > 0; ++i) name = base + "." + std::to_string(i);
    used_.insert(name);
    return name;
  }

 private:
  std::unordered_set<std::string> used_;
};

// `v` = Gather(src, constant scalar index, axis): the zoo's "ids of field c".
struct Select {
  ValueId src = kNoValue;
  int64_t axis = 0;
  int64_t index = 0;
};

std::optional<Select> asSelect(const Graph& g, ValueId v) {
  NodeId p = g.value(v).producer;
  if (p < 0 || g.node(p).op != OpKind::kGather) return std::nullopt;
  const Node& n = g.node(p);
  const Tensor* c = g.constant(n.inputs[1]);
  const TensorType& src = g.type(n.inputs[0]);
  auto axis = normAxis(intAttr(n, "axis"), src.rank());
  if (c == nullptr || c->rank() != 0 || !isIndex(c->dtype()) || !axis) return std::nullopt;
  Select s{n.inputs[0], *axis, c->getI64(0)};
  Dim d = src.dims[static_cast<size_t>(s.axis)];
  if (s.index < 0 && isSymbolic(d)) return std::nullopt;
  if (s.index < 0) s.index += d;
  return s;
}

// Moves axis `from` of a rank-`rank` tensor to position `to`.
std::vector<int64_t> moveAxis(int64_t rank, int64_t from, int64_t to) {
  std::vector<int64_t> perm;
  for (int64_t i = 0; i < rank; ++i) {
    if (i != from) perm.push_back(i);
  }
  perm.insert(perm.begin() + to, from);
  return perm;
}

Attrs ints(const char* name, std::vector<int64_t> v) {
  Attrs a;
  a.set(name, std::move(v));
  return a;
}

// All slots selected from one tensor at once: Gather(src, [c0, c1, ...]) (or
// src itself when that picks every index in order), slot axis moved to `slotAxis`.
StatusOr<ValueId> selectSlots(Graph& h, Names& names, const std::vector<Select>& sel, int64_t slotAxis,
                              const std::string& base) {
  ValueId src = sel[0].src;
  const TensorType type = h.type(src);  // a copy: adding values reallocates
  std::vector<int64_t> index;
  for (const Select& s : sel) index.push_back(s.index);
  bool all = type.dims[static_cast<size_t>(sel[0].axis)] == static_cast<Dim>(index.size());
  for (size_t i = 0; i < index.size() && all; ++i) all = index[i] == static_cast<int64_t>(i);
  ValueId v = src;
  if (!all) {
    int64_t count = static_cast<int64_t>(index.size());
    Tensor t(DType::kI64, {count});
    std::copy(index.begin(), index.end(), t.data<int64_t>());
    ValueId c = h.addConstant(base + ".slots", std::move(t));
    Attrs attrs;
    attrs.set("axis", sel[0].axis);
    CAGR_ASSIGN_OR_RETURN(v, h.add(OpKind::kGather, {src, c}, std::move(attrs), names.fresh(base)));
  }
  if (sel[0].axis == slotAxis) return v;
  Attrs perm = ints("perm", moveAxis(type.rank(), sel[0].axis, slotAxis));
  return h.add(OpKind::kTranspose, {v}, std::move(perm), names.fresh(base + ".transpose"));
}

// The op's ids (or offsets) operand from one value per slot: selected from
// their common source when they all are `src[..., c, ...]`, else stacked.
StatusOr<ValueId> slotOperand(Graph& h, Names& names, const std::vector<ValueId>& perSlot, int64_t slotAxis,
                              const std::string& base) {
  std::vector<Select> sel;
  for (ValueId v : perSlot) {
    auto s = asSelect(h, v);
    bool sameSource = s && (sel.empty() || (s->src == sel[0].src && s->axis == sel[0].axis));
    if (!sameSource) break;
    sel.push_back(*s);
  }
  if (sel.size() == perSlot.size()) return selectSlots(h, names, sel, slotAxis, base);
  std::vector<ValueId> parts;
  for (size_t k = 0; k < perSlot.size(); ++k) {
    CAGR_ASSIGN_OR_RETURN(ValueId u, h.add(OpKind::kUnsqueeze, {perSlot[k]}, ints("axes", {slotAxis}),
                                           names.fresh(base + "." + std::to_string(k))));
    parts.push_back(u);
  }
  if (parts.size() == 1) return parts[0];
  Attrs attrs;
  attrs.set("axis", slotAxis);
  return h.add(OpKind::kConcat, parts, std::move(attrs), names.fresh(base));
}

// Where a lookup's output lands: (Concat node, operand index) when it feeds
// one Concat directly or through one view, else after every Concat, in graph
// order. Tables laid out in that order leave the concat as consecutive column
// slices, which eliminate_concat folds away.
std::pair<size_t, size_t> concatPosition(const Graph& g, const ValueUses& uses, NodeId lookup) {
  ValueId v = g.node(lookup).outputs[0];
  for (int hop = 0; hop < 2; ++hop) {
    const auto& cons = uses.consumers[static_cast<size_t>(v)];
    if (cons.size() != 1 || uses.isOutput[static_cast<size_t>(v)]) break;
    const Node& c = g.node(cons[0]);
    if (c.op == OpKind::kConcat) {
      auto at = std::find(c.inputs.begin(), c.inputs.end(), v) - c.inputs.begin();
      return {static_cast<size_t>(cons[0]), static_cast<size_t>(at)};
    }
    if (c.op != OpKind::kUnsqueeze && c.op != OpKind::kReshape) break;
    v = c.outputs[0];
  }
  return {g.nodes().size() + static_cast<size_t>(lookup), 0};
}

// A class whose lookups feed several Concats: the lookups of each concat
// (two or more) as a batch of their own — its EmbeddingBags folds into that
// concat whole. Empty when one concat takes them all.
std::vector<std::vector<NodeId>> byConcat(const Graph& g, const std::vector<Lookup>& ls) {
  ValueUses uses = valueUses(g);
  std::map<size_t, std::vector<NodeId>> parts;
  for (const Lookup& l : ls) {
    size_t at = concatPosition(g, uses, l.node).first;
    if (at < g.nodes().size()) parts[at].push_back(l.node);
  }
  std::vector<std::vector<NodeId>> out;
  for (auto& [concat, nodes] : parts) {
    if (nodes.size() >= 2 && nodes.size() < ls.size()) out.push_back(std::move(nodes));
  }
  return out;
}

std::vector<Lookup> tableOrder(const Graph& g, std::vector<Lookup> ls) {
  ValueUses uses = valueUses(g);
  std::vector<std::pair<size_t, size_t>> key(g.nodes().size());
  for (const Lookup& l : ls) key[static_cast<size_t>(l.node)] = concatPosition(g, uses, l.node);
  std::stable_sort(ls.begin(), ls.end(), [&](const Lookup& a, const Lookup& b) {
    return key[static_cast<size_t>(a.node)] < key[static_cast<size_t>(b.node)];
  });
  return ls;
}

// Columns [col, col + D) of the batched output standing for lookup `l`,
// reshaped to the lookup's own output type where that differs.
StatusOr<ValueId> columnsOf(Graph& h, Names& names, ValueId y, int64_t col, const Lookup& l, const std::string& base) {
  ValueId orig = h.node(l.node).outputs[0];
  int64_t dim = h.type(l.table).dims[1];
  Attrs a;
  a.set("starts", std::vector<int64_t>{col});
  a.set("ends", std::vector<int64_t>{col + dim});
  a.set("axes", std::vector<int64_t>{1});
  std::string name = names.fresh(base + ".slice." + h.node(l.node).name);
  CAGR_ASSIGN_OR_RETURN(ValueId s, h.add(OpKind::kSlice, {y}, std::move(a), name));
  const TensorType want = h.type(orig);
  if (h.type(s) == want) return s;
  std::vector<int64_t> shape;
  for (Dim d : want.dims) shape.push_back(isSymbolic(d) ? -1 : d);
  if (std::count(shape.begin(), shape.end(), -1) > 1) {
    return unsupported(nodeWhere(h, l.node) + ": output " + h.typeString(want) + " has two symbolic dims");
  }
  return h.add(OpKind::kReshape, {s}, ints("shape", shape), names.fresh(name + ".reshape"));
}

// Replaces every use of `from` by `to`; a graph output keeps its name.
void replaceOutput(Graph& h, ValueId from, ValueId to) {
  bool isOutput = std::find(h.outputs().begin(), h.outputs().end(), from) != h.outputs().end();
  if (isOutput) h.mutableValue(to).name = h.value(from).name;
  h.replaceAllUses(from, to);
}

// The EmbeddingBags node itself: tables in layout order, one id slot per
// distinct ids (and offsets) value.
StatusOr<ValueId> batchedLookup(Graph& h, Names& names, const std::vector<Lookup>& order, const std::string& base) {
  std::vector<ValueId> ids, offsets, inputs;
  std::vector<int64_t> slots;
  bool identity = true;
  for (const Lookup& l : order) {
    size_t k = 0;
    while (k < ids.size() && (ids[k] != l.ids || offsets[k] != l.offsets)) ++k;
    if (k == ids.size()) {
      ids.push_back(l.ids);
      offsets.push_back(l.offsets);
    }
    identity = identity && k == slots.size();
    slots.push_back(static_cast<int64_t>(k));
    inputs.push_back(l.table);
  }
  bool multiHot = order[0].multiHot();
  CAGR_ASSIGN_OR_RETURN(ValueId idx, slotOperand(h, names, ids, multiHot ? 0 : 1, base + ".ids"));
  inputs.push_back(idx);
  if (multiHot) {
    CAGR_ASSIGN_OR_RETURN(ValueId off, slotOperand(h, names, offsets, 0, base + ".offsets"));
    inputs.push_back(off);
  }
  Attrs a;
  a.set("num_tables", static_cast<int64_t>(order.size()));
  a.set("mode", order[0].mode);
  if (!identity) a.set("slots", slots);
  if (order[0].includeLast) a.set("include_last_offset", int64_t{1});
  return h.add(OpKind::kEmbeddingBags, inputs, std::move(a), base);
}

// The stream most of the lookups run on (the lowest of equals): the batched
// lookup and its views take it, so a branch assign_stream moved stays there.
int8_t streamOf(const Graph& g, const std::vector<Lookup>& ls) {
  std::map<int8_t, int> count;
  for (const Lookup& l : ls) ++count[g.node(l.node).mir.stream];
  auto best = count.begin();
  for (auto it = count.begin(); it != count.end(); ++it) {
    if (it->second > best->second) best = it;
  }
  return best->first;
}

// Concats reading column slices of `y` (directly or through one view).
std::vector<std::string> concatsOfSlices(const Graph& g, ValueId y) {
  ValueUses uses = valueUses(g);
  std::vector<std::string> out;
  auto note = [&](NodeId c) {
    const Node& n = g.node(c);
    if (n.op == OpKind::kConcat && std::find(out.begin(), out.end(), n.name) == out.end()) out.push_back(n.name);
  };
  for (NodeId s : uses.consumers[static_cast<size_t>(y)]) {
    if (g.node(s).op != OpKind::kSlice) continue;
    for (NodeId c : uses.consumers[static_cast<size_t>(g.node(s).outputs[0])]) {
      note(c);
      if (g.node(c).op != OpKind::kUnsqueeze && g.node(c).op != OpKind::kReshape) continue;
      for (NodeId d : uses.consumers[static_cast<size_t>(g.node(c).outputs[0])]) note(d);
    }
  }
  return out;
}

NodeId nodeNamed(const Graph& g, const std::string& name) {
  for (NodeId id = 0; id < static_cast<NodeId>(g.nodes().size()); ++id) {
    if (g.node(id).name == name) return id;
  }
  return -1;
}

Status batch(Graph& h, const Target& t, const std::vector<Lookup>& lookups) {
  std::vector<Lookup> order = tableOrder(h, lookups);
  const int8_t stream = streamOf(h, order);
  Names names(h);
  std::unordered_set<std::string> before;
  for (const Node& n : h.nodes()) before.insert(n.name);
  std::string base = names.fresh("tbe");
  CAGR_ASSIGN_OR_RETURN(ValueId y, batchedLookup(h, names, order, base));
  int64_t col = 0;
  for (const Lookup& l : order) {
    CAGR_ASSIGN_OR_RETURN(ValueId cols, columnsOf(h, names, y, col, l, base));
    replaceOutput(h, h.node(l.node).outputs[0], cols);
    col += h.type(l.table).dims[1];
  }
  h.eraseDeadNodes();
  CAGR_RETURN_IF_ERROR(h.topoSort());
  h.compact();
  CAGR_RETURN_IF_ERROR(h.verify());
  // The concats of consecutive slices fold into the batched output (a view
  // when one EmbeddingBags is the whole concat); one that cannot stays.
  NodeId tbe = nodeNamed(h, base);
  for (const std::string& concat : concatsOfSlices(h, h.node(tbe).outputs[0])) {
    Action fold{ActionKind::kEliminateConcat, {nodeNamed(h, concat)}, kNoValue, "fold", 0};
    (void)eliminateConcat()->apply(h, t, fold);  // leaves h as it was when it does not fold
  }
  for (Node& n : h.mutableNodes()) {
    if (before.count(n.name) == 0) n.mir.stream = stream;
  }
  return Status::ok();
}

// The lookups of `a`, checked to be batchable together in `g`.
StatusOr<std::vector<Lookup>> lookupsOf(const Graph& g, const Action& a) {
  if (a.nodes.size() < 2 || a.nodes.size() > kMaxTables) {
    return invalidArgument("batch_embeddings takes 2 to " + std::to_string(kMaxTables) + " lookups");
  }
  std::vector<char> tainted = downstreamOfLookups(g);
  std::vector<Lookup> out;
  for (size_t i = 0; i < a.nodes.size(); ++i) {
    NodeId id = a.nodes[i];
    if (id < 0 || static_cast<size_t>(id) >= g.nodes().size() || (i > 0 && id <= a.nodes[i - 1])) {
      return invalidArgument("batch_embeddings: node ids must be distinct nodes of this graph in graph order");
    }
    if (!looksLikeLookup(g, g.node(id))) return invalidArgument(nodeWhere(g, id) + " is not a lookup");
    Lookup l;
    CAGR_RETURN_IF_ERROR(asLookup(g, id, tainted, l));
    std::string diff = out.empty() ? "" : difference(g, l, out[0]);
    if (!diff.empty()) {
      return invalidArgument(nodeWhere(g, id) + " cannot share an EmbeddingBags with " + nodeWhere(g, out[0].node) +
                             ": " + diff);
    }
    out.push_back(l);
  }
  return out;
}

class BatchEmbeddings : public Rewrite {
 public:
  ActionKind kind() const override { return ActionKind::kBatchEmbeddings; }

  void candidates(const Graph& g, const Target&, bool explain, std::vector<Candidate>& out) const override {
    Analysis a = analyse(g, explain);
    for (const auto& c : a.classes) {
      if (c.size() >= 2) {
        std::vector<NodeId> nodes;
        for (const Lookup& l : c) nodes.push_back(l.node);
        out.push_back(candidate(std::move(nodes)));
        for (auto& part : byConcat(g, c)) out.push_back(candidate(std::move(part)));
      } else if (explain) {
        out.push_back(loneLookup(g, a, c[0]));
      }
    }
    if (explain) out.insert(out.end(), a.refused.begin(), a.refused.end());
  }

  Status apply(Graph& g, const Target& t, const Action& a) const override {
    CAGR_ASSIGN_OR_RETURN(std::vector<Lookup> lookups, lookupsOf(g, a));
    Graph h = g;
    CAGR_RETURN_IF_ERROR(batch(h, t, lookups));
    g = std::move(h);
    return Status::ok();
  }
};

}  // namespace

const Rewrite* batchEmbeddings() {
  static const BatchEmbeddings r;
  return &r;
}

}  // namespace cagr::rewrites
