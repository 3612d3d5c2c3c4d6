// Matches nodes with the same op, operands (the same values, or constants of
// equal dtype, shape, bytes and storage), attributes and MIR decisions.
// Produces the first of them with the others' uses rewired to it and the
// others removed. Pays: their work, traffic and memory. Refused inside fusion
// groups and when the copies are graph outputs of different names.
#include <algorithm>
#include <cstring>
#include <unordered_map>

#include "ir/graph_queries.h"
#include "rewrite/actions.h"
#include "rewrite/branches.h"
#include "rewrite/group_edit.h"

namespace cagr::rewrites {
namespace {

uint64_t mix(uint64_t h, uint64_t v) {
  return (h ^ v) * 0x100000001b3ULL;
}

// Cheap bucket key: op and operands, a constant by its type only (equal
// constants may be distinct values); equal nodes always share it.
uint64_t signature(const Graph& g, const Node& n) {
  uint64_t h = mix(0xcbf29ce484222325ULL, static_cast<uint64_t>(n.op));
  for (ValueId v : n.inputs) {
    if (!g.isConstant(v)) {
      h = mix(h, static_cast<uint64_t>(v) + 1);
      continue;
    }
    h = mix(h, 0x9e3779b97f4a7c15ULL + static_cast<uint64_t>(g.type(v).dtype));
    for (Dim d : g.type(v).dims) h = mix(h, static_cast<uint64_t>(d));
  }
  return mix(h, n.inputs.size());
}

// Operand equality: the same value, or constants holding the same data.
// Content hashes are computed only on a signature collision, then cached.
class Operands {
 public:
  explicit Operands(const Graph& g) : g_(g) {}
  bool same(ValueId a, ValueId b) {
    if (a == b) return true;
    if (!g_.isConstant(a) || !g_.isConstant(b) || !(g_.value(a).mir == g_.value(b).mir)) return false;
    const Tensor* x = g_.constant(a);
    const Tensor* y = g_.constant(b);
    if (x == y) return true;
    if (x->dtype() != y->dtype() || x->shape() != y->shape() || hash(a, *x) != hash(b, *y)) return false;
    return std::memcmp(x->rawData(), y->rawData(), x->byteSize()) == 0;
  }

