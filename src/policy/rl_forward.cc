// The core's forward pass of the policy network (the formula in rl_model.h),
// in plain loops with double accumulation. The scorer's first layer is split
// by input block, W·[a; m; g] = W_a·a + mean_j(W_m·x_j) + W_g·g, so each node
// is projected once instead of once per action that touches it.
#include <algorithm>
#include <cmath>

#include "policy/rl_model.h"

namespace cagr::rl {
namespace {

/// Σ_i a[i] * b[i] in double, as four interleaved partial sums (independent
/// adds the CPU overlaps; one chain of dependent double adds made the dot
/// products most of a decision's time).
double dot(const float* a, const float* b, int64_t n) {
  double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    s0 += static_cast<double>(a[i]) * b[i];
    s1 += static_cast<double>(a[i + 1]) * b[i + 1];
    s2 += static_cast<double>(a[i + 2]) * b[i + 2];
    s3 += static_cast<double>(a[i + 3]) * b[i + 3];
  }
  for (; i < n; ++i) s0 += static_cast<double>(a[i]) * b[i];
  return (s0 + s1) + (s2 + s3);
}

/// out[o] = b[o] + Σ_i W[o, ld*.. + off + i] * in[i] for a [outDim, ld] weight,
/// reading columns [off, off + n).
void affine(const float* w, const float* b, int64_t ld, int64_t off, const float* in, int64_t n, int64_t outDim,
            float* out) {
  for (int64_t o = 0; o < outDim; ++o) {
    out[o] = static_cast<float>((b != nullptr ? b[o] : 0.0) + dot(w + o * ld + off, in, n));
  }
}

float relu(float x) {
  return x > 0 ? x : 0;
}

struct Net {
  const PolicyModel& m;
  const float* t(const std::string& name) const { return m.find(name)->data(); }
};

// One graph attention layer with FiLM, in place on x (n x d).
void attentionLayer(const Net& net, int l, const ModelConfig& c, const std::vector<std::vector<int>>& neighbours,
                    const std::vector<float>& film, std::vector<float>& x) {
  const int64_t d = c.hidden, heads = c.heads, dh = d / heads, n = static_cast<int64_t>(neighbours.size());
  std::string p = "gat" + std::to_string(l);
  const float* w = net.t(p + ".weight");
  const float* attSrc = net.t(p + ".att_src");
  const float* attDst = net.t(p + ".att_dst");
  const float* bias = net.t(p + ".bias");
  std::vector<float> z(static_cast<size_t>(n * d)), ss(static_cast<size_t>(n * heads)), sd(ss.size());
  for (int64_t i = 0; i < n; ++i) {
    affine(w, nullptr, d, 0, &x[i * d], d, d, &z[i * d]);
    for (int64_t h = 0; h < heads; ++h) {
      ss[i * heads + h] = static_cast<float>(dot(&z[i * d + h * dh], attSrc + h * dh, dh));
      sd[i * heads + h] = static_cast<float>(dot(&z[i * d + h * dh], attDst + h * dh, dh));
    }
  }
  std::vector<double> e, agg(static_cast<size_t>(d));
  for (int64_t i = 0; i < n; ++i) {
    const std::vector<int>& nb = neighbours[static_cast<size_t>(i)];
    std::fill(agg.begin(), agg.end(), 0.0);
    for (int64_t h = 0; h < heads; ++h) {
      e.assign(nb.size(), 0.0);
      double mx = -INFINITY, sum = 0;
      for (size_t q = 0; q < nb.size(); ++q) {
        double v = static_cast<double>(ss[nb[q] * heads + h]) + sd[i * heads + h];
        e[q] = v > 0 ? v : 0.2 * v;
        mx = std::max(mx, e[q]);
      }
      for (double& v : e) sum += (v = std::exp(v - mx));
      for (size_t q = 0; q < nb.size(); ++q) {
        double a = e[q] / sum;
        for (int64_t k = 0; k < dh; ++k) agg[h * dh + k] += a * z[nb[q] * d + h * dh + k];
      }
    }
    for (int64_t k = 0; k < d; ++k) {
      float o = static_cast<float>(agg[k] + bias[k]);
      if (c.film) o = (1.0f + film[k]) * o + film[d + k];
      x[i * d + k] += relu(o);
    }
  }
}

// Self loop plus both directions of every edge, per node (the order the
// LibTorch trainer's edge list uses does not matter: softmax and sums are
// over sets).
StatusOr<std::vector<std::vector<int>>> neighbourLists(const Observation& o) {
  std::vector<std::vector<int>> nb(static_cast<size_t>(o.numNodes));
  for (int i = 0; i < o.numNodes; ++i) nb[i].push_back(i);
  for (const auto& [p, q] : o.edges) {
    if (p < 0 || q < 0 || p >= o.numNodes || q >= o.numNodes) {
      return invalidArgument("observation edge " + std::to_string(p) + "->" + std::to_string(q) + " is out of range");
    }
    nb[q].push_back(p);
    nb[p].push_back(q);
  }
  return nb;
}

Status checkObservation(const Observation& o, const ModelConfig& c) {
  if (o.numNodes <= 0) return invalidArgument("the observation has no nodes");
  if (o.nodeFeatures.size() != static_cast<size_t>(o.numNodes) * c.nodeFeatures) {
    return invalidArgument("observation node features: " + std::to_string(o.nodeFeatures.size()) + " values for " +
                           std::to_string(o.numNodes) + " nodes");
  }
  if (o.hw.size() != static_cast<size_t>(c.hwFeatures)) {
    return invalidArgument("observation hardware context has " + std::to_string(o.hw.size()) +
                           " values; the policy expects " + std::to_string(c.hwFeatures));
  }
  if (o.actionNodes.empty() || o.actionFeatures.size() != o.actionNodes.size() * c.actionFeatures) {
    return invalidArgument("observation action rows do not match its " + std::to_string(o.actionNodes.size()) +
                           " actions");
  }
  for (const auto& nodes : o.actionNodes) {
    for (int v : nodes) {
      if (v < 0 || v >= o.numNodes)
        return invalidArgument("an action touches node " + std::to_string(v) + ", out of range");
    }
  }
  return Status::ok();
}

// Logits of every action from the node embeddings x and graph embedding g.
std::vector<float> scoreActions(const Net& net, const ModelConfig& c, const Observation& o, const std::vector<float>& x,
                                const std::vector<float>& g) {
  const int64_t d = c.hidden, a = c.actionFeatures, s = c.scorerHidden, ld = a + 2 * d;
  const float* w0 = net.t("scorer.0.weight");
  const float* b0 = net.t("scorer.0.bias");
  const float* w1 = net.t("scorer.1.weight");
  const float b1 = net.t("scorer.1.bias")[0];
  std::vector<float> proj(static_cast<size_t>(o.numNodes * s)), base(static_cast<size_t>(s));
  for (int64_t i = 0; i < o.numNodes; ++i) affine(w0, nullptr, ld, a, &x[i * d], d, s, &proj[i * s]);
  affine(w0, b0, ld, a + d, g.data(), d, s, base.data());
  std::vector<float> logits, row(static_cast<size_t>(s));
  std::vector<double> hidden(static_cast<size_t>(s));
  for (size_t k = 0; k < o.actionNodes.size(); ++k) {
    affine(w0, nullptr, ld, 0, &o.actionFeatures[k * a], a, s, row.data());
    const auto& nodes = o.actionNodes[k];
    std::fill(hidden.begin(), hidden.end(), 0.0);
    for (int v : nodes) {
      for (int64_t j = 0; j < s; ++j) hidden[j] += proj[v * s + j];
    }
    double inv = nodes.empty() ? 0.0 : 1.0 / static_cast<double>(nodes.size());
    double logit = b1;
    for (int64_t j = 0; j < s; ++j) {
      double h = static_cast<double>(row[j]) + hidden[j] * inv + base[j];
      logit += (h > 0 ? h : 0.0) * w1[j];
    }
    logits.push_back(static_cast<float>(logit));
  }
  return logits;
}

}  // namespace

