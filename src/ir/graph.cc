// Graph construction, use tracking, topological order and verification.
#include "cagr/graph.h"

#include "ir/op_table.h"

#include <algorithm>
#include <sstream>

namespace cagr {

bool TensorType::isStatic() const {
  return std::none_of(dims.begin(), dims.end(), [](Dim d) { return isSymbolic(d); });
}

StatusOr<int64_t> SymbolBindings::resolve(Dim d) const {
  if (!isSymbolic(d)) return d;
  size_t s = static_cast<size_t>(dimSymbol(d));
  if (s >= values.size() || values[s] < 0) return invalidArgument("symbolic dimension is not bound");
  return dimCoef(d) * values[s];
}

StatusOr<std::vector<int64_t>> SymbolBindings::resolve(const std::vector<Dim>& dims) const {
  std::vector<int64_t> out;
  out.reserve(dims.size());
  for (Dim d : dims) {
    CAGR_ASSIGN_OR_RETURN(int64_t v, resolve(d));
    out.push_back(v);
  }
  return out;
}

// ---------------------------------------------------------------------------
void Attrs::set(std::string_view name, AttrValue v) {
  for (auto& [k, val] : items_) {
    if (k == name) {
      val = std::move(v);
      return;
    }
  }
  items_.emplace_back(std::string(name), std::move(v));
}

const AttrValue* Attrs::find(std::string_view name) const {
  for (const auto& [k, v] : items_) {
    if (k == name) return &v;
  }
  return nullptr;
}

void Attrs::erase(std::string_view name) {
  std::erase_if(items_, [&](const auto& kv) { return kv.first == name; });
}

int64_t Attrs::getInt(std::string_view name, int64_t dflt) const {
  const AttrValue* v = find(name);
  if (v == nullptr) return dflt;
  if (const auto* i = std::get_if<int64_t>(v)) return *i;
  if (const auto* f = std::get_if<double>(v)) return static_cast<int64_t>(*f);
  return dflt;
}

double Attrs::getFloat(std::string_view name, double dflt) const {
  const AttrValue* v = find(name);
  if (v == nullptr) return dflt;
  if (const auto* f = std::get_if<double>(v)) return *f;
  if (const auto* i = std::get_if<int64_t>(v)) return static_cast<double>(*i);
  return dflt;
}

std::string Attrs::getString(std::string_view name, std::string_view dflt) const {
  const AttrValue* v = find(name);
  if (v != nullptr) {
    if (const auto* s = std::get_if<std::string>(v)) return *s;
  }
  return std::string(dflt);
}

std::vector<int64_t> Attrs::getInts(std::string_view name) const {
  const AttrValue* v = find(name);
  if (v != nullptr) {
    if (const auto* l = std::get_if<std::vector<int64_t>>(v)) return *l;
  }
  return {};
}

// ---------------------------------------------------------------------------
Graph::Graph() : symbols_{"", "N"} {}

ValueId Graph::addInput(std::string name, TensorType type) {
  ValueId id = static_cast<ValueId>(values_.size());
  values_.push_back(Value{std::move(type), std::move(name), -1, -1});
  inputs_.push_back(id);
  return id;
}

ValueId Graph::addConstant(std::string name, Tensor value) {
  return addConstant(std::move(name), std::make_shared<const Tensor>(std::move(value)));
}

ValueId Graph::addConstant(std::string name, std::shared_ptr<const Tensor> value) {
  ValueId id = static_cast<ValueId>(values_.size());
  TensorType t{value->dtype(), value->shape()};
  values_.push_back(Value{std::move(t), std::move(name), -1, static_cast<int32_t>(constants_.size())});
  constants_.push_back(std::move(value));
  return id;
}

const Tensor* Graph::constant(ValueId v) const {
  if (!isConstant(v)) return nullptr;
  return constants_[static_cast<size_t>(value(v).constant)].get();
}

int Graph::addSymbol(std::string name) {
  symbols_.push_back(std::move(name));
  return static_cast<int>(symbols_.size() - 1);
}

StatusOr<std::vector<ValueId>> Graph::addNode(OpKind op, std::vector<ValueId> inputs, Attrs attrs,
                                              std::string name, int numOutputs) {
  const OpInfo& info = opInfo(op);
  int nIn = static_cast<int>(inputs.size());
  std::string where = "node '" + name + "' (" + info.name + ")";
  if (nIn < info.minInputs || nIn > info.maxInputs) {
    std::string range = info.maxInputs == kVariadic ? "at least " + std::to_string(info.minInputs)
                                                    : std::to_string(info.minInputs) + ".." + std::to_string(info.maxInputs);
    return invalidArgument(where + ": takes " + range + " inputs, got " + std::to_string(nIn));
  }
  for (ValueId v : inputs) {
    if (v != kNoValue && (v < 0 || static_cast<size_t>(v) >= values_.size())) {
      return invalidArgument(where + ": operand id " + std::to_string(v) + " is undefined");
    }
  }
  CAGR_RETURN_IF_ERROR(checkAttrs(op, attrs).withContext(where));
  Node n{op, std::move(inputs), {}, std::move(attrs), std::move(name)};
  std::vector<TensorType> outTypes;
  CAGR_RETURN_IF_ERROR(info.inferShape(*this, n, outTypes).withContext(where));
  if (op != OpKind::kSplit) outTypes.resize(static_cast<size_t>(info.numOutputs));
  (void)numOutputs;
  NodeId nid = static_cast<NodeId>(nodes_.size());
  for (auto& t : outTypes) {
    ValueId vid = static_cast<ValueId>(values_.size());
    std::string vname = n.name.empty() ? "" : n.name + (n.outputs.empty() ? "" : ":" + std::to_string(n.outputs.size()));
    values_.push_back(Value{std::move(t), std::move(vname), nid, -1});
    n.outputs.push_back(vid);
  }
  nodes_.push_back(std::move(n));
  return nodes_.back().outputs;
}

StatusOr<ValueId> Graph::add(OpKind op, std::vector<ValueId> inputs, Attrs attrs, std::string name) {
  CAGR_ASSIGN_OR_RETURN(auto outs, addNode(op, std::move(inputs), std::move(attrs), std::move(name)));
  return outs.front();
}

void Graph::addOutput(ValueId v, std::string name) {
  if (!name.empty()) values_[static_cast<size_t>(v)].name = std::move(name);
  outputs_.push_back(v);
}

std::string Graph::dimString(Dim d) const {
  if (!isSymbolic(d)) return std::to_string(d);
  size_t s = static_cast<size_t>(dimSymbol(d));
  std::string sym = s < symbols_.size() ? symbols_[s] : "?";
  return dimCoef(d) == 1 ? sym : std::to_string(dimCoef(d)) + sym;
}

std::string Graph::typeString(const TensorType& t) const {
  std::ostringstream os;
  os << dtypeName(t.dtype) << "[";
  for (size_t i = 0; i < t.dims.size(); ++i) os << (i ? "," : "") << dimString(t.dims[i]);
  os << "]";
  return os.str();
}

void Graph::replaceAllUses(ValueId from, ValueId to) {
  for (Node& n : nodes_) {
    std::replace(n.inputs.begin(), n.inputs.end(), from, to);
  }
  std::replace(outputs_.begin(), outputs_.end(), from, to);
}

std::vector<int> Graph::useCounts() const {
  std::vector<int> uses(values_.size(), 0);
  for (const Node& n : nodes_) {
    for (ValueId v : n.inputs) {
      if (v != kNoValue) ++uses[static_cast<size_t>(v)];
    }
  }
  for (ValueId v : outputs_) ++uses[static_cast<size_t>(v)];
  return uses;
}

void Graph::eraseDeadNodes() {
  // Worklist liveness from the graph outputs; does not rely on node order.
  std::vector<NodeId> producer(values_.size(), -1);
  for (size_t i = 0; i < nodes_.size(); ++i) {
    for (ValueId v : nodes_[i].outputs) producer[static_cast<size_t>(v)] = static_cast<NodeId>(i);
  }
  std::vector<bool> keep(nodes_.size(), false);
  std::vector<ValueId> work(outputs_.begin(), outputs_.end());
  while (!work.empty()) {
    ValueId v = work.back();
    work.pop_back();
    NodeId p = producer[static_cast<size_t>(v)];
    if (p < 0 || keep[static_cast<size_t>(p)]) continue;
    keep[static_cast<size_t>(p)] = true;
    for (ValueId in : nodes_[static_cast<size_t>(p)].inputs) {
      if (in != kNoValue) work.push_back(in);
    }
  }
  std::vector<Node> kept;
  kept.reserve(nodes_.size());
  for (size_t i = 0; i < nodes_.size(); ++i) {
    if (keep[i]) kept.push_back(std::move(nodes_[i]));
  }
  nodes_ = std::move(kept);
  for (Value& v : values_) {
    if (v.producer >= 0) v.producer = -1;  // dead values keep no stale producer
  }
  for (size_t i = 0; i < nodes_.size(); ++i) {
    for (ValueId v : nodes_[i].outputs) values_[static_cast<size_t>(v)].producer = static_cast<NodeId>(i);
  }
}

void Graph::compact() {
  std::vector<ValueId> remap(values_.size(), kNoValue);
  std::vector<Value> values;
  std::vector<std::shared_ptr<const Tensor>> constants;
  auto keep = [&](ValueId old) {
    if (old == kNoValue) return kNoValue;
    ValueId& slot = remap[static_cast<size_t>(old)];
    if (slot != kNoValue) return slot;
    Value v = values_[static_cast<size_t>(old)];
    if (v.constant >= 0) {
      constants.push_back(constants_[static_cast<size_t>(v.constant)]);
      v.constant = static_cast<int32_t>(constants.size() - 1);
    }
    slot = static_cast<ValueId>(values.size());
    values.push_back(std::move(v));
    return slot;
  };
  for (ValueId& v : inputs_) v = keep(v);
  for (Node& n : nodes_) {
    for (ValueId& v : n.inputs) v = keep(v);
    for (ValueId& v : n.outputs) v = keep(v);
  }
  for (ValueId& v : outputs_) v = keep(v);
  values_ = std::move(values);
  constants_ = std::move(constants);
}

Status Graph::topoSort() {
  // Kahn's algorithm over node indices, stable with respect to current order.
  std::vector<NodeId> producer(values_.size(), -1);
  for (size_t i = 0; i < nodes_.size(); ++i) {
    for (ValueId v : nodes_[i].outputs) producer[static_cast<size_t>(v)] = static_cast<NodeId>(i);
  }
  std::vector<int> pending(nodes_.size(), 0);
  std::vector<std::vector<NodeId>> users(nodes_.size());
  for (size_t i = 0; i < nodes_.size(); ++i) {
    for (ValueId v : nodes_[i].inputs) {
      if (v == kNoValue || producer[static_cast<size_t>(v)] < 0) continue;
      ++pending[i];
      users[static_cast<size_t>(producer[static_cast<size_t>(v)])].push_back(static_cast<NodeId>(i));
    }
  }
  std::vector<NodeId> order, ready;
  for (size_t i = nodes_.size(); i-- > 0;) {
    if (pending[i] == 0) ready.push_back(static_cast<NodeId>(i));
  }
  while (!ready.empty()) {
    NodeId n = ready.back();
    ready.pop_back();
    order.push_back(n);
    auto& us = users[static_cast<size_t>(n)];
    for (auto it = us.rbegin(); it != us.rend(); ++it) {
      if (--pending[static_cast<size_t>(*it)] == 0) ready.push_back(*it);
    }
  }
  if (order.size() != nodes_.size()) return invalidArgument("graph has a cycle");
  std::vector<Node> sorted;
  sorted.reserve(nodes_.size());
  for (NodeId id : order) sorted.push_back(std::move(nodes_[static_cast<size_t>(id)]));
  nodes_ = std::move(sorted);
  for (size_t i = 0; i < nodes_.size(); ++i) {
    for (ValueId v : nodes_[i].outputs) values_[static_cast<size_t>(v)].producer = static_cast<NodeId>(i);
  }
  return Status::ok();
}

StatusOr<SymbolBindings> Graph::bindSymbols(std::span<const std::vector<int64_t>> inputShapes) const {
  SymbolBindings b;
  b.values.assign(symbols_.size(), -1);
  if (inputShapes.size() != inputs_.size()) {
    return invalidArgument("expected " + std::to_string(inputs_.size()) + " inputs, got " +
                           std::to_string(inputShapes.size()));
  }
  for (size_t i = 0; i < inputs_.size(); ++i) {
    const Value& in = value(inputs_[i]);
    const auto& shape = inputShapes[i];
    std::string where = "input '" + in.name + "'";
    if (shape.size() != in.type.dims.size()) {
      return invalidArgument(where + ": expected rank " + std::to_string(in.type.dims.size()) + " (" +
                             typeString(in.type) + "), got rank " + std::to_string(shape.size()));
    }
    for (size_t k = 0; k < shape.size(); ++k) {
      Dim d = in.type.dims[k];
      if (!isSymbolic(d)) {
        if (shape[k] != d) {
          return invalidArgument(where + ": dimension " + std::to_string(k) + " must be " + std::to_string(d) +
                                 " (" + typeString(in.type) + "), got " + std::to_string(shape[k]));
        }
        continue;
      }
      size_t s = static_cast<size_t>(dimSymbol(d));
      int64_t coef = dimCoef(d);
      if (shape[k] % coef != 0) {
        return invalidArgument(where + ": dimension " + std::to_string(k) + " must be a multiple of " +
                               std::to_string(coef) + ", got " + std::to_string(shape[k]));
      }
      int64_t v = shape[k] / coef;
      if (b.values[s] >= 0 && b.values[s] != v) {
        return invalidArgument(where + ": dimension " + std::to_string(k) + " is " + symbols_[s] + " = " +
                               std::to_string(v) + " but another input set " + symbols_[s] + " = " +
                               std::to_string(b.values[s]));
      }
      b.values[s] = v;
    }
  }
  return b;
}

}  // namespace cagr
