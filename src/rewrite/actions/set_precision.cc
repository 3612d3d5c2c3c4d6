// set_precision: GEMM-like nodes and CIN get tf32/bf16/f16 math (inputs rounded, f32
// accumulation); constant tables read by Gather/EmbeddingBag(s) get bf16/f16/int8_rowwise
// storage. Pays in matrix-unit rate and table bytes; needs the target's (and kernel's)
// support; never a graph output. Stated bounds on max|out' - out| / max|out| (kBounds, in
// each choice): math tf32 1e-2, f16 1e-2, bf16 5e-2; storage bf16 2e-2, f16 5e-3, int8 2e-2.
#include "ir/graph_queries.h"
#include "lower/op_sets.h"
#include "rewrite/actions.h"

namespace cagr::rewrites {
namespace {

constexpr uint64_t kMathOps = ops::kGemmLike | ops::bit(OpKind::kCIN);
// Compute-heavy ops without a reduced-precision math mode (near misses only).
constexpr uint64_t kNoMathOps = ops::bit(OpKind::kInteraction) | ops::bit(OpKind::kFM) | ops::bit(OpKind::kSpMM);
constexpr Precision kMathChoices[] = {Precision::kF32, Precision::kTF32, Precision::kBF16, Precision::kF16};
constexpr Precision kStorageChoices[] = {Precision::kF32, Precision::kBF16, Precision::kF16, Precision::kInt8Rowwise};

// The stated bound of each precision on the model outputs: with every legal
// candidate of one kind applied, each output p' of the reference run keeps
// max|p' - p| <= bound * max|p| against the all-f32 run p. Measured on the
// zoo's committed inputs (test/rewrite/set_precision_test.cc checks them)
// the worst cases sit 2-10x below: DLRM's 7-layer MLPs set the math bounds.
struct ErrorBound {
  Precision precision;
  bool storage;
  const char* bound;
  double value;
};
constexpr ErrorBound kBounds[] = {
    {Precision::kTF32, false, "1e-2", 1e-2},        // 10 mantissa bits; DLRM measured 2.5e-3
    {Precision::kBF16, false, "5e-2", 5e-2},        // 7 mantissa bits; DLRM measured 1.5e-2
    {Precision::kF16, false, "1e-2", 1e-2},         // as tf32: values stay far inside f16's range
    {Precision::kBF16, true, "2e-2", 2e-2},         // one rounding per table row read; measured 1.2e-3
    {Precision::kF16, true, "5e-3", 5e-3},          // measured 1.3e-4
    {Precision::kInt8Rowwise, true, "2e-2", 2e-2},  // half a step of (max - min) / 255; measured 2.7e-3
};


// "bf16 (output error <= 5e-2)"; plain "f32" (exact).
std::string choiceText(Precision p, bool storage) {
  for (const ErrorBound& b : kBounds) {
    if (b.precision == p && b.storage == storage) {
      return std::string(precisionName(p)) + " (output error <= " + b.bound + ")";
    }
  }
  return precisionName(p);
}


std::string valueName(const Graph& g, ValueId v) {
  return "%" + g.value(v).name;
}

// Math modes of the kernel that runs node `id`: its explicit kernel's, or
// (kernel auto) those of any kernel of t's backend that runs its group.
uint8_t kernelModes(const Graph& g, const Target& t, NodeId id) {
  const Node& n = g.node(id);
  if (n.mir.kernel != 0) return kernelInfo(n.mir.kernel).mathModes;
  std::vector<NodeId> members;
  for (size_t i = 0; i < g.nodes().size(); ++i) {
    bool member = n.mir.group < 0 ? static_cast<NodeId>(i) == id : g.nodes()[i].mir.group == n.mir.group;
    if (member) members.push_back(static_cast<NodeId>(i));
  }
  auto shape = classifyGroup(g, members);
  if (!shape.isOk()) return 0;
  uint8_t modes = 0;
  for (KernelId k : kernelsFor(g, members, *shape, t, nullptr)) modes |= kernelInfo(k).mathModes;
  return modes;
}

// Why node `id` cannot run `p` math on `t`; "" when it can. `modes` is kernelModes(id).
std::string mathProblem(const Graph& g, const Target& t, const ValueUses& uses, NodeId id, Precision p, uint8_t modes) {
  const Node& n = g.node(id);
  std::string where = nodeWhere(g, id), name = precisionName(p);
  if (!ops::in(kMathOps, n.op)) return where + " has no math mode: only GEMM-like ops and CIN run on matrix units";
  if (n.mir.math == p) return where + " already runs " + name + " math";
  if (p == Precision::kF32) return "";
  if (p == Precision::kInt8Rowwise) return "int8_rowwise is a storage format, not a math mode";
  for (ValueId o : n.outputs) {
    if (uses.isOutput[static_cast<size_t>(o)]) return where + ": its output " + valueName(g, o) + " is a graph output";
  }
  if (!t.supportsMath(p)) return where + ": " + t.hw.name + " has no " + name + " math";
  if (modes & (1u << static_cast<int>(p))) return "";
  if (n.mir.kernel != 0) return where + " runs " + kernelInfo(n.mir.kernel).name + ", which has no " + name + " math";
  return where + ": no " + backendName(t.backend) + " kernel that runs it has " + name + " math";
}

// Whether operand `i` of `n` is the table of a lookup (rows read by id).
bool isTableOperand(const Graph& g, const Node& n, size_t i) {
  switch (n.op) {
    case OpKind::kGather: {
      int64_t axis = n.attrs.getInt("axis", 0);
      return i == 0 && (axis == 0 || axis == -g.type(n.inputs[0]).rank());
    }
    case OpKind::kEmbeddingBag:
      return i == 0;
    case OpKind::kEmbeddingBags:
      return static_cast<int64_t>(i) < n.attrs.getInt("num_tables");
    default:
      return false;
  }
}

// Why `v` is not an embedding table whose storage can be chosen; "" when it
// is: read only as the table of lookups, an f32 constant, no graph output.
std::string tableProblem(const Graph& g, const ValueUses& uses, ValueId v) {
  std::string name = valueName(g, v);
  if (uses.isOutput[static_cast<size_t>(v)]) return name + " is a graph output";
  const auto& readers = uses.consumers[static_cast<size_t>(v)];
  for (NodeId c : readers) {
    const Node& n = g.node(c);
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      if (n.inputs[i] == v && !isTableOperand(g, n, i)) {
        return name + " is operand #" + std::to_string(i) + " of " + nodeWhere(g, c) +
               ": storage precision is for embedding tables only";
      }
    }
  }
  DType dt = g.type(v).dtype;
  std::string table = readers.empty() ? name : name + ", the table of " + nodeWhere(g, readers.front()) + ",";
  if (!g.isConstant(v)) return table + " is not a constant";
  return dt == DType::kF32 ? "" : table + " holds " + dtypeName(dt) + ", not f32 rows";
}

// Why table `v` cannot be stored as `p` on `t`; "" when it can. `bad` is
// tableProblem(v): going back to f32 is always allowed.
std::string storageProblem(const Graph& g, const Target& t, ValueId v, Precision p, const std::string& bad) {
  const Value& val = g.value(v);
  std::string name = precisionName(p);
  if (val.mir.storage == p) return valueName(g, v) + " is already stored as " + name;
  if (p == Precision::kF32) return "";
  if (!bad.empty()) return bad;
  if (p == Precision::kTF32) return "tf32 is a math mode, not a storage format";
  if (!t.supportsStorage(p)) return t.hw.name + " has no " + name + " storage";
  if (p == Precision::kInt8Rowwise && val.type.rank() != 2) {
    return valueName(g, v) + " is " + std::to_string(val.type.rank()) + "-D: int8_rowwise quantises rows of 2-D tables";
  }
  return "";
}

// Values whose storage is considered, in the order they are first read:
// tables of lookups and, with `explain` (for their near misses), the
// constant operands of GEMM-like nodes and CIN.
std::vector<ValueId> storageSubjects(const Graph& g, bool explain) {
  std::vector<char> seen(g.numValues(), 0);
  std::vector<ValueId> out;
  for (const Node& n : g.nodes()) {
    for (size_t k = 0; k < n.inputs.size(); ++k) {
      ValueId v = n.inputs[k];
      if (v == kNoValue || seen[static_cast<size_t>(v)]) continue;
      if (isTableOperand(g, n, k) || (explain && ops::in(kMathOps, n.op) && g.isConstant(v))) {
        seen[static_cast<size_t>(v)] = 1;
        out.push_back(v);
      }
    }
  }
  return out;
}

void push(std::vector<Candidate>& out, Action a, Precision p, std::string why) {
  a.kind = ActionKind::kSetPrecision;
  a.choice = choiceText(p, a.value != kNoValue);
  out.push_back(Candidate{std::move(a), std::move(why)});
}

class SetPrecision : public Rewrite {
 public:
  ActionKind kind() const override { return ActionKind::kSetPrecision; }

