// MIR: HIR plus the decisions a plan carries (DESIGN §2) — fusion groups,
// kernel per group, layout and precision per tensor, stream per node — and
// the contract backends lower from:
//
//  * A fusion group is the set of nodes sharing NodeDecision::group. It is
//    connected and convex (no path leaves it and comes back), it matches one
//    Pattern (classifyGroup), and all members carry the same kernel.
//  * A kernel is an entry of the catalog below: the backend family it belongs
//    to, the Pattern it runs as one kernel, the ops its epilogue accepts, the
//    math precisions it supports, and the profile kernel its speed is priced
//    by. KernelId 0 means "the backend's default for this node/group".
//  * Precision: Value::mir.storage rounds a tensor to bf16/fp16 (or int8
//    row-wise, tables only) where it is stored; Node::mir.math runs a GEMM-like
//    node with inputs rounded to tf32/bf16/fp16 and fp32 accumulation. The
//    reference executor emulates both, so a plan's error is measurable.
//  * Layout is a storage choice for constant weights (packed / padded); it
//    never changes values.
//  * Streams: nodes on different streams may overlap; the graph's node order
//    is the issue order within a stream.
#pragma once

#include <string>
#include <vector>

#include "cagr/graph.h"
#include "cagr/hw.h"
#include "cagr/status.h"

namespace cagr {

const char* precisionName(Precision p);  // "f32" "tf32" "bf16" "f16" "int8_rowwise"
StatusOr<Precision> parsePrecision(const std::string& s);
const char* layoutName(Layout l);  // "row_major" "packed" "padded"
StatusOr<Layout> parseLayout(const std::string& s);

/// Backend families: what a plan is lowered to.
enum class Backend : uint8_t { kCpu, kCuda, kHip, kTpu };
const char* backendName(Backend b);

/// The shape of work one kernel performs.
enum class Pattern : uint8_t {
  kSingle,         // one node of any op, the backend's plain kernel for it
  kGemm,           // Gemm/MatMul/Conv1x1/Einsum + elementwise epilogue
  kEltwise,        // elementwise ops and views over one iteration space
  kReduce,         // elementwise prologue + a reduction (ReduceSum/Mean/Max, Softmax, LayerNorm)
  kGather,         // lookups (Gather/EmbeddingBag/EmbeddingBags) + elementwise tail
  kInteraction,    // lookups + concat + Interaction (+ concat with the dense part)
  kFM,             // lookups + concat + FM
  kCin,            // one CIN layer without materialising the outer product
  kConcatInPlace,  // a Concat whose producers write straight into its buffer
};
const char* patternName(Pattern p);

/// One kernel implementation a backend offers.
struct KernelInfo {
  const char* name;       // "onednn.matmul", "cublaslt.matmul", "nvrtc.eltwise", ...
  Backend backend;
  Pattern pattern;
  const char* priceAs;    // profile kernel whose efficiencies price it ("" = by class)
  uint64_t epilogueOps;   // kGemm/kGather: bit (1 << OpKind) per op allowed after the anchor
  uint8_t mathModes;      // bit (1 << Precision) per supported math precision
  const char* note;       // one line: what it is
};

/// The catalog (index = KernelId; entry 0 is "auto").
const std::vector<KernelInfo>& kernelCatalog();
const KernelInfo& kernelInfo(KernelId id);
StatusOr<KernelId> kernelByName(const std::string& name);

/// A platform a plan is made for: its profile plus what its backend offers.
struct Target {
  HardwareProfile hw;
  Backend backend = Backend::kCpu;
  int streams = 1;                 // independent streams / queues the backend runs
  std::vector<Precision> storage;  // storage precisions its kernels read
  std::vector<Precision> math;     // GEMM math modes its matrix units run
  bool supportsStorage(Precision p) const;
  bool supportsMath(Precision p) const;
};
/// Backend from the profile's kind/vendor: cpu, cuda (nvidia), hip (amd), tpu.
StatusOr<Target> makeTarget(HardwareProfile hw);
/// makeTarget(resolveProfile(nameOrPath)); "cpu" and "cuda" name the host
/// profile (x86-64) and the H200.
StatusOr<Target> resolveTarget(const std::string& nameOrPath);

/// A fusion group's members in graph order, and what it runs as.
struct GroupShape {
  Pattern pattern = Pattern::kSingle;
  NodeId anchor = -1;  // the node that is not elementwise / view (or the first member)
};
/// Classifies `members` (graph order) as one kernel, or says why it cannot be
/// one: not connected, not convex, two anchors, an op no pattern accepts, ...
StatusOr<GroupShape> classifyGroup(const Graph& g, const std::vector<NodeId>& members);
/// Kernels of `t`'s backend that can run `members` (already classified as
/// `shape`) as one kernel; empty with `why` set when none can.
std::vector<KernelId> kernelsFor(const Graph& g, const std::vector<NodeId>& members, const GroupShape& shape,
                                 const Target& t, std::string* why);

/// Members of each fusion group and of each unfused node, in graph order:
/// result[i] is one kernel's nodes. View-only singletons are included.
std::vector<std::vector<NodeId>> kernelGroups(const Graph& g);
/// The plan's kernels (kernelGroups) in an order that respects every data
/// dependency between them — a topological order of the graph whose nodes
/// are kernels. Fails, naming a node, when groups depend on each other in a
/// cycle (each group convex is not enough). `labels` (one per node) replaces
/// the nodes' mir.group, so a rewrite can test a regrouping without a copy.
/// `consumers` (nodeConsumers(g), optional) saves recomputing them.
class NodeLists;
StatusOr<std::vector<std::vector<NodeId>>> scheduleKernels(const Graph& g, const std::vector<int32_t>* labels = nullptr,
                                                           const NodeLists* consumers = nullptr);
/// A fresh group label (one more than the largest in use).
int32_t newGroupLabel(const Graph& g);

/// Checks every decision against the MIR contract for `t`: groups classify
/// and their kernel runs them, kernels belong to t's backend, precisions and
/// streams are supported. Errors name the node or value.
Status verifyPlan(const Graph& g, const Target& t);

}  // namespace cagr
