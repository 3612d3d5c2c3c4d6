// Fusion groups: which node sets one kernel can run (classifyGroup), which
// catalog kernels can run them on a target (kernelsFor), and the listing of
// a plan's kernels (kernelGroups).
#include <algorithm>

#include "cagr/mir.h"
#include "ir/dims.h"
#include "ir/graph_queries.h"
#include "lower/generated_gemm.h"
#include "lower/op_sets.h"

namespace cagr {
namespace {

std::string where(const Graph& g, NodeId id) { return nodeWhere(g, id); }

bool isEltwiseOrView(OpKind k) { return ops::in(ops::kEltwise | ops::kViews, k); }

// Connected (undirected, through member edges) and convex (no path from a
// member through a non-member back into the group).
Status checkConnectedConvex(const Graph& g, const std::vector<NodeId>& members) {
  std::vector<char> in(g.nodes().size(), 0);
  for (NodeId m : members) in[static_cast<size_t>(m)] = 1;
  auto cons = nodeConsumers(g);
  // Connectivity: flood over member edges in both directions.
  std::vector<std::vector<NodeId>> adj(g.nodes().size());
  for (NodeId m : members) {
    for (NodeId c : cons[static_cast<size_t>(m)]) {
      if (in[static_cast<size_t>(c)]) {
        adj[static_cast<size_t>(m)].push_back(c);
        adj[static_cast<size_t>(c)].push_back(m);
      }
    }
  }
  std::vector<char> seen(g.nodes().size(), 0);
  std::vector<NodeId> stack{members.front()};
  seen[static_cast<size_t>(members.front())] = 1;
  size_t reached = 0;
  while (!stack.empty()) {
    NodeId x = stack.back();
    stack.pop_back();
    ++reached;
    for (NodeId y : adj[static_cast<size_t>(x)]) {
      if (!seen[static_cast<size_t>(y)]) {
        seen[static_cast<size_t>(y)] = 1;
        stack.push_back(y);
      }
    }
  }
  if (reached != members.size()) return invalidArgument("the nodes are not connected");
  // Convexity: nodes reachable from the group through a non-member must not
  // be members. Nodes are in topological order, so one forward sweep works.
  std::vector<char> tainted(g.nodes().size(), 0);
  NodeId first = *std::min_element(members.begin(), members.end());
  for (size_t i = static_cast<size_t>(first); i < g.nodes().size(); ++i) {
    bool fromOutside = tainted[i] && !in[i];
    if (tainted[i] && in[i]) {
      return invalidArgument("not convex: " + where(g, static_cast<NodeId>(i)) +
                             " depends on the group through a node outside it");
    }
    if (in[i] || fromOutside) {
      for (NodeId c : cons[i]) {
        if (!in[i] || !in[static_cast<size_t>(c)]) tainted[static_cast<size_t>(c)] = 1;
      }
    }
  }
  return Status::ok();
}

Pattern naturalPattern(OpKind k) {
  if (ops::in(ops::kGemmLike, k)) return Pattern::kGemm;
  if (ops::in(ops::kLookups, k)) return Pattern::kGather;
  if (ops::in(ops::kReductions, k)) return Pattern::kReduce;
  if (isEltwiseOrView(k)) return Pattern::kEltwise;
  if (k == OpKind::kInteraction) return Pattern::kInteraction;
  if (k == OpKind::kFM) return Pattern::kFM;
  if (k == OpKind::kCIN) return Pattern::kCin;
  return Pattern::kSingle;
}

// Lookups + views + concats feeding one Interaction / FM, optionally followed
// by the concat that joins its output with the dense part.
StatusOr<GroupShape> classifyRecGroup(const Graph& g, const std::vector<NodeId>& members, NodeId rec) {
  GroupShape s{g.node(rec).op == OpKind::kInteraction ? Pattern::kInteraction : Pattern::kFM, rec};
  for (NodeId m : members) {
    OpKind k = g.node(m).op;
    if (m == rec || ops::in(ops::kLookups | ops::kViews, k)) continue;
    if (k == OpKind::kConcat) continue;
    return invalidArgument(where(g, m) + " cannot join a fused " + patternName(s.pattern) + " kernel");
  }
  int tailConcats = 0;
  for (NodeId m : members) tailConcats += m > rec && g.node(m).op == OpKind::kConcat ? 1 : 0;
  if (tailConcats > 1) return invalidArgument("more than one concat after the " + std::string(patternName(s.pattern)));
  return s;
}

// A CIN group's pooled tail (xDeepFM's sum-pooling): a ReduceSum ending the
// group that sums the last axis of a [B, O, D] value the group makes (the
// layer's output or its elementwise tail), D static, 8 <= D <= 64 and
// dividing 64, so the generated kernel's 64-column tile holds whole samples.
Status checkCinPooling(const Graph& g, const std::vector<NodeId>& members, NodeId cin, NodeId sum) {
  if (sum != members.back()) return invalidArgument(where(g, sum) + " must come last: a reduction ends its kernel");
  const Node& n = g.node(sum);
  const std::string at = where(g, sum) + " after " + where(g, cin);
  if (n.op != OpKind::kReduceSum) return invalidArgument(at + ": only a ReduceSum pools a CIN layer's output");
  ValueId in = n.inputs[0];
  NodeId p = g.value(in).producer;
  if (p < 0 || !std::binary_search(members.begin(), members.end(), p)) {
    return invalidArgument(at + " does not reduce a value of the group");
  }
  const auto& dims = g.type(in).dims;
  if (dims != g.type(g.node(cin).outputs[0]).dims) {
    return invalidArgument(at + " reduces a value not shaped like the layer's output");
  }
  std::vector<int64_t> axes = n.attrs.getInts("axes");
  if (axes.size() != 1 || (axes[0] != -1 && axes[0] != 2)) {
    return invalidArgument(at + " must sum the embedding axis (the last) alone");
  }
  Dim d = dims.back();
  if (isSymbolic(d) || d < 8 || d > 64 || 64 % d != 0) {
    return invalidArgument(at + ": the embedding dim must be static, 8..64 and divide 64");
  }
  return Status::ok();
}

// A GEMM chain (two MLP layers as one kernel: the CUDA backend's generated
// GEMM keeps the first layer's row tile on chip and multiplies it by the
// second's weights): Gemm `a` first, without transA, f32 math, a narrow
// output (gemm_forms::narrowShape: N of 16 / 32 / 64, K <= 256), then
// elementwise members of a's output shape (its bias / activation) that make
// Gemm `b`'s A and nothing else — no value before `b` is read after it or
// leaves the group — then b (weights a 2-D constant, at most 64 static
// columns, f32 math) and b's elementwise tail.
Status checkGemmChain(const Graph& g, const std::vector<NodeId>& members, NodeId a, NodeId b) {
  const Node& na = g.node(a);
  const Node& nb = g.node(b);
  const std::string at = where(g, b) + " after " + where(g, a);
  for (const Node* n : {&na, &nb}) {
    if (n->attrs.getInt("transA", 0) != 0 || n->inputs.size() < 2 || !g.isConstant(n->inputs[1]) ||
        g.type(n->inputs[1]).rank() != 2 || g.type(n->inputs[0]).rank() != 2) {
      return invalidArgument(at + ": a GEMM chain takes 2-D layers with constant weights");
    }
    if (n->mir.math != Precision::kF32) return invalidArgument(at + ": a GEMM chain runs f32 math only");
  }
  const auto& y = g.type(na.outputs[0]).dims;
  const auto& x = g.type(na.inputs[0]).dims;
  const Dim n2 = g.type(nb.outputs[0]).dims.back();
  if (isSymbolic(y[1]) || isSymbolic(x[1]) || !gemm_forms::narrowShape(y[1], x[1])) {
    return invalidArgument(at + ": the first layer of a GEMM chain must be narrow (N 16 / 32 / 64, K <= 256)");
  }
  if (isSymbolic(n2) || n2 > 64) return invalidArgument(at + ": a GEMM chain ends in at most 64 columns");
  auto member = [&](NodeId m) { return m >= 0 && std::binary_search(members.begin(), members.end(), m); };
  const ValueId bIn = nb.inputs[0];
  if (!member(g.value(bIn).producer) || g.type(bIn).dims != y) {
    return invalidArgument(at + ": the second layer must read the first's rows, made in the group");
  }
  if (nb.inputs.size() > 2 && nb.inputs[2] != kNoValue && member(g.value(nb.inputs[2]).producer)) {
    return invalidArgument(at + ": the second layer's C is made in the group");
  }
  const ValueUses uses = valueUses(g);
  for (NodeId m : members) {
    if (m >= b) continue;  // b and its tail
    const Node& n = g.node(m);
    if (m != a && g.type(n.outputs[0]).dims != y) {
      return invalidArgument(at + ": " + where(g, m) + " is not shaped like the first layer's output");
    }
    for (ValueId v : n.outputs) {
      bool inside = !uses.isOutput[static_cast<size_t>(v)];
      for (NodeId c : uses.consumers[static_cast<size_t>(v)]) inside = inside && member(c) && c <= b;
      if (!inside) return invalidArgument(at + ": the value of " + where(g, m) + " leaves the chain");
    }
  }
  return Status::ok();
}

}  // namespace

StatusOr<GroupShape> classifyGroup(const Graph& g, const std::vector<NodeId>& members) {
  if (members.empty()) return invalidArgument("empty group");
  for (size_t i = 0; i < members.size(); ++i) {
    if (members[i] < 0 || static_cast<size_t>(members[i]) >= g.nodes().size()) {
      return invalidArgument("node id " + std::to_string(members[i]) + " out of range");
    }
    if (i > 0 && members[i] <= members[i - 1]) return invalidArgument("group members must be in graph order");
  }
  if (members.size() == 1) {
    // A Concat given an in-place kernel (eliminate_concat) runs as that pattern.
    const Node& n = g.node(members[0]);
    if (n.op == OpKind::kConcat && kernelInfo(n.mir.kernel).pattern == Pattern::kConcatInPlace) {
      return GroupShape{Pattern::kConcatInPlace, members[0]};
    }
    return GroupShape{naturalPattern(n.op), members[0]};
  }
  // A Concat's zeros (`pad`) are written by a concat kernel or a fused
  // interaction / FM kernel (its output row), by no other fused kernel.
  bool rec = std::any_of(members.begin(), members.end(), [&](NodeId m) {
    return g.node(m).op == OpKind::kInteraction || g.node(m).op == OpKind::kFM;
  });
  for (NodeId m : members) {
    if (!rec && g.node(m).op == OpKind::kConcat && g.node(m).attrs.getInt("pad", 0) != 0) {
      return unsupported(where(g, m) + " pads with zeros: it runs as a kernel of its own or in an interaction");
    }
  }
  CAGR_RETURN_IF_ERROR(checkConnectedConvex(g, members));
  std::vector<NodeId> anchors;
  for (NodeId m : members) {
    if (!isEltwiseOrView(g.node(m).op)) anchors.push_back(m);
  }
  for (NodeId m : anchors) {
    OpKind k = g.node(m).op;
    if (k == OpKind::kInteraction || k == OpKind::kFM) return classifyRecGroup(g, members, m);
  }
  if (anchors.empty()) return GroupShape{Pattern::kEltwise, members.front()};
  if (anchors.size() == 2 && g.node(anchors[0]).op == OpKind::kCIN &&
      ops::in(ops::kReductions, g.node(anchors[1]).op)) {
    if (anchors[0] != members.front()) {
      return invalidArgument(where(g, anchors[0]) + " must come first: only epilogues fuse into it");
    }
    CAGR_RETURN_IF_ERROR(checkCinPooling(g, members, anchors[0], anchors[1]));
    return GroupShape{Pattern::kCin, anchors[0]};
  }
  if (anchors.size() == 2 && g.node(anchors[0]).op == OpKind::kGemm && g.node(anchors[1]).op == OpKind::kGemm) {
    if (anchors[0] != members.front()) {
      return invalidArgument(where(g, anchors[0]) + " must come first: only epilogues fuse into it");
    }
    CAGR_RETURN_IF_ERROR(checkGemmChain(g, members, anchors[0], anchors[1]));
    return GroupShape{Pattern::kGemm, anchors[0]};
  }
  if (anchors.size() > 1) {
    return invalidArgument("two anchors " + where(g, anchors[0]) + " and " + where(g, anchors[1]) +
                           ": one kernel runs one GEMM / lookup / reduction");
  }
  NodeId a = anchors[0];
  OpKind k = g.node(a).op;
  if (ops::in(ops::kGemmLike, k) || ops::in(ops::kLookups, k)) {
    if (a != members.front()) return invalidArgument(where(g, a) + " must come first: only epilogues fuse into it");
    return GroupShape{ops::in(ops::kGemmLike, k) ? Pattern::kGemm : Pattern::kGather, a};
  }
  if (ops::in(ops::kReductions, k)) {
    if (a != members.back()) return invalidArgument(where(g, a) + " must come last: a reduction ends its kernel");
    return GroupShape{Pattern::kReduce, a};
  }
  if (k == OpKind::kCIN) {  // a CIN layer with an elementwise epilogue (its kernel's epilogueOps say which)
    // (and, above, a pooled tail: checkCinPooling)
    if (a != members.front()) return invalidArgument(where(g, a) + " must come first: only epilogues fuse into it");
    return GroupShape{Pattern::kCin, a};
  }
  return invalidArgument(where(g, a) + " has no fused kernel");
}

namespace {

// A Gemm with a C it adds (beta != 0) needs an epilogue cuBLAS lacks.
bool cublasTakes(const Graph& g, NodeId anchor) {
  const Node& n = g.node(anchor);
  if (n.op != OpKind::kGemm || n.inputs.size() < 3 || n.inputs[2] == kNoValue) return true;
  return n.attrs.getFloat("beta", 1.0) == 0.0;
}

}  // namespace

std::vector<KernelId> kernelsFor(const Graph& g, const std::vector<NodeId>& members, const GroupShape& shape,
                                 const Target& t, std::string* why) {
  std::vector<KernelId> out;
  const auto& cat = kernelCatalog();
  Precision math = g.node(shape.anchor).mir.math;
  std::string reason;
  for (size_t id = 1; id < cat.size(); ++id) {
    const KernelInfo& k = cat[id];
    if (k.backend != t.backend || k.pattern != shape.pattern) continue;
    if (!(k.mathModes & (1u << static_cast<int>(math)))) {
      reason = std::string(k.name) + " has no " + precisionName(math) + " math";
      continue;
    }
    bool ok = true;
    // cuBLAS computes beta * C only over a full C it writes in place: a
    // Gemm's own bias / addend is no operand it takes (the CUDA backend runs
    // such a Gemm on cuBLASLt instead, cuda_gemm.cc), so it is not offered.
    if (std::string_view(k.name) == "cublas.sgemm" && !cublasTakes(g, shape.anchor)) {
      reason = std::string(k.name) + " cannot take the C of " + where(g, shape.anchor);
      continue;
    }
    if (shape.pattern == Pattern::kGemm || shape.pattern == Pattern::kGather || shape.pattern == Pattern::kCin) {
      for (NodeId m : members) {
        if (m == shape.anchor || ops::in(k.epilogueOps, g.node(m).op)) continue;
        reason = std::string(k.name) + "'s epilogue cannot take " + where(g, m);
        ok = false;
        break;
      }
    }
    if (ok) out.push_back(static_cast<KernelId>(id));
  }
  if (out.empty() && why != nullptr) {
    *why = reason.empty() ? std::string("no ") + backendName(t.backend) + " kernel runs a " +
                                patternName(shape.pattern) + " group"
                          : reason;
  }
  return out;
}

namespace {

std::vector<std::vector<NodeId>> groupByLabel(const Graph& g, const std::vector<int32_t>* labels) {
  std::vector<std::vector<NodeId>> out;
  std::vector<std::pair<int32_t, size_t>> slot;  // group label -> index in out
  for (size_t i = 0; i < g.nodes().size(); ++i) {
    int32_t label = labels != nullptr ? (*labels)[i] : g.nodes()[i].mir.group;
    if (label < 0) {
      out.push_back({static_cast<NodeId>(i)});
      continue;
    }
    auto it = std::find_if(slot.begin(), slot.end(), [&](const auto& p) { return p.first == label; });
    if (it == slot.end()) {
      slot.emplace_back(label, out.size());
      out.push_back({static_cast<NodeId>(i)});
    } else {
      out[it->second].push_back(static_cast<NodeId>(i));
    }
  }
  return out;
}

}  // namespace

std::vector<std::vector<NodeId>> kernelGroups(const Graph& g) { return groupByLabel(g, nullptr); }

StatusOr<std::vector<std::vector<NodeId>>> scheduleKernels(const Graph& g, const std::vector<int32_t>* labels,
                                                           const NodeLists* consumers) {
  std::vector<std::vector<NodeId>> groups = groupByLabel(g, labels);
  std::vector<int> kernelOf(g.nodes().size());
  for (size_t k = 0; k < groups.size(); ++k) {
    for (NodeId m : groups[k]) kernelOf[static_cast<size_t>(m)] = static_cast<int>(k);
  }
  // Kahn's algorithm over the kernel graph, preferring graph order.
  std::vector<std::vector<int>> succ(groups.size());
  std::vector<int> indegree(groups.size(), 0);
  NodeLists own;
  if (consumers == nullptr) own = nodeConsumers(g);
  const auto& cons = consumers != nullptr ? *consumers : own;
  for (size_t i = 0; i < g.nodes().size(); ++i) {
    for (NodeId c : cons[i]) {
      int a = kernelOf[i], b = kernelOf[static_cast<size_t>(c)];
      if (a == b) continue;
      succ[static_cast<size_t>(a)].push_back(b);
      ++indegree[static_cast<size_t>(b)];
    }
  }
  std::vector<std::vector<NodeId>> order;
  std::vector<int> ready;
  for (size_t k = groups.size(); k-- > 0;) {
    if (indegree[k] == 0) ready.push_back(static_cast<int>(k));
  }
  while (!ready.empty()) {
    auto lowest = std::min_element(ready.begin(), ready.end());
    int k = *lowest;
    ready.erase(lowest);
    for (int s : succ[static_cast<size_t>(k)]) {
      if (--indegree[static_cast<size_t>(s)] == 0) ready.push_back(s);
    }
    order.push_back(std::move(groups[static_cast<size_t>(k)]));
  }
  if (order.size() != groups.size()) {
    for (size_t k = 0; k < groups.size(); ++k) {
      if (indegree[k] > 0 && !groups[k].empty()) {
        return invalidArgument("fusion groups depend on each other in a cycle (through " +
                               nodeWhere(g, groups[k].front()) + ")");
      }
    }
  }
  return order;
}

int32_t newGroupLabel(const Graph& g) {
  int32_t m = -1;
  for (const Node& n : g.nodes()) m = std::max(m, n.mir.group);
  return m + 1;
}

Status verifyPlan(const Graph& g, const Target& t) {
  CAGR_RETURN_IF_ERROR(g.verify());
  CAGR_RETURN_IF_ERROR(scheduleKernels(g).status());
  for (const auto& members : kernelGroups(g)) {
    const Node& first = g.node(members.front());
    std::string at = "node '" + first.name + "'";
    auto shape = classifyGroup(g, members);
    if (!shape.isOk()) return shape.status().withContext("fusion group of " + at);
    for (NodeId m : members) {
      if (g.node(m).mir.kernel != first.mir.kernel) {
        return invalidArgument("fusion group of " + at + ": members name different kernels");
      }
      if (g.node(m).mir.stream != first.mir.stream) {
        return invalidArgument("fusion group of " + at + ": members are on different streams");
      }
    }
    KernelId k = first.mir.kernel;
    if (k != 0) {
      if (kernelInfo(k).backend != t.backend) {
        return invalidArgument(at + ": kernel " + kernelInfo(k).name + " is not a " + backendName(t.backend) + " kernel");
      }
      std::string why;
      auto ok = kernelsFor(g, members, *shape, t, &why);
      if (std::find(ok.begin(), ok.end(), k) == ok.end()) {
        if (why.empty()) why = std::string(kernelInfo(k).name) + " does not run a " + patternName(shape->pattern) + " group";
        return invalidArgument(at + ": " + why);
      }
    } else if (members.size() > 1 && shape->pattern != Pattern::kEltwise) {
      std::string why;
      if (kernelsFor(g, members, *shape, t, &why).empty()) return invalidArgument("fusion group of " + at + ": " + why);
    }
    for (NodeId m : members) {
      const Node& n = g.node(m);
      if (n.mir.stream < 0 || n.mir.stream >= t.streams) {
        return invalidArgument("node '" + n.name + "': stream " + std::to_string(n.mir.stream) + " but " +
                               t.hw.name + " runs " + std::to_string(t.streams));
      }
      if (n.mir.math != Precision::kF32 && (!t.supportsMath(n.mir.math) || !ops::in(ops::kGemmLike | ops::bit(OpKind::kCIN), n.op))) {
        return invalidArgument("node '" + n.name + "': " + precisionName(n.mir.math) + " math is not available for " +
                               opInfo(n.op).name + " on " + t.hw.name);
      }
    }
  }
  for (size_t v = 0; v < g.numValues(); ++v) {
    const Value& val = g.value(static_cast<ValueId>(v));
    if (val.mir.storage != Precision::kF32 && !t.supportsStorage(val.mir.storage)) {
      return invalidArgument("value '" + val.name + "': " + precisionName(val.mir.storage) + " storage on " + t.hw.name);
    }
    if (val.mir.storage == Precision::kInt8Rowwise && (val.constant < 0 || val.type.rank() != 2)) {
      return invalidArgument("value '" + val.name + "': int8_rowwise is for 2-D constant tables only");
    }
    if (val.mir.layout != Layout::kRowMajor && val.constant < 0) {
      return invalidArgument("value '" + val.name + "': layouts are chosen for constant weights only");
    }
  }
  return Status::ok();
}

}  // namespace cagr
