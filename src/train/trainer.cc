// The training loop: setup (tasks, platforms, hardware normalisation,
// network), imitation (behaviour cloning on an expert search policy's
// trajectories, curriculum over its epochs), PPO (clipped surrogate, GAE,
// entropy bonus; every update draws the same number of episodes per
// platform and weights samples so each platform counts equally), greedy
// evaluation on the zoo training cells with the best policy kept, and
// checkpoints. Randomness comes from --seed only: LibTorch's generator for
// the initial weights, one std::mt19937_64 for everything else.
#include "train/trainer.h"

#include <torch/torch.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <random>

#include <nlohmann/json.hpp>

#include "train/episodes.h"
#include "train/model.h"
#include "train/tasks.h"

namespace cagr::train {
namespace {

using Clock = std::chrono::steady_clock;
using Samples = std::vector<const Sample*>;

struct Cell {
  int task, platform;
};

struct Losses {
  double loss = 0, entropy = 0, accuracy = 0, clipFrac = 0;
  int batches = 0;
  void add(const Losses& o) {
    loss += o.loss, entropy += o.entropy, accuracy += o.accuracy, clipFrac += o.clipFrac, batches += 1;
  }
  Losses mean() const {
    double n = std::max(1, batches);
    return Losses{loss / n, entropy / n, accuracy / n, clipFrac / n, batches};
  }
};

// Weights so every platform counts equally in a set of samples (mean 1).
std::vector<float> platformWeights(const Samples& s, size_t platforms) {
  std::vector<double> count(platforms, 0);
  for (const Sample* x : s) count[static_cast<size_t>(x->platform)] += 1;
  double present = 0;
  for (double c : count) present += c > 0 ? 1 : 0;
  std::vector<float> w;
  for (const Sample* x : s) {
    w.push_back(
        static_cast<float>(static_cast<double>(s.size()) / (present * count[static_cast<size_t>(x->platform)])));
  }
  return w;
}

torch::Tensor column(const Samples& mb, float Sample::*field) {
  std::vector<float> v;
  for (const Sample* s : mb) v.push_back(s->*field);
  return torch::tensor(v);
}

// Fraction of graphs whose most probable action is the one taken (one of
// the targets, where there are any).
double accuracyOf(const NetOutput& out, const Batch& b, const Samples& mb) {
  auto off = b.actionOffset.accessor<int64_t, 1>();
  auto logits = out.logits.accessor<float, 1>();
  int64_t total = out.logits.size(0);
  double hits = 0;
  for (size_t g = 0; g < mb.size(); ++g) {
    int64_t lo = off[static_cast<int64_t>(g)];
    int64_t hi = g + 1 < mb.size() ? off[static_cast<int64_t>(g) + 1] : total;
    int64_t best = lo;
    for (int64_t k = lo; k < hi; ++k) best = logits[k] > logits[best] ? k : best;
    const std::vector<int>& t = mb[g]->targets;
    bool hit = t.empty() ? best - lo == mb[g]->action : std::find(t.begin(), t.end(), best - lo) != t.end();
    hits += hit ? 1 : 0;
  }
  return hits / static_cast<double>(mb.size());
}

class Trainer {
 public:
  Trainer(const TrainOptions& o, std::ostream& log)
      : o_(o), log_(log), start_(Clock::now()), rng_(o.seed * 0x9E3779B97F4A7C15ull + 17) {
    bool fineTuning = !o_.init.empty();
    if (o_.bcLr <= 0) o_.bcLr = fineTuning ? 5e-4 : 2e-3;
    if (o_.bcMinibatch <= 0) o_.bcMinibatch = fineTuning ? 16 : 64;
  }
  Status setup();
  Status imitation();
  Status reinforce();
  StatusOr<TrainReport> finish();

 private:
  Status evaluate(const std::string& label);
  enum class Fit { kImitation, kPpo, kValue };
  Losses step(const Samples& mb, const std::vector<float>& w, Fit fit);
  Losses runEpoch(Samples pool, int minibatch, Fit fit);
  void warmValueHead(const Samples& pool, const char* what);
  Status collectExperts(std::vector<Episode>& out);
  Status rollouts(int allowed, std::vector<Episode>& out);
  std::string metaJson() const;
  /// The first stage with graphs: a stage without any (no synthetic graphs)
  /// lets the next one in.
  int lowestStage() const {
    int lowest = kNumStages - 1;
    for (const Task& t : tasks_) lowest = std::min(lowest, t.stage);
    return lowest;
  }
  bool outOfTime() const { return o_.minutes > 0 && seconds() > o_.minutes * 60; }
  double seconds() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }
  void setLr(double lr) {
    for (auto& g : opt_->param_groups()) static_cast<torch::optim::AdamOptions&>(g.options()).lr(lr);
  }
  void line(const std::string& s) { log_ << s << std::endl; }

