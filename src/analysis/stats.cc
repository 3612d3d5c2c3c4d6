// Static per-node features from the op table's cost rules, and peak
// activation memory from value liveness in graph order.
#include <algorithm>

#include "cagr/analysis.h"

namespace cagr {

SymbolBindings defaultBindings(const Graph& g, int64_t batch, int64_t pooling) {
  SymbolBindings b;
  b.values.assign(g.symbols().size(), batch * pooling);
  b.values[0] = -1;
  if (b.values.size() > static_cast<size_t>(kBatchSymbol)) b.values[kBatchSymbol] = batch;
  return b;
}

Status checkBatch(const Graph& g, int64_t batch) {
  int64_t fixed = g.fixedBatch();
  if (fixed == 0 || fixed == batch) return Status::ok();
  return invalidArgument("the model was exported with a fixed batch of " + std::to_string(fixed) +
                         " (its inputs have static shapes), so it cannot run at batch " + std::to_string(batch) +
                         ": use --batch " + std::to_string(fixed) + ", or export it with a dynamic batch axis");
}

namespace {

int64_t bytesOf(const std::vector<int64_t>& shape, DType t) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n * static_cast<int64_t>(dtypeSize(t));
}

// Walks nodes in order, freeing values after their last use.
StatusOr<int64_t> peakActivations(const Graph& g, const SymbolBindings& b) {
  std::vector<int> remaining = g.useCounts();
  std::vector<int64_t> size(g.numValues(), 0);
  int64_t live = 0, peak = 0;
  for (ValueId v : g.inputs()) {
    CAGR_ASSIGN_OR_RETURN(auto shape, b.resolve(g.type(v).dims));
    size[static_cast<size_t>(v)] = bytesOf(shape, g.type(v).dtype);
    live += size[static_cast<size_t>(v)];
  }
  peak = live;
  for (const Node& n : g.nodes()) {
    for (ValueId v : n.outputs) {
      CAGR_ASSIGN_OR_RETURN(auto shape, b.resolve(g.type(v).dims));
      size[static_cast<size_t>(v)] = bytesOf(shape, g.type(v).dtype);
      live += size[static_cast<size_t>(v)];
    }
    peak = std::max(peak, live);
    for (ValueId v : n.inputs) {
      if (v == kNoValue || g.isConstant(v)) continue;
      if (--remaining[static_cast<size_t>(v)] == 0) live -= size[static_cast<size_t>(v)];
    }
  }
  return peak;
}

}  // namespace

StatusOr<GraphStats> computeStats(const Graph& g, const SymbolBindings& b) {
  GraphStats s;
  for (const auto& c : g.constants()) {
    s.params += c->numel();
    s.paramBytes += static_cast<int64_t>(c->byteSize());
  }
  for (const Node& n : g.nodes()) {
    NodeStats ns;
    std::vector<std::vector<int64_t>> inShapes;
    std::vector<DType> inTypes, outTypes;
    for (ValueId v : n.inputs) {
      if (v == kNoValue) continue;
      CAGR_ASSIGN_OR_RETURN(auto shape, b.resolve(g.type(v).dims));
      if (g.isConstant(v)) ns.params += g.constant(v)->numel();
      inShapes.push_back(std::move(shape));
      inTypes.push_back(g.type(v).dtype);
    }
    for (ValueId v : n.outputs) {
      CAGR_ASSIGN_OR_RETURN(auto shape, b.resolve(g.type(v).dims));
      ns.outShapes.push_back(std::move(shape));
      outTypes.push_back(g.type(v).dtype);
    }
    ns.counts = opInfo(n.op).count(n, inShapes, inTypes, ns.outShapes, outTypes);
    s.flops += ns.counts.flops;
    s.bytes += ns.counts.bytesRead + ns.counts.bytesWritten;
    s.nodes.push_back(std::move(ns));
  }
  CAGR_ASSIGN_OR_RETURN(s.peakActivationBytes, peakActivations(g, b));
  return s;
}

}  // namespace cagr