StatusOr<ModelOutput> PolicyModel::forward(const Observation& o) const {
  const ModelConfig& c = config_;
  CAGR_RETURN_IF_ERROR(checkObservation(o, c));
  CAGR_ASSIGN_OR_RETURN(std::vector<std::vector<int>> neighbours, neighbourLists(o));
  Net net{*this};
  const int64_t d = c.hidden, n = o.numNodes;
  std::vector<float> hw(static_cast<size_t>(c.hwFeatures));
  const float* mean = net.t("hw.mean");
  const float* scale = net.t("hw.scale");
  for (int k = 0; k < c.hwFeatures; ++k) hw[k] = (o.hw[k] - mean[k]) / scale[k];
  std::vector<float> trunk(static_cast<size_t>(c.filmHidden)), film(static_cast<size_t>(2 * d));
  if (c.film) {
    affine(net.t("film.trunk.weight"), net.t("film.trunk.bias"), c.hwFeatures, 0, hw.data(), c.hwFeatures, c.filmHidden,
           trunk.data());
    for (float& v : trunk) v = relu(v);
  }
  std::vector<float> x(static_cast<size_t>(n * d));
  for (int64_t i = 0; i < n; ++i) {
    affine(net.t("embed.weight"), net.t("embed.bias"), c.nodeFeatures, 0, &o.nodeFeatures[i * c.nodeFeatures],
           c.nodeFeatures, d, &x[i * d]);
    for (int64_t k = 0; k < d; ++k) x[i * d + k] = relu(x[i * d + k]);
  }
  for (int l = 0; l < c.layers; ++l) {
    std::string f = "film" + std::to_string(l);
    if (c.film)
      affine(net.t(f + ".weight"), net.t(f + ".bias"), c.filmHidden, 0, trunk.data(), c.filmHidden, 2 * d, film.data());
    attentionLayer(net, l, c, neighbours, film, x);
  }
  std::vector<float> g(static_cast<size_t>(d));
  for (int64_t k = 0; k < d; ++k) {
    double acc = 0;
    for (int64_t i = 0; i < n; ++i) acc += x[i * d + k];
    g[k] = static_cast<float>(acc / static_cast<double>(n));
  }
  ModelOutput out;
  out.logits = scoreActions(net, c, o, x, g);
  double mx = *std::max_element(out.logits.begin(), out.logits.end()), sum = 0;
  for (float v : out.logits) sum += std::exp(static_cast<double>(v) - mx);
  for (float v : out.logits) out.probs.push_back(static_cast<float>(std::exp(static_cast<double>(v) - mx) / sum));
  std::vector<float> in(g), hidden(static_cast<size_t>(c.valueHidden));
  in.insert(in.end(), hw.begin(), hw.end());
  affine(net.t("value.0.weight"), net.t("value.0.bias"), d + c.hwFeatures, 0, in.data(), d + c.hwFeatures,
         c.valueHidden, hidden.data());
  for (float& v : hidden) v = relu(v);
  affine(net.t("value.1.weight"), net.t("value.1.bias"), c.valueHidden, 0, hidden.data(), c.valueHidden, 1, &out.value);
  return out;
}

}  // namespace cagr::rl
