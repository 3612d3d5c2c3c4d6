// The syntax layer of the HIR text parser: a recursive-descent reader of the
// generic MLIR form (plus the `module {...}` custom form) into raw ops,
// regions, attributes and types. It knows nothing about CAGR ops; the graph
// builder (ir/parser.cc) gives the raw tree its meaning. Every raw piece
// remembers its byte offset so errors can name line and column.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cagr/status.h"
#include "cagr/tensor.h"

namespace cagr::text {

/// The text being parsed, for error locations.
struct Source {
  std::string_view text;
  std::string name;
  /// "name:line:column".
  std::string where(size_t offset) const;
  /// `where(offset) + ": " + message` with the given code.
  Status error(size_t offset, const std::string& message, ErrorCode code = ErrorCode::kCorrupt) const;
};

/// A tensor type as written; a dim of -1 is '?'.
struct RawType {
  DType dtype = DType::kF32;
  std::vector<int64_t> dims;
  size_t pos = 0;
  bool isStatic() const;
  std::string str() const;
};

/// A numeric or boolean literal, kept as text until its type is known.
struct RawScalar {
  enum Kind : uint8_t { kInt, kFloat, kHex, kBool };
  Kind kind = kInt;
  bool negative = false;
  std::string_view text;  // digits without the sign; "0x..." for kHex; "true"/"false"
  size_t pos = 0;
};

/// An attribute value.
struct RawAttr {
  enum Kind : uint8_t { kNumber, kString, kArray, kUnit, kDense };
  enum DenseForm : uint8_t { kEmpty, kSplat, kList, kHexData, kElided };  // kElided: mlir-opt's opaque<...>
  Kind kind = kUnit;
  size_t pos = 0;
  RawScalar scalar;                     // kNumber
  std::optional<std::string> typeName;  // kNumber: the `: f64` suffix, if any
  std::string str;                      // kString
  std::vector<RawAttr> elems;           // kArray
  DenseForm denseForm = kEmpty;         // kDense
  std::vector<RawScalar> denseElems;    // kSplat (one) and kList (row-major)
  std::vector<int64_t> listShape;       // kList: the nesting of the brackets
  int64_t listLeafDepth = -1;           // kList: bracket depth of the elements
  std::string_view hex;                 // kHexData: hex digits without "0x"
  RawType denseType;                    // kDense: the `: tensor<...>` suffix
};

struct RawNamedAttr {
  std::string name;
  RawAttr value;
  size_t pos = 0;
};

/// `%name` or `%name#index` (index -1 when not given).
struct RawValueRef {
  std::string name;
  int64_t index = -1;
  size_t pos = 0;
};

/// `%name` or `%name:count` on the left of '='.
struct RawResultGroup {
  std::string name;
  int64_t count = 1;
  size_t pos = 0;
};

struct RawOp;

struct RawBlockArg {
  std::string name;
  RawType type;
  size_t pos = 0;
};

/// A single-block region.
struct RawRegion {
  std::vector<RawBlockArg> args;
  std::vector<RawOp> ops;
  size_t pos = 0;
  size_t end = 0;  // offset of the closing '}'
};

struct RawOp {
  std::string name;  // "cagr.gemm"
  size_t pos = 0;
  std::vector<RawResultGroup> results;
  std::vector<RawValueRef> operands;
  std::vector<RawRegion> regions;
  std::vector<RawNamedAttr> attrs;
  std::vector<RawType> operandTypes, resultTypes;

  const RawNamedAttr* findAttr(std::string_view n) const;
  int64_t numResults() const;
};

/// Parses the whole text: one top-level op (generic, or `module {...}`),
/// with `#alias = ...` lines and `loc(...)` annotations skipped.
StatusOr<RawOp> parseRawModule(const Source& src);

}  // namespace cagr::text
