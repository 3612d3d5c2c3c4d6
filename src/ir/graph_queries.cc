#include "ir/graph_queries.h"

namespace cagr {

ValueUses valueUses(const Graph& g) {
  ValueUses u;
  u.consumers.resize(g.numValues());
  u.isOutput.assign(g.numValues(), 0);
  for (size_t i = 0; i < g.nodes().size(); ++i) {
    for (ValueId v : g.nodes()[i].inputs) {
      if (v != kNoValue) u.consumers[static_cast<size_t>(v)].push_back(static_cast<NodeId>(i));
    }
  }
  for (ValueId v : g.outputs()) {
    if (v >= 0) u.isOutput[static_cast<size_t>(v)] = 1;
  }
  return u;
}

std::vector<std::vector<NodeId>> nodeConsumers(const Graph& g) {
  std::vector<std::vector<NodeId>> out(g.nodes().size());
  for (size_t i = 0; i < g.nodes().size(); ++i) {
    for (ValueId v : g.nodes()[i].inputs) {
      if (v == kNoValue) continue;
      NodeId p = g.value(v).producer;
      if (p >= 0) out[static_cast<size_t>(p)].push_back(static_cast<NodeId>(i));
    }
  }
  return out;
}

std::string nodeWhere(const Graph& g, NodeId id) {
  const Node& n = g.node(id);
  return "'" + n.name + "' (" + opInfo(n.op).name + ")";
}

}  // namespace cagr
