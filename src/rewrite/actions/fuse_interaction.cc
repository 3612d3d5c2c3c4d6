// fuse_interaction: an Interaction / FM with the lookups, views and concats
// feeding it (and the concat joining its output with the dense part) -> one
// kInteraction / kFM kernel; a CIN left on auto -> the fused kCin kernel.
// Pays: the stacked embeddings and the CIN outer product are never written.
// Needs: fused-in nodes used only inside the group, one stream, a catalog kernel.
#include <algorithm>

#include "ir/graph_queries.h"
#include "lower/op_sets.h"
#include "rewrite/actions.h"
#include "rewrite/group_edit.h"

namespace cagr::rewrites {
namespace {

struct Ctx {
  const Graph& g;
  const Target& t;
  ValueUses uses;
  GroupIndex groups;
  Ctx(const Graph& graph, const Target& target) : g(graph), t(target), uses(valueUses(graph)), groups(graph) {}
  const Node& node(NodeId n) const { return g.node(n); }
};

bool isView(const Graph& g, NodeId n) {
  return ops::in(ops::kViews, g.node(n).op);
}

// The single node reading `n`'s output, or -1 (several readers, a graph output).
NodeId soleConsumer(const Ctx& c, NodeId n) {
  ValueId v = c.node(n).outputs[0];
  const auto& users = c.uses.consumers[static_cast<size_t>(v)];
  return users.size() == 1 && !c.uses.isOutput[static_cast<size_t>(v)] ? users.front() : -1;
}

// Views and at most one Concat after `rec`, each the sole reader of the last.
std::vector<NodeId> tail(const Ctx& c, NodeId rec) {
  std::vector<NodeId> out;
  NodeId n = rec;
  for (;;) {
    NodeId u = soleConsumer(c, n);
    if (u < 0 || c.node(u).mir.stream != c.node(rec).mir.stream) break;
    if (c.groups.membersOf(u).size() > 1 && !c.groups.sameGroup(u, rec)) break;
    if (!isView(c.g, u) && c.node(u).op != OpKind::kConcat) break;
    out.push_back(u);
    if (c.node(u).op == OpKind::kConcat) break;
    n = u;
  }
  return out;
}

// Nodes on the paths from the lookups into `rec`: views and concats walked
// through, lookups ending the walk. Decreasing graph order.
std::vector<NodeId> feeders(const Ctx& c, NodeId rec) {
  std::vector<char> seen(c.g.nodes().size(), 0);
  std::vector<NodeId> out, work{rec};
  while (!work.empty()) {
    NodeId n = work.back();
    work.pop_back();
    const Node& node = c.node(n);
    size_t reads = node.op == OpKind::kConcat ? node.inputs.size() : 1;
    for (size_t i = 0; i < reads; ++i) {
      NodeId p = c.g.value(node.inputs[i]).producer;
      if (p < 0 || seen[static_cast<size_t>(p)]) continue;
      OpKind k = c.node(p).op;
      if (!ops::in(ops::kLookups | ops::kViews | ops::bit(OpKind::kConcat), k)) continue;
      seen[static_cast<size_t>(p)] = 1;
      out.push_back(p);
      if (!ops::in(ops::kLookups, k)) work.push_back(p);
    }
  }
  std::sort(out.rbegin(), out.rend());
  return out;
}

// Keeps the feeders whose every reader is in the group, nearest `rec` first
// (so one escaping concat drops the lookups behind it too); `why` says what
// the first one dropped was missing.
std::vector<NodeId> keepInside(const Ctx& c, const std::vector<NodeId>& feeds, std::vector<char>& in, NodeId rec,
                               std::string& why) {
  std::vector<NodeId> kept;
  for (NodeId f : feeds) {
    std::string miss;
    ValueId v = c.node(f).outputs[0];
    if (c.uses.isOutput[static_cast<size_t>(v)]) miss = nodeWhere(c.g, f) + " is a graph output";
    for (NodeId u : c.uses.consumers[static_cast<size_t>(v)]) {
      if (miss.empty() && !in[static_cast<size_t>(u)])
        miss = nodeWhere(c.g, f) + " is also used by " + nodeWhere(c.g, u);
    }
    if (miss.empty() && c.node(f).mir.stream != c.node(rec).mir.stream) {
      miss = nodeWhere(c.g, f) + " is on stream " + std::to_string(c.node(f).mir.stream);
    }
    if (miss.empty()) {
      in[static_cast<size_t>(f)] = 1;
      kept.push_back(f);
    } else if (why.empty()) {
      why = miss + ": it stays outside the kernel";
    }
  }
  return kept;
}

// The legality reason of `members` as one kernel and its kernel (on success).
std::string check(const Ctx& c, const std::vector<NodeId>& members, KernelId& kernel) {
  if (std::string why = mergeBlocker(c.g, c.groups, members); !why.empty()) return why;
  auto shape = classifyGroup(c.g, members);
  if (!shape.isOk()) return shape.status().message();
  std::string why;
  auto ks = kernelsFor(c.g, members, *shape, c.t, &why);
  if (ks.empty()) return why;
  kernel = ks.front();
  for (NodeId m : members) {
    KernelId k = c.node(m).mir.kernel;
    if (k != 0 && std::find(ks.begin(), ks.end(), k) != ks.end()) kernel = k;
  }
  return "";
}

void emit(const Ctx& c, std::vector<NodeId> members, std::string why, bool explain, std::vector<Candidate>& out) {
  KernelId kernel = 0;
  if (why.empty()) why = check(c, members, kernel);
  if (why.empty() && isGroup(c.g, members, kernel)) return;  // already done
  if (!why.empty() && !explain) return;
  Candidate cand;
  cand.action.kind = ActionKind::kFuseInteraction;
  cand.action.nodes = std::move(members);
  if (why.empty()) cand.action.choice = kernelInfo(kernel).name;
  cand.reason = std::move(why);
  out.push_back(std::move(cand));
}

// (a): the Interaction / FM `rec` with what feeds it and the concat after it.
void interactionCandidates(const Ctx& c, NodeId rec, bool explain, std::vector<Candidate>& out) {
  std::vector<NodeId> core = tail(c, rec);
  core.push_back(rec);
  std::vector<char> in(c.g.nodes().size(), 0);
  for (NodeId n : core) in[static_cast<size_t>(n)] = 1;
  std::vector<NodeId> feeds = feeders(c, rec);
  std::string why;
  std::vector<NodeId> kept = keepInside(c, feeds, in, rec, why);
  if (kept.size() != feeds.size()) emit(c, unite(core, feeds), why, explain, out);
  emit(c, unite(core, kept), "", explain, out);
}

class FuseInteraction : public Rewrite {
 public:
  ActionKind kind() const override { return ActionKind::kFuseInteraction; }

