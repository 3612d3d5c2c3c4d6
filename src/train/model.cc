// The LibTorch policy network: batching observations into one disjoint graph,
// the graph attention + FiLM encoder (segment softmax over each node's
// neighbourhood with gather / scatter_add), the masked action softmax per graph, the
// value head, and weight exchange with the core's PolicyModel.
#include "train/model.h"

#include <algorithm>
#include <cmath>
#include <mutex>

namespace cagr::train {
namespace {

torch::Tensor longs(const std::vector<int64_t>& v) {
  return torch::from_blob(const_cast<int64_t*>(v.data()), {static_cast<int64_t>(v.size())}, torch::kLong).clone();
}
torch::Tensor floats(const std::vector<float>& v, std::vector<int64_t> shape) {
  return torch::from_blob(const_cast<float*>(v.data()), shape, torch::kFloat).clone();
}

torch::Tensor linear(const torch::Tensor& x, const torch::Tensor& w, const torch::Tensor& b) {
  return torch::nn::functional::linear(x, w, b);
}

// `t` as [rows, the product of the other extents]; reshape({n, -1}) cannot
// infer that width when `t` has no rows (a batch whose actions touch no node).
torch::Tensor flatRows(const torch::Tensor& t) {
  int64_t width = 1;
  for (int64_t d = 1; d < t.dim(); ++d) width *= t.size(d);
  return t.reshape({t.size(0), width});
}

// Rows `idx` of `t` by gather, whose gradient is a scatter_add (index_select's
// is index_add, which LibTorch 1.13 runs slice by slice on the CPU).
torch::Tensor rows(const torch::Tensor& t, const torch::Tensor& idx) {
  if (t.dim() == 1) return t.gather(0, idx);
  torch::Tensor flat = flatRows(t);
  std::vector<int64_t> shape = t.sizes().vec();
  shape[0] = idx.size(0);
  return flat.gather(0, idx.unsqueeze(1).expand({idx.size(0), flat.size(1)})).view(shape);
}

// Sums the rows of `src` into `n` rows by `idx` (scatter_add).
torch::Tensor sumRows(int64_t n, const torch::Tensor& idx, const torch::Tensor& src) {
  if (src.dim() == 1) return torch::zeros({n}, src.options()).scatter_add(0, idx, src);
  torch::Tensor flat = flatRows(src);
  std::vector<int64_t> shape = src.sizes().vec();
  shape[0] = n;
  return torch::zeros({n, flat.size(1)}, src.options())
      .scatter_add(0, idx.unsqueeze(1).expand_as(flat), flat)
      .view(shape);
}

// Log-softmax of `scores` within segments (`segment` in [0, n)).
torch::Tensor segmentLogSoftmax(const torch::Tensor& scores, const torch::Tensor& segment, int64_t n) {
  torch::Tensor mx = torch::full({n}, -INFINITY, scores.options())
                         .scatter_reduce(0, segment, scores.detach(), "amax", /*include_self=*/true);
  torch::Tensor shifted = scores - rows(mx, segment);
  return shifted - rows(sumRows(n, segment, shifted.exp()).log(), segment);
}

// The initial bound of a tensor (uniform(-b, b)); 0 means zeros.
double initBound(const rl::TensorSpec& s, int64_t fanIn) {
  const std::string& n = s.name;
  bool film = n.rfind("film", 0) == 0 && n.rfind("film.trunk", 0) != 0;
  if (film) return n.ends_with(".weight") ? 0.1 / std::sqrt(static_cast<double>(fanIn)) : 0.0;
  if (n.rfind("gat", 0) == 0 && n.ends_with(".bias")) return 0.0;
  if (n.ends_with(".att_src") || n.ends_with(".att_dst")) return 1.0 / std::sqrt(static_cast<double>(s.shape[1]));
  if (n == "scorer.1.weight") return 0.1 / std::sqrt(static_cast<double>(fanIn));
  return 1.0 / std::sqrt(static_cast<double>(fanIn));
}

// scatter_reduce (the segment max) warns once that its API is in beta; the
// warning says nothing about training, so it is dropped and others pass on.
class QuietBeta : public c10::WarningHandler {
 public:
  explicit QuietBeta(c10::WarningHandler* next) : next_(next) {}
  void process(const c10::SourceLocation& loc, const std::string& msg, bool verbatim) override {
    if (msg.find("is in beta") == std::string::npos) next_->process(loc, msg, verbatim);
  }

