// printGraph: the HIR as a generic-syntax MLIR module (format in cagr/text.h).
#include <algorithm>
#include <cmath>
#include <string>
#include <variant>
#include <vector>

#include "cagr/text.h"
#include "support/files.h"
#include "ir/text_format.h"
#include "ir/text_mir.h"

namespace cagr {
namespace {

using text::quote;
using text::attrLiteral;
using text::tensorTypeString;

std::string stringList(const std::vector<std::string>& items) {
  std::string s = "[";
  for (size_t i = 0; i < items.size(); ++i) s += (i ? ", " : "") + quote(items[i]);
  return s + "]";
}

// Attribute names in print order: schema order first, then any strays.
std::vector<const std::pair<std::string, AttrValue>*> orderedAttrs(const Node& n) {
  std::vector<const std::pair<std::string, AttrValue>*> out;
  for (const AttrSpec& spec : attrSchema(n.op)) {
    for (const auto& item : n.attrs.items()) {
      if (item.first == spec.name) out.push_back(&item);
    }
  }
  for (const auto& item : n.attrs.items()) {
    if (std::find(out.begin(), out.end(), &item) == out.end()) out.push_back(&item);
  }
  return out;
}

class Printer {
 public:
  Printer(const Graph& g, const PrintOptions& opts)
      : g_(g), opts_(opts), names_(g.numValues()), isOutput_(g.numValues(), false) {
    for (ValueId v : g.outputs()) {
      if (v >= 0 && static_cast<size_t>(v) < isOutput_.size()) isOutput_[static_cast<size_t>(v)] = true;
    }
  }

  std::string run() {
    out_ = "\"builtin.module\"() ({\n  \"cagr.graph\"() ({\n";
    printBlockHeader();
    for (const Node& n : g_.nodes()) {
      for (ValueId v : n.inputs) printConstantOnce(v);
      printNode(n);
    }
    for (ValueId v : g_.outputs()) printConstantOnce(v);
    for (size_t v = 0; v < g_.numValues(); ++v) printConstantOnce(static_cast<ValueId>(v));
    printReturn();
    out_ += "  }) {" + graphAttrs() + "} : () -> ()\n}) : () -> ()\n";
    return std::move(out_);
  }

 private:
  const std::string& use(ValueId v) {
    static const std::string kUndefined = "%undefined";
    if (v < 0 || static_cast<size_t>(v) >= names_.size() || names_[static_cast<size_t>(v)].empty()) return kUndefined;
    return names_[static_cast<size_t>(v)];
  }

  std::string typeOf(ValueId v) const {
    if (v < 0 || static_cast<size_t>(v) >= g_.numValues()) return "tensor<f32>";
    return tensorTypeString(g_.type(v));
  }

  void printBlockHeader() {
    if (g_.inputs().empty()) return;
    out_ += "  ^bb0(";
    for (size_t i = 0; i < g_.inputs().size(); ++i) {
      ValueId v = g_.inputs()[i];
      names_[static_cast<size_t>(v)] = "%arg" + std::to_string(i);
      out_ += (i ? ", " : "") + names_[static_cast<size_t>(v)] + ": " + typeOf(v);
    }
    out_ += "):\n";
  }

  void printConstantOnce(ValueId v) {
    if (v < 0 || static_cast<size_t>(v) >= g_.numValues() || !g_.isConstant(v)) return;
    if (!names_[static_cast<size_t>(v)].empty()) return;
    std::string name = "%" + std::to_string(next_++);
    names_[static_cast<size_t>(v)] = name;
    std::string type = typeOf(v);
    const std::string& vname = g_.value(v).name;
    out_ += "    " + name + " = \"cagr.constant\"() {";
    std::vector<std::string> parts;
    if (opts_.elideWeights) parts.push_back("elided");
    if (!vname.empty()) parts.push_back("name = " + quote(vname));
    text::printValueDecision(g_.value(v).mir, parts);
    for (size_t i = 0; i < parts.size(); ++i) out_ += (i ? ", " : "") + parts[i];
    const Tensor& data = *g_.constant(v);
    if (!opts_.elideWeights && opts_.weights != nullptr && data.byteSize() >= opts_.weights->minBytes) {
      out_ += parts.empty() ? "" : ", ";
      out_ += "weights_offset = " + std::to_string(appendWeights(data)) + " : i64";
    } else if (!opts_.elideWeights) {
      // Appended in place: weights can be large.
      out_ += parts.empty() ? "value = " : ", value = ";
      out_ += text::denseLiteral(data);
      out_ += " : " + type;
    }
    out_ += "} : () -> " + type + "\n";
  }

  // Writes `t`'s bytes to the weights sink at the next 64-byte boundary.
  uint64_t appendWeights(const Tensor& t) {
    WeightsSink& w = *opts_.weights;
    static constexpr char kZeros[64] = {};
    const size_t pad = static_cast<size_t>((64 - w.size % 64) % 64);
    w.out->write(kZeros, static_cast<std::streamsize>(pad));
    w.hash = fnv1a64(kZeros, pad, w.hash);
    const uint64_t offset = w.size + pad;
    // bool tensors hold one byte per element in memory; the sink stores them so.
    w.out->write(reinterpret_cast<const char*>(t.rawData()), static_cast<std::streamsize>(t.byteSize()));
    w.hash = fnv1a64(t.rawData(), t.byteSize(), w.hash);
    w.size = offset + t.byteSize();
    return offset;
  }

