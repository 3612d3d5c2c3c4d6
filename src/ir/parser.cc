// parseGraph: gives the raw MLIR tree of ir/text_syntax.h its CAGR meaning.
// Every node goes through Graph::addNode, so shapes are re-inferred and
// checked against the types written in the text.
#include <algorithm>
#include <charconv>
#include <unordered_map>

#include "cagr/text.h"
#include "support/sizes.h"
#include "ir/parser_values.h"
#include "ir/text_format.h"
#include "ir/text_mir.h"
#include "ir/text_syntax.h"

namespace cagr {
namespace {

using text::RawAttr;
using text::RawNamedAttr;
using text::RawOp;
using text::RawRegion;
using text::RawType;
using text::RawValueRef;
using text::Source;

// What the cagr.graph op's attributes say about the graph's boundary.
struct GraphHeader {
  std::vector<std::string> inputNames, inputDims, outputNames, symbols;
  Attrs meta;  // plan metadata (cagr.* attributes)
  bool hasInputNames = false, hasInputDims = false, hasOutputNames = false;
};

// The reserved attributes of a node op, and its op attributes.
struct NodeParts {
  std::string name;
  std::vector<int64_t> mask;
  std::vector<std::string> resultNames;
  bool hasResultNames = false;
  Attrs attrs;
  NodeDecision decision;          // MIR decisions (cagr.group, cagr.kernel...)
  ValueDecision resultDecision;   // of the first result (cagr.storage, cagr.layout)
};

class GraphBuilder {
 public:
  GraphBuilder(const Source& src, const WeightsBlob* weights) : src_(src), weights_(weights) {}

  StatusOr<Graph> build(const RawOp& top) {
    if (top.name == "cagr.graph") {
      CAGR_RETURN_IF_ERROR(buildGraph(top));
      return std::move(g_);
    }
    if (top.name != "builtin.module") {
      return src_.error(top.pos, "expected 'builtin.module' or 'cagr.graph', found '" + top.name + "'");
    }
    if (top.regions.size() != 1) return src_.error(top.pos, "expected 'builtin.module' to have one region");
    const RawRegion& body = top.regions[0];
    const RawOp* graphOp = nullptr;
    for (const RawOp& op : body.ops) {
      if (op.name != "cagr.graph") {
        return src_.error(op.pos, "expected only 'cagr.graph' in the module, found '" + op.name + "'");
      }
      if (graphOp != nullptr) return src_.error(op.pos, "expected one 'cagr.graph' in the module, found a second");
      graphOp = &op;
    }
    if (graphOp == nullptr) return src_.error(body.pos, "expected a 'cagr.graph' op in the module");
    CAGR_RETURN_IF_ERROR(buildGraph(*graphOp));
    return std::move(g_);
  }

 private:
  Status error(size_t pos, const std::string& m, ErrorCode code = ErrorCode::kCorrupt) const {
    return src_.error(pos, m, code);
  }

  Status stringList(const RawNamedAttr& a, std::vector<std::string>& out) const {
    if (a.value.kind != RawAttr::kArray) return error(a.value.pos, "expected '" + a.name + "' to be a list of strings");
    for (const RawAttr& e : a.value.elems) {
      if (e.kind != RawAttr::kString) return error(e.pos, "expected a string in '" + a.name + "'");
      out.push_back(e.str);
    }
    return Status::ok();
  }

  Status readHeader(const RawOp& op, GraphHeader& h) const {
    for (const RawNamedAttr& a : op.attrs) {
      if (a.name == "input_names") {
        h.hasInputNames = true;
        CAGR_RETURN_IF_ERROR(stringList(a, h.inputNames));
      } else if (a.name == "input_dims") {
        h.hasInputDims = true;
        CAGR_RETURN_IF_ERROR(stringList(a, h.inputDims));
      } else if (a.name == "output_names") {
        h.hasOutputNames = true;
        CAGR_RETURN_IF_ERROR(stringList(a, h.outputNames));
      } else if (a.name == "symbols") {
        CAGR_RETURN_IF_ERROR(stringList(a, h.symbols));
      } else if (text::isMirAttr(a.name)) {
        CAGR_RETURN_IF_ERROR(text::readMeta(src_, a, h.meta));
      } else if (a.name != "sym_name") {
        return error(a.pos, "unknown attribute '" + a.name + "' on 'cagr.graph'");
      }
    }
    if (!h.symbols.empty() && h.symbols[0] != "N") {
      return error(op.pos, "the first symbol of 'cagr.graph' must be the batch \"N\", found \"" + h.symbols[0] + "\"");
    }
    return Status::ok();
  }

