#include "rewrite/group_edit.h"

#include <algorithm>

#include "ir/graph_queries.h"
#include "lower/op_sets.h"

namespace cagr::rewrites {

GroupIndex::GroupIndex(const Graph& g) : groups_(kernelGroups(g)), of_(g.nodes().size(), 0) {
  for (size_t i = 0; i < groups_.size(); ++i) {
    for (NodeId m : groups_[i]) of_[static_cast<size_t>(m)] = static_cast<int>(i);
  }
}

std::vector<NodeId> unite(std::vector<NodeId> a, const std::vector<NodeId>& b) {
  a.insert(a.end(), b.begin(), b.end());
  std::sort(a.begin(), a.end());
  a.erase(std::unique(a.begin(), a.end()), a.end());
  return a;
}

bool onlyViews(const Graph& g, const std::vector<NodeId>& members) {
  return std::all_of(members.begin(), members.end(), [&](NodeId m) { return ops::in(ops::kViews, g.node(m).op); });
}

std::string mergeBlocker(const Graph& g, const GroupIndex& groups, const std::vector<NodeId>& members) {
  int stream = g.node(members.front()).mir.stream;
  for (NodeId m : members) {
    if (g.node(m).mir.stream != stream) {
      return nodeWhere(g, m) + " is on stream " + std::to_string(g.node(m).mir.stream) + ", " +
             nodeWhere(g, members.front()) + " on stream " + std::to_string(stream);
    }
    for (NodeId o : groups.membersOf(m)) {
      if (!std::binary_search(members.begin(), members.end(), o)) {
        return nodeWhere(g, m) + " is already fused with " + nodeWhere(g, o);
      }
    }
  }
  return "";
}

void setGroup(Graph& g, const std::vector<NodeId>& members, KernelId kernel) {
  int32_t label = -1;
  if (members.size() > 1) {
    for (NodeId m : members) {
      int32_t l = g.node(m).mir.group;
      if (l >= 0 && (label < 0 || l < label)) label = l;
    }
    if (label < 0) label = newGroupLabel(g);
  }
  for (NodeId m : members) {
    NodeDecision& d = g.mutableNodes()[static_cast<size_t>(m)].mir;
    d.group = label;
    d.kernel = kernel;
  }
}

bool isGroup(const Graph& g, const std::vector<NodeId>& members, KernelId kernel) {
  const NodeDecision& first = g.node(members.front()).mir;
  if (members.size() > 1 && first.group < 0) return false;
  for (NodeId m : members) {
    if (g.node(m).mir.group != first.group || g.node(m).mir.kernel != kernel) return false;
  }
  if (first.group < 0) return true;
  size_t labelled = 0;
  for (const Node& n : g.nodes()) labelled += n.mir.group == first.group ? 1 : 0;
  return labelled == members.size();
}

Status checkOffered(const Rewrite& r, const Graph& g, const Target& t, const Action& a) {
  std::vector<Candidate> all;
  r.candidates(g, t, /*explain=*/false, all);
  if (std::find_if(all.begin(), all.end(), [&](const Candidate& c) { return c.action == a; }) != all.end()) {
    return Status::ok();
  }
  all.clear();  // not legal: look again for the reason
  r.candidates(g, t, /*explain=*/true, all);
  for (const Candidate& c : all) {
    if (c.action == a && !c.legal()) return invalidArgument(c.reason);
  }
  return invalidArgument("not a candidate of " + std::string(actionKindName(r.kind())) + " for this graph");
}

}  // namespace cagr::rewrites
