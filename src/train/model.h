// The policy network in LibTorch, for training: the same network as the
// core's forward pass (formula in src/policy/rl_model.h), over a batch of
// observations packed as one disjoint graph, with parameters named by the
// core's tensor table so weights move both ways without renaming.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "policy/rl_model.h"

namespace cagr::train {

/// Observations packed for one forward pass: node, edge and action tensors
/// with offsets, and which graph each row belongs to.
struct Batch {
  int64_t numGraphs = 0;
  torch::Tensor nodeFeatures;            // [nodes, F]
  torch::Tensor nodeGraph;               // [nodes] graph of each node
  torch::Tensor nodeCount;               // [graphs] float
  torch::Tensor src, dst;                // [edges]: self loops and both directions of every data edge
  torch::Tensor hw;                      // [graphs, C]
  torch::Tensor actionFeatures;          // [actions, A]
  torch::Tensor actionGraph;             // [actions]
  torch::Tensor touchAction, touchNode;  // incidence: action k touches node i
  torch::Tensor touchCount;              // [actions] float, nodes each action touches
  torch::Tensor actionOffset;            // [graphs] first action row of each graph
};
Batch makeBatch(const std::vector<const Observation*>& obs);

struct NetOutput {
  torch::Tensor logits;    // [actions]
  torch::Tensor logProbs;  // [actions], log-softmax within each graph
  torch::Tensor value;     // [graphs]
};

class PolicyNetImpl : public torch::nn::Module {
 public:
  /// Fresh weights (LibTorch's default initialisation, from its global
  /// generator: seed it first), hardware normalisation from `hwMean` / `hwScale`.
  PolicyNetImpl(const rl::ModelConfig& c, const std::vector<float>& hwMean, const std::vector<float>& hwScale);
  NetOutput forward(const Batch& b);
  /// The weights as the core's model (`metaJson` recorded in the file).
  StatusOr<rl::PolicyModel> toModel(const std::string& metaJson = "{}") const;
  /// Copies `m`'s weights in (configs must match).
  Status loadFrom(const rl::PolicyModel& m);
  const rl::ModelConfig& config() const { return config_; }

 private:
  const torch::Tensor& p(const std::string& name) const { return params_.at(name); }
  torch::Tensor attention(int layer, const torch::Tensor& x, const Batch& b);

  rl::ModelConfig config_;
  std::map<std::string, torch::Tensor> params_;  // by the core's tensor names
};
TORCH_MODULE(PolicyNet);

/// Entropy of each graph's action distribution, [graphs].
torch::Tensor entropyPerGraph(const NetOutput& out, const Batch& b);

/// log of the probability mass each graph puts on its target actions,
/// [graphs]; targets are (graph, global action row) pairs.
torch::Tensor targetLogProb(const NetOutput& out, const Batch& b, const std::vector<int64_t>& graph,
                            const std::vector<int64_t>& row);

}  // namespace cagr::train
