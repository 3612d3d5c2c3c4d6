// What every backend's engine needs to place a plan's buffers: which member
// outputs leave a kernel group, which lone views share their input's bytes,
// and the arena planner that gives buffers whose lives do not conflict the
// same space (the CPU backend's step intervals; the CUDA backend's
// happens-before order across streams).
#pragma once

#include <cstddef>
#include <functional>
#include <vector>

#include "cagr/graph.h"
#include "ir/graph_queries.h"

namespace cagr {

/// Member outputs that leave the group: read by a node outside it or graph outputs.
std::vector<ValueId> groupOutputs(const Graph& g, const ValueUses& uses, const std::vector<NodeId>& members);

/// A single metadata-only node (Reshape, Flatten, Squeeze, Unsqueeze,
/// Identity) whose output keeps its input's dtype and storage: its bytes
/// are its input's, so it needs neither a kernel nor a buffer.
bool isAliasGroup(const Graph& g, const std::vector<NodeId>& members);

/// The buffer a lone view's output shares: its input's root (views of views
/// resolve to the first non-view value). `aliasOf[v]` is kNoValue for values
/// with their own bytes.
void recordAlias(const Graph& g, NodeId view, std::vector<ValueId>& aliasOf);

/// True when buffers a and b (indices into the planner's size vector) are
/// live at the same time, so they may not share bytes.
using BufferConflict = std::function<bool(size_t a, size_t b)>;

/// Conflict of lifetimes given as closed step intervals [birth, death].
BufferConflict intervalConflict(const std::vector<int>& birth, const std::vector<int>& death);

/// Arena offsets for buffers of `size` bytes (0: no buffer): each at the
/// lowest offset that collides with no already placed buffer it conflicts
/// with, placed largest first and, again, most conflicting bytes first; the
/// smaller of the two placements is kept. Sizes are
/// taken as given (callers align them). Returns the arena's size.
size_t planOffsets(const std::vector<size_t>& size, const BufferConflict& conflict, std::vector<size_t>& offset);

}  // namespace cagr