  Status buildGraph(const RawOp& op) {
    if (op.regions.size() != 1) return error(op.pos, "expected 'cagr.graph' to have one region");
    if (!op.operands.empty() || op.numResults() != 0 || !op.resultTypes.empty()) {
      return error(op.pos, "expected 'cagr.graph' to have no operands and no results");
    }
    GraphHeader h;
    CAGR_RETURN_IF_ERROR(readHeader(op, h));
    for (size_t i = 1; i < h.symbols.size(); ++i) g_.addSymbol(h.symbols[i]);
    g_.mutableMeta() = h.meta;
    const RawRegion& body = op.regions[0];
    CAGR_RETURN_IF_ERROR(addInputs(op, body, h));
    for (size_t i = 0; i < body.ops.size(); ++i) {
      const RawOp& inner = body.ops[i];
      if (inner.name == "cagr.return") {
        if (i + 1 != body.ops.size()) return error(body.ops[i + 1].pos, "expected no op after 'cagr.return'");
        return addReturn(inner, h);
      }
      CAGR_RETURN_IF_ERROR(checkCounts(inner));
      if (!inner.regions.empty()) return error(inner.pos, "expected '" + inner.name + "' to have no regions");
      if (inner.name == "cagr.constant") {
        CAGR_RETURN_IF_ERROR(addConstantOp(inner));
      } else if (inner.name.starts_with(text::kDialectPrefix)) {
        CAGR_RETURN_IF_ERROR(addNodeOp(inner));
      } else {
        return error(inner.pos, "expected a 'cagr.' op in 'cagr.graph', found '" + inner.name + "'");
      }
    }
    return error(body.end, "expected 'cagr.return' at the end of 'cagr.graph'");
  }

  // "N,13" / "26N" / "L" -> dims.
  StatusOr<std::vector<Dim>> parseDims(const std::string& text, size_t pos) const {
    std::vector<Dim> dims;
    if (text.empty()) return dims;
    size_t start = 0;
    while (start <= text.size()) {
      size_t comma = std::min(text.find(',', start), text.size());
      std::string_view item = std::string_view(text).substr(start, comma - start);
      size_t digits = 0;
      while (digits < item.size() && item[digits] >= '0' && item[digits] <= '9') ++digits;
      int64_t num = 1;
      if (digits > 0 &&
          (std::from_chars(item.data(), item.data() + digits, num).ec != std::errc() || num > (int64_t{1} << 40))) {
        return error(pos, "dimension '" + std::string(item) + "' in input_dims is too large");
      }
      if (digits == item.size() && digits > 0) {
        dims.push_back(num);
      } else {
        std::string_view sym = item.substr(digits);
        auto it = std::find(g_.symbols().begin() + 1, g_.symbols().end(), sym);
        if (it == g_.symbols().end() || num <= 0) {
          return error(pos, "dimension '" + std::string(item) + "' in input_dims names no symbol of 'symbols'");
        }
        dims.push_back(symDim(static_cast<int>(it - g_.symbols().begin()), num));
      }
      start = comma + 1;
    }
    return dims;
  }

  static bool typeMatches(const TensorType& actual, const RawType& t) {
    if (actual.dtype != t.dtype || actual.dims.size() != t.dims.size()) return false;
    for (size_t k = 0; k < t.dims.size(); ++k) {
      if (t.dims[k] < 0 ? !isSymbolic(actual.dims[k]) : actual.dims[k] != t.dims[k]) return false;
    }
    return true;
  }

