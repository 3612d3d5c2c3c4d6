// Training tasks: the synthetic graphs of the curriculum's early stages
// (built with the Graph API: only shapes matter to the cost model, so weights
// are zeros; some weights and tables are computed from constants, as in
// exported models, so the policy meets fold_constants), the zoo models, the
// platforms, and the stage schedule.
#include "train/tasks.h"

#include <algorithm>
#include <sstream>

#include "cagr/importer.h"
#include "lower/op_sets.h"

namespace cagr::train {
namespace {

class Builder {
 public:
  Builder(std::mt19937_64& rng, std::string prefix) : rng_(rng), prefix_(std::move(prefix)) {}
  int64_t pick(std::initializer_list<int64_t> xs) {
    std::vector<int64_t> v(xs);
    return v[std::uniform_int_distribution<size_t>(0, v.size() - 1)(rng_)];
  }
  int64_t between(int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng_); }
  bool coin(double p) { return std::uniform_real_distribution<double>(0, 1)(rng_) < p; }
  std::string name(const std::string& what) { return prefix_ + what + std::to_string(counter_++); }
  ValueId zeros(const std::string& what, std::vector<int64_t> shape) {
    return g.addConstant(name(what), Tensor(DType::kF32, std::move(shape)));
  }
  /// A [rows, cols] parameter: a constant, or (with probability 1/4) one the
  /// graph computes from constants, as exports leave them — a factorized
  /// matrix (U [rows, r] x V [r, cols]), then a bias, a scale or an
  /// activation — which only fold_constants removes, and only while no
  /// fusion has taken its nodes.
  StatusOr<ValueId> parameter(const std::string& what, int64_t rows, int64_t cols) {
    if (!coin(0.25)) return zeros(what, {rows, cols});
    const int64_t r = pick({8, 16, 32});
    const ValueId u = zeros(what + "_u", {rows, r}), v = zeros(what + "_v", {r, cols});
    CAGR_ASSIGN_OR_RETURN(ValueId p, g.add(OpKind::kMatMul, {u, v}, {}, name(what + "_factor")));
    for (int64_t step = between(0, 2); step > 0; --step) {
      const int64_t kind = pick({0, 1, 2});
      if (kind == 2) {
        CAGR_ASSIGN_OR_RETURN(p, g.add(pick({0, 1}) ? OpKind::kRelu : OpKind::kTanh, {p}, {}, name(what + "_act")));
      } else {
        const OpKind op = kind == 0 ? OpKind::kAdd : OpKind::kMul;
        CAGR_ASSIGN_OR_RETURN(p, g.add(op, {p, zeros(what + "_c", {cols})}, {}, name(what + "_affine")));
      }
    }
    return p;
  }
  /// Gemm + bias, then an activation (optionally a BatchNorm first).
  StatusOr<ValueId> dense(ValueId x, int64_t in, int64_t out, OpKind act) {
    Attrs a;
    a.set("transB", int64_t{1});
    CAGR_ASSIGN_OR_RETURN(ValueId w, parameter("w", out, in));
    CAGR_ASSIGN_OR_RETURN(ValueId y, g.add(OpKind::kGemm, {x, w, zeros("b", {out})}, a, name("fc")));
    if (coin(0.25)) {
      std::vector<ValueId> ins{y};
      for (const char* p : {"bn_scale", "bn_bias", "bn_mean", "bn_var"}) ins.push_back(zeros(p, {out}));
      CAGR_ASSIGN_OR_RETURN(y, g.add(OpKind::kBatchNorm, ins, {}, name("bn")));
    }
    return g.add(act, {y}, {}, name("act"));
  }
  /// A stack of dense layers from width `in`; returns the output and its width.
  StatusOr<std::pair<ValueId, int64_t>> mlp(ValueId x, int64_t in, int layers, int64_t last) {
    for (int l = 0; l < layers; ++l) {
      int64_t out = l + 1 == layers && last > 0 ? last : pick({32, 64, 128, 256, 512, 1024});
      OpKind act = l + 1 == layers && last == 1 ? OpKind::kSigmoid
                   : pick({0, 1, 2}) == 2       ? OpKind::kTanh
                                                : OpKind::kRelu;
      CAGR_ASSIGN_OR_RETURN(x, dense(x, in, out, act));
      in = out;
    }
    return std::make_pair(x, in);
  }
  Graph g;

