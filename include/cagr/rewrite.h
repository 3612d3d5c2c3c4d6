// The rewrite engine (DESIGN §4): every transformation CAGR makes is an
// Action produced by a Rewrite's candidate generator, legality-checked with a
// reason when it says no. Rewrites decide what is legal; the cost model says
// what it costs; a Policy (policy.h) decides what to do. Rewrites never price.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "cagr/graph.h"
#include "cagr/mir.h"
#include "cagr/status.h"

namespace cagr {

enum class ActionKind : uint8_t {
  kBatchEmbeddings,  // table-batched embedding: many lookups -> one EmbeddingBags
  kFuse,             // vertical fusion: a group of producer/consumer nodes -> one kernel
  kFoldBatchNorm,    // BatchNorm after a Gemm/MatMul folded into its weights
  kFuseInteraction,  // lookups + Interaction / FM (+ concat) -> one kernel
  kEliminateConcat,  // producers write into the Concat's buffer (or the concat folds away)
  kDeadCode,         // removes nodes nothing uses
  kCse,              // merges identical nodes
  kFoldConstants,    // evaluates a node whose inputs are all constants
  kSetKernel,        // kernel implementation of a node / group
  kSetLayout,        // storage layout of a weight
  kSetPrecision,     // math precision of a node or storage precision of a table
  kAssignStream,     // moves an independent branch to another stream
  kReorder,          // issues an independent branch earlier (peak memory / overlap)
  kStop,
};
constexpr int kNumActionKinds = static_cast<int>(ActionKind::kStop) + 1;
const char* actionKindName(ActionKind k);  // "batch_embeddings", "fuse", ...

/// One concrete transformation of one graph. Node and value ids refer to the
/// graph the candidate was generated for; applying it to another graph fails.
struct Action {
  ActionKind kind = ActionKind::kStop;
  std::vector<NodeId> nodes;  // the nodes it acts on (group members, lookups, branch...)
  ValueId value = kNoValue;   // set_layout / set_precision of a table: the tensor
  std::string choice;         // kernel name, layout, precision
  int arg = 0;                // stream number
  /// "fuse(fc1, relu1)" — names nodes by their names in `g`.
  std::string label(const Graph& g) const;
  bool operator==(const Action&) const = default;
};

/// A candidate: legal when `reason` is empty.
struct Candidate {
  Action action;
  std::string reason;
  bool legal() const { return reason.empty(); }
};

/// One rewrite (one file under src/rewrite/actions/).
class Rewrite {
 public:
  virtual ~Rewrite() = default;
  virtual ActionKind kind() const = 0;
  /// Appends its legal candidates for `g` on `t`; with `explain`, also the
  /// near misses, each with the reason it is illegal.
  virtual void candidates(const Graph& g, const Target& t, bool explain, std::vector<Candidate>& out) const = 0;
  /// Applies one of its own legal candidates for `g`. On error `g` is unchanged.
  virtual Status apply(Graph& g, const Target& t, const Action& a) const = 0;
};

/// Every rewrite, in ActionKind order (kStop has none).
const std::vector<const Rewrite*>& allRewrites();
const Rewrite* rewriteFor(ActionKind k);

/// All legal candidates of every rewrite, plus stop (last). With `explain`,
/// illegal near misses too.
std::vector<Candidate> enumerateActions(const Graph& g, const Target& t, bool explain = false);
/// The bound set_precision states for precision `p` (as table storage when
/// `storage`, else as math) on max|y' - y| / max|y| of the outputs; 0 for
/// f32 or a pair it never offers.
double statedErrorBound(Precision p, bool storage);
/// The precision a set_precision action's choice names ("bf16 (output ...)").
StatusOr<Precision> precisionOfChoice(const std::string& choice);

/// Applies `a` (stop is a no-op) and checks the result with verifyPlan.
Status applyAction(Graph& g, const Target& t, const Action& a);

}  // namespace cagr
