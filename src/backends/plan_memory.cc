// Buffer placement shared by the backends (see plan_memory.h).
#include "backends/plan_memory.h"

#include <algorithm>

namespace cagr {

std::vector<ValueId> groupOutputs(const Graph& g, const ValueUses& uses, const std::vector<NodeId>& members) {
  std::vector<ValueId> out;
  for (NodeId m : members) {
    for (ValueId v : g.node(m).outputs) {
      bool leaves = uses.isOutput[static_cast<size_t>(v)] != 0;
      for (NodeId c : uses.consumers[static_cast<size_t>(v)]) {
        leaves = leaves || std::find(members.begin(), members.end(), c) == members.end();
      }
      if (leaves) out.push_back(v);
    }
  }
  return out;
}

bool isAliasGroup(const Graph& g, const std::vector<NodeId>& members) {
  if (members.size() != 1) return false;
  const Node& n = g.node(members[0]);
  bool view = n.op == OpKind::kReshape || n.op == OpKind::kFlatten || n.op == OpKind::kSqueeze ||
              n.op == OpKind::kUnsqueeze || n.op == OpKind::kIdentity;
  if (!view || n.inputs.empty() || n.inputs[0] == kNoValue) return false;
  const Value &in = g.value(n.inputs[0]), &out = g.value(n.outputs[0]);
  return in.mir.storage == out.mir.storage && in.type.dtype == out.type.dtype;
}

void recordAlias(const Graph& g, NodeId view, std::vector<ValueId>& aliasOf) {
  ValueId in = g.node(view).inputs[0];
  ValueId root = aliasOf[static_cast<size_t>(in)] != kNoValue ? aliasOf[static_cast<size_t>(in)] : in;
  aliasOf[static_cast<size_t>(g.node(view).outputs[0])] = root;
}

BufferConflict intervalConflict(const std::vector<int>& birth, const std::vector<int>& death) {
  return [&birth, &death](size_t a, size_t b) { return birth[a] <= death[b] && birth[b] <= death[a]; };
}

namespace {

// Places the buffers in `order`, each at the lowest offset free of the
// conflicting buffers placed before it; returns the bytes spanned.
size_t placeInOrder(const std::vector<size_t>& size, const BufferConflict& conflict, const std::vector<size_t>& order,
                    std::vector<size_t>& offset) {
  offset.assign(size.size(), 0);
  std::vector<size_t> placed;
  size_t total = 0;
  for (size_t v : order) {
    std::vector<std::pair<size_t, size_t>> busy;  // [begin, end) of conflicting placed buffers
    for (size_t u : placed) {
      if (conflict(u, v)) busy.emplace_back(offset[u], offset[u] + size[u]);
    }
    std::sort(busy.begin(), busy.end());
    size_t at = 0;
    for (const auto& [b, e] : busy) {
      if (at + size[v] <= b) break;
      at = std::max(at, e);
    }
    offset[v] = at;
    total = std::max(total, at + size[v]);
    placed.push_back(v);
  }
  return total;
}

}  // namespace

size_t planOffsets(const std::vector<size_t>& size, const BufferConflict& conflict, std::vector<size_t>& offset) {
  std::vector<size_t> bySize;
  for (size_t v = 0; v < size.size(); ++v) {
    if (size[v] > 0) bySize.push_back(v);
  }
  std::stable_sort(bySize.begin(), bySize.end(), [&](size_t a, size_t b) { return size[a] > size[b]; });
  // Also by the bytes each buffer conflicts with (and its own), most first:
  // largest first can put a large late buffer where two earlier ones that
  // conflict with each other would both have fitted (DCN-v2's concat).
  std::vector<size_t> pressure(size.size(), 0);
  for (size_t a : bySize) {
    for (size_t b : bySize) {
      if (a != b && conflict(a, b)) pressure[a] += size[b];
    }
  }
  std::vector<size_t> byPressure = bySize;
  std::stable_sort(byPressure.begin(), byPressure.end(),
                   [&](size_t a, size_t b) { return pressure[a] + size[a] > pressure[b] + size[b]; });
  size_t best = placeInOrder(size, conflict, bySize, offset);
  std::vector<size_t> other;
  if (size_t total = placeInOrder(size, conflict, byPressure, other); total < best) {
    best = total;
    offset.swap(other);
  }
  return best;
}

}  // namespace cagr