  void candidates(const Graph& g, const Target& t, bool explain, std::vector<Candidate>& out) const override {
    ValueUses uses = valueUses(g);
    for (size_t i = 0; i < g.nodes().size(); ++i) {
      NodeId id = static_cast<NodeId>(i);
      OpKind op = g.node(id).op;
      if (ops::in(kMathOps, op)) mathCandidates(g, t, uses, id, explain, out);
      if (explain && ops::in(kNoMathOps, op)) {
        Action a;
        a.nodes = {id};
        push(out, a, Precision::kBF16, mathProblem(g, t, uses, id, Precision::kBF16, 0));
      }
    }
    for (ValueId v : storageSubjects(g, explain)) storageCandidates(g, t, uses, v, explain, out);
  }

  Status apply(Graph& g, const Target& t, const Action& a) const override {
    CAGR_ASSIGN_OR_RETURN(Precision p, precisionOfChoice(a.choice));
    ValueUses uses = valueUses(g);
    std::string why;
    if (a.value != kNoValue) {
      if (a.value < 0 || static_cast<size_t>(a.value) >= g.numValues()) return invalidArgument("no such value");
      why = storageProblem(g, t, a.value, p, tableProblem(g, uses, a.value));
      if (!why.empty()) return invalidArgument(why);
      g.mutableValue(a.value).mir.storage = p;
      return Status::ok();
    }
    if (a.nodes.size() != 1 || a.nodes[0] < 0 || static_cast<size_t>(a.nodes[0]) >= g.nodes().size()) {
      return invalidArgument("set_precision acts on one node or one table");
    }
    NodeId id = a.nodes[0];
    why = mathProblem(g, t, uses, id, p, kernelModes(g, t, id));
    if (!why.empty()) return invalidArgument(why);
    g.mutableNodes()[static_cast<size_t>(id)].mir.math = p;
    return Status::ok();
  }

