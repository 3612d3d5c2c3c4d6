#include "ir/dims.h"

namespace cagr {

std::optional<SymSize> mulSize(SymSize a, SymSize b) {
  if (a.sym != 0 && b.sym != 0) return std::nullopt;
  if (a.coef == 0 || b.coef == 0) return SymSize{0, 0};  // 0 * N is the static 0
  return SymSize{a.coef * b.coef, a.sym != 0 ? a.sym : b.sym};
}

std::optional<SymSize> productOf(const std::vector<Dim>& dims, size_t begin, size_t end) {
  SymSize acc{1, 0};
  end = std::min(end, dims.size());
  for (size_t i = begin; i < end; ++i) {
    auto next = mulSize(acc, sizeOf(dims[i]));
    if (!next) return std::nullopt;
    acc = *next;
  }
  return acc;
}

std::optional<SymSize> divSize(SymSize a, SymSize b) {
  if (b.sym != 0 && b.sym != a.sym) return std::nullopt;
  if (b.coef == 0 || a.coef % b.coef != 0) return std::nullopt;
  return SymSize{a.coef / b.coef, b.sym != 0 ? 0 : a.sym};
}

std::optional<int64_t> normAxis(int64_t axis, int64_t rank) {
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) return std::nullopt;
  return axis;
}

}  // namespace cagr
