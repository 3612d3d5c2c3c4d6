// The op table built from ops.def, and the attribute schema it carries.
#include "ir/op_table.h"

#include <array>
#include <cmath>
#include <limits>
#include <sstream>

namespace cagr {
namespace {

constexpr std::array<OpInfo, kNumOpKinds> kOpTable = {{
#define CAGR_OP(Enum, mnemonic, minIn, maxIn, outs, attrs, shapeRule, costRule) \
  {#Enum, mnemonic, minIn, maxIn, outs, attrs, &shape##shapeRule, &cost##costRule},
#include "cagr/ops.def"
#undef CAGR_OP
}};

AttrValue parseDefault(char kind, const std::string& text) {
  switch (kind) {
    case 'i': return static_cast<int64_t>(std::stoll(text));
    case 'f':
      if (text == "inf") return std::numeric_limits<double>::infinity();
      if (text == "-inf") return -std::numeric_limits<double>::infinity();
      return std::stod(text);
    case 's': return text;
    case 'I': return std::vector<int64_t>{};
    default: return std::vector<double>{};
  }
}

std::vector<AttrSpec> parseSchema(const char* schema) {
  std::vector<AttrSpec> specs;
  std::stringstream ss(schema);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (item.empty()) continue;
    size_t colon = item.find(':');
    size_t eq = item.find('=');
    AttrSpec s;
    s.name = item.substr(0, colon);
    s.kind = item[colon + 1];
    s.required = eq == std::string::npos;
    s.dflt = parseDefault(s.kind, s.required ? "0" : item.substr(eq + 1));
    specs.push_back(std::move(s));
  }
  return specs;
}

const std::vector<std::vector<AttrSpec>>& allSchemas() {
  static const std::vector<std::vector<AttrSpec>> schemas = [] {
    std::vector<std::vector<AttrSpec>> v;
    for (const OpInfo& info : kOpTable) v.push_back(parseSchema(info.attrSchema));
    return v;
  }();
  return schemas;
}

const AttrSpec* findSpec(OpKind k, std::string_view name) {
  for (const AttrSpec& s : attrSchema(k)) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

bool kindMatches(char kind, const AttrValue& v) {
  switch (kind) {
    case 'i': return std::holds_alternative<int64_t>(v);
    case 'f': return std::holds_alternative<double>(v) || std::holds_alternative<int64_t>(v);
    case 's': return std::holds_alternative<std::string>(v);
    case 'I': return std::holds_alternative<std::vector<int64_t>>(v);
    default: return std::holds_alternative<std::vector<double>>(v);
  }
}

const char* kindName(char kind) {
  switch (kind) {
    case 'i': return "an integer";
    case 'f': return "a float";
    case 's': return "a string";
    case 'I': return "a list of integers";
    default: return "a list of floats";
  }
}

}  // namespace

const OpInfo& opInfo(OpKind k) { return kOpTable[static_cast<size_t>(k)]; }

StatusOr<OpKind> opKindFromMnemonic(std::string_view mnemonic) {
  if (mnemonic.starts_with("cagr.")) mnemonic.remove_prefix(5);
  for (size_t i = 0; i < kOpTable.size(); ++i) {
    if (mnemonic == kOpTable[i].mnemonic) return static_cast<OpKind>(i);
  }
  return unsupported("unknown CAGR op 'cagr." + std::string(mnemonic) + "'");
}

const std::vector<AttrSpec>& attrSchema(OpKind k) { return allSchemas()[static_cast<size_t>(k)]; }

Status checkAttrs(OpKind k, const Attrs& attrs) {
  for (const auto& [name, value] : attrs.items()) {
    const AttrSpec* s = findSpec(k, name);
    if (s == nullptr) return invalidArgument("unknown attribute '" + name + "'");
    if (!kindMatches(s->kind, value)) {
      return invalidArgument("attribute '" + name + "' must be " + kindName(s->kind));
    }
  }
  for (const AttrSpec& s : attrSchema(k)) {
    if (s.required && !attrs.has(s.name)) return invalidArgument("missing required attribute '" + s.name + "'");
  }
  return Status::ok();
}

int64_t intAttr(const Node& n, std::string_view name) {
  if (n.attrs.has(name)) return n.attrs.getInt(name);
  const AttrSpec* s = findSpec(n.op, name);
  return s != nullptr && std::holds_alternative<int64_t>(s->dflt) ? std::get<int64_t>(s->dflt) : 0;
}

double floatAttr(const Node& n, std::string_view name) {
  if (n.attrs.has(name)) return n.attrs.getFloat(name);
  const AttrSpec* s = findSpec(n.op, name);
  return s != nullptr && std::holds_alternative<double>(s->dflt) ? std::get<double>(s->dflt) : 0.0;
}

std::string stringAttr(const Node& n, std::string_view name) {
  if (n.attrs.has(name)) return n.attrs.getString(name);
  const AttrSpec* s = findSpec(n.op, name);
  return s != nullptr && std::holds_alternative<std::string>(s->dflt) ? std::get<std::string>(s->dflt) : "";
}

std::vector<int64_t> intsAttr(const Node& n, std::string_view name) { return n.attrs.getInts(name); }

}  // namespace cagr