  Status checkType(ValueId v, const RawType& t, const std::string& what) const {
    if (typeMatches(g_.type(v), t)) return Status::ok();
    return error(t.pos, what + " has type " + text::tensorTypeString(g_.type(v)) + " (" + g_.typeString(g_.type(v)) +
                            ") but the text says " + t.str());
  }

  Status addInputs(const RawOp& op, const RawRegion& body, const GraphHeader& h) {
    size_t n = body.args.size();
    if ((h.hasInputNames && h.inputNames.size() != n) || (h.hasInputDims && h.inputDims.size() != n)) {
      return error(op.pos, "input_names / input_dims of 'cagr.graph' do not have one entry per block argument (" +
                               std::to_string(n) + ")");
    }
    for (size_t i = 0; i < n; ++i) {
      const text::RawBlockArg& arg = body.args[i];
      TensorType type{arg.type.dtype, {}};
      for (int64_t d : arg.type.dims) type.dims.push_back(d < 0 ? kBatch : d);
      if (h.hasInputDims) {
        CAGR_ASSIGN_OR_RETURN(type.dims, parseDims(h.inputDims[i], op.pos));
      }
      std::string name = h.hasInputNames ? h.inputNames[i] : "";
      if (!typeMatches(type, arg.type)) {
        return error(arg.type.pos, "input '" + name + "' is " + g_.typeString(type) +
                                       " by input_dims but its type is " + arg.type.str());
      }
      CAGR_RETURN_IF_ERROR(define(arg.name, {g_.addInput(name, type)}, arg.pos));
    }
    return Status::ok();
  }

  Status define(const std::string& name, std::vector<ValueId> values, size_t pos) {
    if (!ssa_.emplace(name, std::move(values)).second) return error(pos, "redefinition of SSA value '" + name + "'");
    return Status::ok();
  }

  Status defineResults(const RawOp& op, const std::vector<ValueId>& values) {
    size_t next = 0;
    for (const text::RawResultGroup& r : op.results) {
      std::vector<ValueId> group(values.begin() + static_cast<ptrdiff_t>(next),
                                 values.begin() + static_cast<ptrdiff_t>(next + static_cast<size_t>(r.count)));
      next += static_cast<size_t>(r.count);
      CAGR_RETURN_IF_ERROR(define(r.name, std::move(group), r.pos));
    }
    return Status::ok();
  }

  StatusOr<ValueId> resolve(const RawValueRef& ref) const {
    auto it = ssa_.find(ref.name);
    if (it == ssa_.end()) return error(ref.pos, "use of undefined value '" + ref.name + "'");
    const auto& group = it->second;
    if (ref.index < 0) {
      if (group.size() == 1) return group[0];
      return error(ref.pos,
                   "'" + ref.name + "' names " + std::to_string(group.size()) + " results; use " + ref.name + "#i");
    }
    if (static_cast<size_t>(ref.index) >= group.size()) {
      return error(ref.pos, "'" + ref.name + "' has " + std::to_string(group.size()) + " results, no #" +
                                std::to_string(ref.index));
    }
    return group[static_cast<size_t>(ref.index)];
  }

  // Operand and result counts agree with the op's function type.
  Status checkCounts(const RawOp& op) const {
    if (op.operands.size() != op.operandTypes.size()) {
      return error(op.pos, "'" + op.name + "' has " + std::to_string(op.operands.size()) +
                               " operands but its type lists " + std::to_string(op.operandTypes.size()));
    }
    if (!op.results.empty() && static_cast<size_t>(op.numResults()) != op.resultTypes.size()) {
      return error(op.pos, "'" + op.name + "' defines " + std::to_string(op.numResults()) +
                               " results but its type lists " + std::to_string(op.resultTypes.size()));
    }
    return Status::ok();
  }

  StatusOr<std::vector<ValueId>> operands(const RawOp& op) const {
    std::vector<ValueId> out;
    for (size_t i = 0; i < op.operands.size(); ++i) {
      CAGR_ASSIGN_OR_RETURN(ValueId v, resolve(op.operands[i]));
      CAGR_RETURN_IF_ERROR(
          checkType(v, op.operandTypes[i],
                    "operand #" + std::to_string(i) + " (" + op.operands[i].name + ") of '" + op.name + "'"));
      out.push_back(v);
    }
    return out;
  }

