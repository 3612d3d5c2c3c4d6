// Independent branches of a graph, shared by assign_stream and reorder, and
// the node-vector rebuild that rewrites reordering or dropping nodes use.
//
// A branch is a subtree of the post-dominator tree: the nodes whose every path
// to the graph outputs runs through one node (its root), where the root's
// immediate post-dominator is a join of two or more such subtrees and some
// node of the graph is neither an ancestor nor a descendant of the branch (so
// something can run beside it). Only outermost branches are listed: DLRM's
// bottom MLP and each embedding lookup, DeepFM's DNN tower and FM/linear part.
#pragma once

#include <cstdint>
#include <vector>

#include "cagr/graph.h"
#include "cagr/status.h"

namespace cagr {

/// One independent branch.
struct Branch {
  NodeId root = -1;           // every member's output flows through it; last member
  std::vector<NodeId> nodes;  // members in graph order
  NodeId cutGroup = -1;       // a node outside the branch sharing a fusion group with a member, or -1
};

/// The outermost branches of a graph and the reachability needed to tell
/// which nodes run concurrently with them. O(nodes * edges / 64) time.
class BranchAnalysis {
 public:
  explicit BranchAnalysis(const Graph& g);

  /// Branches ordered by their first node.
  const std::vector<Branch>& branches() const { return branches_; }
  /// True when no path links `node` with any member of branch `b`.
  bool concurrent(size_t b, NodeId node) const;
  /// True when branches `a` and `b` have no path between them.
  bool independent(size_t a, size_t b) const { return concurrent(a, branches_[b].root); }
  /// A node running concurrently with branch `b` on `stream`, or -1.
  NodeId concurrentOnStream(const Graph& g, size_t b, int stream) const;

 private:
  size_t words_ = 0;
  std::vector<uint64_t> related_;  // per branch: ancestors and descendants of its root
  std::vector<Branch> branches_;
};

/// Replaces g's node vector by the nodes listed in `order` (old ids, each at
/// most once), fixing Value::producer; unlisted nodes are dropped and their
/// outputs lose their producer. Fails, leaving `g` unchanged, when `order`
/// repeats a node or uses a value before its producer.
Status rebuildNodes(Graph& g, const std::vector<NodeId>& order);

/// rebuildNodes with every node but `dropped` (whose outputs must be unused).
Status dropNodes(Graph& g, const std::vector<NodeId>& dropped);

}  // namespace cagr