 private:
  c10::WarningHandler* next_;
};

void quietBetaWarnings() {
  static std::once_flag once;
  std::call_once(once, [] {
    static QuietBeta handler(c10::Warning::get_warning_handler());
    c10::Warning::set_warning_handler(&handler);
  });
}

}  // namespace

Batch makeBatch(const std::vector<const Observation*>& obs) {
  Batch b;
  b.numGraphs = static_cast<int64_t>(obs.size());
  std::vector<float> nodeFeatures, hw, actionFeatures, nodeCount, touchCount;
  std::vector<int64_t> nodeGraph, src, dst, actionGraph, touchAction, touchNode, actionOffset;
  int64_t nodeBase = 0, actionBase = 0;
  for (size_t gi = 0; gi < obs.size(); ++gi) {
    const Observation& o = *obs[gi];
    nodeFeatures.insert(nodeFeatures.end(), o.nodeFeatures.begin(), o.nodeFeatures.end());
    hw.insert(hw.end(), o.hw.begin(), o.hw.end());
    nodeCount.push_back(static_cast<float>(o.numNodes));
    for (int i = 0; i < o.numNodes; ++i) {
      nodeGraph.push_back(static_cast<int64_t>(gi));
      src.push_back(nodeBase + i);
      dst.push_back(nodeBase + i);
    }
    for (const auto& [p, q] : o.edges) {
      src.insert(src.end(), {nodeBase + p, nodeBase + q});
      dst.insert(dst.end(), {nodeBase + q, nodeBase + p});
    }
    actionOffset.push_back(actionBase);
    actionFeatures.insert(actionFeatures.end(), o.actionFeatures.begin(), o.actionFeatures.end());
    for (size_t k = 0; k < o.actionNodes.size(); ++k) {
      actionGraph.push_back(static_cast<int64_t>(gi));
      touchCount.push_back(static_cast<float>(o.actionNodes[k].size()));
      for (int v : o.actionNodes[k]) {
        touchAction.push_back(actionBase + static_cast<int64_t>(k));
        touchNode.push_back(nodeBase + v);
      }
    }
    nodeBase += o.numNodes;
    actionBase += static_cast<int64_t>(o.actionNodes.size());
  }
  int64_t f = Observation::kNodeFeatures, a = rl::kActionRow;
  int64_t c = obs.empty() ? 0 : static_cast<int64_t>(obs[0]->hw.size());
  b.nodeFeatures = floats(nodeFeatures, {nodeBase, f});
  b.nodeGraph = longs(nodeGraph);
  b.nodeCount = floats(nodeCount, {b.numGraphs});
  b.src = longs(src);
  b.dst = longs(dst);
  b.hw = floats(hw, {b.numGraphs, c});
  b.actionFeatures = floats(actionFeatures, {actionBase, a});
  b.actionGraph = longs(actionGraph);
  b.touchAction = longs(touchAction);
  b.touchNode = longs(touchNode);
  b.touchCount = floats(touchCount, {actionBase});
  b.actionOffset = longs(actionOffset);
  return b;
}

PolicyNetImpl::PolicyNetImpl(const rl::ModelConfig& c, const std::vector<float>& hwMean,
                             const std::vector<float>& hwScale)
    : config_(c) {
  quietBetaWarnings();
  int64_t fanIn = 1;
  for (const rl::TensorSpec& s : rl::tensorSpecs(c)) {
    std::string regName = s.name;
    std::replace(regName.begin(), regName.end(), '.', '_');
    if (s.name == "hw.mean" || s.name == "hw.scale") {
      const std::vector<float>& v = s.name == "hw.mean" ? hwMean : hwScale;
      params_[s.name] = register_buffer(regName, floats(v, s.shape));
      continue;
    }
    if (s.shape.size() == 2) fanIn = s.shape[1];
    double bound = initBound(s, fanIn);
    torch::Tensor t = bound > 0 ? torch::empty(s.shape).uniform_(-bound, bound) : torch::zeros(s.shape);
    params_[s.name] = register_parameter(regName, t);
  }
}

torch::Tensor PolicyNetImpl::attention(int layer, const torch::Tensor& x, const Batch& b) {
  const int64_t n = x.size(0), d = config_.hidden, heads = config_.heads, dh = d / heads, e = b.src.size(0);
  std::string pre = "gat" + std::to_string(layer);
  torch::Tensor z = torch::matmul(x, p(pre + ".weight").t()).view({n, heads, dh});
  torch::Tensor ss = (z * p(pre + ".att_src")).sum(-1);  // [n, heads]
  torch::Tensor sd = (z * p(pre + ".att_dst")).sum(-1);
  torch::Tensor score = torch::leaky_relu(rows(ss, b.src) + rows(sd, b.dst), 0.2);  // [e, heads]
  torch::Tensor dstH = b.dst.unsqueeze(1).expand({e, heads});
  torch::Tensor mx = torch::full({n, heads}, -INFINITY, x.options())
                         .scatter_reduce(0, dstH, score.detach(), "amax", /*include_self=*/true);
  torch::Tensor ex = (score - rows(mx, b.dst)).exp();
  torch::Tensor alpha = ex / rows(sumRows(n, b.dst, ex), b.dst);
  torch::Tensor agg = sumRows(n, b.dst, alpha.unsqueeze(-1) * rows(z, b.src));
  return agg.view({n, d}) + p(pre + ".bias");
}

NetOutput PolicyNetImpl::forward(const Batch& b) {
  const int64_t d = config_.hidden, graphs = b.numGraphs;
  torch::Tensor hw = (b.hw - p("hw.mean")) / p("hw.scale");
  torch::Tensor trunk;
  if (config_.film) trunk = torch::relu(linear(hw, p("film.trunk.weight"), p("film.trunk.bias")));
  torch::Tensor x = torch::relu(linear(b.nodeFeatures, p("embed.weight"), p("embed.bias")));
  for (int l = 0; l < config_.layers; ++l) {
    torch::Tensor o = attention(l, x, b);
    if (config_.film) {
      std::string f = "film" + std::to_string(l);
      torch::Tensor fg = rows(linear(trunk, p(f + ".weight"), p(f + ".bias")), b.nodeGraph);
      o = (1 + fg.slice(1, 0, d)) * o + fg.slice(1, d, 2 * d);
    }
    x = x + torch::relu(o);
  }
  torch::Tensor g = sumRows(graphs, b.nodeGraph, x) / b.nodeCount.unsqueeze(1);
  // scorer.0 on [action row, mean of touched nodes, g], split by input block
  // (as the core does): nodes and graphs are projected once, not per action.
  const int64_t actions = b.actionFeatures.size(0), a = config_.actionFeatures;
  torch::Tensor w0 = p("scorer.0.weight");
  torch::Tensor nodeProj = torch::matmul(x, w0.slice(1, a, a + d).t());                    // [nodes, s]
  torch::Tensor graphProj = linear(g, w0.slice(1, a + d, a + 2 * d), p("scorer.0.bias"));  // [graphs, s]
  torch::Tensor touched =
      sumRows(actions, b.touchAction, rows(nodeProj, b.touchNode)) / b.touchCount.clamp_min(1).unsqueeze(1);
  torch::Tensor hidden =
      torch::matmul(b.actionFeatures, w0.slice(1, 0, a).t()) + touched + rows(graphProj, b.actionGraph);
  NetOutput out;
  out.logits = linear(torch::relu(hidden), p("scorer.1.weight"), p("scorer.1.bias")).squeeze(1);
  out.logProbs = segmentLogSoftmax(out.logits, b.actionGraph, graphs);
  torch::Tensor vin = torch::cat({g, hw}, 1);
  out.value =
      linear(torch::relu(linear(vin, p("value.0.weight"), p("value.0.bias"))), p("value.1.weight"), p("value.1.bias"))
          .squeeze(1);
  return out;
}

StatusOr<rl::PolicyModel> PolicyNetImpl::toModel(const std::string& metaJson) const {
  std::vector<std::vector<float>> tensors;
  for (const rl::TensorSpec& s : rl::tensorSpecs(config_)) {
    torch::Tensor t = p(s.name).detach().contiguous();
    const float* data = t.data_ptr<float>();
    tensors.emplace_back(data, data + t.numel());
  }
  return rl::PolicyModel::create(config_, std::move(tensors), metaJson);
}

Status PolicyNetImpl::loadFrom(const rl::PolicyModel& m) {
  if (!(m.config() == config_)) return invalidArgument("the policy's network shape differs from the trainer's");
  torch::NoGradGuard guard;
  for (size_t i = 0; i < m.specs().size(); ++i) {
    params_.at(m.specs()[i].name).copy_(floats(m.tensors()[i], m.specs()[i].shape));
  }
  return Status::ok();
}

torch::Tensor entropyPerGraph(const NetOutput& out, const Batch& b) {
  torch::Tensor plogp = out.logProbs.exp() * out.logProbs;
  return -sumRows(b.numGraphs, b.actionGraph, plogp);
}

torch::Tensor targetLogProb(const NetOutput& out, const Batch& b, const std::vector<int64_t>& graph,
                            const std::vector<int64_t>& row) {
  torch::Tensor p = rows(out.logProbs, longs(row)).exp();
  return sumRows(b.numGraphs, longs(graph), p).clamp_min(1e-30).log();
}

}  // namespace cagr::train
