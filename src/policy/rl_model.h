// The learned policy's network as the compiler core sees it (DESIGN §4, issue
// 7): its hyper-parameters, the named weight tensors (one table, read by the
// core's loader and by the LibTorch trainer alike), the `.rlp` file format,
// and a forward pass in plain C++ loops (no LibTorch at inference).
//
// The network, on one Observation:
//   h  = (c_H - hw.mean) / hw.scale                    hardware context, normalised
//   t  = relu(film.trunk(h))                           FiLM trunk (shared by the layers)
//   x  = relu(embed(node features))                    N x D
//   per layer l: z = x W_l^T, heads of D/H; over j in {i} ∪ producers(i) ∪ consumers(i):
//     a_ij = softmax_j leaky_relu(att_src_l·z_j + att_dst_l·z_i, 0.2)   (per head)
//     o_i  = concat_heads Σ_j a_ij z_j + bias_l
//     [γ-1, β] = film_l(t);  x_i <- x_i + relu(γ ⊙ o_i + β)
//   g  = mean_i x_i
//   logit_k = scorer.1(relu(scorer.0([action row k, mean_{i in nodes(k)} x_i, g])))
//   probs = softmax over the legal actions; value = value.1(relu(value.0([g, h])))
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "cagr/env.h"
#include "cagr/policy.h"
#include "cagr/status.h"

namespace cagr::rl {

/// What each action's choice adds to its observation row: the kernel's
/// pattern (9, one-hot), library vs generated vs auto (3), the precision (5),
/// the layout (3) and in-place / fold (2).
constexpr int kChoiceFeatures = 22;
constexpr int kActionRow = Observation::kActionFeatures + kChoiceFeatures;

/// env.observe() with every action row extended by kChoiceFeatures features
/// of its choice (the Observation's own rows cannot tell two kernels or two
/// precisions for the same node apart). What the policy reads.
Observation observe(const Env& env);

/// Hyper-parameters (stored in the file's header).
struct ModelConfig {
  int nodeFeatures = Observation::kNodeFeatures;
  int actionFeatures = kActionRow;
  int hwFeatures = 16;  // contextVectorSize()
  int hidden = 64;      // D
  int heads = 4;        // H (D must be a multiple)
  int layers = 3;       // graph attention layers
  int filmHidden = 64;
  int scorerHidden = 64;
  int valueHidden = 64;
  bool film = true;  // false: the ablation without FiLM (no film.* tensors)
  bool operator==(const ModelConfig&) const = default;
};

/// Checks the numbers of a config; the message names the field.
Status validateConfig(const ModelConfig& c);

/// One weight tensor: its name and shape (Linear weights are [out, in]).
struct TensorSpec {
  std::string name;
  std::vector<int64_t> shape;
  int64_t numel() const;
};

/// Every tensor of a config, in file order.
std::vector<TensorSpec> tensorSpecs(const ModelConfig& c);

/// The forward pass's result on one observation.
struct ModelOutput {
  std::vector<float> logits;  // one per legal action (the observation's order; stop last)
  std::vector<float> probs;   // softmax of logits
  float value = 0;
};

/// A policy network with its weights.
class PolicyModel {
 public:
  /// Weights for `c` (tensors in tensorSpecs order, sizes checked) and free
  /// JSON metadata (how it was trained).
  static StatusOr<PolicyModel> create(const ModelConfig& c, std::vector<std::vector<float>> tensors,
                                      std::string metaJson = "{}");
  /// Reads an .rlp file; errors name the file and the field.
  static StatusOr<PolicyModel> load(const std::string& path);
  /// Parses .rlp bytes; `origin` names them in errors.
  static StatusOr<PolicyModel> parse(std::string_view bytes, const std::string& origin);
  /// The .rlp bytes: same weights, same bytes.
  std::string serialize() const;
  Status save(const std::string& path) const;

  /// Logits, probabilities and value for `o` (errors on a malformed observation).
  StatusOr<ModelOutput> forward(const Observation& o) const;

  const ModelConfig& config() const { return config_; }
  const std::vector<TensorSpec>& specs() const { return specs_; }
  const std::vector<std::vector<float>>& tensors() const { return tensors_; }
  /// The tensor named `name` (nullptr when there is none).
  const std::vector<float>* find(std::string_view name) const;
  const std::string& metaJson() const { return meta_; }

 private:
  ModelConfig config_;
  std::vector<TensorSpec> specs_;
  std::vector<std::vector<float>> tensors_;
  std::string meta_ = "{}";
};

/// The .rlp format version this build writes and reads.
constexpr uint32_t kFormatVersion = 1;

/// The `rl` policy (greedy over `model`'s probabilities) for weights already
/// in memory — what the trainer evaluates with.
std::unique_ptr<Policy> makePolicy(PolicyModel model);

}  // namespace cagr::rl
