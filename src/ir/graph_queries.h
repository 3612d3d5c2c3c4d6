// Read-only queries over a Graph that rewrites, group checks and the cost
// model share: who uses each value, who produces it, how to name a node.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "cagr/graph.h"

namespace cagr {

/// Per-index lists of node ids stored flat (one allocation, not one per
/// list: rewrites build these for every candidate enumeration).
class NodeLists {
 public:
  std::span<const NodeId> operator[](size_t i) const {
    return {flat_.data() + begin_[i], flat_.data() + begin_[i + 1]};
  }
  size_t size() const { return begin_.empty() ? 0 : begin_.size() - 1; }
  bool empty() const { return size() == 0; }
  /// Builds the lists from (index, node) pairs given in the order wanted.
  template <typename ForEach>
  static NodeLists build(size_t n, ForEach forEachPair) {
    NodeLists l;
    l.begin_.assign(n + 1, 0);
    forEachPair([&](size_t i, NodeId) { ++l.begin_[i + 1]; });
    for (size_t i = 0; i < n; ++i) l.begin_[i + 1] += l.begin_[i];
    l.flat_.resize(static_cast<size_t>(l.begin_[n]));
    std::vector<int32_t> next(l.begin_.begin(), l.begin_.end() - 1);
    forEachPair([&](size_t i, NodeId id) { l.flat_[static_cast<size_t>(next[i]++)] = id; });
    return l;
  }

 private:
  std::vector<int32_t> begin_;
  std::vector<NodeId> flat_;
};

/// Consumers of every value (node ids, one entry per operand use, in graph
/// order) and whether it is a graph output.
struct ValueUses {
  NodeLists consumers;         // index = ValueId
  std::vector<char> isOutput;  // index = ValueId
  /// Number of node operand uses plus graph-output uses.
  int count(ValueId v) const {
    return static_cast<int>(consumers[static_cast<size_t>(v)].size()) + isOutput[static_cast<size_t>(v)];
  }
};
ValueUses valueUses(const Graph& g);

/// Node consuming any output of each node (node id -> consumer node ids, with repeats).
NodeLists nodeConsumers(const Graph& g);

/// "'fc1' (Gemm)" for messages and reasons.
std::string nodeWhere(const Graph& g, NodeId id);

}  // namespace cagr
