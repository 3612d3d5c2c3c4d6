// Matches an independent branch (rewrite/branches.h): DLRM's bottom MLP beside
// its embedding lookups, DeepFM's DNN tower beside the FM and linear part.
// Produces the branch's nodes on another stream (Node::mir.stream), or on 0.
// Pays when branches too small to fill the device overlap on separate streams.
// Needs several streams, a stream no concurrent node uses, whole fusion groups.
#include <cstdint>

#include "ir/graph_queries.h"
#include "rewrite/actions.h"
#include "rewrite/branches.h"
#include "rewrite/group_edit.h"

namespace cagr::rewrites {
namespace {

bool allOnStream(const Graph& g, const Branch& b, int s) {
  for (NodeId m : b.nodes) {
    if (g.node(m).mir.stream != s) return false;
  }
  return true;
}

// Streams >= 1 worth offering: those some node already uses, plus the lowest
// unused one (unused streams are interchangeable, so one stands for all).
uint64_t offeredStreams(const Graph& g, const Target& t) {
  uint64_t used = 0;
  for (const Node& n : g.nodes()) {
    if (n.mir.stream >= 0 && n.mir.stream < 64) used |= uint64_t{1} << n.mir.stream;
  }
  for (int s = 1; s < t.streams && s < 64; ++s) {
    if (!(used & (uint64_t{1} << s))) return used | (uint64_t{1} << s);
  }
  return used;
}

std::string branchWhere(const Graph& g, const Branch& b) {
  return "branch of " + nodeWhere(g, b.root);
}

void branchCandidates(const Graph& g, const Target& t, const BranchAnalysis& an, size_t bi, uint64_t offered,
                      bool explain, std::vector<Candidate>& out) {
  const Branch& b = an.branches()[bi];
  Action a{ActionKind::kAssignStream, b.nodes, kNoValue, "", 0};
  if (b.cutGroup >= 0) {
    a.arg = 1;
    if (explain) out.push_back({a, branchWhere(g, b) + " splits the fusion group of " + nodeWhere(g, b.cutGroup)});
    return;
  }
  for (int s = 0; s < t.streams && s < 64; ++s) {
    if (allOnStream(g, b, s) || (s > 0 && !(offered & (uint64_t{1} << s)))) continue;
    a.arg = s;
    NodeId busy = s == 0 ? -1 : an.concurrentOnStream(g, bi, s);
    if (busy < 0) {
      out.push_back({a, ""});
    } else if (explain) {
      out.push_back({a, branchWhere(g, b) + ": stream " + std::to_string(s) + " already runs " + nodeWhere(g, busy) +
                            ", which runs concurrently with it"});
    }
  }
}

class AssignStream : public Rewrite {
 public:
  ActionKind kind() const override { return ActionKind::kAssignStream; }

  void candidates(const Graph& g, const Target& t, bool explain, std::vector<Candidate>& out) const override {
    if (t.streams <= 1 && !explain) return;
    BranchAnalysis an(g);
    if (t.streams <= 1) {
      for (const Branch& b : an.branches()) {
        out.push_back({Action{ActionKind::kAssignStream, b.nodes, kNoValue, "", 1},
                       branchWhere(g, b) + ": " + t.hw.name + " runs one stream"});
      }
      return;
    }
    uint64_t offered = offeredStreams(g, t);
    for (size_t i = 0; i < an.branches().size(); ++i) branchCandidates(g, t, an, i, offered, explain, out);
  }

  Status apply(Graph& g, const Target& t, const Action& a) const override {
    CAGR_RETURN_IF_ERROR(checkOffered(*this, g, t, a));
    for (NodeId m : a.nodes) g.mutableNodes()[static_cast<size_t>(m)].mir.stream = static_cast<int8_t>(a.arg);
    return Status::ok();
  }
};

}  // namespace

const Rewrite* assignStream() {
  static const AssignStream r;
  return &r;
}

}  // namespace cagr::rewrites