  // A constant stored in the weights blob: a view of its bytes, not a copy.
  StatusOr<Tensor> weightsView(const RawAttr& at, const RawType& type, const std::string& name) {
    if (!type.isStatic()) return error(type.pos, "a constant needs a static type, got " + type.str());
    CAGR_ASSIGN_OR_RETURN(size_t bytes, checkedTensorBytes(type.dtype, type.dims, "constant '" + name + "'"));
    if (weights_ == nullptr) {
      return error(at.pos, "constant '" + name + "' is stored in a weights file, and none was given (a plan's "
                           "weights file lies next to it, named on its first line)");
    }
    CAGR_ASSIGN_OR_RETURN(const int64_t off, text::scalarInt(src_, at.scalar));
    if (off < 0 || static_cast<uint64_t>(off) > weights_->size || bytes > weights_->size - static_cast<uint64_t>(off)) {
      return error(at.pos, "constant '" + name + "' (" + std::to_string(bytes) + " bytes at offset " +
                               std::to_string(off) + ") lies outside weights file '" + weights_->path + "' (" +
                               std::to_string(weights_->size) + " bytes)");
    }
    if (off % static_cast<int64_t>(dtypeSize(type.dtype)) != 0) {
      return error(at.pos, "constant '" + name + "': offset " + std::to_string(off) + " is not aligned to its type");
    }
    return Tensor::view(type.dtype, type.dims, weights_->owner, weights_->data + off);
  }

  Status addConstantOp(const RawOp& op) {
    if (!op.operands.empty() || op.resultTypes.size() != 1) {
      return error(op.pos, "expected 'cagr.constant' to have no operands and one result");
    }
    const RawType& type = op.resultTypes[0];
    std::string name;
    const RawAttr* value = nullptr;
    const RawAttr* weightsOffset = nullptr;
    bool elided = false;
    ValueDecision decision;
    for (const RawNamedAttr& a : op.attrs) {
      if (a.name == text::kNameAttr && a.value.kind == RawAttr::kString) {
        name = a.value.str;
      } else if (a.name == "value" && a.value.kind == RawAttr::kDense) {
        value = &a.value;
      } else if (a.name == "elided" && a.value.kind == RawAttr::kUnit) {
        elided = true;
      } else if (a.name == "weights_offset" && a.value.kind == RawAttr::kNumber) {
        weightsOffset = &a.value;
      } else if (text::isMirAttr(a.name)) {
        CAGR_RETURN_IF_ERROR(text::readDecision(src_, a, nullptr, &decision));
      } else {
        return error(a.pos, "unexpected attribute '" + a.name +
                                "' on 'cagr.constant' (expected name = \"...\", "
                                "value = dense<...> or elided)");
      }
    }
    if (value == nullptr && !elided && weightsOffset == nullptr) {
      return error(op.pos, "expected 'cagr.constant' to have a value, a weights_offset or 'elided'");
    }
    Tensor data;
    if (weightsOffset != nullptr) {
      CAGR_ASSIGN_OR_RETURN(data, weightsView(*weightsOffset, type, name));
    } else if (value != nullptr) {
      if (value->denseType.dtype != type.dtype || value->denseType.dims != type.dims) {
        return error(value->denseType.pos,
                     "constant value is " + value->denseType.str() + " but the result type is " + type.str());
      }
      CAGR_ASSIGN_OR_RETURN(data, text::denseToTensor(src_, *value));
    } else {
      CAGR_ASSIGN_OR_RETURN(data, text::zeroTensor(src_, type));
    }
    ValueId c = g_.addConstant(std::move(name), std::move(data));
    g_.mutableValue(c).mir = decision;
    return defineResults(op, {c});
  }

