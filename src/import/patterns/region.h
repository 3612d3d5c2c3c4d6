// Subgraph regions for the import recognisers: the nodes between some input
// values and one output, a check that replacing them is safe, and a numeric
// probe that runs the region on the reference executor.
#pragma once

#include <vector>

#include "cagr/graph.h"

namespace cagr::import {

/// Nodes that depend on one of `ins` and that `out` depends on, in graph order.
struct Region {
  std::vector<ValueId> ins;
  ValueId out = kNoValue;
  std::vector<NodeId> nodes;
};

/// The region between `ins` and `out`, or nullopt when another non-constant
/// value feeds it or one of its inner values is used outside it.
std::optional<Region> regionBetween(const Graph& g, const std::vector<ValueId>& ins, ValueId out);

/// Runs the region on `probe` (one tensor per region input) and returns `out`.
StatusOr<Tensor> evalRegion(const Graph& g, const Region& r, const std::vector<Tensor>& probe);

/// Random tensor of `v`'s type with symbols bound to `batch` (other symbols: 2).
Tensor probeTensor(const Graph& g, ValueId v, int64_t batch, uint32_t seed);

/// True when the region computes the same as `candidate` (a single HIR op over
/// the region's inputs plus `extra` constant operands) on random probes.
bool sameFunction(const Graph& g, const Region& r, OpKind candidate, const std::vector<ValueId>& operands,
                  const Attrs& attrs);

/// Values produced downstream of `from` within `maxNodes` nodes, in order.
std::vector<ValueId> downstreamValues(const Graph& g, ValueId from, size_t maxNodes);

/// Replaces `r.out` by a new `op` node over `operands` and restores topological order.
Status replaceRegion(Graph& g, const Region& r, OpKind op, const std::vector<ValueId>& operands, const Attrs& attrs,
                     const std::string& name);

}  // namespace cagr::import