  // The name a node output gets back from the parser without result_names.
  std::string expectedName(const Node& n, size_t i) const {
    ValueId v = n.outputs[i];
    if (isOutput_[static_cast<size_t>(v)] && !g_.value(v).name.empty()) return g_.value(v).name;
    if (n.name.empty()) return "";
    return i == 0 ? n.name : n.name + ":" + std::to_string(i);
  }

  std::string nodeAttrs(const Node& n) const {
    std::vector<std::string> parts;
    if (!n.name.empty()) parts.push_back("name = " + quote(n.name));
    for (const auto* item : orderedAttrs(n)) parts.push_back(item->first + " = " + attrLiteral(item->second));
    if (std::find(n.inputs.begin(), n.inputs.end(), kNoValue) != n.inputs.end()) {
      std::vector<int64_t> mask;
      for (ValueId v : n.inputs) mask.push_back(v == kNoValue ? 0 : 1);
      parts.push_back(std::string(text::kOperandMaskAttr) + " = " + attrLiteral(mask));
    }
    std::vector<std::string> names;
    bool differs = false;
    for (size_t i = 0; i < n.outputs.size(); ++i) {
      names.push_back(g_.value(n.outputs[i]).name);
      differs = differs || names.back() != expectedName(n, i);
    }
    if (differs) parts.push_back(std::string(text::kResultNamesAttr) + " = " + stringList(names));
    text::printNodeDecision(n.mir, parts);
    if (!n.outputs.empty()) text::printValueDecision(g_.value(n.outputs[0]).mir, parts);
    std::string s;
    for (size_t i = 0; i < parts.size(); ++i) s += (i ? ", " : "") + parts[i];
    return s;
  }

  void printNode(const Node& n) {
    std::string operands, types;
    for (ValueId v : n.inputs) {
      if (v == kNoValue) continue;
      operands += (operands.empty() ? "" : ", ") + use(v);
      types += (types.empty() ? "" : ", ") + typeOf(v);
    }
    std::string def = "%" + std::to_string(next_++);
    std::string results;
    for (size_t i = 0; i < n.outputs.size(); ++i) {
      ValueId v = n.outputs[i];
      names_[static_cast<size_t>(v)] = n.outputs.size() == 1 ? def : def + "#" + std::to_string(i);
      results += (i ? ", " : "") + typeOf(v);
    }
    if (n.outputs.size() != 1) results = "(" + results + ")";
    out_ += "    ";
    if (n.outputs.size() == 1) out_ += def + " = ";
    if (n.outputs.size() > 1) out_ += def + ":" + std::to_string(n.outputs.size()) + " = ";
    std::string attrs = nodeAttrs(n);
    out_ += "\"cagr." + std::string(opInfo(n.op).mnemonic) + "\"(" + operands + ")" +
            (attrs.empty() ? "" : " {" + attrs + "}") + " : (" + types + ") -> " + results + "\n";
  }

  void printReturn() {
    std::string operands, types;
    for (size_t i = 0; i < g_.outputs().size(); ++i) {
      operands += (i ? ", " : "") + use(g_.outputs()[i]);
      types += (i ? ", " : "") + typeOf(g_.outputs()[i]);
    }
    out_ += "    \"cagr.return\"(" + operands + ") : (" + types + ") -> ()\n";
  }

  std::string graphAttrs() const {
    std::vector<std::string> inNames, inDims, outNames, symbols;
    for (ValueId v : g_.inputs()) {
      inNames.push_back(g_.value(v).name);
      std::string dims;
      for (size_t k = 0; k < g_.type(v).dims.size(); ++k) dims += (k ? "," : "") + g_.dimString(g_.type(v).dims[k]);
      inDims.push_back(dims);
    }
    for (ValueId v : g_.outputs()) outNames.push_back(v >= 0 ? g_.value(v).name : "");
    symbols.assign(g_.symbols().begin() + 1, g_.symbols().end());
    return "sym_name = " + quote(opts_.graphName) + ", input_names = " + stringList(inNames) +
           ", input_dims = " + stringList(inDims) + ", output_names = " + stringList(outNames) +
           ", symbols = " + stringList(symbols) + metaAttrs();
  }

  std::string metaAttrs() const {
    std::vector<std::string> parts;
    text::printMeta(g_.meta(), parts);
    std::string s;
    for (const std::string& p : parts) s += ", " + p;
    return s;
  }

  const Graph& g_;
  const PrintOptions& opts_;
  std::vector<std::string> names_;
  std::vector<bool> isOutput_;
  std::string out_;
  int next_ = 0;
};

}  // namespace

std::string printGraph(const Graph& g, const PrintOptions& opts) { return Printer(g, opts).run(); }

}  // namespace cagr