 private:
  std::mt19937_64& rng_;
  std::string prefix_;
  int counter_ = 0;
};

StatusOr<Graph> mlpGraph(std::mt19937_64& rng) {
  Builder b(rng, "");
  int64_t in = b.pick({13, 32, 64, 256, 512});
  ValueId x = b.g.addInput("dense", TensorType{DType::kF32, {kBatch, in}});
  CAGR_ASSIGN_OR_RETURN(auto out, b.mlp(x, in, static_cast<int>(b.between(2, 5)), 1));
  b.g.addOutput(out.first, "out");
  return std::move(b.g);
}

// Embedding bags + bottom MLP, concatenated, then a top MLP; with
// `interaction`, the bag outputs and the bottom output (all width d) are
// stacked and pass through a pairwise Interaction first (DLRM-like).
StatusOr<Graph> embeddingGraph(std::mt19937_64& rng, bool interaction) {
  Builder b(rng, "");
  int64_t dense = b.pick({13, 16, 32}), d = b.pick({16, 32, 64}), tables = b.between(2, 12);
  ValueId x = b.g.addInput("dense", TensorType{DType::kF32, {kBatch, dense}});
  CAGR_ASSIGN_OR_RETURN(auto bottom, b.mlp(x, dense, static_cast<int>(b.between(1, 3)), d));
  std::vector<ValueId> parts{bottom.first};
  for (int64_t t = 0; t < tables; ++t) {
    int64_t pooling = b.pick({1, 1, 2, 4});
    ValueId ids = b.g.addInput("ids" + std::to_string(t), TensorType{DType::kI64, {kBatch, pooling}});
    CAGR_ASSIGN_OR_RETURN(ValueId table, b.parameter("table", b.between(500, 5000), d));
    CAGR_ASSIGN_OR_RETURN(ValueId e, b.g.add(OpKind::kEmbeddingBag, {table, ids}, {}, b.name("bag")));
    parts.push_back(e);
  }
  Attrs cat;
  cat.set("axis", int64_t{1});
  CAGR_ASSIGN_OR_RETURN(ValueId joined, b.g.add(OpKind::kConcat, parts, cat, b.name("cat")));
  int64_t width = d * (tables + 1);
  if (interaction) {
    Attrs shape;
    shape.set("shape", std::vector<int64_t>{0, tables + 1, d});
    CAGR_ASSIGN_OR_RETURN(ValueId stacked, b.g.add(OpKind::kReshape, {joined}, shape, b.name("view")));
    CAGR_ASSIGN_OR_RETURN(ValueId pairs, b.g.add(OpKind::kInteraction, {stacked}, {}, b.name("interact")));
    CAGR_ASSIGN_OR_RETURN(joined, b.g.add(OpKind::kConcat, {bottom.first, pairs}, cat, b.name("join")));
    width = d + (tables + 1) * tables / 2;
  }
  CAGR_ASSIGN_OR_RETURN(auto top, b.mlp(joined, width, static_cast<int>(b.between(1, 3)), 1));
  b.g.addOutput(top.first, "out");
  return std::move(b.g);
}

}  // namespace

const char* stageName(int stage) {
  switch (stage) {
    case kStageMlp:
      return "mlp";
    case kStageEmbeddings:
      return "embeddings";
    default:
      return "interactions";
  }
}

int curriculumStage(const Graph& g) {
  int stage = kStageMlp;
  for (const Node& n : g.nodes()) {
    if (n.op == OpKind::kInteraction || n.op == OpKind::kFM || n.op == OpKind::kCIN || n.op == OpKind::kSpMM) {
      return kStageInteractions;
    }
    if (ops::in(ops::kLookups, n.op)) stage = kStageEmbeddings;
  }
  return stage;
}

StatusOr<std::vector<Task>> syntheticTasks(int perStage, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<Task> out;
  for (int stage = 0; stage < kNumStages; ++stage) {
    for (int i = 0; i < perStage; ++i) {
      StatusOr<Graph> g = stage == kStageMlp ? mlpGraph(rng) : embeddingGraph(rng, stage == kStageInteractions);
      std::string name = std::string("syn_") + stageName(stage) + "_" + std::to_string(i);
      if (!g.isOk()) return g.status().withContext("synthetic graph " + name);
      out.push_back(Task{name, std::move(*g), stage, true});
    }
  }
  return out;
}

StatusOr<std::vector<Task>> zooTasks(const std::vector<std::string>& names, const std::string& repoDir) {
  std::vector<Task> out;
  for (const std::string& m : names) {
    std::string path = repoDir + "/zoo/onnx/" + m + ".dynamo.onnx";
    CAGR_ASSIGN_OR_RETURN(Graph g, importOnnx(path));
    int stage = curriculumStage(g);
    out.push_back(Task{m, std::move(g), stage, false});
  }
  return out;
}

StatusOr<std::vector<Platform>> loadPlatforms(const std::vector<std::string>& names) {
  std::vector<Platform> out;
  for (const std::string& n : names) {
    CAGR_ASSIGN_OR_RETURN(Target t, resolveTarget(n));
    bool file = n.size() > 5 && n.substr(n.size() - 5) == ".json";
    out.push_back(Platform{file ? t.hw.name : n, std::move(t)});
  }
  if (out.empty()) return invalidArgument("no platforms given");
  return out;
}

std::vector<std::string> splitList(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string x; std::getline(ss, x, ',');) {
    if (!x.empty()) out.push_back(x);
  }
  return out;
}

int allowedStage(double progress, bool curriculum) {
  if (!curriculum || progress >= 0.4) return kStageInteractions;
  return progress < 0.15 ? kStageMlp : kStageEmbeddings;
}

}  // namespace cagr::train
