// Internal helpers over the op table: attribute lookup with schema defaults,
// and the shape/cost rule declarations that ops.def names.
#pragma once

#include <string>
#include <string_view>

#include "cagr/graph.h"

namespace cagr {

/// Attribute value or the schema default (the verifier guarantees presence of
/// required attributes and their kinds).
int64_t intAttr(const Node& n, std::string_view name);
double floatAttr(const Node& n, std::string_view name);
std::string stringAttr(const Node& n, std::string_view name);
std::vector<int64_t> intsAttr(const Node& n, std::string_view name);

/// Checks `attrs` against op `k`'s schema: required present, kinds, no strays.
Status checkAttrs(OpKind k, const Attrs& attrs);

#define CAGR_DECLARE_SHAPE(Rule) Status shape##Rule(const Graph& g, const Node& n, std::vector<TensorType>& outs);
#define CAGR_DECLARE_COST(Rule)                                                                           \
  OpCounts cost##Rule(const Node& n, std::span<const std::vector<int64_t>> in, std::span<const DType> inT, \
                      std::span<const std::vector<int64_t>> out, std::span<const DType> outT);
#define CAGR_OP(Enum, mnemonic, minIn, maxIn, outs, attrs, shapeRule, costRule) \
  CAGR_DECLARE_SHAPE(shapeRule) CAGR_DECLARE_COST(costRule)
#include "cagr/ops.def"
#undef CAGR_OP
#undef CAGR_DECLARE_SHAPE
#undef CAGR_DECLARE_COST

}  // namespace cagr
