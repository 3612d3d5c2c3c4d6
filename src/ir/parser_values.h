// Literal values of the HIR text parser: numbers in attributes and the data of
// dense<...> constants, converted once their type is known.
#pragma once

#include "cagr/graph.h"
#include "ir/text_syntax.h"

namespace cagr::text {

/// An integer literal's value: decimal, hex (bit pattern) or true/false.
StatusOr<int64_t> scalarInt(const Source& src, const RawScalar& s);

/// A numeric attribute as int64 or double, decided by its literal and `: type`
/// suffix; `preferFloat` makes an untyped integer or hex literal a double (a
/// hex one is then an f64 bit pattern, as mlir-opt prints inf in float lists).
StatusOr<AttrValue> numberAttr(const Source& src, const RawAttr& a, bool preferFloat);

/// A zero-filled tensor of a static type (what an elided constant reads as).
StatusOr<Tensor> zeroTensor(const Source& src, const RawType& type);

/// The tensor a dense<...> attribute holds; checks the data against its type.
/// mlir-opt's elided `opaque<"elided_large_const", ...>` gives zeros.
StatusOr<Tensor> denseToTensor(const Source& src, const RawAttr& a);

}  // namespace cagr::text