  StatusOr<AttrValue> opAttr(OpKind kind, const RawNamedAttr& a) const {
    char want = 0;
    for (const AttrSpec& s : attrSchema(kind)) {
      if (s.name == a.name) want = s.kind;
    }
    const RawAttr& v = a.value;
    switch (v.kind) {
      case RawAttr::kString:
        return AttrValue(v.str);
      case RawAttr::kNumber:
        return text::numberAttr(src_, v, false);
      case RawAttr::kArray:
        break;
      default:
        return error(v.pos, "attribute '" + a.name + "' must be a number, string or list");
    }
    bool floats = want == 'F' || std::any_of(v.elems.begin(), v.elems.end(), [](const RawAttr& e) {
                    return e.kind == RawAttr::kNumber && e.scalar.kind == text::RawScalar::kFloat;
                  });
    std::vector<int64_t> ints;
    std::vector<double> doubles;
    for (const RawAttr& e : v.elems) {
      if (e.kind != RawAttr::kNumber) return error(e.pos, "expected a number in list attribute '" + a.name + "'");
      CAGR_ASSIGN_OR_RETURN(AttrValue x, text::numberAttr(src_, e, floats));
      if (floats && !std::holds_alternative<double>(x)) return error(e.pos, "expected a float in '" + a.name + "'");
      if (!floats && !std::holds_alternative<int64_t>(x)) {
        return error(e.pos, "expected an integer in '" + a.name + "'");
      }
      if (floats) doubles.push_back(std::get<double>(x));
      if (!floats) ints.push_back(std::get<int64_t>(x));
    }
    if (floats) return AttrValue(std::move(doubles));
    return AttrValue(std::move(ints));
  }

  Status readNodeAttrs(const RawOp& op, OpKind kind, NodeParts& parts) const {
    std::vector<std::pair<std::string, AttrValue>> found;
    for (const RawNamedAttr& a : op.attrs) {
      bool dup = std::any_of(op.attrs.begin(), op.attrs.end(),
                             [&](const RawNamedAttr& b) { return &b < &a && b.name == a.name; });
      if (dup) return error(a.pos, "duplicate attribute '" + a.name + "'");
      if (a.name == text::kNameAttr) {
        if (a.value.kind != RawAttr::kString) return error(a.value.pos, "expected 'name' to be a string");
        parts.name = a.value.str;
      } else if (a.name == text::kResultNamesAttr) {
        parts.hasResultNames = true;
        CAGR_RETURN_IF_ERROR(stringList(a, parts.resultNames));
      } else if (text::isMirAttr(a.name)) {
        CAGR_RETURN_IF_ERROR(text::readDecision(src_, a, &parts.decision, &parts.resultDecision));
      } else if (a.name == text::kOperandMaskAttr) {
        CAGR_ASSIGN_OR_RETURN(AttrValue m, opAttr(kind, a));
        if (!std::holds_alternative<std::vector<int64_t>>(m)) {
          return error(a.value.pos, "expected operand_mask = [1, 0, ...]");
        }
        parts.mask = std::get<std::vector<int64_t>>(m);
      } else {
        CAGR_ASSIGN_OR_RETURN(AttrValue v, opAttr(kind, a));
        found.emplace_back(a.name, std::move(v));
      }
    }
    // Canonical order: the schema's, then anything else (addNode rejects it).
    for (const AttrSpec& s : attrSchema(kind)) {
      for (const auto& [name, v] : found) {
        if (name == s.name) parts.attrs.set(name, v);
      }
    }
    for (const auto& [name, v] : found) parts.attrs.set(name, v);
    return Status::ok();
  }

