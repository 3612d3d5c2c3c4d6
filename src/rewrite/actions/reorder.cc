// Matches an independent branch (rewrite/branches.h) issued after another one
// it does not depend on. Produces the branch's nodes moved, in order, to just
// before that branch's first node. Pays through peak memory (what is live
// when) and through which stream's work is issued first. Needs every value the
// branch reads from outside to be produced before the new position.
#include <algorithm>

#include "ir/graph_queries.h"
#include "rewrite/actions.h"
#include "rewrite/branches.h"
#include "rewrite/group_edit.h"

namespace cagr::rewrites {
namespace {

// The latest node outside `b` whose output `b` reads (-1 for none), i.e. the
// position the branch cannot move before.
NodeId lastExternalProducer(const Graph& g, const Branch& b) {
  NodeId last = -1;
  for (NodeId m : b.nodes) {
    for (ValueId v : g.node(m).inputs) {
      NodeId p = v == kNoValue ? -1 : g.value(v).producer;
      if (p >= 0 && !std::binary_search(b.nodes.begin(), b.nodes.end(), p)) last = std::max(last, p);
    }
  }
  return last;
}

void branchCandidates(const Graph& g, const BranchAnalysis& an, size_t bi, bool explain, std::vector<Candidate>& out) {
  const Branch& b = an.branches()[bi];
  NodeId first = b.nodes.front();
  NodeId floor = lastExternalProducer(g, b);
  NodeId nearest = -1, earliest = -1, blocked = -1;  // first nodes of earlier independent branches
  for (size_t j = 0; j < an.branches().size(); ++j) {
    NodeId at = an.branches()[j].nodes.front();
    if (at >= first || !an.independent(bi, j)) continue;
    if (at <= floor) {
      blocked = std::max(blocked, at);
      continue;
    }
    nearest = std::max(nearest, at);
    earliest = earliest < 0 ? at : std::min(earliest, at);
  }
  Action a{ActionKind::kReorder, b.nodes, kNoValue, "", 0};
  if (nearest < 0) {
    if (explain && blocked >= 0) {
      a.arg = blocked;
      out.push_back({a, "branch of " + nodeWhere(g, b.root) + " reads " + nodeWhere(g, floor) + ", issued after " +
                            nodeWhere(g, blocked)});
    }
    return;
  }
  if (b.cutGroup >= 0) {
    a.arg = nearest;
    if (explain) {
      out.push_back(
          {a, "branch of " + nodeWhere(g, b.root) + " splits the fusion group of " + nodeWhere(g, b.cutGroup)});
    }
    return;
  }
  // One step earlier, and as early as it can go: repeated single steps reach
  // every position in between, so the rest would only widen the action space.
  a.arg = nearest;
  out.push_back({a, ""});
  if (earliest != nearest) {
    a.arg = earliest;
    out.push_back({a, ""});
  }
}

class Reorder : public Rewrite {
 public:
  ActionKind kind() const override { return ActionKind::kReorder; }

  void candidates(const Graph& g, const Target&, bool explain, std::vector<Candidate>& out) const override {
    BranchAnalysis an(g);
    for (size_t i = 0; i < an.branches().size(); ++i) branchCandidates(g, an, i, explain, out);
  }

  Status apply(Graph& g, const Target& t, const Action& a) const override {
    CAGR_RETURN_IF_ERROR(checkOffered(*this, g, t, a));
    std::vector<char> moved(g.nodes().size(), 0);
    for (NodeId m : a.nodes) moved[static_cast<size_t>(m)] = 1;
    std::vector<NodeId> order;
    order.reserve(g.nodes().size());
    for (NodeId i = 0; i < static_cast<NodeId>(g.nodes().size()); ++i) {
      if (i == a.arg) order.insert(order.end(), a.nodes.begin(), a.nodes.end());
      if (!moved[static_cast<size_t>(i)]) order.push_back(i);
    }
    return rebuildNodes(g, order);
  }
};

}  // namespace

const Rewrite* reorder() {
  static const Reorder r;
  return &r;
}

}  // namespace cagr::rewrites
