// Spelling helpers shared by the HIR text printer and parser (cagr/text.h):
// MLIR-compatible literals for floats, strings, tensor types and dense data.
#pragma once

#include <string>
#include <string_view>

#include "cagr/graph.h"
#include "cagr/tensor.h"

namespace cagr::text {

/// The MLIR op-name prefix of every CAGR op.
inline constexpr std::string_view kDialectPrefix = "cagr.";
/// Attributes the text form reserves on node ops (not op attributes).
inline constexpr std::string_view kNameAttr = "name";
inline constexpr std::string_view kOperandMaskAttr = "operand_mask";
inline constexpr std::string_view kResultNamesAttr = "result_names";
/// Dense constants with at most this many elements print as nested lists.
inline constexpr int64_t kMaxListElements = 16;

/// Shortest decimal that reads back to exactly `v`, always with a '.' (MLIR
/// lexes `1e-05` as an integer); non-finite values as the IEEE bit pattern
/// `0x7FF0000000000000` (MLIR's hex float literal, needs an explicit type).
std::string formatF64(double v);
std::string formatF32(float v);
/// f16 / bf16 bits: the exact value in decimal, or the bit pattern if not finite.
std::string formatHalf(uint16_t bits, bool bf16);

/// MLIR string literal with MLIR escapes (`\\`, `\22`, `\0A`, ...).
std::string quote(std::string_view s);

/// An attribute value: `1 : i64`, `0.5 : f64`, `"s"`, `[1, 2]`, `[1.0, 2.5]`.
std::string attrLiteral(const AttrValue& v);

/// `tensor<?x13xf32>`: symbolic dims print as '?'.
std::string tensorTypeString(const TensorType& t);

/// `dense<...>` for a tensor's data (empty, splat, nested list or hex).
std::string denseLiteral(const Tensor& t);

/// Bytes of `numel` i1 elements in MLIR 15's bit-packed hex layout.
inline size_t packedBoolBytes(int64_t numel) { return static_cast<size_t>((numel + 7) / 8); }

}  // namespace cagr::text
