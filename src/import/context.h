// Import state shared by the ONNX op handlers: what each ONNX value name is
// (graph value, known constant, or shape arithmetic over symbolic dims), and
// helpers to add HIR nodes with eager constant folding.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include <onnx/onnx_pb.h>

#include "cagr/graph.h"
#include "cagr/importer.h"

namespace cagr::import {

/// Shape arithmetic result: an int64 scalar or 1-D tensor whose elements may
/// be symbolic dims (from Shape of a value with a symbolic batch).
struct SymInts {
  std::vector<Dim> dims;          // a symbolic entry holds the Dim encoding
  std::vector<char> symbolic;     // parallel to dims: is entry i symbolic?
  bool scalar = false;
  bool isStatic() const;
  void push(Dim d, bool isSym) {
    dims.push_back(d);
    symbolic.push_back(isSym ? 1 : 0);
  }
  /// A symbolic entry as a size (coef * symbol); a static one as a constant.
  bool isSym(size_t i) const { return symbolic[i] != 0; }
  /// Entries [begin, end) as a new 1-D SymInts.
  SymInts slice(size_t begin, size_t end) const;
  /// From a type's (possibly symbolic) dims.
  static SymInts fromDims(const std::vector<Dim>& d, size_t begin, size_t end);
};

/// A node whose own import failed (not one that inherited an input's error).
struct NodeFailure {
  std::string node, op, message;
};

/// What one ONNX value name stands for.
struct Entry {
  ValueId value = kNoValue;                 // materialised graph value
  std::shared_ptr<const Tensor> constant;   // known data (maybe not materialised)
  std::optional<SymInts> ints;              // shape arithmetic
  Status deferred;                          // why it could not be imported
  bool bagSequence = false;                 // Loop output: a sequence of [1,D] bags
};

class Context {
 public:
  Context(Graph& g, ImportReport& report, std::string path) : g_(g), report_(report), path_(std::move(path)) {}

  Graph& graph() { return g_; }
  ImportReport& report() { return report_; }
  const std::string& path() const { return path_; }
  int64_t opset() const { return report_.opset; }

  /// Producer of an ONNX value in the main graph (nullptr for inputs/initializers).
  void setProducer(const std::string& name, const onnx::NodeProto* node) { producers_[name] = node; }
  const onnx::NodeProto* producer(const std::string& name) const;

  bool known(const std::string& name) const { return env_.count(name) != 0; }
  const Entry* entry(const std::string& name) const;
  /// The graph value for `name`, materialising constants; deferred errors surface here.
  StatusOr<ValueId> value(const std::string& name);
  /// Constant data for `name` (also for static shape arithmetic), or nullptr.
  std::shared_ptr<const Tensor> constant(const std::string& name);
  /// Shape arithmetic view of `name` (int constants qualify), or nullopt.
  std::optional<SymInts> ints(const std::string& name);
  /// Static int64 values of a constant input, or an error naming `what`.
  StatusOr<std::vector<int64_t>> staticInts(const std::string& name, const std::string& what);
  /// Type of a value-backed name.
  StatusOr<TensorType> typeOf(const std::string& name);

  void setValue(const std::string& name, ValueId v);
  void setConstant(const std::string& name, Tensor t);
  void setConstant(const std::string& name, std::shared_ptr<const Tensor> t);
  void setInts(const std::string& name, SymInts ints);
  void setDeferred(const std::string& name, Status why);
  void setBagSequence(const std::string& name, ValueId v);
  /// The EmbeddingBag value behind a bag sequence (kNoValue if `name` is not one).
  ValueId bagSequenceValue(const std::string& name) const;

  /// Adds a HIR node named after the ONNX node; folds it to a constant when
  /// every operand is constant and the result is small.
  StatusOr<std::vector<ValueId>> add(OpKind op, std::vector<ValueId> inputs, Attrs attrs, int numOutputs = 1);
  StatusOr<ValueId> add1(OpKind op, std::vector<ValueId> inputs, Attrs attrs = {});

  /// Binds `name` to whatever `from` stands for (If branch outputs).
  void alias(const std::string& name, const std::string& from);

  void recordFailure(const onnx::NodeProto& n, std::string message) {
    failures_.push_back({n.name(), n.op_type(), std::move(message)});
  }
  const std::vector<NodeFailure>& failures() const { return failures_; }

  /// The ONNX node being imported (for names and messages).
  void setCurrent(const onnx::NodeProto* n) { current_ = n; }
  const onnx::NodeProto& current() const { return *current_; }
  std::string where() const;

 private:
  Graph& g_;
  ImportReport& report_;
  std::string path_;
  std::unordered_map<std::string, Entry> env_;
  std::unordered_map<std::string, const onnx::NodeProto*> producers_;
  std::unordered_map<std::string, ValueId> bagValues_;
  const onnx::NodeProto* current_ = nullptr;
  bool hitDeferred_ = false;
  std::vector<NodeFailure> failures_;

 public:
  /// True if value() returned a deferred error since the last reset: the
  /// failure belongs to an earlier node and is propagated unchanged.
  bool takeHitDeferred() {
    bool h = hitDeferred_;
    hitDeferred_ = false;
    return h;
  }
};

// ---- attribute access on ONNX nodes ----
const onnx::AttributeProto* findAttr(const onnx::NodeProto& n, const std::string& name);
int64_t attrInt(const onnx::NodeProto& n, const std::string& name, int64_t dflt);
float attrFloat(const onnx::NodeProto& n, const std::string& name, float dflt);
std::string attrString(const onnx::NodeProto& n, const std::string& name, const std::string& dflt);
std::optional<std::vector<int64_t>> attrInts(const onnx::NodeProto& n, const std::string& name);

// ---- tensors ----
StatusOr<DType> dtypeFromOnnx(int32_t elemType);
/// Converts a TensorProto (raw, typed fields or external data relative to `modelDir`).
StatusOr<Tensor> tensorFromOnnx(const onnx::TensorProto& t, const std::string& modelDir);
/// Materialises a SymInts that is fully static as an i64 tensor.
Tensor tensorFromInts(const SymInts& s);

// ---- handlers ----
using Handler = Status (*)(Context& ctx, const onnx::NodeProto& node);
/// The handler for an ONNX op type, or nullptr if unsupported.
Handler findHandler(const std::string& opType);
/// Imports the nodes of `graph` (the model's, or an inlined If branch) in
/// order; a node that fails defers its error to its outputs.
void importGraphNodes(Context& ctx, const onnx::GraphProto& graph);
/// Loop / ConcatFromSequence: the EmbeddingBag patterns (embedding_bag_loop.cc).
Status importLoop(Context& ctx, const onnx::NodeProto& node);
Status importConcatFromSequence(Context& ctx, const onnx::NodeProto& node);

/// HIR-level recognisers run after import (patterns/*.cc).
Status recognizeInteraction(Graph& g, ImportReport& report);
Status recognizeFM(Graph& g, ImportReport& report);
Status recognizeCIN(Graph& g, ImportReport& report);
/// Lists what stayed generic after recognition (patterns/generic_summary.cc).
void summarizeGenericRegions(const Graph& g, ImportReport& report);
/// ReduceSum of a Concat along other axes -> a Concat of per-part sums (patterns/pool_concat.cc).
Status pushSumsThroughConcats(Graph& g, ImportReport& report);

}  // namespace cagr::import
