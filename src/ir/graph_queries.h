// Read-only queries over a Graph that rewrites, group checks and the cost
// model share: who uses each value, who produces it, how to name a node.
#pragma once

#include <string>
#include <vector>

#include "cagr/graph.h"

namespace cagr {

/// Consumers of every value (node ids, one entry per operand use, in graph
/// order) and whether it is a graph output.
struct ValueUses {
  std::vector<std::vector<NodeId>> consumers;  // index = ValueId
  std::vector<char> isOutput;                  // index = ValueId
  /// Number of node operand uses plus graph-output uses.
  int count(ValueId v) const {
    return static_cast<int>(consumers[static_cast<size_t>(v)].size()) + isOutput[static_cast<size_t>(v)];
  }
};
ValueUses valueUses(const Graph& g);

/// Node consuming any output of each node (node id -> consumer node ids, with repeats).
std::vector<std::vector<NodeId>> nodeConsumers(const Graph& g);

/// "'fc1' (Gemm)" for messages and reasons.
std::string nodeWhere(const Graph& g, NodeId id);

}  // namespace cagr
