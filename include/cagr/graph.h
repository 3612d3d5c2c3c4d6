// HIR: CAGR's hardware-agnostic graph. Values and nodes live in flat vectors
// addressed by index, constants share immutable storage, so copying a Graph is
// a handful of vector copies (the RL environment clones states constantly).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "cagr/status.h"
#include "cagr/tensor.h"

namespace cagr {

// ---------------------------------------------------------------------------
// Dimensions. A Dim >= 0 is static. A Dim < 0 is symbolic: coef * symbol,
// encoded as -(coef * kSymStride + symbol). Symbol 1 is the batch "N"; the
// graph's symbol table names the others (e.g. "L", the id count of a
// multi-hot input). MLIR text prints every symbolic dim as '?'.
using Dim = int64_t;
constexpr int64_t kSymStride = 1024;  // at most 1023 symbols: import declares one per dynamic input axis
constexpr int kBatchSymbol = 1;
constexpr Dim symDim(int symbol, int64_t coef = 1) { return -(coef * kSymStride + symbol); }
constexpr Dim kBatch = symDim(kBatchSymbol);
constexpr bool isSymbolic(Dim d) { return d < 0; }
constexpr int dimSymbol(Dim d) { return static_cast<int>((-d) % kSymStride); }
constexpr int64_t dimCoef(Dim d) { return (-d) / kSymStride; }

/// Element type plus (possibly symbolic) dimensions.
struct TensorType {
  DType dtype = DType::kF32;
  std::vector<Dim> dims;

  int64_t rank() const { return static_cast<int64_t>(dims.size()); }
  bool isStatic() const;
  bool operator==(const TensorType&) const = default;
};

/// Values bound to the graph's symbols for one execution (index = symbol).
struct SymbolBindings {
  std::vector<int64_t> values;  // values[0] unused
  /// Concrete size of `d`; fails if its symbol is unbound.
  StatusOr<int64_t> resolve(Dim d) const;
  StatusOr<std::vector<int64_t>> resolve(const std::vector<Dim>& dims) const;
};

// ---------------------------------------------------------------------------
// Ops.
/// Arity bound of variadic ops in ops.def (Concat, Split, EmbeddingBags...):
/// no practical cap — PNN's pairwise products concatenate hundreds of values.
constexpr int kVariadic = 1 << 30;

enum class OpKind : uint16_t {
#define CAGR_OP(Enum, mnemonic, minIn, maxIn, outs, attrs, shapeRule, costRule) k##Enum,
#include "cagr/ops.def"
#undef CAGR_OP
};
constexpr int kNumOpKinds = 0
#define CAGR_OP(Enum, mnemonic, minIn, maxIn, outs, attrs, shapeRule, costRule) +1
#include "cagr/ops.def"
#undef CAGR_OP
    ;

using AttrValue = std::variant<int64_t, double, std::string, std::vector<int64_t>, std::vector<double>>;

/// A small ordered attribute map (few entries per node: linear search wins).
class Attrs {
 public:
  void set(std::string_view name, AttrValue v);
  bool has(std::string_view name) const { return find(name) != nullptr; }
  const AttrValue* find(std::string_view name) const;
  void erase(std::string_view name);
  /// Typed getters; the verifier has checked kinds, defaults come from the schema.
  int64_t getInt(std::string_view name, int64_t dflt = 0) const;
  double getFloat(std::string_view name, double dflt = 0) const;
  std::string getString(std::string_view name, std::string_view dflt = "") const;
  std::vector<int64_t> getInts(std::string_view name) const;
  const std::vector<std::pair<std::string, AttrValue>>& items() const { return items_; }
  bool operator==(const Attrs&) const = default;

