// Matches a node whose operands are all constants. Produces its outputs as
// constants, computed once by the reference executor, under the same names.
// Pays: the work leaves the inference path. Refused when the result would
// outgrow its inputs more than 4x and exceed 1 MiB (an Expand that inflates),
// for fusion-group members, and for lookups that read a graph input.
#include "cagr/reference.h"
#include "ir/graph_queries.h"
#include "lower/op_sets.h"
#include "rewrite/actions.h"
#include "rewrite/branches.h"
#include "rewrite/group_edit.h"

namespace cagr::rewrites {
namespace {

constexpr double kMaxGrowth = 4;
constexpr double kSmallBytes = 1 << 20;

// Bytes of a static type, or -1 when a dimension is symbolic.
double staticBytes(const TensorType& t) {
  if (!t.isStatic()) return -1;
  double n = static_cast<double>(dtypeSize(t.dtype));
  for (Dim d : t.dims) n *= static_cast<double>(d);
  return n;
}

// Why the all-constant node `id` must not be folded, or "".
std::string refusal(const Graph& g, NodeId id, double inBytes) {
  const Node& n = g.node(id);
  if (n.mir.group >= 0) return nodeWhere(g, id) + " is in fusion group " + std::to_string(n.mir.group);
  double outBytes = 0;
  for (ValueId v : n.outputs) {
    double b = staticBytes(g.type(v));
    if (b < 0) return nodeWhere(g, id) + ": output '" + g.value(v).name + "' has a symbolic shape";
    outBytes += b;
  }
  if (outBytes > kMaxGrowth * inBytes && outBytes > kSmallBytes) {
    return nodeWhere(g, id) + " would turn " + std::to_string(static_cast<int64_t>(inBytes)) + " constant bytes into " +
           std::to_string(static_cast<int64_t>(outBytes)) + " (over 4x and over 1 MiB)";
  }
  return "";
}

// A lookup whose other operands are constants, reading graph input `v`: a
// near miss worth naming (it looks constant-heavy but depends on the request).
ValueId lookedUpInput(const Graph& g, const Node& n) {
  if (!ops::in(ops::kLookups, n.op)) return kNoValue;
  ValueId input = kNoValue;
  for (ValueId v : n.inputs) {
    if (v == kNoValue || g.isConstant(v)) continue;
    if (g.value(v).producer >= 0) return kNoValue;
    input = v;
  }
  return input;
}

void nodeCandidates(const Graph& g, NodeId id, bool explain, std::vector<Candidate>& out) {
  const Node& n = g.node(id);
  double inBytes = 0;
  bool allConstant = true, any = false;
  for (ValueId v : n.inputs) {
    if (v == kNoValue) continue;
    any = true;
    allConstant = allConstant && g.isConstant(v);
    if (g.isConstant(v)) inBytes += static_cast<double>(g.constant(v)->byteSize());
  }
  Action a{ActionKind::kFoldConstants, {id}, kNoValue, "", 0};
  if (any && allConstant) {
    std::string why = refusal(g, id, inBytes);
    if (why.empty() || explain) out.push_back({a, why});
    return;
  }
  ValueId input = explain && inBytes > 0 ? lookedUpInput(g, n) : kNoValue;
  if (input != kNoValue) {
    out.push_back({a, nodeWhere(g, id) + " looks up graph input '" + g.value(input).name + "'"});
  }
}

// Runs node `id` alone on its constant operands, decisions included.
StatusOr<std::vector<Tensor>> evaluate(const Graph& g, NodeId id) {
  const Node& n = g.node(id);
  Graph mini;
  std::vector<ValueId> ins;
  for (ValueId v : n.inputs) {
    if (v == kNoValue) {
      ins.push_back(kNoValue);
      continue;
    }
    ins.push_back(mini.addConstant(g.value(v).name, g.constants()[static_cast<size_t>(g.value(v).constant)]));
    mini.mutableValue(ins.back()).mir = g.value(v).mir;
  }
  CAGR_ASSIGN_OR_RETURN(auto outs, mini.addNode(n.op, ins, n.attrs, n.name, static_cast<int>(n.outputs.size())));
  mini.mutableNodes().back().mir.math = n.mir.math;
  for (size_t k = 0; k < outs.size(); ++k) {
    mini.mutableValue(outs[k]).mir = g.value(n.outputs[k]).mir;
    mini.addOutput(outs[k]);
  }
  return runReference(mini, {});
}

class FoldConstants : public Rewrite {
 public:
  ActionKind kind() const override { return ActionKind::kFoldConstants; }

  void candidates(const Graph& g, const Target&, bool explain, std::vector<Candidate>& out) const override {
    for (NodeId i = 0; i < static_cast<NodeId>(g.nodes().size()); ++i) nodeCandidates(g, i, explain, out);
  }

  Status apply(Graph& g, const Target& t, const Action& a) const override {
    CAGR_RETURN_IF_ERROR(checkOffered(*this, g, t, a));
    NodeId id = a.nodes.front();
    CAGR_ASSIGN_OR_RETURN(std::vector<Tensor> results, evaluate(g, id));
    const Node& n = g.node(id);
    Graph h = g;
    for (size_t k = 0; k < n.outputs.size(); ++k) {
      const Value& old = g.value(n.outputs[k]);
      if (results[k].shape() != old.type.dims || results[k].dtype() != old.type.dtype) {
        return internalError("reference result of " + nodeWhere(g, id) + " is " + results[k].typeString() +
                             ", declared " + g.typeString(old.type));
      }
      ValueId c = h.addConstant(old.name, std::move(results[k]));
      h.mutableValue(c).mir = old.mir;
      h.replaceAllUses(n.outputs[k], c);
    }
    CAGR_RETURN_IF_ERROR(dropNodes(h, {id}));
    h.compact();
    g = std::move(h);
    return Status::ok();
  }
};

}  // namespace

const Rewrite* foldConstants() {
  static const FoldConstants r;
  return &r;
}

}  // namespace cagr::rewrites
