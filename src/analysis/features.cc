// Roofline position per node and the per-graph fingerprint (op-type
// histogram, depth, mean intensity) used to compare workloads.
#include <algorithm>
#include <cmath>

#include "cagr/analysis.h"
#include "cagr/hw.h"

namespace cagr {

double rooflinePosition(double intensity, const HardwareProfile& hw) {
  double flops = hw.peak("fp32"), bw = hw.dramBandwidth();
  if (flops <= 0 || bw <= 0) return 0;
  return std::min(1.0, intensity * bw / flops);
}

namespace {

int longestPath(const Graph& g) {
  std::vector<int> depth(g.numValues(), 0);
  int best = 0;
  for (const Node& n : g.nodes()) {
    int d = 0;
    for (ValueId v : n.inputs) {
      if (v != kNoValue) d = std::max(d, depth[static_cast<size_t>(v)]);
    }
    for (ValueId v : n.outputs) depth[static_cast<size_t>(v)] = d + 1;
    best = std::max(best, d + 1);
  }
  return best;
}

double log10p(double x) { return std::log10(1.0 + std::max(0.0, x)); }

}  // namespace

GraphFingerprint fingerprint(const Graph& g, const GraphStats& stats) {
  GraphFingerprint f;
  f.opHistogram.assign(static_cast<size_t>(kNumOpKinds), 0);
  double weighted = 0, embBytes = 0;
  for (size_t i = 0; i < g.nodes().size(); ++i) {
    const Node& n = g.nodes()[i];
    const NodeStats& s = stats.nodes[i];
    ++f.opHistogram[static_cast<size_t>(n.op)];
    weighted += s.counts.flops * s.intensity();
    if (n.op == OpKind::kEmbeddingBag || n.op == OpKind::kGather) embBytes += s.counts.bytesRead + s.counts.bytesWritten;
  }
  f.depth = longestPath(g);
  f.totalFlops = stats.flops;
  f.totalBytes = stats.bytes;
  f.meanIntensity = stats.flops > 0 ? weighted / stats.flops : 0;
  f.embeddingByteShare = stats.bytes > 0 ? embBytes / stats.bytes : 0;
  double nodes = std::max<double>(1, static_cast<double>(g.nodes().size()));
  for (int c : f.opHistogram) f.vector.push_back(c / nodes);
  f.vector.push_back(log10p(f.depth));
  f.vector.push_back(log10p(f.totalFlops));
  f.vector.push_back(log10p(f.totalBytes));
  f.vector.push_back(log10p(f.meanIntensity));
  f.vector.push_back(f.embeddingByteShare);
  return f;
}

double fingerprintSimilarity(const GraphFingerprint& a, const GraphFingerprint& b) {
  double dot = 0, na = 0, nb = 0;
  for (size_t i = 0; i < std::min(a.vector.size(), b.vector.size()); ++i) {
    dot += a.vector[i] * b.vector[i];
    na += a.vector[i] * a.vector[i];
    nb += b.vector[i] * b.vector[i];
  }
  return na > 0 && nb > 0 ? dot / std::sqrt(na * nb) : 0;
}

}  // namespace cagr