 private:
  uint64_t hash(ValueId v, const Tensor& t) {
    auto [it, fresh] = hashes_.try_emplace(g_.value(v).constant, 0);
    if (!fresh) return it->second;
    uint64_t h = 0xcbf29ce484222325ULL;
    for (size_t i = 0; i < t.byteSize(); ++i) h = mix(h, static_cast<uint64_t>(t.rawData()[i]));
    return it->second = h;
  }
  const Graph& g_;
  std::unordered_map<int32_t, uint64_t> hashes_;
};

enum class Match { kNo, kMirDiffers, kYes };

Match compare(const Graph& g, Operands& ops, NodeId ia, NodeId ib) {
  const Node& a = g.node(ia);
  const Node& b = g.node(ib);
  if (a.op != b.op || a.inputs.size() != b.inputs.size() || a.outputs.size() != b.outputs.size()) return Match::kNo;
  if (!(a.attrs == b.attrs)) return Match::kNo;
  for (size_t i = 0; i < a.inputs.size(); ++i) {
    if (!ops.same(a.inputs[i], b.inputs[i])) return Match::kNo;
  }
  bool mirSame = a.mir == b.mir;
  for (size_t k = 0; k < a.outputs.size(); ++k) {
    mirSame = mirSame && g.value(a.outputs[k]).mir == g.value(b.outputs[k]).mir;
  }
  return mirSame ? Match::kYes : Match::kMirDiffers;
}

// Sets of equal nodes (each in graph order, size >= 2); with `explain`, near
// misses for nodes equal to a set's first but for their MIR decisions.
std::vector<std::vector<NodeId>> duplicateSets(const Graph& g, bool explain, std::vector<Candidate>& misses) {
  std::vector<std::pair<uint64_t, NodeId>> keyed;
  keyed.reserve(g.nodes().size());
  for (size_t i = 0; i < g.nodes().size(); ++i) keyed.emplace_back(signature(g, g.nodes()[i]), static_cast<NodeId>(i));
  std::sort(keyed.begin(), keyed.end());
  Operands ops(g);
  std::vector<std::vector<NodeId>> sets;
  for (size_t lo = 0, hi = 0; lo < keyed.size(); lo = hi) {
    while (hi < keyed.size() && keyed[hi].first == keyed[lo].first) ++hi;
    size_t firstSet = sets.size();
    for (size_t i = lo; i < hi && hi - lo > 1; ++i) {
      NodeId n = keyed[i].second;
      NodeId differs = -1;
      bool placed = false;
      for (size_t s = firstSet; s < sets.size() && !placed; ++s) {
        Match m = compare(g, ops, sets[s].front(), n);
        if (m == Match::kYes) sets[s].push_back(n);
        placed = m == Match::kYes;
        if (m == Match::kMirDiffers && differs < 0) differs = sets[s].front();
      }
      if (placed) continue;
      sets.push_back({n});
      if (explain && differs >= 0) {
        misses.push_back({Action{ActionKind::kCse, {differs, n}, kNoValue, "", 0},
                          nodeWhere(g, n) + " repeats " + nodeWhere(g, differs) + " but their MIR decisions differ"});
      }
    }
  }
  std::erase_if(sets, [](const std::vector<NodeId>& s) { return s.size() < 2; });
  return sets;
}

// Why merging `set` would be wrong, or "".
std::string refusal(const Graph& g, const std::vector<NodeId>& set, const std::vector<char>& isOutput) {
  const Node& keep = g.node(set.front());
  if (keep.mir.group >= 0) {
    return nodeWhere(g, set.front()) + " and its copies are in fusion group " + std::to_string(keep.mir.group) +
           "; merge them before fusing";
  }
  for (size_t k = 0; k < keep.outputs.size(); ++k) {
    ValueId named = kNoValue;
    for (NodeId m : set) {
      ValueId v = g.node(m).outputs[k];
      if (!isOutput[static_cast<size_t>(v)]) continue;
      if (named != kNoValue && g.value(named).name != g.value(v).name) {
        return nodeWhere(g, m) + " and " + nodeWhere(g, g.value(named).producer) + " produce graph outputs '" +
               g.value(v).name + "' and '" + g.value(named).name + "'; one value cannot keep both names";
      }
      named = v;
    }
  }
  return "";
}

std::vector<char> outputFlags(const Graph& g) {
  std::vector<char> flags(g.numValues(), 0);
  for (ValueId v : g.outputs()) flags[static_cast<size_t>(v)] = 1;
  return flags;
}

class Cse : public Rewrite {
 public:
  ActionKind kind() const override { return ActionKind::kCse; }

  void candidates(const Graph& g, const Target&, bool explain, std::vector<Candidate>& out) const override {
    std::vector<Candidate> found;
    std::vector<std::vector<NodeId>> sets = duplicateSets(g, explain, found);
    std::vector<char> isOutput = outputFlags(g);
    for (auto& set : sets) {
      std::string why = refusal(g, set, isOutput);
      if (!why.empty() && !explain) continue;
      found.push_back({Action{ActionKind::kCse, std::move(set), kNoValue, "", 0}, std::move(why)});
    }
    std::stable_sort(found.begin(), found.end(), [](const Candidate& a, const Candidate& b) {
      return a.action.nodes.front() < b.action.nodes.front();
    });
    out.insert(out.end(), std::make_move_iterator(found.begin()), std::make_move_iterator(found.end()));
  }

  Status apply(Graph& g, const Target& t, const Action& a) const override {
    CAGR_RETURN_IF_ERROR(checkOffered(*this, g, t, a));
    Graph h = g;
    std::vector<char> isOutput = outputFlags(g);
    const Node& keep = g.node(a.nodes.front());
    for (size_t i = 1; i < a.nodes.size(); ++i) {
      const Node& d = g.node(a.nodes[i]);
      for (size_t k = 0; k < d.outputs.size(); ++k) {
        if (isOutput[static_cast<size_t>(d.outputs[k])]) {
          h.mutableValue(keep.outputs[k]).name = g.value(d.outputs[k]).name;  // the output keeps its name
        }
        h.replaceAllUses(d.outputs[k], keep.outputs[k]);
      }
    }
    CAGR_RETURN_IF_ERROR(dropNodes(h, std::vector<NodeId>(a.nodes.begin() + 1, a.nodes.end())));
    h.compact();
    g = std::move(h);
    return Status::ok();
  }
};

}  // namespace

const Rewrite* cse() {
  static const Cse r;
  return &r;
}

}  // namespace cagr::rewrites
