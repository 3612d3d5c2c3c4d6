// The rewrite engine: the registry of rewrites in ActionKind order, candidate
// enumeration over all of them, and checked application of one action.
#include <algorithm>

#include "rewrite/actions.h"

namespace cagr {

const char* actionKindName(ActionKind k) {
  switch (k) {
    case ActionKind::kBatchEmbeddings: return "batch_embeddings";
    case ActionKind::kFuse: return "fuse";
    case ActionKind::kFoldBatchNorm: return "fold_batch_norm";
    case ActionKind::kFuseInteraction: return "fuse_interaction";
    case ActionKind::kEliminateConcat: return "eliminate_concat";
    case ActionKind::kDeadCode: return "dead_code";
    case ActionKind::kCse: return "cse";
    case ActionKind::kFoldConstants: return "fold_constants";
    case ActionKind::kSetKernel: return "set_kernel";
    case ActionKind::kSetLayout: return "set_layout";
    case ActionKind::kSetPrecision: return "set_precision";
    case ActionKind::kAssignStream: return "assign_stream";
    case ActionKind::kReorder: return "reorder";
    case ActionKind::kStop: return "stop";
  }
  return "?";
}

std::string Action::label(const Graph& g) const {
  std::string s = std::string(actionKindName(kind)) + "(";
  size_t shown = std::min<size_t>(nodes.size(), 4);
  for (size_t i = 0; i < shown; ++i) {
    NodeId id = nodes[i];
    bool valid = id >= 0 && static_cast<size_t>(id) < g.nodes().size();
    s += (i ? ", " : "") + (valid ? g.node(id).name : "#" + std::to_string(id));
  }
  if (nodes.size() > shown) s += ", ... " + std::to_string(nodes.size()) + " nodes";
  if (value != kNoValue && static_cast<size_t>(value) < g.numValues()) {
    s += std::string(nodes.empty() ? "" : ", ") + "%" + g.value(value).name;
  }
  if (!choice.empty()) s += " -> " + choice;
  if (kind == ActionKind::kAssignStream) s += " -> stream " + std::to_string(arg);
  return s + ")";
}

const std::vector<const Rewrite*>& allRewrites() {
  static const std::vector<const Rewrite*> all = {
      rewrites::batchEmbeddings(), rewrites::fuse(),      rewrites::foldBatchNorm(), rewrites::fuseInteraction(),
      rewrites::eliminateConcat(), rewrites::deadCode(),  rewrites::cse(),           rewrites::foldConstants(),
      rewrites::setKernel(),       rewrites::setLayout(), rewrites::setPrecision(),  rewrites::assignStream(),
      rewrites::reorder(),
  };
  return all;
}

const Rewrite* rewriteFor(ActionKind k) {
  for (const Rewrite* r : allRewrites()) {
    if (r->kind() == k) return r;
  }
  return nullptr;
}

std::vector<Candidate> enumerateActions(const Graph& g, const Target& t, bool explain) {
  std::vector<Candidate> out;
  for (const Rewrite* r : allRewrites()) r->candidates(g, t, explain, out);
  out.push_back(Candidate{Action{}, ""});
  return out;
}

Status applyAction(Graph& g, const Target& t, const Action& a) {
  if (a.kind == ActionKind::kStop) return Status::ok();
  const Rewrite* r = rewriteFor(a.kind);
  if (r == nullptr) return invalidArgument(std::string("no rewrite for action ") + actionKindName(a.kind));
  std::string label = a.label(g);
  CAGR_RETURN_IF_ERROR(r->apply(g, t, a).withContext(label));
  return verifyPlan(g, t).withContext("after " + label);
}

}  // namespace cagr
