// Per-node and per-graph static features at a concrete batch: FLOPs, bytes,
// arithmetic intensity, parameter counts and peak activation memory. These
// are counts from the op table (ops.def cost rules), not timings.
#pragma once

#include <vector>

#include "cagr/graph.h"

namespace cagr {

struct NodeStats {
  std::vector<std::vector<int64_t>> outShapes;
  int64_t params = 0;     // elements of constant operands (weights)
  OpCounts counts;        // FLOPs, bytes read, bytes written
  double intensity() const {
    double b = counts.bytesRead + counts.bytesWritten;
    return b > 0 ? counts.flops / b : 0;
  }
};

struct GraphStats {
  std::vector<NodeStats> nodes;  // parallel to Graph::nodes()
  double flops = 0, bytes = 0;
  int64_t params = 0;
  int64_t paramBytes = 0;
  /// Peak bytes of live activations (inputs, intermediates, outputs) when the
  /// nodes run in graph order and each value is freed after its last use.
  int64_t peakActivationBytes = 0;
};

struct HardwareProfile;

/// Roofline position rho(v,H) = min(1, I(v) * BW(H) / FLOPS(H)): 1 means the
/// node can saturate compute, below 1 it is memory bound (fp32 peak, device
/// memory bandwidth of the profile).
double rooflinePosition(double intensity, const HardwareProfile& hw);

/// A whole-graph summary used to compare models.
struct GraphFingerprint {
  std::vector<int> opHistogram;   // count per OpKind (index = OpKind)
  int depth = 0;                  // longest path in nodes
  double meanIntensity = 0;       // FLOP-weighted mean of per-node intensity
  double totalFlops = 0, totalBytes = 0;
  double embeddingByteShare = 0;  // share of bytes moved by EmbeddingBag/Gather
  /// Fixed-length feature vector: op-kind shares, log10 depth/FLOPs/bytes,
  /// log10 mean intensity, embedding byte share.
  std::vector<double> vector;
};
GraphFingerprint fingerprint(const Graph& g, const GraphStats& stats);
/// Cosine similarity of two fingerprint vectors (1 = same shape of workload).
double fingerprintSimilarity(const GraphFingerprint& a, const GraphFingerprint& b);

/// Binds every symbol: N = batch, any other symbol (e.g. L, ids per table) = batch * pooling.
SymbolBindings defaultBindings(const Graph& g, int64_t batch, int64_t pooling = 1);

/// Fails, saying why, when `batch` is not the batch of a model exported with a
/// fixed batch (Graph::fixedBatch); any batch suits a model with a symbolic one.
Status checkBatch(const Graph& g, int64_t batch);

/// Computes all stats at `bindings`.
StatusOr<GraphStats> computeStats(const Graph& g, const SymbolBindings& bindings);

}  // namespace cagr
