#include "rewrite/branches.h"

#include <algorithm>
#include <bit>
#include <string>
#include <unordered_map>

#include "ir/graph_queries.h"

namespace cagr {
namespace {

// One bit row per node: row(i) is words wide.
struct BitRows {
  size_t words;
  std::vector<uint64_t> bits;
  BitRows(size_t rows, size_t w) : words(w), bits(rows * w, 0) {}
  uint64_t* row(size_t i) { return bits.data() + i * words; }
  void set(size_t i, size_t bit) { row(i)[bit / 64] |= uint64_t{1} << (bit % 64); }
  void orInto(size_t dst, size_t src) {
    for (size_t w = 0; w < words; ++w) row(dst)[w] |= row(src)[w];
  }
};

// Lowest common ancestor in the post-dominator tree; parents have larger ids
// (topological order), the virtual sink is id n.
NodeId meet(const std::vector<NodeId>& ipdom, NodeId a, NodeId b) {
  while (a != b) {
    if (a < b) {
      a = ipdom[static_cast<size_t>(a)];
    } else {
      b = ipdom[static_cast<size_t>(b)];
    }
  }
  return a;
}

// Immediate post-dominators (size n + 1; n is the sink every graph output and
// every unused node feeds) and descendant sets, in one reverse sweep.
std::vector<NodeId> postDominators(const Graph& g, const ValueUses& uses, BitRows& desc) {
  const NodeId n = static_cast<NodeId>(g.nodes().size());
  std::vector<NodeId> ipdom(static_cast<size_t>(n) + 1, n);
  for (NodeId i = n; i-- > 0;) {
    NodeId acc = -1;
    bool toSink = false;
    desc.set(static_cast<size_t>(i), static_cast<size_t>(i));
    for (ValueId v : g.node(i).outputs) {
      toSink = toSink || uses.isOutput[static_cast<size_t>(v)];
      for (NodeId c : uses.consumers[static_cast<size_t>(v)]) {
        acc = acc < 0 ? c : meet(ipdom, acc, c);
        desc.orInto(static_cast<size_t>(i), static_cast<size_t>(c));
      }
    }
    ipdom[static_cast<size_t>(i)] = (acc < 0 || toSink) ? n : acc;
  }
  return ipdom;
}

BitRows ancestors(const Graph& g, size_t words) {
  BitRows anc(g.nodes().size(), words);
  for (size_t i = 0; i < g.nodes().size(); ++i) {
    anc.set(i, i);
    for (ValueId v : g.nodes()[i].inputs) {
      NodeId p = v == kNoValue ? -1 : g.value(v).producer;
      if (p >= 0) anc.orInto(i, static_cast<size_t>(p));
    }
  }
  return anc;
}

// Marks, for each branch, a node outside it that shares a fusion group with
// one of its members: a branch whose group counts fall short of the graph's.
void findCutGroups(const Graph& g, std::vector<Branch>& branches, const std::vector<NodeId>& outer) {
  std::unordered_map<int32_t, int> total;
  for (const Node& n : g.nodes()) {
    if (n.mir.group >= 0) ++total[n.mir.group];
  }
  if (total.empty()) return;
  for (Branch& b : branches) {
    std::unordered_map<int32_t, int> inside;
    for (NodeId m : b.nodes) {
      if (g.node(m).mir.group >= 0) ++inside[g.node(m).mir.group];
    }
    for (NodeId m : b.nodes) {
      int32_t label = g.node(m).mir.group;
      if (label < 0 || inside[label] == total[label]) continue;
      for (size_t j = 0; j < g.nodes().size() && b.cutGroup < 0; ++j) {
        if (g.nodes()[j].mir.group == label && outer[j] != b.root) b.cutGroup = static_cast<NodeId>(j);
      }
      break;
    }
  }
}

}  // namespace

BranchAnalysis::BranchAnalysis(const Graph& g) {
  const size_t n = g.nodes().size();
  words_ = (n + 63) / 64;
  ValueUses uses = valueUses(g);
  BitRows desc(n, words_);
  std::vector<NodeId> ipdom = postDominators(g, uses, desc);
  BitRows anc = ancestors(g, words_);
  std::vector<int> children(n + 1, 0);
  for (size_t i = 0; i < n; ++i) ++children[static_cast<size_t>(ipdom[i])];
  // outer[i]: the outermost branch root whose subtree holds i, or -1.
  std::vector<NodeId> outer(n + 1, -1);
  std::vector<NodeId> roots;
  for (size_t i = n; i-- > 0;) {
    size_t p = static_cast<size_t>(ipdom[i]);
    if (outer[p] >= 0) {
      outer[i] = outer[p];
      continue;
    }
    if (children[p] < 2) continue;
    size_t related = 0;
    for (size_t w = 0; w < words_; ++w) related += std::popcount(anc.row(i)[w] | desc.row(i)[w]);
    if (related == n) continue;  // everything depends on it or it on everything
    outer[i] = static_cast<NodeId>(i);
    roots.push_back(static_cast<NodeId>(i));
  }
  std::vector<size_t> slot(n, 0);
  std::sort(roots.begin(), roots.end());
  for (size_t r = 0; r < roots.size(); ++r) slot[static_cast<size_t>(roots[r])] = r;
  branches_.resize(roots.size());
  for (size_t i = 0; i < n; ++i) {
    if (outer[i] >= 0) branches_[slot[static_cast<size_t>(outer[i])]].nodes.push_back(static_cast<NodeId>(i));
  }
  for (size_t r = 0; r < roots.size(); ++r) branches_[r].root = roots[r];
  std::sort(branches_.begin(), branches_.end(),
            [](const Branch& a, const Branch& b) { return a.nodes.front() < b.nodes.front(); });
  related_.reserve(branches_.size() * words_);
  for (const Branch& b : branches_) {
    size_t r = static_cast<size_t>(b.root);
    for (size_t w = 0; w < words_; ++w) related_.push_back(anc.row(r)[w] | desc.row(r)[w]);
  }
  findCutGroups(g, branches_, outer);
}

bool BranchAnalysis::concurrent(size_t b, NodeId node) const {
  uint64_t word = related_[b * words_ + static_cast<size_t>(node) / 64];
  return ((word >> (static_cast<size_t>(node) % 64)) & 1) == 0;
}

NodeId BranchAnalysis::concurrentOnStream(const Graph& g, size_t b, int stream) const {
  for (size_t j = 0; j < g.nodes().size(); ++j) {
    if (g.nodes()[j].mir.stream == stream && concurrent(b, static_cast<NodeId>(j))) return static_cast<NodeId>(j);
  }
  return -1;
}

Status rebuildNodes(Graph& g, const std::vector<NodeId>& order) {
  const size_t n = g.nodes().size();
  std::vector<int64_t> pos(n, -1);
  for (size_t i = 0; i < order.size(); ++i) {
    NodeId id = order[i];
    if (id < 0 || static_cast<size_t>(id) >= n || pos[static_cast<size_t>(id)] >= 0) {
      return invalidArgument("node order names node #" + std::to_string(id) + " twice or out of range");
    }
    pos[static_cast<size_t>(id)] = static_cast<int64_t>(i);
  }
  for (size_t i = 0; i < order.size(); ++i) {
    for (ValueId v : g.node(order[i]).inputs) {
      NodeId p = v == kNoValue ? -1 : g.value(v).producer;
      if (p >= 0 && (pos[static_cast<size_t>(p)] < 0 || pos[static_cast<size_t>(p)] >= static_cast<int64_t>(i))) {
        return invalidArgument(nodeWhere(g, order[i]) + " would read '" + g.value(v).name + "' before it is produced");
      }
    }
  }
  for (size_t i = 0; i < n; ++i) {
    if (pos[i] >= 0) continue;
    for (ValueId v : g.nodes()[i].outputs) g.mutableValue(v).producer = -1;
  }
  std::vector<Node> nodes;
  nodes.reserve(order.size());
  for (NodeId id : order) nodes.push_back(std::move(g.mutableNodes()[static_cast<size_t>(id)]));
  g.mutableNodes() = std::move(nodes);
  for (size_t i = 0; i < g.nodes().size(); ++i) {
    for (ValueId v : g.nodes()[i].outputs) g.mutableValue(v).producer = static_cast<NodeId>(i);
  }
  return Status::ok();
}

Status dropNodes(Graph& g, const std::vector<NodeId>& dropped) {
  std::vector<char> drop(g.nodes().size(), 0);
  for (NodeId d : dropped) {
    if (d >= 0 && static_cast<size_t>(d) < drop.size()) drop[static_cast<size_t>(d)] = 1;
  }
  std::vector<NodeId> order;
  for (size_t i = 0; i < drop.size(); ++i) {
    if (!drop[i]) order.push_back(static_cast<NodeId>(i));
  }
  return rebuildNodes(g, order);
}

}  // namespace cagr
