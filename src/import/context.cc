// Import context: the ONNX-name environment, lazy constant materialisation
// and eager constant folding of HIR nodes through the reference executor.
#include "import/context.h"

#include "cagr/reference.h"

namespace cagr::import {

bool SymInts::isStatic() const {
  return std::none_of(symbolic.begin(), symbolic.end(), [](char c) { return c != 0; });
}

SymInts SymInts::slice(size_t begin, size_t end) const {
  SymInts s;
  for (size_t i = begin; i < end; ++i) s.push(dims[i], isSym(i));
  return s;
}

SymInts SymInts::fromDims(const std::vector<Dim>& d, size_t begin, size_t end) {
  SymInts s;
  for (size_t i = begin; i < end; ++i) s.push(d[i], isSymbolic(d[i]));
  return s;
}

Tensor tensorFromInts(const SymInts& s) {
  std::vector<int64_t> shape;
  if (!s.scalar) shape.push_back(static_cast<int64_t>(s.dims.size()));
  Tensor t(DType::kI64, shape);
  for (size_t i = 0; i < s.dims.size(); ++i) t.data<int64_t>()[i] = s.dims[i];
  return t;
}

std::string Context::where() const {
  if (current_ == nullptr) return path_;
  return path_ + ": node '" + current_->name() + "' (" + current_->op_type() + ", opset " + std::to_string(opset()) + ")";
}

const onnx::NodeProto* Context::producer(const std::string& name) const {
  auto it = producers_.find(name);
  return it == producers_.end() ? nullptr : it->second;
}

const Entry* Context::entry(const std::string& name) const {
  auto it = env_.find(name);
  return it == env_.end() ? nullptr : &it->second;
}

StatusOr<ValueId> Context::value(const std::string& name) {
  auto it = env_.find(name);
  if (it == env_.end()) return notFound("value '" + name + "' is not defined before its use");
  Entry& e = it->second;
  if (!e.deferred.isOk()) {
    hitDeferred_ = true;
    return e.deferred;
  }
  if (e.value != kNoValue) return e.value;
  if (e.bagSequence) return unsupported("value '" + name + "' is a sequence; only ConcatFromSequence may use it");
  if (!e.constant && e.ints) {
    if (!e.ints->isStatic()) {
      return unsupported("value '" + name + "' depends on the symbolic batch size at run time (shape arithmetic "
                         "that does not fold to a static shape)");
    }
    e.constant = std::make_shared<const Tensor>(tensorFromInts(*e.ints));
  }
  if (e.constant) {
    e.value = g_.addConstant(name, e.constant);
    return e.value;
  }
  return internalError("value '" + name + "' has no definition");
}

std::shared_ptr<const Tensor> Context::constant(const std::string& name) {
  auto it = env_.find(name);
  if (it == env_.end() || !it->second.deferred.isOk()) return nullptr;
  Entry& e = it->second;
  if (e.constant) return e.constant;
  if (e.ints && e.ints->isStatic()) {
    e.constant = std::make_shared<const Tensor>(tensorFromInts(*e.ints));
    return e.constant;
  }
  if (e.value != kNoValue && g_.isConstant(e.value)) {
    return g_.constants()[static_cast<size_t>(g_.value(e.value).constant)];
  }
  return nullptr;
}

std::optional<SymInts> Context::ints(const std::string& name) {
  auto it = env_.find(name);
  if (it == env_.end() || !it->second.deferred.isOk()) return std::nullopt;
  if (it->second.ints) return it->second.ints;
  auto c = constant(name);
  if (!c || (c->dtype() != DType::kI64 && c->dtype() != DType::kI32) || c->rank() > 1 || c->numel() > 64) {
    return std::nullopt;
  }
  SymInts s;
  s.scalar = c->rank() == 0;
  for (int64_t i = 0; i < c->numel(); ++i) s.push(c->getI64(i), false);
  return s;
}

StatusOr<std::vector<int64_t>> Context::staticInts(const std::string& name, const std::string& what) {
  auto s = ints(name);
  if (!s) {
    auto e = entry(name);
    if (e != nullptr && !e->deferred.isOk()) {
      hitDeferred_ = true;
      return e->deferred;
    }
    return unsupported(what + " ('" + name + "') must be a constant known at import time");
  }
  if (!s->isStatic()) return unsupported(what + " ('" + name + "') depends on the symbolic batch size");
  return std::vector<int64_t>(s->dims.begin(), s->dims.end());
}

StatusOr<TensorType> Context::typeOf(const std::string& name) {
  CAGR_ASSIGN_OR_RETURN(ValueId v, value(name));
  return g_.type(v);
}

void Context::setValue(const std::string& name, ValueId v) {
  Entry e;
  e.value = v;
  if (v != kNoValue && g_.value(v).name.empty()) g_.mutableValue(v).name = name;
  env_[name] = std::move(e);
}

void Context::setConstant(const std::string& name, Tensor t) {
  setConstant(name, std::make_shared<const Tensor>(std::move(t)));
}

void Context::setConstant(const std::string& name, std::shared_ptr<const Tensor> t) {
  Entry e;
  e.constant = std::move(t);
  env_[name] = std::move(e);
}

void Context::setInts(const std::string& name, SymInts ints) {
  Entry e;
  e.ints = std::move(ints);
  env_[name] = std::move(e);
}

void Context::setDeferred(const std::string& name, Status why) {
  Entry e;
  e.deferred = std::move(why);
  env_[name] = std::move(e);
}

void Context::alias(const std::string& name, const std::string& from) {
  auto it = env_.find(from);
  if (it == env_.end()) {
    setDeferred(name, notFound("value '" + from + "' is not defined before its use"));
    return;
  }
  env_[name] = it->second;
  auto bag = bagValues_.find(from);
  if (bag != bagValues_.end()) bagValues_[name] = bag->second;
}

void Context::setBagSequence(const std::string& name, ValueId v) {
  Entry e;
  e.value = kNoValue;
  e.bagSequence = true;
  e.constant = nullptr;
  env_[name] = std::move(e);
  bagValues_[name] = v;
}

ValueId Context::bagSequenceValue(const std::string& name) const {
  auto it = bagValues_.find(name);
  return it == bagValues_.end() ? kNoValue : it->second;
}

namespace {

// Ops whose cost is compute, not data movement: folding them at import would
// hide real work from the compiler (e.g. NGCF's weight-only propagation), so
// only tiny instances are folded; the rewrite engine decides about the rest.
bool isComputeOp(OpKind op) {
  switch (op) {
    case OpKind::kMatMul:
    case OpKind::kGemm:
    case OpKind::kEinsum:
    case OpKind::kConv1x1:
    case OpKind::kSpMM:
    case OpKind::kEmbeddingBag:
    case OpKind::kInteraction:
    case OpKind::kFM:
    case OpKind::kCIN: return true;
    default: return false;
  }
}

// Folding must not inflate the model: a folded result may be at most as
// large as the constants it consumes (or tiny).
constexpr int64_t kMinFoldBudget = 4096;

// Evaluates one node whose operands are all constants on the reference
// executor; nullopt when the result is too large to be worth folding.
StatusOr<std::optional<std::vector<Tensor>>> evalConstantNode(const Graph& g, OpKind op,
                                                              const std::vector<ValueId>& inputs,
                                                              const Attrs& attrs, int numOutputs) {
  Graph mini;
  std::vector<ValueId> ins;
  int64_t budget = kMinFoldBudget;
  for (ValueId v : inputs) {
    if (v != kNoValue && !isComputeOp(op)) budget += g.constant(v)->numel();
    ins.push_back(v == kNoValue ? kNoValue
                                : mini.addConstant(g.value(v).name, g.constants()[static_cast<size_t>(g.value(v).constant)]));
  }
  CAGR_ASSIGN_OR_RETURN(auto outs, mini.addNode(op, ins, attrs, "fold", numOutputs));
  for (ValueId o : outs) {
    const TensorType& t = mini.type(o);
    int64_t n = 1;
    for (Dim d : t.dims) n *= d;
    if (!t.isStatic() || n > budget) return std::optional<std::vector<Tensor>>();
    mini.addOutput(o);
  }
  CAGR_ASSIGN_OR_RETURN(auto values, runReference(mini, {}));
  return std::optional<std::vector<Tensor>>(std::move(values));
}

}  // namespace

StatusOr<std::vector<ValueId>> Context::add(OpKind op, std::vector<ValueId> inputs, Attrs attrs, int numOutputs) {
  bool allConst = !inputs.empty();
  for (ValueId v : inputs) allConst = allConst && (v == kNoValue || g_.isConstant(v));
  std::string name = current_ != nullptr ? current_->name() : "";
  if (allConst) {
    CAGR_ASSIGN_OR_RETURN(auto folded, evalConstantNode(g_, op, inputs, attrs, numOutputs));
    if (folded) {
      std::vector<ValueId> ids;
      for (size_t i = 0; i < folded->size(); ++i) {
        ids.push_back(g_.addConstant(name + ":" + std::to_string(i), std::move((*folded)[i])));
      }
      ++report_.foldedNodes;
      return ids;
    }
  }
  return g_.addNode(op, std::move(inputs), std::move(attrs), name, numOutputs);
}

StatusOr<ValueId> Context::add1(OpKind op, std::vector<ValueId> inputs, Attrs attrs) {
  CAGR_ASSIGN_OR_RETURN(auto outs, add(op, std::move(inputs), std::move(attrs)));
  return outs.front();
}

// ---------------------------------------------------------------------------
const onnx::AttributeProto* findAttr(const onnx::NodeProto& n, const std::string& name) {
  for (const auto& a : n.attribute()) {
    if (a.name() == name) return &a;
  }
  return nullptr;
}

int64_t attrInt(const onnx::NodeProto& n, const std::string& name, int64_t dflt) {
  const auto* a = findAttr(n, name);
  return a != nullptr ? a->i() : dflt;
}

float attrFloat(const onnx::NodeProto& n, const std::string& name, float dflt) {
  const auto* a = findAttr(n, name);
  return a != nullptr ? a->f() : dflt;
}

std::string attrString(const onnx::NodeProto& n, const std::string& name, const std::string& dflt) {
  const auto* a = findAttr(n, name);
  return a != nullptr ? a->s() : dflt;
}

std::optional<std::vector<int64_t>> attrInts(const onnx::NodeProto& n, const std::string& name) {
  const auto* a = findAttr(n, name);
  if (a == nullptr) return std::nullopt;
  return std::vector<int64_t>(a->ints().begin(), a->ints().end());
}

}  // namespace cagr::import
