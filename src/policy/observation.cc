// The observation a learned policy reads: per-node features (op category,
// log FLOPs / bytes, intensity, roofline position, current decisions), the
// data edges, the hardware context vector c_H and one row per legal action.
#include <cmath>

#include "cagr/env.h"
#include "lower/op_sets.h"

namespace cagr {
namespace {

// Op categories: gemm, lookup, eltwise, view, reduction, rec op, movement, other.
int category(OpKind k) {
  if (ops::in(ops::kGemmLike, k)) return 0;
  if (ops::in(ops::kLookups, k)) return 1;
  if (ops::in(ops::kEltwise, k)) return 2;
  if (ops::in(ops::kViews, k)) return 3;
  if (ops::in(ops::kReductions, k)) return 4;
  if (k == OpKind::kInteraction || k == OpKind::kFM || k == OpKind::kCIN) return 5;
  if (k == OpKind::kConcat || k == OpKind::kSlice || k == OpKind::kTranspose || k == OpKind::kSplit) return 6;
  return 7;
}

float logScale(double x) { return static_cast<float>(std::log10(1.0 + std::max(0.0, x)) / 10.0); }

// set_precision choices read "bf16 (output error <= 5e-2)": the first word counts.
bool reducedPrecision(const std::string& choice) {
  std::string p = choice.substr(0, choice.find(' '));
  return p == "tf32" || p == "bf16" || p == "f16" || p == "int8_rowwise";
}

}  // namespace

Observation Env::observe() const {
  Observation o;
  const Graph& g = g_;
  o.numNodes = static_cast<int>(g.nodes().size());
  o.nodeFeatures.assign(static_cast<size_t>(o.numNodes) * Observation::kNodeFeatures, 0.f);
  double ridge = target_->hw.peak("fp32") / std::max(1.0, target_->hw.dramBandwidth());
  for (size_t i = 0; i < g.nodes().size(); ++i) {
    const Node& n = g.nodes()[i];
    const OpCounts& c = stats_.nodes[i].counts;
    float* f = &o.nodeFeatures[i * Observation::kNodeFeatures];
    f[category(n.op)] = 1.f;
    double bytes = c.bytesRead + c.bytesWritten;
    double intensity = bytes > 0 ? c.flops / bytes : 0;
    f[8] = logScale(c.flops);
    f[9] = logScale(bytes);
    f[10] = logScale(intensity);
    f[11] = static_cast<float>(std::min(1.0, ridge > 0 ? intensity / ridge : 0));
    f[12] = n.mir.group >= 0 ? 1.f : 0.f;
    f[13] = n.mir.kernel != 0 ? 1.f : 0.f;
    bool reduced = n.mir.math != Precision::kF32;
    for (ValueId v : n.inputs) reduced = reduced || (v != kNoValue && g.value(v).mir.storage != Precision::kF32);
    f[14] = reduced ? 1.f : 0.f;
    f[15] = static_cast<float>(n.mir.stream) / static_cast<float>(std::max(1, target_->streams));
    for (ValueId v : n.inputs) {
      if (v != kNoValue && g.value(v).producer >= 0) o.edges.emplace_back(g.value(v).producer, static_cast<int>(i));
    }
  }
  for (double x : contextVector(target_->hw)) o.hw.push_back(static_cast<float>(x));
  for (const Candidate& c : legalActions()) {
    std::vector<float> row(Observation::kActionFeatures, 0.f);
    row[static_cast<size_t>(c.action.kind)] = 1.f;
    row[kNumActionKinds] = logScale(static_cast<double>(c.action.nodes.size()));
    row[kNumActionKinds + 1] = static_cast<float>(c.action.arg) / static_cast<float>(std::max(1, target_->streams));
    row[kNumActionKinds + 2] = reducedPrecision(c.action.choice) ? 1.f : 0.f;
    row[kNumActionKinds + 3] = c.action.value != kNoValue ? 1.f : 0.f;
    o.actionFeatures.insert(o.actionFeatures.end(), row.begin(), row.end());
    o.actionNodes.emplace_back(c.action.nodes.begin(), c.action.nodes.end());
  }
  return o;
}

}  // namespace cagr
