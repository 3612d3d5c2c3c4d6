// fuse(a, b): a consumer b (reached from a directly or through views) joins
// a's kernel group — Gemm + bias + activation, lookup + elementwise tail,
// CIN + activation (+ its sum-pooling), elementwise chains, eltwise prologue + reduction. Pays by never writing
// the intermediate. Needs: a group classifyGroup accepts, a catalog kernel for
// it on the target, the intermediate used only inside (a pooled CIN map may stay an output), one stream.
#include <algorithm>
#include <map>

#include "ir/graph_queries.h"
#include "lower/op_sets.h"
#include "rewrite/actions.h"
#include "rewrite/group_edit.h"

namespace cagr::rewrites {
namespace {

struct Ctx {
  const Graph& g;
  const Target& t;
  ValueUses uses;
  NodeLists consumers;
  GroupIndex groups;
  Ctx(const Graph& graph, const Target& target)
      : g(graph), t(target), uses(valueUses(graph)), consumers(nodeConsumers(graph)), groups(graph) {}
};

// True when `next` would pool a CIN group's output (groups.cc checkCinPooling):
// the layer's map may stay a group output (the next layer reads it), as the
// kernel writes it and its row sums in the same pass.
bool poolsCinGroup(const Ctx& c, NodeId next, const std::vector<NodeId>& merged) {
  return c.g.node(next).op == OpKind::kReduceSum && c.g.node(merged.front()).op == OpKind::kCIN &&
         next == merged.back();
}

// Why an output of `x` feeding `next` must still be written, or "".
std::string escapes(const Ctx& c, NodeId x, NodeId next, const std::vector<NodeId>& merged) {
  const bool pooling = poolsCinGroup(c, next, merged);
  for (ValueId v : c.g.node(x).outputs) {
    const auto& users = c.uses.consumers[static_cast<size_t>(v)];
    if (std::find(users.begin(), users.end(), next) == users.end()) continue;
    if (c.uses.isOutput[static_cast<size_t>(v)]) return "the output of " + nodeWhere(c.g, x) + " is a graph output";
    if (pooling) continue;
    for (NodeId u : users) {
      if (!std::binary_search(merged.begin(), merged.end(), u)) {
        return "the output of " + nodeWhere(c.g, x) + " is also used by " + nodeWhere(c.g, u);
      }
    }
  }
  return "";
}

// A member's explicit kernel that cannot run the merged group, as a reason.
std::string kernelConflict(const Ctx& c, const std::vector<NodeId>& merged, const std::vector<KernelId>& ok) {
  for (NodeId m : merged) {
    KernelId k = c.g.node(m).mir.kernel;
    if (k != 0 && std::find(ok.begin(), ok.end(), k) == ok.end()) {
      return nodeWhere(c.g, m) + " runs " + kernelInfo(k).name + ", which cannot run the merged group";
    }
  }
  return "";
}

// True when the anchors alone rule `merged` out (two of them, one in the
// wrong place, or one no vertical fusion runs): saves classifyGroup's graph
// walk on most producer/consumer pairs when no reason is wanted.
bool anchorsRuleOut(const Graph& g, const std::vector<NodeId>& merged) {
  NodeId anchor = -1;
  int more = 0;
  for (NodeId m : merged) {
    if (ops::in(ops::kEltwise | ops::kViews, g.node(m).op)) continue;
    if (anchor < 0) {
      anchor = m;
      continue;
    }
    // A second anchor: only a CIN's pooled tail (its ReduceSum), ending the
    // group, or the second layer of a GEMM chain (groups.cc checkGemmChain).
    const bool pooled = g.node(anchor).op == OpKind::kCIN && m == merged.back();
    const bool chained = g.node(anchor).op == OpKind::kGemm && g.node(m).op == OpKind::kGemm;
    if (++more > 1 || !(pooled || chained)) return true;
  }
  if (anchor < 0) return false;
  OpKind k = g.node(anchor).op;
  if (ops::in(ops::kGemmLike | ops::kLookups, k) || k == OpKind::kCIN) return anchor != merged.front();
  if (ops::in(ops::kReductions, k)) return anchor != merged.back();
  return true;
}

// A fused GEMM group that no library kernel runs whole (its epilogue has
// a member the library's does not take: a sigmoid after the last layer)
// would run as the library GEMM plus a generated kernel for the rest. It
// goes to the backend's generated GEMM instead where the profile measured
// that kernel (the CUDA backend's probes): one kernel, as fusing means. On
// a profile without such entries the group keeps the default placement.
KernelId wholeGroupGemm(const std::vector<NodeId>& members, const GroupShape& shape, const std::vector<KernelId>& ok,
                        const Target& t) {
  if (shape.pattern != Pattern::kGemm || members.size() < 2) return 0;
  KernelId generated = 0;
  for (KernelId k : ok) {
    const KernelInfo& info = kernelInfo(k);
    if (info.priceAs[0] != '\0') return 0;  // a library kernel runs the whole group
    if (generated == 0 && info.pattern == Pattern::kGemm) generated = k;
  }
  if (generated == 0) return 0;
  for (const KernelEfficiency& e : t.hw.efficiencies) {
    if (e.kernel == kernelInfo(generated).name) return generated;
  }
  return 0;
}

// Two GEMMs in one group: a chain (groups.cc checkGemmChain), which only the
// generated GEMM runs, so it is offered where a member already names that
// kernel or the profile measured it (wholeGroupGemm), never left to the
// default placement (a library call per layer).
bool isGemmChain(const Graph& g, const std::vector<NodeId>& members) {
  return std::count_if(members.begin(), members.end(), [&](NodeId m) { return g.node(m).op == OpKind::kGemm; }) > 1;
}

// The reason fuse(a, b) through `views` is illegal, or "" (without `explain`
// any non-empty string will do).
std::string whyNot(const Ctx& c, NodeId a, const std::vector<NodeId>& views, NodeId b,
                   const std::vector<NodeId>& merged, bool explain) {
  NodeId x = a;
  for (NodeId next : views) {
    if (std::string why = escapes(c, x, next, merged); !why.empty()) return why;
    x = next;
  }
  if (std::string why = escapes(c, x, b, merged); !why.empty()) return why;
  if (!explain && anchorsRuleOut(c.g, merged)) return "anchors";
  if (std::string why = mergeBlocker(c.g, c.groups, merged); !why.empty()) return why;
  auto shape = classifyGroup(c.g, merged);
  if (!shape.isOk()) {
    return "fusing " + nodeWhere(c.g, b) + " after " + nodeWhere(c.g, a) + ": " + shape.status().message();
  }
  if (shape->pattern == Pattern::kInteraction || shape->pattern == Pattern::kFM) {
    return nodeWhere(c.g, shape->anchor) + " with its inputs is fuse_interaction's group";
  }
  std::string why;
  auto kernels = kernelsFor(c.g, merged, *shape, c.t, &why);
  if (kernels.empty()) return why;
  if (std::string conflict = kernelConflict(c, merged, kernels); !conflict.empty()) return conflict;
  if (isGemmChain(c.g, merged) &&
      std::none_of(merged.begin(), merged.end(), [&](NodeId m) { return c.g.node(m).mir.kernel != 0; }) &&
      wholeGroupGemm(merged, *shape, kernels, c.t) == 0) {
    return "two layers as one kernel need a generated GEMM the profile of " + c.t.hw.name + " measured";
  }
  return "";
}

// Collects candidates; a later legal candidate replaces an earlier near miss
// of the same group (same nodes = same action).
class Collector {
 public:
  explicit Collector(bool explain) : explain_(explain) {}
  bool explain() const { return explain_; }
  void add(Candidate cand) {
    if (!cand.legal() && !explain_) return;
    auto it = seen_.find(cand.action.nodes);
    if (it != seen_.end()) {
      if (!cand.legal() || list_[it->second].legal()) return;
      list_[it->second].action.nodes.clear();  // superseded near miss
    }
    seen_[cand.action.nodes] = list_.size();
    list_.push_back(std::move(cand));
  }
  void flush(std::vector<Candidate>& out) {
    for (Candidate& c : list_) {
      if (!c.action.nodes.empty()) out.push_back(std::move(c));
    }
  }

