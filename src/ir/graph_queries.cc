#include "ir/graph_queries.h"

namespace cagr {

ValueUses valueUses(const Graph& g) {
  ValueUses u;
  u.consumers = NodeLists::build(g.numValues(), [&](auto&& add) {
    for (size_t i = 0; i < g.nodes().size(); ++i) {
      for (ValueId v : g.nodes()[i].inputs) {
        if (v != kNoValue) add(static_cast<size_t>(v), static_cast<NodeId>(i));
      }
    }
  });
  u.isOutput.assign(g.numValues(), 0);
  for (ValueId v : g.outputs()) {
    if (v >= 0) u.isOutput[static_cast<size_t>(v)] = 1;
  }
  return u;
}

NodeLists nodeConsumers(const Graph& g) {
  return NodeLists::build(g.nodes().size(), [&](auto&& add) {
    for (size_t i = 0; i < g.nodes().size(); ++i) {
      for (ValueId v : g.nodes()[i].inputs) {
        if (v == kNoValue) continue;
        NodeId p = g.value(v).producer;
        if (p >= 0) add(static_cast<size_t>(p), static_cast<NodeId>(i));
      }
    }
  });
}

std::string nodeWhere(const Graph& g, NodeId id) {
  const Node& n = g.node(id);
  return "'" + n.name + "' (" + opInfo(n.op).name + ")";
}

}  // namespace cagr