  TrainOptions o_;
  std::ostream& log_;
  Clock::time_point start_;
  std::mt19937_64 rng_;
  std::vector<Task> tasks_;
  std::vector<Platform> platforms_;
  std::vector<Cell> evalCells_;
  std::vector<double> expertByCell_;
  PolicyNet net_{nullptr};
  std::unique_ptr<torch::optim::Adam> opt_;
  std::unique_ptr<torch::optim::Adam> valueOpt_;  // the value head's weights alone (warm-up)
  std::vector<torch::Tensor> valueParams_;
  std::optional<rl::PolicyModel> best_;
  TrainReport report_;
  double bestEval_ = -INFINITY;
};

Status Trainer::setup() {
  torch::manual_seed(o_.seed);
  // One LibTorch thread: its OpenMP workers spin, which on a shared 2-core
  // machine costs 4x; --threads parallelises episodes instead.
  torch::set_num_threads(1);
  CAGR_ASSIGN_OR_RETURN(platforms_, loadPlatforms(o_.platforms));
  CAGR_ASSIGN_OR_RETURN(tasks_, zooTasks(o_.models, o_.repoDir));
  CAGR_ASSIGN_OR_RETURN(std::vector<Task> synthetic, syntheticTasks(o_.syntheticPerStage, o_.seed));
  for (Task& t : synthetic) tasks_.push_back(std::move(t));
  if (tasks_.empty()) return invalidArgument("no training graphs (give --models or --synthetic > 0)");
  for (size_t t = 0; t < tasks_.size(); ++t) {
    for (size_t p = 0; p < platforms_.size(); ++p) {
      const bool evaluated = !tasks_[t].synthetic || o_.models.empty() || o_.evalSynthetic;
      if (evaluated) evalCells_.push_back({static_cast<int>(t), static_cast<int>(p)});
    }
  }
  std::vector<std::vector<float>> contexts;
  for (const Platform& p : platforms_) {
    std::vector<float> c;
    for (double x : contextVector(p.target.hw)) c.push_back(static_cast<float>(x));
    contexts.push_back(std::move(c));
  }
  std::vector<float> mean, scale;
  hwNormalisation(contexts, mean, scale);
  o_.model.hwFeatures = static_cast<int>(mean.size());
  CAGR_RETURN_IF_ERROR(rl::validateConfig(o_.model));
  net_ = PolicyNet(o_.model, mean, scale);
  if (!o_.init.empty()) {
    CAGR_ASSIGN_OR_RETURN(rl::PolicyModel init, rl::PolicyModel::load(o_.init));
    CAGR_RETURN_IF_ERROR(net_->loadFrom(init).withContext("--init " + o_.init));
  }
  opt_ = std::make_unique<torch::optim::Adam>(net_->parameters(), torch::optim::AdamOptions(o_.bcLr));
  for (const auto& kv : net_->named_parameters()) {
    if (kv.key().rfind("value_", 0) == 0) valueParams_.push_back(kv.value());
  }
  valueOpt_ = std::make_unique<torch::optim::Adam>(valueParams_, torch::optim::AdamOptions(o_.valueWarmupLr));
  char buf[256];
  std::snprintf(buf, sizeof buf, "[setup] %zu graphs (%zu zoo), %zu platforms, %zu evaluation cells, %d threads",
                tasks_.size(), o_.models.size(), platforms_.size(), evalCells_.size(), o_.threads);
  line(buf);
  return Status::ok();
}

Losses Trainer::step(const Samples& mb, const std::vector<float>& w, Fit fit) {
  bool ppo = fit == Fit::kPpo;
  std::vector<const Observation*> obs;
  std::vector<int64_t> chosen;
  for (const Sample* s : mb) obs.push_back(&s->obs);
  Batch b = makeBatch(obs);
  auto off = b.actionOffset.accessor<int64_t, 1>();
  for (size_t g = 0; g < mb.size(); ++g) chosen.push_back(off[static_cast<int64_t>(g)] + mb[g]->action);
  NetOutput out = net_->forward(b);
  torch::Tensor weights = torch::tensor(w);
  torch::Tensor logp = out.logProbs.index_select(0, torch::tensor(chosen));
  torch::Tensor entropy = entropyPerGraph(out, b);
  torch::Tensor valueLoss = (out.value - column(mb, &Sample::ret)).pow(2);
  Losses l;
  torch::Tensor policyLoss;
  if (ppo) {
    torch::Tensor ratio = (logp - column(mb, &Sample::logProb)).exp();
    torch::Tensor adv = column(mb, &Sample::advantage);
    torch::Tensor clipped = ratio.clamp(1 - o_.clip, 1 + o_.clip);
    policyLoss = -torch::min(ratio * adv, clipped * adv);
    l.clipFrac = ((ratio - 1).abs() > o_.clip).to(torch::kFloat).mean().item<double>();
  } else {
    // Imitation: the mass on every action the expert endorses here.
    std::vector<int64_t> graph, row;
    for (size_t g = 0; g < mb.size(); ++g) {
      const std::vector<int>& t = mb[g]->targets;
      for (int k : t.empty() ? std::vector<int>{mb[g]->action} : t) {
        graph.push_back(static_cast<int64_t>(g));
        row.push_back(off[static_cast<int64_t>(g)] + k);
      }
    }
    policyLoss = -targetLogProb(out, b, graph, row);
  }
  double entropyCoef = ppo ? o_.entropyCoef : 0.0;
  torch::Tensor loss = fit == Fit::kValue
                           ? (weights * valueLoss).mean()
                           : (weights * (policyLoss + o_.valueCoef * valueLoss - entropyCoef * entropy)).mean();
  opt_->zero_grad();
  valueOpt_->zero_grad();
  loss.backward();
  if (fit == Fit::kValue) {
    // The value head alone moves: the policy it sits on is left as it is.
    torch::nn::utils::clip_grad_norm_(valueParams_, 1.0);
    valueOpt_->step();
  } else {
    torch::nn::utils::clip_grad_norm_(net_->parameters(), 1.0);
    opt_->step();
  }
  l.loss = loss.item<double>();
  l.entropy = entropy.mean().item<double>();
  l.accuracy = accuracyOf(out, b, mb);
  return l;
}

Losses Trainer::runEpoch(Samples pool, int minibatch, Fit fit) {
  std::shuffle(pool.begin(), pool.end(), rng_);
  std::vector<float> weights = platformWeights(pool, platforms_.size());
  Losses total;
  for (size_t at = 0; at < pool.size(); at += static_cast<size_t>(minibatch)) {
    size_t end = std::min(pool.size(), at + static_cast<size_t>(minibatch));
    Samples mb(pool.begin() + static_cast<std::ptrdiff_t>(at), pool.begin() + static_cast<std::ptrdiff_t>(end));
    std::vector<float> w(weights.begin() + static_cast<std::ptrdiff_t>(at),
                         weights.begin() + static_cast<std::ptrdiff_t>(end));
    total.add(step(mb, w, fit));
  }
  return total.mean();
}

Status Trainer::collectExperts(std::vector<Episode>& out) {
  std::vector<Cell> cells;
  for (size_t t = 0; t < tasks_.size(); ++t) {
    for (size_t p = 0; p < platforms_.size(); ++p) cells.push_back({static_cast<int>(t), static_cast<int>(p)});
  }
  // Every expert rollout is an episode on a training platform: under
  // --episodes (few-shot fine-tuning) they share the cap with PPO's.
  if (o_.maxEpisodes > 0 && cells.size() > static_cast<size_t>(o_.maxEpisodes)) {
    return invalidArgument(
        "--episodes " + std::to_string(o_.maxEpisodes) + " is fewer than the " + std::to_string(cells.size()) +
        " expert rollouts imitation needs (one per graph and " +
        "platform): raise it, train on fewer graphs (--synthetic 0, --models) or add --no-imitation");
  }
  report_.episodesDone += static_cast<int>(cells.size());
  out.assign(cells.size(), Episode{});
  CAGR_RETURN_IF_ERROR(parallelFor(cells.size(), o_.threads, [&](size_t i) -> Status {
    const Cell& c = cells[i];
    CAGR_ASSIGN_OR_RETURN(out[i],
                          expertEpisode(o_.expert, tasks_[c.task], c.task, platforms_[c.platform], c.platform, o_.env));
    return Status::ok();
  }));
  for (size_t e = 0; e < evalCells_.size(); ++e) {
    for (const Episode& ep : out) {
      if (ep.task == evalCells_[e].task && ep.platform == evalCells_[e].platform) {
        expertByCell_.push_back(ep.episodeReturn);
      }
    }
  }
  size_t samples = 0;
  for (const Episode& ep : out) samples += ep.samples.size();
  char buf[200];
  std::snprintf(buf, sizeof buf, "[imitation] %s on %zu cells: %zu decisions (%.1f s)", o_.expert.c_str(), cells.size(),
                samples, seconds());
  line(buf);
  return Status::ok();
}

void Trainer::warmValueHead(const Samples& pool, const char* what) {
  Losses l;
  for (int e = 0; e < o_.valueWarmup; ++e) l = runEpoch(pool, o_.ppoMinibatch, Fit::kValue);
  char buf[200];
  std::snprintf(buf, sizeof buf, "[value warm-up] %d epochs on %zu decisions' %s: value loss %.4f | %.1f s",
                o_.valueWarmup, pool.size(), what, l.loss, seconds());
  line(buf);
}

Status Trainer::imitation() {
  // Fine-tuning starts from a policy: its score is the one to beat.
  if (!o_.init.empty()) CAGR_RETURN_IF_ERROR(evaluate("initial weights"));
  std::vector<Episode> experts;
  CAGR_RETURN_IF_ERROR(collectExperts(experts));
  if (o_.valueWarmup > 0) {
    Samples all;
    for (const Episode& e : experts) {
      for (const Sample& x : e.samples) all.push_back(&x);
    }
    warmValueHead(all, "expert returns");
  }
  setLr(o_.bcLr);
  for (int epoch = 0; epoch < o_.bcEpochs && !outOfTime(); ++epoch) {
    // A fine-tuned policy has been through the curriculum.
    bool curriculum = o_.curriculum && o_.init.empty();
    int allowed = std::max(allowedStage(static_cast<double>(epoch) / o_.bcEpochs, curriculum), lowestStage());
    Samples pool;
    for (const Episode& e : experts) {
      for (const Sample& s : e.samples) {
        if (s.stage <= allowed) pool.push_back(&s);
      }
    }
    Losses l = runEpoch(pool, o_.bcMinibatch, Fit::kImitation);
    report_.bcEpochsDone = epoch + 1;
    report_.bcLoss.push_back(l.loss);
    report_.bcAccuracy.push_back(l.accuracy);
    char buf[256];
    std::snprintf(buf, sizeof buf,
                  "[imitation %d/%d] stage <= %s | %zu decisions | loss %.4f | expert-endorsed argmax %.3f | "
                  "entropy %.3f | %.1f s",
                  epoch + 1, o_.bcEpochs, stageName(allowed), pool.size(), l.loss, l.accuracy, l.entropy, seconds());
    line(buf);
  }
  return evaluate("after imitation");
}

Status Trainer::rollouts(int allowed, std::vector<Episode>& out) {
  allowed = std::max(allowed, lowestStage());
  std::vector<std::vector<int>> byStage(kNumStages);
  for (size_t t = 0; t < tasks_.size(); ++t) {
    if (tasks_[t].stage <= allowed) byStage[static_cast<size_t>(tasks_[t].stage)].push_back(static_cast<int>(t));
  }
  std::erase_if(byStage, [](const std::vector<int>& v) { return v.empty(); });
  struct Job {
    int task, platform;
    uint64_t seed;
  };
  std::vector<Job> jobs;
  for (size_t p = 0; p < platforms_.size(); ++p) {
    for (int k = 0; k < o_.episodesPerPlatform; ++k) {
      // A stage uniformly among those allowed, then a graph of it uniformly.
      const auto& pool = byStage[std::uniform_int_distribution<size_t>(0, byStage.size() - 1)(rng_)];
      int task = pool[std::uniform_int_distribution<size_t>(0, pool.size() - 1)(rng_)];
      jobs.push_back({task, static_cast<int>(p), rng_()});
    }
  }
  if (o_.maxEpisodes > 0 && jobs.size() > static_cast<size_t>(o_.maxEpisodes - report_.episodesDone)) {
    // Cut short by --episodes: the first episodes of every platform in turn
    // (jobs are drawn platform by platform, so the draw itself is unchanged).
    size_t left = static_cast<size_t>(o_.maxEpisodes - report_.episodesDone);
    size_t per = static_cast<size_t>(o_.episodesPerPlatform);
    std::vector<Job> kept;
    for (size_t i = 0; i < jobs.size(); ++i) {
      if ((i % per) * platforms_.size() + i / per < left) kept.push_back(jobs[i]);
    }
    jobs = std::move(kept);
  }
  report_.episodesDone += static_cast<int>(jobs.size());
  CAGR_ASSIGN_OR_RETURN(rl::PolicyModel model, net_->toModel());
  out.assign(jobs.size(), Episode{});
  return parallelFor(jobs.size(), o_.threads, [&](size_t i) -> Status {
    const Job& j = jobs[i];
    CAGR_ASSIGN_OR_RETURN(
        out[i], sampleEpisode(model, tasks_[j.task], j.task, platforms_[j.platform], j.platform, o_.env, j.seed));
    computeGae(out[i], o_.gamma, o_.lambda);
    return Status::ok();
  });
}

Status Trainer::reinforce() {
  if (!o_.init.empty() && o_.imitation) {
    // Fine-tuning: Adam's second moments from imitation's large gradients
    // would shrink PPO's few steps to nothing (clip fraction 0), so PPO
    // starts with a fresh optimizer.
    opt_ = std::make_unique<torch::optim::Adam>(net_->parameters(), torch::optim::AdamOptions(o_.lr));
  }
  setLr(o_.lr);
  // Fine-tuning starts from a policy: its score is the one to beat (with
  // imitation, evaluated before it).
  if (!o_.init.empty() && !o_.imitation) CAGR_RETURN_IF_ERROR(evaluate("initial weights"));
  auto episodesLeft = [&] { return o_.maxEpisodes <= 0 || report_.episodesDone < o_.maxEpisodes; };
  for (int u = 0; u < o_.updates && !outOfTime() && episodesLeft(); ++u) {
    // With imitation the curriculum ran over its epochs, and a fine-tuned
    // policy has been through it: PPO then sees every stage.
    bool curriculum = o_.curriculum && !o_.imitation && o_.init.empty();
    int allowed = allowedStage(static_cast<double>(u) / o_.updates, curriculum);
    std::vector<Episode> episodes;
    double t0 = seconds();
    CAGR_RETURN_IF_ERROR(rollouts(allowed, episodes));
    double t1 = seconds();
    Samples samples;
    std::vector<double> perPlatform(platforms_.size(), 0), perPlatformCount(platforms_.size(), 0);
    double meanReturn = 0;
    for (const Episode& e : episodes) perPlatformCount[static_cast<size_t>(e.platform)] += 1;
    for (const Episode& e : episodes) {
      perPlatform[static_cast<size_t>(e.platform)] +=
          e.episodeReturn / perPlatformCount[static_cast<size_t>(e.platform)];
      meanReturn += e.episodeReturn / static_cast<double>(episodes.size());
      for (const Sample& s : e.samples) samples.push_back(&s);
    }
    // Advantages normalised over the update's batch.
    double m = 0, sq = 0;
    for (const Sample* s : samples) m += s->advantage / static_cast<double>(samples.size());
    for (const Sample* s : samples) sq += (s->advantage - m) * (s->advantage - m) / static_cast<double>(samples.size());
    for (const Sample* s : samples) {
      const_cast<Sample*>(s)->advantage = static_cast<float>((s->advantage - m) / (std::sqrt(sq) + 1e-8));
    }
    Losses l;
    for (int e = 0; e < o_.ppoEpochs; ++e) l = runEpoch(samples, o_.ppoMinibatch, Fit::kPpo);
    report_.updatesDone = u + 1;
    std::string plat;
    for (size_t p = 0; p < platforms_.size(); ++p) {
      char b[64];
      std::snprintf(b, sizeof b, " %s %.3f", platforms_[p].name.c_str(), perPlatform[p]);
      plat += b;
    }
    char buf[1024];
    std::snprintf(buf, sizeof buf,
                  "[ppo %d/%d] stage <= %s | mean return %.4f | entropy %.3f | clip %.3f | %zu decisions | "
                  "return by platform:%s | rollout %.1f s, update %.1f s | %.1f s",
                  u + 1, o_.updates, stageName(allowed), meanReturn, l.entropy, l.clipFrac, samples.size(),
                  plat.c_str(), t1 - t0, seconds() - t1, seconds());
    line(buf);
    if ((u + 1) % o_.evalEvery == 0 || u + 1 == o_.updates || outOfTime() || !episodesLeft()) {
      CAGR_RETURN_IF_ERROR(evaluate("after update " + std::to_string(u + 1)));
    }
  }
  return Status::ok();
}

std::string Trainer::metaJson() const {
  nlohmann::json j = {{"trainer", "cagr-train"},
                      {"command", o_.command},
                      {"seed", o_.seed},
                      {"platforms", o_.platforms},
                      {"models", o_.models},
                      {"expert", o_.imitation ? o_.expert : "none"},
                      {"curriculum", o_.curriculum},
                      {"lambda_m", o_.env.lambdaM},
                      {"lambda_c", o_.env.lambdaC},
                      {"batch", o_.env.batch},
                      {"bc_epochs_done", report_.bcEpochsDone},
                      {"updates_done", report_.updatesDone}};
  if (o_.maxEpisodes > 0) j["episodes_done"] = report_.episodesDone;  // only then: older files keep their bytes
  return j.dump();
}

Status Trainer::evaluate(const std::string& label) {
  CAGR_ASSIGN_OR_RETURN(rl::PolicyModel model, net_->toModel(metaJson()));
  std::vector<double> returns(evalCells_.size(), 0);
  std::vector<std::string> failures(evalCells_.size());
  // A cell that fails counts as no gain and is reported; training goes on.
  CAGR_RETURN_IF_ERROR(parallelFor(evalCells_.size(), o_.threads, [&](size_t i) -> Status {
    const Cell& c = evalCells_[i];
    StatusOr<double> r = greedyReturn(model, tasks_[c.task], platforms_[c.platform], o_.env);
    if (r.isOk()) returns[i] = *r;
    if (!r.isOk())
      failures[i] = tasks_[c.task].name + " on " + platforms_[c.platform].name + ": " + r.status().message();
    return Status::ok();
  }));
  for (const std::string& f : failures) {
    if (!f.empty()) line("[eval " + label + "] warning: " + f);
  }
  double mean = 0, expert = 0;
  for (double r : returns) mean += r / static_cast<double>(returns.size());
  for (double r : expertByCell_) expert += r / static_cast<double>(expertByCell_.size());
  bool better = mean > bestEval_;
  if (better) {
    bestEval_ = mean;
    best_ = model;
    report_.bestEvalReturn = mean;
    report_.expertReturn = expert;
    report_.selected = label;
  }
  if (!o_.checkpointDir.empty()) {
    std::string name = label;
    std::replace(name.begin(), name.end(), ' ', '_');
    CAGR_RETURN_IF_ERROR(model.save(o_.checkpointDir + "/" + name + ".rlp"));
  }
  char buf[320];
  std::snprintf(buf, sizeof buf, "[eval %s] greedy rl mean return %.4f on %zu cells%s%s | %.1f s", label.c_str(), mean,
                returns.size(),
                expertByCell_.empty() ? "" : (" (" + o_.expert + " " + std::to_string(expert) + ")").c_str(),
                better ? " | best so far" : "", seconds());
  line(buf);
  return Status::ok();
}

StatusOr<TrainReport> Trainer::finish() {
  if (!best_) CAGR_RETURN_IF_ERROR(evaluate("final"));
  // The written file carries the final counters and the evaluation it comes from.
  nlohmann::json meta = nlohmann::json::parse(best_->metaJson());
  meta["selected"] = report_.selected;
  meta["eval_mean_return_modelled"] = report_.bestEvalReturn;
  CAGR_ASSIGN_OR_RETURN(rl::PolicyModel out, rl::PolicyModel::create(best_->config(), best_->tensors(), meta.dump()));
  CAGR_RETURN_IF_ERROR(out.save(o_.output));
  line("[done] wrote " + o_.output + " (" + report_.selected + ")");
  return report_;
}

}  // namespace

void hwNormalisation(const std::vector<std::vector<float>>& contexts, std::vector<float>& mean,
                     std::vector<float>& scale) {
  size_t n = contexts.empty() ? 0 : contexts[0].size();
  mean.assign(n, 0.f);
  scale.assign(n, 0.f);
  for (size_t k = 0; k < n; ++k) {
    double m = 0, sq = 0;
    for (const auto& c : contexts) m += c[k] / static_cast<double>(contexts.size());
    for (const auto& c : contexts) sq += (c[k] - m) * (c[k] - m) / static_cast<double>(contexts.size());
    mean[k] = static_cast<float>(m);
    scale[k] = static_cast<float>(std::max(std::sqrt(sq), 0.25));
  }
}

StatusOr<TrainReport> train(const TrainOptions& o, std::ostream& log) {
  Trainer t(o, log);
  CAGR_RETURN_IF_ERROR(t.setup());
  if (o.imitation) CAGR_RETURN_IF_ERROR(t.imitation());
  CAGR_RETURN_IF_ERROR(t.reinforce());
  return t.finish();
}

}  // namespace cagr::train