 private:
  static void mathCandidates(const Graph& g, const Target& t, const ValueUses& uses, NodeId id, bool explain,
                             std::vector<Candidate>& out) {
    uint8_t modes = kernelModes(g, t, id);
    Action a;
    a.nodes = {id};
    for (Precision p : kMathChoices) {
      if (p == g.node(id).mir.math) continue;
      std::string why = mathProblem(g, t, uses, id, p, modes);
      if (why.empty() || explain) push(out, a, p, std::move(why));
    }
  }

  // Each other storage precision of table `v`, or a single near miss when
  // `v` is no table at all.
  static void storageCandidates(const Graph& g, const Target& t, const ValueUses& uses, ValueId v, bool explain,
                                std::vector<Candidate>& out) {
    Action a;
    a.value = v;
    std::string bad = tableProblem(g, uses, v);
    for (Precision p : kStorageChoices) {
      if (p == g.value(v).mir.storage) continue;
      std::string why = storageProblem(g, t, v, p, bad);
      bool shown = why.empty() || (explain && (bad.empty() || p == Precision::kBF16));
      if (shown) push(out, a, p, std::move(why));
    }
  }
};

}  // namespace

const Rewrite* setPrecision() {
  static const SetPrecision r;
  return &r;
}

}  // namespace cagr::rewrites

namespace cagr {

StatusOr<Precision> precisionOfChoice(const std::string& choice) {
  return parsePrecision(choice.substr(0, choice.find(' ')));
}

double statedErrorBound(Precision p, bool storage) {
  for (const rewrites::ErrorBound& b : rewrites::kBounds) {
    if (b.precision == p && b.storage == storage) return b.value;
  }
  return 0;
}

}  // namespace cagr
