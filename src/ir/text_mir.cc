// Printing and parsing of the MIR decision attributes (see text_mir.h).
#include "ir/text_mir.h"

#include "cagr/mir.h"
#include "ir/parser_values.h"
#include "ir/text_format.h"

namespace cagr::text {
namespace {

constexpr std::string_view kPrefix = "cagr.";

std::string intLit(int64_t v) { return std::to_string(v) + " : i64"; }

StatusOr<int64_t> readInt(const Source& src, const RawNamedAttr& a) {
  if (a.value.kind != RawAttr::kNumber) return src.error(a.value.pos, "expected '" + a.name + "' to be an integer");
  CAGR_ASSIGN_OR_RETURN(AttrValue v, numberAttr(src, a.value, false));
  if (!std::holds_alternative<int64_t>(v)) return src.error(a.value.pos, "expected '" + a.name + "' to be an integer");
  return std::get<int64_t>(v);
}

StatusOr<std::string> readString(const Source& src, const RawNamedAttr& a) {
  if (a.value.kind != RawAttr::kString) return src.error(a.value.pos, "expected '" + a.name + "' to be a string");
  return a.value.str;
}

// Wraps a parse failure of a decision value with its position.
template <typename T>
StatusOr<T> at(const Source& src, const RawNamedAttr& a, StatusOr<T> r) {
  if (!r.isOk()) return src.error(a.value.pos, a.name + ": " + r.status().message());
  return r;
}

}  // namespace

bool isMirAttr(std::string_view name) { return name.substr(0, kPrefix.size()) == kPrefix; }

void printNodeDecision(const NodeDecision& d, std::vector<std::string>& parts) {
  if (d.group >= 0) parts.push_back("cagr.group = " + intLit(d.group));
  if (d.kernel != 0) parts.push_back("cagr.kernel = " + quote(kernelInfo(d.kernel).name));
  if (d.stream != 0) parts.push_back("cagr.stream = " + intLit(d.stream));
  if (d.math != Precision::kF32) parts.push_back("cagr.math = " + quote(precisionName(d.math)));
}

void printValueDecision(const ValueDecision& d, std::vector<std::string>& parts) {
  if (d.storage != Precision::kF32) parts.push_back("cagr.storage = " + quote(precisionName(d.storage)));
  if (d.layout != Layout::kRowMajor) parts.push_back("cagr.layout = " + quote(layoutName(d.layout)));
}

Status readDecision(const Source& src, const RawNamedAttr& a, NodeDecision* node, ValueDecision* value) {
  std::string_view key = std::string_view(a.name).substr(kPrefix.size());
  if (node != nullptr && key == "group") {
    CAGR_ASSIGN_OR_RETURN(int64_t g, readInt(src, a));
    if (g < 0 || g > INT32_MAX) return src.error(a.value.pos, "cagr.group must be a non-negative label");
    node->group = static_cast<int32_t>(g);
  } else if (node != nullptr && key == "kernel") {
    CAGR_ASSIGN_OR_RETURN(std::string s, readString(src, a));
    CAGR_ASSIGN_OR_RETURN(node->kernel, at(src, a, kernelByName(s)));
  } else if (node != nullptr && key == "stream") {
    CAGR_ASSIGN_OR_RETURN(int64_t s, readInt(src, a));
    if (s < 0 || s > 63) return src.error(a.value.pos, "cagr.stream must be in [0, 63]");
    node->stream = static_cast<int8_t>(s);
  } else if (node != nullptr && key == "math") {
    CAGR_ASSIGN_OR_RETURN(std::string s, readString(src, a));
    CAGR_ASSIGN_OR_RETURN(node->math, at(src, a, parsePrecision(s)));
  } else if (key == "storage") {
    CAGR_ASSIGN_OR_RETURN(std::string s, readString(src, a));
    CAGR_ASSIGN_OR_RETURN(value->storage, at(src, a, parsePrecision(s)));
  } else if (key == "layout") {
    CAGR_ASSIGN_OR_RETURN(std::string s, readString(src, a));
    CAGR_ASSIGN_OR_RETURN(value->layout, at(src, a, parseLayout(s)));
  } else {
    return src.error(a.pos, "unknown decision attribute '" + a.name + "'");
  }
  return Status::ok();
}

void printMeta(const Attrs& meta, std::vector<std::string>& parts) {
  for (const auto& [k, v] : meta.items()) parts.push_back(std::string(kPrefix) + k + " = " + attrLiteral(v));
}

Status readMeta(const Source& src, const RawNamedAttr& a, Attrs& meta) {
  std::string key = a.name.substr(kPrefix.size());
  switch (a.value.kind) {
    case RawAttr::kString: meta.set(key, a.value.str); return Status::ok();
    case RawAttr::kNumber: {
      CAGR_ASSIGN_OR_RETURN(AttrValue v, numberAttr(src, a.value, false));
      meta.set(key, std::move(v));
      return Status::ok();
    }
    default: return src.error(a.value.pos, "plan metadata '" + a.name + "' must be a string or a number");
  }
}

}  // namespace cagr::text