  void candidates(const Graph& g, const Target& t, bool explain, std::vector<Candidate>& out) const override {
    bool any = std::any_of(g.nodes().begin(), g.nodes().end(), [](const Node& n) {
      return n.op == OpKind::kInteraction || n.op == OpKind::kFM || n.op == OpKind::kCIN;
    });
    if (!any) return;
    Ctx c(g, t);
    for (NodeId n = 0; n < static_cast<NodeId>(g.nodes().size()); ++n) {
      OpKind k = g.node(n).op;
      if (k == OpKind::kInteraction || k == OpKind::kFM) interactionCandidates(c, n, explain, out);
      // (b), with the elementwise epilogue fuse gave it, if any
      if (k == OpKind::kCIN && g.node(n).mir.kernel == 0) emit(c, c.groups.membersOf(n), "", explain, out);
    }
  }

  Status apply(Graph& g, const Target& t, const Action& a) const override {
    CAGR_RETURN_IF_ERROR(checkOffered(*this, g, t, a));
    CAGR_ASSIGN_OR_RETURN(KernelId kernel, kernelByName(a.choice));
    setGroup(g, a.nodes, kernel);
    return Status::ok();
  }
};

}  // namespace

const Rewrite* fuseInteraction() {
  static const FuseInteraction r;
  return &r;
}

}  // namespace cagr::rewrites
