// Matches nodes whose outputs reach no graph output (all of them, as one
// candidate). Produces the graph without them (Graph::eraseDeadNodes), unused
// values and constants dropped. Pays: no kernel launches, no traffic, no
// memory for work nobody reads. Refused while a dead node shares a fusion
// group with a live one (removing it could leave the group disconnected).
#include <algorithm>

#include "ir/graph_queries.h"
#include "rewrite/actions.h"
#include "rewrite/branches.h"
#include "rewrite/group_edit.h"

namespace cagr::rewrites {
namespace {

// Dead nodes in graph order: one reverse sweep, as nodes are topologically sorted.
std::vector<NodeId> deadNodes(const Graph& g, std::vector<char>& live) {
  std::vector<char> needed(g.numValues(), 0);
  for (ValueId v : g.outputs()) needed[static_cast<size_t>(v)] = 1;
  live.assign(g.nodes().size(), 0);
  std::vector<NodeId> dead;
  for (size_t i = g.nodes().size(); i-- > 0;) {
    const Node& n = g.nodes()[i];
    live[i] =
        std::any_of(n.outputs.begin(), n.outputs.end(), [&](ValueId v) { return needed[static_cast<size_t>(v)]; });
    if (!live[i]) {
      dead.push_back(static_cast<NodeId>(i));
      continue;
    }
    for (ValueId v : n.inputs) {
      if (v != kNoValue) needed[static_cast<size_t>(v)] = 1;
    }
  }
  std::reverse(dead.begin(), dead.end());
  return dead;
}

// A live node sharing a fusion group with a dead one: {dead, live}, or {-1, -1}.
std::pair<NodeId, NodeId> groupKeptAlive(const Graph& g, const std::vector<NodeId>& dead,
                                         const std::vector<char>& live) {
  for (NodeId d : dead) {
    int32_t label = g.node(d).mir.group;
    if (label < 0) continue;
    for (size_t j = 0; j < g.nodes().size(); ++j) {
      if (live[j] && g.nodes()[j].mir.group == label) return {d, static_cast<NodeId>(j)};
    }
  }
  return {-1, -1};
}

class DeadCode : public Rewrite {
 public:
  ActionKind kind() const override { return ActionKind::kDeadCode; }

  void candidates(const Graph& g, const Target&, bool explain, std::vector<Candidate>& out) const override {
    std::vector<char> live;
    std::vector<NodeId> dead = deadNodes(g, live);
    if (dead.empty()) return;
    auto [d, keeper] = groupKeptAlive(g, dead, live);
    Action a{ActionKind::kDeadCode, std::move(dead), kNoValue, "", 0};
    if (d < 0) {
      out.push_back({std::move(a), ""});
    } else if (explain) {
      out.push_back({std::move(a), nodeWhere(g, d) + " is unused but shares its fusion group with " +
                                       nodeWhere(g, keeper) + ", which is live"});
    }
  }

  Status apply(Graph& g, const Target& t, const Action& a) const override {
    CAGR_RETURN_IF_ERROR(checkOffered(*this, g, t, a));
    g.eraseDeadNodes();
    g.compact();
    return Status::ok();
  }
};

}  // namespace

const Rewrite* deadCode() {
  static const DeadCode r;
  return &r;
}

}  // namespace cagr::rewrites
