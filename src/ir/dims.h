// Arithmetic on possibly symbolic dimensions (see Dim in cagr/graph.h). A
// symbolic size is coef * symbol; products of two symbols are not
// representable and are reported as unsupported by the callers.
#pragma once

#include <optional>
#include <vector>

#include "cagr/graph.h"

namespace cagr {

/// A size: `coef` times symbol `sym` (sym == 0: the static size `coef`).
struct SymSize {
  int64_t coef = 1;
  int sym = 0;
  Dim toDim() const { return sym == 0 ? coef : symDim(sym, coef); }
};

inline SymSize sizeOf(Dim d) { return isSymbolic(d) ? SymSize{dimCoef(d), dimSymbol(d)} : SymSize{d, 0}; }

/// a * b, or nullopt when both are symbolic.
std::optional<SymSize> mulSize(SymSize a, SymSize b);
/// Product of dims, or nullopt when two symbols meet.
std::optional<SymSize> productOf(const std::vector<Dim>& dims, size_t begin = 0, size_t end = SIZE_MAX);
/// a / b when exact (b static non-zero, or same symbol), else nullopt.
std::optional<SymSize> divSize(SymSize a, SymSize b);
/// Normalises a possibly negative axis against `rank`; nullopt if out of range.
std::optional<int64_t> normAxis(int64_t axis, int64_t rank);

}  // namespace cagr
