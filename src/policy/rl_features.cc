// The policy's view of a state: Env::observe() plus, per action, features of
// its choice string — which kernel (by pattern, and whether a vendor library
// or generated code), which precision, which layout — so the scorer can tell
// apart candidates that differ only in the choice. Described by kernel traits
// rather than names, so they mean the same on every backend.
#include <array>

#include "cagr/mir.h"
#include "policy/rl_model.h"

namespace cagr::rl {
namespace {

constexpr int kPatterns = 9;  // Pattern::kSingle .. kConcatInPlace

bool isLibrary(const std::string& kernel) {
  for (const char* lib : {"cublas.", "cublaslt.", "rocblas.", "onednn.", "openblas."}) {
    if (kernel.rfind(lib, 0) == 0) return true;
  }
  return false;
}

std::array<float, kChoiceFeatures> choiceFeatures(const std::string& choice) {
  std::array<float, kChoiceFeatures> f{};
  if (choice.empty()) return f;
  std::string word = choice.substr(0, choice.find(' '));  // "bf16 (output error <= 5e-2)"
  if (auto k = kernelByName(word); k.isOk()) {
    const KernelInfo& info = kernelInfo(*k);
    f[static_cast<size_t>(info.pattern)] = 1.f;
    int kind = *k == 0 ? 2 : isLibrary(word) ? 0 : 1;  // library, generated, auto
    f[kPatterns + kind] = 1.f;
  } else if (auto p = parsePrecision(word); p.isOk()) {
    f[kPatterns + 3 + static_cast<size_t>(*p)] = 1.f;
  } else if (auto l = parseLayout(word); l.isOk()) {
    f[kPatterns + 8 + static_cast<size_t>(*l)] = 1.f;
  } else {
    f[kPatterns + 11] = word == "in_place" ? 1.f : 0.f;
    f[kPatterns + 12] = word == "fold" ? 1.f : 0.f;
  }
  return f;
}

}  // namespace

Observation observe(const Env& env) {
  Observation o = env.observe();
  const std::vector<Candidate>& legal = env.legalActions();
  constexpr size_t base = Observation::kActionFeatures;
  std::vector<float> rows;
  rows.reserve(legal.size() * kActionRow);
  for (size_t k = 0; k < legal.size(); ++k) {
    auto first = o.actionFeatures.begin() + static_cast<std::ptrdiff_t>(k * base);
    rows.insert(rows.end(), first, first + static_cast<std::ptrdiff_t>(base));
    std::array<float, kChoiceFeatures> f = choiceFeatures(legal[k].action.choice);
    rows.insert(rows.end(), f.begin(), f.end());
  }
  o.actionFeatures = std::move(rows);
  return o;
}

}  // namespace cagr::rl