 private:
  std::vector<std::pair<std::string, AttrValue>> items_;
};

using ValueId = int32_t;
using NodeId = int32_t;
constexpr ValueId kNoValue = -1;

// ---------------------------------------------------------------------------
// MIR decisions (DESIGN §2). HIR is MIR with every decision at its default;
// rewrites (src/rewrite/) set them, backends lower from them, and because they
// live on the nodes and values they survive clones, topoSort and compact.
// include/cagr/mir.h has the catalog and verifier that give them meaning.

/// Precision of a stored tensor / table, or the math mode of a GEMM-like node.
enum class Precision : uint8_t { kF32, kTF32, kBF16, kF16, kInt8Rowwise };
/// Storage layout of a tensor (constants only for now): packed into the
/// kernel's blocked weight format, or padded to the matrix unit's alignment.
enum class Layout : uint8_t { kRowMajor, kPacked, kPadded };
/// Index into the kernel catalog (mir.h); 0 = the backend's default choice.
using KernelId = uint16_t;

struct NodeDecision {
  int32_t group = -1;  // fusion group label; nodes with the same label run as one kernel
  KernelId kernel = 0;
  int8_t stream = 0;
  Precision math = Precision::kF32;
  bool operator==(const NodeDecision&) const = default;
};

struct ValueDecision {
  Precision storage = Precision::kF32;
  Layout layout = Layout::kRowMajor;
  bool operator==(const ValueDecision&) const = default;
};

/// One operation. Inputs may hold kNoValue for an absent optional operand.
struct Node {
  OpKind op;
  std::vector<ValueId> inputs;
  std::vector<ValueId> outputs;
  Attrs attrs;
  std::string name;  // from the source model, for error messages and text
  NodeDecision mir;  // MIR decisions (defaults in HIR)
};

/// One SSA value: a graph input, a constant, or a node output.
struct Value {
  TensorType type;
  std::string name;
  NodeId producer = -1;     // -1 for inputs and constants
  int32_t constant = -1;    // index into Graph::constants(), or -1
  ValueDecision mir;        // MIR decisions (defaults in HIR)
};

/// FLOPs and memory traffic of one node at concrete shapes (compulsory
/// traffic: every input read once, every output written once).
struct OpCounts {
  double flops = 0;
  double bytesRead = 0;
  double bytesWritten = 0;
};

class Graph;
using ShapeFn = Status (*)(const Graph& g, const Node& n, std::vector<TensorType>& outs);
using CostFn = OpCounts (*)(const Node& n, std::span<const std::vector<int64_t>> inShapes,
                            std::span<const DType> inTypes, std::span<const std::vector<int64_t>> outShapes,
                            std::span<const DType> outTypes);

/// Static description of an op kind (one row of ops.def).
struct OpInfo {
  const char* name;      // "Gemm"
  const char* mnemonic;  // "gemm" (MLIR op "cagr.gemm")
  int minInputs, maxInputs, numOutputs;  // numOutputs is the maximum for Split
  const char* attrSchema;
  ShapeFn inferShape;
  CostFn count;
};

const OpInfo& opInfo(OpKind k);
/// Looks up "gemm" (or "cagr.gemm").
StatusOr<OpKind> opKindFromMnemonic(std::string_view mnemonic);

// ---------------------------------------------------------------------------
/// The graph. Nodes are kept in a valid topological order.
class Graph {
 public:
  Graph();

  // -- construction --
  ValueId addInput(std::string name, TensorType type);
  ValueId addConstant(std::string name, Tensor value);
  ValueId addConstant(std::string name, std::shared_ptr<const Tensor> value);
  /// Appends a node, infers its output types and returns its outputs.
  /// `numOutputs` matters only for variadic-output ops (Split).
  StatusOr<std::vector<ValueId>> addNode(OpKind op, std::vector<ValueId> inputs, Attrs attrs = {},
                                         std::string name = "", int numOutputs = 1);
  /// Single-output convenience wrapper around addNode.
  StatusOr<ValueId> add(OpKind op, std::vector<ValueId> inputs, Attrs attrs = {}, std::string name = "");
  void addOutput(ValueId v, std::string name = "");
  /// Declares a new symbol ("L") and returns its id.
  int addSymbol(std::string name);

