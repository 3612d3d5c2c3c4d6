// What the trainer trains on: tasks (a graph and its curriculum stage), the
// synthetic graphs of the early curriculum stages, the zoo models, and the
// platforms. No LibTorch here.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "cagr/graph.h"
#include "cagr/mir.h"

namespace cagr::train {

/// Curriculum stages (DESIGN §4): MLP-only graphs, then graphs with embedding
/// lookups, then graphs with interactions (the zoo models).
enum Stage : int { kStageMlp = 0, kStageEmbeddings = 1, kStageInteractions = 2, kNumStages = 3 };
const char* stageName(int stage);

/// The stage a graph belongs to: interactions (Interaction, FM, CIN, or a
/// batched matmul of embeddings) > lookups > MLP only.
int curriculumStage(const Graph& g);

struct Task {
  std::string name;  // "dlrm_criteo", "syn_mlp_3", ...
  Graph graph;
  int stage = 0;
  bool synthetic = false;
};

/// `perStage` synthetic graphs for each of the first two stages plus
/// DLRM-like ones with an Interaction, drawn from `rng`: MLPs (2-5 Gemm+bias+
/// activation layers, widths 32..1024), then embedding bags + bottom MLP +
/// concat + top MLP, then the same with a pairwise interaction.
StatusOr<std::vector<Task>> syntheticTasks(int perStage, uint64_t seed);

/// The zoo models `names` (zoo/onnx/<name>.dynamo.onnx under `repoDir`).
StatusOr<std::vector<Task>> zooTasks(const std::vector<std::string>& names, const std::string& repoDir);

/// A platform: its name and target.
struct Platform {
  std::string name;
  Target target;
};
/// Built-in names or profile JSON paths.
StatusOr<std::vector<Platform>> loadPlatforms(const std::vector<std::string>& names);

/// Splits "a,b,c" (empty items dropped).
std::vector<std::string> splitList(const std::string& s);

/// The stage the curriculum allows at `progress` in [0, 1]: MLP-only for the
/// first 15%, + embeddings until 40%, everything after (always everything
/// when the curriculum is off).
int allowedStage(double progress, bool curriculum);

}  // namespace cagr::train
