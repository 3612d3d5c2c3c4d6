// MIR decisions in the text form: reserved `cagr.*` attributes on node and
// constant ops (cagr.group, cagr.kernel, cagr.stream, cagr.math for a node;
// cagr.storage, cagr.layout for a node's first result or a constant), and
// plan metadata as `cagr.<key>` attributes of the graph op. Defaults are not
// printed, so HIR text is unchanged.
#pragma once

#include <string>
#include <vector>

#include "cagr/graph.h"
#include "ir/text_syntax.h"

namespace cagr::text {

/// True for the reserved decision / metadata attribute names.
bool isMirAttr(std::string_view name);
/// Appends `cagr.* = ...` parts for the non-default decisions.
void printNodeDecision(const NodeDecision& d, std::vector<std::string>& parts);
void printValueDecision(const ValueDecision& d, std::vector<std::string>& parts);
/// Reads one `cagr.*` attribute into `node` (may be null for constants) or
/// `value`; errors name the attribute and its position.
Status readDecision(const Source& src, const RawNamedAttr& a, NodeDecision* node, ValueDecision* value);

/// Plan metadata <-> graph-op attributes (`cagr.target = "h200"`, ...).
void printMeta(const Attrs& meta, std::vector<std::string>& parts);
Status readMeta(const Source& src, const RawNamedAttr& a, Attrs& meta);

}  // namespace cagr::text