  // -- symbol unification (import) --
  /// In unification mode, where an op needs two dims equal and they are
  /// different symbols with the same coefficient (input axes the exporter
  /// declared independently), shape rules accept them and record that the two
  /// symbols are one. canonicalizeSymbols() then rewrites the graph.
  void setUnifySymbols(bool on) { unify_ = on; }
  /// a == b, or two symbols unified (in unification mode: unifies them).
  bool sameDim(Dim a, Dim b) const;
  /// Rewrites every type and shape attribute to one symbol per unified class
  /// (N when the class holds N), drops symbols nothing uses, makes names
  /// unique and leaves unification mode.
  void canonicalizeSymbols();
  /// The batch of a model exported with static shapes (dim 0 of its first
  /// input), or 0 when some input has the symbolic batch N.
  int64_t fixedBatch() const;

  // -- access --
  const std::vector<Node>& nodes() const { return nodes_; }
  std::vector<Node>& mutableNodes() { return nodes_; }
  const Node& node(NodeId id) const { return nodes_[static_cast<size_t>(id)]; }
  const Value& value(ValueId id) const { return values_[static_cast<size_t>(id)]; }
  Value& mutableValue(ValueId id) { return values_[static_cast<size_t>(id)]; }
  const TensorType& type(ValueId id) const { return value(id).type; }
  size_t numValues() const { return values_.size(); }
  const std::vector<ValueId>& inputs() const { return inputs_; }
  const std::vector<ValueId>& outputs() const { return outputs_; }
  std::vector<ValueId>& mutableOutputs() { return outputs_; }
  const std::vector<std::string>& symbols() const { return symbols_; }
  /// Plan-level metadata (target, policy, batch the plan was priced at...);
  /// printed as `cagr.<key>` attributes of the graph op. Empty in HIR.
  const Attrs& meta() const { return meta_; }
  Attrs& mutableMeta() { return meta_; }
  /// "N", "26N", "13" for display.
  std::string dimString(Dim d) const;
  std::string typeString(const TensorType& t) const;

  bool isConstant(ValueId v) const { return v >= 0 && value(v).constant >= 0; }
  /// The constant's data, or nullptr when `v` is not a constant.
  const Tensor* constant(ValueId v) const;
  const std::vector<std::shared_ptr<const Tensor>>& constants() const { return constants_; }

  /// Replaces every use of `from` (node operands and graph outputs) by `to`.
  void replaceAllUses(ValueId from, ValueId to);
  /// Removes nodes whose outputs nobody uses, and unreferenced constants'
  /// storage stays shared. Re-establishes topological order.
  void eraseDeadNodes();
  /// Drops values nothing refers to (folded constants, erased nodes' outputs)
  /// and renumbers the rest; ValueIds held by callers become invalid.
  void compact();
  /// Recomputes a topological order of nodes (after rewrites that append).
  Status topoSort();
  /// Number of uses of each value (node operands + graph outputs).
  std::vector<int> useCounts() const;

  /// Structural checks: operand ids in range and defined before use, arity,
  /// attribute kinds against the schema, and inferred types equal stored ones.
  Status verify() const;
  /// Re-runs shape inference over all nodes (after a rewrite changed inputs).
  Status inferTypes();

  /// Binds symbols from concrete input shapes, e.g. N from dense[0].
  StatusOr<SymbolBindings> bindSymbols(std::span<const std::vector<int64_t>> inputShapes) const;

 private:
  std::vector<Node> nodes_;
  std::vector<Value> values_;
  std::vector<ValueId> inputs_, outputs_;
  std::vector<std::shared_ptr<const Tensor>> constants_;
  std::vector<std::string> symbols_;  // symbols_[0] unused, [1] = "N"
  Attrs meta_;
  bool unify_ = false;
  mutable std::vector<int> symbolParent_;  // union-find over symbols (unification mode)
};

/// Parsed attribute schema entry of an op (see ops.def).
struct AttrSpec {
  std::string name;
  char kind;  // i f s I F
  bool required;
  AttrValue dflt;
};
const std::vector<AttrSpec>& attrSchema(OpKind k);

}  // namespace cagr
