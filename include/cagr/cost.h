// The cost model (DESIGN §3-4): prices kernels, fused groups and whole graphs
// on a HardwareProfile. Passes decide what is legal, the cost model what it
// costs, policies what to do. Every estimate here is MODELLED.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "cagr/analysis.h"
#include "cagr/graph.h"
#include "cagr/hw.h"

namespace cagr {

enum class Bound { kCompute, kMemory, kLaunch, kFree };
const char* boundName(Bound b);

/// Modelled time of one kernel: T = max(F / FLOPSeff, B / BWeff) + T_launch.
struct KernelEstimate {
  double seconds = 0;
  double computeS = 0, memoryS = 0, launchS = 0;
  Bound bound = Bound::kFree;
  std::string kernel;      // implementation priced ("cublas.sgemm", "own.gather", ...)
  std::string shapeClass;  // efficiency class used ("gemm.small", ...)
};

/// One kernel of a plan (a fusion group or a single node).
struct GroupEstimate {
  std::vector<NodeId> members;  // graph order
  KernelEstimate estimate;
  int stream = 0;
  double startS = 0, endS = 0;  // on the modelled timeline
};

/// Modelled latency and memory of a graph (HIR or MIR plan) on one platform.
struct GraphEstimate {
  double latencyS = 0;          // critical path over the stream assignment (one stream: the sum)
  double serialS = 0;           // sum of kernel times
  double launchS = 0;           // share of latency spent in launch / dispatch
  double variance = 0;          // V_H: relative run-to-run std, from the profile
  int64_t peakMemoryBytes = 0;  // weights + peak live activations
  std::vector<KernelEstimate> nodes;  // parallel to Graph::nodes(); a group's cost sits on its anchor
  std::vector<GroupEstimate> kernels; // in schedule order
  const char* kind = "modelled";
};

/// A set of nodes executed as one kernel (vertical fusion).
struct FusedGroupEstimate {
  KernelEstimate fused;      // the group as one kernel
  double unfusedS = 0;       // sum of its members' kernel times
  double savedMemoryS = 0;   // intermediate traffic no longer written + read
  double savedLaunchS = 0;
  double benefit = 0;        // B_fuse = alpha*saved_mem - beta*sync - gamma*reg_pressure (+ saved launches)
};

/// What plan pricing reuses while only MIR decisions change: value sizes,
/// uses, each node's default kernel and rates (built by
/// RooflineCostModel::prepare for one graph structure and binding).
struct PricingCache;

/// Prices kernels and graphs for one platform.
class CostModel {
 public:
  virtual ~CostModel() = default;
  virtual const HardwareProfile& profile() const = 0;
  /// One node as its own kernel, at the concrete counts in `stats`.
  virtual KernelEstimate kernel(const Graph& g, const Node& n, const NodeStats& stats) const = 0;
  /// Nodes `group` (indices into g.nodes(), producer before consumer) as one kernel.
  virtual FusedGroupEstimate fusedGroup(const Graph& g, const GraphStats& stats,
                                        const std::vector<NodeId>& group) const = 0;
  /// The whole graph with its MIR decisions (fusion groups, kernels,
  /// precisions, layouts, streams); `streams` (optional, parallel to nodes)
  /// overrides the nodes' mir.stream.
  virtual StatusOr<GraphEstimate> graph(const Graph& g, const SymbolBindings& bindings,
                                        const std::vector<int>& streams = {}) const = 0;
};

/// The analytic roofline model, driven by the profile's measured (or default)
/// efficiencies per kernel implementation and shape class.
class RooflineCostModel : public CostModel {
 public:
  explicit RooflineCostModel(HardwareProfile hw);
  const HardwareProfile& profile() const override { return hw_; }
  KernelEstimate kernel(const Graph& g, const Node& n, const NodeStats& stats) const override;
  FusedGroupEstimate fusedGroup(const Graph& g, const GraphStats& stats, const std::vector<NodeId>& group) const override;
  StatusOr<GraphEstimate> graph(const Graph& g, const SymbolBindings& bindings,
                                const std::vector<int>& streams = {}) const override;

  /// graph() with the graph's stats already computed at `bindings` (the RL
  /// environment keeps them while only decisions change).
  StatusOr<GraphEstimate> graphWithStats(const Graph& g, const GraphStats& stats, const SymbolBindings& bindings,
                                         const std::vector<int>& streams = {},
                                         const PricingCache* cache = nullptr) const;
  /// The cache for `g` at `stats` / `bindings` (valid until the structure
  /// changes). With `summaryOnly`, estimates made with it carry latency,
  /// memory and variance but no per-node / per-kernel detail (faster).
  StatusOr<std::shared_ptr<const PricingCache>> prepare(const Graph& g, const GraphStats& stats,
                                                        const SymbolBindings& bindings, bool summaryOnly = false) const;
  /// Which kernel implementation and shape class a node is priced as.
  std::pair<std::string, std::string> kernelClass(const Graph& g, const Node& n, const NodeStats& stats) const;
  /// Prices raw counts as one call of `kernel` in `shapeClass` (benchmarks use it
  /// to score held-out measurements; "view" is free).
  KernelEstimate price(const std::string& kernel, const std::string& shapeClass, const OpCounts& c) const;

 private:
  HardwareProfile hw_;
};

}  // namespace cagr
