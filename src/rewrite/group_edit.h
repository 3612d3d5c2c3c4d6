// Fusion-group bookkeeping shared by the rewrites that build one kernel out of
// several nodes (fuse, fuse_interaction): which group each node is in, the
// checks every merged group must pass, and relabelling the members.
#pragma once

#include <string>
#include <vector>

#include "cagr/rewrite.h"

namespace cagr::rewrites {

/// The plan's kernels (kernelGroups) and, per node, the one it belongs to.
class GroupIndex {
 public:
  explicit GroupIndex(const Graph& g);
  /// Members of `n`'s kernel in graph order (just `n` when it is unfused).
  const std::vector<NodeId>& membersOf(NodeId n) const {
    return groups_[static_cast<size_t>(of_[static_cast<size_t>(n)])];
  }
  bool sameGroup(NodeId a, NodeId b) const { return of_[static_cast<size_t>(a)] == of_[static_cast<size_t>(b)]; }

 private:
  std::vector<std::vector<NodeId>> groups_;
  std::vector<int> of_;
};

/// Sorted union of node lists (graph order, no repeats).
std::vector<NodeId> unite(std::vector<NodeId> a, const std::vector<NodeId>& b);
/// True when every member is a metadata-only view (no work to fuse).
bool onlyViews(const Graph& g, const std::vector<NodeId>& members);

/// Why `members` cannot become one group regardless of pattern: a member on
/// another stream than the first, or one whose current group reaches outside
/// `members` (splitting it would leave a broken remainder). Empty when fine.
std::string mergeBlocker(const Graph& g, const GroupIndex& groups, const std::vector<NodeId>& members);

/// Gives `members` one fusion group — an existing label of theirs, or a fresh
/// one; a single node keeps none — and sets their kernel to `kernel`.
void setGroup(Graph& g, const std::vector<NodeId>& members, KernelId kernel);
/// True when `members` already are exactly one group running `kernel`.
bool isGroup(const Graph& g, const std::vector<NodeId>& members, KernelId kernel);

/// OK when `a` is one of `r`'s legal candidates for `g` on `t`; otherwise the
/// near miss's reason, or "not a candidate".
Status checkOffered(const Rewrite& r, const Graph& g, const Target& t, const Action& a);

}  // namespace cagr::rewrites