  // Places the operands into their slots per operand_mask.
  StatusOr<std::vector<ValueId>> nodeInputs(const RawOp& op, OpKind kind, const NodeParts& parts) const {
    CAGR_ASSIGN_OR_RETURN(std::vector<ValueId> present, operands(op));
    if (parts.mask.empty()) return present;
    const OpInfo& info = opInfo(kind);
    const RawNamedAttr* maskAttr = op.findAttr(text::kOperandMaskAttr);
    size_t ones = static_cast<size_t>(std::count(parts.mask.begin(), parts.mask.end(), 1));
    if (ones + static_cast<size_t>(std::count(parts.mask.begin(), parts.mask.end(), 0)) != parts.mask.size() ||
        ones != present.size()) {
      return error(maskAttr->pos,
                   "operand_mask must hold 0 / 1 with one 1 per operand (" + std::to_string(present.size()) + ")");
    }
    // Only ops with fixed optional slots (Gemm's C, EmbeddingBag's offsets...) may leave holes.
    bool variadic = info.maxInputs - info.minInputs > 2;
    std::vector<ValueId> inputs;
    size_t next = 0;
    for (size_t i = 0; i < parts.mask.size(); ++i) {
      if (parts.mask[i] == 0 && (static_cast<int>(i) < info.minInputs || variadic)) {
        return error(maskAttr->pos, "operand " + std::to_string(i) + " of '" + op.name + "' is not optional");
      }
      inputs.push_back(parts.mask[i] == 0 ? kNoValue : present[next++]);
    }
    return inputs;
  }

  Status addNodeOp(const RawOp& op) {
    auto kind = opKindFromMnemonic(op.name);
    if (!kind.isOk()) return error(op.pos, kind.status().message(), kind.status().code());
    NodeParts parts;
    CAGR_RETURN_IF_ERROR(readNodeAttrs(op, *kind, parts));
    CAGR_ASSIGN_OR_RETURN(std::vector<ValueId> inputs, nodeInputs(op, *kind, parts));
    auto outs = g_.addNode(*kind, std::move(inputs), std::move(parts.attrs), parts.name,
                           static_cast<int>(op.resultTypes.size()));
    if (!outs.isOk()) return error(op.pos, outs.status().message(), outs.status().code());
    if (outs->size() != op.resultTypes.size()) {
      return error(op.pos, "'" + op.name + "' produces " + std::to_string(outs->size()) +
                               " results but its type lists " + std::to_string(op.resultTypes.size()));
    }
    for (size_t i = 0; i < outs->size(); ++i) {
      CAGR_RETURN_IF_ERROR(
          checkType((*outs)[i], op.resultTypes[i], "result #" + std::to_string(i) + " of '" + op.name + "'"));
    }
    if (parts.hasResultNames) {
      if (parts.resultNames.size() != outs->size()) {
        return error(op.findAttr(text::kResultNamesAttr)->pos, "result_names needs one name per result");
      }
      for (size_t i = 0; i < outs->size(); ++i) g_.mutableValue((*outs)[i]).name = parts.resultNames[i];
    }
    if (!outs->empty()) g_.mutableValue((*outs)[0]).mir = parts.resultDecision;
    g_.mutableNodes().back().mir = parts.decision;
    return defineResults(op, *outs);
  }

  Status addReturn(const RawOp& op, const GraphHeader& h) {
    CAGR_RETURN_IF_ERROR(checkCounts(op));
    if (!op.resultTypes.empty() || !op.attrs.empty()) {
      return error(op.pos, "expected 'cagr.return' to have no results and no attributes");
    }
    if (h.hasOutputNames && h.outputNames.size() != op.operands.size()) {
      return error(op.pos, "'cagr.return' has " + std::to_string(op.operands.size()) +
                               " operands but output_names has " + std::to_string(h.outputNames.size()));
    }
    CAGR_ASSIGN_OR_RETURN(std::vector<ValueId> outs, operands(op));
    for (size_t i = 0; i < outs.size(); ++i) g_.addOutput(outs[i], h.hasOutputNames ? h.outputNames[i] : "");
    return Status::ok();
  }

  const Source& src_;
  const WeightsBlob* weights_;
  Graph g_;
  std::unordered_map<std::string, std::vector<ValueId>> ssa_;
};

}  // namespace

StatusOr<Graph> parseGraph(std::string_view text, const std::string& sourceName, const WeightsBlob* weights) {
  Source src{text, sourceName};
  CAGR_ASSIGN_OR_RETURN(RawOp top, text::parseRawModule(src));
  return GraphBuilder(src, weights).build(top);
}

}  // namespace cagr
