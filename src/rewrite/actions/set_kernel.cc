// set_kernel: matches each kernel group (a fusion group or an unfused node;
// view-only groups have no kernel) and offers every other kernel of the
// target's backend that runs it (kernelsFor). Produces mir.kernel on all
// members; backends run what it names. Pays where the default kernel is slow
// for the shape or lacks the epilogue. Precondition: the group classifies.
#include <algorithm>

#include "ir/graph_queries.h"
#include "lower/op_sets.h"
#include "rewrite/actions.h"

namespace cagr::rewrites {
namespace {

bool viewOnly(const Graph& g, const std::vector<NodeId>& members) {
  return std::all_of(members.begin(), members.end(), [&](NodeId m) { return ops::in(ops::kViews, g.node(m).op); });
}

// "'fc1' (Gemm)" or "group of 'fc1' (Gemm)" for reasons.
std::string groupWhere(const Graph& g, const std::vector<NodeId>& members) {
  return (members.size() > 1 ? "group of " : "") + nodeWhere(g, members.front());
}

// Kernels that may replace the group's current one; empty with `why` set
// when none may.
std::vector<KernelId> alternatives(const Graph& g, const std::vector<NodeId>& members, const Target& t,
                                   std::string& why) {
  auto shape = classifyGroup(g, members);
  if (!shape.isOk()) {
    why = shape.status().message();
    return {};
  }
  std::vector<KernelId> ks = kernelsFor(g, members, *shape, t, &why);
  KernelId current = g.node(members.front()).mir.kernel;
  ks.erase(std::remove(ks.begin(), ks.end(), current), ks.end());
  if (ks.empty() && why.empty()) {
    why = std::string("no alternative kernel: only ") + kernelInfo(current).name + " runs it on " + t.hw.name;
  }
  return ks;
}

class SetKernel : public Rewrite {
 public:
  ActionKind kind() const override { return ActionKind::kSetKernel; }

  void candidates(const Graph& g, const Target& t, bool explain, std::vector<Candidate>& out) const override {
    for (auto& members : kernelGroups(g)) {
      if (viewOnly(g, members)) continue;
      std::string why;
      std::vector<KernelId> ks = alternatives(g, members, t, why);
      Action a;
      a.kind = ActionKind::kSetKernel;
      a.nodes = std::move(members);
      if (ks.empty()) {
        if (explain) out.push_back(Candidate{a, groupWhere(g, a.nodes) + ": " + why});
        continue;
      }
      for (KernelId k : ks) {
        a.choice = kernelInfo(k).name;
        out.push_back(Candidate{a, ""});
      }
    }
  }

  Status apply(Graph& g, const Target& t, const Action& a) const override {
    CAGR_ASSIGN_OR_RETURN(KernelId k, kernelByName(a.choice));
    auto groups = kernelGroups(g);
    if (std::find(groups.begin(), groups.end(), a.nodes) == groups.end()) {
      return invalidArgument("the nodes are not one kernel group of the graph");
    }
    if (viewOnly(g, a.nodes)) return invalidArgument(groupWhere(g, a.nodes) + " is a view: it runs no kernel");
    std::string why;
    std::vector<KernelId> ks = alternatives(g, a.nodes, t, why);
    if (std::find(ks.begin(), ks.end(), k) == ks.end()) {
      if (why.empty()) why = a.choice + " is not an alternative kernel for it on " + t.hw.name;
      return invalidArgument(groupWhere(g, a.nodes) + ": " + why);
    }
    for (NodeId m : a.nodes) g.mutableNodes()[static_cast<size_t>(m)].mir.kernel = k;
    return Status::ok();
  }
};

}  // namespace

const Rewrite* setKernel() {
  static const SetKernel r;
  return &r;
}

}  // namespace cagr::rewrites