 private:
  bool explain_;
  std::map<std::vector<NodeId>, size_t> seen_;
  std::vector<Candidate> list_;
};

bool isLoneView(const Ctx& c, NodeId n) {
  return ops::in(ops::kViews, c.g.node(n).op) && c.groups.membersOf(n).size() == 1;
}

// Walks a's consumers from `from`, passing through lone views (no work of
// their own: they join with whatever comes after them).
void follow(const Ctx& c, NodeId a, NodeId from, std::vector<NodeId>& views, Collector& out) {
  auto first = c.consumers[static_cast<size_t>(from)];
  std::vector<NodeId> next(first.begin(), first.end());
  next.erase(std::unique(next.begin(), next.end()), next.end());
  for (NodeId b : next) {
    if (c.groups.sameGroup(a, b)) continue;
    if (isLoneView(c, b)) {
      views.push_back(b);
      follow(c, a, b, views, out);
      views.pop_back();
      continue;
    }
    std::vector<NodeId> merged = unite(unite(c.groups.membersOf(a), views), c.groups.membersOf(b));
    Candidate cand;
    cand.reason = whyNot(c, a, views, b, merged, out.explain());
    cand.action.kind = ActionKind::kFuse;
    cand.action.nodes = std::move(merged);
    out.add(std::move(cand));
  }
}

class Fuse : public Rewrite {
 public:
  ActionKind kind() const override { return ActionKind::kFuse; }

  void candidates(const Graph& g, const Target& t, bool explain, std::vector<Candidate>& out) const override {
    Ctx c(g, t);
    Collector col(explain);
    std::vector<NodeId> views;
    for (NodeId a = 0; a < static_cast<NodeId>(g.nodes().size()); ++a) {
      if (onlyViews(g, c.groups.membersOf(a))) continue;  // views fuse only with real work
      follow(c, a, a, views, col);
    }
    col.flush(out);
  }

  Status apply(Graph& g, const Target& t, const Action& a) const override {
    CAGR_RETURN_IF_ERROR(checkOffered(*this, g, t, a));
    auto shape = classifyGroup(g, a.nodes);
    if (!shape.isOk()) return shape.status();
    auto ok = kernelsFor(g, a.nodes, *shape, t, nullptr);
    KernelId kernel = 0;
    for (NodeId m : a.nodes) {
      KernelId k = g.node(m).mir.kernel;
      if (k != 0 && std::find(ok.begin(), ok.end(), k) != ok.end()) kernel = k;
    }
    if (kernel == 0) kernel = wholeGroupGemm(a.nodes, *shape, ok, t);
    if (kernel == 0 && isGemmChain(g, a.nodes)) return invalidArgument("a GEMM chain needs a generated kernel");
    setGroup(g, a.nodes, kernel);
    return Status::ok();
  }

};

}  // namespace

const Rewrite* fuse() {
  static const Fuse r;
  return &r;
}

}  // namespace cagr::rewrites
